package org.tidal.replay;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.tez.client.TezClient;
import org.apache.tez.dag.api.TezConfiguration;
import org.apache.tez.dag.api.client.DAGClient;
import org.apache.tez.dag.api.client.DAGStatus;
import org.apache.tez.dag.api.client.Progress;

/**
 * Submits every job of a workload as a Tez DAG at its arrival (times multiplied by the time scale),
 * each with an ApplicationMaster of its own in the job's queue, and watches them to the end.
 *
 * <p>One AM per job, as tidal-sim models it (an AM container held for the job's lifetime, and one
 * application per job for the scheduler to order): a shared Tez session would put every job of a
 * queue behind one AM and one application.
 */
final class Replayer {
  /** What the command line sets. */
  static final class Options {
    double timeScale = 1.0;
    boolean burn;
    double burnMemoryFraction = 0.5;
    int amMemoryMb = 512;
    int amVcores = 1;
    boolean hints = true;
    boolean containerReuse;
    boolean shipClasspath;
    long progressIntervalMs = 5000;
  }

  /** One job's run: wall-clock times in ms since the replay started, -1 until they happen. */
  static final class Run {
    final Workload.Job job;
    volatile long submitMs = -1;

    /** When the RM had the application: submitMs plus the client's staging and submission. */
    volatile long acceptedMs = -1;

    volatile long startMs = -1;
    volatile long finishMs = -1;
    volatile int tasksDone;
    volatile String state = "WAITING";
    volatile String appId = "";
    volatile String error = "";

    Run(Workload.Job job) {
      this.job = job;
    }

    boolean succeeded() {
      return "SUCCEEDED".equals(state);
    }
  }

  private static final long POLL_MS = 200;
  private static final EnumSet<DAGStatus.State> ENDED =
      EnumSet.of(
          DAGStatus.State.SUCCEEDED,
          DAGStatus.State.FAILED,
          DAGStatus.State.KILLED,
          DAGStatus.State.ERROR);

  private final Configuration conf;
  private final Workload workload;
  private final Options options;
  private final PrintStream log;
  private long t0;

  Replayer(Configuration conf, Workload workload, Options options, PrintStream log) {
    this.conf = conf;
    this.workload = workload;
    this.options = options;
    this.log = log;
  }

  private long now() {
    return System.currentTimeMillis() - t0;
  }

  /** Runs every job to its end; returns the runs in the workload's order. */
  List<Run> run() throws InterruptedException {
    t0 = System.currentTimeMillis();
    List<Run> runs = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (Workload.Job job : workload.jobs) {
      Run r = new Run(job);
      runs.add(r);
      Thread t = new Thread(() -> replay(r), "replay-" + job.name);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    Thread progress = new Thread(() -> progress(runs), "replay-progress");
    progress.setDaemon(true);
    progress.start();
    for (Thread t : threads) {
      t.join();
    }
    progress.interrupt();
    printProgress(runs);
    return runs;
  }

  private void replay(Run r) {
    Workload.Job job = r.job;
    TezClient tez = null;
    try {
      Thread.sleep(Math.max(0, Math.round(job.arrivalMs * options.timeScale) - now()));
      r.submitMs = now();
      r.state = "SUBMITTED";
      tez = TezClient.create(job.name, tezConf(job), false);
      tez.start();
      DAGClient dag =
          tez.submitDAG(
              JobDag.of(job, options.timeScale, options.burn, options.burnMemoryFraction, conf));
      r.acceptedMs = now();
      r.appId = String.valueOf(tez.getAppMasterApplicationId());
      while (true) {
        DAGStatus status = dag.getDAGStatus(null);
        DAGStatus.State state = status.getState();
        if (r.startMs < 0 && state != DAGStatus.State.SUBMITTED && state != null) {
          r.startMs = now();
        }
        Progress p = status.getDAGProgress();
        if (p != null) {
          r.tasksDone = p.getSucceededTaskCount();
        }
        if (ENDED.contains(state)) {
          r.finishMs = now();
          r.state = state.name();
          if (state != DAGStatus.State.SUCCEEDED) {
            r.error = String.join("; ", status.getDiagnostics());
          }
          break;
        }
        Thread.sleep(POLL_MS);
      }
    } catch (Exception e) {
      r.finishMs = now();
      r.state = "ERROR";
      r.error = e.toString();
      log.printf("job %s: %s%n", job.name, e);
    } finally {
      if (tez != null) {
        try {
          tez.stop();
        } catch (Exception e) {
          log.printf("job %s: stopping its Tez client: %s%n", job.name, e);
        }
      }
    }
  }

  /** Tez settings of one job's AM and tasks. */
  private TezConfiguration tezConf(Workload.Job job) {
    TezConfiguration tez = new TezConfiguration(conf);
    tez.set(TezConfiguration.TEZ_QUEUE_NAME, job.queue);
    tez.setIfUnset(
        TezConfiguration.TEZ_AM_RESOURCE_MEMORY_MB, Integer.toString(options.amMemoryMb));
    tez.setIfUnset(TezConfiguration.TEZ_AM_RESOURCE_CPU_VCORES, Integer.toString(options.amVcores));
    tez.setBoolean(TezConfiguration.TEZ_AM_CONTAINER_REUSE_ENABLED, options.containerReuse);
    if (options.shipClasspath) {
      // No Tez tarball: AM and tasks run on this JVM's class path, which every node can read.
      tez.setBoolean(TezConfiguration.TEZ_IGNORE_LIB_URIS, true);
      tez.setBoolean(TezConfiguration.TEZ_USE_CLUSTER_HADOOP_LIBS, false);
      tez.set(
          TezConfiguration.TEZ_CLUSTER_ADDITIONAL_CLASSPATH_PREFIX,
          System.getProperty("java.class.path"));
    }
    if (!System.getProperty("java.specification.version").startsWith("1.")) {
      // Tez 0.9's default JVM options do not start on Java 9+, and it needs a URLClassLoader as
      // system class loader; the AM's web app reflects into java.lang like the RM's.
      String opts =
          "--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED"
              + " -Djava.system.class.loader="
              + TezAmClassLoader.class.getName()
              + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData";
      tez.setIfUnset(TezConfiguration.TEZ_AM_LAUNCH_CMD_OPTS, opts);
      tez.setIfUnset(TezConfiguration.TEZ_TASK_LAUNCH_CMD_OPTS, opts);
    }
    if (options.hints) {
      tez.set(
          TezConfiguration.TEZ_HISTORY_LOGGING_SERVICE_CLASS,
          "org.tidal.yarn.tez.TidalHintsLoggingService");
      long ms = 0;
      for (Workload.Stage s : job.stages) {
        for (long d : s.taskDurationsMs) {
          ms += d;
        }
      }
      // The plugin's estimate until a vertex's first task ends: the job's mean task.
      tez.setLong(
          "tidal.tez.hints.default-task-duration-ms",
          Math.max(1, Math.round(ms * options.timeScale / job.tasks())));
    }
    return tez;
  }

  private void progress(List<Run> runs) {
    try {
      while (true) {
        Thread.sleep(options.progressIntervalMs);
        printProgress(runs);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void printProgress(List<Run> runs) {
    int submitted = 0;
    int running = 0;
    int done = 0;
    int failed = 0;
    long tasks = 0;
    long tasksDone = 0;
    for (Run r : runs) {
      tasks += r.job.tasks();
      tasksDone += r.tasksDone;
      if (r.submitMs >= 0) {
        submitted++;
      }
      if (r.finishMs >= 0) {
        done++;
        failed += r.succeeded() ? 0 : 1;
      } else if (r.startMs >= 0) {
        running++;
      }
    }
    log.printf(
        "[%7.1f s] jobs: %d/%d submitted, %d running, %d done (%d failed); tasks %d/%d%n",
        now() / 1000.0, submitted, runs.size(), running, done, failed, tasksDone, tasks);
  }
}
