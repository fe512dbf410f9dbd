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
 * ResourceManager high availability on a real cluster, under Tidal and, as the reference ({@link
 * SchedulerUnderTest#parameters}), under Hadoop's FairScheduler: two RMs in one mini cluster share
 * a ZKRMStateStore on a ZooKeeper server in this JVM and elect the active one through it (automatic
 * failover with the embedded elector). While MapReduce jobs in the BoPF LQ and in a queue
 * registered at run time (Tidal; FairScheduler has it in its allocation file) have their AM and
 * tasks running, the active RM is stopped; the standby must become active with the same queues and
 * admission classes (Tidal keeps its state in znodes beside the ZooKeeper RM state store, its
 * default) and adopt the running containers: every job succeeds with its first attempt, no
 * container is killed by the RM, no task runs twice and the new RM allocates new containers.
 *
 * <p>Stopping the active RM is the failover a crashed RM causes, short of the ZooKeeper session
 * timeout: the stopping RM's elector leaves the election at once, the standby's elector wins it and
 * makes its RM active. Manual transitions through the admin service would test the same recovery
 * with the old RM still running as a standby; automatic failover is what a production pair runs.
 */
@RunWith(Parameterized.class)
public class RmFailoverIT {
  static final int MAPS = 8;
  static final long MAP_MILLIS = 5000;

  @Parameters(name = "{0}")
  public static Iterable<Object[]> schedulers() {
    return SchedulerUnderTest.parameters();
  }

  private final SchedulerUnderTest scheduler;

  public RmFailoverIT(SchedulerUnderTest scheduler) {
    this.scheduler = scheduler;
  }

  @Test(timeout = 420_000)
  public void standbyTakesOverRunningWorkQueuesAndClasses() throws Exception {
    boolean tidal = scheduler == SchedulerUnderTest.TIDAL;
    File dir = RecoveryQueues.freshDir("rm-failover-" + scheduler.name().toLowerCase(Locale.ROOT));
    System.out.printf("== RM failover under %s: starting the cluster%n", scheduler.displayName());
    try (EmbeddedZooKeeper zooKeeper = EmbeddedZooKeeper.start(new File(dir, "zookeeper"));
        RecoveryHarness cluster =
            RecoveryHarness.highlyAvailable(
                scheduler,
                zooKeeper.connectString(),
                conf -> RecoveryQueues.configure(scheduler, conf))) {
      QueueSnapshot before = null;
      QueueSnapshot after = null;
      if (tidal) {
        RecoveryQueues.registerRuntimeQueue(cluster);
      }
      try (RecoveryWorkload work = new RecoveryWorkload(cluster.clientConf())) {
        work.submitMapReduce(RecoveryQueues.LQ, MAPS, MAP_MILLIS);
        work.submitMapReduce(RecoveryQueues.RUNTIME, MAPS, MAP_MILLIS);
        work.awaitAllRunningTasks(180);
        if (tidal) {
          before = QueueSnapshot.read(cluster::tidalRest);
        }
        List<ContainerLedger.Entry> runningAtFailover = ContainerLedger.runningNow();
        System.out.printf(
            "== %d containers running; stopping the active %s RM%n",
            runningAtFailover.size(), scheduler.displayName());
        RecoveryHarness.Switch failover = cluster.failover();
        System.out.printf(
            Locale.ROOT,
            "== %s: standby active after %.1f s, NodeManagers back after %.1f s%n",
            failover.kind,
            failover.secondsSinceStop(failover.active),
            failover.secondsSinceStop(failover.nodesBack));
        if (tidal) {
          after = QueueSnapshot.awaitSame(cluster::tidalRest, before, 40);
        }
        boolean finished = work.awaitFinished(240, 20);
        if (!finished) {
          RecoveryReporting.printStall(cluster, scheduler);
        }
        work.collect();

        List<String> facts = new ArrayList<>();
        facts.add(
            "Failover: "
                + failover.kind
                + " (stopped; the standby's embedded elector took over through ZooKeeper)");
        RecoveryReporting.switchFacts(facts, failover, runningAtFailover, finished);
        Reports.publish(
            "rm-failover-" + scheduler.name().toLowerCase(Locale.ROOT),
            Reports.recovery(
                "RM failover (HA, ZKRMStateStore, automatic) under "
                    + scheduler.displayName()
                    + " (t = 0 when the active RM began to stop)",
                work.apps(),
                before,
                after,
                facts),
            System.out);

        Checks checks = new Checks("RM failover under " + scheduler.displayName());
        work.checkApps(checks, "across the failover");
        RecoveryReporting.checkSwitch(checks, failover, runningAtFailover, "failover");
        if (tidal) {
          RecoveryReporting.checkQueues(checks, before, after, "the failover");
        }
        checks.assertAllPassed();
      }
    }
  }
}
