package org.tidal.replay;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationResourceUsageReport;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.ConverterUtils;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;

/**
 * {@code tidal-replay WORKLOAD.json --out DIR [options]}: runs a workload {@code tidal-sim
 * workload} resolved as Tez DAGs on the cluster the Hadoop configuration names, and writes {@code
 * jobs.csv}, {@code summary.json}, the RM's Tidal {@code status.json} and {@code history.json} and
 * a copy of the workload into DIR. Hadoop's generic options ({@code -D key=value}, {@code -conf})
 * come first. Exit status 0 when every job succeeded, 1 when some did not, 2 on bad usage or input.
 */
public final class Main extends Configured implements Tool {
  static final String USAGE =
      "usage: tidal-replay [-D key=value ...] WORKLOAD.json --out DIR [--time-scale X] [--burn]"
          + " [--burn-memory-fraction F] [--am-memory-mb N] [--no-hints] [--container-reuse]"
          + " [--ship-classpath] [--progress-interval-s N] [--verbose]";

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new YarnConfiguration(), new Main(), args));
  }

  @Override
  public int run(String[] args) throws Exception {
    Replayer.Options o = new Replayer.Options();
    boolean verbose = false;
    File workloadFile = null;
    File out = null;
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--out":
            out = new File(value(args, ++i));
            break;
          case "--time-scale":
            o.timeScale = positive(args, ++i);
            break;
          case "--burn":
            o.burn = true;
            break;
          case "--burn-memory-fraction":
            o.burnMemoryFraction = positive(args, ++i);
            if (o.burnMemoryFraction > 1) {
              throw new IllegalArgumentException("--burn-memory-fraction must be at most 1");
            }
            break;
          case "--am-memory-mb":
            o.amMemoryMb = (int) positive(args, ++i);
            break;
          case "--no-hints":
            o.hints = false;
            break;
          case "--container-reuse":
            o.containerReuse = true;
            break;
          case "--verbose":
            verbose = true;
            break;
          case "--ship-classpath":
            o.shipClasspath = true;
            break;
          case "--progress-interval-s":
            o.progressIntervalMs = Math.round(positive(args, ++i) * 1000);
            break;
          default:
            if (args[i].startsWith("--") || workloadFile != null) {
              throw new IllegalArgumentException("unexpected argument '" + args[i] + "'");
            }
            workloadFile = new File(args[i]);
        }
      }
      if (workloadFile == null || out == null) {
        throw new IllegalArgumentException("a workload file and --out DIR are required");
      }
    } catch (IllegalArgumentException e) {
      System.err.println("tidal-replay: " + e.getMessage() + "\n" + USAGE);
      return 2;
    }
    if (!verbose) {
      // Tez's and Hadoop's clients log every submission at INFO: the progress lines are enough.
      Logger.getRootLogger().setLevel(Level.WARN);
    }
    Workload w;
    try {
      w = Workload.read(workloadFile);
    } catch (IOException e) {
      System.err.println("tidal-replay: " + e.getMessage());
      return 2;
    }
    if (!out.isDirectory() && !out.mkdirs()) {
      System.err.println("tidal-replay: cannot create " + out);
      return 2;
    }
    // The run's record of what it replayed (tidal-sim calibrate matches tasks to it).
    Files.copy(
        workloadFile.toPath(),
        new File(out, "workload.json").toPath(),
        StandardCopyOption.REPLACE_EXISTING);
    System.out.printf(
        "tidal-replay: %d jobs of %s (%s) at time scale %s%n",
        w.jobs.size(), w.name, w.policy, o.timeScale);
    long start = System.currentTimeMillis();
    List<Replayer.Run> runs = new Replayer(getConf(), w, o, System.out).run();
    long wall = System.currentTimeMillis() - start;
    Results.writeJobsCsv(runs, o.timeScale, new File(out, "jobs.csv"));
    Results.writeJson(
        Results.summary(w, runs, o, wall, usage(runs)), new File(out, "summary.json"));
    String rm = "http://" + WebAppUtils.getRMWebAppURLWithoutScheme(getConf());
    for (String doc : new String[] {"status", "history"}) {
      String query = doc.equals("history") ? "?since=0" : "";
      String err =
          Results.fetch(rm + "/ws/v1/cluster/tidal/" + doc + query, new File(out, doc + ".json"));
      if (err != null) {
        System.out.println("tidal-replay: no " + doc + ".json (" + err + ")");
      }
    }
    int failed = 0;
    for (Replayer.Run r : runs) {
      if (!r.succeeded()) {
        failed++;
        System.out.printf("job %s (%s) %s: %s%n", r.job.name, r.appId, r.state, r.error);
      }
    }
    System.out.printf(
        "tidal-replay: %d of %d jobs succeeded in %.1f s; outputs in %s%n",
        runs.size() - failed, runs.size(), wall / 1000.0, out);
    return failed == 0 ? 0 : 1;
  }

  /**
   * Resource-seconds the jobs' applications used and the cluster's capacity ({used, capacity} by
   * resource), from the RM; empty when it cannot say.
   */
  private Map<String, double[]> usage(List<Replayer.Run> runs) {
    Map<String, double[]> usage = new TreeMap<>();
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(getConf());
    yarn.start();
    try {
      double memCap = 0;
      double coreCap = 0;
      for (NodeReport n : yarn.getNodeReports(NodeState.RUNNING)) {
        memCap += n.getCapability().getMemory();
        coreCap += n.getCapability().getVirtualCores();
      }
      double mem = 0;
      double cores = 0;
      for (Replayer.Run r : runs) {
        if (r.appId.isEmpty() || "null".equals(r.appId)) {
          continue;
        }
        ApplicationId id = ConverterUtils.toApplicationId(r.appId);
        ApplicationResourceUsageReport u =
            yarn.getApplicationReport(id).getApplicationResourceUsageReport();
        if (u != null) {
          mem += u.getMemorySeconds();
          cores += u.getVcoreSeconds();
        }
      }
      usage.put("memory_mb", new double[] {mem, memCap});
      usage.put("vcores", new double[] {cores, coreCap});
    } catch (Exception e) {
      System.out.println("tidal-replay: no utilization (" + e + ")");
      usage.clear();
    } finally {
      yarn.stop();
    }
    return usage;
  }

  private static String value(String[] args, int i) {
    if (i >= args.length) {
      throw new IllegalArgumentException(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  private static double positive(String[] args, int i) {
    String v = value(args, i);
    double d;
    try {
      d = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(args[i - 1] + ": '" + v + "' is not a number");
    }
    if (!(d > 0) || Double.isInfinite(d)) {
      throw new IllegalArgumentException(args[i - 1] + " must be a positive number, not " + v);
    }
    return d;
  }
}
