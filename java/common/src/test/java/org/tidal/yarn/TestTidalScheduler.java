package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.QUEUES_AB;
import static org.tidal.yarn.TidalTestSupport.awaitContainers;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.heartbeat;
import static org.tidal.yarn.TidalTestSupport.poll;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.protocolrecords.GetQueueInfoRequest;
import org.apache.hadoop.yarn.api.protocolrecords.GetQueueUserAclsInfoRequest;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.api.protocolrecords.RefreshQueuesRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNodeReport;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.TidalPanicException;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.view.QueueStatus;
import org.tidal.yarn.view.SchedulerInfo;

/**
 * The scheduler inside a MockRM: containers, queues and failures as YARN's clients and
 * ApplicationMasters see them. Heartbeats whose outcome is checked are handled on the test's
 * thread, so each check sees exactly what they did.
 */
public class TestTidalScheduler {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private File allocationFile;
  @Rule public final MockRmRule rms = new MockRmRule();

  private MockRM rm;

  @Before
  public void setUp() throws Exception {
    allocationFile = tmp.newFile("tidal-queues.xml");
    write(allocationFile, QUEUES_AB);
  }

  private MockRM start(YarnConfiguration conf) {
    rm = rms.start(conf);
    return rm;
  }

  private TidalScheduler scheduler() {
    return rms.scheduler();
  }

  private RMApp submit(String queue, String user) throws Exception {
    return RmLine.submit(
        rm,
        1024,
        "app-" + user,
        user,
        queue,
        false,
        YarnConfiguration.DEFAULT_RM_AM_MAX_ATTEMPTS,
        null,
        true,
        false);
  }

  private int liveContainers(MockAM am) {
    return scheduler().getSchedulerAppInfo(am.getApplicationAttemptId()).getLiveContainers().size();
  }

  @Test(timeout = 120000)
  public void appGetsAmContainerThenTaskContainersOnHeartbeats() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp app = submit("a", "alice");
    assertEquals("root.a", app.getQueue());

    MockAM am = TidalTestSupport.launchAm(rm, app, nm);
    Container master = app.getCurrentAppAttempt().getMasterContainer();
    assertEquals(nm.getNodeId(), master.getNodeId());
    assertEquals(1024, master.getResource().getMemory());

    am.allocate(ResourceRequest.ANY, 2048, 3, new ArrayList<ContainerId>());
    List<Container> containers = awaitContainers(am, 3, nm);
    assertEquals(3, containers.size());
    Set<ContainerId> distinct = new HashSet<ContainerId>();
    for (Container container : containers) {
      assertEquals(nm.getNodeId(), container.getNodeId());
      assertEquals(2048, container.getResource().getMemory());
      assertEquals(1, container.getResource().getVirtualCores());
      assertNotNull("container token", container.getContainerToken());
      distinct.add(container.getId());
    }
    assertEquals(3, distinct.size());

    SchedulerNodeReport report = scheduler().getNodeReport(nm.getNodeId());
    assertEquals(4, report.getNumContainers());
    assertEquals(1024 + 3 * 2048, report.getUsedResource().getMemory());
    QueueMetrics root = scheduler().getRootQueueMetrics();
    assertEquals(4, root.getAllocatedContainers());
    assertEquals(1024 + 3 * 2048, root.getAllocatedMB());
    assertEquals(
        1024 + 3 * 2048,
        scheduler().getQueueInfo("a", false, false).getCurrentCapacity() * 8192,
        1e-3);

    // Nothing is left to give: further heartbeats start nothing new.
    for (int i = 0; i < 3; i++) {
      heartbeat(rm, nm);
    }
    assertEquals(4, scheduler().getNodeReport(nm.getNodeId()).getNumContainers());
    AllocateResponse last = poll(am);
    assertTrue(last.getAllocatedContainers().isEmpty());
    // The AM's headroom is what the cluster has left: 8192 - 7168 MB and 8 - 4 vcores.
    assertEquals(Resource.newInstance(1024, 4), last.getAvailableResources());
  }

  @Test(timeout = 120000)
  public void twoQueuesShareTheClusterByWeight() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 12 * 1024, 12);
    MockAM amA = TidalTestSupport.launchAm(rm, submit("a", "alice"), nm);
    MockAM amB = TidalTestSupport.launchAm(rm, submit("b", "bob"), nm);

    amA.allocate(ResourceRequest.ANY, 1024, 20, new ArrayList<ContainerId>());
    amB.allocate(ResourceRequest.ANY, 1024, 20, new ArrayList<ContainerId>());
    // One heartbeat starts up to ten containers: the ten free slots.
    heartbeat(rm, nm);
    assertEquals(12, scheduler().getNodeReport(nm.getNodeId()).getNumContainers());
    // Weights 1:2 under DRF: with the AMs counted, a holds 4 and b holds 8 of 12 slots.
    assertEquals(4, liveContainers(amA));
    assertEquals(8, liveContainers(amB));
    QueueInfo a = scheduler().getQueueInfo("a", false, false);
    QueueInfo b = scheduler().getQueueInfo("b", false, false);
    assertEquals(1.0 / 3, a.getCurrentCapacity(), 1e-3);
    assertEquals(2.0 / 3, b.getCurrentCapacity(), 1e-3);
  }

  @Test(timeout = 120000)
  public void appInUnknownQueueIsRejectedWithTheCoreMessage() throws Exception {
    start(conf(allocationFile));
    rm.registerNode("127.0.0.1:1234", 8192, 8);
    final RMApp app =
        RmLine.submit(
            rm,
            1024,
            "lost",
            "carol",
            "nope",
            false,
            YarnConfiguration.DEFAULT_RM_AM_MAX_ATTEMPTS,
            null,
            false,
            false);
    waitFor(
        "the app to fail",
        new Callable<Boolean>() {
          @Override
          public Boolean call() {
            return app.getState() == RMAppState.FAILED;
          }
        });
    String diagnostics = app.getDiagnostics().toString();
    assertTrue(diagnostics, diagnostics.contains("nope"));
    assertFalse(scheduler().getSchedulerApplications().containsKey(app.getApplicationId()));
    assertEquals(0, scheduler().getAppsInQueue("root").size());
  }

  @Test(timeout = 120000)
  public void releasingAContainerFreesItsResources() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 4096, 4);
    MockAM am = TidalTestSupport.launchAm(rm, submit("a", "alice"), nm);
    am.allocate(ResourceRequest.ANY, 1024, 3, new ArrayList<ContainerId>());
    List<Container> first = awaitContainers(am, 3, nm);

    // The node is full: one more container waits.
    am.allocate(ResourceRequest.ANY, 1024, 1, new ArrayList<ContainerId>());
    for (int i = 0; i < 5; i++) {
      heartbeat(rm, nm);
      assertTrue(poll(am).getAllocatedContainers().isEmpty());
    }
    assertEquals(4, scheduler().getNodeReport(nm.getNodeId()).getNumContainers());

    Container released = first.get(0);
    List<ContainerId> release = new ArrayList<ContainerId>();
    release.add(released.getId());
    List<ContainerStatus> completed = new ArrayList<ContainerStatus>();
    completed.addAll(
        am.allocate(new ArrayList<ResourceRequest>(), release).getCompletedContainersStatuses());
    assertEquals(3072, scheduler().getNodeReport(nm.getNodeId()).getUsedResource().getMemory());

    List<Container> second = awaitContainers(am, 1, completed, nm);
    final MockAM master = am;
    final List<ContainerStatus> statuses = completed;
    waitFor(
        "the release to be reported",
        new Callable<Boolean>() {
          @Override
          public Boolean call() throws Exception {
            statuses.addAll(poll(master).getCompletedContainersStatuses());
            return !statuses.isEmpty();
          }
        });
    assertEquals(nm.getNodeId(), second.get(0).getNodeId());
    assertFalse(released.getId().equals(second.get(0).getId()));
    boolean reported = false;
    for (ContainerStatus status : completed) {
      if (status.getContainerId().equals(released.getId())) {
        assertEquals(ContainerExitStatus.ABORTED, status.getExitStatus());
        reported = true;
      }
    }
    assertTrue("released container reported as completed: " + completed, reported);
    assertEquals(4096, scheduler().getNodeReport(nm.getNodeId()).getUsedResource().getMemory());
  }

  @Test(timeout = 120000)
  public void finishedContainersAreFreedOnTheNodeHeartbeat() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 2048, 2);
    MockAM am = TidalTestSupport.launchAm(rm, submit("a", "alice"), nm);
    am.allocate(ResourceRequest.ANY, 1024, 2, new ArrayList<ContainerId>());
    Container task = awaitContainers(am, 1, nm).get(0);

    // The second task fits only once the first one's completion reaches the scheduler.
    nm.nodeHeartbeat(
        am.getApplicationAttemptId(), task.getId().getContainerId(), ContainerState.COMPLETE);
    Container next = awaitContainers(am, 1, nm).get(0);
    assertFalse(task.getId().equals(next.getId()));
    assertEquals(2, scheduler().getNodeReport(nm.getNodeId()).getNumContainers());
  }

  @Test(timeout = 120000)
  public void expiredContainerIsFreedInTheCore() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 2048, 2);
    MockAM am = TidalTestSupport.launchAm(rm, submit("a", "alice"), nm);
    am.allocate(ResourceRequest.ANY, 1024, 1, new ArrayList<ContainerId>());
    Container never = awaitContainers(am, 1, nm).get(0);

    // The AM never starts it; the RM's allocation expirer gives the scheduler this event.
    rm.getResourceScheduler().handle(new ContainerExpiredSchedulerEvent(never.getId()));
    assertEquals(1, scheduler().getNodeReport(nm.getNodeId()).getNumContainers());
    // Only if the core freed it too does the node have room for a replacement.
    am.allocate(ResourceRequest.ANY, 1024, 1, new ArrayList<ContainerId>());
    Container replacement = awaitContainers(am, 1, nm).get(0);
    assertFalse(never.getId().equals(replacement.getId()));
  }

  /**
   * As every stock scheduler: an attempt numbers its containers from 1, so its AM is container 1
   * whatever other apps started before; a node heartbeat starts one container unless configured.
   */
  @Test(timeout = 120000)
  public void containersAreNumberedPerAttemptAndOneStartsPerHeartbeatByDefault() throws Exception {
    YarnConfiguration conf = conf(allocationFile);
    conf.unset(TidalConfig.MAX_ASSIGN_PER_HEARTBEAT);
    start(conf);
    RMApp first = submit("a", "alice");
    RMApp second = submit("b", "bob");
    for (RMApp app : new RMApp[] {first, second}) {
      rm.waitForState(app.getCurrentAppAttempt().getAppAttemptId(), RMAppAttemptState.SCHEDULED);
    }
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    waitFor("the node", () -> scheduler().getNodeReport(nm.getNodeId()) != null);
    heartbeat(rm, nm);
    assertEquals(1, scheduler().getNodeReport(nm.getNodeId()).getNumContainers());
    heartbeat(rm, nm);
    assertEquals(2, scheduler().getNodeReport(nm.getNodeId()).getNumContainers());
    for (RMApp app : new RMApp[] {first, second}) {
      rm.waitForState(app.getCurrentAppAttempt().getAppAttemptId(), RMAppAttemptState.ALLOCATED);
      assertEquals(1, app.getCurrentAppAttempt().getMasterContainer().getId().getContainerId());
    }
    MockAM am = rm.sendAMLaunched(second.getCurrentAppAttempt().getAppAttemptId());
    am.registerAppAttempt();
    am.allocate(ResourceRequest.ANY, 1024, 2, new ArrayList<ContainerId>());
    List<Container> tasks = awaitContainers(am, 2, nm);
    Set<Long> numbers = new HashSet<Long>();
    for (Container task : tasks) {
      numbers.add(task.getId().getContainerId());
    }
    assertEquals(new HashSet<Long>(java.util.Arrays.asList(2L, 3L)), numbers);
  }

  /**
   * A request larger than the node's free space reserves the node, visible as Hadoop's reserved
   * container under the attempt's next number, and starts there under that id once space frees;
   * meanwhile the other queue's small requests do not take the node.
   */
  @Test(timeout = 120000)
  public void aLargeRequestReservesTheNodeUntilItFits() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    MockAM small = TidalTestSupport.launchAm(rm, submit("b", "bob"), nm);
    small.allocate(ResourceRequest.ANY, 1024, 5, new ArrayList<ContainerId>());
    List<Container> smallTasks = awaitContainers(small, 5, nm);
    MockAM large = TidalTestSupport.launchAm(rm, submit("a", "alice"), nm);
    // 7 GB taken, 1 GB free: a 4 GB request does not fit.
    large.allocate(ResourceRequest.ANY, 4096, 1, new ArrayList<ContainerId>());
    small.allocate(ResourceRequest.ANY, 1024, 10, new ArrayList<ContainerId>());
    heartbeat(rm, nm);
    FiCaSchedulerApp attempt = scheduler().getApplicationAttempt(large.getApplicationAttemptId());
    assertEquals(1, attempt.getReservedContainers().size());
    RMContainer reserved = attempt.getReservedContainers().get(0);
    assertEquals(2, reserved.getContainerId().getContainerId());
    assertEquals(RMContainerState.RESERVED, reserved.getState());
    assertEquals(4096, scheduler().getRootQueueMetrics().getReservedMB());
    // Small containers end one by one; none of the 10 new small requests takes the freed space.
    for (int i = 0; i < 3; i++) {
      nm.nodeHeartbeat(small.getApplicationAttemptId(), i + 2, ContainerState.COMPLETE);
      heartbeat(rm, nm);
    }
    Container started = awaitContainers(large, 1, nm).get(0);
    assertEquals(reserved.getContainerId(), started.getId());
    assertEquals(4096, started.getResource().getMemory());
    assertTrue(attempt.getReservedContainers().isEmpty());
    assertEquals(0, scheduler().getRootQueueMetrics().getReservedMB());
    assertEquals(5, smallTasks.size());
    assertTrue(poll(small).getAllocatedContainers().isEmpty());
  }

  @Test(timeout = 120000)
  public void oneHeartbeatStartsAtMostTheConfiguredNumberOfContainers() throws Exception {
    YarnConfiguration conf = conf(allocationFile);
    conf.setInt(TidalConfig.MAX_ASSIGN_PER_HEARTBEAT, 2);
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    MockAM am = TidalTestSupport.launchAm(rm, submit("a", "alice"), nm);
    am.allocate(ResourceRequest.ANY, 1024, 5, new ArrayList<ContainerId>());

    heartbeat(rm, nm);
    assertEquals(1 + 2, scheduler().getNodeReport(nm.getNodeId()).getNumContainers());
    assertEquals(2, poll(am).getAllocatedContainers().size());
    assertEquals(3, awaitContainers(am, 3, nm).size());
  }

  @Test(timeout = 120000)
  public void removedNodeTakesItsContainersAndCapacity() throws Exception {
    start(conf(allocationFile));
    MockNM nm1 = rm.registerNode("127.0.0.1:1234", 4096, 4);
    MockNM nm2 = rm.registerNode("127.0.0.2:1234", 4096, 4);
    MockAM am = TidalTestSupport.launchAm(rm, submit("a", "alice"), nm1);
    am.allocate(ResourceRequest.ANY, 1024, 3, new ArrayList<ContainerId>());
    List<Container> onNode2 = awaitContainers(am, 3, nm2);
    for (Container container : onNode2) {
      assertEquals(nm2.getNodeId(), container.getNodeId());
    }

    rm.sendNodeLost(nm2);
    // The scheduler removes a node under its monitor: holding it, the test sees all or nothing.
    TidalScheduler scheduler = scheduler();
    waitFor(
        "the scheduler to drop the node",
        () -> {
          synchronized (scheduler) {
            return scheduler.getNumClusterNodes() == 1;
          }
        });
    assertEquals(4096, scheduler().getClusterResource().getMemory());
    assertEquals(1, liveContainers(am));

    final List<ContainerStatus> completed = new ArrayList<ContainerStatus>();
    completed.addAll(
        am.allocate(ResourceRequest.ANY, 1024, 3, new ArrayList<ContainerId>())
            .getCompletedContainersStatuses());
    List<Container> replacements = awaitContainers(am, 3, completed, nm1);
    for (Container container : replacements) {
      assertEquals(nm1.getNodeId(), container.getNodeId());
    }
    final MockAM master = am;
    waitFor(
        "the lost containers to be reported",
        new Callable<Boolean>() {
          @Override
          public Boolean call() throws Exception {
            completed.addAll(poll(master).getCompletedContainersStatuses());
            return completed.size() >= 3;
          }
        });
    Set<ContainerId> lost = new HashSet<ContainerId>();
    for (ContainerStatus status : completed) {
      lost.add(status.getContainerId());
    }
    for (Container container : onNode2) {
      assertTrue(container.getId() + " reported lost", lost.contains(container.getId()));
    }
    assertEquals(4096, scheduler().getNodeReport(nm1.getNodeId()).getUsedResource().getMemory());
  }

  @Test(timeout = 120000)
  public void refreshQueuesWithBrokenFileKeepsTheRunningQueues() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);

    write(allocationFile, "<tidal><policy>drf</policy><queue name=\"a\"><weight>1</weight>");
    try {
      rm.getAdminService().refreshQueues(RefreshQueuesRequest.newInstance());
      fail("a broken allocation file must be refused");
    } catch (YarnException e) {
      // The admin service wraps the scheduler's IOException, which names the file, around the
      // core's refusal.
      assertTrue(String.valueOf(e.getCause()), e.getCause() instanceof IOException);
      assertTrue(
          e.getCause().getMessage(), e.getCause().getMessage().contains(allocationFile.getPath()));
      assertTrue(
          String.valueOf(e.getCause().getCause()),
          e.getCause().getCause() instanceof TidalException);
    }
    assertEquals(
        childNames("root.a", "root.b"), childNames(scheduler().getQueueInfo("root", true, false)));
    TidalTestSupport.launchAm(rm, submit("b", "bob"), nm);

    write(
        allocationFile,
        QUEUES_AB.replace("</tidal>", "  <queue name=\"c\"><weight>1</weight></queue>\n</tidal>"));
    rm.getAdminService().refreshQueues(RefreshQueuesRequest.newInstance());
    assertEquals(
        childNames("root.a", "root.b", "root.c"),
        childNames(scheduler().getQueueInfo("root", true, false)));
    RMApp inC = submit("c", "carol");
    assertEquals("root.c", inC.getQueue());
    TidalTestSupport.launchAm(rm, inC, nm);
  }

  @Test(timeout = 120000)
  public void queueInfoAndAclsReachClients() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp app = submit("a", "alice");
    TidalTestSupport.launchAm(rm, app, nm);

    QueueInfo root =
        rm.getClientRMService()
            .getQueueInfo(GetQueueInfoRequest.newInstance("root", false, true, true))
            .getQueueInfo();
    assertEquals("root", root.getQueueName());
    assertEquals(childNames("root.a", "root.b"), childNames(root));
    float shares = 0;
    for (QueueInfo child : root.getChildQueues()) {
      shares += child.getCapacity();
    }
    assertTrue("fair shares " + shares, shares > 0.99f && shares < 1.01f);
    assertTrue(root.getCurrentCapacity() > 0);

    QueueInfo a =
        rm.getClientRMService()
            .getQueueInfo(GetQueueInfoRequest.newInstance("a", true, false, false))
            .getQueueInfo();
    assertEquals("root.a", a.getQueueName());
    assertEquals(1, a.getApplications().size());
    assertEquals(app.getApplicationId(), a.getApplications().get(0).getApplicationId());

    // As with Hadoop's own schedulers, the client service answers an unknown queue with no info.
    assertNull(
        rm.getClientRMService()
            .getQueueInfo(GetQueueInfoRequest.newInstance("nope", false, false, false))
            .getQueueInfo());
    try {
      scheduler().getQueueInfo("nope", false, false);
      fail("unknown queue must be reported");
    } catch (Exception e) {
      assertTrue(String.valueOf(e), e instanceof IOException);
      assertTrue(e.getMessage(), e.getMessage().endsWith(": nope"));
    }

    Set<String> aclQueues = new HashSet<String>();
    for (QueueUserACLInfo info :
        rm.getClientRMService()
            .getQueueUserAcls(GetQueueUserAclsInfoRequest.newInstance())
            .getUserAclsInfoList()) {
      aclQueues.add(info.getQueueName());
    }
    assertEquals(childNames("root", "root.a", "root.b"), aclQueues);

    ApplicationAttemptId attempt = app.getCurrentAppAttempt().getAppAttemptId();
    assertEquals(attempt, scheduler().getAppsInQueue("root.a").get(0));
    assertEquals(attempt, scheduler().getAppsInQueue("root").get(0));
    assertTrue(scheduler().getAppsInQueue("b").isEmpty());
    assertNull(scheduler().getAppsInQueue("nope"));
    try {
      scheduler().moveApplication(app.getApplicationId(), "b");
      fail("moving apps is unsupported");
    } catch (YarnException e) {
      assertTrue(e.getMessage(), e.getMessage().contains(app.getApplicationId().toString()));
    }
    assertEquals("root.a", app.getQueue());
  }

  @Test(timeout = 120000)
  public void nativePanicIsAnExceptionAndSchedulingGoesOn() throws Exception {
    start(conf(allocationFile));
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    TidalTestSupport.launchAm(rm, submit("a", "alice"), nm);

    try {
      TidalNative.diagnosticPanic("boom");
      fail("diagnosticPanic must throw");
    } catch (TidalPanicException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("boom"));
    }

    MockAM am = TidalTestSupport.launchAm(rm, submit("b", "bob"), nm);
    am.allocate(ResourceRequest.ANY, 1024, 2, new ArrayList<ContainerId>());
    assertEquals(2, awaitContainers(am, 2, nm).size());
  }

  @Test(timeout = 120000)
  public void nestedQueuesReachClientsAsATreeWithParentMetrics() throws Exception {
    write(
        allocationFile,
        "<tidal><queue name=\"root\"><aclSubmitApps> </aclSubmitApps></queue>"
            + "<queue name=\"eng\"><aclSubmitApps>alice</aclSubmitApps>"
            + "<queue name=\"etl\"/><queue name=\"adhoc\"/></queue>"
            + "<queue name=\"b\"/></tidal>");
    YarnConfiguration conf = conf(allocationFile);
    start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    RMApp app = submit("root.eng.etl", "alice");
    TidalTestSupport.launchAm(rm, app, nm);

    QueueInfo root = scheduler().getQueueInfo("root", true, true);
    assertEquals(childNames("root.eng", "root.b"), childNames(root));
    QueueInfo eng = null;
    for (QueueInfo child : root.getChildQueues()) {
      eng = child.getQueueName().equals("root.eng") ? child : eng;
    }
    assertEquals(childNames("root.eng.etl", "root.eng.adhoc"), childNames(eng));
    assertEquals(1.0f, scheduler().getQueueInfo("root.eng", false, false).getCapacity(), 1e-6f);

    // Hadoop's queue metrics roll up through eng to the root.
    // Metrics are cached by name: eng's are those its leaf rolls up to.
    assertEquals(1024, QueueMetrics.forQueue("root.eng", null, true, conf).getAllocatedMB());
    assertEquals(0, QueueMetrics.forQueue("root.b", null, true, conf).getAllocatedMB());

    // The REST view nests the children under their parents.
    JsonNode info =
        new ObjectMapper()
            .readTree(
                SchedulerInfo.json(QueueStatus.parse(scheduler().shim().statusJson()), t -> t))
            .path("scheduler")
            .path("schedulerInfo");
    JsonNode top = info.path("rootQueue").path("childQueues").path("queue");
    assertEquals(info.toString(), 2, top.size());
    JsonNode engInfo =
        top.get(0).path("queueName").textValue().equals("root.eng") ? top.get(0) : top.get(1);
    assertEquals(info.toString(), 2, engInfo.path("childQueues").path("queue").size());
    assertEquals(info.toString(), 1, engInfo.path("numActiveApps").intValue());
    assertEquals(info.toString(), 1, info.path("rootQueue").path("numActiveApps").intValue());
  }

  private static Set<String> childNames(String... names) {
    Set<String> set = new HashSet<String>();
    for (String name : names) {
      set.add(name);
    }
    return set;
  }

  private static Set<String> childNames(QueueInfo info) {
    Set<String> names = new HashSet<String>();
    for (QueueInfo child : info.getChildQueues()) {
      names.add(child.getQueueName());
    }
    return names;
  }
}
