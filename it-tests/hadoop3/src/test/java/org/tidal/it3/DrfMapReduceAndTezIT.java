package org.tidal.it3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.tez.client.TezClient;
import org.apache.tez.dag.api.TezConfiguration;
import org.apache.tez.dag.api.client.DAGClient;
import org.apache.tez.dag.api.client.DAGStatus;
import org.junit.Test;
import org.tidal.it.tez.SleepDag;

/**
 * Tidal under DRF on Hadoop 3.4.3: a MapReduce sleep job in {@code root.a} and a Tez 0.10 sleep DAG
 * in {@code root.b} at the same time. Both must succeed in the queue they named, and Tidal's REST
 * endpoint must show both queues running tasks at once, each beside its AM, and, while both had
 * containers waiting, equal dominant shares within one container: as containers free up, DRF gives
 * them to the queue with the smaller share. (There is no preemption: whichever AM asks first takes
 * the free containers at the start, and the shares even out as its tasks end.)
 */
public class DrfMapReduceAndTezIT {
  /** With the AMs, far more tasks than the cluster's 6 containers: the queues contend. */
  static final int MR_MAPS = 6;

  static final long MR_MAP_MILLIS = 3000;
  static final int TEZ_PRODUCERS = 6;
  static final long TEZ_PRODUCER_MILLIS = 3000;
  static final long TEZ_CONSUMER_MILLIS = 500;

  /** One container of the 6-vcore cluster: the granularity of any allocation. */
  static final double ONE_CONTAINER =
      1.0 / (TidalMiniCluster.NODE_MANAGERS * TidalMiniCluster.NM_VCORES);

  @Test(timeout = 300_000)
  public void mapReduceJobAndTezDagShareTheClusterUnderDrf() throws Exception {
    try (TidalMiniCluster cluster = TidalMiniCluster.start("drf", "tidal-two-queues.xml")) {
      TidalRest rest = TidalRest.of(cluster);
      assertEquals("policy", "drf", rest.queues().path("policy").asText());
      Configuration conf = cluster.clientConf();
      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(conf);
      yarn.start();
      TezConfiguration tezConf = TezSleepDag.configuration(conf, "b");
      // Each Tez task returns its container when it ends, as MapReduce tasks do, instead of the AM
      // keeping it for the next task: freed containers are the scheduler's to divide.
      tezConf.setBoolean(TezConfiguration.TEZ_AM_CONTAINER_REUSE_ENABLED, false);
      TezClient tez = TezClient.create("sleep-dag-b", tezConf, false);
      try {
        long start = System.nanoTime();
        Job mr = Apps.sleepJob(conf, "a", MR_MAPS, MR_MAP_MILLIS);
        mr.submit();
        ApplicationId mrApp = Apps.appId(mr);
        tez.start();
        DAGClient dag =
            tez.submitDAG(
                SleepDag.dag(
                    "sleep-dag-b", TEZ_PRODUCERS, TEZ_PRODUCER_MILLIS, TEZ_CONSUMER_MILLIS));
        ApplicationId tezApp = tez.getAppMasterApplicationId();
        System.out.printf("== MapReduce job %s in root.a, Tez DAG %s in root.b%n", mrApp, tezApp);

        // Sample Tidal's view until both apps have ended; print it when it changes.
        int samplesBothRunningTasks = 0;
        int samplesContendedBalanced = 0;
        String last = "";
        long deadline = start + TimeUnit.SECONDS.toNanos(240);
        while (!(Apps.ended(yarn, mrApp) && Apps.ended(yarn, tezApp))) {
          if (System.nanoTime() > deadline) {
            throw new AssertionError("the job and the DAG did not end within 240 s");
          }
          JsonNode status = rest.queues();
          JsonNode a = TidalRest.queue(status, "a");
          JsonNode b = TidalRest.queue(status, "b");
          long runningA = a.path("running_containers").asLong();
          long runningB = b.path("running_containers").asLong();
          // More than the AM in each queue: both apps ran tasks at the same moment.
          if (runningA >= 2 && runningB >= 2) {
            samplesBothRunningTasks++;
          }
          // Both queues waiting for containers, and DRF has evened out their shares.
          double shareA = a.path("dominant_share").asDouble();
          double shareB = b.path("dominant_share").asDouble();
          if (a.path("pending_containers").asLong() > 0
              && b.path("pending_containers").asLong() > 0
              && Math.abs(shareA - shareB) <= ONE_CONTAINER + 1e-9) {
            samplesContendedBalanced++;
          }
          String line =
              String.format(
                  Locale.ROOT,
                  "a: %d running %d pending share %.3f | b: %d running %d pending share %.3f",
                  runningA,
                  a.path("pending_containers").asLong(),
                  shareA,
                  runningB,
                  b.path("pending_containers").asLong(),
                  shareB);
          if (!line.equals(last)) {
            System.out.printf(
                Locale.ROOT, "   t=%5.1fs %s%n", (System.nanoTime() - start) / 1e9, line);
            last = line;
          }
          Thread.sleep(500);
        }

        ApplicationReport mrReport = Apps.awaitEnd(yarn, mrApp, 30);
        ApplicationReport tezReport = Apps.awaitEnd(yarn, tezApp, 30);
        DAGStatus dagStatus = dag.waitForCompletion();
        System.out.printf(
            Locale.ROOT,
            "== after %.1f s: MapReduce %s (%s), Tez DAG %s (%s); samples with both queues"
                + " running tasks: %d, contended with shares within one container: %d%n",
            (System.nanoTime() - start) / 1e9,
            mrReport.getFinalApplicationStatus(),
            mrReport.getQueue(),
            dagStatus.getState(),
            tezReport.getQueue(),
            samplesBothRunningTasks,
            samplesContendedBalanced);

        assertEquals("queue of the MapReduce job", "root.a", mrReport.getQueue());
        assertEquals("queue of the Tez DAG", "root.b", tezReport.getQueue());
        assertEquals(
            "MapReduce job: " + mrReport.getDiagnostics(),
            FinalApplicationStatus.SUCCEEDED,
            mrReport.getFinalApplicationStatus());
        assertTrue("MapReduce job reported unsuccessful", mr.isSuccessful());
        assertEquals(
            "Tez DAG: " + dagStatus.getDiagnostics(),
            DAGStatus.State.SUCCEEDED,
            dagStatus.getState());
        assertEquals(
            "Tez app: " + tezReport.getDiagnostics(),
            FinalApplicationStatus.SUCCEEDED,
            tezReport.getFinalApplicationStatus());
        assertTrue(
            "Tidal never showed root.a and root.b both holding more than their AM at once",
            samplesBothRunningTasks > 0);
        assertTrue(
            "while both queues had containers waiting, their dominant shares never came within one"
                + " container of each other",
            samplesContendedBalanced > 0);
      } finally {
        tez.stop();
        yarn.stop();
      }
    }
  }
}
