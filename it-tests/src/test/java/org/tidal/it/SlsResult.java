package org.tidal.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What one SLS run wrote, read back: SLS's jobruntime.csv (one line per finished job), its
 * per-second metric CSVs (metrics/variable.queue.QUEUE.usage.memory.csv and so on, from the
 * scheduler's SchedulerMetrics) and the RM's own QueueMetrics records from the metrics2 file sink
 * (rm-metrics.out), which count the containers every queue was allocated under either scheduler.
 */
final class SlsResult {
  /** A finished job: its times in ms since SLS's runner started. */
  record Job(String appId, long startMs, long endMs) {
    long runtimeMs() {
      return endMs - startMs;
    }
  }

  /** One second of the per-queue gauges: memory used and demanded (used plus pending), in MB. */
  record QueueSample(long second, Map<String, Long> usedMb, Map<String, Long> demandMb) {}

  private static final Pattern QUEUE_RECORD =
      Pattern.compile("\\d+ yarn\\.QueueMetrics: Queue=root\\.([^,]+), .*");
  private static final Pattern AGGREGATE_ALLOCATED =
      Pattern.compile("AggregateContainersAllocated=(\\d+)");

  final Path outDir;
  final List<String> queues;
  final List<Job> jobs;
  final List<QueueSample> samples;

  /** Containers allocated per queue (the last QueueMetrics record of each). */
  final Map<String, Long> containersAllocated;

  private SlsResult(
      Path outDir,
      List<String> queues,
      List<Job> jobs,
      List<QueueSample> samples,
      Map<String, Long> containersAllocated) {
    this.outDir = outDir;
    this.queues = queues;
    this.jobs = jobs;
    this.samples = samples;
    this.containersAllocated = containersAllocated;
  }

  /** Reads a finished run; its queues are those SLS recorded metrics for. */
  static SlsResult read(Path outDir) throws IOException {
    List<String> queues = recordedQueues(outDir.resolve("metrics"));
    return new SlsResult(
        outDir,
        queues,
        jobs(outDir.resolve("jobruntime.csv")),
        samples(outDir.resolve("metrics"), queues),
        containersAllocated(outDir.resolve("rm-metrics.out")));
  }

  private static final Pattern QUEUE_USAGE_CSV =
      Pattern.compile("variable\\.queue\\.(.+)\\.usage\\.memory\\.csv");

  private static List<String> recordedQueues(Path metrics) throws IOException {
    List<String> queues = new ArrayList<>();
    try (Stream<Path> files = Files.list(metrics)) {
      files.forEach(
          f -> {
            Matcher m = QUEUE_USAGE_CSV.matcher(f.getFileName().toString());
            if (m.matches()) {
              queues.add(m.group(1));
            }
          });
    }
    queues.sort(null);
    return queues;
  }

  private static List<Job> jobs(Path csv) throws IOException {
    List<Job> jobs = new ArrayList<>();
    List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
    // JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time
    for (String line : lines.subList(1, lines.size())) {
      if (line.isBlank()) {
        continue;
      }
      String[] f = line.split(",");
      if (f.length != 5) {
        throw new IOException(csv + ": not a job runtime line: " + line);
      }
      jobs.add(new Job(f[0], Long.parseLong(f[3]), Long.parseLong(f[4])));
    }
    return jobs;
  }

  /** Seconds at which every queue's usage and demand gauges have a value. */
  private static List<QueueSample> samples(Path metrics, List<String> queues) throws IOException {
    Map<Long, Map<String, Long>> used = new TreeMap<>();
    Map<Long, Map<String, Long>> demand = new TreeMap<>();
    for (String queue : queues) {
      gauge(metrics.resolve("variable.queue." + queue + ".usage.memory.csv"), queue, used);
      gauge(metrics.resolve("variable.queue." + queue + ".demand.memory.csv"), queue, demand);
    }
    List<QueueSample> samples = new ArrayList<>();
    for (Map.Entry<Long, Map<String, Long>> second : used.entrySet()) {
      Map<String, Long> d = demand.get(second.getKey());
      if (second.getValue().size() == queues.size() && d != null && d.size() == queues.size()) {
        samples.add(new QueueSample(second.getKey(), second.getValue(), d));
      }
    }
    return samples;
  }

  /** A CSV of SLS's CsvReporter for a gauge: a "t,value" header, then epoch second, value. */
  private static void gauge(Path csv, String queue, Map<Long, Map<String, Long>> into)
      throws IOException {
    List<String> lines;
    try {
      lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new IOException("SLS recorded no metric " + csv.getFileName() + " for queue " + queue);
    }
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",");
      if (f.length == 2) {
        into.computeIfAbsent(Long.parseLong(f[0]), s -> new LinkedHashMap<>())
            .put(queue, Math.round(Double.parseDouble(f[1])));
      }
    }
  }

  private static Map<String, Long> containersAllocated(Path sink) throws IOException {
    Map<String, Long> last = new TreeMap<>();
    for (String line : Files.readAllLines(sink, StandardCharsets.UTF_8)) {
      Matcher queue = QUEUE_RECORD.matcher(line);
      Matcher count = AGGREGATE_ALLOCATED.matcher(line);
      // Per-user records of a queue carry a User tag; the queue's own record does not.
      if (queue.matches() && count.find() && !line.contains("User=")) {
        last.put(queue.group(1), Long.parseLong(count.group(1)));
      }
    }
    return last;
  }

  long makespanMs() {
    long start = jobs.stream().mapToLong(Job::startMs).min().orElse(0);
    return jobs.stream().mapToLong(Job::endMs).max().orElse(0) - start;
  }

  double meanRuntimeMs() {
    return jobs.stream().mapToLong(Job::runtimeMs).average().orElse(Double.NaN);
  }

  long totalContainers() {
    return containersAllocated.values().stream().mapToLong(Long::longValue).sum();
  }

  /** MB-seconds each queue held over the run (its usage gauge summed over the seconds). */
  Map<String, Long> mbSeconds() {
    Map<String, Long> sums = new TreeMap<>();
    for (QueueSample s : samples) {
      s.usedMb().forEach((q, mb) -> sums.merge(q, mb, Long::sum));
    }
    return sums;
  }

  /**
   * The seconds in which every queue had demanded at least its weighted share of the cluster
   * ({@code clusterMb}) for the last {@code settleSeconds} too, with the cluster at least {@code
   * minBusy} allocated: where the weights, not the demand, decide the shares. Neither scheduler
   * preempts, so a queue whose demand just rose gets containers only as others' tasks end; {@code
   * settleSeconds} (the longest task) leaves them that time. None when a queue has no weight in
   * {@code weights}.
   */
  List<QueueSample> contended(
      long clusterMb, Map<String, Double> weights, int settleSeconds, double minBusy) {
    List<QueueSample> out = new ArrayList<>();
    if (!weights.keySet().containsAll(queues)) {
      return out;
    }
    double total = queues.stream().mapToDouble(weights::get).sum();
    int run = 0;
    for (QueueSample s : samples) {
      boolean allWant = true;
      long used = 0;
      for (String q : queues) {
        allWant &= s.demandMb().get(q) >= weights.get(q) / total * clusterMb;
        used += s.usedMb().get(q);
      }
      run = allWant ? run + 1 : 0;
      if (run > settleSeconds && used >= minBusy * clusterMb) {
        out.add(s);
      }
    }
    return out;
  }

  /** Each queue's mean share of the allocated memory over {@code seconds}. */
  Map<String, Double> meanShares(List<QueueSample> seconds) {
    Map<String, Double> shares = new TreeMap<>();
    for (QueueSample s : seconds) {
      long total = s.usedMb().values().stream().mapToLong(Long::longValue).sum();
      for (String q : queues) {
        shares.merge(q, (double) s.usedMb().get(q) / total / seconds.size(), Double::sum);
      }
    }
    return shares;
  }

  /** A few lines: jobs, makespan, mean job runtime, containers and per-queue allocations. */
  String summary(
      String label,
      int jobsInTrace,
      long clusterMb,
      Map<String, Double> weights,
      int settleSeconds) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "%s%n  jobs finished %d of %d, makespan %.1f s, mean job runtime %.1f s,"
                + " containers allocated %d%n",
            label,
            jobs.size(),
            jobsInTrace,
            makespanMs() / 1000.0,
            meanRuntimeMs() / 1000.0,
            totalContainers()));
    Map<String, Long> mbs = mbSeconds();
    long totalMbs = mbs.values().stream().mapToLong(Long::longValue).sum();
    List<QueueSample> contended = contended(clusterMb, weights, settleSeconds, 0.75);
    Map<String, Double> shares = meanShares(contended);
    out.append(
        String.format(
            Locale.ROOT,
            "  %-12s %10s %12s %8s %s%n",
            "queue",
            "containers",
            "GB-seconds",
            "of all",
            "share while every queue demanded its weighted share (" + contended.size() + " s)"));
    for (String q : queues) {
      long m = mbs.getOrDefault(q, 0L);
      out.append(
          String.format(
              Locale.ROOT,
              "  %-12s %10d %12.1f %7.1f%% %s%n",
              q,
              containersAllocated.getOrDefault(q, 0L),
              m / 1024.0,
              totalMbs == 0 ? 0.0 : 100.0 * m / totalMbs,
              shares.containsKey(q)
                  ? String.format(Locale.ROOT, "%.1f%%", 100 * shares.get(q))
                  : "-"));
    }
    return out.toString();
  }
}
