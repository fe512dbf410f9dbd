package org.tidal.yarn.tez;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.tez.dag.api.records.DAGProtos.DAGPlan;
import org.apache.tez.dag.api.records.DAGProtos.EdgePlan;
import org.apache.tez.dag.api.records.DAGProtos.PlanTaskConfiguration;
import org.apache.tez.dag.api.records.DAGProtos.VertexPlan;

/**
 * The scheduler hints (schema version 1) of one running Tez DAG: a stage per vertex with its task
 * count, per-task resource, parents (the vertices of its in-edges) and the YARN request priorities
 * Tez gives its tasks, plus per-vertex progress with observed task durations.
 *
 * <p>Priorities follow Tez 0.9's natural-order DAG scheduler: a vertex at distance {@code d} from
 * the roots (longest path) with id {@code i} (its index in the plan) among {@code n} vertices asks
 * at {@code low = (d + 1) * n * 3 + i * 3} and, for re-attempts, up to {@code low - 2}. Tez 0.8 and
 * earlier used {@code (d + 1) * 3}, which {@link Scheme#DISTANCE} reproduces.
 *
 * <p>Not thread-safe; the logging service serialises access.
 */
public final class TezDagHints {
  static final int VERSION = 1;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** How Tez turns a vertex's place in the DAG into request priorities. */
  public enum Scheme {
    /** Tez 0.9: unique per vertex. */
    NATURAL_ORDER,
    /** Tez 0.8 and earlier: by distance from the roots only. */
    DISTANCE
  }

  /** One Tez vertex as a stage: its plan, its place in the DAG and its tasks so far. */
  private static final class Vertex {
    final String name;
    final int index;
    final long memoryMb;
    final long vcores;
    final List<String> parents = new ArrayList<String>();
    int distance = -1;

    /** -1 until Tez has decided the parallelism. */
    int tasks;

    int finished;
    long finishedMillis;

    /** Start times of running tasks by task index. */
    final Map<Integer, Long> running = new HashMap<Integer, Long>();

    Vertex(String name, int index, long memoryMb, long vcores, int tasks) {
      this.name = name;
      this.index = index;
      this.memoryMb = memoryMb;
      this.vcores = vcores;
      this.tasks = tasks;
    }
  }

  private final List<Vertex> vertices = new ArrayList<Vertex>();
  private final Map<String, Vertex> byName = new HashMap<String, Vertex>();
  private final long defaultDurationMs;
  private final Scheme scheme;

  public TezDagHints(DAGPlan plan, long defaultDurationMs, Scheme scheme) {
    if (defaultDurationMs <= 0) {
      throw new IllegalArgumentException("default task duration must be positive");
    }
    this.defaultDurationMs = defaultDurationMs;
    this.scheme = scheme;
    int index = 0;
    for (VertexPlan v : plan.getVertexList()) {
      PlanTaskConfiguration task = v.getTaskConfig();
      Vertex vertex =
          new Vertex(
              v.getName(),
              index++,
              task.hasMemoryMb() ? task.getMemoryMb() : 0,
              task.hasVirtualCores() ? task.getVirtualCores() : 0,
              task.hasNumTasks() ? task.getNumTasks() : -1);
      vertices.add(vertex);
      byName.put(vertex.name, vertex);
    }
    for (EdgePlan edge : plan.getEdgeList()) {
      Vertex to = byName.get(edge.getOutputVertexName());
      if (to != null
          && byName.containsKey(edge.getInputVertexName())
          && !to.parents.contains(edge.getInputVertexName())) {
        to.parents.add(edge.getInputVertexName());
      }
    }
    for (Vertex vertex : vertices) {
      distance(vertex, 0);
    }
  }

  /** Longest path from a root, as Tez computes it when source vertices start. */
  private int distance(Vertex vertex, int depth) {
    if (vertex.distance >= 0) {
      return vertex.distance;
    }
    if (depth > vertices.size()) {
      throw new IllegalArgumentException("the DAG plan has a cycle through " + vertex.name);
    }
    int d = 0;
    for (String parent : vertex.parents) {
      d = Math.max(d, distance(byName.get(parent), depth + 1) + 1);
    }
    vertex.distance = d;
    return d;
  }

  /** The request priorities of a vertex's tasks, most urgent first. */
  int[] priorities(String vertexName) {
    Vertex vertex = byName.get(vertexName);
    int low =
        scheme == Scheme.NATURAL_ORDER
            ? (vertex.distance + 1) * vertices.size() * 3 + vertex.index * 3
            : (vertex.distance + 1) * 3;
    return new int[] {low - 2, low - 1, low};
  }

  /** The vertex at a plan index (Tez's vertex id), or null. */
  String vertexName(int index) {
    return index >= 0 && index < vertices.size() ? vertices.get(index).name : null;
  }

  /** Tez decided (or changed) a vertex's parallelism. Returns true when it changed. */
  public boolean setTasks(String vertexName, int tasks) {
    Vertex vertex = byName.get(vertexName);
    if (vertex == null || tasks < 0 || vertex.tasks == tasks) {
      return false;
    }
    vertex.tasks = tasks;
    return true;
  }

  public void taskStarted(int vertexIndex, int task, long startMs) {
    if (vertexIndex >= 0 && vertexIndex < vertices.size()) {
      vertices.get(vertexIndex).running.put(task, startMs);
    }
  }

  /** A task ended; a successful one counts as finished and its duration is observed. */
  public void taskFinished(
      int vertexIndex, int task, long startMs, long finishMs, boolean succeeded) {
    if (vertexIndex < 0 || vertexIndex >= vertices.size()) {
      return;
    }
    Vertex vertex = vertices.get(vertexIndex);
    vertex.running.remove(task);
    if (succeeded) {
      vertex.finished++;
      vertex.finishedMillis += Math.max(1, finishMs - startMs);
    }
  }

  /** The hints document at time {@code nowMs}: every stage and its progress. */
  public String toJson(long nowMs) {
    ObjectNode doc = MAPPER.createObjectNode();
    doc.put("version", VERSION);
    ArrayNode stages = doc.putArray("stages");
    ArrayNode progress = doc.putArray("progress");
    for (Vertex vertex : vertices) {
      int tasks = Math.max(0, vertex.tasks);
      ObjectNode stage = stages.addObject();
      stage.put("id", vertex.name);
      stage.put("tasks", tasks);
      ObjectNode demand = stage.putObject("demand");
      demand.put("memory_mb", vertex.memoryMb);
      demand.put("vcores", vertex.vcores);
      // Observed mean once tasks have finished; the configured estimate until then.
      stage.put(
          "duration_ms",
          vertex.finished > 0
              ? Math.max(1, vertex.finishedMillis / vertex.finished)
              : defaultDurationMs);
      ArrayNode parents = stage.putArray("parents");
      for (String parent : vertex.parents) {
        parents.add(parent);
      }
      ArrayNode priorities = stage.putArray("priorities");
      for (int p : priorities(vertex.name)) {
        priorities.add(p);
      }
      // Counts beyond a parallelism Tez lowered later are clipped: the core refuses more
      // finished and running tasks than the stage has.
      int finished = Math.min(vertex.finished, tasks);
      int running = Math.min(vertex.running.size(), tasks - finished);
      if (finished > 0 || running > 0) {
        ObjectNode p = progress.addObject();
        p.put("stage", vertex.name);
        p.put("finished", finished);
        p.put("running", running);
        long elapsed = 0;
        for (long start : vertex.running.values()) {
          elapsed += Math.max(0, nowMs - start);
        }
        p.put("running_elapsed_ms", vertex.running.isEmpty() ? 0 : elapsed / vertex.running.size());
      }
    }
    return doc.toString();
  }
}
