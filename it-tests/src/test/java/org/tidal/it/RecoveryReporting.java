package org.tidal.it;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;

/** The facts and checks the restart and failover tests share about one RM change. */
final class RecoveryReporting {
  private RecoveryReporting() {}

  /**
   * When the work did not finish after an RM change: what the new RM's scheduler believes, so that
   * a stall can be told apart (asks the core never got, room it thinks is taken, or a queue it
   * holds back). Before the applications are collected, while the stalled state is still there.
   */
  static void printStall(RecoveryHarness cluster, SchedulerUnderTest scheduler) {
    ResourceManager rm = cluster.activeRm();
    if (rm == null) {
      System.out.println("Stalled: no active RM");
      return;
    }
    AbstractYarnScheduler<?, ?> yarn = (AbstractYarnScheduler<?, ?>) rm.getResourceScheduler();
    for (RMApp app : rm.getRMContext().getRMApps().values()) {
      RMAppAttempt attempt = app.getCurrentAppAttempt();
      SchedulerApplicationAttempt held =
          attempt == null ? null : yarn.getApplicationAttempt(attempt.getAppAttemptId());
      int asked = 0;
      if (held != null) {
        for (ResourceRequest r : held.getAppSchedulingInfo().getAllResourceRequests()) {
          if (ResourceRequest.ANY.equals(r.getResourceName())) {
            asked += r.getNumContainers();
          }
        }
      }
      System.out.printf(
          "Stalled: %s %s, YARN's attempt %s: %d live containers, %d containers asked for%n",
          app.getApplicationId(),
          app.getState(),
          held == null ? "none" : held.getApplicationAttemptId(),
          held == null ? 0 : held.getLiveContainers().size(),
          asked);
    }
    for (RMNode node : rm.getRMContext().getRMNodes().values()) {
      SchedulerNode held = yarn.getSchedulerNode(node.getNodeID());
      System.out.printf(
          "Stalled: node %s %s, YARN's free %s%n",
          node.getNodeID(),
          node.getState(),
          held == null ? "unknown" : held.getAvailableResource());
    }
    if (scheduler == SchedulerUnderTest.TIDAL) {
      try {
        System.out.println("Stalled: Tidal status " + TidalRest.of(rm).queues());
      } catch (IOException | RuntimeException e) {
        System.out.println("Stalled: Tidal status unavailable: " + e);
      }
    }
  }

  /** The timeline of {@code s} and what became of the containers running when it began. */
  static void switchFacts(
      List<String> facts,
      RecoveryHarness.Switch s,
      List<ContainerLedger.Entry> runningAtSwitch,
      boolean finished) {
    facts.add(
        String.format(
            Locale.ROOT,
            "Timeline (s): old RM stopped %.1f, new RM active %.1f (RM epoch %d), both"
                + " NodeManagers registered again %.1f",
            s.secondsSinceStop(s.stopped),
            s.secondsSinceStop(s.active),
            s.epoch,
            s.secondsSinceStop(s.nodesBack)));
    RmProbe.Allocation first = RmProbe.firstAllocationAfter(s.stopped);
    facts.add(
        first == null
            ? "First new container allocation: none"
            : String.format(
                Locale.ROOT,
                "First new container allocation: %.1f s (%.1f s after the new RM became active;"
                    + " a recovered RM waits %d ms for NodeManagers before it schedules), for %s",
                s.secondsSinceStop(first.nanos),
                (first.nanos - s.active) / 1e9,
                RecoveryHarness.SCHEDULING_WAIT_MILLIS,
                first.attempt));
    long firstStart = -1;
    for (ContainerLedger.Entry e : ContainerLedger.entries()) {
      if (e.startedNanos > s.stopped && (firstStart < 0 || e.startedNanos < firstStart)) {
        firstStart = e.startedNanos;
      }
    }
    facts.add(
        firstStart < 0
            ? "First container started on a NodeManager after the RM stopped: none"
            : String.format(
                Locale.ROOT,
                "First container started on a NodeManager after the RM stopped: %.1f s",
                s.secondsSinceStop(firstStart)));
    int killed = 0;
    for (ContainerLedger.Entry e : runningAtSwitch) {
      if (e.killedByRm()) {
        killed++;
      }
    }
    facts.add(
        String.format(
            Locale.ROOT,
            "Containers running when the RM stopped: %d, of which killed by the RM later: %d",
            runningAtSwitch.size(),
            killed));
    facts.add(
        String.format(
            Locale.ROOT,
            "Containers killed by the RM in the whole run: %d of %d started (NodeManager exit status"
                + " KILLED_BY_RESOURCEMANAGER, ABORTED or PREEMPTED, or diagnostics naming a kill by"
                + " the ResourceManager); ended with an unknown status: %d",
            ContainerLedger.killedByRm().size(),
            ContainerLedger.entries().size(),
            ContainerLedger.endedWithUnknownStatus()));
    if (!finished) {
      facts.add(
          "Not every application finished: the wait ended at its timeout or 20 s after the first"
              + " container killed by the RM");
    }
  }

  static void checkSwitch(
      Checks checks,
      RecoveryHarness.Switch s,
      List<ContainerLedger.Entry> runningAtSwitch,
      String what) {
    checks.check(
        RmProbe.firstAllocationAfter(s.stopped) != null,
        "the RM allocated no new container after the " + what);
    List<String> killed = new ArrayList<>();
    for (ContainerLedger.Entry e : runningAtSwitch) {
      if (e.killedByRm()) {
        killed.add(e.describe());
      }
    }
    checks.check(
        killed.isEmpty(),
        killed.size()
            + " of the "
            + runningAtSwitch.size()
            + " containers running at the "
            + what
            + " were killed by the RM: "
            + String.join(", ", killed));
  }

  /** Tidal's queues: the run-time queue survives and no queue changes class. */
  static void checkQueues(Checks checks, QueueSnapshot before, QueueSnapshot after, String what) {
    String runtime = "root." + RecoveryQueues.RUNTIME;
    checks.check(
        before.runtimeOwners.containsKey(runtime),
        "precondition: " + runtime + " was not registered before " + what + ": " + before.classes);
    checks.check(
        after.unavailable == null,
        "Tidal's queue status was unavailable after " + what + ": " + after.unavailable);
    checks.check(
        after.runtimeOwners.containsKey(runtime),
        "the queue "
            + runtime
            + " registered at run time is gone after "
            + what
            + "; queues now: "
            + after.classes.keySet());
    Set<String> names = new TreeSet<>(before.classes.keySet());
    names.addAll(after.classes.keySet());
    List<String> changed = new ArrayList<>();
    for (String q : names) {
      String b = before.classes.getOrDefault(q, "(missing)");
      String a = after.classes.getOrDefault(q, "(missing)");
      if (!b.equals(a)) {
        changed.add(q + " " + b + " -> " + a);
      }
    }
    checks.check(
        changed.isEmpty(),
        "queue classes changed across " + what + ": " + String.join(", ", changed));
    checks.check(
        after.clusterVcores == before.clusterVcores,
        "Tidal's capacity after "
            + what
            + " is "
            + after.clusterVcores
            + " vcores, was "
            + before.clusterVcores);
  }
}
