package org.tidal.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;
import org.junit.Test;

/**
 * Hadoop 2.7.7's Scheduler Load Simulator with Tidal as the scheduler, and with FairScheduler on
 * the same synthetic trace ({@link SlsTrace}) at the same time for comparison. For each: SLS ends
 * by itself with every job of the trace finished, the RM's QueueMetrics count at least the trace's
 * containers in every queue and SLS's per-queue metrics name exactly the trace's queues. Under
 * Tidal, while all three queues demand at least their weighted shares, the 2:1:1 weights decide
 * their shares of the cluster, and SLS's web view serves the cluster's and a queue's real-time
 * numbers while the run goes on. The same trace as a Rumen job trace runs under Tidal to the same
 * end.
 */
public class SlsIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Wall-clock limit for one SLS run; the trace lasts some 45 s. */
  private static final long RUN_TIMEOUT_SECONDS = 150;

  /** Share tolerance, absolute, against the weights' 50/25/25. */
  private static final double SHARE_TOLERANCE = 0.06;

  @Test(timeout = 200_000)
  public void slsRunsTheSyntheticTraceUnderTidalAndFairScheduler() throws Exception {
    Path work = Paths.get(System.getProperty("it.work.dir", "target/it-work"), "sls");
    List<String> input = SlsCompare.syntheticInput(work);
    Map<SlsRun.Scheduler, SlsRun> runs = SlsCompare.startBoth(input, work, 0, 0, "job_a1");
    JsonNode simulate;
    JsonNode track;
    try {
      SlsRun tidal = runs.get(SlsRun.Scheduler.TIDAL);
      simulate = webView(tidal, "/simulateMetrics", "queue.a.allocated.memory");
      track = webView(tidal, "/trackMetrics?t=Queue%20a", "usage.memory");
      for (SlsRun run : runs.values()) {
        assertEquals(
            "SLS under " + run.scheduler.label + " exit code (log " + run.outDir + "/sls.log)",
            0,
            run.await(RUN_TIMEOUT_SECONDS));
      }
    } finally {
      for (SlsRun run : runs.values()) {
        run.stop();
      }
    }
    // The web view's numbers are Tidal's: queue a held containers by then.
    assertTrue("web view: " + simulate, simulate.path("running.containers").getIntValue() > 0);
    assertEquals("track view: " + track, "a", track.path("queueName").getTextValue());
    assertTrue("track view: " + track, track.path("demand.memory").getDoubleValue() > 0);

    for (SlsRun run : runs.values()) {
      SlsResult result = assertTraceRan(run);
      if (run.scheduler == SlsRun.Scheduler.TIDAL) {
        assertWeightedShares(run.scheduler.label, result);
        assertTrackedUsage(run, "job_a1");
      }
    }
  }

  /**
   * The same trace as a Rumen job trace, SLS's other input ({@code -inputrumen}, the format of its
   * samples), under Tidal alone: SLS reads the jobs with Rumen's reader and tracks one by its
   * MapReduce job id.
   */
  @Test(timeout = 200_000)
  public void slsRunsTheRumenTraceUnderTidal() throws Exception {
    Path work = Paths.get(System.getProperty("it.work.dir", "target/it-work"), "sls-rumen");
    List<String> input = SlsCompare.syntheticRumenInput(work);
    String tracked = SlsTrace.rumenJobId(0).toString();
    SlsRun run =
        SlsRun.start(
            SlsRun.Scheduler.TIDAL,
            input,
            SlsCompare.nodesFile(),
            work.resolve("tidal"),
            0,
            tracked);
    try {
      assertEquals(
          "SLS under " + run.scheduler.label + " exit code (log " + run.outDir + "/sls.log)",
          0,
          run.await(RUN_TIMEOUT_SECONDS));
    } finally {
      run.stop();
    }
    assertEquals("jobs SLS's Rumen reader finds", SlsTrace.JOBS.size(), SlsCompare.jobsIn(input));
    assertTraceRan(run);
    assertTrackedUsage(run, tracked);
  }

  /**
   * What every run of the trace must show: SLS saw every job finish and recorded metrics for
   * exactly the trace's queues, and the RM's QueueMetrics count at least the trace's containers in
   * every queue.
   */
  private static SlsResult assertTraceRan(SlsRun run) throws IOException {
    Map<String, Long> expected = new TreeMap<>();
    for (SlsTrace.Job job : SlsTrace.JOBS) {
      expected.merge(job.queue(), (long) job.containers(), Long::sum);
    }
    SlsResult result = SlsResult.read(run.outDir);
    String label = run.scheduler.label;
    System.out.println(
        result.summary(
            label,
            SlsTrace.JOBS.size(),
            SlsCompare.CLUSTER_MB,
            SlsTrace.WEIGHTS,
            SlsTrace.SETTLE_SECONDS));
    assertEquals(label + ": jobs finished", SlsTrace.JOBS.size(), result.jobs.size());
    assertEquals(label + ": queues in SLS's metrics", SlsTrace.queues(), result.queues);
    for (Map.Entry<String, Long> queue : expected.entrySet()) {
      long allocated = result.containersAllocated.getOrDefault(queue.getKey(), 0L);
      assertTrue(
          label
              + ": queue "
              + queue.getKey()
              + " allocated "
              + allocated
              + " containers, the trace needs "
              + queue.getValue(),
          allocated >= queue.getValue());
    }
    return result;
  }

  /** SLS's per-job gauges of the tracked job, from Tidal's application reports. */
  private static void assertTrackedUsage(SlsRun run, String job) throws IOException {
    Path usage = run.outDir.resolve("metrics/variable.app." + job + ".usage.memory.csv");
    assertTrue(run.scheduler.label + ": " + usage + " shows no usage", maxValue(usage) > 0);
  }

  /** The largest value of one of SLS's gauge CSVs ("t,value" lines). */
  private static double maxValue(Path csv) throws IOException {
    List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
    return lines.stream()
        .skip(1)
        .mapToDouble(line -> Double.parseDouble(line.substring(line.indexOf(',') + 1)))
        .max()
        .orElse(0);
  }

  /**
   * While every queue demands at least its weighted share, Tidal's DRF gives the queues their
   * weights' shares. Not asserted for FairScheduler: with several assignments per heartbeat its
   * first application's queue takes what it asks for in one heartbeat, before the other queues'
   * tasks ask, and without preemption the shares only move as tasks end.
   */
  private static void assertWeightedShares(String label, SlsResult result) {
    List<SlsResult.QueueSample> contended =
        result.contended(SlsCompare.CLUSTER_MB, SlsTrace.WEIGHTS, SlsTrace.SETTLE_SECONDS, 0.75);
    assertTrue(
        label + ": only " + contended.size() + " s with every queue demanding its weighted share",
        contended.size() >= 4);
    Map<String, Double> shares = result.meanShares(contended);
    double weights = SlsTrace.WEIGHTS.values().stream().mapToDouble(Double::doubleValue).sum();
    for (String queue : SlsTrace.queues()) {
      assertEquals(
          label + ": queue " + queue + "'s share while contended " + shares,
          SlsTrace.WEIGHTS.get(queue) / weights,
          shares.get(queue),
          SHARE_TOLERANCE);
    }
  }

  /**
   * A JSON page of SLS's web view once it carries {@code field} above 0, polled while the run goes
   * on: the web view starts with the RM and fails its pages until SLS has read the trace's queues.
   */
  private static JsonNode webView(SlsRun run, String path, String field)
      throws IOException, InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + run.webPort + path))
            .timeout(Duration.ofSeconds(5))
            .build();
    String last = "nothing";
    while (run.isAlive()) {
      try {
        HttpResponse<String> reply = http.send(request, HttpResponse.BodyHandlers.ofString());
        last = reply.statusCode() + " " + reply.body();
        if (reply.statusCode() == 200) {
          JsonNode node = JSON.readTree(reply.body());
          if (node.has(field) && node.path(field).asDouble() > 0) {
            return node;
          }
        }
      } catch (IOException e) {
        last = e.toString();
      }
      Thread.sleep(500);
    }
    throw new AssertionError(
        "SLS's web view "
            + path
            + " under "
            + run.scheduler.label
            + " never showed "
            + field
            + "; last: "
            + last);
  }
}
