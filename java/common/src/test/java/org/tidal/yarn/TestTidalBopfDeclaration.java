package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.TIMEOUT_MS;
import static org.tidal.yarn.TidalTestSupport.awaitContainers;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.launchAm;
import static org.tidal.yarn.TidalTestSupport.poll;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * BoPF's bounded guarantee in a MockRM on the shim's real clock, as the core's test
 * an_over_declared_burst_gets_its_declaration_first_then_shares_fairly checks it on a simulated
 * one: a Hard LQ whose burst asks four times its declaration gets the declared part first, then
 * shares with a saturating TQ by DRF. Strict priority, the baseline, starves the TQ.
 */
public class TestTidalBopfDeclaration {
  private static final int NODES = 2;

  /** Slots of 1 GB / 1 vcore per node. */
  private static final int SLOTS = 8;

  /**
   * The LQ's declared vcore-seconds (and as many GB-seconds), due within 1 s: a guaranteed rate of
   * the whole cluster, so within its declaration the LQ comes first on every freed slot.
   */
  private static final int DECLARED = NODES * SLOTS;

  /**
   * The nodes heartbeat in turn, one every tick, and a container runs until its node's next
   * heartbeat (as in the core test): at least NODES ticks of the wall clock the shim feeds the
   * core.
   */
  private static final long TICK_MS = 50;

  /** A run stops after the round in which this many were handed out beyond the declaration. */
  private static final int BEYOND_GRANTS = 48;

  /** DRF would give the TQ half; it must keep most of that. */
  private static final double MIN_TQ_SHARE = 0.4;

  /** The core's clock counts whole milliseconds: under 2 ms per container of the run. */
  private static final double CORE_ROUNDING = 0.5;

  private static final String LQ =
      "<queue name=\"lq\"><type>lq</type>"
          + "<period-sec>300</period-sec><deadline-sec>1</deadline-sec>"
          + "<burst-demand><vcores>"
          + DECLARED
          + "</vcores>"
          + "<memory-mb>"
          + DECLARED * 1024
          + "</memory-mb></burst-demand></queue>";

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private MockRM rm;

  @Test(timeout = 120000)
  public void bopfServesTheDeclarationFirstThenSharesFairly() throws Exception {
    Outcome bopf = overDeclaredBurst("bopf");
    assertEquals(bopf.toString(), "hard", bopf.lqClass);
    assertTrue(bopf.toString(), bopf.lqWithin > 0);
    assertEquals("the TQ got a slot within the LQ's declaration: " + bopf, 0, bopf.tqWithin);
    // Every heartbeat frees slots, so the TQ's first one must come at the first heartbeat past
    // the declaration, by the test's bounds too.
    assertTrue(
        "the LQ kept priority beyond its declaration: " + bopf,
        bopf.atLeastBeforeFirstTq < DECLARED + CORE_ROUNDING);
    assertTrue(
        "the LQ got less than its declaration first: " + bopf,
        bopf.atMostAtFirstTq > DECLARED - CORE_ROUNDING);
    assertTrue(
        "the TQ was not protected beyond the declaration: " + bopf,
        bopf.tqShareBeyond() >= MIN_TQ_SHARE);
  }

  /** The baseline fails the TQ-protection check above. */
  @Test(timeout = 120000)
  public void strictPriorityStarvesTheTqBeyondTheDeclaration() throws Exception {
    Outcome strict = overDeclaredBurst("strict-priority");
    assertTrue(strict.toString(), strict.tqShareBeyond() < 0.05);
  }

  /** What one run observed; "used" is the LQ's consumption in vcore-seconds, AM included. */
  private static final class Outcome {
    String lqClass;

    /** Containers handed out at heartbeats that left the LQ's burst within its declaration. */
    int tqWithin;

    int lqWithin;

    /** At the heartbeat that gave the TQ its first slot after the LQ asked, and the one before. */
    double coreUsedAtFirstTq = Double.NaN;

    double atMostAtFirstTq = Double.NaN;
    double atLeastBeforeFirstTq = Double.NaN;

    /** Containers handed out beyond the declaration while the LQ was still asking. */
    int tqBeyond;

    int lqBeyond;

    double tqShareBeyond() {
      return tqBeyond / (double) Math.max(1, tqBeyond + lqBeyond);
    }

    @Override
    public String toString() {
      return String.format(
          "LQ class %s; within the declaration: TQ %d, LQ %d containers; LQ "
              + "used %.1f (core), at most %.1f vcore-s of %d at the TQ's first slot, at least %.1f "
              + "one heartbeat before; beyond: TQ %d, LQ %d containers, TQ share %.2f",
          lqClass,
          tqWithin,
          lqWithin,
          coreUsedAtFirstTq,
          atMostAtFirstTq,
          DECLARED,
          atLeastBeforeFirstTq,
          tqBeyond,
          lqBeyond,
          tqShareBeyond());
    }
  }

  /**
   * A container and the times around the heartbeats that started and ended it. The core reads its
   * clock in between, so the inner times bound the consumption it counts from below and the outer
   * ones from above, whatever the scheduler's latency.
   */
  private static final class Held {
    final Container container;
    final long startedAfter;
    final long startedBy;
    long endedAfter = Long.MAX_VALUE;
    long endedBy = Long.MAX_VALUE;

    Held(Container container, long startedAfter, long startedBy) {
      this.container = container;
      this.startedAfter = startedAfter;
      this.startedBy = startedBy;
    }

    double vcoreSeconds(long from, long to) {
      return container.getResource().getVirtualCores() * Math.max(0, to - from) / 1e9;
    }
  }

  /** An AM, started within [{@code amAfter}, {@code amBy}], and its containers. */
  private static final class Tenant {
    final MockAM am;
    final long amAfter;
    final long amBy;
    final List<Held> held = new ArrayList<Held>();

    Tenant(MockAM am, long amAfter, long amBy) {
      this.am = am;
      this.amAfter = amAfter;
      this.amBy = amBy;
    }

    void started(List<Container> containers, long after, long by) {
      for (Container container : containers) {
        held.add(new Held(container, after, by));
      }
    }

    /** Collects what the AM got at the heartbeat handled within [after, by]; returns how many. */
    int collect(long after, long by) throws Exception {
      List<Container> got = poll(am).getAllocatedContainers();
      started(got, after, by);
      return got.size();
    }

    /** Ends the containers running on {@code node} at a heartbeat sent after {@code after}. */
    void endOn(MockNM node, long after, List<Held> ending) {
      for (Held h : held) {
        if (h.endedAfter == Long.MAX_VALUE && h.container.getNodeId().equals(node.getNodeId())) {
          h.endedAfter = after;
          ending.add(h);
        }
      }
    }

    /** Vcore-seconds surely consumed by {@code now}, its 1-vcore AM included. */
    double usedAtLeast(long now) {
      double sum = Math.max(0, now - amBy) / 1e9;
      for (Held h : held) {
        sum += h.vcoreSeconds(h.startedBy, Math.min(now, h.endedAfter));
      }
      return sum;
    }

    /** Vcore-seconds possibly consumed by {@code now}. */
    double usedAtMost(long now) {
      double sum = (now - amAfter) / 1e9;
      for (Held h : held) {
        sum += h.vcoreSeconds(h.startedAfter, Math.min(now, h.endedBy));
      }
      return sum;
    }
  }

  private Tenant launch(String queue, MockNM nm) throws Exception {
    long after = System.nanoTime();
    MockAM am = launchAm(rm, queue, "u-" + queue, nm);
    return new Tenant(am, after, System.nanoTime());
  }

  /**
   * Heartbeats {@code node}, reporting the tenants' containers on it as completed, and waits until
   * the scheduler has handled it: the completed containers are gone and the node is full again (the
   * TQ always asks), so the AMs can collect all it started. Returns the time by which it was
   * handled.
   */
  private long heartbeat(MockNM node, long after, Tenant... tenants) throws Exception {
    List<Held> ending = new ArrayList<Held>();
    for (Tenant tenant : tenants) {
      tenant.endOn(node, after, ending);
    }
    Map<ApplicationId, List<ContainerStatus>> statuses =
        new HashMap<ApplicationId, List<ContainerStatus>>();
    for (Held h : ending) {
      ApplicationId app = h.container.getId().getApplicationAttemptId().getApplicationId();
      if (!statuses.containsKey(app)) {
        statuses.put(app, new ArrayList<ContainerStatus>());
      }
      statuses
          .get(app)
          .add(
              ContainerStatus.newInstance(h.container.getId(), ContainerState.COMPLETE, "done", 0));
    }
    node.nodeHeartbeat(statuses, true);
    TidalScheduler scheduler = rms.scheduler();
    waitFor(
        "the heartbeat of " + node.getNodeId(),
        () -> {
          for (Held h : ending) {
            if (scheduler.getRMContainer(h.container.getId()) != null) {
              return false;
            }
          }
          return scheduler.getNodeReport(node.getNodeId()).getNumContainers() == SLOTS;
        });
    long by = System.nanoTime();
    for (Held h : ending) {
      h.endedBy = by;
    }
    return by;
  }

  /**
   * A TQ app fills the cluster and asks for far more; then the LQ's app, whose AM runs since
   * before, asks four times its declaration, and the nodes heartbeat in turn. Each heartbeat's
   * grants are classed by the LQ's burst phase after it (the core's view, BoPF only) and by the
   * consumption the LQ surely had when it was sent (the test's view, any policy).
   */
  private Outcome overDeclaredBurst(String policy) throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(
        allocation, "<tidal><policy>" + policy + "</policy><queue name=\"tq\"/>" + LQ + "</tidal>");
    rm = rms.start(conf(allocation));
    MockNM[] nodes = new MockNM[NODES];
    for (int i = 0; i < NODES; i++) {
      nodes[i] = rm.registerNode("127.0.0." + (i + 1) + ":1234", SLOTS * 1024, SLOTS);
    }
    // Admission runs at the first heartbeat; it must see the whole cluster.
    waitFor("the nodes to join", () -> rms.scheduler().getNumClusterNodes() == NODES);
    Tenant tq = launch("tq", nodes[0]);
    Tenant lq = launch("lq", nodes[0]);
    long fill = System.nanoTime();
    tq.am.allocate(ResourceRequest.ANY, 1024, 100000, new ArrayList<ContainerId>());
    tq.started(awaitContainers(tq.am, NODES * SLOTS - 2, nodes), fill, System.nanoTime());
    // Each container runs at least NODES ticks: this asks at least four times the declaration.
    lq.am.allocate(
        ResourceRequest.ANY,
        1024,
        (int) (4 * DECLARED * 1000 / (NODES * TICK_MS)),
        new ArrayList<ContainerId>());

    Outcome outcome = new Outcome();
    outcome.lqClass = rms.queueStatus("lq").path("class").textValue();
    double atLeastBefore = Double.NaN;
    long deadline = System.currentTimeMillis() + TIMEOUT_MS;
    while (outcome.tqBeyond + outcome.lqBeyond < BEYOND_GRANTS) {
      if (System.currentTimeMillis() > deadline) {
        fail("timed out: " + outcome);
      }
      // Only whole rounds count as beyond: each hands every task slot out once, so a partial
      // one would skew the shares by which node came first.
      boolean beyond = lq.usedAtLeast(System.nanoTime()) >= DECLARED;
      for (MockNM node : nodes) {
        Thread.sleep(TICK_MS);
        long after = System.nanoTime();
        double atLeast = lq.usedAtLeast(after);
        long by = heartbeat(node, after, tq, lq);
        int tqGot = tq.collect(after, by);
        int lqGot = lq.collect(after, by);
        JsonNode status = rms.queueStatus("lq");
        JsonNode burst = status.path("burst");
        String phase = burst.path("phase").textValue();
        if ("on".equals(phase) || "catch-up".equals(phase)) {
          outcome.tqWithin += tqGot;
          outcome.lqWithin += lqGot;
        }
        if (tqGot > 0 && Double.isNaN(outcome.atMostAtFirstTq)) {
          // The burst status is as of this heartbeat's start, when the core chose.
          outcome.coreUsedAtFirstTq = burst.path("consumed").path(1).asDouble(Double.NaN);
          outcome.atMostAtFirstTq = lq.usedAtMost(by);
          outcome.atLeastBeforeFirstTq = atLeastBefore;
        }
        assertTrue(
            "the LQ ran out of asks: " + outcome,
            status.path("pending_containers").longValue() > 0);
        if (beyond) {
          outcome.tqBeyond += tqGot;
          outcome.lqBeyond += lqGot;
        }
        atLeastBefore = atLeast;
      }
    }
    // The measured numbers, for the surefire output of a passing run.
    System.out.println(policy + ": " + outcome);
    return outcome;
  }
}
