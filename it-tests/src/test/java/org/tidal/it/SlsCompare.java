package org.tidal.it;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.tools.rumen.JobTraceReader;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;

/**
 * {@code make sls}: the same trace through Hadoop's SLS under Tidal and under FairScheduler, at the
 * same time (SLS runs in real time and mostly waits), each with its web view, then a summary per
 * scheduler. Arguments: the output directory, then nothing (the synthetic trace of {@link
 * SlsTrace}), {@code -rumen} (the same trace as a Rumen job trace), {@code -inputsls FILE} or
 * {@code -inputrumen FILE} (such as SLS's sample 2jobs2min-rumen-jh.json). Every run uses
 * it-tests/sls/nodes.json: the trace's own host names need not resolve on this machine, and
 * requests for them fall back to other nodes.
 */
public final class SlsCompare {
  /** Web view ports: SLS's default for Tidal, the next one for FairScheduler. */
  static final int TIDAL_WEB_PORT = 10001;

  static final int FAIR_WEB_PORT = 10002;

  /** Cluster memory of sls/nodes.json with sls-runner.xml's node size: 4 nodes of 4096 MB. */
  static final long CLUSTER_MB = 4 * 4096;

  private SlsCompare() {}

  static Path nodesFile() {
    return SlsRun.slsDir().resolve("nodes.json");
  }

  /** Writes the synthetic trace into {@code dir} and returns SLS's input arguments for it. */
  static List<String> syntheticInput(Path dir) throws IOException {
    Files.createDirectories(dir);
    Path trace = dir.resolve("synthetic-trace.json");
    SlsTrace.write(trace, nodesFile());
    return List.of("-inputsls", trace.toString());
  }

  /**
   * Writes the synthetic trace as a Rumen job trace into {@code dir} and returns SLS's input
   * arguments for it.
   */
  static List<String> syntheticRumenInput(Path dir) throws IOException {
    Files.createDirectories(dir);
    Path trace = dir.resolve("synthetic-rumen-trace.json");
    SlsTrace.writeRumen(trace, nodesFile());
    return List.of("-inputrumen", trace.toString());
  }

  /** Starts both schedulers' runs on one input; web ports 0 pick free ones. */
  static Map<SlsRun.Scheduler, SlsRun> startBoth(
      List<String> input, Path outDir, int tidalPort, int fairPort, String trackJob)
      throws IOException {
    Map<SlsRun.Scheduler, SlsRun> runs = new LinkedHashMap<>();
    runs.put(
        SlsRun.Scheduler.TIDAL,
        SlsRun.start(
            SlsRun.Scheduler.TIDAL,
            input,
            nodesFile(),
            outDir.resolve("tidal"),
            tidalPort,
            trackJob));
    runs.put(
        SlsRun.Scheduler.FAIR,
        SlsRun.start(
            SlsRun.Scheduler.FAIR, input, nodesFile(), outDir.resolve("fair"), fairPort, trackJob));
    return runs;
  }

  /** Jobs in an SLS or rumen trace, counted with the readers SLS itself uses. */
  static int jobsIn(List<String> input) throws IOException {
    Path trace = Paths.get(input.get(1));
    int jobs = 0;
    if (input.get(0).equals("-inputsls")) {
      try (Reader in = Files.newBufferedReader(trace, StandardCharsets.UTF_8)) {
        Iterator<JsonNode> values =
            new ObjectMapper()
                .readValues(
                    new ObjectMapper().getJsonFactory().createJsonParser(in), JsonNode.class);
        while (values.hasNext()) {
          values.next();
          jobs++;
        }
      }
    } else {
      Configuration conf = new Configuration();
      conf.set("fs.defaultFS", "file:///");
      try (JobTraceReader reader =
          new JobTraceReader(
              new org.apache.hadoop.fs.Path(trace.toAbsolutePath().toString()), conf)) {
        while (reader.getNext() != null) {
          jobs++;
        }
      }
    }
    return jobs;
  }

  public static void main(String[] args) throws Exception {
    boolean synthetic = args.length == 1 || (args.length == 2 && args[1].equals("-rumen"));
    if (!synthetic && args.length != 3) {
      System.err.println("usage: SlsCompare OUTDIR [-rumen | -inputsls FILE | -inputrumen FILE]");
      System.exit(2);
    }
    Path outDir = Paths.get(args[0]).toAbsolutePath();
    List<String> input;
    if (synthetic) {
      input = args.length == 1 ? syntheticInput(outDir) : syntheticRumenInput(outDir);
      System.out.println("Synthetic trace (" + String.join(" ", input) + "):");
      System.out.println(SlsTrace.describe());
    } else {
      if (!args[1].equals("-inputsls") && !args[1].equals("-inputrumen")) {
        System.err.println("unknown input option " + args[1] + ": -inputsls or -inputrumen");
        System.exit(2);
      }
      Path trace = Paths.get(args[2]).toAbsolutePath();
      if (!Files.isReadable(trace)) {
        System.err.println("cannot read trace " + trace);
        System.exit(2);
      }
      input = List.of(args[1], trace.toString());
    }
    int jobs = jobsIn(input);
    Map<SlsRun.Scheduler, SlsRun> runs =
        startBoth(input, outDir, TIDAL_WEB_PORT, FAIR_WEB_PORT, null);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  for (SlsRun run : runs.values()) {
                    try {
                      run.stop();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  }
                }));
    for (SlsRun run : runs.values()) {
      System.out.println(
          "SLS under "
              + run.scheduler.label
              + ": web view http://localhost:"
              + run.webPort
              + "/ (simulate, track), output "
              + run.outDir);
    }
    List<String> failures = new ArrayList<>();
    for (SlsRun run : runs.values()) {
      int exit = run.await(30 * 60);
      if (exit != 0) {
        failures.add(
            run.scheduler.label
                + " exited with "
                + exit
                + ", see "
                + run.outDir.resolve("sls.log"));
      }
    }
    System.out.println();
    for (SlsRun run : runs.values()) {
      System.out.println(
          SlsResult.read(run.outDir)
              .summary(
                  run.scheduler.label,
                  jobs,
                  CLUSTER_MB,
                  SlsTrace.WEIGHTS,
                  SlsTrace.SETTLE_SECONDS));
    }
    if (!failures.isEmpty()) {
      System.err.println(String.join("\n", failures));
      System.exit(1);
    }
  }
}
