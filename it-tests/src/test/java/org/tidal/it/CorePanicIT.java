package org.tidal.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.codehaus.jackson.JsonNode;
import org.junit.Test;
import org.tidal.yarn.TidalScheduler;
import org.tidal.yarn.config.TidalConfig;

/**
 * A panic of Tidal's native core in the middle of a node heartbeat, on a real cluster: with
 * MapReduce jobs running in two queues, the scheduler's test-only fault injection ({@code
 * tidal.test.fault-injection}) makes the next heartbeat panic inside the core after the core booked
 * its decisions. The scheduler must contain it by rebuilding a fresh core from the RM's view: the
 * RM keeps running, the core is rebuilt exactly once, no container is killed, every job succeeds
 * with its first attempt and no task runs twice, new containers are allocated after the rebuild,
 * and the rebuilt core's books agree with YARN's.
 *
 * <p>What the panic would cost without containment is measured in the same run, on the panicked
 * heartbeat itself ({@link RmProbe} observes each heartbeat under the scheduler's monitor): the
 * decisions the core booked in it never reach YARN (it allocates no container), although the
 * heartbeat had room and work waiting. A core that carried on after the panic would keep those
 * phantom containers booked, holding capacity no job can use, and disagree with YARN about what
 * runs; the books check after the rebuild is the one a core without containment fails.
 * FairScheduler has no native core, so there is no FairScheduler run of this test.
 */
public class CorePanicIT {
  /** Enough 4 s maps that both jobs have maps waiting for a minute. */
  static final int MAPS = 12;

  static final long MAP_MILLIS = 4000;

  /** Used resources as the core and as YARN (the scheduler's nodes) count them at one moment. */
  static final class Books {
    final Resource core;
    final Resource yarn;
    final boolean agree;

    Books(Resource core, Resource yarn, boolean agree) {
      this.core = core;
      this.yarn = yarn;
      this.agree = agree;
    }

    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "core %d vcores / %d MB, YARN %d vcores / %d MB",
          core.getVirtualCores(),
          core.getMemory(),
          yarn.getVirtualCores(),
          yarn.getMemory());
    }
  }

  @Test(timeout = 360_000)
  public void corePanicInAHeartbeatIsContainedWithoutLosingWork() throws Exception {
    System.out.println("== core panic under Tidal: starting the cluster");
    try (RecoveryHarness cluster =
        RecoveryHarness.single(
            SchedulerUnderTest.TIDAL,
            true,
            conf -> conf.setBoolean(TidalConfig.FAULT_INJECTION, true))) {
      ResourceManager rm = cluster.activeRm();
      ResourceScheduler scheduler = rm.getResourceScheduler();
      try (RecoveryWorkload work = new RecoveryWorkload(cluster.clientConf())) {
        work.submitMapReduce("a", MAPS, MAP_MILLIS);
        work.submitMapReduce("b", MAPS, MAP_MILLIS);
        work.awaitAllRunningTasks(180);
        Books booksBefore = awaitBooks(cluster, rm, 20);
        System.out.println(
            "== books before the panic: " + booksBefore + (booksBefore.agree ? "" : " (differ)"));

        // Armed right after a container ends: its NodeManager reports that at once in an extra
        // heartbeat, which then has the freed room and the waiting maps for the core to fill.
        long ended = ContainerLedger.endedCount();
        await(() -> ContainerLedger.endedCount() > ended, 60, "no container ended");
        synchronized (scheduler) {
          ((TidalScheduler) scheduler).armHeartbeatPanic();
          RmProbe.armNextHeartbeat();
        }
        long armedAt = System.nanoTime();
        System.out.println("== panic armed for the next heartbeat");
        long rebuiltAt = awaitNanos(() -> ((TidalScheduler) scheduler).coreRebuilds() >= 1, 30);
        Service.STATE stateAfterPanic = rm.getServiceState();
        Books booksAfter = awaitBooks(cluster, rm, 20);
        boolean finished = work.awaitFinished(240, 20);
        work.collect();
        Service.STATE stateAtEnd = rm.getServiceState();
        int rebuilds = ((TidalScheduler) scheduler).coreRebuilds();

        RmProbe.Heartbeat panicked = null;
        for (RmProbe.Heartbeat h : RmProbe.heartbeats()) {
          if (h.armed) {
            panicked = h;
          }
        }
        long after = rebuiltAt >= 0 ? rebuiltAt : armedAt;
        int allocatedAfter = RmProbe.allocationsAfter(after);
        int startedAfter = 0;
        for (ContainerLedger.Entry e : ContainerLedger.entries()) {
          if (e.startedNanos > after) {
            startedAfter++;
          }
        }

        List<String> facts = new ArrayList<>();
        facts.add(
            panicked == null
                ? "Panicked heartbeat: not observed"
                : String.format(
                    Locale.ROOT,
                    "Panicked heartbeat (%s, %.2f s after arming): containers allocated to YARN %d,"
                        + " completed %d; room %d vcores; containers the apps were asking for %d;"
                        + " core rebuilds %d -> %d%s",
                    panicked.node,
                    (panicked.nanos - armedAt) / 1e9,
                    panicked.allocated,
                    panicked.completed,
                    panicked.roomVcores,
                    panicked.pendingContainers,
                    panicked.rebuildsBefore,
                    panicked.rebuildsAfter,
                    panicked.failure == null ? "" : "; the scheduler threw " + panicked.failure));
        facts.add(
            String.format(
                Locale.ROOT,
                "Core rebuilt: %s; rebuilds at the end: %d; RM state after the panic: %s, at the"
                    + " end: %s",
                rebuiltAt < 0
                    ? "not within 30 s"
                    : String.format(
                        Locale.ROOT, "%.2f s after arming", (rebuiltAt - armedAt) / 1e9),
                rebuilds,
                stateAfterPanic,
                stateAtEnd));
        facts.add(
            "Books before the panic: " + booksBefore + (booksBefore.agree ? "" : " (differ)"));
        facts.add("Books after the rebuild: " + booksAfter + (booksAfter.agree ? "" : " (differ)"));
        facts.add(
            String.format(
                Locale.ROOT,
                "After the rebuild: %d containers allocated, %d started on NodeManagers",
                allocatedAfter,
                startedAfter));
        facts.add(
            String.format(
                Locale.ROOT,
                "Containers killed by the RM in the whole run: %d of %d started",
                ContainerLedger.killedByRm().size(),
                ContainerLedger.entries().size()));
        Reports.publish(
            "core-panic",
            Reports.recovery(
                "Core panic in a heartbeat under Tidal (tidal.test.fault-injection)",
                work.apps(),
                null,
                null,
                facts),
            System.out);

        Checks checks = new Checks("Core panic containment under Tidal");
        checks.check(
            booksBefore.agree,
            "precondition: the core and YARN disagree before any panic: " + booksBefore);
        checks.check(
            panicked != null, "the heartbeat armed to panic was never handled by the scheduler");
        checks.check(
            stateAfterPanic == Service.STATE.STARTED && stateAtEnd == Service.STATE.STARTED,
            "the RM did not keep running: "
                + stateAfterPanic
                + " after the panic, "
                + stateAtEnd
                + " at the end");
        checks.check(
            panicked == null || panicked.failure == null,
            "the scheduler let the panic out of the heartbeat (a real RM exits on that): "
                + (panicked == null ? "" : panicked.failure));
        checks.check(rebuilds == 1, "the core was rebuilt " + rebuilds + " times, not once");
        checks.check(
            booksAfter.agree,
            "after the rebuild the core's books disagree with YARN's (phantom or lost containers): "
                + booksAfter);
        checks.check(
            allocatedAfter > 0 && startedAfter > 0,
            "no new container was allocated and started after the rebuild");
        work.checkApps(checks, "across the panic");
        checks.assertAllPassed();
      }
    }
  }

  /**
   * Reads the core's used resources (REST status) between two readings of YARN's (the scheduler's
   * nodes, under its monitor) until the three agree, for at most {@code timeoutSeconds}: containers
   * come and go with every heartbeat, but between two heartbeats both books must say the same.
   */
  private static Books awaitBooks(RecoveryHarness cluster, ResourceManager rm, long timeoutSeconds)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    Books last = null;
    while (true) {
      Resource yarn1 = yarnUsed(rm);
      JsonNode used = cluster.tidalRest().queues().path("used");
      Resource core =
          Resource.newInstance(
              (int) used.path("memory_mb").getLongValue(),
              (int) used.path("vcores").getLongValue());
      Resource yarn2 = yarnUsed(rm);
      boolean agree = yarn1.equals(yarn2) && core.equals(yarn1);
      last = new Books(core, yarn2, agree);
      if (agree || System.nanoTime() > deadline) {
        return last;
      }
      Thread.sleep(100);
    }
  }

  private static Resource yarnUsed(ResourceManager rm) {
    AbstractYarnScheduler<?, ?> scheduler = (AbstractYarnScheduler<?, ?>) rm.getResourceScheduler();
    int mb = 0;
    int vcores = 0;
    synchronized (scheduler) {
      for (NodeId id : rm.getRMContext().getRMNodes().keySet()) {
        SchedulerNode node = scheduler.getSchedulerNode(id);
        if (node != null) {
          mb += node.getUsedResource().getMemory();
          vcores += node.getUsedResource().getVirtualCores();
        }
      }
    }
    return Resource.newInstance(mb, vcores);
  }

  private static void await(BooleanSupplier condition, long timeoutSeconds, String failure)
      throws InterruptedException {
    if (awaitNanos(condition, timeoutSeconds) < 0) {
      throw new AssertionError(failure + " within " + timeoutSeconds + " s");
    }
  }

  /** When {@code condition} first held, or -1 if it did not within the timeout. */
  private static long awaitNanos(BooleanSupplier condition, long timeoutSeconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    while (true) {
      if (condition.getAsBoolean()) {
        return System.nanoTime();
      }
      if (System.nanoTime() > deadline) {
        return -1;
      }
      Thread.sleep(10);
    }
  }
}
