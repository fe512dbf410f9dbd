package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.QUEUES_AB;
import static org.tidal.yarn.TidalTestSupport.awaitContainers;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.launchAm;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNodes;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.bridge.WireLayout;

/**
 * Host and rack names live as long as a node or an ask refers to them: a stream of distinct names
 * leaves a table about as large as the names in use, and a recycled id never reaches the core under
 * two names.
 */
public class TestLocationNames {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();
  @Rule public final MockRmRule rms = new MockRmRule();

  private static final int ROUNDS = 2000;
  private static final int HOSTS_PER_ROUND = 100;

  private static ResourceRequest request(String where, int count, boolean relax) {
    return ResourceRequest.newInstance(
        Priority.newInstance(1), where, Resource.newInstance(1024, 1), count, relax);
  }

  @Test(timeout = 300000)
  public void namesOfWithdrawnAsksAndDepartedNodesAreFreed() throws Exception {
    File allocationFile = tmp.newFile("tidal-queues.xml");
    write(allocationFile, QUEUES_AB);
    MockRM rm = rms.start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    MockAM am = launchAm(rm, "a", "alice", nm);
    TidalScheduler scheduler = rms.scheduler();
    List<ContainerId> none = Collections.emptyList();
    int largest = 0;
    for (int round = 0; round < ROUNDS; round++) {
      List<ResourceRequest> asks = new ArrayList<ResourceRequest>();
      List<ResourceRequest> withdrawals = new ArrayList<ResourceRequest>();
      for (int i = 0; i < HOSTS_PER_ROUND; i++) {
        String host = "h" + round + "-" + i + ".example.com";
        asks.add(request(host, 1, true));
        withdrawals.add(request(host, 0, true));
      }
      String rack = "/rack-" + round;
      asks.add(request(rack, 1, true));
      withdrawals.add(request(rack, 0, true));
      List<String> blacklisted = Arrays.asList("bad-" + round + ".example.com");
      RmLine.allocate(scheduler, am.getApplicationAttemptId(), asks, none, blacklisted, null);
      RmLine.allocate(
          scheduler, am.getApplicationAttemptId(), withdrawals, none, null, blacklisted);
      if (round % 20 == 0) {
        // A node comes and goes under a name of its own.
        RMNode node =
            MockNodes.newNodeInfo(round, Resource.newInstance(4096, 4), round, "n" + round);
        scheduler.handle(new NodeAddedSchedulerEvent(node));
        scheduler.handle(new NodeRemovedSchedulerEvent(node));
      }
      largest = Math.max(largest, scheduler.shim().locationNames());
    }
    int seen = ROUNDS * (HOSTS_PER_ROUND + 2) + ROUNDS / 20 * 2;
    assertTrue(
        "the table grew to " + largest + " names of the " + seen + " seen",
        largest <= 2 * LocationTable.MIN_SWEEP_SIZE);

    // After all that recycling the live node's own names still mean that node: a container
    // pinned to its host lands there.
    String host = nm.getNodeId().getHost();
    List<ResourceRequest> pinned =
        Arrays.asList(
            request(host, 1, true),
            request("/default-rack", 1, false),
            request(ResourceRequest.ANY, 1, false));
    RmLine.allocate(scheduler, am.getApplicationAttemptId(), pinned, none, null, null);
    List<Container> got = awaitContainers(am, 1, nm);
    assertEquals(nm.getNodeId(), got.get(0).getNodeId());
  }

  @Test
  public void anIdIsReusedOnlyWhenTheCoreDropsItAndNoBatchHoldsIt() {
    final int[][] inUse = {new int[0]};
    LocationTable table = new LocationTable(() -> inUse[0]);
    int held;
    int kept;
    try (LocationTable.Batch first = table.batch()) {
      held = first.intern("held");
      kept = first.intern("kept");
      inUse[0] = new int[] {kept};
      // The last of these names fills the table to the sweep size; the core refers to "kept".
      for (int i = 0; i < LocationTable.MIN_SWEEP_SIZE - 2; i++) {
        try (LocationTable.Batch other = table.batch()) {
          other.intern("name-" + i);
        }
      }
      assertEquals("an open batch's ids survive the sweep", 2, table.size());
      try (LocationTable.Batch again = table.batch()) {
        assertEquals(held, again.intern("held"));
      }
    }
    fillAndSweep(table);
    assertEquals("only the core's id is left", 1, table.size());
    try (LocationTable.Batch batch = table.batch()) {
      assertEquals(WireLayout.ANY_LOCATION, batch.intern(ResourceRequest.ANY));
      assertEquals(kept, batch.intern("kept"));
      int fresh = batch.intern("new");
      assertNotEquals(kept, fresh);
      assertTrue(
          "a freed id names the new location: " + fresh, fresh < LocationTable.MIN_SWEEP_SIZE + 3);
    }
  }

  private static void fillAndSweep(LocationTable table) {
    for (int i = 0; table.size() < LocationTable.MIN_SWEEP_SIZE - 1 && i < 1 << 20; i++) {
      try (LocationTable.Batch batch = table.batch()) {
        batch.intern("more-" + i);
      }
    }
    try (LocationTable.Batch batch = table.batch()) {
      batch.intern("last");
    }
  }
}
