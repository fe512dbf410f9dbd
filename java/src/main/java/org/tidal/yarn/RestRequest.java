package org.tidal.yarn;

import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UnsupportedEncodingException;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One request to the REST endpoint, parsed and checked: its method, its decoded path below the
 * endpoint's prefix, its query parameters, its content type, its body read as bounded strict UTF-8,
 * and the caller it names, which its audit line reports. Whatever is wrong with it is a {@link
 * RestException} with the status the client gets.
 */
final class RestRequest {
  /** The query parameter that names the caller under simple authentication, as in Hadoop. */
  static final String USER_PARAM = "user.name";

  private static final int MAX_USER_NAME_LENGTH = 256;

  final String method;
  final List<String> path;
  final Map<String, String> query;
  private final HttpExchange exchange;
  private String caller = "anonymous";

  RestRequest(HttpExchange exchange, String prefix) throws RestException {
    this.exchange = exchange;
    this.path = segments(rawPath(), prefix);
    this.query = parseQuery(exchange.getRequestURI().getRawQuery());
    this.method = exchange.getRequestMethod().toUpperCase(Locale.ROOT);
  }

  String rawPath() {
    return exchange.getRequestURI().getRawPath();
  }

  String header(String name) {
    return exchange.getRequestHeaders().getFirst(name);
  }

  /** Sets a header of whatever reply this request gets, a refusal included. */
  void replyHeader(String name, String value) {
    exchange.getResponseHeaders().set(name, value);
  }

  /** Who made the request, once a resource has identified the caller. */
  String caller() {
    return caller;
  }

  void identify(String caller) {
    this.caller = caller;
  }

  /**
   * The caller named by {@value #USER_PARAM}, as Hadoop's pseudo authentication takes it: 401 when
   * it is missing, 400 when it cannot be a user name.
   */
  String pseudoUser() throws RestException {
    String user = query.get(USER_PARAM);
    if (user == null || user.isEmpty()) {
      replyHeader("WWW-Authenticate", "PseudoAuth");
      throw new RestException(
          401,
          "missing "
              + USER_PARAM
              + " query parameter (simple "
              + "authentication): add ?"
              + USER_PARAM
              + "=<your user name>");
    }
    if (user.length() > MAX_USER_NAME_LENGTH) {
      throw new RestException(
          400, USER_PARAM + " is longer than " + MAX_USER_NAME_LENGTH + " characters");
    }
    for (int i = 0; i < user.length(); i++) {
      char c = user.charAt(i);
      if (Character.isISOControl(c) || Character.isWhitespace(c)) {
        throw new RestException(400, USER_PARAM + " contains whitespace or control characters");
      }
    }
    identify(user);
    return user;
  }

  /** 415 unless the body is declared as one of {@code accepted}. */
  void requireContentType(String... accepted) throws RestException {
    String type = header("Content-Type");
    String bare = type == null ? "" : type.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    for (String a : accepted) {
      if (a.equals(bare)) {
        return;
      }
    }
    // Also keeps browsers from posting here cross-site: these types need a CORS preflight.
    StringBuilder names = new StringBuilder();
    for (String a : accepted) {
      names.append(names.length() == 0 ? "" : " or ").append(a);
    }
    throw new RestException(
        415,
        "Content-Type must be " + names + ", was " + (type == null ? "missing" : "'" + type + "'"));
  }

  /** Reads the body as strict UTF-8, refusing anything over {@code limit} bytes. */
  String body(int limit) throws RestException, IOException {
    String length = header("Content-Length");
    if (length != null) {
      long declared;
      try {
        declared = Long.parseLong(length.trim());
      } catch (NumberFormatException e) {
        throw new RestException(400, "bad Content-Length '" + length + "'");
      }
      if (declared > limit) {
        discard(exchange.getRequestBody(), 4L * limit);
        throw new RestException(
            413,
            "request body of " + declared + " bytes exceeds the limit" + " of " + limit + " bytes");
      }
    }
    InputStream in = exchange.getRequestBody();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    int n;
    while ((n = in.read(buffer)) > 0) {
      if (out.size() + n > limit) {
        discard(in, 4L * limit);
        throw new RestException(413, "request body exceeds the limit of " + limit + " bytes");
      }
      out.write(buffer, 0, n);
    }
    if (out.size() == 0) {
      throw new RestException(400, "empty request body");
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(out.toByteArray()))
          .toString();
    } catch (CharacterCodingException e) {
      throw new RestException(400, "request body is not valid UTF-8");
    }
  }

  /**
   * Reads and drops what the client is still sending, up to {@code cap} bytes: replying while a
   * moderately oversized body is unread would reset the connection before the client reads the 413.
   * Bodies beyond the cap are cut off.
   */
  private static void discard(InputStream in, long cap) throws IOException {
    byte[] buffer = new byte[8192];
    long total = 0;
    int n;
    while (total < cap && (n = in.read(buffer)) > 0) {
      total += n;
    }
  }

  private static List<String> segments(String rawPath, String prefix) throws RestException {
    String rest = rawPath.substring(Math.min(rawPath.length(), prefix.length()));
    List<String> parts = new ArrayList<String>();
    for (String part : rest.split("/")) {
      if (!part.isEmpty()) {
        parts.add(decode(part, false));
      }
    }
    return parts;
  }

  private static Map<String, String> parseQuery(String rawQuery) throws RestException {
    Map<String, String> query = new HashMap<String, String>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return query;
    }
    for (String pair : rawQuery.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = decode(eq < 0 ? pair : pair.substring(0, eq), true);
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1), true);
      query.put(key, value);
    }
    return query;
  }

  private static String decode(String raw, boolean form) throws RestException {
    try {
      // URLDecoder turns '+' into a space, which is right for a query but not for a path.
      return URLDecoder.decode(form ? raw : raw.replace("+", "%2B"), "UTF-8");
    } catch (IllegalArgumentException e) {
      throw new RestException(400, "bad percent-encoding in '" + raw + "'");
    } catch (UnsupportedEncodingException e) {
      throw new IllegalStateException(e);
    }
  }
}
