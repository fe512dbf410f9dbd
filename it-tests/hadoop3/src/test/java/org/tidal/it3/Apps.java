package org.tidal.it3;

import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.TypeConverter;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;

/** MapReduce sleep jobs and the RM's view of applications, as the tests use them. */
final class Apps {
  private static final EnumSet<YarnApplicationState> ENDED =
      EnumSet.of(
          YarnApplicationState.FINISHED, YarnApplicationState.FAILED, YarnApplicationState.KILLED);

  private Apps() {}

  /** Hadoop's SleepJob: {@code maps} tasks sleeping {@code mapMillis} each, then one reduce. */
  static Job sleepJob(Configuration base, String queue, int maps, long mapMillis) throws Exception {
    Configuration conf = new Configuration(base);
    conf.set(MRJobConfig.QUEUE_NAME, queue);
    SleepJob sleep = new SleepJob();
    sleep.setConf(conf);
    Job job = sleep.createJob(maps, 1, mapMillis, 1, 100, 1);
    job.setJobName("sleep-" + queue);
    return job;
  }

  static ApplicationId appId(Job job) {
    return TypeConverter.toYarn(job.getJobID()).getAppId();
  }

  static boolean ended(YarnClient yarn, ApplicationId app) throws Exception {
    return ENDED.contains(yarn.getApplicationReport(app).getYarnApplicationState());
  }

  /** The app's final report once the RM has it in an end state. */
  static ApplicationReport awaitEnd(YarnClient yarn, ApplicationId app, long seconds)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (true) {
      ApplicationReport report = yarn.getApplicationReport(app);
      if (ENDED.contains(report.getYarnApplicationState())) {
        return report;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            app + " still " + report.getYarnApplicationState() + " after " + seconds + " s");
      }
      Thread.sleep(250);
    }
  }
}
