package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.QUEUES_AB;
import static org.tidal.yarn.TidalTestSupport.amRmToken;
import static org.tidal.yarn.TidalTestSupport.awaitContainers;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.namedField;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.File;
import java.io.IOException;
import java.util.Arrays;
import java.util.Collections;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.rest.HintsResource;

/** The AM hints endpoint and its AMRM-token authentication inside a MockRM. */
public class TestTidalHints {
  /** A map stage at priority 20 feeding a reduce stage at priority 21. */
  static final String DAG =
      "{\"version\":1,\"stages\":["
          + "{\"id\":\"Map 1\",\"tasks\":4,\"demand\":{\"memory_mb\":1024,\"vcores\":1},"
          + "\"duration_ms\":30000,\"priorities\":[20]},"
          + "{\"id\":\"Reducer 2\",\"tasks\":2,\"demand\":{\"memory_mb\":2048,\"vcores\":1},"
          + "\"duration_ms\":60000,\"parents\":[\"Map 1\"],\"priorities\":[21]}]}";

  static final String PROGRESS =
      "{\"version\":1,\"progress\":[{\"stage\":\"Map 1\","
          + "\"finished\":1,\"running\":2,\"running_elapsed_ms\":5000}]}";

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private MockRM rm;
  private MockNM nm;
  private String base;

  @Before
  public void setUp() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, QUEUES_AB);
    rm = rms.start(conf(allocation));
    nm = rm.registerNode("127.0.0.1:1234", 16 * 1024, 16);
    base = rms.restBase();
  }

  private MockAM launch(String user) throws Exception {
    RMApp app =
        RmLine.submit(
            rm,
            1024,
            "dag-" + user,
            user,
            "a",
            false,
            YarnConfiguration.DEFAULT_RM_AM_MAX_ATTEMPTS,
            null,
            true,
            false);
    return TidalTestSupport.launchAm(rm, app, nm);
  }

  private String token(MockAM am) throws IOException {
    return amRmToken(rm, am);
  }

  private HttpCall put(ApplicationId app, String token, String json) throws Exception {
    HttpCall.Builder request =
        HttpCall.request("PUT", base + "/apps/" + app + "/hints").body("application/json", json);
    if (token != null) {
      request.header(HintsResource.TOKEN_HEADER, token);
    }
    return request.send();
  }

  @Test(timeout = 120000)
  public void aRegisteredAttemptSetsItsOwnHints() throws Exception {
    MockAM am = launch("alice");
    ApplicationId app = am.getApplicationAttemptId().getApplicationId();

    HttpCall dag = put(app, token(am), DAG);
    assertEquals(dag.toString(), 200, dag.status);
    assertEquals(2, dag.json().path("stages").intValue());
    assertEquals(6, dag.json().path("pending_tasks").longValue());
    long revision = dag.json().path("revision").longValue();

    HttpCall progress = put(app, token(am), PROGRESS);
    assertEquals(progress.toString(), 200, progress.status);
    assertTrue(progress.json().path("revision").longValue() > revision);
    assertEquals(3, progress.json().path("pending_tasks").longValue());

    // The core's validation errors reach the AM as 400 with the field.
    HttpCall cycle =
        put(
            app,
            token(am),
            DAG.replace(
                "\"priorities\":[20]}", "\"parents\":[\"Reducer 2\"],\"priorities\":[20]}"));
    assertEquals(cycle.toString(), 400, cycle.status);
    assertEquals(cycle.message(), "stages[0].parents", namedField(cycle.message()));
    // The AM learns about its application, not the core's internal key for it.
    assertTrue(cycle.message(), cycle.message().contains("hints for " + app + ": "));
    HttpCall negative = put(app, token(am), DAG.replace("30000", "-1"));
    assertEquals(400, negative.status);
    assertEquals(negative.message(), "stages[0].duration_ms", namedField(negative.message()));
    HttpCall malformed = put(app, token(am), "{\"version\":1,\"stages\":[");
    assertEquals(malformed.toString(), 400, malformed.status);
    assertEquals(400, malformed.json().path("status").intValue());

    // Asks at priority 5 only: a DAG that maps none of them is refused, and the app is still
    // scheduled as before.
    am.allocate(
        Collections.singletonList(am.createResourceReq("*", 1024, 5, 2)),
        Collections.<ContainerId>emptyList());
    HttpCall unmatched = put(app, token(am), DAG);
    assertEquals(unmatched.toString(), 400, unmatched.status);
    assertEquals(unmatched.message(), "stages[].priorities", namedField(unmatched.message()));
    assertEquals(2, awaitContainers(am, 2, nm).size());
  }

  @Test(timeout = 120000)
  public void theTokenOfAnotherAppIsRefused() throws Exception {
    MockAM alice = launch("alice");
    MockAM bob = launch("bob");
    ApplicationId bobApp = bob.getApplicationAttemptId().getApplicationId();

    HttpCall stolen = put(bobApp, token(alice), DAG);
    assertEquals(stolen.toString(), 403, stolen.status);
    assertTrue(
        stolen.message(),
        stolen.message().contains(alice.getApplicationAttemptId().toString())
            && stolen.message().contains(bobApp.toString()));
    assertEquals(200, put(bobApp, token(bob), DAG).status);

    // A finished attempt's token is no longer valid.
    ApplicationId aliceApp = alice.getApplicationAttemptId().getApplicationId();
    String oldToken = token(alice);
    MockRM.finishAMAndVerifyAppState(rm.getRMContext().getRMApps().get(aliceApp), rm, nm, alice);
    HttpCall late = put(aliceApp, oldToken, DAG);
    assertEquals(late.toString(), 401, late.status);
  }

  @Test(timeout = 120000)
  public void missingForgedAndGarbageTokensAreRefused() throws Exception {
    MockAM am = launch("alice");
    ApplicationId app = am.getApplicationAttemptId().getApplicationId();

    HttpCall missing = put(app, null, DAG);
    assertEquals(401, missing.status);
    assertTrue(missing.message().contains(HintsResource.TOKEN_HEADER));
    for (String garbage : new String[] {"x", "AAAA", "not a token at all!", "%%%"}) {
      HttpCall call = put(app, garbage, DAG);
      assertEquals(garbage + ": " + call, 401, call.status);
      assertFalse(call.body, call.body.contains("Exception"));
    }

    // The right identifier with a made-up password.
    Token<AMRMTokenIdentifier> real = new Token<AMRMTokenIdentifier>();
    real.decodeFromUrlString(token(am));
    byte[] password = real.getPassword().clone();
    password[0] ^= 1;
    Token<AMRMTokenIdentifier> forged =
        new Token<AMRMTokenIdentifier>(
            real.getIdentifier(), password, real.getKind(), real.getService());
    HttpCall forgery = put(app, forged.encodeToUrlString(), DAG);
    assertEquals(forgery.toString(), 401, forgery.status);
    // The same bytes under another token kind.
    Token<AMRMTokenIdentifier> otherKind =
        new Token<AMRMTokenIdentifier>(
            real.getIdentifier(),
            real.getPassword(),
            new Text("HDFS_DELEGATION_TOKEN"),
            real.getService());
    assertEquals(401, put(app, otherKind.encodeToUrlString(), DAG).status);

    // The genuine token still works, through everything else the endpoint checks.
    assertEquals(
        400,
        HttpCall.request("PUT", base + "/apps/application_x/hints")
            .header(HintsResource.TOKEN_HEADER, token(am))
            .body("application/json", DAG)
            .send()
            .status);
    assertEquals(
        415,
        HttpCall.request("PUT", base + "/apps/" + app + "/hints")
            .header(HintsResource.TOKEN_HEADER, token(am))
            .body("text/plain", DAG)
            .send()
            .status);
    assertEquals(405, HttpCall.request("GET", base + "/apps/" + app + "/hints").send().status);
    char[] big = new char[HintsResource.MAX_HINTS_BODY_BYTES + 1];
    Arrays.fill(big, ' ');
    HttpCall oversized = put(app, token(am), new String(big));
    assertEquals(oversized.toString(), 413, oversized.status);
    assertEquals(200, put(app, token(am), DAG).status);
  }
}
