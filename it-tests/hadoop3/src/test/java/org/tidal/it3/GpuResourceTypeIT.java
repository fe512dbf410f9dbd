package org.tidal.it3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.junit.Test;

/**
 * GPUs as a resource type on Hadoop 3.4.3: NodeManagers advertise {@code yarn.io/gpu} through
 * configuration, and Tidal's BoPF admits an LQ declared in GPU-seconds on the cluster's GPUs and
 * shares the TQs by DRF over memory, vcores and GPUs. The two applications are unmanaged AMs in
 * this JVM, which talk to the real RM through AMRMClient as any AM does; their containers are
 * allocated on the real NodeManagers' registered capacity and not launched.
 */
public class GpuResourceTypeIT {
  private static final int GPUS_PER_NODE = 2;
  private static final int TASKS = 8;

  @Test(timeout = 240_000)
  public void drfAndBopfCountGpus() throws Exception {
    try (TidalMiniCluster cluster = TidalMiniCluster.start("gpu", "tidal-gpu.xml", GPUS_PER_NODE)) {
      TidalRest rest = TidalRest.of(cluster);
      JsonNode lq = rest.awaitClass("lqgpu", Set.of("hard"));
      JsonNode status = rest.queues();
      System.out.printf(
          "== GPUs: cluster %s; LQ class %s (%s)%n",
          status.path("cluster"), lq.path("class").asText(), lq.path("admission_reason").asText());
      assertEquals("cluster GPUs", 2 * GPUS_PER_NODE, status.path("cluster").path("gpus").asInt());

      Configuration conf = cluster.clientConf();
      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(conf);
      yarn.start();
      try (UnmanagedAm gpu = UnmanagedAm.start(yarn, conf, "gpu");
          UnmanagedAm cpu = UnmanagedAm.start(yarn, conf, "cpu")) {
        Resource gpuTask =
            Resource.newInstance(256, 1, Collections.singletonMap(TidalMiniCluster.GPU, 1L));
        gpu.ask(gpuTask, TASKS);
        cpu.ask(Resource.newInstance(256, 1), TASKS);
        // Two NodeManagers of 3 vcores: six one-vcore containers fill the cluster.
        int vcores = TidalMiniCluster.NODE_MANAGERS * TidalMiniCluster.NM_VCORES;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (gpu.held.size() + cpu.held.size() < vcores) {
          if (System.nanoTime() > deadline) {
            throw new AssertionError(
                "the cluster did not fill: " + gpu.held.size() + " + " + cpu.held.size());
          }
          gpu.poll();
          cpu.poll();
          Thread.sleep(250);
        }
        Map<NodeId, Long> gpusByNode = new HashMap<>();
        for (Container c : gpu.held) {
          long g = c.getResource().getResourceValue(TidalMiniCluster.GPU);
          assertEquals("GPUs of " + c.getId(), 1L, g);
          gpusByNode.merge(c.getNodeId(), g, Long::sum);
        }
        for (Container c : cpu.held) {
          assertEquals(
              "GPUs of " + c.getId(), 0L, c.getResource().getResourceValue(TidalMiniCluster.GPU));
        }
        JsonNode queues = rest.queues();
        double gpuShare = TidalRest.queue(queues, "gpu").path("dominant_share").asDouble();
        double cpuShare = TidalRest.queue(queues, "cpu").path("dominant_share").asDouble();
        System.out.printf(
            "== GPUs: gpu queue %d containers (GPUs by node %s, dominant share %.3f), "
                + "cpu queue %d containers (dominant share %.3f)%n",
            gpu.held.size(), gpusByNode, gpuShare, cpu.held.size(), cpuShare);
        for (long g : gpusByNode.values()) {
          assertTrue("a node started more GPUs than it has: " + gpusByNode, g <= GPUS_PER_NODE);
        }
        // The GPU queue's share is in GPUs (a quarter each), the CPU queue's in vcores (a sixth):
        // DRF brings them within one GPU task of each other.
        assertEquals(gpu.held.size() / 4.0, gpuShare, 1e-9);
        assertEquals(cpu.held.size() / 6.0, cpuShare, 1e-9);
        assertEquals("dominant shares", gpuShare, cpuShare, 0.25 + 1e-9);
      } finally {
        yarn.stop();
      }
    }
  }
}
