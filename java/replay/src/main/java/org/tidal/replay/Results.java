package org.tidal.replay;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A replay's outputs in tidal-sim's formats: {@code jobs.csv} (the same columns) and {@code
 * summary.json} (the same JCT statistics, classes and deadlines; times in workload seconds, i.e.
 * wall-clock seconds divided by the time scale), and the RM's Tidal status and history documents
 * for {@code tidal-sim report}.
 */
final class Results {
  private Results() {}

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Workload seconds of a wall-clock millisecond count. */
  private static double secs(long wallMs, double timeScale) {
    return wallMs / 1000.0 / timeScale;
  }

  private static String fmt(double s) {
    return String.format(Locale.ROOT, "%.3f", s);
  }

  static void writeJobsCsv(List<Replayer.Run> runs, double timeScale, File file)
      throws IOException {
    try (PrintWriter w = new PrintWriter(file, "UTF-8")) {
      w.println("job,queue,class,arrival_s,start_s,finish_s,jct_s,deadline_s,met_deadline,tasks");
      for (Replayer.Run r : runs) {
        double arrival = secs(r.submitMs, timeScale);
        double finish = secs(r.finishMs, timeScale);
        String deadline = r.job.deadlineMs < 0 ? "" : fmt(r.job.deadlineMs / 1000.0);
        String met =
            r.job.deadlineMs < 0 ? "" : Boolean.toString(finish * 1000 <= r.job.deadlineMs);
        w.println(
            String.join(
                ",",
                csv(r.job.name),
                csv(r.job.queue),
                csv(r.job.jobClass),
                fmt(arrival),
                fmt(secs(r.startMs < 0 ? r.finishMs : r.startMs, timeScale)),
                fmt(finish),
                fmt(finish - arrival),
                deadline,
                met,
                Integer.toString(r.job.tasks())));
      }
    }
  }

  private static String csv(String s) {
    return s.contains(",") || s.contains("\"") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
  }

  /** Linear interpolation between closest ranks on sorted data, as tidal-sim computes it. */
  static double percentile(double[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    double x = p * (sorted.length - 1);
    int i = (int) Math.floor(x);
    int j = Math.min(i + 1, sorted.length - 1);
    return sorted[i] + (sorted[j] - sorted[i]) * (x - i);
  }

  static ObjectNode jctStats(double[] jcts) {
    double[] v = jcts.clone();
    Arrays.sort(v);
    ObjectNode n = MAPPER.createObjectNode();
    n.put("jobs", v.length);
    n.put("avg_s", v.length == 0 ? Double.NaN : Arrays.stream(v).sum() / v.length);
    n.put("p25_s", percentile(v, 0.25));
    n.put("p50_s", percentile(v, 0.50));
    n.put("p75_s", percentile(v, 0.75));
    n.put("p95_s", percentile(v, 0.95));
    return n;
  }

  /**
   * @param usage resource-seconds used over all jobs and the cluster's capacity, by resource name
   *     ({@code memory_mb}, {@code vcores}): {used, capacity}; empty when unknown
   */
  static ObjectNode summary(
      Workload w,
      List<Replayer.Run> runs,
      Replayer.Options o,
      long wallMs,
      Map<String, double[]> usage) {
    ObjectNode s = MAPPER.createObjectNode();
    s.put("label", w.name);
    s.put("policy", w.policy);
    s.put("jobs", runs.size());
    long tasks = 0;
    List<Double> all = new ArrayList<>();
    Map<String, List<Double>> byClass = new TreeMap<>();
    Map<String, List<Double>> byQueue = new TreeMap<>();
    int withDeadline = 0;
    int met = 0;
    long first = Long.MAX_VALUE;
    long last = 0;
    for (Replayer.Run r : runs) {
      tasks += r.job.tasks();
      double jct = secs(r.finishMs - r.submitMs, o.timeScale);
      all.add(jct);
      byClass.computeIfAbsent(r.job.jobClass, k -> new ArrayList<>()).add(jct);
      byQueue.computeIfAbsent(r.job.queue, k -> new ArrayList<>()).add(jct);
      if (r.job.deadlineMs >= 0) {
        withDeadline++;
        met += secs(r.finishMs, o.timeScale) * 1000 <= r.job.deadlineMs ? 1 : 0;
      }
      first = Math.min(first, r.submitMs);
      last = Math.max(last, r.finishMs);
    }
    s.put("tasks", tasks);
    s.set("jct", jctStats(toArray(all)));
    ObjectNode classes = s.putObject("jct_by_class");
    byClass.forEach((k, v) -> classes.set(k, jctStats(toArray(v))));
    if (withDeadline > 0) {
      s.put("deadline_met_fraction", (double) met / withDeadline);
    } else {
      s.putNull("deadline_met_fraction");
    }
    double makespan = runs.isEmpty() ? 0 : secs(last - first, o.timeScale);
    s.put("makespan_s", makespan);
    ObjectNode util = s.putObject("utilization");
    // Resource-seconds of wall time over capacity times the wall-clock makespan.
    usage.forEach((k, v) -> util.put(k, v[0] / (v[1] * Math.max(1e-9, makespan * o.timeScale))));
    ArrayNode queues = s.putArray("queues");
    byQueue.forEach(
        (q, v) -> {
          ObjectNode n = queues.addObject();
          n.put("queue", q);
          n.put("jobs", v.size());
          n.set("jct", jctStats(toArray(v)));
        });
    int failed = 0;
    for (Replayer.Run r : runs) {
      failed += r.succeeded() ? 0 : 1;
    }
    s.put("unfinished", failed);
    ObjectNode real = s.putObject("replay");
    real.put("time_scale", o.timeScale);
    real.put("wall_s", wallMs / 1000.0);
    real.put("burn", o.burn);
    real.put("hints", o.hints);
    real.put("container_reuse", o.containerReuse);
    real.put("failed_jobs", failed);
    // The client's share of each JCT (tidal-sim's sim.submit_latency_ms), in wall-clock ms.
    double[] submit = new double[runs.size()];
    for (int i = 0; i < submit.length; i++) {
      Replayer.Run r = runs.get(i);
      submit[i] = r.acceptedMs < 0 ? Double.NaN : r.acceptedMs - r.submitMs;
    }
    Arrays.sort(submit);
    real.put("submit_latency_ms_p50", percentile(submit, 0.5));
    return s;
  }

  private static double[] toArray(List<Double> v) {
    double[] a = new double[v.size()];
    for (int i = 0; i < a.length; i++) {
      a[i] = v.get(i);
    }
    return a;
  }

  static void writeJson(ObjectNode doc, File file) throws IOException {
    MAPPER.writerWithDefaultPrettyPrinter().writeValue(file, doc);
  }

  /**
   * Saves {@code url}'s JSON to {@code file}; returns an error message when the RM does not answer
   * with a document.
   */
  static String fetch(String url, File file) {
    try {
      HttpURLConnection http = (HttpURLConnection) new URL(url).openConnection();
      http.setConnectTimeout(5000);
      http.setReadTimeout(30000);
      http.setRequestProperty("Accept", "application/json");
      try {
        if (http.getResponseCode() != 200) {
          return url + " answered " + http.getResponseCode();
        }
        try (InputStream in = http.getInputStream()) {
          byte[] body = readAll(in);
          MAPPER.readTree(body);
          Files.write(file.toPath(), body);
          return null;
        }
      } finally {
        http.disconnect();
      }
    } catch (IOException e) {
      return url + ": " + e;
    }
  }

  private static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }
}
