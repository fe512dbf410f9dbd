package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.WireLayout;

/**
 * The core's history through the bridge: a BoPF instance whose latency-sensitive queue bursts,
 * driven by heartbeats on the core's clock, reports its samples, the burst and the admission
 * decisions.
 */
public class TestTidalHistory {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** 2 vcore-seconds (and 2 GB-seconds) due within 1 s, every 10 s. */
  private static final String QUEUES =
      "<tidal><policy>bopf</policy><queue name=\"tq\"/>"
          + "<queue name=\"lq\"><type>lq</type><period-sec>10</period-sec>"
          + "<deadline-sec>1</deadline-sec><burst-demand><vcores>2</vcores>"
          + "<memory-mb>2048</memory-mb></burst-demand></queue></tidal>";

  private static final long LQ_APP = 7;

  private long handle;

  @Before
  public void create() {
    handle = TidalNative.create(QUEUES, NativeSettings.forTests());
    TidalNative.addNode(handle, 0, 1, 2, 8192, 8, 0, 0);
  }

  @After
  public void destroy() {
    TidalNative.destroy(handle);
  }

  private JsonNode history(long sinceMs) throws Exception {
    return MAPPER.readTree(TidalNative.historyJson(handle, sinceMs));
  }

  private void heartbeat(long nowMs) {
    TidalNative.nodeHeartbeat(
        handle, 0, nowMs, TidalNative.heartbeatBuffer(10 * WireLayout.DECISION_STRIDE), 0, 10);
  }

  @Test
  public void heartbeatsRecordSharesTheBurstAndAdmissions() throws Exception {
    TidalNative.addApp(handle, LQ_APP, "lq", "alice");
    long[] asks = {1, WireLayout.ANY_LOCATION, 4, 1, 1024, 1, 0, 0};
    TidalNative.allocate(handle, LQ_APP, asks, new long[0], null, null);
    heartbeat(1000);
    heartbeat(1500);
    heartbeat(2500);

    JsonNode all = history(Long.MIN_VALUE);
    assertEquals(all.toString(), 2500, all.path("now_ms").longValue());
    JsonNode samples = all.path("samples");
    assertEquals(all.toString(), 2, samples.size());
    assertEquals(1000, samples.get(0).path("t_ms").longValue());
    assertEquals(2500, samples.get(1).path("t_ms").longValue());
    JsonNode lq = samples.get(0).path("queues").get(1);
    assertEquals("root.lq", lq.path("name").textValue());
    assertEquals("on", lq.path("burst_phase").textValue());
    assertEquals(4, lq.path("running_containers").longValue());
    // Four of eight vcores.
    assertEquals(0.5, lq.path("share").doubleValue(), 1e-9);
    assertEquals(0.25, lq.path("guaranteed_share").doubleValue(), 1e-9);

    JsonNode burst = all.path("bursts").get(0);
    assertEquals("root.lq", burst.path("queue").textValue());
    assertEquals(1000, burst.path("started_ms").longValue());
    assertEquals(2000, burst.path("deadline_at_ms").longValue());
    assertTrue(burst.toString(), burst.path("ended_ms").isNull());

    boolean lqAdmitted = false;
    for (JsonNode a : all.path("admissions")) {
      lqAdmitted |=
          "root.lq".equals(a.path("queue").textValue())
              && a.path("admitted").booleanValue()
              && !a.path("reason").textValue().isEmpty();
    }
    assertTrue(all.path("admissions").toString(), lqAdmitted);

    assertEquals(1, history(1000).path("samples").size());
  }

  @Test
  public void anUnknownHandleIsATidalException() {
    try {
      TidalNative.historyJson(-1, 0);
      fail("history of an unknown handle");
    } catch (TidalException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("unknown or destroyed scheduler handle"));
    }
  }
}
