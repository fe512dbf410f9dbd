package org.tidal.it3;

import static org.apache.hadoop.yarn.api.resource.PlacementConstraints.NODE;
import static org.apache.hadoop.yarn.api.resource.PlacementConstraints.PlacementTargets.allocationTag;
import static org.apache.hadoop.yarn.api.resource.PlacementConstraints.targetNotIn;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.ExecutionTypeRequest;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.RejectionReason;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceSizing;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.resource.PlacementConstraint;
import org.apache.hadoop.yarn.api.resource.PlacementConstraints;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.junit.Test;

/**
 * Placement constraints under Tidal on a Hadoop 3.4.3 mini cluster, through the RM's RPC and
 * Hadoop's placement processor: an app registers intra-app anti-affinity for its tag {@code spread}
 * and asks for three containers with it on a cluster of two NodeManagers, each with room for all
 * three. The baseline that must fail the check: the same three asked without a constraint share a
 * node.
 */
public class PlacementConstraintIT {
  private static final String TAG = "spread";
  private static final Resource SIZE = Resource.newInstance(256, 1);
  private static final int ASKED = 3;

  @Test(timeout = 240_000)
  public void antiAffinitySpreadsAnAppsContainersOverNodesAndRejectsTheRest() throws Exception {
    try (TidalMiniCluster cluster =
        TidalMiniCluster.startWithPlacementProcessor("placement", "tidal-two-queues.xml")) {
      Configuration conf = cluster.clientConf();
      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(conf);
      yarn.start();
      try {
        Map<String, Integer> plain;
        try (UnmanagedAm am = UnmanagedAm.start(yarn, conf, "b")) {
          am.ask(SIZE, ASKED);
          await(am, () -> am.held.size() == ASKED, "the unconstrained containers");
          plain = byNode(am);
        }
        System.out.printf("== placement: without a constraint, containers by node %s%n", plain);
        assertTrue(
            "baseline: without a constraint, Tidal fills one node first: " + plain,
            Collections.max(plain.values()) >= 2);

        Map<Set<String>, PlacementConstraint> antiAffinity =
            Collections.singletonMap(
                Collections.singleton(TAG),
                PlacementConstraints.build(targetNotIn(NODE, allocationTag(TAG))));
        try (UnmanagedAm am = UnmanagedAm.start(yarn, conf, "a", antiAffinity)) {
          am.ask(
              SchedulingRequest.newBuilder()
                  .allocationRequestId(1)
                  .priority(Priority.newInstance(1))
                  .allocationTags(Collections.singleton(TAG))
                  .executionType(ExecutionTypeRequest.newInstance(ExecutionType.GUARANTEED))
                  .resourceSizing(ResourceSizing.newInstance(ASKED, SIZE))
                  .build());
          await(
              am,
              () -> am.held.size() == TidalMiniCluster.NODE_MANAGERS && !am.rejected.isEmpty(),
              "one container per node and a rejection");
          Map<String, Integer> spread = byNode(am);
          System.out.printf(
              "== placement: anti-affine containers by node %s; rejected %s%n",
              spread, am.rejected);
          assertEquals(
              "one anti-affine container per node", TidalMiniCluster.NODE_MANAGERS, spread.size());
          assertFalse("no node twice: " + spread, spread.containsValue(2));
          RejectedSchedulingRequest rejection = am.rejected.get(0);
          assertEquals(RejectionReason.COULD_NOT_PLACE_ON_NODE, rejection.getReason());
          assertEquals(
              "the rest of the ask comes back",
              1,
              rejection.getRequest().getResourceSizing().getNumAllocations());
          // Nothing more arrives: the rejected container is not started later.
          Thread.sleep(2000);
          am.poll();
          assertEquals(TidalMiniCluster.NODE_MANAGERS, am.held.size());
        }
      } finally {
        yarn.stop();
      }
    }
  }

  private static void await(UnmanagedAm am, BooleanSupplier done, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "no " + what + " within 60 s: held " + am.held + ", rejected " + am.rejected);
      }
      am.poll();
      Thread.sleep(250);
    }
  }

  private static Map<String, Integer> byNode(UnmanagedAm am) {
    Map<String, Integer> count = new TreeMap<>();
    for (Container c : am.held) {
      count.merge(c.getNodeId().toString(), 1, Integer::sum);
    }
    return count;
  }
}
