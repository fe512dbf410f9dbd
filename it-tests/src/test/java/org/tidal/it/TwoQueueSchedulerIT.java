package org.tidal.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.junit.AfterClass;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;
import org.tidal.it.workload.SideBySideReport;
import org.tidal.it.workload.TwoQueueWorkload;
import org.tidal.it.workload.TwoQueueWorkload.JobOutcome;
import org.tidal.it.workload.TwoQueueWorkload.JobSpec;
import org.tidal.it.workload.TwoQueueWorkload.Result;
import org.tidal.it.workload.TwoQueueWorkload.Sample;

/**
 * The same real-cluster checks against Tidal and, as the reference, Hadoop's FairScheduler (DRF):
 * Tidal is a drop-in when both pass unchanged ({@link SchedulerUnderTest#parameters}: make test
 * runs Tidal, make test-it-references FairScheduler).
 */
@RunWith(Parameterized.class)
public class TwoQueueSchedulerIT {

  /**
   * Tolerance on each queue's mean dominant share: one container. With two NodeManagers of 4 vcores
   * and 1-vcore containers, one container moves a queue's share by 1/8 = 12.5 points, and
   * containers are handed out one per node heartbeat as others finish, so at any instant a queue
   * can be a container above or below its fair share. Averaged over the converged period it must be
   * within one container of it.
   */
  static final int MIN_CONVERGED_SAMPLES = 10;

  /**
   * Neither scheduler preempts, so the queue whose AM asks first holds its head start until its
   * first maps finish: one map (3 s) plus the start of a task JVM on 2 busy cores (5-10 s).
   * Fairness must be reached within this.
   */
  static final long MAX_CONVERGENCE_MILLIS = 40_000;

  /** Enough 3 s maps that each queue keeps work waiting for most of a minute. */
  static final List<JobSpec> JOBS =
      Arrays.asList(new JobSpec("a", 16, 3000), new JobSpec("b", 16, 3000));

  @Parameters(name = "{0}")
  public static Iterable<Object[]> schedulers() {
    return SchedulerUnderTest.parameters();
  }

  private static MiniClusterHarness running;

  private final SchedulerUnderTest scheduler;
  private MiniClusterHarness cluster;

  public TwoQueueSchedulerIT(SchedulerUnderTest scheduler) {
    this.scheduler = scheduler;
  }

  /** One cluster per scheduler, shared by its tests (start-up is the slow part). */
  @Before
  public void startCluster() throws Exception {
    if (running != null && running.scheduler() != scheduler) {
      running.close();
      running = null;
    }
    if (running == null) {
      running = MiniClusterHarness.start(scheduler);
    }
    cluster = running;
  }

  @AfterClass
  public static void stopCluster() {
    if (running != null) {
      running.close();
      running = null;
    }
  }

  @Test(timeout = 240_000)
  public void twoQueuesSucceedAndShareByDrf() throws Exception {
    Result result = new TwoQueueWorkload(cluster, JOBS, 1000, 200_000).run();
    Reports.publish(
        "two-queues-" + scheduler.name().toLowerCase(Locale.ROOT),
        SideBySideReport.sideBySide(
            Collections.singletonList(result), SideBySideReport.queues(JOBS), true),
        System.out);

    for (JobSpec spec : JOBS) {
      JobOutcome o = result.outcomes.get(spec.queue);
      assertTrue(
          "job in queue " + spec.queue + " failed under " + scheduler.displayName(), o.succeeded);
      assertEquals(FinalApplicationStatus.SUCCEEDED, o.finalStatus);
      assertEquals("queue the RM reports for the job", "root." + spec.queue, o.appQueue);
    }
    double fair = result.fairShare();
    double tolerance = result.oneContainerShare();
    assertEquals("fair share of two equally weighted queues", 0.5, fair, 1e-9);
    assertEquals("one container of an 8-vcore cluster", 0.125, tolerance, 1e-9);
    long convergence = result.convergenceMillis(fair, tolerance);
    assertTrue(
        "queues never came within one container of their fair share while both had maps waiting"
            + " under "
            + scheduler.displayName(),
        convergence >= 0);
    assertTrue(
        "took " + convergence + " ms to reach fair shares under " + scheduler.displayName(),
        convergence <= MAX_CONVERGENCE_MILLIS);
    List<Sample> converged = result.convergedSamples(fair, tolerance);
    assertTrue(
        "only "
            + converged.size()
            + " converged samples; the workload no longer keeps both queues"
            + " waiting long enough",
        converged.size() >= MIN_CONVERGED_SAMPLES);
    for (JobSpec spec : JOBS) {
      double mean = Result.meanShare(converged, spec.queue);
      assertEquals(
          String.format(
              Locale.ROOT,
              "mean dominant share of root.%s under %s",
              spec.queue,
              scheduler.displayName()),
          fair,
          mean,
          tolerance);
      // The RM's own queue accounting (web UI, /jmx) must tell the same story.
      double fromMetrics = Result.meanMetricsShare(converged, spec.queue);
      assertFalse(
          "no QueueMetrics for root." + spec.queue + " under " + scheduler.displayName(),
          Double.isNaN(fromMetrics));
      assertEquals(
          String.format(
              Locale.ROOT,
              "mean dominant share of root.%s from QueueMetrics under %s",
              spec.queue,
              scheduler.displayName()),
          fair,
          fromMetrics,
          tolerance);
    }
  }

  @Test(timeout = 180_000)
  public void queueClientCallsAndWebUiWork() throws Exception {
    Configuration conf = cluster.clientConf();
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(conf);
    yarn.start();
    try {
      // The "yarn queue -status a" call.
      QueueInfo a = yarn.getQueueInfo("a");
      assertNotNull("getQueueInfo(\"a\") returned nothing", a);
      assertEquals("a", TwoQueueWorkload.shortQueueName(a.getQueueName()));

      List<String> names = new ArrayList<>();
      for (QueueInfo q : yarn.getAllQueues()) {
        names.add(TwoQueueWorkload.shortQueueName(q.getQueueName()));
      }
      assertTrue(
          "getAllQueues() lacks a or b: " + names, names.contains("a") && names.contains("b"));

      // A short job in queue b, with the web UI read while it runs.
      Configuration jobConf = new Configuration(conf);
      jobConf.set(MRJobConfig.QUEUE_NAME, "b");
      SleepJob sleep = new SleepJob();
      sleep.setConf(jobConf);
      Job job = sleep.createJob(2, 1, 2000, 1, 100, 1);
      job.submit();
      String web = cluster.rmWebUrl();
      assertPageOk(web + "/cluster", "text/html");
      assertPageOk(web + "/cluster/scheduler", "text/html");
      assertPageOk(web + "/ws/v1/cluster/scheduler", "application/json");
      assertPageOk(web + "/ws/v1/cluster/apps", "application/json");
      assertTrue("short job in queue b failed", job.waitForCompletion(false));

      ApplicationReport found = null;
      for (ApplicationReport app : yarn.getApplications()) {
        if (app.getApplicationId().equals(TwoQueueWorkload.appId(job.getJobID()))) {
          found = app;
        }
      }
      assertNotNull("getApplications() does not list the job just run", found);
      assertEquals("root.b", found.getQueue());
      assertEquals(FinalApplicationStatus.SUCCEEDED, found.getFinalApplicationStatus());
      // Finished apps still show on the main page.
      assertPageOk(web + "/cluster", "text/html");
    } finally {
      yarn.stop();
    }
  }

  /** A page answers 200 with a non-empty body, i.e. no server error and no missing handler. */
  private void assertPageOk(String url, String accept) throws IOException {
    HttpURLConnection http = (HttpURLConnection) new URL(url).openConnection();
    http.setRequestProperty("Accept", accept);
    http.setConnectTimeout(10_000);
    http.setReadTimeout(30_000);
    int code = http.getResponseCode();
    InputStream in = code >= 400 ? http.getErrorStream() : http.getInputStream();
    String body = in == null ? "" : readAll(in);
    http.disconnect();
    assertEquals(
        url
            + " under "
            + scheduler.displayName()
            + " answered "
            + code
            + ": "
            + body.substring(0, Math.min(body.length(), 2000)),
        200,
        code);
    assertFalse(url + " answered an empty body", body.isEmpty());
  }

  private static String readAll(InputStream in) throws IOException {
    try (InputStream s = in) {
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      s.transferTo(buf);
      return buf.toString(StandardCharsets.UTF_8);
    }
  }
}
