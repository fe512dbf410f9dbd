package org.tidal.it;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.tidal.it.TwoQueueWorkload.JobOutcome;
import org.tidal.it.TwoQueueWorkload.JobSpec;
import org.tidal.it.TwoQueueWorkload.Result;

/**
 * Runs the same two-queue MapReduce workload on an embedded YARN cluster, first with Tidal and then
 * with Hadoop's FairScheduler (DRF), and prints each queue's share of the cluster over time and
 * each job's completion time side by side. Arguments, if any, name the schedulers to run (TIDAL,
 * FAIR).
 */
public final class Demo {
  /**
   * Small enough for about a minute per scheduler on 2 cores, big enough to keep both queues
   * waiting.
   */
  static final List<JobSpec> JOBS =
      Arrays.asList(new JobSpec("a", 12, 2500), new JobSpec("b", 12, 2500));

  static final long SAMPLE_EVERY_MILLIS = 2000;

  private Demo() {}

  public static void main(String[] args) throws Exception {
    List<SchedulerUnderTest> schedulers = new ArrayList<>();
    for (String arg : args) {
      schedulers.add(SchedulerUnderTest.valueOf(arg.toUpperCase(Locale.ROOT)));
    }
    if (schedulers.isEmpty()) {
      schedulers.addAll(Arrays.asList(SchedulerUnderTest.TIDAL, SchedulerUnderTest.FAIR));
    }

    List<Result> results = new ArrayList<>();
    boolean failed = false;
    for (SchedulerUnderTest scheduler : schedulers) {
      System.out.printf(
          "== %s: starting RM + %d NodeManagers (%d MB, %d vcores each) ...%n",
          scheduler.displayName(),
          HarnessSettings.NODE_MANAGERS,
          HarnessSettings.NM_MEMORY_MB,
          HarnessSettings.NM_VCORES);
      long t0 = System.nanoTime();
      try (MiniClusterHarness cluster = MiniClusterHarness.start(scheduler)) {
        System.out.printf(
            "== %s: up in %.1f s; submitting %d SleepJobs, one per queue ...%n",
            scheduler.displayName(), (System.nanoTime() - t0) / 1e9, JOBS.size());
        Result r = new TwoQueueWorkload(cluster, JOBS, SAMPLE_EVERY_MILLIS, 150_000).run();
        results.add(r);
        for (JobOutcome o : r.outcomes.values()) {
          System.out.printf(
              "== %s: job in %s %s after %.1f s%n",
              scheduler.displayName(),
              o.appQueue,
              o.succeeded ? "succeeded" : "FAILED (" + o.finalStatus + ")",
              o.elapsedMillis / 1000.0);
          failed |= !o.succeeded;
        }
      } catch (Exception | AssertionError e) {
        failed = true;
        System.out.printf("== %s: FAILED: %s%n", scheduler.displayName(), e);
        e.printStackTrace(System.out);
      }
    }

    if (!results.isEmpty()) {
      System.out.println();
      System.out.print(Reports.sideBySide(results, Reports.queues(JOBS)));
    }
    // Daemon threads of the stopped clusters must not keep the JVM alive.
    System.exit(failed ? 1 : 0);
  }
}
