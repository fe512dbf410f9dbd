package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.heartbeat;
import static org.tidal.yarn.TidalTestSupport.launchAm;
import static org.tidal.yarn.TidalTestSupport.submitApp;
import static org.tidal.yarn.TidalTestSupport.useGroups;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.view.QueueStatus;
import org.tidal.yarn.view.SchedulerInfo;

/**
 * Queue placement by user and group, and a queue's maxRunningApps, through a MockRM: what
 * FairScheduler's TestQueuePlacementPolicy and TestMaxRunningAppsEnforcer check, seen from YARN.
 */
public class TestTidalPlacementAndLimits {
  static final String QUEUES =
      "<tidal>\n"
          + "  <queue name=\"default\"/>\n"
          + "  <queue name=\"analysts\"><maxRunningApps>2</maxRunningApps></queue>\n"
          + "  <queuePlacementPolicy>\n"
          + "    <rule name=\"specified\" create=\"false\"/>\n"
          + "    <rule name=\"primaryGroup\" create=\"false\"/>\n"
          + "    <rule name=\"secondaryGroupExistingQueue\"/>\n"
          + "    <rule name=\"user\"/>\n"
          + "  </queuePlacementPolicy>\n"
          + "</tidal>\n";

  /** Hadoop's static user-to-group mapping, primary group first. */
  static final String GROUPS = "bob=analysts;carol=analysts;dave=ops,analysts;erin=ops;frank=";

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private MockRM rm;

  /** Groups come from the static mapping; the default mapping is back after the test. */
  @Before
  public void start() throws Exception {
    Configuration groups = new Configuration();
    groups.set(CommonConfigurationKeys.HADOOP_USER_GROUP_STATIC_OVERRIDES, GROUPS);
    useGroups(groups);
    File allocation = tmp.newFile("queues.xml");
    write(allocation, QUEUES);
    YarnConfiguration conf = conf(allocation);
    conf.set(CommonConfigurationKeys.HADOOP_USER_GROUP_STATIC_OVERRIDES, GROUPS);
    rm = rms.start(conf);
  }

  @After
  public void defaultGroupMapping() {
    useGroups(new Configuration());
  }

  private RMApp submit(String user, String queue) throws Exception {
    RMApp app = submitApp(rm, queue, user);
    waitFor(
        app.getApplicationId() + " to be accepted or rejected",
        () -> app.getState() == RMAppState.ACCEPTED || app.getState() == RMAppState.FAILED);
    return app;
  }

  @Test
  public void appsArePlacedByTheirUsersGroupsOrName() throws Exception {
    assertEquals("the named queue", "root.analysts", submit("erin", "analysts").getQueue());
    assertEquals("primary group", "root.analysts", submit("bob", "default").getQueue());
    assertEquals("secondary group", "root.analysts", submit("dave", "default").getQueue());
    RMApp erin = submit("erin", "default");
    assertEquals("the user's queue, created", "root.erin", erin.getQueue());
    assertEquals(RMAppState.ACCEPTED, erin.getState());
    assertTrue(rms.scheduler().getQueueInfo("root.erin", false, false) != null);

    RMApp frank = submit("frank", "default");
    assertEquals(RMAppState.FAILED, frank.getState());
    String diagnostics = frank.getDiagnostics().toString();
    assertTrue(diagnostics, diagnostics.contains("no groups found for user 'frank'"));
  }

  @Test
  public void maxRunningAppsHoldsTheThirdAppUntilOneFinishes() throws Exception {
    MockNM nm = rm.registerNode("127.0.0.1:1234", 16 * 1024, 16);
    nm.nodeHeartbeat(true);
    MockAM first = launchAm(rm, "analysts", "bob", nm);
    launchAm(rm, "analysts", "carol", nm);
    RMApp third = submit("bob", "analysts");
    assertEquals(RMAppState.ACCEPTED, third.getState());
    waitFor(
        "the third AM request",
        () ->
            third.getCurrentAppAttempt() != null
                && third.getCurrentAppAttempt().getAppAttemptState()
                    == RMAppAttemptState.SCHEDULED);
    for (int i = 0; i < 5; i++) {
      heartbeat(rm, nm);
    }
    assertEquals(
        "the third app gets no AM while two run",
        RMAppAttemptState.SCHEDULED,
        third.getCurrentAppAttempt().getAppAttemptState());
    JsonNode analysts = restQueue("root.analysts");
    assertEquals(analysts.toString(), 2, analysts.path("numActiveApps").intValue());
    assertEquals(analysts.toString(), 1, analysts.path("numPendingApps").intValue());

    rm.killApp(first.getApplicationAttemptId().getApplicationId());
    rm.waitForState(first.getApplicationAttemptId().getApplicationId(), RMAppState.KILLED);
    waitFor(
        "the third AM once the first app finished",
        () -> {
          heartbeat(rm, nm);
          return third.getCurrentAppAttempt().getAppAttemptState() == RMAppAttemptState.ALLOCATED;
        });
    assertEquals(0, restQueue("root.analysts").path("numPendingApps").intValue());
  }

  /** Queue {@code name} of the scheduler's REST view (one level below the root). */
  private JsonNode restQueue(String name) throws Exception {
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    JsonNode queues =
        new ObjectMapper()
            .readTree(SchedulerInfo.json(QueueStatus.parse(scheduler.shim().statusJson()), t -> t))
            .path("scheduler")
            .path("schedulerInfo")
            .path("rootQueue")
            .path("childQueues")
            .path("queue");
    for (JsonNode queue : queues) {
      if (name.equals(queue.path("queueName").textValue())) {
        return queue;
      }
    }
    throw new AssertionError("no queue " + name + " in " + queues);
  }
}
