package org.tidal.it.slsbench;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code make bench-sls} on one Hadoop line: every scale, trace ({@link SlsBenchTrace}) and
 * scheduler through SLS, one run after another so that no two share the cores, each in a JVM of its
 * own ({@link SlsProbe}) with 1 s NodeManager and AM heartbeats and SLS's own metrics off (the
 * probe measures). Each run appends a row to the CSV; at the end the whole CSV (other lines' rows
 * too) is printed as one table.
 *
 * <p>Arguments: line, CSV file, work directory, simulated seconds, warm-up seconds, the scales as a
 * space-separated list, the traces likewise. System properties: {@code sls.bench.schedulers}
 * (name=class,... of this line; tidal, fair and capacity have their queue files here), {@code
 * sls.bench.jvm} (flags of the SLS JVMs), {@code sls.bench.am} (this line's SLS AM class), {@code
 * it.sls.dir} (it-tests/sls: core-site.xml, the metrics2 sink and log4j) and {@code
 * sls.bench.metrics}: whether SLS keeps its own scheduler metrics (per-queue gauges, CSV reporter,
 * web view; then {@code it.sls.web} names its page templates). Off where the line allows, as the
 * probe measures; Hadoop 2.7's scheduler wrapper fails on the first event without them.
 */
public final class SlsBench {
  static final List<String> COLUMNS =
      List.of(
          "line",
          "nodes",
          "trace",
          "scheduler",
          "containers_per_s",
          "sched_cpu_share",
          "jvm_cpu_cores",
          "event_queue_max",
          "event_queue_p99",
          "ask_to_alloc_p50_ms",
          "p99_ms",
          "lq_p50_ms",
          "lq_p99_ms",
          "kept_up",
          "load1");

  /** Wall-clock allowance for SLS to read the trace and register the nodes before it simulates. */
  private static final long STARTUP_SECONDS = 900;

  private SlsBench() {}

  static boolean slsMetrics() {
    return Boolean.getBoolean("sls.bench.metrics");
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 7) {
      System.err.println("usage: SlsBench LINE CSV WORKDIR SECONDS WARMUP 'NODES...' 'TRACES...'");
      System.exit(2);
    }
    String line = args[0];
    Path csv = Paths.get(args[1]).toAbsolutePath();
    Path work = Paths.get(args[2]).toAbsolutePath();
    int seconds = Integer.parseInt(args[3]);
    int warmup = Integer.parseInt(args[4]);
    Map<String, String> schedulers = new LinkedHashMap<>();
    for (String s : System.getProperty("sls.bench.schedulers").split(",")) {
      String[] kv = s.split("=", 2);
      schedulers.put(kv[0].trim(), kv[1].trim());
    }
    List<String> failures = new ArrayList<>();
    for (String n : args[5].trim().split("\\s+")) {
      int nodes = Integer.parseInt(n);
      for (String trace : args[6].trim().split("\\s+")) {
        Path input = work.resolve(nodes + "-" + trace);
        Files.createDirectories(input);
        SlsBenchTrace.writeNodes(input.resolve("nodes.json"), nodes);
        int jobs = SlsBenchTrace.write(input.resolve("trace.json"), trace, nodes, seconds);
        for (Map.Entry<String, String> scheduler : schedulers.entrySet()) {
          System.out.printf(
              Locale.ROOT,
              "== %s, %d nodes, %s (%d jobs), %s%n",
              line,
              nodes,
              trace,
              jobs,
              scheduler.getKey());
          Path runDir = input.resolve(scheduler.getKey());
          int exit =
              run(runDir, input, scheduler.getKey(), scheduler.getValue(), trace, nodes, seconds);
          if (exit != 0 || !Files.exists(runDir.resolve(SlsProbe.SAMPLES_FILE))) {
            failures.add(
                line
                    + " "
                    + nodes
                    + " "
                    + trace
                    + " "
                    + scheduler.getKey()
                    + ": exit "
                    + exit
                    + ", see "
                    + runDir.resolve("sls.log"));
            continue;
          }
          List<String> row = new ArrayList<>(List.of(line, n, trace, scheduler.getKey()));
          row.addAll(SlsBenchResult.read(runDir, nodes, warmup, seconds).columns());
          row.add(loadAverage());
          append(csv, row);
          System.out.println(String.join(",", row));
        }
      }
    }
    printTable(csv);
    if (!failures.isEmpty()) {
      System.err.println(String.join("\n", failures));
      System.exit(1);
    }
  }

  private static int run(
      Path runDir,
      Path input,
      String name,
      String schedulerClass,
      String trace,
      int nodes,
      int seconds)
      throws IOException, InterruptedException {
    SlsBenchConfig.write(
        runDir.resolve("conf"),
        Paths.get(System.getProperty("it.sls.dir"), "core-site.xml"),
        name,
        schedulerClass,
        trace,
        nodes);
    // A run that dies before its shutdown hook must not leave an earlier run's figures behind.
    Files.deleteIfExists(runDir.resolve(SlsProbe.SAMPLES_FILE));
    Files.deleteIfExists(runDir.resolve(SlsProbe.ALLOCATIONS_FILE));
    Path slsOut = runDir.resolve("sls");
    Files.createDirectories(slsOut);
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(Arrays.asList(System.getProperty("sls.bench.jvm", "").trim().split("\\s+")));
    // The trace's tasks and the RM's node and container state grow with the cluster.
    cmd.add("-Xmx" + Math.max(1536, nodes * 3 / 5) + "m");
    cmd.add("-XX:+UseParallelGC");
    cmd.add("-Dsls.web.port=0");
    // Hadoop 3's AM reads its job's start time from the trace (TraceTimedMrAmSimulator).
    cmd.add("-Dsls.bench.trace=" + input.resolve("trace.json"));
    List<String> classPath =
        new ArrayList<>(
            List.of(runDir.resolve("conf").toString(), System.getProperty("it.sls.dir")));
    if (slsMetrics()) {
      classPath.add(System.getProperty("it.sls.web"));
    }
    classPath.add(System.getProperty("java.class.path"));
    cmd.add("-cp");
    cmd.add(String.join(File.pathSeparator, classPath));
    cmd.add(SlsProbe.class.getName());
    cmd.add(Integer.toString(seconds));
    cmd.addAll(
        List.of(
            "-inputrumen",
            input.resolve("trace.json").toString(),
            "-nodes",
            input.resolve("nodes.json").toString(),
            "-output",
            slsOut.toString()));
    Process process =
        new ProcessBuilder(cmd)
            .directory(runDir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(runDir.resolve("sls.log").toFile())
            .start();
    if (!process.waitFor(STARTUP_SECONDS + seconds, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      return -1;
    }
    return process.exitValue();
  }

  /** The 1-minute load average when a run ended (Linux), so a busy machine shows in the table. */
  private static String loadAverage() {
    try {
      return Files.readString(Paths.get("/proc/loadavg")).split(" ")[0];
    } catch (IOException e) {
      return "";
    }
  }

  private static void append(Path csv, List<String> row) throws IOException {
    Files.createDirectories(csv.getParent());
    if (!Files.exists(csv)) {
      Files.writeString(csv, String.join(",", COLUMNS) + "\n", StandardCharsets.UTF_8);
    }
    Files.writeString(
        csv, String.join(",", row) + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
  }

  private static void printTable(Path csv) throws IOException {
    if (!Files.exists(csv)) {
      return;
    }
    List<String[]> rows = new ArrayList<>();
    for (String l : Files.readAllLines(csv, StandardCharsets.UTF_8)) {
      rows.add(l.split(",", -1));
    }
    int[] width = new int[COLUMNS.size()];
    for (String[] r : rows) {
      for (int i = 0; i < r.length && i < width.length; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    System.out.println();
    for (String[] r : rows) {
      StringBuilder out = new StringBuilder();
      for (int i = 0; i < r.length && i < width.length; i++) {
        out.append(
            String.format(
                Locale.ROOT, i < 4 ? "%-" + width[i] + "s " : "%" + width[i] + "s ", r[i]));
      }
      System.out.println(out.toString().stripTrailing());
    }
  }
}
