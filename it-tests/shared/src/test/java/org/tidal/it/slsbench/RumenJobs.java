package org.tidal.it.slsbench;

import java.util.List;
import java.util.Map;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.jobhistory.JobSubmittedEvent;
import org.apache.hadoop.mapreduce.jobhistory.MapAttemptFinishedEvent;
import org.apache.hadoop.mapreduce.jobhistory.TaskAttemptStartedEvent;
import org.apache.hadoop.mapreduce.jobhistory.TaskFinishedEvent;
import org.apache.hadoop.mapreduce.jobhistory.TaskStartedEvent;
import org.apache.hadoop.tools.rumen.JobBuilder;
import org.apache.hadoop.tools.rumen.LoggedJob;

/**
 * A job of maps as Rumen's LoggedJob, the input of {@code SLSRunner -inputrumen} on both lines
 * (Hadoop 3.4's reader of SLS's own JSON format fails on every job's task list): MapReduce's job
 * history events folded by Rumen's own JobBuilder, as Rumen's TraceBuilder does with history files.
 * Only the events whose constructors both lines share: without a job-finished event the job's end
 * is unset, which SLS only prints.
 */
final class RumenJobs {
  /** A map: the node it ran on (SLS's "/rack/host") and when. */
  record Map(String rack, String host, long startMs, long endMs) {}

  private static final String SUCCEEDED = "SUCCEEDED";

  private RumenJobs() {}

  static LoggedJob job(JobID id, String name, String queue, long submitMs, List<Map> maps) {
    JobBuilder history = new JobBuilder(id.toString());
    history.process(
        new JobSubmittedEvent(id, name, "sls", submitMs, "", java.util.Map.of(), queue));
    for (int i = 0; i < maps.size(); i++) {
      Map task = maps.get(i);
      TaskID taskId = new TaskID(id, TaskType.MAP, i);
      TaskAttemptID attempt = new TaskAttemptID(taskId, 0);
      history.process(new TaskStartedEvent(taskId, task.startMs(), TaskType.MAP, ""));
      history.process(
          new TaskAttemptStartedEvent(
              attempt,
              TaskType.MAP,
              task.startMs(),
              "tracker_" + task.host(),
              0,
              0,
              "NODE_LOCAL",
              "VIRGIN"));
      history.process(
          new MapAttemptFinishedEvent(
              attempt,
              TaskType.MAP,
              SUCCEEDED,
              task.endMs(),
              task.endMs(),
              task.host(),
              0,
              "/" + task.rack(),
              "map",
              new Counters(),
              new int[4][0]));
      history.process(
          new TaskFinishedEvent(
              taskId, attempt, task.endMs(), TaskType.MAP, SUCCEEDED, new Counters()));
    }
    return history.build();
  }
}
