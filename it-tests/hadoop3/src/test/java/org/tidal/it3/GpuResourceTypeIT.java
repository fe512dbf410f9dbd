package org.tidal.it3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
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

  /**
   * An application whose AM is this JVM: submitted unmanaged, registered with its AMRM token, and
   * unregistered on close.
   */
  private static final class UnmanagedAm implements AutoCloseable {
    final List<Container> held = new ArrayList<>();
    private final UserGroupInformation ugi;
    private final AMRMClient<ContainerRequest> client;

    private UnmanagedAm(UserGroupInformation ugi, AMRMClient<ContainerRequest> client) {
      this.ugi = ugi;
      this.client = client;
    }

    static UnmanagedAm start(YarnClient yarn, Configuration conf, String queue) throws Exception {
      ApplicationSubmissionContext context =
          yarn.createApplication().getApplicationSubmissionContext();
      ApplicationId app = context.getApplicationId();
      context.setApplicationName("gpu-it-" + queue);
      context.setQueue(queue);
      context.setUnmanagedAM(true);
      context.setResource(Resource.newInstance(256, 1));
      context.setAMContainerSpec(
          ContainerLaunchContext.newInstance(null, null, null, null, null, null));
      yarn.submitApplication(context);
      ApplicationAttemptId attempt = awaitLaunched(yarn, app);
      Token<AMRMTokenIdentifier> token = yarn.getAMRMToken(app);
      token.setService(ClientRMProxy.getAMRMTokenService(conf));
      UserGroupInformation ugi = UserGroupInformation.createRemoteUser(attempt.toString());
      ugi.addToken(token);
      AMRMClient<ContainerRequest> client =
          ugi.doAs(
              (java.security.PrivilegedExceptionAction<AMRMClient<ContainerRequest>>)
                  () -> {
                    AMRMClient<ContainerRequest> c = AMRMClient.createAMRMClient();
                    c.init(conf);
                    c.start();
                    c.registerApplicationMaster("localhost", 0, "");
                    return c;
                  });
      return new UnmanagedAm(ugi, client);
    }

    private static ApplicationAttemptId awaitLaunched(YarnClient yarn, ApplicationId app)
        throws Exception {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (true) {
        ApplicationReport report = yarn.getApplicationReport(app);
        ApplicationAttemptId attempt = report.getCurrentApplicationAttemptId();
        if (attempt != null
            && yarn.getApplicationAttemptReport(attempt).getYarnApplicationAttemptState()
                == YarnApplicationAttemptState.LAUNCHED) {
          return attempt;
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError(app + " was not launched: " + report);
        }
        Thread.sleep(100);
      }
    }

    void ask(Resource capability, int count) {
      for (int i = 0; i < count; i++) {
        client.addContainerRequest(
            new ContainerRequest(capability, null, null, Priority.newInstance(1)));
      }
    }

    void poll() throws Exception {
      ugi.doAs(
          (java.security.PrivilegedExceptionAction<Void>)
              () -> {
                held.addAll(client.allocate(0.5f).getAllocatedContainers());
                return null;
              });
    }

    @Override
    public void close() throws Exception {
      ugi.doAs(
          (java.security.PrivilegedExceptionAction<Void>)
              () -> {
                client.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "", "");
                client.stop();
                return null;
              });
    }
  }
}
