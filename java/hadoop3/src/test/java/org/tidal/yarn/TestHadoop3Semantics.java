package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.heartbeat;
import static org.tidal.yarn.TidalTestSupport.launchAm;
import static org.tidal.yarn.TidalTestSupport.poll;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.ExecutionTypeRequest;
import org.apache.hadoop.yarn.api.records.NodeAttribute;
import org.apache.hadoop.yarn.api.records.NodeAttributeType;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.RejectionReason;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.ResourceSizing;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAttributesUpdateSchedulerEvent;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** What only Hadoop 3 asks of a scheduler, and how Tidal answers it. */
public class TestHadoop3Semantics {
  private static final String GPU = "yarn.io/gpu";
  private static final String TPU = "example.com/tpu";

  @Rule public final MockRmRule rms = new MockRmRule();
  @Rule public final TemporaryFolder tmp = new TemporaryFolder();

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

  /** Submits an app with a 1 GB AM to the default queue at {@code priority}. */
  private static RMApp submit(MockRM rm, int priority) throws Exception {
    return MockRMAppSubmitter.submit(
        rm,
        MockRMAppSubmissionData.Builder.createWithMemory(1024, rm)
            .withUser("alice")
            .withQueue("classpath")
            .withAppPriority(Priority.newInstance(priority))
            .build());
  }

  /** Asks for {@code count} more 1 GB containers. */
  private static void ask(MockAM am, int count) throws Exception {
    am.allocate(
        Collections.singletonList(
            ResourceRequest.newInstance(
                Priority.newInstance(1),
                ResourceRequest.ANY,
                Resource.newInstance(1024, 1),
                count)),
        new ArrayList<ContainerId>());
  }

  /**
   * A queue's apps start by application priority, as under CapacityScheduler: the later app of
   * priority 5 takes the node's free slots before the earlier one of priority 0 (by submission
   * order alone, the earlier app would take them), a priority raised through the RM's own path
   * reorders the next heartbeat and is kept in the RM's records, and a priority above the cluster's
   * maximum is capped at it.
   */
  @Test(timeout = 120000)
  public void aQueuesAppsStartByApplicationPriority() throws Exception {
    YarnConfiguration conf = conf(null);
    conf.setInt(YarnConfiguration.MAX_CLUSTER_LEVEL_APPLICATION_PRIORITY, 10);
    MockRM rm = rms.start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4096, 4);
    MockAM low = launchAm(rm, submit(rm, 0), nm);
    MockAM high = launchAm(rm, submit(rm, 5), nm);
    ask(low, 2);
    ask(high, 2);
    heartbeat(rm, nm);
    assertEquals(0, poll(low).getAllocatedContainers().size());
    assertEquals(2, poll(high).getAllocatedContainers().size());

    ApplicationId lowId = low.getApplicationAttemptId().getApplicationId();
    rm.getRMAppManager()
        .updateApplicationPriority(
            UserGroupInformation.getCurrentUser(), lowId, Priority.newInstance(8));
    assertEquals(
        8, rm.getRMContext().getRMApps().get(lowId).getApplicationPriority().getPriority());
    ask(high, 2);
    MockNM second = rm.registerNode("127.0.0.1:1235", 2048, 2);
    waitFor(
        "the second node in the scheduler",
        () -> rm.getResourceScheduler().getSchedulerNode(second.getNodeId()) != null);
    heartbeat(rm, second);
    assertEquals(2, poll(low).getAllocatedContainers().size());
    assertEquals(0, poll(high).getAllocatedContainers().size());

    RMApp capped = submit(rm, 20);
    assertEquals(10, capped.getApplicationPriority().getPriority());
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

  /**
   * A queue's application lifetimes: an app that asks for none gets the queue's default, one that
   * asks for more gets the maximum, and the RM kills an app whose lifetime is up, while an app of a
   * queue without lifetimes runs on.
   */
  @Test(timeout = 120000)
  public void queuesBoundTheirApplicationsLifetimes() throws Exception {
    File queues = tmp.newFile("queues.xml");
    write(
        queues,
        "<tidal><queue name=\"short\"><maxApplicationLifetime>60</maxApplicationLifetime>"
            + "<defaultApplicationLifetime>5</defaultApplicationLifetime></queue>"
            + "<queue name=\"long\"/></tidal>");
    YarnConfiguration conf = conf(queues);
    conf.setLong(YarnConfiguration.RM_APPLICATION_MONITOR_INTERVAL_MS, 100);
    MockRM rm = rms.start(conf);
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    assertEquals(60, scheduler.getMaximumApplicationLifetime("short"));
    assertEquals(-1, scheduler.getMaximumApplicationLifetime("long"));
    assertEquals(60, scheduler.checkAndGetApplicationLifetime("short", 3600));
    assertEquals(30, scheduler.checkAndGetApplicationLifetime("short", 30));
    assertEquals(5, scheduler.checkAndGetApplicationLifetime("short", -1));
    assertEquals(3600, scheduler.checkAndGetApplicationLifetime("long", 3600));

    // Hadoop 3.5 counts a lifetime from when the app runs, 3.4 from its submission: the apps run.
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp bounded =
        RmLine.submit(rm, 1024, "bounded", "alice", "short", false, 1, "YARN", true, false);
    launchAm(rm, bounded, nm);
    RMApp unbounded =
        RmLine.submit(rm, 1024, "free", "alice", "long", false, 1, "YARN", true, false);
    launchAm(rm, unbounded, nm);
    waitFor(
        "the app of the queue's default lifetime to be killed",
        () -> bounded.getState() == RMAppState.KILLED);
    assertTrue(
        bounded.getDiagnostics().toString(),
        bounded.getDiagnostics().toString().contains("lifetime"));
    assertEquals(RMAppState.RUNNING, unbounded.getState());
  }

  /**
   * Node attributes reach the scheduler's node records, where the placement processor reads them to
   * meet node-attribute constraints.
   */
  @Test(timeout = 120000)
  public void nodeAttributesReachTheNodeRecords() throws Exception {
    MockRM rm = rms.start(conf(null));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    waitFor("the node in the scheduler", () -> scheduler.getSchedulerNode(nm.getNodeId()) != null);
    NodeAttribute java =
        NodeAttribute.newInstance(
            NodeAttribute.PREFIX_CENTRALIZED, "java", NodeAttributeType.STRING, "17");
    scheduler.handle(
        new NodeAttributesUpdateSchedulerEvent(
            Collections.singletonMap(nm.getNodeId().getHost(), Collections.singleton(java))));
    assertEquals(
        Collections.singleton(java),
        scheduler.getSchedulerNode(nm.getNodeId()).getNodeAttributes());
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
