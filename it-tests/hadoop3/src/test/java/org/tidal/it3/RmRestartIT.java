package org.tidal.it3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.jobhistory.JobHistoryParser;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.junit.Test;

/**
 * Work-preserving ResourceManager restart on Hadoop 3.4.3 under Tidal (BoPF): while a MapReduce job
 * in the TQ and one in the admitted LQ have their AM and maps running, the RM stops and a new one
 * starts on the same ports and state store; the NodeManagers and their containers stay up. Both
 * jobs must then succeed with their first AM attempt and with no map run twice (a container the new
 * RM did not adopt would be killed, and its map run again), and the queues keep their admission
 * classes.
 */
public class RmRestartIT {
  static final Map<String, Integer> MAPS = new LinkedHashMap<>();

  static {
    MAPS.put("a", 4);
    MAPS.put("lq", 3);
  }

  static final long MAP_MILLIS = 10_000;

  @Test(timeout = 300_000)
  public void runningJobsSurviveAWorkPreservingRmRestart() throws Exception {
    try (TidalMiniCluster cluster =
        TidalMiniCluster.startRestartable("restart", "tidal-bopf-lq.xml")) {
      TidalRest.of(cluster).awaitClass("lq", Set.of("hard", "soft"));
      Configuration conf = cluster.clientConf();
      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(conf);
      yarn.start();
      try {
        List<Job> jobs = new ArrayList<>();
        for (Map.Entry<String, Integer> queue : MAPS.entrySet()) {
          Job job = Apps.sleepJob(conf, queue.getKey(), queue.getValue(), MAP_MILLIS);
          job.submit();
          jobs.add(job);
        }
        awaitRunningTasks(yarn, jobs, 120);
        Map<String, String> before = classes(TidalRest.of(cluster).queues());
        long stop = System.nanoTime();
        cluster.restartResourceManager();
        System.out.printf(
            "== RM restarted, NodeManagers back after %.1f s%n", (System.nanoTime() - stop) / 1e9);
        Map<String, String> after = classes(TidalRest.of(cluster).queues());
        assertEquals("admission classes across the restart", before, after);

        for (Job job : jobs) {
          ApplicationId app = Apps.appId(job);
          ApplicationReport report = Apps.awaitEnd(yarn, app, 180);
          long launched = launchedMapAttempts(conf, job);
          int maps = MAPS.get(job.getConfiguration().get(MRJobConfig.QUEUE_NAME));
          System.out.printf(
              "== %s in %s: %s, %d AM attempt(s), %d of %d maps launched%n",
              app,
              report.getQueue(),
              report.getFinalApplicationStatus(),
              yarn.getApplicationAttempts(app).size(),
              launched,
              maps);
          assertEquals(
              app + ": " + report.getDiagnostics(),
              FinalApplicationStatus.SUCCEEDED,
              report.getFinalApplicationStatus());
          assertEquals(app + " AM attempts", 1, yarn.getApplicationAttempts(app).size());
          assertEquals(app + " maps launched (none twice)", maps, launched);
        }
      } finally {
        yarn.stop();
      }
    }
  }

  /** Waits until every job's AM and at least one of its maps run. */
  private static void awaitRunningTasks(YarnClient yarn, List<Job> jobs, long seconds)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    for (Job job : jobs) {
      ApplicationId app = Apps.appId(job);
      while (yarn.getApplicationReport(app)
              .getApplicationResourceUsageReport()
              .getNumUsedContainers()
          < 2) {
        assertTrue(
            app + " has no map running after " + seconds + " s", System.nanoTime() < deadline);
        Thread.sleep(250);
      }
    }
  }

  /**
   * How many map attempts the job launched, from the history file its AM leaves in the staging
   * directory's done_intermediate (there is no JobHistoryServer to ask for its counters).
   */
  private static long launchedMapAttempts(Configuration conf, Job job) throws Exception {
    Path done =
        new Path(
            conf.get(MRJobConfig.MR_AM_STAGING_DIR),
            "history/done_intermediate/*/" + job.getJobID() + "*.jhist");
    FileSystem fs = FileSystem.getLocal(conf);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    FileStatus[] found;
    while ((found = fs.globStatus(done)) == null || found.length == 0) {
      assertTrue("no history file " + done, System.nanoTime() < deadline);
      Thread.sleep(250);
    }
    JobHistoryParser.JobInfo info = new JobHistoryParser(fs, found[0].getPath()).parse();
    long attempts = 0;
    for (JobHistoryParser.TaskInfo task : info.getAllTasks().values()) {
      if (task.getTaskType() == TaskType.MAP) {
        attempts += task.getAllTaskAttempts().size();
      }
    }
    return attempts;
  }

  /** Each queue's admission class. */
  private static Map<String, String> classes(JsonNode status) {
    Map<String, String> classes = new LinkedHashMap<>();
    for (JsonNode q : status.path("queues")) {
      classes.put(q.path("name").asText(), q.path("class").asText());
    }
    return classes;
  }
}
