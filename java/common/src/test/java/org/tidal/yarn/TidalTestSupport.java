package org.tidal.yarn;

import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.Groups;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.tidal.yarn.config.TidalConfig;

/** Helpers shared by the MockRM-based tests. */
final class TidalTestSupport {
  static final String QUEUES_AB =
      "<tidal>\n"
          + "  <policy>drf</policy>\n"
          + "  <queue name=\"a\"><weight>1</weight></queue>\n"
          + "  <queue name=\"b\"><weight>2</weight></queue>\n"
          + "</tidal>\n";

  /**
   * BoPF with one queue of each outcome on a 100 GB / 100-vcore node ({@link #startThreeClasses}),
   * admitted in file order with N_min 1. {@code lq} declares 4000 vcore-seconds (and 4000 GB-s) per
   * 100 s period due within 50 s: a guaranteed rate of 80 vcores (80% of the cluster), within the
   * capacity and its fair share of a period at N+1 = 1, so it is Hard. {@code etl} (N+1 = 2) leaves
   * lq a fair share of 5000 >= 4000 vcore-s: Elastic. {@code late} (N+1 = 3) would cut it to 3333 <
   * 4000, so safety condition (1) rejects it.
   */
  static final String THREE_CLASSES =
      "<tidal>\n"
          + "  <policy>bopf</policy>\n"
          + "  <n-min>1</n-min>\n"
          + "  <queue name=\"lq\"><type>lq</type><period-sec>100</period-sec>"
          + "<deadline-sec>50</deadline-sec>"
          + "<burst-demand><memory-mb>4096000</memory-mb><vcores>4000</vcores></burst-demand>"
          + "</queue>\n"
          + "  <queue name=\"etl\"><weight>1</weight></queue>\n"
          + "  <queue name=\"late\"><type>lq</type><period-sec>100</period-sec>"
          + "<deadline-sec>50</deadline-sec>"
          + "<burst-demand><memory-mb>102400</memory-mb><vcores>100</vcores></burst-demand>"
          + "</queue>\n"
          + "</tidal>\n";

  static final long TIMEOUT_MS = 30000;

  private TidalTestSupport() {}

  static void write(File file, String text) throws IOException {
    Files.write(file.toPath(), text.getBytes(StandardCharsets.UTF_8));
  }

  /** A configuration selecting TidalScheduler with the given allocation file (null: default). */
  static YarnConfiguration conf(File allocationFile) {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setClass(YarnConfiguration.RM_SCHEDULER, TidalScheduler.class, ResourceScheduler.class);
    if (allocationFile != null) {
      conf.set(TidalConfig.ALLOCATION_FILE, allocationFile.getAbsolutePath());
    }
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 1024);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES, 1);
    // Loopback and a free port: tests never listen beyond this host or collide on a port.
    conf.set(TidalConfig.REST_ADDRESS, "127.0.0.1:0");
    // These tests start a queue's containers in one heartbeat; the default is one per heartbeat.
    conf.setInt(TidalConfig.MAX_ASSIGN_PER_HEARTBEAT, 10);
    return conf;
  }

  /**
   * Starts {@code rm}'s node of 100 GB and 100 vcores for {@link #THREE_CLASSES} and waits until
   * admission control has classed the queues against its capacity.
   */
  static MockNM startThreeClasses(MockRM rm) throws Exception {
    MockNM nm = rm.registerNode("127.0.0.1:1234", 100 * 1024, 100);
    nm.nodeHeartbeat(true);
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    waitFor(
        "admission of the three queues against the node",
        () -> scheduler.shim().statusJson().contains("\"class\":\"rejected\""));
    return nm;
  }

  /** A port free on loopback now, for servers that do not report the port they bound. */
  static int freePort() throws IOException {
    ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    try {
      return socket.getLocalPort();
    } finally {
      socket.close();
    }
  }

  static void waitFor(String what, Callable<Boolean> condition) throws Exception {
    long deadline = System.currentTimeMillis() + TIMEOUT_MS;
    while (!condition.call()) {
      if (System.currentTimeMillis() > deadline) {
        fail("timed out waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  /**
   * Submits an app with a 1 GB AM to {@code queue} and launches and registers the AM on {@code nm},
   * as MockRM's submitApp and launchAndRegisterAM do but polling for each state instead of their
   * fixed sleeps (seconds per app in Hadoop 2.7).
   */
  static MockAM launchAm(MockRM rm, String queue, String user, MockNM nm) throws Exception {
    return launchAm(rm, submitApp(rm, queue, user), nm);
  }

  /** Launches and registers the AM of the submitted {@code app} on {@code nm}. */
  static MockAM launchAm(MockRM rm, RMApp app, MockNM nm) throws Exception {
    waitFor(
        "the AM request of " + app.getApplicationId(),
        () ->
            app.getCurrentAppAttempt() != null
                && app.getCurrentAppAttempt().getAppAttemptState() == RMAppAttemptState.SCHEDULED);
    RMAppAttempt attempt = app.getCurrentAppAttempt();
    waitFor(
        "the AM container of " + app.getApplicationId(),
        () -> {
          nm.nodeHeartbeat(true);
          return attempt.getAppAttemptState() == RMAppAttemptState.ALLOCATED;
        });
    MockAM am = rm.sendAMLaunched(attempt.getAppAttemptId());
    waitFor(
        "the AM launch of " + app.getApplicationId(),
        () -> attempt.getAppAttemptState() == RMAppAttemptState.LAUNCHED);
    am.registerAppAttempt();
    waitFor(app.getApplicationId() + " to run", () -> app.getState() == RMAppState.RUNNING);
    return am;
  }

  /** Submits an app with a 1 GB AM to {@code queue} as {@code user}, without waiting. */
  static RMApp submitApp(MockRM rm, String queue, String user) throws Exception {
    return RmLine.submit(
        rm,
        1024,
        "app-" + user,
        user,
        queue,
        false,
        YarnConfiguration.DEFAULT_RM_AM_MAX_ATTEMPTS,
        null,
        false,
        false);
  }

  /**
   * Makes Hadoop's group mapping (the service and UGI's) the one {@code conf} configures. UGI keeps
   * the group service it first saw, and for good the fixed test groups that MockRM's submitApp
   * installs, so tests that depend on groups call this before and with a fresh configuration after.
   */
  static void useGroups(Configuration conf) {
    Groups.getUserToGroupsMappingServiceWithLoadedConfiguration(conf);
    UserGroupInformation.reset();
    UserGroupInformation.setConfiguration(conf);
  }

  /** Heartbeats the nodes and polls the AM until it holds {@code count} new containers. */
  static List<Container> awaitContainers(
      MockAM am, int count, List<ContainerStatus> completed, MockNM... nodes) throws Exception {
    List<Container> got = new ArrayList<Container>();
    long deadline = System.currentTimeMillis() + TIMEOUT_MS;
    while (got.size() < count) {
      if (System.currentTimeMillis() > deadline) {
        fail("got " + got.size() + " of " + count + " containers: " + got);
      }
      for (MockNM node : nodes) {
        node.nodeHeartbeat(true);
      }
      Thread.sleep(50);
      AllocateResponse response = poll(am);
      got.addAll(response.getAllocatedContainers());
      if (completed != null) {
        completed.addAll(response.getCompletedContainersStatuses());
      }
    }
    return got;
  }

  static List<Container> awaitContainers(MockAM am, int count, MockNM... nodes) throws Exception {
    return awaitContainers(am, count, null, nodes);
  }

  /**
   * One node heartbeat handled on the calling thread, as Hadoop's own scheduler tests drive theirs:
   * when it returns, the scheduler has decided what the node starts.
   */
  static void heartbeat(MockRM rm, MockNM nm) {
    RMNode node = rm.getRMContext().getRMNodes().get(nm.getNodeId());
    rm.getResourceScheduler().handle(new NodeUpdateSchedulerEvent(node));
  }

  /** The AMRM token of the AM's attempt as the hints endpoint takes it (URL-encoded). */
  static String amRmToken(MockRM rm, MockAM am) throws IOException {
    ApplicationAttemptId attempt = am.getApplicationAttemptId();
    Token<AMRMTokenIdentifier> token =
        rm.getRMContext()
            .getRMApps()
            .get(attempt.getApplicationId())
            .getRMAppAttempt(attempt)
            .getAMRMToken();
    return token.encodeToUrlString();
  }

  /**
   * The field a refusal by the core names, or null: the core words each validation error "... field
   * NAME: reason", which the REST endpoint passes on as its message.
   */
  static String namedField(String message) {
    Matcher field = Pattern.compile("field (\\S+): ").matcher(message);
    return field.find() ? field.group(1) : null;
  }

  /** An allocate call that asks for nothing: collects what the scheduler has for the AM. */
  static AllocateResponse poll(MockAM am) throws Exception {
    return am.allocate(new ArrayList<ResourceRequest>(), new ArrayList<ContainerId>());
  }
}
