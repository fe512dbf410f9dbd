package org.tidal.it.slsbench;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.tools.rumen.JsonObjectMapperWriter;
import org.apache.hadoop.tools.rumen.LoggedJob;

/**
 * The benchmark's clusters (SLS's nodes file) and synthetic traces (Rumen job traces, {@link
 * RumenJobs}) for any number of nodes. Nodes have {@link #NODE_VCORES} slots of one vcore and
 * {@link #CONTAINER_MB} MB, so the cluster has 4 slots a node. Two traces:
 *
 * <ul>
 *   <li>{@code saturated}: throughput jobs in queues a and b of {@link #MAPS_PER_JOB} maps of
 *       {@link #TASK_MS} ms; at the start enough to fill every slot, then arriving at a rate that
 *       asks for {@link #OVERLOAD} times what the cluster can run, so it stays saturated.
 *   <li>{@code lq-burst}: the same, plus a job in the latency-sensitive queue lq every {@link
 *       #LQ_PERIOD_S} s from {@link #LQ_FIRST_MS}: one map of {@link #LQ_TASK_MS} ms for every
 *       {@link #NODES_PER_LQ_TASK} nodes, to be done within {@link #LQ_DEADLINE_S} s (BoPF's
 *       deadline in Tidal's queue file).
 * </ul>
 *
 * Task hosts cycle over the nodes, which SLS turns into node, rack and any requests. Node names are
 * loopback addresses, which need no name service.
 */
final class SlsBenchTrace {
  static final int NODE_VCORES = 4;
  static final int CONTAINER_MB = 1024;
  static final int NODES_PER_RACK = 40;
  static final int MAPS_PER_JOB = 100;
  static final long TASK_MS = 20_000;
  static final double OVERLOAD = 1.25;
  static final long LQ_FIRST_MS = 20_000;
  static final int LQ_PERIOD_S = 30;
  static final int LQ_DEADLINE_S = 15;
  static final long LQ_TASK_MS = 5_000;
  static final int NODES_PER_LQ_TASK = 4;

  static final List<String> TRACES = List.of("saturated", "lq-burst");

  private SlsBenchTrace() {}

  static int slots(int nodes) {
    return nodes * NODE_VCORES;
  }

  /** One LQ burst's tasks. */
  static int lqTasks(int nodes) {
    return Math.max(1, nodes / NODES_PER_LQ_TASK);
  }

  /** The queues a trace submits to. */
  static List<String> queues(String trace) {
    return trace.equals("lq-burst") ? List.of("a", "b", "lq") : List.of("a", "b");
  }

  private static String host(int i) {
    return "127." + (1 + i / 62500) + "." + (i / 250 % 250) + "." + (1 + i % 250);
  }

  private static String rack(int i) {
    return "rack" + (i / NODES_PER_RACK);
  }

  static void writeNodes(Path file, int nodes) throws IOException {
    try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
      for (int r = 0; r * NODES_PER_RACK < nodes; r++) {
        List<String> members = new ArrayList<>();
        for (int i = r * NODES_PER_RACK; i < Math.min(nodes, (r + 1) * NODES_PER_RACK); i++) {
          members.add("{\"node\": \"" + host(i) + "\"}");
        }
        out.println(
            "{\"rack\": \""
                + rack(r * NODES_PER_RACK)
                + "\", \"nodes\": ["
                + String.join(", ", members)
                + "]}");
      }
    }
  }

  /**
   * The trace's time origin and its job ids' job tracker start: 0, so that submit times are start
   * times on both lines (2.7's SLS subtracts the first job's; on 3.4 the benchmark's AM starts at
   * its job's submit time, TraceTimedMrAmSimulator).
   */
  private static final long ORIGIN_MS = 0;

  /**
   * Writes {@code trace} for {@code nodes} nodes over {@code seconds} as a Rumen job trace; returns
   * its job count.
   */
  static int write(Path file, String trace, int nodes, int seconds) throws IOException {
    if (!TRACES.contains(trace)) {
      throw new IllegalArgumentException("unknown trace " + trace + ", not one of " + TRACES);
    }
    int[] nextHost = {0};
    int jobs = 0;
    try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file));
        JsonObjectMapperWriter<LoggedJob> writer = new JsonObjectMapperWriter<>(out, false)) {
      int initial = (slots(nodes) + MAPS_PER_JOB - 1) / MAPS_PER_JOB;
      double perSecond = OVERLOAD * slots(nodes) / (TASK_MS / 1000.0) / MAPS_PER_JOB;
      int arriving = (int) Math.ceil(perSecond * seconds);
      for (int j = 0; j < initial + arriving; j++) {
        long start = j < initial ? 0 : Math.round((j - initial) * 1000 / perSecond);
        String queue = j % 2 == 0 ? "a" : "b";
        writer.write(job(++jobs, queue, start, MAPS_PER_JOB, TASK_MS, nodes, nextHost));
      }
      if (trace.equals("lq-burst")) {
        for (long start = LQ_FIRST_MS; start < seconds * 1000L; start += LQ_PERIOD_S * 1000L) {
          writer.write(job(++jobs, "lq", start, lqTasks(nodes), LQ_TASK_MS, nodes, nextHost));
        }
      }
    }
    return jobs;
  }

  private static LoggedJob job(
      int index, String queue, long startMs, int maps, long taskMs, int nodes, int[] nextHost) {
    List<RumenJobs.Map> tasks = new ArrayList<>();
    long submit = ORIGIN_MS + startMs;
    for (int t = 0; t < maps; t++) {
      int h = nextHost[0]++ % nodes;
      tasks.add(new RumenJobs.Map(rack(h), host(h), submit, submit + taskMs));
    }
    JobID id = new JobID(Long.toString(ORIGIN_MS), index);
    return RumenJobs.job(id, queue + "_" + index, queue, submit, tasks);
  }
}
