package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.launchAm;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
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

  @Test(timeout = 120000)
  public void asksForOtherResourceTypesFailTheAllocateCallNamingTheType() throws Exception {
    YarnConfiguration conf = conf(null);
    conf.set(YarnConfiguration.RESOURCE_TYPES, GPU);
    ResourceUtils.resetResourceTypes(conf);
    try {
      MockRM rm = rms.start(conf);
      MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
      MockAM am = launchAm(rm, "classpath", "alice", nm);
      Resource withGpu = Resource.newInstance(1024, 1, Collections.singletonMap(GPU, 1L));
      ResourceRequest ask =
          ResourceRequest.newInstance(Priority.newInstance(1), ResourceRequest.ANY, withGpu, 1);
      try {
        RmLine.allocate(
            rm.getResourceScheduler(),
            am.getApplicationAttemptId(),
            Collections.singletonList(ask),
            null,
            null,
            null);
        fail("an ask for a GPU must be refused");
      } catch (YarnRuntimeException e) {
        assertTrue(e.getMessage(), e.getMessage().contains("1 " + GPU));
      }
      // Asks for memory and vcores alone still go through.
      am.allocate(ResourceRequest.ANY, 1024, 1, new ArrayList<ContainerId>());
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
