package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.heartbeat;
import static org.tidal.yarn.TidalTestSupport.namedField;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.bridge.TidalConflictException;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalForbiddenException;
import org.tidal.yarn.bridge.TidalInvalidInputException;
import org.tidal.yarn.bridge.TidalNotFoundException;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.rest.QueueResource;
import org.tidal.yarn.rest.RestErrorMapper;
import org.tidal.yarn.rest.RestInput;
import org.tidal.yarn.rest.TidalRestServer;

/** The queue REST endpoint inside a MockRM under BoPF. */
public class TestTidalRest {
  /** Two TQs under BoPF; admission runs once a node has heartbeaten. */
  static final String BOPF_QUEUES =
      "<tidal>\n"
          + "  <policy>bopf</policy>\n"
          + "  <queue name=\"etl\"><weight>1</weight></queue>\n"
          + "  <queue name=\"reports\"><weight>1</weight></queue>\n"
          + "</tidal>\n";

  /**
   * alice's LQ on a 100-vcore cluster: 200 vcore-seconds due within 10 s is a rate of 20 vcores,
   * which fits the capacity, and 200 is far below its fair share of a period (100 vcores x 100 s /
   * 3 queues), so admission makes it Hard.
   */
  static final String ADHOC_LQ =
      "<queue name=\"adhoc\">\n"
          + "  <type>lq</type>\n"
          + "  <period-sec>100</period-sec>\n"
          + "  <deadline-sec>10</deadline-sec>\n"
          + "  <burst-demand><vcores>200</vcores><memory-mb>204800</memory-mb></burst-demand>\n"
          + "</queue>\n";

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private MockRM rm;
  private MockNM nm;
  private String base;

  private TidalScheduler start(YarnConfiguration conf) throws Exception {
    rm = rms.start(conf);
    TidalScheduler scheduler = rms.scheduler();
    InetSocketAddress address = scheduler.getRestAddress();
    assertNotNull("the endpoint runs", address);
    assertTrue("a real port was bound", address.getPort() > 0);
    base = "http://127.0.0.1:" + address.getPort() + TidalRestServer.PREFIX;
    return scheduler;
  }

  /** A BoPF RM with one 100 GB, 100-vcore node that has heartbeaten, so admission has run. */
  private TidalScheduler startBopf(YarnConfiguration conf) throws Exception {
    TidalScheduler scheduler = start(conf);
    nm = rm.registerNode("127.0.0.1:1234", 100 * 1024, 100);
    waitFor("the node to join", () -> scheduler.getNumClusterNodes() == 1);
    heartbeat(rm, nm);
    for (JsonNode queue : HttpCall.request("GET", base + "/queues").send().json().path("queues")) {
      assertFalse(queue.toString(), "provisional".equals(queue.path("class").textValue()));
    }
    return scheduler;
  }

  private YarnConfiguration bopfConf() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, BOPF_QUEUES);
    return conf(allocation);
  }

  private HttpCall register(String user, String xml) throws Exception {
    return HttpCall.request("POST", base + "/queues?user.name=" + user)
        .body("application/xml", xml)
        .send();
  }

  private HttpCall delete(String user, String queue) throws Exception {
    return HttpCall.request("DELETE", base + "/queues/" + queue + "?user.name=" + user).send();
  }

  private static JsonNode queue(JsonNode status, String name) {
    for (JsonNode q : status.path("queues")) {
      if (name.equals(q.path("name").textValue())) {
        return q;
      }
    }
    return null;
  }

  /** Each kind of refusal the bridge raises maps to its own HTTP status, whatever its wording. */
  @Test
  public void refusalsMapToStatusesByExceptionClass() {
    assertEquals(403, RestErrorMapper.status(new TidalForbiddenException("x")));
    assertEquals(409, RestErrorMapper.status(new TidalConflictException("x")));
    assertEquals(404, RestErrorMapper.status(new TidalNotFoundException("x")));
    assertEquals(400, RestErrorMapper.status(new TidalInvalidInputException("x")));
    assertEquals(503, RestErrorMapper.status(new TidalException("x")));
  }

  @Test(timeout = 120000)
  public void registeredQueueGetsItsVerdictAndShowsClassAndBurstState() throws Exception {
    NativeLogCapture nativeLog = new NativeLogCapture();
    try {
      TidalScheduler scheduler = startBopf(bopfConf());

      HttpCall verdict = register("alice", ADHOC_LQ);
      assertEquals(verdict.toString(), 201, verdict.status);
      assertEquals("root.adhoc", verdict.json().path("queue").textValue());
      assertEquals(verdict.toString(), "hard", verdict.json().path("class").textValue());
      assertFalse(verdict.json().path("reason").textValue().isEmpty());

      HttpCall all = HttpCall.request("GET", base + "/queues").send();
      assertEquals(200, all.status);
      JsonNode adhoc = queue(all.json(), "root.adhoc");
      assertNotNull(all.body, adhoc);
      assertEquals("lq", adhoc.path("type").textValue());
      assertEquals("hard", adhoc.path("class").textValue());
      assertEquals("alice", adhoc.path("owner").textValue());
      assertEquals(20, adhoc.path("guaranteed").path("vcores").longValue());
      assertEquals("idle", adhoc.path("burst").path("phase").textValue());
      assertEquals(200, adhoc.path("burst").path("demand").path(1).longValue());
      assertTrue(adhoc.has("long_term_share"));
      assertTrue(adhoc.path("admission_reason").textValue().length() > 0);
      assertEquals("elastic", queue(all.json(), "root.etl").path("class").textValue());

      HttpCall one = HttpCall.request("GET", base + "/queues/adhoc").send();
      assertEquals(200, one.status);
      assertEquals("root.adhoc", one.json().path("name").textValue());
      assertEquals(404, HttpCall.request("GET", base + "/queues/nothere").send().status);

      // The registered queue is a YARN queue now: yarn queue -status and submission work.
      QueueInfo info = scheduler.getQueueInfo("adhoc", false, false);
      assertEquals("root.adhoc", info.getQueueName());
      assertEquals(0f, info.getCurrentCapacity(), 1e-6);
      RMApp app =
          RmLine.submit(
              rm,
              1024,
              "burst",
              "alice",
              "adhoc",
              false,
              YarnConfiguration.DEFAULT_RM_AM_MAX_ATTEMPTS,
              null,
              true,
              false);
      assertEquals("root.adhoc", app.getQueue());

      // Its AM request starts a burst; the endpoint reports burst times on the wall clock.
      final long before = System.currentTimeMillis();
      waitFor(
          "a burst of root.adhoc",
          new Callable<Boolean>() {
            @Override
            public Boolean call() throws Exception {
              nm.nodeHeartbeat(true);
              JsonNode q = HttpCall.request("GET", base + "/queues/adhoc").send().json();
              return "on".equals(q.path("burst").path("phase").textValue());
            }
          });
      JsonNode burst = HttpCall.request("GET", base + "/queues/adhoc").send().json().path("burst");
      long started = burst.path("started_ms").longValue();
      assertTrue(
          burst.toString(),
          started >= before - 60000 && started <= System.currentTimeMillis() + 1000);
      assertEquals(10000, burst.path("deadline_at_ms").longValue() - started);

      // The core's admission record reaches the RM log through the log pump.
      nativeLog.await("the admission record in log4j", " INFO ", "queue admitted", "root.adhoc");
    } finally {
      nativeLog.close();
    }
  }

  @Test(timeout = 120000)
  public void onlyTheOwnerMayRemoveAQueueWhenAclsAreOff() throws Exception {
    startBopf(bopfConf());
    assertEquals(201, register("alice", ADHOC_LQ).status);

    HttpCall bob = delete("bob", "adhoc");
    assertEquals(bob.toString(), 403, bob.status);
    assertTrue(bob.message(), bob.message().contains("'root.adhoc'"));
    // With YARN ACLs off even a would-be administrator is an ordinary user.
    assertEquals(403, delete("yarn", "adhoc").status);
    assertEquals(200, HttpCall.request("GET", base + "/queues/adhoc").send().status);

    HttpCall alice = delete("alice", "adhoc");
    assertEquals(alice.toString(), 200, alice.status);
    assertEquals("root.adhoc", alice.json().path("queue").textValue());
    assertEquals(404, HttpCall.request("GET", base + "/queues/adhoc").send().status);
    assertEquals(404, delete("alice", "adhoc").status);

    // Queues of the allocation file change only through the file.
    HttpCall fileQueue = delete("alice", "etl");
    assertEquals(fileQueue.toString(), 409, fileQueue.status);
    assertTrue(fileQueue.message(), fileQueue.message().contains("'root.etl'"));
    assertEquals(200, HttpCall.request("GET", base + "/queues/etl").send().status);
  }

  @Test(timeout = 120000)
  public void membersOfTheAdminAclMayRemoveAnyQueueWhenAclsAreOn() throws Exception {
    YarnConfiguration conf = bopfConf();
    conf.setBoolean(YarnConfiguration.YARN_ACL_ENABLE, true);
    conf.set(YarnConfiguration.YARN_ADMIN_ACL, "yarn");
    startBopf(conf);
    assertEquals(201, register("alice", ADHOC_LQ).status);
    assertEquals(403, delete("bob", "adhoc").status);
    HttpCall admin = delete("yarn", "adhoc");
    assertEquals(admin.toString(), 200, admin.status);
  }

  @Test(timeout = 120000)
  public void badRequestsAreRefusedWithTheReasonAndNoStackTrace() throws Exception {
    startBopf(bopfConf());

    HttpCall malformed = register("alice", "<queue name=\"x\"><type>lq</type>");
    assertEquals(malformed.toString(), 400, malformed.status);

    HttpCall badField = register("alice", ADHOC_LQ.replace("<period-sec>100", "<period-sec>-5"));
    assertEquals(badField.toString(), 400, badField.status);
    assertEquals(badField.message(), "period-sec", namedField(badField.message()));
    assertTrue(badField.message(), badField.message().contains("'root.adhoc'"));

    HttpCall longDeadline =
        register("alice", ADHOC_LQ.replace("<deadline-sec>10", "<deadline-sec>500"));
    assertEquals(longDeadline.toString(), 400, longDeadline.status);
    assertTrue(longDeadline.message(), longDeadline.message().contains("burst.deadline_ms"));

    HttpCall duplicate = register("alice", "<queue name=\"etl\"><weight>1</weight></queue>");
    assertEquals(duplicate.toString(), 409, duplicate.status);
    assertTrue(duplicate.message(), duplicate.message().contains("'root.etl'"));

    HttpCall anonymous =
        HttpCall.request("POST", base + "/queues").body("application/xml", ADHOC_LQ).send();
    assertEquals(401, anonymous.status);
    assertTrue(anonymous.message(), anonymous.message().contains(RestInput.USER_PARAM));

    HttpCall form =
        HttpCall.request("POST", base + "/queues?user.name=alice")
            .body("text/plain", ADHOC_LQ)
            .send();
    assertEquals(415, form.status);

    byte[] big = new byte[QueueResource.MAX_QUEUE_BODY_BYTES + 1];
    java.util.Arrays.fill(big, (byte) ' ');
    HttpCall oversized =
        HttpCall.request("POST", base + "/queues?user.name=alice")
            .body("application/xml", big)
            .send();
    assertEquals(413, oversized.status);

    byte[] latin1 =
        "<queue name=\"caf\u00e9\"><weight>1</weight></queue>"
            .getBytes(StandardCharsets.ISO_8859_1);
    HttpCall notUtf8 =
        HttpCall.request("POST", base + "/queues?user.name=alice")
            .body("application/xml", latin1)
            .send();
    assertEquals(notUtf8.toString(), 400, notUtf8.status);

    assertEquals(
        405,
        HttpCall.request("PUT", base + "/queues").body("application/xml", ADHOC_LQ).send().status);
    assertEquals(404, HttpCall.request("GET", base + "/nothing").send().status);

    for (HttpCall call : new HttpCall[] {malformed, badField, duplicate, anonymous, oversized}) {
      assertFalse(call.body, call.body.contains("Exception") || call.body.contains("\tat "));
    }
    // None of the refused definitions left a queue behind.
    JsonNode status = HttpCall.request("GET", base + "/queues").send().json();
    assertEquals(2, status.path("queues").size());
  }

  @Test(timeout = 120000)
  public void queueChangesAreRefusedUnderKerberosButStatusIsServed() throws Exception {
    TidalScheduler scheduler = startBopf(bopfConf());
    YarnConfiguration kerberos = new YarnConfiguration(rm.getConfig());
    kerberos.set("hadoop.security.authentication", "kerberos");
    kerberos.set(TidalConfig.REST_ADDRESS, "127.0.0.1:0");
    TidalRestServer server = scheduler.shim().restEndpoint().newServer(kerberos);
    server.start();
    try {
      String url = "http://127.0.0.1:" + server.address().getPort() + TidalRestServer.PREFIX;
      HttpCall post =
          HttpCall.request("POST", url + "/queues?user.name=alice")
              .body("application/xml", ADHOC_LQ)
              .send();
      assertEquals(post.toString(), 501, post.status);
      assertEquals(
          501, HttpCall.request("DELETE", url + "/queues/etl?user.name=alice").send().status);
      assertEquals(200, HttpCall.request("GET", url + "/queues").send().status);
    } finally {
      server.stop();
    }
  }

  @Test(timeout = 120000)
  public void proxyUsersActForOthersOnlyWhereHadoopAllowsIt() throws Exception {
    YarnConfiguration conf = bopfConf();
    conf.set("hadoop.proxyuser.gateway.hosts", "*");
    conf.set("hadoop.proxyuser.gateway.users", "alice");
    startBopf(conf);
    HttpCall asAlice =
        HttpCall.request("POST", base + "/queues?user.name=gateway&doAs=alice")
            .body("application/xml", ADHOC_LQ)
            .send();
    assertEquals(asAlice.toString(), 201, asAlice.status);
    JsonNode adhoc = HttpCall.request("GET", base + "/queues/adhoc").send().json();
    assertEquals("alice", adhoc.path("owner").textValue());
    // The gateway may not act for bob, and nobody else may act for anyone.
    assertEquals(
        403,
        HttpCall.request("DELETE", base + "/queues/adhoc?user.name=gateway&doAs=bob")
            .send()
            .status);
    assertEquals(
        403,
        HttpCall.request("DELETE", base + "/queues/adhoc?user.name=bob&doAs=alice").send().status);
    assertEquals(200, HttpCall.request("GET", base + "/queues/adhoc").send().status);
    assertEquals(
        200,
        HttpCall.request("DELETE", base + "/queues/adhoc?user.name=gateway&doAs=alice")
            .send()
            .status);
  }

  @Test(timeout = 120000)
  public void badEndpointSettingsAreRefusedByName() throws Exception {
    TidalScheduler scheduler = start(bopfConf());
    String[][] bad = {
      {TidalConfig.REST_IDLE_TIMEOUT_MS, "0"},
      {TidalConfig.REST_MAX_THREADS, "1"},
      {TidalConfig.REST_LOW_RESOURCES_CONNECTIONS, "many"},
      {"hadoop.http.authentication.type", "kerberos"},
    };
    for (String[] setting : bad) {
      YarnConfiguration conf = new YarnConfiguration(rm.getConfig());
      conf.set(setting[0], setting[1]);
      try {
        scheduler.shim().restEndpoint().newServer(conf);
        throw new AssertionError(setting[0] + "=" + setting[1] + " was accepted");
      } catch (IllegalArgumentException e) {
        String expected = setting[0].startsWith("hadoop.") ? "kerberos.keytab" : setting[0];
        assertTrue(e.getMessage(), e.getMessage().contains(expected));
      }
    }
  }

  /** Unset, the endpoint's address follows the RM's web address host, on the Tidal port. */
  @Test
  public void defaultAddressIsTheRmWebHost() {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "10.1.2.3:8088");
    assertEquals("10.1.2.3:" + TidalConfig.DEFAULT_REST_PORT, TidalConfig.restAddress(conf));
    conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_HOSTNAME, "rm.example.com");
    assertEquals("rm.example.com:8089", TidalConfig.restAddress(conf));
    conf.set(TidalConfig.REST_ADDRESS, "0.0.0.0:9999");
    assertEquals("0.0.0.0:9999", TidalConfig.restAddress(conf));
  }

  @Test(timeout = 120000)
  public void endpointStopsWithTheScheduler() throws Exception {
    start(bopfConf());
    String url = base + "/queues";
    assertEquals(200, HttpCall.request("GET", url).send().status);
    rms.stop();
    try {
      HttpCall call = HttpCall.request("GET", url).send();
      throw new AssertionError("the endpoint still answers after stop: " + call);
    } catch (java.net.ConnectException expected) {
      // Nothing listens any more.
    }
  }

  @Test(timeout = 60000)
  public void disabledEndpointDoesNotListen() throws Exception {
    YarnConfiguration conf = bopfConf();
    conf.setBoolean(TidalConfig.REST_ENABLED, false);
    rms.start(conf);
    assertEquals(null, rms.scheduler().getRestAddress());
  }
}
