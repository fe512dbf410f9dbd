package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.useGroups;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.security.PrivilegedExceptionAction;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.ApplicationClientProtocol;
import org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationRequest;
import org.apache.hadoop.yarn.api.protocolrecords.GetQueueUserAclsInfoRequest;
import org.apache.hadoop.yarn.api.protocolrecords.KillApplicationRequest;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationRequest;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.util.Records;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Queue ACLs with FairScheduler's semantics inside a MockRM: submission, the users' queue rights,
 * kills by other users, and queue registration and removal over REST.
 */
public class TestTidalQueueAcls {
  /**
   * Only frank may submit at the root and only carol administer it; etl takes alice and the
   * analysts group, adhoc is administered by dave. Everyone else has no right anywhere.
   */
  static final String QUEUES =
      "<tidal>\n"
          + "  <policy>drf</policy>\n"
          + "  <queue name=\"root\">\n"
          + "    <aclSubmitApps>frank</aclSubmitApps>\n"
          + "    <aclAdministerApps>carol</aclAdministerApps>\n"
          + "  </queue>\n"
          + "  <queue name=\"etl\"><aclSubmitApps>alice analysts</aclSubmitApps></queue>\n"
          + "  <queue name=\"adhoc\"><aclAdministerApps>dave</aclAdministerApps></queue>\n"
          + "</tidal>\n";

  /** Hadoop's static user-to-group mapping: only bob is an analyst. */
  static final String GROUPS = "alice=;bob=analysts;carol=;dave=;erin=;frank=;yarn=";

  static final Set<QueueACL> NONE = EnumSet.noneOf(QueueACL.class);
  static final Set<QueueACL> SUBMIT = EnumSet.of(QueueACL.SUBMIT_APPLICATIONS);
  static final Set<QueueACL> ALL = EnumSet.allOf(QueueACL.class);

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private MockRM rm;
  private File allocation;

  /** Users' groups come from the static mapping; the default mapping is back after the test. */
  @Before
  public void staticGroupMapping() {
    Configuration groups = new Configuration();
    groups.set(CommonConfigurationKeys.HADOOP_USER_GROUP_STATIC_OVERRIDES, GROUPS);
    useGroups(groups);
  }

  @After
  public void defaultGroupMapping() {
    useGroups(new Configuration());
  }

  private YarnConfiguration aclConf(boolean enabled) throws IOException {
    allocation = tmp.newFile("queues.xml");
    write(allocation, QUEUES);
    YarnConfiguration conf = conf(allocation);
    conf.set(CommonConfigurationKeys.HADOOP_USER_GROUP_STATIC_OVERRIDES, GROUPS);
    conf.setBoolean(YarnConfiguration.YARN_ACL_ENABLE, enabled);
    conf.set(YarnConfiguration.YARN_ADMIN_ACL, "yarn");
    return conf;
  }

  private static <T> T as(String user, PrivilegedExceptionAction<T> action) throws Exception {
    return UserGroupInformation.createRemoteUser(user).doAs(action);
  }

  /**
   * Submits an app as {@code user} through the client protocol (MockRM's submitApp would give the
   * user fixed test groups) and waits until the RM accepted or rejected it.
   */
  private RMApp submit(String user, String queue) throws Exception {
    ApplicationClientProtocol client = rm.getClientRMService();
    ApplicationId appId =
        client
            .getNewApplication(Records.newRecord(GetNewApplicationRequest.class))
            .getApplicationId();
    ApplicationSubmissionContext context = Records.newRecord(ApplicationSubmissionContext.class);
    context.setApplicationId(appId);
    context.setApplicationName("acl-" + user);
    context.setQueue(queue);
    context.setResource(Resource.newInstance(1024, 1));
    context.setAMContainerSpec(Records.newRecord(ContainerLaunchContext.class));
    as(user, () -> client.submitApplication(SubmitApplicationRequest.newInstance(context)));
    RMApp app = rm.getRMContext().getRMApps().get(appId);
    waitFor(
        appId + " to be accepted or rejected",
        () -> app.getState() == RMAppState.ACCEPTED || app.getState() == RMAppState.FAILED);
    return app;
  }

  private void assertAccepted(String user, String queue) throws Exception {
    RMApp app = submit(user, queue);
    assertEquals(
        user + " in " + queue + ": " + app.getDiagnostics(), RMAppState.ACCEPTED, app.getState());
  }

  private void assertRejected(String user, String queue) throws Exception {
    RMApp app = submit(user, queue);
    assertEquals(user + " in " + queue, RMAppState.FAILED, app.getState());
    String diagnostics = app.getDiagnostics().toString();
    String expected = "User " + user + " cannot submit applications to queue root." + queue;
    assertTrue(diagnostics, diagnostics.contains(expected));
    assertEquals(
        "rejected once: " + diagnostics,
        diagnostics.indexOf(expected),
        diagnostics.lastIndexOf(expected));
  }

  /** The rights YARN's clients are told {@code user} has, by queue. */
  private Map<String, Set<QueueACL>> rights(String user) throws Exception {
    Map<String, Set<QueueACL>> rights = new HashMap<String, Set<QueueACL>>();
    for (QueueUserACLInfo info :
        as(
                user,
                () ->
                    rm.getClientRMService()
                        .getQueueUserAcls(GetQueueUserAclsInfoRequest.newInstance()))
            .getUserAclsInfoList()) {
      Set<QueueACL> acls = EnumSet.noneOf(QueueACL.class);
      acls.addAll(info.getUserAcls());
      rights.put(info.getQueueName(), acls);
    }
    return rights;
  }

  private static Map<String, Set<QueueACL>> rights(
      Set<QueueACL> root, Set<QueueACL> etl, Set<QueueACL> adhoc) {
    Map<String, Set<QueueACL>> rights = new HashMap<String, Set<QueueACL>>();
    rights.put("root", root);
    rights.put("root.etl", etl);
    rights.put("root.adhoc", adhoc);
    return rights;
  }

  @Test(timeout = 120000)
  public void submissionFollowsTheQueueAndRootAclsAndTheAdminAcl() throws Exception {
    rm = rms.start(aclConf(true));
    assertAccepted("alice", "etl");
    assertAccepted("bob", "etl"); // through the analysts group
    assertAccepted("frank", "etl"); // submits at the root, so in every queue
    assertAccepted("carol", "etl"); // administers the root, which includes submitting
    assertAccepted("dave", "adhoc"); // administers adhoc
    assertAccepted("yarn", "adhoc"); // yarn.admin.acl
    assertRejected("erin", "etl");
    assertRejected("dave", "etl");
    assertRejected("alice", "adhoc");
    assertRejected("bob", "adhoc");
  }

  @Test(timeout = 120000)
  public void usersAreToldTheirRealRightsOnEveryQueue() throws Exception {
    rm = rms.start(aclConf(true));
    assertEquals(rights(NONE, SUBMIT, NONE), rights("alice"));
    assertEquals(rights(NONE, SUBMIT, NONE), rights("bob"));
    assertEquals(rights(ALL, ALL, ALL), rights("carol"));
    assertEquals(rights(NONE, NONE, ALL), rights("dave"));
    assertEquals(rights(NONE, NONE, NONE), rights("erin"));
    assertEquals(rights(SUBMIT, SUBMIT, SUBMIT), rights("frank"));
    assertEquals(rights(ALL, ALL, ALL), rights("yarn"));

    TidalScheduler scheduler = rms.scheduler();
    UserGroupInformation dave = UserGroupInformation.createRemoteUser("dave");
    assertTrue(scheduler.checkAccess(dave, QueueACL.ADMINISTER_QUEUE, "adhoc"));
    assertTrue(scheduler.checkAccess(dave, QueueACL.ADMINISTER_QUEUE, "root.adhoc"));
    assertFalse(scheduler.checkAccess(dave, QueueACL.ADMINISTER_QUEUE, "etl"));
  }

  /** A parent queue's ACLs reach every queue below it, however deep. */
  @Test(timeout = 120000)
  public void aParentsAclsReachTheQueuesBelowIt() throws Exception {
    YarnConfiguration conf = aclConf(true);
    write(
        allocation,
        "<tidal><queue name=\"root\"><aclSubmitApps> </aclSubmitApps>"
            + "<aclAdministerApps> </aclAdministerApps></queue>"
            + "<queue name=\"eng\"><aclSubmitApps>alice</aclSubmitApps>"
            + "<aclAdministerApps>dave</aclAdministerApps>"
            + "<queue name=\"etl\"/><queue name=\"ml\"><queue name=\"train\"/></queue></queue>"
            + "<queue name=\"b\"/></tidal>");
    rm = rms.start(conf);
    TidalScheduler scheduler = rms.scheduler();
    UserGroupInformation alice = UserGroupInformation.createRemoteUser("alice");
    UserGroupInformation dave = UserGroupInformation.createRemoteUser("dave");
    UserGroupInformation erin = UserGroupInformation.createRemoteUser("erin");
    assertTrue(scheduler.checkAccess(alice, QueueACL.SUBMIT_APPLICATIONS, "root.eng.ml.train"));
    assertFalse(scheduler.checkAccess(alice, QueueACL.ADMINISTER_QUEUE, "root.eng.etl"));
    assertFalse(scheduler.checkAccess(alice, QueueACL.SUBMIT_APPLICATIONS, "root.b"));
    assertTrue(scheduler.checkAccess(dave, QueueACL.ADMINISTER_QUEUE, "root.eng.ml.train"));
    assertTrue(scheduler.checkAccess(dave, QueueACL.SUBMIT_APPLICATIONS, "root.eng.etl"));
    assertFalse(scheduler.checkAccess(dave, QueueACL.ADMINISTER_QUEUE, "root.b"));
    assertFalse(scheduler.checkAccess(erin, QueueACL.SUBMIT_APPLICATIONS, "root.eng.etl"));
    assertAccepted("alice", "root.eng.ml.train");
    assertRejected("erin", "eng.etl");
  }

  /** The RM lets other users kill an app only when they administer its queue. */
  @Test(timeout = 120000)
  public void onlyAdministratorsOfTheQueueMayKillAnotherUsersApp() throws Exception {
    rm = rms.start(aclConf(true));
    RMApp app = submit("alice", "etl");
    KillApplicationRequest kill = KillApplicationRequest.newInstance(app.getApplicationId());
    try {
      as("dave", () -> rm.getClientRMService().forceKillApplication(kill));
      fail("dave killed alice's app in etl");
    } catch (UndeclaredThrowableException e) {
      String refusal = e.getCause().getMessage();
      assertTrue(refusal, e.getCause() instanceof YarnException);
      assertTrue(refusal, refusal.contains("User dave cannot perform operation MODIFY_APP"));
    }
    assertEquals(RMAppState.ACCEPTED, app.getState());
    as("carol", () -> rm.getClientRMService().forceKillApplication(kill));
    waitFor("carol's kill", () -> app.getState() == RMAppState.KILLED);
  }

  @Test(timeout = 120000)
  public void registeringAndRemovingQueuesOverRestNeedAdministerRights() throws Exception {
    rm = rms.start(aclConf(true));
    String queue = "<queue name=\"scratch\"><aclSubmitApps>erin</aclSubmitApps></queue>";

    HttpCall erin = register("erin", queue);
    assertEquals(erin.toString(), 403, erin.status);
    assertTrue(erin.message(), erin.message().contains("User erin cannot administer queue root"));
    assertEquals(403, register("dave", queue).status); // administers adhoc, not the root
    assertEquals(404, HttpCall.request("GET", rms.restBase() + "/queues/scratch").send().status);

    HttpCall carol = register("carol", queue);
    assertEquals(carol.toString(), 201, carol.status);
    assertAccepted("erin", "scratch"); // the registered queue's own ACL applies at once
    HttpCall dave = delete("dave", "scratch");
    assertEquals(dave.toString(), 403, dave.status);
    assertTrue(dave.message(), dave.message().contains("administer queue root.scratch"));
    assertEquals(200, delete("carol", "scratch").status);

    // erin's app keeps the removed queue's name until it ends.
    String another = queue.replace("scratch", "spare");
    assertEquals(201, register("yarn", another).status);
    assertEquals(200, delete("yarn", "spare").status);
  }

  @Test(timeout = 120000)
  public void withAclsOffEveryoneMayDoEverything() throws Exception {
    rm = rms.start(aclConf(false));
    assertAccepted("erin", "etl");
    assertAccepted("dave", "etl");
    assertAccepted("alice", "adhoc");
    assertEquals(rights(ALL, ALL, ALL), rights("erin"));
    assertEquals(201, register("erin", "<queue name=\"scratch\"/>").status);
    assertEquals(200, delete("erin", "scratch").status);
  }

  /**
   * Refreshing the queues takes new ACLs; a file with a misread ACL is refused and changes none.
   */
  @Test(timeout = 120000)
  public void refreshingTheQueuesReplacesTheirAcls() throws Exception {
    YarnConfiguration conf = aclConf(true);
    rm = rms.start(conf);
    write(allocation, QUEUES.replace("alice analysts", "erin"));
    rms.scheduler().reinitialize(conf, rm.getRMContext());
    assertAccepted("erin", "etl");
    assertRejected("alice", "etl");

    write(allocation, QUEUES.replace("alice analysts", "alice, bob"));
    try {
      rms.scheduler().reinitialize(conf, rm.getRMContext());
      fail("a misread ACL was accepted");
    } catch (IOException e) {
      String message = e.getMessage();
      assertTrue(message, message.contains(allocation.getPath()));
      assertTrue(message, message.contains("queue 'root.etl' field aclSubmitApps: "));
    }
    assertAccepted("erin", "etl");
  }

  private HttpCall register(String user, String xml) throws Exception {
    return HttpCall.request("POST", rms.restBase() + "/queues?user.name=" + user)
        .body("application/xml", xml)
        .send();
  }

  private HttpCall delete(String user, String queue) throws Exception {
    return HttpCall.request("DELETE", rms.restBase() + "/queues/" + queue + "?user.name=" + user)
        .send();
  }
}
