package org.tidal.it.workload;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.tidal.it.workload.TwoQueueWorkload.JobOutcome;
import org.tidal.it.workload.TwoQueueWorkload.JobSpec;
import org.tidal.it.workload.TwoQueueWorkload.Result;

/**
 * {@code make demo}'s YARN part, the same on both Hadoop lines: the same two-queue MapReduce
 * workload on an embedded YARN cluster under each scheduler in turn, then each queue's share of the
 * cluster over time and each job's completion time side by side.
 */
public final class DemoRunner {
  /**
   * Small enough for about a minute per scheduler on 2 cores, big enough to keep both queues
   * waiting.
   */
  public static final List<JobSpec> JOBS =
      Arrays.asList(new JobSpec("a", 12, 2500), new JobSpec("b", 12, 2500));

  static final long SAMPLE_EVERY_MILLIS = 2000;

  /** Starts the line's embedded cluster under one scheduler. */
  public interface ClusterStarter {
    WorkloadCluster start(String scheduler) throws Exception;
  }

  private DemoRunner() {}

  /**
   * Runs the workload under each of {@code schedulers} on a cluster {@code starter} starts ({@code
   * clusterDescription} says what it is) and prints the report.
   *
   * @return whether every run and every job succeeded
   */
  public static boolean run(
      List<String> schedulers, ClusterStarter starter, String clusterDescription) {
    List<Result> results = new ArrayList<>();
    boolean failed = false;
    for (String scheduler : schedulers) {
      System.out.printf("== %s: starting %s ...%n", scheduler, clusterDescription);
      long t0 = System.nanoTime();
      try (WorkloadCluster cluster = starter.start(scheduler)) {
        System.out.printf(
            "== %s: up in %.1f s; submitting %d SleepJobs, one per queue ...%n",
            cluster.schedulerName(), (System.nanoTime() - t0) / 1e9, JOBS.size());
        Result r = new TwoQueueWorkload(cluster, JOBS, SAMPLE_EVERY_MILLIS, 150_000).run();
        results.add(r);
        for (JobOutcome o : r.outcomes.values()) {
          System.out.printf(
              "== %s: job in %s %s after %.1f s%n",
              r.scheduler,
              o.appQueue,
              o.succeeded ? "succeeded" : "FAILED (" + o.finalStatus + ")",
              o.elapsedMillis / 1000.0);
          failed |= !o.succeeded;
        }
      } catch (Exception | AssertionError e) {
        failed = true;
        System.out.printf("== %s: FAILED: %s%n", scheduler, e);
        e.printStackTrace(System.out);
      }
    }
    if (!results.isEmpty()) {
      System.out.println();
      System.out.print(SideBySideReport.sideBySide(results, SideBySideReport.queues(JOBS)));
    }
    return !failed;
  }
}
