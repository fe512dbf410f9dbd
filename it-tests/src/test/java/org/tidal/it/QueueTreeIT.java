package org.tidal.it;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.codehaus.jackson.JsonNode;
import org.junit.Test;
import org.tidal.it.workload.TwoQueueWorkload;

/**
 * A FairScheduler user's queue tree under Tidal on the mini cluster (8 vcores), with MapReduce
 * sleep jobs that keep every queue saturated:
 *
 * <pre>
 *   root
 *   ├── eng (weight 1, maxResources 3 vcores)
 *   │   ├── etl (weight 1, fifo)
 *   │   └── ml  (weight 1, job-fair)
 *   ├── analytics (weight 1, maxRunningApps 1)
 *   ├── default
 *   └── adhoc      created by the placement rule "specified" for a job that names it
 * </pre>
 *
 * What a FairScheduler user expects: eng's two leaves together hold at most eng's 3 vcores and
 * split them within a container, and analytics takes the other 5 (flat DRF over the three leaves
 * would give each 8/3, the tree without eng's maximum 4 to analytics); analytics' second app waits
 * without an AM until its first ends; a job that names a queue the file lacks gets it, created on
 * the spot.
 */
public class QueueTreeIT {
  private static final int MAPS = 200;
  private static final long MAP_MILLIS = 3000;
  private static final long CLUSTER_VCORES =
      (long) HarnessSettings.NODE_MANAGERS * HarnessSettings.NM_VCORES;

  private static String queueFile() throws Exception {
    String xml =
        String.join(
            "\n",
            "<tidal>",
            "  <policy>drf</policy>",
            "  <app-policy>fifo</app-policy>",
            "  <queue name=\"eng\">",
            "    <weight>1</weight>",
            "    <maxResources>4096 mb, 3 vcores</maxResources>",
            "    <queue name=\"etl\"><weight>1</weight></queue>",
            "    <queue name=\"ml\"><weight>1</weight><app-policy>job-fair</app-policy></queue>",
            "  </queue>",
            "  <queue name=\"analytics\">",
            "    <weight>1</weight>",
            "    <maxRunningApps>1</maxRunningApps>",
            "  </queue>",
            "  <queue name=\"default\"/>",
            "  <queuePlacementPolicy>",
            "    <rule name=\"specified\" create=\"true\"/>",
            "    <rule name=\"default\" queue=\"default\"/>",
            "  </queuePlacementPolicy>",
            "</tidal>");
    Path dir =
        Paths.get(System.getProperty("it.work.dir", Paths.get("target", "it-work").toString()));
    Files.createDirectories(dir);
    Path file = dir.resolve("tidal-queue-tree.xml");
    Files.write(file, xml.getBytes(StandardCharsets.UTF_8));
    return file.toAbsolutePath().toString();
  }

  @Test(timeout = 900_000)
  public void treeSharesLimitsAndPlacementAsFairSchedulerUsersExpect() throws Exception {
    String file = queueFile();
    Checks checks = new Checks("queue tree");
    try (MiniClusterHarness cluster =
        MiniClusterHarness.start(
            SchedulerUnderTest.TIDAL, conf -> conf.set("tidal.allocation.file", file))) {
      TidalRest rest = TidalRest.of(cluster);
      Configuration conf = cluster.clientConf();
      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(conf);
      yarn.start();
      List<ApplicationId> apps = new ArrayList<>();
      try {
        ApplicationId etl = submit(conf, "eng.etl", apps);
        ApplicationId ml = submit(conf, "eng.ml", apps);
        ApplicationId first = submit(conf, "analytics", apps);
        awaitState(yarn, first, YarnApplicationState.RUNNING);
        ApplicationId second = submit(conf, "analytics", apps);

        // Saturated: every vcore in use and each leaf with maps waiting. Neither scheduler
        // preempts, so whoever started first holds more until its maps end: two rounds of maps
        // later the shares are the ones the policy chooses.
        awaitSaturated(rest);
        Thread.sleep(2 * MAP_MILLIS);
        double etlSum = 0;
        double mlSum = 0;
        double analyticsSum = 0;
        long engMax = 0;
        int samples = 0;
        for (int i = 0; i < 20; i++) {
          JsonNode status = rest.queues();
          long a = vcores(status, "analytics");
          analyticsSum += a;
          long e = vcores(status, "eng.etl");
          long m = vcores(status, "eng.ml");
          engMax = Math.max(engMax, e + m);
          etlSum += e;
          mlSum += m;
          System.out.printf("   t=%2ds analytics %d eng.etl %d eng.ml %d%n", i, a, e, m);
          samples++;
          checks.check(
              yarn.getApplicationReport(second).getYarnApplicationState()
                  == YarnApplicationState.ACCEPTED,
              "analytics' second app left ACCEPTED while its first ran (maxRunningApps 1)");
          Thread.sleep(1000);
        }
        double analytics = analyticsSum / samples;
        double etlMean = etlSum / samples;
        double mlMean = mlSum / samples;
        String shares =
            String.format(
                Locale.ROOT,
                "mean vcores: analytics %.2f, eng.etl %.2f, eng.ml %.2f (eng at most %d)",
                analytics,
                etlMean,
                mlMean,
                engMax);
        System.out.println("== queue tree: " + shares);
        checks.check(engMax <= 3, "eng's leaves above eng's maxResources of 3 vcores: " + shares);
        checks.check(
            Math.abs(etlMean - mlMean) <= 1.0 && etlMean + mlMean >= 2.5,
            "eng's leaves did not split eng's 3 vcores evenly: " + shares);
        checks.check(
            analytics >= CLUSTER_VCORES - 3 - 0.5,
            "analytics did not take what eng's maximum leaves: " + shares);
        checks.check(
            yarn.getApplicationReport(etl).getYarnApplicationState()
                == YarnApplicationState.RUNNING,
            "eng.etl's app is not running");
        checks.check(
            yarn.getApplicationReport(ml).getYarnApplicationState() == YarnApplicationState.RUNNING,
            "eng.ml's app is not running");

        // Placement: the rule "specified" with create makes the queue a job names.
        ApplicationId placed = submit(conf, "adhoc", apps);
        ApplicationReport report = awaitState(yarn, placed, YarnApplicationState.ACCEPTED);
        checks.check(
            "root.adhoc".equals(report.getQueue()),
            "a job sent to adhoc was placed in " + report.getQueue() + ", not root.adhoc");
        checks.check(
            rest.queues().toString().contains("\"root.adhoc\""),
            "the placement rule did not create root.adhoc");

        // The first analytics app ends: the second starts.
        yarn.killApplication(first);
        awaitState(yarn, second, YarnApplicationState.RUNNING);
      } finally {
        for (ApplicationId app : apps) {
          try {
            yarn.killApplication(app);
          } catch (Exception e) {
            System.out.println("could not kill " + app + ": " + e);
          }
        }
        yarn.stop();
      }
    }
    checks.assertAllPassed();
  }

  private static ApplicationId submit(Configuration conf, String queue, List<ApplicationId> apps)
      throws Exception {
    Job job = BopfLatencyQueueIT.sleepJob(conf, queue, MAPS, MAP_MILLIS);
    job.submit();
    ApplicationId id = TwoQueueWorkload.appId(job.getJobID());
    apps.add(id);
    return id;
  }

  private static long vcores(JsonNode status, String queue) {
    return TidalRest.queue(status, queue).path("used").path("vcores").getLongValue();
  }

  private static ApplicationReport awaitState(
      YarnClient yarn, ApplicationId app, YarnApplicationState state) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (true) {
      ApplicationReport report = yarn.getApplicationReport(app);
      if (report.getYarnApplicationState() == state) {
        return report;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(app + " did not reach " + state + " in 120 s: " + report);
      }
      Thread.sleep(500);
    }
  }

  private static void awaitSaturated(TidalRest rest) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (true) {
      JsonNode status = rest.queues();
      boolean full = status.path("used").path("vcores").getLongValue() == CLUSTER_VCORES;
      boolean waiting = true;
      for (String q : List.of("eng.etl", "eng.ml", "analytics")) {
        waiting &= TidalRest.queue(status, q).path("pending_containers").getLongValue() > 0;
      }
      if (full && waiting) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the tree did not saturate in 120 s: " + status);
      }
      Thread.sleep(500);
    }
  }
}
