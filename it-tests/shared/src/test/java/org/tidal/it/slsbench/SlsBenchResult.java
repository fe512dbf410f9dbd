package org.tidal.it.slsbench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * One run's numbers from {@link SlsProbe}'s files, over the window from {@code warmup} s to the end
 * of the simulated time (the ramp of the first wave of jobs left out):
 *
 * <ul>
 *   <li>containers allocated per second, as the AMs received them;
 *   <li>the scheduler's CPU share: CPU seconds of the scheduler event dispatcher's thread per
 *       wall-clock second (1.0: it never idles), and the whole SLS JVM's in cores;
 *   <li>the dispatcher's event queue length, its maximum and 99th percentile over the samples;
 *   <li>ask-to-allocation latency p50 and p99 over every task container allocated in the window,
 *       and over the lq queue's alone;
 *   <li>whether the scheduler kept up: the queue's 99th percentile and its last sample both below
 *       one heartbeat round (one event per node), i.e. no backlog that grows from one second to the
 *       next.
 * </ul>
 */
final class SlsBenchResult {
  private final List<String> columns;

  private SlsBenchResult(List<String> columns) {
    this.columns = columns;
  }

  List<String> columns() {
    return columns;
  }

  static SlsBenchResult read(Path runDir, int nodes, int warmup, int seconds) throws IOException {
    long from = warmup * 1000L;
    long to = seconds * 1000L;
    List<long[]> samples = new ArrayList<>();
    for (String l : lines(runDir.resolve(SlsProbe.SAMPLES_FILE))) {
      long[] s = Arrays.stream(l.split(",")).mapToLong(Long::parseLong).toArray();
      if (s[0] >= from && s[0] <= to && s[1] >= 0) {
        samples.add(s);
      }
    }
    if (samples.size() < 2) {
      throw new IOException(runDir + ": the probe sampled the scheduler too little in the window");
    }
    long[] first = samples.get(0);
    long[] last = samples.get(samples.size() - 1);
    double wallS = (last[0] - first[0]) / 1000.0;
    long[] queue = samples.stream().mapToLong(s -> s[1]).sorted().toArray();
    List<Long> all = new ArrayList<>();
    List<Long> lq = new ArrayList<>();
    for (String l : lines(runDir.resolve(SlsProbe.ALLOCATIONS_FILE))) {
      String[] a = l.split(",");
      long at = Long.parseLong(a[0]);
      long latency = Long.parseLong(a[1]);
      if (at >= first[0] && at <= last[0] && latency >= 0) {
        all.add(latency);
        if (a[2].equals("lq")) {
          lq.add(latency);
        }
      }
    }
    long p99Queue = percentile(queue, 0.99);
    boolean keptUp = p99Queue < nodes && last[1] < nodes;
    return new SlsBenchResult(
        List.of(
            fmt("%.1f", all.size() / wallS),
            fmt("%.3f", (last[2] - first[2]) / 1000.0 / wallS),
            fmt("%.2f", (last[3] - first[3]) / 1000.0 / wallS),
            Long.toString(queue[queue.length - 1]),
            Long.toString(p99Queue),
            percentileOf(all, 0.5),
            percentileOf(all, 0.99),
            percentileOf(lq, 0.5),
            percentileOf(lq, 0.99),
            keptUp ? "yes" : "no"));
  }

  private static List<String> lines(Path csv) throws IOException {
    List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
    return lines.subList(1, lines.size());
  }

  private static String percentileOf(List<Long> values, double q) {
    return values.isEmpty()
        ? ""
        : Long.toString(
            percentile(values.stream().mapToLong(Long::longValue).sorted().toArray(), q));
  }

  /** The nearest-rank percentile of sorted values. */
  private static long percentile(long[] sorted, double q) {
    int rank = (int) Math.ceil(q * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  private static String fmt(String format, double value) {
    return String.format(Locale.ROOT, format, value);
  }
}
