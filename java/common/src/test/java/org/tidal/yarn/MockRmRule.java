package org.tidal.yarn;

import static org.junit.Assert.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.function.Function;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.junit.rules.ExternalResource;
import org.tidal.yarn.rest.TidalRestServer;

/**
 * One MockRM per test: queue metrics, which are JVM-wide, start fresh before the test, and the RM
 * it started is stopped after it.
 */
final class MockRmRule extends ExternalResource {
  private MockRM rm;

  @Override
  protected void before() {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  @Override
  protected void after() {
    stop();
  }

  /** Starts an RM that the rule stops after the test. */
  MockRM start(YarnConfiguration conf) {
    return start(conf, MockRM::new);
  }

  /** Starts an RM of a MockRM subclass that the rule stops after the test. */
  MockRM start(YarnConfiguration conf, Function<YarnConfiguration, MockRM> create) {
    rm = create.apply(conf);
    rm.start();
    return rm;
  }

  /** Stops the RM now; the rule has nothing left to stop. */
  void stop() {
    if (rm != null) {
      rm.stop();
      rm = null;
    }
  }

  TidalScheduler scheduler() {
    return (TidalScheduler) rm.getResourceScheduler();
  }

  /** The scheduler's REST endpoint on loopback, up to and including {@code /ws/v1/tidal}. */
  String restBase() {
    return "http://127.0.0.1:" + scheduler().getRestAddress().getPort() + TidalRestServer.PREFIX;
  }

  /** The REST status of one queue: class, burst state, usage and pending asks. */
  JsonNode queueStatus(String queue) throws Exception {
    HttpCall call = HttpCall.request("GET", restBase() + "/queues/" + queue).send();
    assertEquals(call.toString(), 200, call.status);
    return call.json();
  }
}
