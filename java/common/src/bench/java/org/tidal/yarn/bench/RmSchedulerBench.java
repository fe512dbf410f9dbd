package org.tidal.yarn.bench;

import java.io.File;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.tidal.yarn.RmLine;
import org.tidal.yarn.replay.SchedulerReplay;
import org.tidal.yarn.replay.SchedulerReplay.Kind;
import org.tidal.yarn.replay.SchedulerReplay.Result;
import org.tidal.yarn.replay.SchedulerReplay.Workload;

/**
 * Tidal against Hadoop's FairScheduler and CapacityScheduler inside a ResourceManager: the same
 * event stream (see {@link SchedulerReplay}) goes into each scheduler, all with DRF and the same
 * queues and weights, and the time of every {@code handle(NODE_UPDATE)} and {@code allocate()} is
 * recorded.
 *
 * <p>Run: {@code make bench-rm} (both Hadoop lines), or on one line {@code mvn -f
 * java/hadoop3/pom.xml -Pbench test-compile exec:exec@rm-benchmark -Dbench.rm.args="small large
 * 2"}. Arguments: scale names (small, large) and the number of repetitions (default 2). Each
 * repetition runs every scale under every scheduler, rotating which goes first, in this one JVM;
 * every run starts its own RM.
 */
public final class RmSchedulerBench {
  /** Where the CSV results go (a directory; the file is rm-LINE.csv). */
  private static final String CSV_DIR = "bench.out";

  private static final Map<String, Workload> SCALES = new LinkedHashMap<String, Workload>();

  static {
    // name, nodes, apps, queues, pending asks per app, warm-up rounds, measured rounds,
    // container lifetime in rounds, asks topped up on every allocate call
    SCALES.put("small", new Workload("small", 100, 20, 4, 100, 20, 100, 3, true));
    SCALES.put("large", new Workload("large", 2000, 200, 4, 250, 5, 20, 3, true));
  }

  private RmSchedulerBench() {}

  public static void main(String[] args) throws Exception {
    List<Workload> workloads = new ArrayList<Workload>();
    int repetitions = 2;
    for (String arg : args) {
      if (SCALES.containsKey(arg)) {
        workloads.add(SCALES.get(arg));
      } else if (arg.matches("[1-9][0-9]*")) {
        repetitions = Integer.parseInt(arg);
      } else {
        throw new IllegalArgumentException(
            "unknown argument " + arg + ": expected a scale " + SCALES.keySet() + " or a count");
      }
    }
    if (workloads.isEmpty()) {
      workloads.addAll(SCALES.values());
    }
    File dir = Files.createTempDirectory("tidal-bench-rm").toFile();
    List<String> rows = new ArrayList<String>();
    List<String> csv = new ArrayList<String>();
    csv.add(
        "line,scale,run,scheduler,node_update_p50_us,node_update_p99_us,node_update_mean_us,"
            + "allocate_p50_us,allocate_p99_us,allocate_mean_us,containers,"
            + "containers_per_sched_s");
    List<Kind> schedulers = new ArrayList<Kind>(Arrays.asList(Kind.values()));
    schedulers.remove(Kind.FLOOR);
    for (int rep = 1; rep <= repetitions; rep++) {
      for (Workload w : workloads) {
        // Each repetition starts with the next scheduler, so none always runs on a cold JVM; the
        // floor follows the Tidal run whose bookings it replays.
        List<Kind> order = new ArrayList<Kind>();
        for (int k = 0; k < schedulers.size(); k++) {
          Kind kind = schedulers.get((k + rep - 1) % schedulers.size());
          order.add(kind);
          if (kind == Kind.TIDAL) {
            order.add(Kind.FLOOR);
          }
        }
        Map<Kind, Result> results = new LinkedHashMap<Kind, Result>();
        Map<Kind, Long> gcMillis = new LinkedHashMap<Kind, Long>();
        for (Kind kind : order) {
          System.gc();
          long gcBefore = gcMillis();
          SchedulerReplay replay =
              kind == Kind.FLOOR
                  ? new SchedulerReplay(w, dir, results.get(Kind.TIDAL).plan)
                  : new SchedulerReplay(kind, w, dir);
          results.put(kind, replay.run());
          gcMillis.put(kind, gcMillis() - gcBefore);
          System.out.println("done: " + w.name() + " run " + rep + " " + kind);
        }
        Result tidal = results.get(Kind.TIDAL);
        Result floor = results.get(Kind.FLOOR);
        if (floor.containers != tidal.containers) {
          throw new IllegalStateException(
              "the floor booked " + floor.containers + " containers, Tidal " + tidal.containers);
        }
        for (Kind kind : Kind.values()) {
          rows.add(row(w, rep, kind.label, results.get(kind), gcMillis.get(kind)));
          csv.add(csvRow(w, rep, kind.label, results.get(kind)));
        }
        for (Kind kind : schedulers) {
          if (kind != Kind.TIDAL) {
            rows.add(ratioRow(w, rep, kind.label + " / Tidal", results.get(kind), tidal));
          }
        }
        rows.add(ratioRow(w, rep, "Tidal / floor", tidal, floor));
      }
    }
    System.out.println();
    System.out.println(
        "| scale | run | scheduler | NODE_UPDATE p50 | p99 | mean | allocate() p50 | p99 | mean"
            + " | max | containers per allocate p50 / p99 / max | containers | containers/sched-s"
            + " | GC ms |");
    System.out.println("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (String row : rows) {
      System.out.println(row);
    }
    System.out.println(
        "\nTimes in µs. NODE_UPDATE: scheduler.handle(NodeUpdateSchedulerEvent); allocate():"
            + " scheduler.allocate. floor: Hadoop's bookkeeping of the containers Tidal booked,"
            + " with no decision. Ratio rows: the other scheduler / Tidal, and Tidal / floor.");
    File out = new File(System.getProperty(CSV_DIR, "target/bench"), "rm-" + RmLine.LINE + ".csv");
    out.getAbsoluteFile().getParentFile().mkdirs();
    Files.write(out.toPath(), csv, StandardCharsets.UTF_8);
    System.out.println("Results: " + out.getCanonicalPath());
    // The RMs leave non-daemon timer threads of Hadoop's behind.
    System.exit(0);
  }

  private static String row(Workload w, int rep, String name, Result r, long gcMillis) {
    Stats nu = new Stats(r.nodeUpdateNanos);
    Stats al = new Stats(r.allocateNanos);
    int[] batch = r.allocateContainers.clone();
    Arrays.sort(batch);
    return String.format(
        Locale.ROOT,
        "| %s (%d nodes, %d apps, %d pending) | %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f"
            + " | %.1f | %d / %d / %d | %d | %.0f | %d |",
        w.name(),
        w.nodes(),
        w.apps(),
        w.pending(),
        rep,
        name,
        nu.p50,
        nu.p99,
        nu.mean,
        al.p50,
        al.p99,
        al.mean,
        al.max,
        batch[batch.length / 2],
        batch[Math.max(0, (int) Math.ceil(0.99 * batch.length) - 1)],
        batch[batch.length - 1],
        r.containers,
        r.containersPerSchedulerSecond(),
        gcMillis);
  }

  private static String csvRow(Workload w, int rep, String name, Result r) {
    Stats nu = new Stats(r.nodeUpdateNanos);
    Stats al = new Stats(r.allocateNanos);
    return String.format(
        Locale.ROOT,
        "%s,%s,%d,%s,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%d,%.0f",
        RmLine.LINE,
        w.name(),
        rep,
        name,
        nu.p50,
        nu.p99,
        nu.mean,
        al.p50,
        al.p99,
        al.mean,
        r.containers,
        r.containersPerSchedulerSecond());
  }

  /** The ratios {@code other} / {@code tidal} of every figure, in a row named {@code name}. */
  private static String ratioRow(Workload w, int rep, String name, Result other, Result tidal) {
    Stats fn = new Stats(other.nodeUpdateNanos);
    Stats tn = new Stats(tidal.nodeUpdateNanos);
    Stats fa = new Stats(other.allocateNanos);
    Stats ta = new Stats(tidal.allocateNanos);
    return String.format(
        Locale.ROOT,
        "| %s | %d | %s | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× | | | %.2f× |"
            + " |",
        w.name(),
        rep,
        name,
        fn.p50 / tn.p50,
        fn.p99 / tn.p99,
        fn.mean / tn.mean,
        fa.p50 / ta.p50,
        fa.p99 / ta.p99,
        fa.mean / ta.mean,
        fa.max / ta.max,
        other.containersPerSchedulerSecond() / tidal.containersPerSchedulerSecond());
  }

  private static long gcMillis() {
    long total = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      total += Math.max(0, gc.getCollectionTime());
    }
    return total;
  }

  /** Percentiles (nearest rank) and mean of a sample, in microseconds. */
  private static final class Stats {
    final double p50;
    final double p99;
    final double mean;
    final double max;

    Stats(long[] nanos) {
      long[] sorted = nanos.clone();
      Arrays.sort(sorted);
      p50 = percentile(sorted, 0.50);
      p99 = percentile(sorted, 0.99);
      max = sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1e3;
      long sum = 0;
      for (long v : sorted) {
        sum += v;
      }
      mean = sorted.length == 0 ? 0 : sum / 1e3 / sorted.length;
    }

    private static double percentile(long[] sorted, double q) {
      if (sorted.length == 0) {
        return 0;
      }
      int rank = (int) Math.ceil(q * sorted.length);
      return sorted[Math.max(0, rank - 1)] / 1e3;
    }
  }
}
