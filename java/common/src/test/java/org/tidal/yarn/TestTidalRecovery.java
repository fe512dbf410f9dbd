package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.awaitContainers;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.heartbeat;
import static org.tidal.yarn.TidalTestSupport.launchAm;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.api.protocolrecords.NodeHeartbeatResponse;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.MemoryRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.bridge.TidalForbiddenException;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.rest.TidalRestServer;
import org.tidal.yarn.state.DurableState;
import org.tidal.yarn.state.TidalStateStore;

/**
 * Restarts and faults on MockRMs, as Hadoop's own work-preserving restart tests drive them: a
 * second RM on the first one's state store, a NodeManager that re-registers with the containers it
 * kept running, and a core that panics in the middle of a heartbeat.
 */
public class TestTidalRecovery {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private final List<MockRM> rms = new ArrayList<MockRM>();

  @Before
  public void freshMetrics() {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  @After
  public void stopAll() {
    for (MockRM rm : rms) {
      rm.stop();
    }
  }

  private MockRM start(YarnConfiguration conf, MemoryRMStateStore store) {
    MockRM rm = store == null ? new MockRM(conf) : new MockRM(conf, store);
    rms.add(rm);
    rm.start();
    return rm;
  }

  /** BoPF with one TQ; the LQ comes at run time through REST. */
  private YarnConfiguration bopfConf() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, TestTidalRest.BOPF_QUEUES);
    YarnConfiguration conf = conf(allocation);
    conf.set(TidalStateStore.URI, tmp.newFolder("tidal-state").toURI().toString());
    // Only the save a queue change makes can have stored the runtime queue.
    conf.setLong(DurableState.INTERVAL_MS, 3_600_000);
    return conf;
  }

  private static String restBase(MockRM rm) {
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    return "http://127.0.0.1:" + scheduler.getRestAddress().getPort() + TidalRestServer.PREFIX;
  }

  private static JsonNode queue(MockRM rm, String name) throws Exception {
    HttpCall call = HttpCall.request("GET", restBase(rm) + "/queues/" + name).send();
    assertEquals(call.toString(), 200, call.status);
    return call.json();
  }

  private static JsonNode history(TidalScheduler scheduler) throws Exception {
    return new ObjectMapper().readTree(scheduler.shim().historyJson(Long.MIN_VALUE));
  }

  private static NMContainerStatus running(RMContainer container) {
    return RmLine.reportedContainer(
        container.getContainerId(),
        ContainerState.RUNNING,
        container.getAllocatedResource(),
        "",
        0,
        container.getContainer().getPriority(),
        container.getCreationTime());
  }

  private static List<org.apache.hadoop.yarn.api.records.ResourceRequest> ask(int containers) {
    List<org.apache.hadoop.yarn.api.records.ResourceRequest> asks =
        new ArrayList<org.apache.hadoop.yarn.api.records.ResourceRequest>();
    asks.add(
        org.apache.hadoop.yarn.api.records.ResourceRequest.newInstance(
            Priority.newInstance(1), "*", Resource.newInstance(1024, 1), containers));
    return asks;
  }

  @Test(timeout = 120000)
  public void workPreservingRestartKeepsContainersRuntimeQueuesAndClasses() throws Exception {
    YarnConfiguration conf = bopfConf();
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, MemoryRMStateStore.class.getName());
    MemoryRMStateStore store = new MemoryRMStateStore();
    store.init(conf);

    MockRM rm1 = start(conf, store);
    MockNM nm = new MockNM("127.0.0.1:1234", 100 * 1024, 100, rm1.getResourceTrackerService());
    nm.registerNode();
    TidalScheduler first = (TidalScheduler) rm1.getResourceScheduler();
    // The node reaches the scheduler through the RM's dispatcher; admission needs its capacity.
    waitFor("the node to join", () -> first.getNumClusterNodes() == 1);
    heartbeat(rm1, nm);
    HttpCall registered =
        HttpCall.request("POST", restBase(rm1) + "/queues?user.name=alice")
            .body("application/xml", TestTidalRest.ADHOC_LQ)
            .send();
    assertEquals(registered.toString(), 201, registered.status);
    String classBefore = queue(rm1, "adhoc").path("class").textValue();
    assertEquals("hard", classBefore);
    // What the registration saved: the history so far, with the registration's decision last.
    JsonNode historyBefore = history(first);
    assertTrue(historyBefore.toString(), historyBefore.path("samples").size() > 0);
    JsonNode admissionsBefore = historyBefore.path("admissions");
    assertEquals(
        "root.adhoc", admissionsBefore.get(admissionsBefore.size() - 1).path("queue").textValue());

    MockAM lqAm = launchAm(rm1, "adhoc", "alice", nm);
    MockAM tqAm = launchAm(rm1, "etl", "bob", nm);
    lqAm.allocate(ask(2), new ArrayList<ContainerId>());
    List<Container> lqTasks = awaitContainers(lqAm, 2, nm);
    Set<ContainerId> runningBefore = new HashSet<ContainerId>();
    List<NMContainerStatus> reports = new ArrayList<NMContainerStatus>();
    for (MockAM am : new MockAM[] {lqAm, tqAm}) {
      RMApp app =
          rm1.getRMContext().getRMApps().get(am.getApplicationAttemptId().getApplicationId());
      for (RMContainer c :
          rm1.getResourceScheduler()
              .getSchedulerAppInfo(am.getApplicationAttemptId())
              .getLiveContainers()) {
        runningBefore.add(c.getContainerId());
        reports.add(running(c));
      }
      assertEquals(1, app.getAppAttempts().size());
    }
    assertEquals("two AMs and two LQ tasks run", 4, runningBefore.size());

    // A second RM takes over the state store; the node re-registers with what it kept running.
    MockRM rm2 = start(conf, store);
    nm.setResourceTrackerService(rm2.getResourceTrackerService());
    nm.registerNode(reports, null);
    TidalScheduler scheduler = (TidalScheduler) rm2.getResourceScheduler();
    waitFor(
        "every running container recovered",
        () -> {
          for (ContainerId id : runningBefore) {
            if (scheduler.getRMContainer(id) == null) {
              return false;
            }
          }
          return true;
        });
    NodeHeartbeatResponse response = nm.nodeHeartbeat(true);
    assertTrue(
        "no container is stopped: " + response.getContainersToCleanup(),
        response.getContainersToCleanup().isEmpty());
    assertTrue(response.getApplicationsToCleanup().isEmpty());

    // The history goes on from the first RM's: its samples and decisions, then the second's.
    JsonNode historyAfter = history(scheduler);
    assertEquals(historyBefore.path("samples").get(0), historyAfter.path("samples").get(0));
    JsonNode admissionsAfter = historyAfter.path("admissions");
    assertTrue(admissionsAfter.toString(), admissionsAfter.size() > admissionsBefore.size());
    for (int i = 0; i < admissionsBefore.size(); i++) {
      assertEquals(admissionsBefore.get(i), admissionsAfter.get(i));
    }

    JsonNode adhoc = queue(rm2, "adhoc");
    assertEquals("the runtime queue keeps its class", classBefore, adhoc.path("class").textValue());
    assertEquals(
        "the core counts the adopted LQ containers",
        3,
        adhoc.path("running_containers").longValue());
    assertEquals(1, queue(rm2, "etl").path("running_containers").longValue());

    // The AM carries on with its attempt: it re-registers and is served, under the new epoch.
    lqAm.setAMRMProtocol(rm2.getApplicationMasterService(), rm2.getRMContext());
    lqAm.registerAppAttempt(false);
    lqAm.allocate(ask(1), new ArrayList<ContainerId>());
    List<Container> next = awaitContainers(lqAm, 1, nm);
    ContainerId fresh = next.get(0).getId();
    assertTrue(
        "a new container is numbered in the new epoch: " + fresh,
        fresh.getContainerId() >> 40 >= 1);
    assertTrue(!runningBefore.contains(fresh));
    for (MockAM am : new MockAM[] {lqAm, tqAm}) {
      RMApp app =
          rm2.getRMContext().getRMApps().get(am.getApplicationAttemptId().getApplicationId());
      assertEquals("one attempt: " + app.getApplicationId(), 1, app.getAppAttempts().size());
    }
    assertEquals(4, queue(rm2, "adhoc").path("running_containers").longValue());
    assertNotNull(lqTasks);
  }

  @Test(timeout = 120000)
  public void panicInTheCoreIsContainedAndNoContainerIsLost() throws Exception {
    YarnConfiguration conf = bopfConf();
    conf.setBoolean(TidalConfig.FAULT_INJECTION, true);
    MockRM rm = start(conf, null);
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    MockNM nm = rm.registerNode("127.0.0.1:1234", 100 * 1024, 100);
    waitFor("the node to join", () -> scheduler.getNumClusterNodes() == 1);
    heartbeat(rm, nm);
    MockAM am = launchAm(rm, "etl", "bob", nm);
    am.allocate(ask(2), new ArrayList<ContainerId>());
    List<Container> before = awaitContainers(am, 2, nm);
    am.allocate(ask(3), new ArrayList<ContainerId>());

    scheduler.armHeartbeatPanic();
    heartbeat(rm, nm);

    assertEquals("the core was rebuilt once", 1, scheduler.coreRebuilds());
    for (Container c : before) {
      assertNotNull("still running: " + c.getId(), scheduler.getRMContainer(c.getId()));
    }
    // The panicked heartbeat's decisions never became containers; the retry on the rebuilt core
    // starts the three asked for, counted next to the adopted ones.
    List<Container> after = awaitContainers(am, 3, nm);
    assertEquals(3, after.size());
    JsonNode etl = queue(rm, "etl");
    assertEquals("AM, two adopted tasks, three new", 6, etl.path("running_containers").longValue());
    Set<ContainerId> ids = new HashSet<ContainerId>();
    for (Container c : before) {
      ids.add(c.getId());
    }
    for (Container c : after) {
      assertTrue("container ids stay unique across rebuilds: " + c.getId(), ids.add(c.getId()));
    }
    // Released containers still reach the rebuilt core.
    List<ContainerId> release = new ArrayList<ContainerId>();
    release.add(before.get(0).getId());
    am.allocate(new ArrayList<org.apache.hadoop.yarn.api.records.ResourceRequest>(), release);
    assertEquals(5, queue(rm, "etl").path("running_containers").longValue());
  }

  @Test
  public void faultInjectionIsRefusedUnlessTurnedOn() throws Exception {
    MockRM rm = start(bopfConf(), null);
    try {
      ((TidalScheduler) rm.getResourceScheduler()).armHeartbeatPanic();
      fail("armed without " + TidalConfig.FAULT_INJECTION);
    } catch (TidalForbiddenException expected) {
      assertTrue(expected.getMessage().contains(TidalConfig.FAULT_INJECTION));
    }
  }
}
