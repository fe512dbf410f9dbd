package org.tidal.yarn.view;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import javax.servlet.http.HttpServletResponse;

/**
 * A whole answer of the web filter: built before anything is sent, so that a failure while building
 * it becomes an error reply rather than half a page.
 */
public final class WebReply {
  public static final String JSON = "application/json; charset=UTF-8";
  public static final String HTML = "text/html; charset=UTF-8";

  public final int status;
  public final String contentType;
  public final byte[] body;

  public WebReply(int status, String contentType, byte[] body) {
    this.status = status;
    this.contentType = contentType;
    this.body = body;
  }

  public static WebReply json(String json) {
    return new WebReply(200, JSON, json.getBytes(StandardCharsets.UTF_8));
  }

  static WebReply json(JsonNode json) {
    return json(json.toString());
  }

  /** {"status": .., "message": ..}, as the Tidal REST endpoint words its errors. */
  public static WebReply error(int status, String message) {
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.put("status", status);
    body.put("message", message);
    return new WebReply(status, JSON, body.toString().getBytes(StandardCharsets.UTF_8));
  }

  /** Sends the reply; a HEAD request gets the headers only. */
  public void send(HttpServletResponse response, boolean head) throws IOException {
    response.setStatus(status);
    response.setContentType(contentType);
    response.setContentLength(body.length);
    response.setHeader("Cache-Control", "no-cache");
    if (!head) {
      response.getOutputStream().write(body);
    }
  }
}
