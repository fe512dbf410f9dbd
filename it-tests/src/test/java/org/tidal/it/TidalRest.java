package org.tidal.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;
import org.tidal.yarn.TidalScheduler;

/**
 * Calls to the Tidal scheduler's own REST endpoint ({@code /ws/v1/tidal/...}) of a mini cluster's
 * RM.
 */
final class TidalRest {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Status code and body of one call. */
  static final class Reply {
    final int status;
    final String body;

    Reply(int status, String body) {
      this.status = status;
      this.body = body;
    }

    @Override
    public String toString() {
      return status + " " + body;
    }
  }

  private final String base;

  private TidalRest(String base) {
    this.base = base;
  }

  /** The endpoint of the Tidal scheduler running in {@code cluster}'s RM. */
  static TidalRest of(MiniClusterHarness cluster) {
    return of(cluster.resourceManager());
  }

  /** The endpoint of the Tidal scheduler running in {@code rm}. */
  static TidalRest of(ResourceManager rm) {
    if (rm == null) {
      throw new IllegalStateException("no active ResourceManager");
    }
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    InetSocketAddress address = scheduler.getRestAddress();
    if (address == null) {
      throw new IllegalStateException("the Tidal REST endpoint is not running");
    }
    return new TidalRest("http://127.0.0.1:" + address.getPort() + "/ws/v1/tidal");
  }

  /** The endpoint at {@code base} (http://host:port/ws/v1/tidal): an RM in another process. */
  static TidalRest at(String base) {
    return new TidalRest(base);
  }

  String base() {
    return base;
  }

  /** GET /ws/v1/tidal/queues: the core's status with every queue's class, burst and shares. */
  JsonNode queues() throws IOException {
    Reply reply = call("GET", "/queues", null, null, null);
    if (reply.status != 200) {
      throw new IOException("GET " + base + "/queues answered " + reply);
    }
    return MAPPER.readTree(reply.body);
  }

  /**
   * POST /ws/v1/tidal/queues as {@code user}: registers the queue a {@code <queue>} element
   * defines.
   */
  Reply registerQueue(String user, String queueXml) throws IOException {
    return call("POST", "/queues?user.name=" + user, null, "application/xml", queueXml);
  }

  /** PUT /ws/v1/tidal/apps/{app}/hints with an AMRM token, as an ApplicationMaster would. */
  Reply putHints(String appId, String encodedToken, String json) throws IOException {
    return call("PUT", "/apps/" + appId + "/hints", encodedToken, "application/json", json);
  }

  private Reply call(String method, String path, String token, String contentType, String body)
      throws IOException {
    HttpURLConnection http = (HttpURLConnection) new URL(base + path).openConnection();
    try {
      http.setRequestMethod(method);
      http.setConnectTimeout(10_000);
      http.setReadTimeout(30_000);
      if (token != null) {
        http.setRequestProperty("X-Tidal-AMRM-Token", token);
      }
      if (body != null) {
        http.setDoOutput(true);
        http.setRequestProperty("Content-Type", contentType);
        try (OutputStream out = http.getOutputStream()) {
          out.write(body.getBytes(StandardCharsets.UTF_8));
        }
      }
      int status = http.getResponseCode();
      InputStream in = status >= 400 ? http.getErrorStream() : http.getInputStream();
      return new Reply(status, in == null ? "" : readAll(in));
    } finally {
      http.disconnect();
    }
  }

  /** The status entry of one queue, by its short name ("a" for root.a). */
  static JsonNode queue(JsonNode status, String shortName) {
    for (JsonNode q : status.path("queues")) {
      if (("root." + shortName).equals(q.path("name").getTextValue())) {
        return q;
      }
    }
    throw new AssertionError("queue root." + shortName + " is not in the Tidal status: " + status);
  }

  private static String readAll(InputStream in) throws IOException {
    try (InputStream s = in) {
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      s.transferTo(buf);
      return buf.toString(StandardCharsets.UTF_8);
    }
  }
}
