package org.tidal.yarn;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UnsupportedEncodingException;
import java.net.InetSocketAddress;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.UserGroupInformation.AuthenticationMethod;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.util.ConverterUtils;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;
import org.codehaus.jackson.node.ObjectNode;

/**
 * The scheduler's own HTTP endpoint (JDK built-in server, so the jar needs no web framework):
 *
 * <pre>
 *   GET    /ws/v1/tidal/queues                     every queue's class, burst state, shares
 *   GET    /ws/v1/tidal/queues/{queue}             one queue
 *   POST   /ws/v1/tidal/queues?user.name=U         register a queue (a &lt;queue&gt; element)
 *   DELETE /ws/v1/tidal/queues/{queue}?user.name=U unregister a queue registered at run time
 *   PUT    /ws/v1/tidal/apps/{appId}/hints         an ApplicationMaster's hints (JSON), with
 *                                                  header X-Tidal-AMRM-Token
 * </pre>
 *
 * <p>Queue changes identify the caller the way Hadoop's pseudo authentication does
 * ({@code user.name}), so they are refused when Kerberos is on: the endpoint cannot check a
 * SPNEGO ticket. Hints are authenticated by the application attempt's AMRM token instead,
 * which the RM issued and can verify under either mode. Errors reach the client as
 * {@code {"status":..,"message":..}}; stack traces stay in the RM log.
 */
final class TidalRestServer {
  static final String PREFIX = "/ws/v1/tidal";
  static final String USER_PARAM = "user.name";
  static final String TOKEN_HEADER = "X-Tidal-AMRM-Token";
  /** A queue definition is a few hundred bytes; the limit only stops abuse. */
  static final int MAX_QUEUE_BODY_BYTES = 64 * 1024;
  /** The core's limit on a hints document (MAX_HINTS_BYTES in hints.rs). */
  static final int MAX_HINTS_BODY_BYTES = 1 << 20;
  private static final int MAX_USER_NAME_LENGTH = 256;
  private static final int THREADS = 4;

  private static final Log LOG = LogFactory.getLog(TidalRestServer.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final TidalScheduler scheduler;
  private final InetSocketAddress requested;
  private final boolean simpleAuth;
  private final boolean aclsEnabled;
  private final AccessControlList adminAcl;
  private final AmRmTokenVerifier tokens;
  private HttpServer server;
  private ExecutorService executor;

  TidalRestServer(TidalScheduler scheduler, Configuration conf) {
    this.scheduler = scheduler;
    this.requested = NetUtils.createSocketAddr(
        conf.getTrimmed(TidalScheduler.REST_ADDRESS, TidalScheduler.DEFAULT_REST_ADDRESS),
        TidalScheduler.DEFAULT_REST_PORT, TidalScheduler.REST_ADDRESS);
    this.simpleAuth = SecurityUtil.getAuthenticationMethod(conf) == AuthenticationMethod.SIMPLE;
    this.aclsEnabled = conf.getBoolean(YarnConfiguration.YARN_ACL_ENABLE,
        YarnConfiguration.DEFAULT_YARN_ACL_ENABLE);
    this.adminAcl = new AccessControlList(conf.get(YarnConfiguration.YARN_ADMIN_ACL,
        YarnConfiguration.DEFAULT_YARN_ADMIN_ACL));
    this.tokens = new AmRmTokenVerifier(scheduler);
  }

  void start() throws IOException {
    final AtomicInteger threadNumber = new AtomicInteger();
    executor = Executors.newFixedThreadPool(THREADS, new ThreadFactory() {
      @Override
      public Thread newThread(Runnable r) {
        Thread t = new Thread(r, "tidal-rest-" + threadNumber.incrementAndGet());
        t.setDaemon(true);
        return t;
      }
    });
    try {
      server = HttpServer.create(requested, 64);
    } catch (IOException e) {
      executor.shutdownNow();
      throw new IOException("Cannot bind the Tidal REST endpoint to " + requested + " ("
          + TidalScheduler.REST_ADDRESS + "): " + e.getMessage(), e);
    }
    server.setExecutor(executor);
    server.createContext(PREFIX + "/", new HttpHandler() {
      @Override
      public void handle(HttpExchange exchange) {
        serve(exchange);
      }
    });
    server.start();
    LOG.info("Tidal REST endpoint listening on http://"
        + NetUtils.getHostPortString(address()) + PREFIX + "/ (queue changes: "
        + (simpleAuth ? "simple authentication by " + USER_PARAM
            : "refused, Kerberos is on and SPNEGO is not supported")
        + "; administrators: " + (aclsEnabled ? YarnConfiguration.YARN_ADMIN_ACL + "=" + adminAcl
            .getAclString() : "none, " + YarnConfiguration.YARN_ACL_ENABLE + " is false") + ")");
  }

  /** The bound address (the real port when the configured one was 0). */
  InetSocketAddress address() {
    return server.getAddress();
  }

  void stop() {
    if (server != null) {
      server.stop(0);
      server = null;
    }
    if (executor != null) {
      executor.shutdownNow();
      try {
        executor.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      executor = null;
    }
  }

  /** What a route answers: a status, a JSON body, and optional headers. */
  private static final class Reply {
    final int status;
    final String json;
    final String outcome;
    final Map<String, String> headers = new HashMap<String, String>();

    Reply(int status, String json, String outcome) {
      this.status = status;
      this.json = json;
      this.outcome = outcome;
    }
  }

  /** Per-request facts the audit line reports. */
  private static final class Request {
    final HttpExchange exchange;
    final String method;
    final List<String> path;
    final Map<String, String> query;
    String caller = "anonymous";

    Request(HttpExchange exchange, List<String> path, Map<String, String> query) {
      this.exchange = exchange;
      this.method = exchange.getRequestMethod().toUpperCase(Locale.ROOT);
      this.path = path;
      this.query = query;
    }
  }

  private void serve(HttpExchange exchange) {
    String method = exchange.getRequestMethod();
    String rawPath = exchange.getRequestURI().getRawPath();
    Request request = null;
    Reply reply;
    try {
      request = new Request(exchange, segments(rawPath),
          parseQuery(exchange.getRequestURI().getRawQuery()));
      reply = route(request);
    } catch (RestException e) {
      reply = error(e.status, e.getMessage());
    } catch (TidalPanicException e) {
      LOG.error("Tidal core panicked serving " + method + " " + rawPath, e);
      reply = error(500, "internal error in the Tidal scheduler; see the ResourceManager log");
    } catch (TidalException e) {
      reply = error(400, e.getMessage());
    } catch (Throwable t) {
      LOG.error("Failed to serve " + method + " " + rawPath, t);
      reply = error(500, "internal error in the Tidal scheduler; see the ResourceManager log");
    }
    try {
      send(exchange, reply);
    } catch (IOException e) {
      LOG.info("Could not send the reply to " + method + " " + rawPath + ": " + e.getMessage());
    } finally {
      exchange.close();
    }
    LOG.info("REST " + method + " " + rawPath + " by "
        + (request == null ? "anonymous" : request.caller) + " from "
        + addressOf(exchange) + ": " + reply.status + " " + reply.outcome);
  }

  private static String addressOf(HttpExchange exchange) {
    InetSocketAddress remote = exchange.getRemoteAddress();
    return remote == null ? "?" : NetUtils.getHostPortString(remote);
  }

  private Reply route(Request request) throws Exception {
    List<String> p = request.path;
    if (!p.isEmpty() && p.get(0).equals("queues")) {
      if (p.size() == 1) {
        if (request.method.equals("GET")) {
          return new Reply(200, MAPPER.writeValueAsString(status()), "queue status");
        }
        if (request.method.equals("POST")) {
          return registerQueue(request);
        }
        throw notAllowed(request, "GET, POST");
      }
      if (p.size() == 2) {
        if (request.method.equals("GET")) {
          return queueStatus(p.get(1));
        }
        if (request.method.equals("DELETE")) {
          return unregisterQueue(request, p.get(1));
        }
        throw notAllowed(request, "GET, DELETE");
      }
    }
    if (p.size() == 3 && p.get(0).equals("apps") && p.get(2).equals("hints")) {
      if (request.method.equals("PUT")) {
        return setHints(request, p.get(1));
      }
      throw notAllowed(request, "PUT");
    }
    throw new RestException(404, "no such resource: " + request.exchange.getRequestURI()
        .getRawPath());
  }

  private static RestException notAllowed(Request request, String allowed) {
    request.exchange.getResponseHeaders().set("Allow", allowed);
    return new RestException(405, request.method + " is not allowed here; use " + allowed);
  }

  // ---------------------------------------------------------------------------------------
  // Queues

  /**
   * The core's status with burst times on the wall clock (the core counts from the
   * scheduler's start), so clients can show them as dates.
   */
  private JsonNode status() throws IOException {
    JsonNode root = MAPPER.readTree(scheduler.queueStatusJson());
    for (JsonNode queue : root.path("queues")) {
      JsonNode burst = queue.path("burst");
      if (burst.isObject()) {
        for (String field : new String[] {"started_ms", "deadline_at_ms"}) {
          if (burst.path(field).isNumber()) {
            ((ObjectNode) burst).put(field,
                scheduler.wallClockMs(burst.path(field).getLongValue()));
          }
        }
      }
    }
    return root;
  }

  private Reply queueStatus(String name) throws RestException, IOException {
    String fullName = TidalScheduler.fullQueueName(name);
    JsonNode root = status();
    for (JsonNode queue : root.path("queues")) {
      if (fullName.equals(queue.path("name").getTextValue())) {
        return new Reply(200, MAPPER.writeValueAsString(queue), "status of " + fullName);
      }
    }
    throw new RestException(404, "unknown queue '" + fullName + "'");
  }

  private Reply registerQueue(Request request) throws RestException, IOException {
    String user = queueCaller(request);
    requireContentType(request, "application/xml", "text/xml");
    String xml = body(request.exchange, MAX_QUEUE_BODY_BYTES);
    String verdict;
    try {
      verdict = scheduler.registerQueue(xml, user, isAdmin(user));
    } catch (TidalPanicException e) {
      throw e;
    } catch (TidalException e) {
      throw queueError(e);
    }
    JsonNode node = MAPPER.readTree(verdict);
    String queue = node.path("queue").getTextValue();
    String admissionClass = node.path("class").getTextValue();
    String outcome = "queue " + queue + " " + admissionClass + ": "
        + node.path("reason").getTextValue();
    if ("rejected".equals(admissionClass)) {
      return new Reply(409, verdict, outcome);
    }
    Reply reply = new Reply(201, verdict, outcome);
    reply.headers.put("Location", PREFIX + "/queues/" + queue);
    return reply;
  }

  private Reply unregisterQueue(Request request, String name) throws RestException {
    String user = queueCaller(request);
    String fullName = TidalScheduler.fullQueueName(name);
    try {
      scheduler.unregisterQueue(fullName, user, isAdmin(user));
    } catch (TidalPanicException e) {
      throw e;
    } catch (TidalException e) {
      throw queueError(e);
    }
    ObjectNode body = MAPPER.createObjectNode();
    body.put("queue", fullName);
    body.put("unregistered", true);
    return new Reply(200, body.toString(), "queue " + fullName + " unregistered");
  }

  /**
   * Maps the core's refusal of a queue change to an HTTP status. The core reports every
   * refusal as one exception type, so the status is read from its (stable, tested) wording.
   */
  static RestException queueError(TidalException e) {
    String message = e.getMessage() == null ? "refused" : e.getMessage();
    int status;
    if (message.contains("may not change queue")) {
      status = 403;
    } else if (message.contains("already exists") || message.contains("still has applications")
        || message.contains("is defined in the allocation file")) {
      status = 409;
    } else if (message.startsWith("unknown queue")) {
      status = 404;
    } else if (message.startsWith("unknown or destroyed scheduler handle")) {
      status = 503;
    } else {
      status = 400;
    }
    return new RestException(status, message);
  }

  /** The caller of a queue change under simple authentication. */
  private String queueCaller(Request request) throws RestException {
    if (!simpleAuth) {
      throw new RestException(501, "Queue changes over this endpoint need simple "
          + "authentication (" + USER_PARAM + "); hadoop.security.authentication is not simple "
          + "and SPNEGO (Kerberos) is not supported by the Tidal endpoint yet. Change queues "
          + "in the allocation file and run yarn rmadmin -refreshQueues instead.");
    }
    String user = request.query.get(USER_PARAM);
    if (user == null || user.isEmpty()) {
      request.exchange.getResponseHeaders().set("WWW-Authenticate", "PseudoAuth");
      throw new RestException(401, "missing " + USER_PARAM + " query parameter (simple "
          + "authentication): add ?" + USER_PARAM + "=<your user name>");
    }
    if (user.length() > MAX_USER_NAME_LENGTH) {
      throw new RestException(400, USER_PARAM + " is longer than " + MAX_USER_NAME_LENGTH
          + " characters");
    }
    for (int i = 0; i < user.length(); i++) {
      char c = user.charAt(i);
      if (Character.isISOControl(c) || Character.isWhitespace(c)) {
        throw new RestException(400, USER_PARAM + " contains whitespace or control characters");
      }
    }
    request.caller = user;
    return user;
  }

  /**
   * Administrators (who may remove any user's queue) are the members of yarn.admin.acl when
   * YARN ACLs are on. With ACLs off nobody is, so a user's queue is only ever removed by its
   * owner; Hadoop's "ACLs off means everyone is an administrator" would make ownership moot.
   */
  boolean isAdmin(String user) {
    return aclsEnabled && adminAcl.isUserAllowed(UserGroupInformation.createRemoteUser(user));
  }

  // ---------------------------------------------------------------------------------------
  // Hints

  private Reply setHints(Request request, String app) throws RestException, IOException {
    ApplicationId appId;
    try {
      appId = ConverterUtils.toApplicationId(app);
    } catch (RuntimeException e) {
      throw new RestException(400, "'" + app + "' is not an application id");
    }
    ApplicationAttemptId attempt =
        tokens.authenticate(request.exchange.getRequestHeaders().getFirst(TOKEN_HEADER));
    request.caller = attempt.toString();
    tokens.authorize(attempt, appId);
    requireContentType(request, "application/json");
    String json = body(request.exchange, MAX_HINTS_BODY_BYTES);
    String reply;
    try {
      reply = scheduler.setHints(attempt, json);
    } catch (TidalPanicException e) {
      throw e;
    } catch (TidalException e) {
      String message = e.getMessage() == null ? "refused" : e.getMessage();
      // The attempt may have finished between the token check and the call.
      throw new RestException(message.startsWith("unknown application") ? 409 : 400, message);
    }
    return new Reply(200, reply, "hints accepted");
  }

  // ---------------------------------------------------------------------------------------
  // HTTP plumbing

  private static void requireContentType(Request request, String... accepted)
      throws RestException {
    String type = request.exchange.getRequestHeaders().getFirst("Content-Type");
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
    throw new RestException(415, "Content-Type must be " + names + ", was "
        + (type == null ? "missing" : "'" + type + "'"));
  }

  /** Reads the request body as strict UTF-8, refusing anything over {@code limit} bytes. */
  static String body(HttpExchange exchange, int limit) throws RestException, IOException {
    String length = exchange.getRequestHeaders().getFirst("Content-Length");
    if (length != null) {
      long declared;
      try {
        declared = Long.parseLong(length.trim());
      } catch (NumberFormatException e) {
        throw new RestException(400, "bad Content-Length '" + length + "'");
      }
      if (declared > limit) {
        discard(exchange.getRequestBody(), 4L * limit);
        throw new RestException(413, "request body of " + declared + " bytes exceeds the limit"
            + " of " + limit + " bytes");
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
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(out.toByteArray())).toString();
    } catch (CharacterCodingException e) {
      throw new RestException(400, "request body is not valid UTF-8");
    }
  }

  /**
   * Reads and drops what the client is still sending, up to {@code cap} bytes: replying while
   * a moderately oversized body is unread would reset the connection before the client reads
   * the 413. Bodies beyond the cap are cut off.
   */
  private static void discard(InputStream in, long cap) throws IOException {
    byte[] buffer = new byte[8192];
    long total = 0;
    int n;
    while (total < cap && (n = in.read(buffer)) > 0) {
      total += n;
    }
  }

  private static List<String> segments(String rawPath) throws RestException {
    String rest = rawPath.substring(Math.min(rawPath.length(), PREFIX.length()));
    List<String> parts = new ArrayList<String>();
    for (String part : rest.split("/")) {
      if (!part.isEmpty()) {
        parts.add(decode(part, false));
      }
    }
    return parts;
  }

  static Map<String, String> parseQuery(String rawQuery) throws RestException {
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

  private static Reply error(int status, String message) {
    ObjectNode body = MAPPER.createObjectNode();
    body.put("status", status);
    body.put("message", message);
    return new Reply(status, body.toString(), message);
  }

  private static void send(HttpExchange exchange, Reply reply) throws IOException {
    byte[] bytes = reply.json.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    for (Map.Entry<String, String> header : reply.headers.entrySet()) {
      exchange.getResponseHeaders().set(header.getKey(), header.getValue());
    }
    exchange.sendResponseHeaders(reply.status, bytes.length);
    OutputStream out = exchange.getResponseBody();
    out.write(bytes);
    out.close();
  }
}
