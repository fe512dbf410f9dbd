package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.launchAm;
import static org.tidal.yarn.TidalTestSupport.poll;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.RejectionReason;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceSizing;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Placement constraints with Hadoop's placement-constraint processor in front of Tidal: the
 * processor picks the nodes by the app's constraints, Tidal starts the containers there when the
 * node and the queue have room, and both refusals reach the AM as Hadoop's rejection reasons.
 */
public class TestConstrainedPlacement {
  private static final String TAG = "web";
  private static final Resource ONE = Resource.newInstance(1024, 1);

  @Rule public final MockRmRule rms = new MockRmRule();
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

  private static YarnConfiguration placementConf(File queues) {
    YarnConfiguration conf = conf(queues);
    conf.set(
        YarnConfiguration.RM_PLACEMENT_CONSTRAINTS_HANDLER,
        YarnConfiguration.PROCESSOR_RM_PLACEMENT_CONSTRAINTS_HANDLER);
    // One retry: a request no node can take comes back to the AM within a few calls.
    conf.setInt(YarnConfiguration.RM_PLACEMENT_CONSTRAINTS_RETRY_ATTEMPTS, 1);
    return conf;
  }

  /** Four nodes, each with room for every container the tests ask for. */
  private static List<MockNM> nodes(MockRM rm) throws Exception {
    List<MockNM> nodes = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      MockNM nm = rm.registerNode("127.0.0.1:" + (1233 + i), 8192, 8);
      nm.nodeHeartbeat(true);
      nodes.add(nm);
    }
    return nodes;
  }

  /** What the AM got until {@code containers} started and {@code rejections} came back. */
  private static final class Outcome {
    final List<Container> started = new ArrayList<>();
    final List<RejectedSchedulingRequest> rejected = new ArrayList<>();

    Set<NodeId> nodes() {
      Set<NodeId> on = new HashSet<>();
      for (Container c : started) {
        on.add(c.getNodeId());
      }
      return on;
    }
  }

  /**
   * Polls the AM from the response to its request on (the processor places and starts containers
   * between its calls, and answers some at once).
   */
  private static Outcome await(MockAM am, AllocateResponse first, int containers, int rejections)
      throws Exception {
    Outcome outcome = new Outcome();
    outcome.started.addAll(first.getAllocatedContainers());
    outcome.rejected.addAll(first.getRejectedSchedulingRequests());
    long deadline = System.currentTimeMillis() + 30_000;
    while (outcome.started.size() < containers || outcome.rejected.size() < rejections) {
      if (System.currentTimeMillis() > deadline) {
        fail(
            "expected "
                + containers
                + " containers and "
                + rejections
                + " rejections, got "
                + outcome.started
                + " and "
                + outcome.rejected);
      }
      AllocateResponse response = poll(am);
      outcome.started.addAll(response.getAllocatedContainers());
      outcome.rejected.addAll(response.getRejectedSchedulingRequests());
      Thread.sleep(50);
    }
    return outcome;
  }

  /** Asks for {@code count} containers tagged {@link #TAG}, none on a node with that tag. */
  private static AllocateResponse antiAffinity(MockAM am, int count, long allocationRequestId)
      throws Exception {
    return am.allocateIntraAppAntiAffinity(
        ResourceSizing.newInstance(count, ONE),
        Priority.newInstance(1),
        allocationRequestId,
        Collections.singleton(TAG),
        TAG);
  }

  /**
   * Four containers that must not share a node with each other: the nodes could each hold all four,
   * so only the constraint spreads them, one per node. Once they run, a fifth finds no node and is
   * rejected back to the AM.
   */
  @Test(timeout = 120000)
  public void antiAffinitySpreadsAnAppsContainersOverTheNodes() throws Exception {
    MockRM rm = rms.start(placementConf(null));
    List<MockNM> nodes = nodes(rm);
    MockAM am = launchAm(rm, "classpath", "alice", nodes.get(0));
    Outcome placed = await(am, antiAffinity(am, 4, 1), 4, 0);
    assertEquals("one container per node: " + placed.started, 4, placed.nodes().size());
    for (Container c : placed.started) {
      assertEquals(1, c.getAllocationRequestId());
      assertEquals(ONE, c.getResource());
    }
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    assertEquals(
        "the AM and the four placed containers in Hadoop's records",
        5,
        scheduler.getRootQueueMetrics().getAllocatedContainers());
    String status = scheduler.shim().statusJson();
    assertTrue(status, status.contains("\"running_containers\":5"));

    // The RM counts a container's tags from when it runs.
    Map<NodeId, MockNM> byId = new HashMap<>();
    for (MockNM nm : nodes) {
      byId.put(nm.getNodeId(), nm);
    }
    for (Container c : placed.started) {
      byId.get(c.getNodeId())
          .nodeHeartbeat(
              am.getApplicationAttemptId(), c.getId().getContainerId(), ContainerState.RUNNING);
    }
    waitFor(
        "the placed containers to run",
        () -> {
          for (Container c : placed.started) {
            if (scheduler.getRMContainer(c.getId()).getState() != RMContainerState.RUNNING) {
              return false;
            }
          }
          return true;
        });
    Outcome fifth = await(am, antiAffinity(am, 1, 2), 0, 1);
    assertEquals("no node is free of the tag: " + fifth.started, 0, fifth.started.size());
    assertEquals(RejectionReason.COULD_NOT_PLACE_ON_NODE, fifth.rejected.get(0).getReason());
    assertEquals(5, scheduler.getRootQueueMetrics().getAllocatedContainers());
  }

  /**
   * The processor finds nodes for four containers, but the queue's maxResources has room for two
   * beside the AM: Tidal starts two and refuses the others, which reach the AM as requests the
   * scheduler could not start.
   */
  @Test(timeout = 120000)
  public void theQueuesLimitsBoundWhatThePlacementStarts() throws Exception {
    File queues = tmp.newFile("queues.xml");
    write(
        queues,
        "<tidal><queue name=\"capped\"><maxResources>3072 mb, 8 vcores</maxResources></queue>"
            + "</tidal>");
    MockRM rm = rms.start(placementConf(queues));
    List<MockNM> nodes = nodes(rm);
    MockAM am = launchAm(rm, "capped", "alice", nodes.get(0));
    Outcome outcome = await(am, antiAffinity(am, 4, 1), 2, 2);
    assertEquals(2, outcome.nodes().size());
    for (RejectedSchedulingRequest r : outcome.rejected) {
      assertEquals(RejectionReason.COULD_NOT_SCHEDULE_ON_NODE, r.getReason());
    }
    Thread.sleep(500);
    assertEquals("nothing beyond the queue's limit", 0, poll(am).getAllocatedContainers().size());
    assertEquals(
        3,
        ((TidalScheduler) rm.getResourceScheduler())
            .getRootQueueMetrics()
            .getAllocatedContainers());
  }
}
