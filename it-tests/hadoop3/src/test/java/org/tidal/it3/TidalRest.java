package org.tidal.it3;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import org.tidal.yarn.TidalScheduler;

/**
 * GET /ws/v1/tidal/queues of the Tidal scheduler in a mini cluster's RM: the core's status with
 * every queue's class, burst, containers and shares. Read with Hadoop 3's own Jackson 2.
 */
final class TidalRest {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final URL queues;

  private TidalRest(URL queues) {
    this.queues = queues;
  }

  static TidalRest of(TidalMiniCluster cluster) throws IOException {
    TidalScheduler scheduler = (TidalScheduler) cluster.resourceManager().getResourceScheduler();
    InetSocketAddress address = scheduler.getRestAddress();
    if (address == null) {
      throw new IllegalStateException("the Tidal REST endpoint is not running");
    }
    return new TidalRest(new URL("http://127.0.0.1:" + address.getPort() + "/ws/v1/tidal/queues"));
  }

  JsonNode queues() throws IOException {
    HttpURLConnection http = (HttpURLConnection) queues.openConnection();
    try {
      http.setConnectTimeout(10_000);
      http.setReadTimeout(30_000);
      if (http.getResponseCode() != 200) {
        throw new IOException("GET " + queues + " answered " + http.getResponseCode());
      }
      try (InputStream in = http.getInputStream()) {
        return MAPPER.readTree(in);
      }
    } finally {
      http.disconnect();
    }
  }

  /** The status entry of one queue, by its short name ("a" for root.a). */
  static JsonNode queue(JsonNode status, String shortName) {
    for (JsonNode q : status.path("queues")) {
      if (("root." + shortName).equals(q.path("name").asText())) {
        return q;
      }
    }
    throw new AssertionError("queue root." + shortName + " is not in the Tidal status: " + status);
  }
}
