package org.tidal.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Level;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.apache.tez.client.TezClient;
import org.apache.tez.dag.api.DAG;
import org.apache.tez.dag.api.TezConfiguration;
import org.apache.tez.dag.api.client.DAGClient;
import org.apache.tez.dag.api.client.DAGStatus;
import org.junit.Test;
import org.tidal.it.tez.SleepDag;
import org.tidal.it.workload.TwoQueueWorkload;

/**
 * AM hints from a real Tez 0.9.2 ApplicationMaster: a two-vertex DAG runs with Tidal's Tez
 * history-logging service, which PUTs the DAG's hints to the scheduler's REST endpoint with the
 * AM's AMRM token, beside an unhinted MapReduce job in the same Carbyne-ordered queue.
 *
 * <p>The DAG is {@link TezSleepDag}'s: the Tez AM and its tasks run on this JVM's class path.
 */
public class TezHintsIT {
  static final String QUEUE = "a";
  static final int PRODUCER_TASKS = 3;

  /** Long enough for the hints publisher (every 500 ms here) to run while the DAG does. */
  static final long PRODUCER_MILLIS = 4000;

  static final long CONSUMER_MILLIS = 1000;
  static final String REST_LOGGER = "org.tidal.yarn.rest.TidalRestServer";

  /** Collects the messages of one logger (the RM runs in this JVM). */
  static final class Capture extends AppenderSkeleton {
    final List<String> messages = Collections.synchronizedList(new ArrayList<>());

    @Override
    protected void append(LoggingEvent event) {
      messages.add(event.getRenderedMessage());
    }

    @Override
    public void close() {}

    @Override
    public boolean requiresLayout() {
      return false;
    }

    List<String> containing(String text) {
      List<String> out = new ArrayList<>();
      synchronized (messages) {
        for (String m : messages) {
          if (m != null && m.contains(text)) {
            out.add(m);
          }
        }
      }
      return out;
    }
  }

  @Test(timeout = 300_000)
  public void tezAmPublishesHintsAndTokensAreBoundToTheirApp() throws Exception {
    // The AM cannot discover a port the RM bound at 0: the endpoint gets a fixed free one.
    int restPort = FreePorts.belowEphemeral(InetAddress.getLoopbackAddress().getHostAddress());
    String restAddress = "127.0.0.1:" + restPort;
    Logger restLog = Logger.getLogger(REST_LOGGER);
    Level restLevel = restLog.getLevel();
    Capture capture = new Capture();
    restLog.setLevel(Level.INFO);
    restLog.addAppender(capture);
    try (MiniClusterHarness cluster =
        MiniClusterHarness.start(
            SchedulerUnderTest.TIDAL,
            conf -> {
              conf.set(
                  "tidal.allocation.file",
                  SchedulerUnderTest.resourcePath("tidal-tez-carbyne.xml"));
              conf.set("tidal.rest.address", restAddress);
            })) {
      TidalRest rest = TidalRest.of(cluster);
      assertEquals(
          "app policy the scheduler runs",
          "carbyne",
          rest.queues().path("app_policy").getTextValue());
      Configuration conf = cluster.clientConf();
      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(conf);
      yarn.start();
      TezClient tez =
          TezClient.create("tidal-hints-it", tezConfiguration(conf, restAddress), false);
      try {
        tez.start();
        DAGClient dag = tez.submitDAG(dag());
        ApplicationId tezApp = tez.getAppMasterApplicationId();

        Job mr = sleepJob(conf);
        mr.submit();
        ApplicationId mrApp = TwoQueueWorkload.appId(mr.getJobID());
        System.out.printf(
            "== Tez DAG in %s, unhinted MapReduce job in %s, both in root.%s%n",
            tezApp, mrApp, QUEUE);

        // Each app's token is valid (not 401) but opens only its own app's hints (403 elsewhere).
        RMAppAttempt tezAttempt = runningAttempt(cluster, tezApp);
        RMAppAttempt mrAttempt = runningAttempt(cluster, mrApp);
        // Authorisation comes before the body is read, so any document shows the refusal.
        String hints = "{\"version\":1}";
        TidalRest.Reply mrOnTez = rest.putHints(tezApp.toString(), encoded(mrAttempt), hints);
        TidalRest.Reply tezOnMr = rest.putHints(mrApp.toString(), encoded(tezAttempt), hints);
        System.out.println(
            "== PUT hints of "
                + tezApp
                + " with the token of "
                + mrAttempt.getAppAttemptId()
                + ": "
                + mrOnTez);
        System.out.println(
            "== PUT hints of "
                + mrApp
                + " with the token of "
                + tezAttempt.getAppAttemptId()
                + ": "
                + tezOnMr);
        assertEquals(
            "PUT to the Tez app's hints with the MapReduce app's token: " + mrOnTez,
            403,
            mrOnTez.status);
        assertEquals(
            "PUT to the MapReduce app's hints with the Tez AM's token: " + tezOnMr,
            403,
            tezOnMr.status);

        DAGStatus status = dag.waitForCompletion();
        System.out.println("== Tez DAG finished: " + status.getState());
        assertEquals(
            "Tez DAG state: " + status.getDiagnostics(),
            DAGStatus.State.SUCCEEDED,
            status.getState());
        assertTrue("unhinted MapReduce job failed", mr.waitForCompletion(false));
        tez.stop();
        assertEquals(
            "final status of the Tez app",
            FinalApplicationStatus.SUCCEEDED,
            finalStatus(yarn, tezApp));
        assertEquals(
            "final status of the MapReduce app",
            FinalApplicationStatus.SUCCEEDED,
            finalStatus(yarn, mrApp));

        // The shim logs every REST call with its status; the AM's PUTs are those by its attempt.
        ApplicationAttemptId amAttempt = tezAttempt.getAppAttemptId();
        List<String> puts =
            capture.containing(
                "REST PUT /ws/v1/tidal/apps/" + tezApp + "/hints by " + amAttempt + " ");
        List<String> accepted = new ArrayList<>();
        for (String line : puts) {
          if (line.endsWith(": 200 hints accepted")) {
            accepted.add(line);
          }
        }
        System.out.printf(
            "== hints PUTs by the Tez AM (%s): %d, accepted %d%n",
            amAttempt, puts.size(), accepted.size());
        for (String line : puts) {
          System.out.println("   " + line);
        }
        assertFalse(
            "the Tez AM never had its hints accepted (PUT .../hints with status 200)",
            accepted.isEmpty());
        assertEquals("hints PUTs by the Tez AM that were refused", puts.size(), accepted.size());
        assertTrue(
            "the MapReduce job published hints, yet it has no hints publisher",
            capture
                .containing(
                    "REST PUT /ws/v1/tidal/apps/"
                        + mrApp
                        + "/hints by "
                        + mrAttempt.getAppAttemptId())
                .isEmpty());
      } finally {
        tez.stop();
        yarn.stop();
      }
    } finally {
      restLog.removeAppender(capture);
      restLog.setLevel(restLevel);
    }
  }

  private static TezConfiguration tezConfiguration(Configuration base, String restAddress) {
    TezConfiguration tez = TezSleepDag.configuration(base, QUEUE);
    // The plugin under test, in front of Tez's default history logging.
    tez.set(
        TezConfiguration.TEZ_HISTORY_LOGGING_SERVICE_CLASS,
        "org.tidal.yarn.tez.TidalHintsLoggingService");
    tez.set(
        "tidal.tez.history.logging.delegate.class",
        "org.apache.tez.dag.history.logging.impl.SimpleHistoryLoggingService");
    tez.setLong("tidal.tez.hints.min-interval-ms", 500);
    tez.set("tidal.rest.address", restAddress);
    tez.set("yarn.resourcemanager.hostname", "127.0.0.1");
    return tez;
  }

  /** producer (PRODUCER_TASKS tasks) -> broadcast -> consumer (1 task). */
  private static DAG dag() {
    return SleepDag.dag("tidal-hints-it", PRODUCER_TASKS, PRODUCER_MILLIS, CONSUMER_MILLIS);
  }

  private static Job sleepJob(Configuration base) throws Exception {
    Configuration conf = new Configuration(base);
    conf.set(MRJobConfig.QUEUE_NAME, QUEUE);
    SleepJob sleep = new SleepJob();
    sleep.setConf(conf);
    Job job = sleep.createJob(3, 0, 4000, 1, 0, 0);
    job.setJobName("sleep-unhinted");
    return job;
  }

  /** The app's current attempt once its AM has registered (its AMRM token is then in use). */
  private static RMAppAttempt runningAttempt(MiniClusterHarness cluster, ApplicationId app)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (true) {
      RMApp rmApp = cluster.resourceManager().getRMContext().getRMApps().get(app);
      RMAppAttempt attempt = rmApp == null ? null : rmApp.getCurrentAppAttempt();
      if (attempt != null
          && attempt.getAppAttemptState() == RMAppAttemptState.RUNNING
          && attempt.getAMRMToken() != null) {
        return attempt;
      }
      if (rmApp != null
          && rmApp.createApplicationState().ordinal() > YarnApplicationState.RUNNING.ordinal()) {
        throw new AssertionError(app + " ended before its AM ran: " + rmApp.getDiagnostics());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the AM of " + app + " did not register within 120 s");
      }
      Thread.sleep(250);
    }
  }

  private static String encoded(RMAppAttempt attempt) throws Exception {
    Token<AMRMTokenIdentifier> token = attempt.getAMRMToken();
    assertNotNull("no AMRM token for " + attempt.getAppAttemptId(), token);
    return token.encodeToUrlString();
  }

  private static FinalApplicationStatus finalStatus(YarnClient yarn, ApplicationId app)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      ApplicationReport report = yarn.getApplicationReport(app);
      YarnApplicationState state = report.getYarnApplicationState();
      if (state == YarnApplicationState.FINISHED
          || state == YarnApplicationState.FAILED
          || state == YarnApplicationState.KILLED) {
        return report.getFinalApplicationStatus();
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(app + " still " + state + " 60 s after its work finished");
      }
      Thread.sleep(250);
    }
  }
}
