package org.tidal.yarn.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.file.Files;
import java.text.SimpleDateFormat;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.io.Streams;

/**
 * Command line client of the Tidal REST endpoint, run as {@code yarn
 * org.tidal.yarn.cli.TidalQueueCli <command>} so that the cluster's configuration is on the
 * classpath:
 *
 * <pre>
 *   -list                  every queue: type, class, owner, shares, burst phase
 *   -status &lt;queue&gt;        one queue in detail, with the admission reason
 *   -register &lt;queue.xml&gt;  register a queue (a &lt;queue&gt; element); prints the verdict
 *   -unregister &lt;queue&gt;    remove a queue you registered
 * </pre>
 *
 * The endpoint is {@code tidal.rest.address}, or else the host of {@code
 * yarn.resourcemanager.webapp.address} (see {@link TidalConfig#restAddress}); when that is a
 * wildcard address the host is {@code yarn.resourcemanager.hostname} (with RM HA, each RM's in
 * turn, since only the active one serves). The caller is the current Hadoop user, sent as {@code
 * user.name}.
 *
 * <p>Exit codes: 0 done, 1 refused by the scheduler or endpoint unreachable, 2 bad usage.
 */
public class TidalQueueCli extends Configured implements Tool {
  static final String API = "/ws/v1/tidal/queues";
  private static final int CONNECT_TIMEOUT_MS = 10000;
  private static final int READ_TIMEOUT_MS = 60000;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final PrintStream out;
  private final PrintStream err;

  public TidalQueueCli() {
    this(System.out, System.err);
  }

  public TidalQueueCli(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new YarnConfiguration(), new TidalQueueCli(), args));
  }

  private void usage() {
    err.println("Usage: yarn " + TidalQueueCli.class.getName() + " <command>");
    err.println("  -list                    list the queues with their class, shares and burst");
    err.println("  -status <queue>          show one queue in detail");
    err.println(
        "  -register <queue.xml>    register a queue from a <queue> element, print the"
            + " admission verdict");
    err.println("  -unregister <queue>      remove a queue you registered");
  }

  @Override
  public int run(String[] args) {
    if (args.length == 0) {
      usage();
      return 2;
    }
    String command = args[0];
    boolean takesArgument =
        command.equals("-status") || command.equals("-register") || command.equals("-unregister");
    if (!(takesArgument || command.equals("-list")) || args.length != (takesArgument ? 2 : 1)) {
      if (!command.equals("-help")) {
        err.println("Invalid arguments: " + String.join(" ", args));
      }
      usage();
      return command.equals("-help") ? 0 : 2;
    }
    Configuration conf = getConf() != null ? getConf() : new YarnConfiguration();
    try {
      if (command.equals("-list")) {
        return list(conf);
      } else if (command.equals("-status")) {
        return status(conf, args[1]);
      } else if (command.equals("-register")) {
        return register(conf, new File(args[1]));
      } else {
        return unregister(conf, args[1]);
      }
    } catch (IOException e) {
      err.println("Error: " + e.getMessage());
      return 1;
    }
  }

  // ---------------------------------------------------------------------------------------
  // Commands

  private int list(Configuration conf) throws IOException {
    Response response = call(conf, "GET", API, null, null);
    if (response.status != 200) {
      return refused(response);
    }
    JsonNode root = response.json();
    JsonNode cluster = root.path("cluster");
    out.println(
        "Policy: "
            + root.path("policy").textValue()
            + ", "
            + root.path("nodes").intValue()
            + " nodes, cluster "
            + cluster.path("memory_mb").longValue()
            + " MB "
            + cluster.path("vcores").longValue()
            + " vcores");
    String format = "%-24s %-4s %-9s %-12s %6s %5s %8s %8s %7s %7s %9s %-8s%n";
    out.printf(
        Locale.ROOT,
        format,
        "QUEUE",
        "TYPE",
        "CLASS",
        "OWNER",
        "WEIGHT",
        "APPS",
        "RUNNING",
        "PENDING",
        "SHARE",
        "FAIR",
        "LONG-TERM",
        "BURST");
    for (JsonNode q : root.path("queues")) {
      JsonNode burst = q.path("burst");
      out.printf(
          Locale.ROOT,
          format,
          q.path("name").textValue(),
          q.path("type").textValue(),
          q.path("class").textValue(),
          text(q.path("owner")),
          number(q.path("weight")),
          q.path("apps").intValue(),
          q.path("running_containers").longValue(),
          q.path("pending_containers").longValue(),
          percent(q.path("dominant_share")),
          percent(q.path("fair_share")),
          percent(q.path("long_term_share")),
          burst.isObject() ? burst.path("phase").textValue() : "-");
    }
    return 0;
  }

  private int status(Configuration conf, String queue) throws IOException {
    Response response = call(conf, "GET", API + "/" + pathSegment(queue), null, null);
    if (response.status != 200) {
      return refused(response);
    }
    JsonNode q = response.json();
    row("Queue", q.path("name").textValue());
    row(
        "Type",
        q.path("type").textValue()
            + (q.path("retired").booleanValue() ? " (removed, apps still running)" : ""));
    row("Owner", text(q.path("owner")));
    row("Weight", number(q.path("weight")));
    row("Class", q.path("class").textValue());
    String reason = q.path("admission_reason").textValue();
    row("Admission", reason == null || reason.isEmpty() ? "-" : reason);
    JsonNode rate = q.path("guaranteed");
    row("Guarantee", rate.isObject() ? resources(rate) + " while a burst is on" : "-");
    JsonNode burst = q.path("burst");
    if (burst.isObject()) {
      StringBuilder b = new StringBuilder(burst.path("phase").textValue());
      if (burst.path("started_ms").isNumber()) {
        b.append(", started ").append(time(burst.path("started_ms").longValue()));
      }
      if (burst.path("deadline_at_ms").isNumber()) {
        b.append(", deadline ").append(time(burst.path("deadline_at_ms").longValue()));
      }
      row("Burst", b.toString());
      row(
          "Burst consumed",
          String.format(
              Locale.ROOT,
              "%.0f of %d MB-s, %.0f of %d vcore-s",
              burst.path("consumed").path(0).doubleValue(),
              burst.path("demand").path(0).longValue(),
              burst.path("consumed").path(1).doubleValue(),
              burst.path("demand").path(1).longValue()));
      row(
          "Bursts",
          burst.path("bursts_started").longValue()
              + " started, "
              + burst.path("bursts_met_deadline").longValue()
              + " met their deadline");
    } else {
      row("Burst", "-");
    }
    row(
        "Applications",
        q.path("apps").intValue()
            + " runnable, "
            + q.path("waiting_apps").intValue()
            + " waiting for a running-apps limit");
    row(
        "Containers",
        q.path("running_containers").longValue()
            + " running, "
            + q.path("pending_containers").longValue()
            + " pending");
    row("Used", resources(q.path("used")));
    row("Pending", resources(q.path("pending")));
    row("Dominant share", percent(q.path("dominant_share")));
    row("Fair share", percent(q.path("fair_share")));
    row("Long-term share", percent(q.path("long_term_share")));
    return 0;
  }

  private int register(Configuration conf, File file) throws IOException {
    byte[] xml;
    try {
      xml = Files.readAllBytes(file.toPath());
    } catch (IOException e) {
      throw new IOException("cannot read " + file + ": " + e.getMessage(), e);
    }
    Response response = call(conf, "POST", API, "application/xml; charset=utf-8", xml);
    JsonNode verdict =
        response.status == 201 || response.status == 409 ? response.jsonOrNull() : null;
    if (verdict == null || !verdict.has("class")) {
      return refused(response);
    }
    String admissionClass = verdict.path("class").textValue();
    String queue = verdict.path("queue").textValue();
    String reason = verdict.path("reason").textValue();
    if (!verdict.path("admitted").booleanValue()) {
      err.println("Queue " + queue + " was rejected by admission control: " + reason);
      return 1;
    }
    out.println("Queue " + queue + " registered: class " + admissionClass);
    if (reason != null && !reason.isEmpty()) {
      out.println("Reason: " + reason);
    }
    return 0;
  }

  private int unregister(Configuration conf, String queue) throws IOException {
    Response response = call(conf, "DELETE", API + "/" + pathSegment(queue), null, null);
    if (response.status != 200) {
      return refused(response);
    }
    out.println("Queue " + response.json().path("queue").textValue() + " unregistered");
    return 0;
  }

  private int refused(Response response) {
    JsonNode body = response.jsonOrNull();
    String message =
        body != null && body.has("message") ? body.path("message").textValue() : response.body;
    err.println("Error (HTTP " + response.status + "): " + message);
    return 1;
  }

  // ---------------------------------------------------------------------------------------
  // Formatting

  private void row(String key, String value) {
    out.printf(Locale.ROOT, "%-18s %s%n", key + ":", value);
  }

  private static String text(JsonNode node) {
    return node.isTextual() ? node.textValue() : "-";
  }

  private static String number(JsonNode node) {
    double v = node.doubleValue();
    return v == Math.rint(v) ? String.valueOf((long) v) : String.format(Locale.ROOT, "%.2f", v);
  }

  private static String percent(JsonNode node) {
    return String.format(Locale.ROOT, "%.1f%%", 100 * node.doubleValue());
  }

  private static String resources(JsonNode node) {
    return node.path("memory_mb").longValue()
        + " MB, "
        + node.path("vcores").longValue()
        + " vcores";
  }

  private static String time(long ms) {
    return new SimpleDateFormat("yyyy-MM-dd HH:mm:ss", Locale.ROOT).format(new Date(ms));
  }

  // ---------------------------------------------------------------------------------------
  // HTTP

  /** What the endpoint answered: the HTTP status and the body. */
  static final class Response {
    final int status;
    final String body;

    Response(int status, String body) {
      this.status = status;
      this.body = body;
    }

    JsonNode json() throws IOException {
      JsonNode node = jsonOrNull();
      if (node == null) {
        throw new IOException("unexpected reply (HTTP " + status + "): " + body);
      }
      return node;
    }

    JsonNode jsonOrNull() {
      try {
        JsonNode node = MAPPER.readTree(body);
        // An empty body reads as a missing node: no JSON either.
        return node.isMissingNode() ? null : node;
      } catch (IOException e) {
        return null;
      }
    }
  }

  /** Base URLs to try, in order: the configured host, or each ResourceManager's. */
  public static List<String> endpoints(Configuration conf) {
    String address = TidalConfig.restAddress(conf);
    int colon = address.lastIndexOf(':');
    String host = colon < 0 ? address : address.substring(0, colon);
    int port = TidalConfig.DEFAULT_REST_PORT;
    if (colon >= 0) {
      try {
        port = Integer.parseInt(address.substring(colon + 1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            TidalConfig.REST_ADDRESS + " has a bad port: " + address);
      }
    }
    if (port <= 0) {
      throw new IllegalArgumentException(
          TidalConfig.REST_ADDRESS
              + " is "
              + address
              + ": set the port the ResourceManager's endpoint listens on");
    }
    List<String> hosts = new ArrayList<String>();
    if (!isWildcard(host)) {
      hosts.add(host);
    } else if (HAUtil.isHAEnabled(conf)) {
      for (String id : HAUtil.getRMHAIds(conf)) {
        String rmHost = conf.getTrimmed(YarnConfiguration.RM_HOSTNAME + "." + id);
        if (rmHost != null && !rmHost.isEmpty()) {
          hosts.add(rmHost);
        }
      }
    }
    if (hosts.isEmpty()) {
      String rmHost = conf.getTrimmed(YarnConfiguration.RM_HOSTNAME, "localhost");
      hosts.add(isWildcard(rmHost) ? "localhost" : rmHost);
    }
    List<String> urls = new ArrayList<String>();
    for (String h : hosts) {
      urls.add(
          "http://" + (h.contains(":") && !h.startsWith("[") ? "[" + h + "]" : h) + ":" + port);
    }
    return urls;
  }

  private static boolean isWildcard(String host) {
    return host.isEmpty() || host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
  }

  private Response call(
      Configuration conf, String method, String path, String contentType, byte[] body)
      throws IOException {
    String user = UserGroupInformation.getCurrentUser().getShortUserName();
    String query = "?user.name=" + URLEncoder.encode(user, "UTF-8");
    List<String> bases;
    try {
      bases = endpoints(conf);
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
    IOException last = null;
    for (String base : bases) {
      try {
        return call(new URL(base + path + query), method, contentType, body);
      } catch (ConnectException e) {
        // A standby ResourceManager runs no scheduler and so no endpoint: try the next one.
        last = e;
      }
    }
    throw new IOException(
        "cannot reach the Tidal REST endpoint at "
            + String.join(", ", bases)
            + " ("
            + TidalConfig.REST_ADDRESS
            + ", "
            + YarnConfiguration.RM_HOSTNAME
            + "): "
            + (last == null ? "no address" : last.getMessage()),
        last);
  }

  private static Response call(URL url, String method, String contentType, byte[] body)
      throws IOException {
    HttpURLConnection connection = (HttpURLConnection) url.openConnection();
    try {
      connection.setConnectTimeout(CONNECT_TIMEOUT_MS);
      connection.setReadTimeout(READ_TIMEOUT_MS);
      connection.setRequestMethod(method);
      connection.setRequestProperty("Accept", "application/json");
      if (body != null) {
        connection.setDoOutput(true);
        connection.setRequestProperty("Content-Type", contentType);
        OutputStream stream = connection.getOutputStream();
        stream.write(body);
        stream.close();
      }
      int status = connection.getResponseCode();
      InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
      return new Response(status, in == null ? "" : Streams.readUtf8(in));
    } finally {
      connection.disconnect();
    }
  }

  /** Percent-encodes a queue name for use as one path segment. */
  private static String pathSegment(String queue) throws IOException {
    return URLEncoder.encode(queue, "UTF-8").replace("+", "%20");
  }
}
