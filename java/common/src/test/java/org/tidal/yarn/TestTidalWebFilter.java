package org.tidal.yarn;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.THREE_CLASSES;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.freePort;
import static org.tidal.yarn.TidalTestSupport.launchAm;
import static org.tidal.yarn.TidalTestSupport.startThreeClasses;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.servlet.http.HttpServletRequest;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import org.apache.hadoop.http.lib.StaticUserWebFilter;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.io.Streams;
import org.tidal.yarn.view.QueueStatus;
import org.tidal.yarn.view.WebAssets;
import org.tidal.yarn.view.WebReply;
import org.w3c.dom.NodeList;

/** Tidal's routes in the RM's own web app, installed through hadoop.http.filter.initializers. */
public class TestTidalWebFilter {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private String base;

  /** An RM with its web app on a free loopback port and the filter after the default one. */
  private MockRM startRm() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, THREE_CLASSES);
    YarnConfiguration conf = conf(allocation);
    conf.setBoolean("mockrm.webapp.enabled", true);
    String address = "127.0.0.1:" + freePort();
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, address);
    conf.set(
        "hadoop.http.filter.initializers",
        StaticUserWebFilter.class.getName() + "," + TidalWebFilterInitializer.class.getName());
    MockRM rm = rms.start(conf);
    base = "http://" + address;
    return rm;
  }

  @Test(timeout = 120000)
  public void routesShowQueueTreeClassesAndBurstsInTheRmWebApp() throws Exception {
    MockRM rm = startRm();
    MockNM nm = startThreeClasses(rm);
    launchAm(rm, "lq", "alice", nm);
    long before = System.currentTimeMillis();
    waitFor(
        "a burst of root.lq in the scheduler's REST view",
        () -> "on".equals(queue(schedulerInfo(), "root.lq").path("burst").path("phase").asText()));

    JsonNode info = schedulerInfo();
    assertEquals(info.toString(), "tidalScheduler", info.path("type").textValue());
    assertEquals("bopf", info.path("policy").textValue());
    assertEquals("fifo", info.path("appPolicy").textValue());
    assertEquals(102400, info.path("clusterResources").path("memory").longValue());
    JsonNode root = info.path("rootQueue");
    assertEquals("root", root.path("queueName").textValue());
    assertEquals(1, root.path("numActiveApps").intValue());
    List<String> children = new ArrayList<String>();
    for (JsonNode child : root.path("childQueues").path("queue")) {
      children.add(child.path("queueName").textValue());
    }
    assertEquals(Arrays.asList("root.lq", "root.etl", "root.late"), children);

    JsonNode lq = queue(info, "root.lq");
    assertEquals(lq.toString(), "lq", lq.path("type").textValue());
    assertEquals("hard", lq.path("class").textValue());
    assertTrue(lq.path("admitted").booleanValue());
    assertEquals(80, lq.path("guaranteedResources").path("vCores").longValue());
    assertEquals(0.8, lq.path("guaranteedShare").doubleValue(), 1e-9);
    assertEquals(1024, lq.path("usedResources").path("memory").longValue());
    assertEquals(1, lq.path("numActiveApps").intValue());
    assertEquals(1, lq.path("runningContainers").longValue());
    assertEquals(1, lq.path("burst").path("burstsStarted").longValue());
    long started = lq.path("burst").path("startedMs").longValue();
    assertTrue(lq.toString(), started >= before - 60000 && started <= before + 1000);
    assertEquals(50000, lq.path("burst").path("deadlineAtMs").longValue() - started);
    assertFalse(lq.path("admissionReason").textValue().isEmpty());
    // Only lq has demand, so it has the whole fair share.
    assertEquals(1.0, lq.path("fairShare").doubleValue(), 1e-9);
    assertEquals(102400, lq.path("fairResources").path("memory").longValue());

    JsonNode etl = queue(info, "root.etl");
    assertEquals(etl.toString(), "tq", etl.path("type").textValue());
    assertEquals("elastic", etl.path("class").textValue());
    assertTrue(etl.path("guaranteedResources").isNull());
    assertEquals(0, etl.path("usedResources").path("vCores").longValue());

    JsonNode late = queue(info, "root.late");
    assertEquals(late.toString(), "rejected", late.path("class").textValue());
    assertFalse(late.path("admitted").booleanValue());
    String reason = late.path("admissionReason").textValue();
    assertTrue(reason, reason.contains("safety condition (1) fails"));

    // The HTML page: a tree of queues with their bars, class, burst and escaped reasons.
    HttpURLConnection page = open("GET", "/cluster/scheduler");
    assertEquals(200, page.getResponseCode());
    assertEquals("text/html;charset=utf-8", contentType(page));
    String html = Streams.readUtf8(page.getInputStream());
    assertTrue(html, html.contains("class=\"class-hard\""));
    assertTrue(html, html.contains("Burst on, started "));
    assertTrue(html, html.contains("class=\"bar guaranteed\""));
    assertTrue(html, html.contains("width:80.0%"));
    assertTrue(html, html.contains("guaranteed 80.0%"));
    assertTrue(html, html.contains("href=\"/tidal/dashboard\""));
    assertTrue(html, html.contains("href=\"/cluster/apps\""));
    // StAX writers differ on escaping '>' in text (2.7's does, Hadoop 3's Woodstox does not).
    assertTrue(html, reason.contains(">") && html.replace("&gt;", ">").contains(escaped(reason)));
    org.w3c.dom.Document doc =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(new ByteArrayInputStream(html.getBytes(StandardCharsets.UTF_8)));
    NodeList leaves =
        (NodeList)
            XPathFactory.newInstance()
                .newXPath()
                .evaluate(
                    "//li[div/h2='root']/ul/li/div[@class='queue']/h3",
                    doc,
                    XPathConstants.NODESET);
    List<String> tree = new ArrayList<String>();
    for (int i = 0; i < leaves.getLength(); i++) {
      tree.add(leaves.item(i).getTextContent());
    }
    assertEquals(Arrays.asList("root.lq", "root.etl", "root.late"), tree);

    // The core's status as it is.
    HttpCall status = HttpCall.request("GET", base + "/ws/v1/cluster/tidal/status").send();
    assertEquals(status.toString(), 200, status.status);
    JsonNode core = new ObjectMapper().readTree(rms.scheduler().shim().statusJson());
    assertEquals(core.path("policy"), status.json().path("policy"));
    assertEquals(core.path("cluster"), status.json().path("cluster"));
    assertEquals(3, status.json().path("queues").size());
    assertEquals("on", status.json().path("queues").path(0).path("burst").path("phase").asText());

    // GET and HEAD only; everything else is the RM's.
    HttpCall post = HttpCall.request("POST", base + "/ws/v1/cluster/scheduler").send();
    assertEquals(post.toString(), 405, post.status);
    assertTrue(post.message(), post.message().contains("POST is not allowed"));
    HttpURLConnection head = open("HEAD", "/ws/v1/cluster/scheduler");
    assertEquals(200, head.getResponseCode());
    assertEquals("application/json;charset=utf-8", contentType(head));
    assertEquals(-1, head.getInputStream().read());
    HttpCall clusterInfo = HttpCall.request("GET", base + "/ws/v1/cluster/info").send();
    assertEquals(clusterInfo.toString(), 200, clusterInfo.status);
    assertEquals("STARTED", clusterInfo.json().path("clusterInfo").path("state").textValue());
    HttpCall rmPost = HttpCall.request("POST", base + "/ws/v1/cluster/info").send();
    assertFalse(rmPost.toString(), rmPost.body.contains("use GET"));
  }

  @Test(timeout = 120000)
  public void historyRouteGivesSamplesAfterSinceBurstsAndAdmissions() throws Exception {
    MockRM rm = startRm();
    MockNM nm = startThreeClasses(rm);
    launchAm(rm, "lq", "alice", nm);
    waitFor(
        "two history samples (heartbeats a second apart)",
        () -> {
          nm.nodeHeartbeat(true);
          Thread.sleep(200);
          return history("").path("samples").size() >= 2;
        });
    JsonNode all = history("");
    JsonNode samples = all.path("samples");
    JsonNode last = samples.get(samples.size() - 1);
    assertTrue(all.toString(), last.path("t_ms").longValue() <= all.path("now_ms").longValue());
    List<String> sampled = new ArrayList<String>();
    for (JsonNode queue : last.path("queues")) {
      sampled.add(queue.path("name").textValue());
    }
    assertEquals(Arrays.asList("root.lq", "root.etl", "root.late"), sampled);
    JsonNode burst = all.path("bursts").get(0);
    assertEquals(all.toString(), "root.lq", burst.path("queue").textValue());
    assertTrue(all.toString(), burst.path("ended_ms").isNull());
    assertEquals(0.8, burst.path("guaranteed_share").doubleValue(), 1e-9);
    boolean lateRejected = false;
    for (JsonNode admission : all.path("admissions")) {
      lateRejected |=
          "root.late".equals(admission.path("queue").textValue())
              && "rejected".equals(admission.path("class").textValue())
              && !admission.path("admitted").booleanValue();
    }
    assertTrue(all.path("admissions").toString(), lateRejected);

    // Only samples after `since`; bursts and admissions whatever it is.
    JsonNode after = history("?since=" + last.path("t_ms").longValue());
    assertEquals(after.toString(), 0, after.path("samples").size());
    assertEquals(all.path("bursts").size(), after.path("bursts").size());
    HttpCall bad = HttpCall.request("GET", base + "/ws/v1/cluster/tidal/history?since=soon").send();
    assertEquals(bad.toString(), 400, bad.status);
    assertTrue(bad.toString(), bad.body.contains("'soon'"));
  }

  private JsonNode history(String query) throws IOException {
    HttpCall call = HttpCall.request("GET", base + "/ws/v1/cluster/tidal/history" + query).send();
    assertEquals(call.toString(), 200, call.status);
    return call.json();
  }

  @Test(timeout = 120000)
  public void dashboardFilesComeFromTheAllowListOnly() throws Exception {
    startRm();
    for (String name : new String[] {"dashboard.html", "static/dashboard.js"}) {
      String path = name.equals("dashboard.html") ? "/tidal/dashboard" : "/tidal/" + name;
      HttpURLConnection connection = open("GET", path);
      InputStream resource = getClass().getClassLoader().getResourceAsStream(WebAssets.BASE + name);
      assertNotNull(name + " is not in the jar", resource);
      assertEquals(path, 200, connection.getResponseCode());
      assertArrayEquals(Streams.readAll(resource), Streams.readAll(connection.getInputStream()));
    }
    for (String path :
        new String[] {
          "/tidal/static/other.js",
          "/tidal/static/../dashboard.html",
          "/tidal/static/../../TidalScheduler.class",
          "/tidal/static/"
        }) {
      HttpURLConnection connection = open("GET", path);
      assertEquals(path, 404, connection.getResponseCode());
      String error = Streams.readUtf8(connection.getErrorStream());
      assertTrue(path + ": " + error, error.contains("no dashboard file"));
    }
  }

  @Test
  public void assetsHaveTheirContentTypesAndUnlistedFilesAreRefused() throws Exception {
    WebAssets assets = new WebAssets(getClass().getClassLoader(), "org/tidal/yarn/webtest/");
    WebReply page = assets.get("dashboard.html");
    assertEquals(200, page.status);
    assertEquals("text/html; charset=UTF-8", page.contentType);
    assertTrue(new String(page.body, StandardCharsets.UTF_8).contains("test dashboard"));
    WebReply css = assets.get("static/dashboard.css");
    assertEquals(200, css.status);
    assertEquals("text/css; charset=UTF-8", css.contentType);
    // On the class path, but not on the list.
    assertEquals(404, assets.get("static/other.js").status);
    WebReply missing = assets.get("static/uPlot.min.css");
    assertEquals(404, missing.status);
    assertTrue(
        new String(missing.body, StandardCharsets.UTF_8).contains("missing from the Tidal jar"));
  }

  @Test
  public void failuresBecomeJsonErrorsAndOtherPathsPassThrough() throws Exception {
    HttpServletRequest request = request("GET", "/ws/v1/cluster/scheduler");
    WebReply unavailable =
        TidalWebFilter.answer(
            (req, scheduler) -> {
              throw new TidalException("no scheduler instance");
            },
            request,
            null);
    assertEquals(503, unavailable.status);
    assertEquals(WebReply.JSON, unavailable.contentType);
    JsonNode body = new ObjectMapper().readTree(unavailable.body);
    assertEquals(503, body.path("status").intValue());
    assertTrue(body.toString(), body.path("message").asText().contains("no scheduler instance"));

    WebReply unparsable =
        TidalWebFilter.answer(
            (req, scheduler) -> WebReply.json(QueueStatus.parse("[1]").policy), request, null);
    assertEquals(500, unparsable.status);
    assertTrue(new String(unparsable.body, StandardCharsets.UTF_8).contains("not a JSON object"));

    assertNull(TidalWebFilter.route("/ws/v1/cluster/info"));
    assertNull(TidalWebFilter.route("/static/tidal/dashboard"));
    assertTrue(TidalWebFilter.route("/ws/v1/cluster/scheduler/") != null);

    // No Tidal scheduler in this JVM (a NodeManager with the same configuration): every route is
    // left to the web app.
    assertNull(RunningSchedulers.current());
    AtomicBoolean passed = new AtomicBoolean();
    new TidalWebFilter().doFilter(request, null, (req, resp) -> passed.set(true));
    assertTrue(passed.get());
  }

  /** A request of which the filter reads the method and URI. */
  private static HttpServletRequest request(String method, String uri) {
    return (HttpServletRequest)
        Proxy.newProxyInstance(
            TestTidalWebFilter.class.getClassLoader(),
            new Class<?>[] {HttpServletRequest.class},
            (proxy, m, args) -> {
              switch (m.getName()) {
                case "getMethod":
                  return method;
                case "getRequestURI":
                  return uri;
                default:
                  throw new UnsupportedOperationException(m.getName());
              }
            });
  }

  private JsonNode schedulerInfo() throws IOException {
    HttpCall call = HttpCall.request("GET", base + "/ws/v1/cluster/scheduler").send();
    assertEquals(call.toString(), 200, call.status);
    return call.json().path("scheduler").path("schedulerInfo");
  }

  private static JsonNode queue(JsonNode info, String name) {
    for (JsonNode queue : info.path("rootQueue").path("childQueues").path("queue")) {
      if (name.equals(queue.path("queueName").textValue())) {
        return queue;
      }
    }
    throw new AssertionError("no queue " + name + " in " + info);
  }

  private HttpURLConnection open(String method, String path) throws IOException {
    HttpURLConnection connection = (HttpURLConnection) new URL(base + path).openConnection();
    connection.setRequestMethod(method);
    return connection;
  }

  /** The response's media type and charset, as Jetty 6 and Jetty 9 (no space) both write it. */
  private static String contentType(HttpURLConnection response) {
    return response.getContentType().toLowerCase(Locale.ROOT).replace(" ", "");
  }

  private static String escaped(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;");
  }
}
