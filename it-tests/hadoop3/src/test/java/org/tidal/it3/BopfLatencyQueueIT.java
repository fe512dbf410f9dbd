package org.tidal.it3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.junit.Test;

/**
 * Tidal under BoPF on Hadoop 3.4.3: admission control classes the LQ of tidal-bopf-lq.xml from the
 * registered capacity, and a MapReduce job submitted to it runs as one of its bursts and succeeds.
 */
public class BopfLatencyQueueIT {
  static final String LQ = "lq";
  static final Set<String> ADMITTED = Set.of("hard", "soft");

  @Test(timeout = 240_000)
  public void jobInAdmittedLqRunsAsABurst() throws Exception {
    try (TidalMiniCluster cluster = TidalMiniCluster.start("bopf", "tidal-bopf-lq.xml")) {
      TidalRest rest = TidalRest.of(cluster);
      assertEquals("policy", "bopf", rest.queues().path("policy").asText());
      JsonNode lq = rest.awaitClass(LQ, ADMITTED);
      System.out.printf(
          "== BoPF: LQ class %s (%s)%n",
          lq.path("class").asText(), lq.path("admission_reason").asText());

      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(cluster.clientConf());
      yarn.start();
      try {
        Job job = Apps.sleepJob(cluster.clientConf(), LQ, 2, 2000);
        job.submit();
        ApplicationId app = Apps.appId(job);
        long burstsStarted = 0;
        boolean sawBurst = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
        while (!Apps.ended(yarn, app)) {
          if (System.nanoTime() > deadline) {
            throw new AssertionError("the LQ job did not end within 180 s");
          }
          JsonNode burst = TidalRest.queue(rest.queues(), LQ).path("burst");
          burstsStarted = burst.path("bursts_started").asLong();
          sawBurst |= !"idle".equals(burst.path("phase").asText());
          Thread.sleep(500);
        }
        ApplicationReport report = Apps.awaitEnd(yarn, app, 30);
        System.out.printf(
            "== LQ job %s: %s in %s; bursts started %d, burst seen %s%n",
            app, report.getFinalApplicationStatus(), report.getQueue(), burstsStarted, sawBurst);

        assertEquals("queue of the LQ job", "root." + LQ, report.getQueue());
        assertEquals(
            "LQ job: " + report.getDiagnostics(),
            FinalApplicationStatus.SUCCEEDED,
            report.getFinalApplicationStatus());
        assertTrue("LQ job reported unsuccessful", job.isSuccessful());
        assertTrue("no burst of the LQ started for its job", burstsStarted >= 1 && sawBurst);
      } finally {
        yarn.stop();
      }
    }
  }
}
