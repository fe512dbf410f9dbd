package org.tidal.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.cli.QueueCLI;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;
import org.tidal.it.tools.OperatorTools;
import org.tidal.it.workload.TwoQueueWorkload;

/**
 * What an operator sees of Tidal on a running cluster, while BoPF's latency queue (LQ) bursts
 * beside two throughput queues (TQs) that saturate the cluster: Hadoop's own tools (the RM's {@code
 * /ws/v1/cluster/scheduler}, {@code yarn queue -status}, JMX) and, in a real headless browser,
 * Tidal's dashboard and the RM's scheduler page.
 *
 * <p>The browser test drives Debian's Chromium through Playwright (it-tests/browser/
 * dashboard-check.mjs) and saves screenshots under target/screenshots; it is skipped, saying why,
 * where Chromium, Node.js or the script's node_modules ({@code make browser-deps}) are missing.
 */
public class TidalViewsIT {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final File BROWSER_DIR =
      new File(System.getProperty("it.browser.dir", "browser")).getAbsoluteFile();
  private static final File SCREENSHOTS =
      new File(System.getProperty("it.screenshot.dir", "target/screenshots")).getAbsoluteFile();
  private static final String CHROMIUM = System.getProperty("it.chromium", "/usr/bin/chromium");
  private static final long SCRIPT_TIMEOUT_SECONDS = 240;

  /**
   * The LQ job: maps long enough that its burst is still on (or catching up past its deadline)
   * through both tests, whatever order they run in. The job is killed at the end.
   */
  private static final int LQ_MAPS = 40;

  private static final long LQ_MAP_MILLIS = 15_000;

  /** The LQ's guaranteed rate, 7 of the cluster's 8 vcores (tidal-bopf-lq.xml), as QueueCLI. */
  private static final String LQ_CAPACITY = "\tCapacity : 87.5%";

  private static MiniClusterHarness cluster;
  private static YarnClient yarn;
  private static final List<ApplicationId> APPS = new ArrayList<>();

  @BeforeClass
  public static void startBurst() throws Exception {
    String queueFile = BopfLatencyQueueIT.queueFile("bopf");
    cluster =
        MiniClusterHarness.start(
            SchedulerUnderTest.TIDAL,
            conf -> {
              conf.set("tidal.allocation.file", queueFile);
              conf.set("tidal.rest.address", "127.0.0.1:0");
            });
    Configuration conf = cluster.clientConf();
    yarn = YarnClient.createYarnClient();
    yarn.init(conf);
    yarn.start();
    for (String tq : BopfLatencyQueueIT.TQS) {
      Job job =
          BopfLatencyQueueIT.sleepJob(
              conf, tq, BopfLatencyQueueIT.TQ_MAPS, BopfLatencyQueueIT.TQ_MAP_MILLIS);
      job.submit();
      APPS.add(TwoQueueWorkload.appId(job.getJobID()));
    }
    TidalRest rest = TidalRest.of(cluster);
    BopfLatencyQueueIT.awaitSaturatedAndAdmitted(rest, "bopf");
    Job lq = BopfLatencyQueueIT.sleepJob(conf, BopfLatencyQueueIT.LQ, LQ_MAPS, LQ_MAP_MILLIS);
    lq.submit();
    APPS.add(TwoQueueWorkload.appId(lq.getJobID()));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (true) {
      JsonNode q = TidalRest.queue(rest.queues(), BopfLatencyQueueIT.LQ);
      if ("on".equals(q.path("burst").path("phase").getTextValue())
          && q.path("running_containers").getLongValue() > 1) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the LQ's burst did not start within 120 s: " + q);
      }
      Thread.sleep(500);
    }
  }

  @AfterClass
  public static void stop() {
    for (ApplicationId app : APPS) {
      try {
        yarn.killApplication(app);
      } catch (Exception e) {
        System.out.println("could not kill " + app + ": " + e);
      }
    }
    if (yarn != null) {
      yarn.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test(timeout = 300_000)
  public void hadoopsOwnToolsShowTheQueueTreeClassesAndTheBurst() throws Exception {
    Checks checks = new Checks("Tidal in Hadoop's tools");

    JsonNode info =
        MAPPER
            .readTree(OperatorTools.get(cluster.rmWebUrl() + "/ws/v1/cluster/scheduler"))
            .path("scheduler")
            .path("schedulerInfo");
    checks.check(
        "tidalScheduler".equals(info.path("type").getTextValue()),
        "/ws/v1/cluster/scheduler type is not tidalScheduler: " + info);
    List<String> children = new ArrayList<>();
    JsonNode lq = null;
    for (JsonNode q : info.path("rootQueue").path("childQueues").path("queue")) {
      children.add(q.path("queueName").getTextValue());
      if ("root.lq".equals(q.path("queueName").getTextValue())) {
        lq = q;
      }
    }
    checks.check(
        children.equals(List.of("root.a", "root.b", "root.lq")),
        "/ws/v1/cluster/scheduler children " + children);
    if (lq != null) {
      checks.check("hard".equals(lq.path("class").getTextValue()), "LQ class in " + lq);
      checks.check(
          lq.path("guaranteedResources").path("vCores").getLongValue() == 7,
          "LQ guaranteed vcores in " + lq);
      String phase = lq.path("burst").path("phase").getTextValue();
      checks.check(
          phase != null && !"idle".equals(phase), "no burst on in /ws/v1/cluster/scheduler: " + lq);
      checks.check(
          lq.path("burst").path("deadlineAtMs").getLongValue()
                  - lq.path("burst").path("startedMs").getLongValue()
              == 35_000,
          "the burst's deadline is not 35 s after its start: " + lq);
    }

    String status = queueStatus("lq");
    checks.check(status.contains("Queue Name : root.lq"), "yarn queue -status lq: " + status);
    checks.check(status.contains("\tState : RUNNING"), "yarn queue -status lq: " + status);
    checks.check(status.contains(LQ_CAPACITY), "yarn queue -status lq, " + LQ_CAPACITY + status);

    // The metrics system publishes to JMX on its own period: wait for the burst to show.
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    Object cls = null;
    Object phase = null;
    Object started = null;
    Object guaranteed = null;
    while (System.nanoTime() < deadline) {
      Set<ObjectName> names =
          jmx.queryNames(new ObjectName("Hadoop:name=TidalQueueMetrics,q0=root,q1=lq,*"), null);
      if (names.size() == 1) {
        ObjectName bean = names.iterator().next();
        cls = jmx.getAttribute(bean, "tag.AdmissionClass");
        phase = jmx.getAttribute(bean, "tag.BurstPhase");
        started = jmx.getAttribute(bean, "BurstsStarted");
        guaranteed = jmx.getAttribute(bean, "GuaranteedShare");
        if ("hard".equals(cls) && !"idle".equals(phase) && !"none".equals(phase)) {
          break;
        }
      }
      Thread.sleep(1000);
    }
    checks.check("hard".equals(cls), "JMX TidalQueueMetrics root.lq class " + cls);
    checks.check(
        phase != null && !"idle".equals(phase) && !"none".equals(phase),
        "JMX TidalQueueMetrics root.lq burst phase " + phase);
    checks.check(
        started instanceof Number && ((Number) started).longValue() >= 1,
        "JMX TidalQueueMetrics root.lq bursts started " + started);
    checks.check(
        guaranteed instanceof Number
            && Math.abs(((Number) guaranteed).doubleValue() - 0.875) < 1e-6,
        "JMX TidalQueueMetrics root.lq guaranteed share " + guaranteed);
    System.out.printf(
        "== Hadoop's tools: scheduler REST children %s, LQ %s; yarn queue -status:%n%s"
            + "== JMX root.lq: class %s, phase %s, bursts started %s, guaranteed share %s%n",
        children, lq, status, cls, phase, started, guaranteed);
    checks.assertAllPassed();
  }

  @Test(timeout = 300_000)
  public void dashboardAndSchedulerPageShowTheBurstInChromium() throws Exception {
    String node = requireBrowser();
    SCREENSHOTS.mkdirs();
    File log = new File(SCREENSHOTS, "dashboard-check.log");
    Process p =
        new ProcessBuilder(
                node,
                new File(BROWSER_DIR, "dashboard-check.mjs").getPath(),
                "--rm",
                cluster.rmWebUrl(),
                "--out",
                SCREENSHOTS.getPath(),
                "--queues",
                "root.a,root.b,root.lq",
                "--burst-queue",
                "root.lq",
                "--chromium",
                CHROMIUM)
            .directory(BROWSER_DIR)
            .redirectErrorStream(true)
            .redirectOutput(log)
            .start();
    if (!p.waitFor(SCRIPT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          "the browser check ran over " + SCRIPT_TIMEOUT_SECONDS + " s:\n" + read(log));
    }
    String output = read(log);
    System.out.println(output + "== screenshots: " + SCREENSHOTS);
    assertEquals(
        "browser check (screenshots in " + SCREENSHOTS + "):\n" + output, 0, p.exitValue());
    for (String shot : new String[] {"dashboard-burst.png", "rm-scheduler-page.png"}) {
      File f = new File(SCREENSHOTS, shot);
      assertTrue(shot + " was not saved", f.length() > 10_000);
    }
  }

  /** Node.js, or skips the test naming what is missing. */
  private static String requireBrowser() {
    assumeTrue(
        "skipped: no Chromium at " + CHROMIUM + " (Debian package chromium; make browser-deps)",
        new File(CHROMIUM).canExecute());
    assumeTrue(
        "skipped: no playwright-core under "
            + BROWSER_DIR
            + "/node_modules (npm ci there; make browser-deps)",
        new File(BROWSER_DIR, "node_modules/playwright-core").isDirectory());
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      File f = new File(dir, "node");
      if (f.canExecute()) {
        return f.getAbsolutePath();
      }
    }
    assumeTrue("skipped: no node (Node.js) on the PATH", false);
    return null;
  }

  /** What {@code yarn queue -status <queue>} prints, through Hadoop's own QueueCLI. */
  private static String queueStatus(String queue) throws Exception {
    QueueCLI cli = new QueueCLI();
    cli.setClient(yarn);
    return OperatorTools.queueStatus(cli, queue);
  }

  private static String read(File f) throws IOException {
    return new String(Files.readAllBytes(f.toPath()), StandardCharsets.UTF_8);
  }
}
