package org.tidal.yarn;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.codehaus.jackson.node.JsonNodeFactory;
import org.codehaus.jackson.node.ObjectNode;

/**
 * What the REST endpoint answers to one request: a status, a JSON body, extra headers, and the
 * outcome its audit line reports; and the writing of it to the client.
 */
final class RestReply {
  final int status;
  final String json;
  final String outcome;
  private final Map<String, String> headers = new HashMap<String, String>();

  RestReply(int status, String json, String outcome) {
    this.status = status;
    this.json = json;
    this.outcome = outcome;
  }

  /** A refusal or failure as {@code {"status":..,"message":..}}; stack traces stay in the log. */
  static RestReply error(int status, String message) {
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.put("status", status);
    body.put("message", message);
    return new RestReply(status, body.toString(), message);
  }

  /** Adds a header to this reply; returns it. */
  RestReply header(String name, String value) {
    headers.put(name, value);
    return this;
  }

  /** Writes the reply; headers a route already set on the exchange (Allow, say) stay. */
  void send(HttpExchange exchange) throws IOException {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    for (Map.Entry<String, String> header : headers.entrySet()) {
      exchange.getResponseHeaders().set(header.getKey(), header.getValue());
    }
    exchange.sendResponseHeaders(status, bytes.length);
    OutputStream out = exchange.getResponseBody();
    out.write(bytes);
    out.close();
  }
}
