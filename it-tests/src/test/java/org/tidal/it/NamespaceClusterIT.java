package org.tidal.it;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.codehaus.jackson.JsonNode;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/**
 * Tidal on a cluster of separate hosts ({@link NamespaceCluster}): the RM and three NodeManagers in
 * processes and network namespaces of their own, MapReduce jobs submitted from this JVM.
 *
 * <ul>
 *   <li>DRF: a NodeManager cut off the network mid-job is declared LOST, the containers it ran are
 *       run again elsewhere, the job succeeds with its first AM attempt and Tidal's books show no
 *       usage left; once the link is back the node is registered and used again.
 *   <li>BoPF: a job in a Hard LQ runs at its guaranteed rate and finishes before a TQ job submitted
 *       earlier.
 *   <li>A work-preserving RM restart while a MapReduce job and a Tez DAG run: the NodeManagers and
 *       the containers stay up, both succeed with one AM attempt and no map runs twice.
 * </ul>
 *
 * Each test loads its queue file with {@code yarn rmadmin -refreshQueues}, so they run in any order
 * on the one cluster.
 */
public class NamespaceClusterIT {
  private static final String DRF_QUEUES = "tidal-two-queues.xml";
  private static final String BOPF_QUEUES = "tidal-ns-cluster-bopf.xml";

  private static NamespaceCluster cluster;
  private static YarnClient yarn;

  @BeforeClass
  public static void startCluster() throws Exception {
    long start = System.nanoTime();
    cluster = NamespaceCluster.start(DRF_QUEUES);
    System.out.printf(
        Locale.ROOT,
        "== namespace cluster (RM + %d NodeManagers, each in its own JVM and namespace) started"
            + " in %.1f s%n",
        NamespaceCluster.NODE_MANAGERS.size(),
        seconds(System.nanoTime() - start));
    yarn = YarnClient.createYarnClient();
    yarn.init(cluster.clientConf());
    yarn.start();
  }

  @AfterClass
  public static void stopCluster() throws Exception {
    if (yarn != null) {
      yarn.stop();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test(timeout = 300_000)
  public void partitionedNodeManagerIsReplacedAndComesBack() throws Exception {
    cluster.useQueues(DRF_QUEUES);
    Checks checks = new Checks("NodeManager partition");
    String victim = null;
    try (RecoveryWorkload work = new RecoveryWorkload(cluster.clientConf())) {
      // Five map slots beside the AM: every node runs maps of the job.
      RecoveryWorkload.App app = work.submitMapReduce("a", 8, 12_000);
      try (AttemptWatch attempts = new AttemptWatch(app.job)) {
        victim = awaitTaskNodeBesideAm(app.id);
        Map<String, String> onVictim = NamespaceCluster.containersOn(victim, app.id);
        long cut = System.nanoTime();
        cluster.partition(victim);
        String lostNode = victim;
        boolean lost =
            NamespaceCluster.await(
                NamespaceCluster.NM_EXPIRY_MILLIS + 30_000,
                () -> hasState(lostNode, NodeState.LOST));
        long toLost = System.nanoTime() - cut;
        checks.check(lost, victim + " was not LOST " + seconds(toLost) + " s after its link went");
        boolean dropped = NamespaceCluster.await(10_000, () -> tidalNodes() == 2);
        checks.check(
            dropped, "Tidal still counts " + tidalNodes() + " nodes with " + victim + " LOST");

        Map<TaskID, List<AttemptWatch.Attempt>> byTask = attempts.awaitJob(180_000);
        ApplicationReport report = yarn.getApplicationReport(app.id);
        double jobSeconds = (report.getFinishTime() - report.getStartTime()) / 1000.0;
        List<String> lostAttempts = new ArrayList<>();
        List<String> reRuns = new ArrayList<>();
        for (Map.Entry<TaskID, List<AttemptWatch.Attempt>> task : byTask.entrySet()) {
          AttemptWatch.Attempt last = task.getValue().get(task.getValue().size() - 1);
          for (AttemptWatch.Attempt a : task.getValue()) {
            if (!a.succeeded()) {
              lostAttempts.add(a.toString());
              checks.check(a.host.equals(victim), "an attempt failed off the cut node: " + a);
            }
          }
          if (task.getValue().size() > 1) {
            reRuns.add(last.toString());
            checks.check(
                last.succeeded() && !last.host.equals(victim),
                "task "
                    + task.getKey()
                    + " lost its container and did not succeed on another"
                    + " node: "
                    + task.getValue());
          }
        }
        System.out.printf(
            Locale.ROOT,
            "== partition: %s cut while it ran %s of %s; LOST after %.1f s; attempts lost: %s;"
                + " re-run: %s; job took %.1f s%n",
            victim,
            onVictim.keySet(),
            app.id,
            seconds(toLost),
            lostAttempts,
            reRuns,
            jobSeconds);
        checks.check(
            app.job.isSuccessful(), app.id + " did not succeed: " + report.getDiagnostics());
        checks.check(
            yarn.getApplicationAttempts(app.id).size() == 1,
            app.id + " needed another AM attempt although its AM was not on " + victim);
        checks.check(
            !onVictim.isEmpty() && lostAttempts.size() >= onVictim.size(),
            victim
                + " ran "
                + onVictim.size()
                + " containers when it was cut, but only these attempts were lost: "
                + lostAttempts);
        checks.check(
            reRuns.size() == lostAttempts.size(),
            "lost attempts " + lostAttempts + " but re-run tasks " + reRuns);
      }
      checks.check(
          NamespaceCluster.await(30_000, () -> nothingUsed("a")),
          "Tidal still books usage after the job: " + cluster.tidal().queues());

      cluster.heal(victim);
      String healed = victim;
      boolean back =
          NamespaceCluster.await(
              60_000, () -> hasState(healed, NodeState.RUNNING) && tidalNodes() == 3);
      checks.check(back, victim + " did not come back RUNNING in the RM and in Tidal");
      victim = null;
      // Six containers fill the cluster: the node that came back must run some.
      RecoveryWorkload.App again = work.submitMapReduce("b", 6, 3_000);
      try (AttemptWatch attempts = new AttemptWatch(again.job)) {
        List<String> onHealed = new ArrayList<>();
        for (List<AttemptWatch.Attempt> task : attempts.awaitJob(180_000).values()) {
          for (AttemptWatch.Attempt a : task) {
            if (a.succeeded() && a.host.equals(healed)) {
              onHealed.add(a.id);
            }
          }
        }
        System.out.printf(
            Locale.ROOT, "== after healing: %s ran %s of %s%n", healed, onHealed, again.id);
        checks.check(again.job.isSuccessful(), again.id + " did not succeed after the heal");
        checks.check(!onHealed.isEmpty(), healed + " ran no task after it came back");
      }
      checks.check(
          NamespaceCluster.await(30_000, () -> nothingUsed("b")),
          "Tidal still books usage after the second job: " + cluster.tidal().queues());
    } finally {
      if (victim != null) {
        cluster.heal(victim);
      }
    }
    checks.assertAllPassed();
  }

  @Test(timeout = 240_000)
  public void hardLatencyQueueOvertakesAnEarlierThroughputJob() throws Exception {
    cluster.useQueues(BOPF_QUEUES);
    Checks checks = new Checks("BoPF LQ and TQ");
    boolean hard =
        NamespaceCluster.await(
            30_000,
            () ->
                "hard"
                    .equals(
                        TidalRest.queue(cluster.tidal().queues(), "lq")
                            .path("class")
                            .getTextValue()));
    checks.check(hard, "root.lq is not Hard: " + cluster.tidal().queues());
    try (RecoveryWorkload work = new RecoveryWorkload(cluster.clientConf())) {
      RecoveryWorkload.App tq = work.submitMapReduce("tq", 8, 6_000);
      // The TQ job starts first: under DRF it would keep at least an equal share throughout.
      NamespaceCluster.await(60_000, () -> !NamespaceCluster.containersOnAll(tq.id).isEmpty());
      RecoveryWorkload.App lq = work.submitMapReduce("lq", 8, 6_000);
      // While both jobs wait for containers, the LQ's burst holds its guaranteed 5 vcores (DRF
      // would split the six containers three and three).
      int lqMostWhileContended = 0;
      while (!lq.job.isComplete() || !tq.job.isComplete()) {
        JsonNode status = cluster.tidal().queues();
        JsonNode lqStatus = TidalRest.queue(status, "lq");
        if (lqStatus.path("pending_containers").getLongValue() > 0
            && TidalRest.queue(status, "tq").path("pending_containers").getLongValue() > 0) {
          lqMostWhileContended =
              Math.max(lqMostWhileContended, lqStatus.path("running_containers").getIntValue());
        }
        Thread.sleep(250);
      }
      checks.check(lq.job.isSuccessful(), lq.id + " (LQ) did not succeed");
      checks.check(tq.job.isSuccessful(), tq.id + " (TQ) did not succeed");
      ApplicationReport lqReport = yarn.getApplicationReport(lq.id);
      ApplicationReport tqReport = yarn.getApplicationReport(tq.id);
      double lqSeconds = (lqReport.getFinishTime() - lqReport.getStartTime()) / 1000.0;
      double tqSeconds = (tqReport.getFinishTime() - tqReport.getStartTime()) / 1000.0;
      System.out.printf(
          Locale.ROOT,
          "== BoPF: LQ job %.1f s, TQ job (submitted first) %.1f s; the LQ ran up to %d"
              + " containers while both waited for more%n",
          lqSeconds,
          tqSeconds,
          lqMostWhileContended);
      checks.check(
          lqMostWhileContended >= 5,
          "the Hard LQ ran at most "
              + lqMostWhileContended
              + " containers while both queues waited, below its guaranteed 5");
      checks.check(
          lqReport.getFinishTime() < tqReport.getFinishTime(),
          String.format(
              Locale.ROOT,
              "the Hard LQ's job (%.1f s) did not finish before the TQ's (%.1f s), submitted"
                  + " before it",
              lqSeconds,
              tqSeconds));
    }
    checks.check(
        NamespaceCluster.await(30_000, () -> nothingUsed("tq") && nothingUsed("lq")),
        "Tidal still books usage after the jobs: " + cluster.tidal().queues());
    checks.assertAllPassed();
  }

  /**
   * tidal-replay (java/replay) runs a resolved workload on the cluster as Tez DAGs, from the
   * command line as a user would: a TQ job at 0 s and a two-stage LQ job at 3 s, each with an AM of
   * its own in its queue. Its jobs.csv has every job with times in order, each JCT at least its
   * critical path, the LQ job arriving when the workload says, and the RM ran each application in
   * its job's queue.
   */
  @Test(timeout = 240_000)
  public void tidalReplayRunsAWorkloadAsTezDags() throws Exception {
    cluster.useQueues(BOPF_QUEUES);
    File jar = new File(System.getProperty("it.replay.jar"));
    if (!jar.isFile()) {
      throw new AssertionError(jar + " is missing: make jar builds it");
    }
    File out = new File(System.getProperty("it.work.dir"), "replay");
    List<String> command =
        List.of(
            System.getProperty("java.home") + "/bin/java",
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-Djdk.net.hosts.file=" + System.getProperty("jdk.net.hosts.file"),
            "-cp",
            jar + File.pathSeparator + System.getProperty("java.class.path"),
            "org.tidal.replay.Main",
            "-D",
            "yarn.resourcemanager.hostname=" + NamespaceCluster.RM_HOST,
            "-D",
            "fs.defaultFS=file:///",
            "-D",
            "tez.staging-dir=" + new File(out, "staging").getAbsolutePath(),
            SchedulerUnderTest.resourcePath("replay-workload.json"),
            "--out",
            out.getAbsolutePath(),
            "--ship-classpath",
            "--progress-interval-s",
            "5");
    long start = System.nanoTime();
    // Its output goes to a file: a child writing to this forked JVM's stdout would garble the
    // test runner's channel.
    out.mkdirs();
    File log = new File(out, "replay.log");
    Process replay =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
    boolean ended = replay.waitFor(200, TimeUnit.SECONDS);
    if (!ended) {
      replay.destroyForcibly();
    }
    List<String> output = Files.readAllLines(log.toPath());
    output.forEach(line -> System.out.println("   [tidal-replay] " + line));
    assertTrue("tidal-replay did not finish within 200 s", ended);
    System.out.printf(
        Locale.ROOT, "== tidal-replay ran 2 jobs in %.1f s%n", seconds(System.nanoTime() - start));
    assertEquals("tidal-replay's exit status", 0, replay.exitValue());

    List<String> lines = Files.readAllLines(new File(out, "jobs.csv").toPath());
    assertEquals(
        "job,queue,class,arrival_s,start_s,finish_s,jct_s,deadline_s,met_deadline,tasks",
        lines.get(0));
    Map<String, String[]> jobs = new TreeMap<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",", -1);
      jobs.put(f[0], f);
    }
    assertEquals(List.of("lq-0", "tq-0"), new ArrayList<>(jobs.keySet()));
    // job -> {queue, class, lower bound of its JCT (critical path), arrival}
    Object[][] expected = {{"tq-0", "tq", "TQ", 4.0, 0.0}, {"lq-0", "lq", "LQ", 3.0, 3.0}};
    for (Object[] e : expected) {
      String[] f = jobs.get((String) e[0]);
      double arrival = Double.parseDouble(f[3]);
      double startS = Double.parseDouble(f[4]);
      double finish = Double.parseDouble(f[5]);
      double jct = Double.parseDouble(f[6]);
      String row = String.join(",", f);
      assertEquals(row, e[1], f[1]);
      assertEquals(row, e[2], f[2]);
      assertTrue(row, arrival >= (double) e[4] && arrival < (double) e[4] + 2);
      assertTrue(row, arrival <= startS && startS <= finish);
      assertEquals(row, finish - arrival, jct, 0.002);
      assertTrue(row, jct >= (double) e[3]);
    }
    // The LQ job's deadline as the workload has it, and whether it was met; none for the TQ job.
    assertEquals("33.000", jobs.get("lq-0")[7]);
    assertTrue(List.of("true", "false").contains(jobs.get("lq-0")[8]));
    assertEquals("", jobs.get("tq-0")[7]);

    // A Tez AM unregisters a moment after its DAG ends, which is when the replay moves on.
    Map<String, ApplicationReport> apps = new TreeMap<>();
    assertTrue(
        "the replayed applications did not all end within 30 s: " + apps,
        NamespaceCluster.await(
            30_000,
            () -> {
              apps.clear();
              for (ApplicationReport app : yarn.getApplications()) {
                if (jobs.containsKey(app.getName())
                    && app.getFinalApplicationStatus() != FinalApplicationStatus.UNDEFINED) {
                  apps.put(app.getName(), app);
                }
              }
              return apps.size() == jobs.size();
            }));
    Map<String, String> queueOf = new TreeMap<>();
    for (ApplicationReport app : apps.values()) {
      assertEquals(
          app.getName(), FinalApplicationStatus.SUCCEEDED, app.getFinalApplicationStatus());
      queueOf.put(app.getName(), app.getQueue());
    }
    assertEquals(Map.of("lq-0", "root.lq", "tq-0", "root.tq"), queueOf);
  }

  @Test(timeout = 300_000)
  public void runningJobSurvivesAnRmRestart() throws Exception {
    cluster.useQueues(DRF_QUEUES);
    Checks checks = new Checks("RM restart");
    try (RecoveryWorkload work = new RecoveryWorkload(cluster.clientConf())) {
      RecoveryWorkload.App dag = work.submitTez("b", 2, 15_000, 1_000);
      RecoveryWorkload.App app = work.submitMapReduce("a", 6, 10_000);
      try (AttemptWatch attempts = new AttemptWatch(app.job)) {
        // Both AMs and a task of each run when the RM goes.
        NamespaceCluster.await(
            120_000,
            () ->
                NamespaceCluster.containersOnAll(app.id).size() >= 2
                    && NamespaceCluster.containersOnAll(dag.id).size() >= 2);
        long restart = System.nanoTime();
        cluster.restartResourceManager();
        double restartSeconds = seconds(System.nanoTime() - restart);
        Map<TaskID, List<AttemptWatch.Attempt>> byTask = attempts.awaitJob(180_000);
        ApplicationReport report = yarn.getApplicationReport(app.id);
        System.out.printf(
            Locale.ROOT,
            "== RM restart: down and back with every NodeManager in %.1f s; %s took %.1f s,"
                + " attempts %s%n",
            restartSeconds,
            app.id,
            (report.getFinishTime() - report.getStartTime()) / 1000.0,
            byTask.values());
        checks.check(
            app.job.isSuccessful(), app.id + " did not succeed: " + report.getDiagnostics());
        checks.check(
            yarn.getApplicationAttempts(app.id).size() == 1,
            app.id + " lost its AM in the restart");
        checks.check(byTask.size() == 6, "expected 6 maps, saw " + byTask.keySet());
        for (Map.Entry<TaskID, List<AttemptWatch.Attempt>> task : byTask.entrySet()) {
          checks.check(
              task.getValue().size() == 1 && task.getValue().get(0).succeeded(),
              "task " + task.getKey() + " ran more than once: " + task.getValue());
        }
      }
      boolean dagDone =
          NamespaceCluster.await(
              120_000,
              () ->
                  yarn.getApplicationReport(dag.id).getFinalApplicationStatus()
                      != FinalApplicationStatus.UNDEFINED);
      ApplicationReport dagReport = yarn.getApplicationReport(dag.id);
      System.out.printf(
          Locale.ROOT,
          "== RM restart: Tez DAG %s %s in %.1f s%n",
          dag.id,
          dagReport.getFinalApplicationStatus(),
          (dagReport.getFinishTime() - dagReport.getStartTime()) / 1000.0);
      checks.check(
          dagDone && dagReport.getFinalApplicationStatus() == FinalApplicationStatus.SUCCEEDED,
          "the Tez DAG " + dag.id + " did not succeed: " + dagReport.getDiagnostics());
      checks.check(
          yarn.getApplicationAttempts(dag.id).size() == 1,
          "the Tez DAG " + dag.id + " lost its AM in the restart");
    }
    checks.check(
        NamespaceCluster.await(30_000, () -> nothingUsed("a") && nothingUsed("b")),
        "Tidal still books usage after the job: " + cluster.tidal().queues());
    checks.assertAllPassed();
  }

  /**
   * Waits until a NodeManager without {@code app}'s AM container runs a task container of it;
   * returns it. The AM's container is the first of the attempt.
   */
  private static String awaitTaskNodeBesideAm(ApplicationId app) throws Exception {
    AtomicReference<String> found = new AtomicReference<>();
    boolean ok =
        NamespaceCluster.await(
            120_000,
            () -> {
              for (String nm : NamespaceCluster.NODE_MANAGERS) {
                Map<String, String> containers = NamespaceCluster.containersOn(nm, app);
                boolean am =
                    containers.keySet().stream()
                        .anyMatch(id -> ContainerId.fromString(id).getContainerId() == 1);
                if (!am && containers.containsValue("RUNNING")) {
                  found.set(nm);
                  return true;
                }
              }
              return false;
            });
    if (!ok) {
      throw new AssertionError("no NodeManager beside the AM's ran a task of " + app);
    }
    return found.get();
  }

  private static boolean hasState(String host, NodeState state) throws Exception {
    for (NodeReport node : yarn.getNodeReports(state)) {
      if (node.getNodeId().getHost().equals(host)) {
        return true;
      }
    }
    return false;
  }

  private static long tidalNodes() throws Exception {
    return cluster.tidal().queues().path("nodes").getLongValue();
  }

  /** Tidal's books show no container in {@code queue} and nothing used in the cluster. */
  private static boolean nothingUsed(String queue) throws Exception {
    JsonNode status = cluster.tidal().queues();
    JsonNode q = TidalRest.queue(status, queue);
    return status.path("used").path("vcores").getLongValue() == 0
        && status.path("used").path("memory_mb").getLongValue() == 0
        && q.path("running_containers").getLongValue() == 0
        && q.path("used").path("vcores").getLongValue() == 0;
  }

  private static double seconds(long nanos) {
    return nanos / (double) TimeUnit.SECONDS.toNanos(1);
  }
}
