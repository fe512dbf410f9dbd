package org.tidal.it3;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.util.Set;
import java.util.concurrent.TimeUnit;
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

  /**
   * Waits up to 30 s for the admission class of queue {@code shortName} to be one of {@code
   * classes} (admission runs as NodeManagers register); its status entry.
   */
  JsonNode awaitClass(String shortName, Set<String> classes) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      JsonNode q = queue(queues(), shortName);
      if (classes.contains(q.path("class").asText())) {
        return q;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("queue " + shortName + " is not in class " + classes + ": " + q);
      }
      Thread.sleep(250);
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
