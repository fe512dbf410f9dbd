package org.tidal.it;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.jobhistory.JobFinishedEvent;
import org.apache.hadoop.mapreduce.jobhistory.JobSubmittedEvent;
import org.apache.hadoop.mapreduce.jobhistory.MapAttemptFinishedEvent;
import org.apache.hadoop.mapreduce.jobhistory.ReduceAttemptFinishedEvent;
import org.apache.hadoop.mapreduce.jobhistory.TaskAttemptStartedEvent;
import org.apache.hadoop.mapreduce.jobhistory.TaskFinishedEvent;
import org.apache.hadoop.mapreduce.jobhistory.TaskStartedEvent;
import org.apache.hadoop.tools.rumen.JobBuilder;
import org.apache.hadoop.tools.rumen.JsonObjectMapperWriter;
import org.apache.hadoop.tools.rumen.LoggedJob;
import org.apache.hadoop.yarn.sls.utils.SLSUtils;
import org.codehaus.jackson.map.ObjectMapper;

/**
 * The synthetic trace in SLS's own JSON format (one job object after another, as SLS's
 * RumenToSLSConverter writes them): three queues of DRF weights 2:1:1 (it-tests/sls's queue files),
 * jobs of different sizes arriving over the first 16 seconds, with maps and reduces. Queue a's
 * first job alone asks for more than the whole cluster of sls/nodes.json (16 containers), so from
 * the start all three queues want more than they get and the weights decide. Task hosts cycle over
 * the nodes of the nodes file, which SLS turns into node, rack and any requests.
 */
final class SlsTrace {
  /** One job: its queue, when it arrives and its tasks' counts and durations. */
  record Job(
      String id, String queue, long startMs, int maps, long mapMs, int reduces, long reduceMs) {
    int containers() {
      return maps + reduces + 1; // and the AM
    }

    /** Container-milliseconds of the job's tasks (the AM's time depends on the scheduler). */
    long taskWorkMs() {
      return maps * mapMs + reduces * reduceMs;
    }
  }

  static final List<Job> JOBS =
      List.of(
          new Job("job_a1", "a", 0, 32, 4000, 0, 0),
          new Job("job_b1", "b", 0, 16, 4000, 0, 0),
          new Job("job_c1", "c", 0, 16, 4000, 0, 0),
          new Job("job_b2", "b", 4000, 4, 3000, 2, 2000),
          new Job("job_c2", "c", 8000, 6, 3000, 0, 0),
          new Job("job_a2", "a", 12000, 6, 3000, 1, 3000),
          new Job("job_c3", "c", 16000, 2, 2000, 0, 0));

  /** The queues' DRF weights, as the Tidal and FairScheduler queue files give them. */
  static final Map<String, Double> WEIGHTS = Map.of("a", 2.0, "b", 1.0, "c", 1.0);

  /**
   * How long a change of shares can take without preemption: the longest task (4 s) and a second
   * for SLS's half-second heartbeats to report it and take the freed containers.
   */
  static final int SETTLE_SECONDS = 5;

  /** The job tracker's start time in the Rumen trace's job ids, and its jobs' time origin. */
  private static final String RUMEN_CLUSTER_TIMESTAMP = "1400000000000";

  /** MapReduce's job history state of a successful task and attempt. */
  private static final String SUCCEEDED = "SUCCEEDED";

  private SlsTrace() {}

  static List<String> queues() {
    return new ArrayList<>(new TreeMap<>(WEIGHTS).keySet());
  }

  /**
   * Where each job's tasks ran: per job of {@link #JOBS}, its maps then its reduces, each on the
   * next node of SLS's nodes file in turn (SLS's "/rack/host" names).
   */
  private static List<List<Task>> tasks(Path nodesFile) throws IOException {
    List<String> hosts = new ArrayList<>(SLSUtils.parseNodesFromNodeFile(nodesFile.toString()));
    hosts.sort(null);
    List<List<Task>> jobs = new ArrayList<>();
    int next = 0;
    for (Job job : JOBS) {
      List<Task> tasks = new ArrayList<>();
      for (int i = 0; i < job.maps() + job.reduces(); i++) {
        boolean map = i < job.maps();
        tasks.add(
            new Task(hosts.get(next++ % hosts.size()), map, map ? job.mapMs() : job.reduceMs()));
      }
      jobs.add(tasks);
    }
    return jobs;
  }

  /** One task: the node it ran on, map or reduce, and how long. */
  private record Task(String host, boolean map, long lengthMs) {}

  /**
   * Writes the trace to {@code file} in SLS's format, its tasks on the nodes of {@code nodesFile}.
   */
  static void write(Path file, Path nodesFile) throws IOException {
    List<List<Task>> tasks = tasks(nodesFile);
    ObjectMapper json = new ObjectMapper();
    try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (int i = 0; i < JOBS.size(); i++) {
        Job job = JOBS.get(i);
        List<Map<String, Object>> containers = new ArrayList<>();
        for (Task task : tasks.get(i)) {
          Map<String, Object> t = new LinkedHashMap<>();
          t.put("container.host", task.host());
          t.put("container.start.ms", job.startMs());
          t.put("container.end.ms", job.startMs() + task.lengthMs());
          // The priorities SLS's MapReduce AM asks with whatever a trace says: maps 20, reduces 10.
          t.put("container.priority", task.map() ? 20 : 10);
          t.put("container.type", task.map() ? "map" : "reduce");
          containers.add(t);
        }
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("am.type", "mapreduce");
        entry.put("job.start.ms", job.startMs());
        entry.put("job.end.ms", job.startMs() + job.mapMs() + job.reduceMs());
        entry.put("job.queue.name", job.queue());
        entry.put("job.id", job.id());
        entry.put("job.user", "sls");
        entry.put("job.tasks", containers);
        out.write(json.writeValueAsString(entry));
        out.write('\n');
      }
    }
  }

  /**
   * Writes the trace to {@code file} as a Rumen job trace, the input of {@code SLSRunner
   * -inputrumen}: each job as MapReduce's job history would log it, folded into Rumen's LoggedJob
   * by Rumen's own JobBuilder (as Rumen's TraceBuilder does with history files) and written by its
   * JSON writer. Jobs get real job ids ({@link #rumenJobId}; the job name is the synthetic id) and
   * submit times from RUMEN_CLUSTER_TIMESTAMP on, which SLS takes relative to the first job's.
   * Every task has one successful attempt; reduces start when the job's maps end.
   */
  static void writeRumen(Path file, Path nodesFile) throws IOException {
    List<List<Task>> tasks = tasks(nodesFile);
    try (OutputStream out = Files.newOutputStream(file);
        JsonObjectMapperWriter<LoggedJob> writer = new JsonObjectMapperWriter<>(out, true)) {
      for (int j = 0; j < JOBS.size(); j++) {
        writer.write(rumenJob(rumenJobId(j), JOBS.get(j), tasks.get(j)));
      }
    }
  }

  /** The Rumen trace's job id of {@code JOBS.get(index)}. */
  static JobID rumenJobId(int index) {
    return new JobID(RUMEN_CLUSTER_TIMESTAMP, index + 1);
  }

  private static LoggedJob rumenJob(JobID id, Job job, List<Task> tasks) {
    long submit = Long.parseLong(RUMEN_CLUSTER_TIMESTAMP) + job.startMs();
    JobBuilder history = new JobBuilder(id.toString());
    history.process(new JobSubmittedEvent(id, job.id(), "sls", submit, "", Map.of(), job.queue()));
    int[] index = new int[2];
    for (Task task : tasks) {
      TaskType type = task.map() ? TaskType.MAP : TaskType.REDUCE;
      TaskID taskId = new TaskID(id, type, index[task.map() ? 0 : 1]++);
      TaskAttemptID attempt = new TaskAttemptID(taskId, 0);
      long start = task.map() ? submit : submit + job.mapMs();
      long end = start + task.lengthMs();
      String[] rackHost = SLSUtils.getRackHostName(task.host());
      String rack = "/" + rackHost[0];
      history.process(new TaskStartedEvent(taskId, start, type, ""));
      history.process(
          new TaskAttemptStartedEvent(
              attempt, type, start, "tracker_" + rackHost[1], 0, 0, "NODE_LOCAL", "VIRGIN"));
      // No progress splits (wall clock, cpu, virtual and physical memory) recorded.
      int[][] splits = new int[4][0];
      history.process(
          task.map()
              ? new MapAttemptFinishedEvent(
                  attempt,
                  type,
                  SUCCEEDED,
                  end,
                  end,
                  rackHost[1],
                  0,
                  rack,
                  "map",
                  new Counters(),
                  splits)
              : new ReduceAttemptFinishedEvent(
                  attempt,
                  type,
                  SUCCEEDED,
                  end,
                  end,
                  end,
                  rackHost[1],
                  0,
                  rack,
                  "reduce",
                  new Counters(),
                  splits));
      history.process(new TaskFinishedEvent(taskId, attempt, end, type, SUCCEEDED, new Counters()));
    }
    history.process(
        new JobFinishedEvent(
            id,
            submit + job.mapMs() + job.reduceMs(),
            job.maps(),
            job.reduces(),
            0,
            0,
            new Counters(),
            new Counters(),
            new Counters()));
    return history.build();
  }

  static String describe() {
    StringBuilder out = new StringBuilder();
    for (Job job : JOBS) {
      out.append(
          String.format(
              "  %-7s queue %s  at %5.1f s  %2d maps x %.1f s  %d reduces x %.1f s%n",
              job.id(),
              job.queue(),
              job.startMs() / 1000.0,
              job.maps(),
              job.mapMs() / 1000.0,
              job.reduces(),
              job.reduceMs() / 1000.0));
    }
    return out.append("  queue weights ").append(new TreeMap<>(WEIGHTS)).toString();
  }
}
