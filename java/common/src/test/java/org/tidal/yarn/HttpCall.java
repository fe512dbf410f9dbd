package org.tidal.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.tidal.yarn.io.Streams;

/** A minimal HTTP client for the endpoint tests: status, body and parsed JSON. */
final class HttpCall {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  final int status;
  final String body;

  private HttpCall(int status, String body) {
    this.status = status;
    this.body = body;
  }

  JsonNode json() throws IOException {
    return MAPPER.readTree(body);
  }

  String message() throws IOException {
    return json().path("message").textValue();
  }

  @Override
  public String toString() {
    return status + " " + body;
  }

  /** A request being put together: method, URL, headers and body. */
  static final class Builder {
    private final String method;
    private final String url;
    private final Map<String, String> headers = new LinkedHashMap<String, String>();
    private byte[] body;

    Builder(String method, String url) {
      this.method = method;
      this.url = url;
    }

    Builder header(String name, String value) {
      headers.put(name, value);
      return this;
    }

    Builder body(String contentType, byte[] bytes) {
      headers.put("Content-Type", contentType);
      body = bytes;
      return this;
    }

    Builder body(String contentType, String text) {
      return body(contentType, text.getBytes(StandardCharsets.UTF_8));
    }

    HttpCall send() throws IOException {
      HttpURLConnection connection = (HttpURLConnection) new URL(url).openConnection();
      try {
        connection.setRequestMethod(method);
        connection.setConnectTimeout(10000);
        connection.setReadTimeout(30000);
        for (Map.Entry<String, String> h : headers.entrySet()) {
          connection.setRequestProperty(h.getKey(), h.getValue());
        }
        if (body != null) {
          connection.setDoOutput(true);
          OutputStream out = connection.getOutputStream();
          out.write(body);
          out.close();
        }
        int status = connection.getResponseCode();
        InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
        return new HttpCall(status, in == null ? "" : Streams.readUtf8(in));
      } finally {
        connection.disconnect();
      }
    }
  }

  static Builder request(String method, String url) {
    return new Builder(method, url);
  }
}
