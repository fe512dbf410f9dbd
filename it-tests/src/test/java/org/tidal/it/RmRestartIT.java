package org.tidal.it;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

/**
 * Work-preserving ResourceManager restart on a real cluster, under Tidal and, as the reference
 * ({@link SchedulerUnderTest#parameters}), under Hadoop's FairScheduler: the RM stops while
 * MapReduce jobs in a TQ, a BoPF LQ and (Tidal) a queue registered at run time, and a Tez DAG in a
 * second TQ, all have their AM and tasks running; a new RM starts on the same ports and state store
 * ({@code yarn.resourcemanager.recovery.enabled} with a FileSystemRMStateStore, with Tidal's own
 * state beside it by default). The NodeManagers and their containers stay up throughout.
 *
 * <p>Every application must then succeed with its first attempt, no container may be killed by the
 * RM, no task may run twice (each application starts exactly one container per task and one for its
 * AM), and the new RM must allocate new containers. Under Tidal, every queue must have the same
 * admission class after the restart as before, the run-time queue included.
 *
 * <p>Killed containers are counted on the NodeManagers ({@link ContainerLedger}): a running
 * container the recovered RM does not adopt is ended by the NodeManager on the RM's order with exit
 * status KILLED_BY_RESOURCEMANAGER. The MapReduce and Tez AMs stop their own containers through the
 * NodeManager (KILLED_BY_APPMASTER), never through the RM, so a clean run has none.
 */
@RunWith(Parameterized.class)
public class RmRestartIT {
  /**
   * Map-only jobs of 8 s maps: eight per job keep every job waiting for containers across the
   * restart, with four AMs holding half of the cluster's eight slots.
   */
  static final int MAPS = 8;

  static final long MAP_MILLIS = 8000;
  static final int TEZ_PRODUCERS = 3;

  static final long TEZ_PRODUCER_MILLIS = 20000;

  /**
   * The DAG often takes the free slots before the slower MapReduce AMs ask, so their first maps
   * start only as its producers end; a consumer that runs on keeps the DAG with a task at that
   * moment. With a 1 s consumer the DAG sometimes ended before every job had a map running, and on
   * a loaded machine a 30 s one did too (FairScheduler, the last MapReduce job's first map started
   * just after it), so the consumer runs a minute.
   */
  static final long TEZ_CONSUMER_MILLIS = 60000;

  @Parameters(name = "{0}")
  public static Iterable<Object[]> schedulers() {
    return SchedulerUnderTest.parameters();
  }

  private final SchedulerUnderTest scheduler;

  public RmRestartIT(SchedulerUnderTest scheduler) {
    this.scheduler = scheduler;
  }

  @Test(timeout = 420_000)
  public void runningWorkSurvivesAWorkPreservingRmRestart() throws Exception {
    boolean tidal = scheduler == SchedulerUnderTest.TIDAL;
    File dir = RecoveryQueues.freshDir("rm-restart-" + scheduler.name().toLowerCase(Locale.ROOT));
    System.out.printf("== RM restart under %s: starting the cluster%n", scheduler.displayName());
    try (RecoveryHarness cluster =
        RecoveryHarness.restartable(
            scheduler, dir, conf -> RecoveryQueues.configure(scheduler, conf))) {
      QueueSnapshot before = null;
      QueueSnapshot after = null;
      String registeredClass = null;
      if (tidal) {
        registeredClass = RecoveryQueues.registerRuntimeQueue(cluster);
      }
      try (RecoveryWorkload work = new RecoveryWorkload(cluster.clientConf())) {
        work.submitMapReduce(RecoveryQueues.TQ, MAPS, MAP_MILLIS);
        work.submitMapReduce(RecoveryQueues.LQ, MAPS, MAP_MILLIS);
        work.submitMapReduce(RecoveryQueues.RUNTIME, MAPS, MAP_MILLIS);
        work.submitTez(RecoveryQueues.DAG, TEZ_PRODUCERS, TEZ_PRODUCER_MILLIS, TEZ_CONSUMER_MILLIS);
        work.awaitAllRunningTasks(180);
        if (tidal) {
          before = QueueSnapshot.read(cluster::tidalRest);
        }
        List<ContainerLedger.Entry> runningAtRestart = ContainerLedger.runningNow();
        System.out.printf(
            "== %d containers running; restarting the %s RM%n",
            runningAtRestart.size(), scheduler.displayName());
        RecoveryHarness.Switch restart = cluster.restart();
        System.out.printf(
            Locale.ROOT,
            "== new RM active after %.1f s, NodeManagers back after %.1f s%n",
            restart.secondsSinceStop(restart.active),
            restart.secondsSinceStop(restart.nodesBack));
        if (tidal) {
          after = QueueSnapshot.awaitSame(cluster::tidalRest, before, 40);
        }
        boolean finished = work.awaitFinished(240, 20);
        if (!finished) {
          RecoveryReporting.printStall(cluster, scheduler);
        }
        work.collect();

        List<String> facts = new ArrayList<>();
        RecoveryReporting.switchFacts(facts, restart, runningAtRestart, finished);
        if (tidal) {
          facts.add(
              "Class of root." + RecoveryQueues.RUNTIME + " when registered: " + registeredClass);
        }
        Reports.publish(
            "rm-restart-" + scheduler.name().toLowerCase(Locale.ROOT),
            Reports.recovery(
                "Work-preserving RM restart under "
                    + scheduler.displayName()
                    + " (FileSystemRMStateStore; t = 0 when the old RM began to stop)",
                work.apps(),
                before,
                after,
                facts),
            System.out);

        Checks checks = new Checks("Work-preserving RM restart under " + scheduler.displayName());
        work.checkApps(checks, "across the RM restart");
        RecoveryReporting.checkSwitch(checks, restart, runningAtRestart, "restart");
        if (tidal) {
          RecoveryReporting.checkQueues(checks, before, after, "the restart");
        }
        checks.assertAllPassed();
      }
    }
  }
}
