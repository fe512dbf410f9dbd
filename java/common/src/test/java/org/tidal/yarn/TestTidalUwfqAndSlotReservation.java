package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.tidal.yarn.TidalTestSupport.amRmToken;
import static org.tidal.yarn.TidalTestSupport.awaitContainers;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.heartbeat;
import static org.tidal.yarn.TidalTestSupport.poll;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.rest.HintsResource;

/**
 * The two techniques adapted from Spark papers, inside a MockRM: UWFQ ordering apps of several
 * users, and speculative slot reservation holding a DAG app's slots across its barrier.
 */
public class TestTidalUwfqAndSlotReservation {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private MockRM rm;

  private void start(String queues) throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, queues);
    rm = rms.start(conf(allocation));
  }

  private MockAM launch(String user, String queue, MockNM nm) throws Exception {
    RMApp app =
        RmLine.submit(
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
    return TidalTestSupport.launchAm(rm, app, nm);
  }

  private void ask(MockAM am, int priority, int containers) throws Exception {
    am.allocate(
        Collections.singletonList(am.createResourceReq("*", 1024, priority, containers)),
        new ArrayList<ContainerId>());
  }

  /** The REST status of all queues ({@code ""}) or of {@code "/" + queue}. */
  private JsonNode status(String path) throws Exception {
    String url = rms.restBase() + "/queues" + path;
    HttpCall call = HttpCall.request("GET", url).send();
    assertEquals(call.toString(), 200, call.status);
    return call.json();
  }

  /**
   * Three apps of a heavy user are submitted before one app of a light user, each asking for three
   * containers, with six slots free. UWFQ gives each user half the cluster in virtual time: the
   * heavy user's first job and the light user's job finish first there (a tie the earlier job
   * wins), so they get the six slots. FIFO would give them to the heavy user's first two jobs;
   * job-level fairness would split them four ways.
   */
  @Test(timeout = 120000)
  public void uwfqServesTheLightUsersJobBeforeTheHeavyUsersBacklog() throws Exception {
    start(
        "<tidal><policy>drf</policy><app-policy>uwfq</app-policy>"
            + "<queue name=\"shared\"/></tidal>");
    MockNM nm = rm.registerNode("127.0.0.1:1234", 10 * 1024, 10);
    List<MockAM> heavy = new ArrayList<MockAM>();
    for (int i = 0; i < 3; i++) {
      heavy.add(launch("heavy", "shared", nm));
    }
    MockAM light = launch("light", "shared", nm);
    for (MockAM am : heavy) {
      ask(am, 1, 3);
    }
    ask(light, 1, 3);
    assertEquals(3, awaitContainers(light, 3, nm).size());
    assertEquals(3, awaitContainers(heavy.get(0), 3, nm).size());
    // The six slots are taken; whatever the later jobs had been given would be theirs to pull.
    heartbeat(rm, nm);
    assertEquals(10, rms.scheduler().getNodeReport(nm.getNodeId()).getNumContainers());
    List<Integer> backlog = new ArrayList<Integer>();
    for (MockAM am : heavy.subList(1, 3)) {
      backlog.add(poll(am).getAllocatedContainers().size());
    }
    assertEquals("the heavy user's later jobs wait", Arrays.asList(0, 0), backlog);
    assertEquals("uwfq", status("").path("app_policy").textValue());
  }

  /**
   * A hinted DAG app of a reserving queue finishes its four map containers: its reduce stage has
   * two tasks, so Algorithm 1 releases two slots (the other queue's app takes them) and holds two.
   * The other app, still asking, gets no more; the reducers land on the held slots.
   */
  @Test(timeout = 120000)
  public void aReservingAppKeepsItsSlotsAcrossTheBarrier() throws Exception {
    start(
        "<tidal><policy>drf</policy>"
            + "<queue name=\"fg\"><slot-reservation isolation-probability=\"1\"/></queue>"
            + "<queue name=\"bg\"/></tidal>");
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8 * 1024, 8);
    MockAM fg = launch("alice", "fg", nm);
    MockAM bg = launch("bob", "bg", nm);
    String dag =
        "{\"version\":1,\"stages\":["
            + "{\"id\":\"map\",\"tasks\":4,\"demand\":{\"memory_mb\":1024,\"vcores\":1},"
            + "\"duration_ms\":1000,\"priorities\":[20]},"
            + "{\"id\":\"reduce\",\"tasks\":2,\"demand\":{\"memory_mb\":1024,\"vcores\":1},"
            + "\"duration_ms\":1000,\"parents\":[\"map\"],\"priorities\":[21]}]}";
    ApplicationAttemptId attempt = fg.getApplicationAttemptId();
    HttpCall hints =
        HttpCall.request("PUT", rms.restBase() + "/apps/" + attempt.getApplicationId() + "/hints")
            .header(HintsResource.TOKEN_HEADER, amRmToken(rm, fg))
            .body("application/json", dag)
            .send();
    assertEquals(hints.toString(), 200, hints.status);
    assertEquals(2, hints.json().path("stages").intValue());

    ask(fg, 20, 4);
    List<Container> maps = awaitContainers(fg, 4, nm);
    ask(bg, 5, 10);
    assertEquals(2, awaitContainers(bg, 2, nm).size());

    for (Container map : maps) {
      nm.nodeHeartbeat(attempt, map.getId().getContainerId(), ContainerState.COMPLETE);
    }
    // Two of the four freed slots go to bg, two stay held for fg.
    assertEquals(2, awaitContainers(bg, 2, nm).size());
    heartbeat(rm, nm);
    heartbeat(rm, nm);
    assertEquals("bg got a held slot", 0, poll(bg).getAllocatedContainers().size());
    JsonNode reservations = status("/fg").path("reservations");
    assertEquals(reservations.toString(), 1, reservations.size());
    assertEquals(2, reservations.get(0).path("held_slots").intValue());
    assertEquals(2048, reservations.get(0).path("reserved_memory_mb").intValue());

    ask(fg, 21, 2);
    assertEquals(2, awaitContainers(fg, 2, nm).size());
    assertEquals(0, status("/fg").path("reservations").get(0).path("held_slots").intValue());
  }
}
