package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.heartbeat;
import static org.tidal.yarn.TidalTestSupport.launchAm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.ExecutionTypeRequest;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.RejectionReason;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.ResourceSizing;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.junit.Rule;
import org.junit.Test;

/** What only Hadoop 3 asks of a scheduler, and how Tidal answers it. */
public class TestHadoop3Semantics {
  private static final String GPU = "yarn.io/gpu";
  private static final String TPU = "example.com/tpu";

  @Rule public final MockRmRule rms = new MockRmRule();

  @Test(timeout = 120000)
  public void theSchedulerNamesItsWebPageAndFilterUnlessTheOperatorDid() throws Exception {
    YarnConfiguration conf = conf(null);
    MockRM rm = rms.start(conf);
    assertEquals(
        TidalSchedulerPage.class.getName(), rm.getConfig().get(TidalScheduler.SCHEDULER_PAGE));
    assertTrue(
        rm.getConfig()
            .get("hadoop.http.filter.initializers")
            .contains(TidalWebFilterInitializer.class.getName()));
  }

  @Test(timeout = 120000)
  public void applicationPriorityUpdatesAreRefusedWithTheReason() throws Exception {
    MockRM rm = rms.start(conf(null));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    MockAM am = launchAm(rm, "classpath", "alice", nm);
    try {
      rm.getResourceScheduler()
          .updateApplicationPriority(
              Priority.newInstance(5),
              am.getApplicationAttemptId().getApplicationId(),
              null,
              UserGroupInformation.getCurrentUser());
      fail("a priority update must be refused");
    } catch (YarnException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("not by priority"));
    }
  }

  /**
   * GPUs are a dimension of the core: a node with two GPUs starts two one-GPU containers however
   * much memory and vcores it has left, each container carries its GPU, and the queue's status
   * counts them. A resource type the core has no dimension for is refused, naming it.
   */
  @Test(timeout = 120000)
  public void gpusAreScheduledAndOtherResourceTypesRefused() throws Exception {
    YarnConfiguration conf = conf(null);
    conf.set(YarnConfiguration.RESOURCE_TYPES, GPU + "," + TPU);
    ResourceUtils.resetResourceTypes(conf);
    try {
      MockRM rm = rms.start(conf);
      Resource node = Resource.newInstance(16384, 16, Collections.singletonMap(GPU, 2L));
      MockNM nm = rm.registerNode("127.0.0.1:1234", node);
      MockAM am = launchAm(rm, "classpath", "alice", nm);
      Resource oneGpu = Resource.newInstance(1024, 1, Collections.singletonMap(GPU, 1L));
      am.allocate(
          Collections.singletonList(
              ResourceRequest.newInstance(Priority.newInstance(1), ResourceRequest.ANY, oneGpu, 3)),
          new ArrayList<ContainerId>());
      List<Container> started = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        heartbeat(rm, nm);
        started.addAll(
            am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>())
                .getAllocatedContainers());
      }
      assertEquals("two GPUs, two one-GPU containers", 2, started.size());
      for (Container c : started) {
        assertEquals(1L, c.getResource().getResourceValue(GPU));
      }
      String status = ((TidalScheduler) rm.getResourceScheduler()).shim().statusJson();
      assertTrue(status, status.contains("\"gpus\":2"));

      Resource tpu = Resource.newInstance(1024, 1, Collections.singletonMap(TPU, 1L));
      ResourceRequest ask =
          ResourceRequest.newInstance(Priority.newInstance(2), ResourceRequest.ANY, tpu, 1);
      try {
        RmLine.allocate(
            rm.getResourceScheduler(),
            am.getApplicationAttemptId(),
            Collections.singletonList(ask),
            null,
            null,
            null);
        fail("an ask for a resource type the core has no dimension for must be refused");
      } catch (YarnRuntimeException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("1 " + TPU));
      }
    } finally {
      ResourceUtils.resetResourceTypes(new Configuration());
    }
  }

  @Test(timeout = 120000)
  public void schedulingRequestsAreRejectedBackToTheAm() throws Exception {
    MockRM rm = rms.start(conf(null));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    MockAM am = launchAm(rm, "classpath", "alice", nm);
    SchedulingRequest request =
        SchedulingRequest.newBuilder()
            .priority(Priority.newInstance(1))
            .allocationRequestId(7)
            .allocationTags(Collections.singleton("web"))
            .executionType(ExecutionTypeRequest.newInstance(ExecutionType.GUARANTEED))
            .resourceSizing(ResourceSizing.newInstance(1, Resources.createResource(1024, 1)))
            .build();
    Allocation allocation =
        rm.getResourceScheduler()
            .allocate(
                am.getApplicationAttemptId(),
                Collections.<ResourceRequest>emptyList(),
                Collections.singletonList(request),
                null,
                null,
                null,
                new ContainerUpdates());
    List<RejectedSchedulingRequest> rejected = allocation.getRejectedRequest();
    assertEquals(1, rejected.size());
    assertEquals(RejectionReason.COULD_NOT_SCHEDULE_ON_NODE, rejected.get(0).getReason());
    assertEquals(7, rejected.get(0).getRequest().getAllocationRequestId());
  }
}
