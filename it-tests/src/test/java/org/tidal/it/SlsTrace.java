package org.tidal.it;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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

  private SlsTrace() {}

  static List<String> queues() {
    return new ArrayList<>(new TreeMap<>(WEIGHTS).keySet());
  }

  /** Writes the trace to {@code file}, its tasks on the nodes of SLS's nodes file. */
  static void write(Path file, Path nodesFile) throws IOException {
    List<String> hosts = new ArrayList<>(SLSUtils.parseNodesFromNodeFile(nodesFile.toString()));
    hosts.sort(null);
    ObjectMapper json = new ObjectMapper();
    try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      int task = 0;
      for (Job job : JOBS) {
        List<Map<String, Object>> tasks = new ArrayList<>();
        for (int i = 0; i < job.maps() + job.reduces(); i++) {
          boolean map = i < job.maps();
          long length = map ? job.mapMs() : job.reduceMs();
          Map<String, Object> t = new LinkedHashMap<>();
          t.put("container.host", hosts.get(task++ % hosts.size()));
          t.put("container.start.ms", job.startMs());
          t.put("container.end.ms", job.startMs() + length);
          // MapReduce's priorities, which SLS's rumen reader also uses: maps 20, reduces 10.
          t.put("container.priority", map ? 20 : 10);
          t.put("container.type", map ? "map" : "reduce");
          tasks.add(t);
        }
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("am.type", "mapreduce");
        j.put("job.start.ms", job.startMs());
        j.put("job.end.ms", job.startMs() + job.mapMs() + job.reduceMs());
        j.put("job.queue.name", job.queue());
        j.put("job.id", job.id());
        j.put("job.user", "sls");
        j.put("job.tasks", tasks);
        out.write(json.writeValueAsString(j));
        out.write('\n');
      }
    }
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
