package org.tidal.it;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.tez.client.TezClient;
import org.apache.tez.dag.api.TezConfiguration;
import org.tidal.it.tez.SleepDag;
import org.tidal.it.workload.TwoQueueWorkload;

/**
 * Applications whose running work must survive a ResourceManager restart, a failover or a core
 * panic: MapReduce sleep jobs (map-only) and optionally a Tez DAG, each in a named queue, and what
 * became of them.
 *
 * <p>Every application runs each of its tasks in a container of its own (Tez's container reuse is
 * off, speculation is off for both), so an application that lost no work starts exactly one
 * container for its AM and one per task; any container started beyond that re-ran an AM or a task.
 * Their states, final statuses and attempts come from the RM, the containers from {@link
 * ContainerLedger}.
 */
final class RecoveryWorkload implements AutoCloseable {
  /** One application and, once {@link #collect}ed, its outcome. */
  static final class App {
    final String kind;
    final String queue;
    final ApplicationId id;

    /** One AM plus one per task. */
    final int expectedContainers;

    /** The MapReduce client's handle (null for a Tez DAG): its task attempts, its outcome. */
    Job job;

    YarnApplicationState state;
    FinalApplicationStatus finalStatus;
    String diagnostics = "";
    int attempts;
    int containers;
    final List<String> killedByRm = new ArrayList<>();

    /** Container ids the NodeManagers started more than once: an RM issued the id twice. */
    final Set<ContainerId> reusedIds = new TreeSet<>();

    App(String kind, String queue, ApplicationId id, int expectedContainers) {
      this.kind = kind;
      this.queue = queue;
      this.id = id;
      this.expectedContainers = expectedContainers;
    }

    boolean succeeded() {
      return state == YarnApplicationState.FINISHED
          && finalStatus == FinalApplicationStatus.SUCCEEDED;
    }

    String name() {
      return kind + " in " + queue + " (" + id + ")";
    }
  }

  private final Configuration conf;
  private final YarnClient yarn;
  private final List<App> apps = new ArrayList<>();
  private final List<TezClient> tezClients = new ArrayList<>();

  /** When a container killed by the RM was first seen, or -1. */
  private long firstKillSeen = -1;

  RecoveryWorkload(Configuration clientConf) {
    this.conf = clientConf;
    this.yarn = YarnClient.createYarnClient();
    yarn.init(clientConf);
    yarn.start();
  }

  List<App> apps() {
    return apps;
  }

  /** A map-only SleepJob of {@code maps} maps sleeping {@code mapMillis} each. */
  App submitMapReduce(String queue, int maps, long mapMillis) throws Exception {
    Configuration jobConf = new Configuration(conf);
    jobConf.set(MRJobConfig.QUEUE_NAME, queue);
    SleepJob sleep = new SleepJob();
    sleep.setConf(jobConf);
    Job job = sleep.createJob(maps, 0, mapMillis, 1, 0, 0);
    job.setJobName("sleep-" + queue);
    job.submit();
    App app = new App("MapReduce", queue, TwoQueueWorkload.appId(job.getJobID()), 1 + maps);
    app.job = job;
    apps.add(app);
    return app;
  }

  /** A {@link TezSleepDag} of {@code producers} producer tasks and one consumer. */
  App submitTez(String queue, int producers, long producerMillis, long consumerMillis)
      throws Exception {
    TezConfiguration tezConf = TezSleepDag.configuration(conf, queue);
    tezConf.setBoolean(TezConfiguration.TEZ_AM_CONTAINER_REUSE_ENABLED, false);
    TezClient tez = TezClient.create("recovery-" + queue, tezConf, false);
    tezClients.add(tez);
    tez.start();
    tez.submitDAG(SleepDag.dag("recovery-" + queue, producers, producerMillis, consumerMillis));
    App app = new App("Tez DAG", queue, tez.getAppMasterApplicationId(), 1 + producers + 1);
    apps.add(app);
    return app;
  }

  /**
   * Waits until every application has its AM and at least one task running on a NodeManager at the
   * same moment.
   */
  void awaitAllRunningTasks(long timeoutSeconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    while (true) {
      StringBuilder status = new StringBuilder();
      boolean all = true;
      for (App app : apps) {
        int running = ContainerLedger.running(app.id);
        status.append(' ').append(app.queue).append('=').append(running);
        all &= running >= 2;
      }
      if (all) {
        return;
      }
      for (App app : apps) {
        YarnApplicationState state = yarn.getApplicationReport(app.id).getYarnApplicationState();
        if (finished(state)) {
          throw new AssertionError(
              app.name()
                  + " ended ("
                  + state
                  + ") before every application had its AM and a task running at once;"
                  + " containers running per queue:"
                  + status);
        }
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "not every application had its AM and a task running within "
                + timeoutSeconds
                + " s; containers running per queue:"
                + status);
      }
      Thread.sleep(100);
    }
  }

  /**
   * Waits until every application has finished, for at most {@code timeoutSeconds}. Once a
   * container killed by the RM is seen it waits {@code graceSeconds} more at most: the work is
   * already lost, and a killed task whose AM never hears of it would hang its job for the task
   * timeout (10 min). Returns whether every application finished.
   */
  boolean awaitFinished(long timeoutSeconds, long graceSeconds) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    while (true) {
      boolean all = true;
      for (App app : apps) {
        all &= finished(yarn.getApplicationReport(app.id).getYarnApplicationState());
      }
      if (all) {
        return true;
      }
      long now = System.nanoTime();
      if (firstKillSeen < 0 && !ContainerLedger.killedByRm().isEmpty()) {
        firstKillSeen = now;
      }
      if (firstKillSeen >= 0 && now - firstKillSeen > TimeUnit.SECONDS.toNanos(graceSeconds)) {
        return false;
      }
      if (now > deadline) {
        return false;
      }
      Thread.sleep(250);
    }
  }

  /** Reads each application's outcome from the RM and the container ledger. */
  void collect() throws Exception {
    for (App app : apps) {
      ApplicationReport report = yarn.getApplicationReport(app.id);
      app.state = report.getYarnApplicationState();
      app.finalStatus = report.getFinalApplicationStatus();
      app.diagnostics = report.getDiagnostics() == null ? "" : report.getDiagnostics();
      app.attempts = yarn.getApplicationAttempts(app.id).size();
      List<ContainerLedger.Entry> containers = ContainerLedger.ofApp(app.id);
      app.containers = containers.size();
      app.killedByRm.clear();
      app.reusedIds.clear();
      Set<ContainerId> seen = new HashSet<>();
      for (ContainerLedger.Entry e : containers) {
        if (e.killedByRm()) {
          app.killedByRm.add(e.describe());
        }
        if (!seen.add(e.id)) {
          app.reusedIds.add(e.id);
        }
      }
    }
  }

  /** The checks every recovery test makes of every application. */
  void checkApps(Checks checks, String when) {
    for (App app : apps) {
      checks.check(
          app.succeeded(),
          String.format(
              Locale.ROOT,
              "%s did not succeed %s: %s/%s %s",
              app.name(),
              when,
              app.state,
              app.finalStatus,
              app.diagnostics.replaceAll("\\s+", " ")));
      checks.check(
          app.attempts == 1,
          app.name() + " took " + app.attempts + " attempts " + when + " (a lost AM), not 1");
      checks.check(
          app.killedByRm.isEmpty(),
          app.name()
              + " had "
              + app.killedByRm.size()
              + " containers killed by the RM "
              + when
              + ": "
              + String.join(", ", app.killedByRm));
      checks.check(
          app.reusedIds.isEmpty(),
          app.name()
              + " had containers started twice under the same id "
              + when
              + " (an RM issued a container id it had issued before): "
              + app.reusedIds);
      checks.check(
          app.containers == app.expectedContainers,
          String.format(
              Locale.ROOT,
              "%s started %d containers %s, expected %d (its AM and one per task): %s",
              app.name(),
              app.containers,
              when,
              app.expectedContainers,
              app.containers > app.expectedContainers ? "work was run again" : "work never ran"));
    }
  }

  private static boolean finished(YarnApplicationState state) {
    return state == YarnApplicationState.FINISHED
        || state == YarnApplicationState.FAILED
        || state == YarnApplicationState.KILLED;
  }

  /** Kills whatever is still running, so that the cluster stops quickly. */
  @Override
  public void close() {
    for (App app : apps) {
      try {
        if (!finished(yarn.getApplicationReport(app.id).getYarnApplicationState())) {
          yarn.killApplication(app.id);
        }
      } catch (Exception e) {
        System.out.println("could not kill " + app.id + ": " + e);
      }
    }
    for (TezClient tez : tezClients) {
      try {
        tez.stop();
      } catch (Exception e) {
        System.out.println("could not stop a Tez client: " + e);
      }
    }
    yarn.stop();
  }
}
