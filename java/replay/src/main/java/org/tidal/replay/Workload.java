package org.tidal.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A workload {@code tidal-sim workload} resolved from a spec: jobs with their queue, class, arrival
 * and DAG of stages. Read from JSON and checked against the schema tidal-sim writes it by ({@code
 * rust/sim/schema/workload.schema.json}), then for what the schema cannot say (DAG edges).
 */
public final class Workload {
  /** One DAG vertex: its tasks' durations and container size, and the stages it waits for. */
  public static final class Stage {
    public final String name;
    public final int[] parents;
    public final int memoryMb;
    public final int vcores;
    public final long[] taskDurationsMs;

    Stage(String name, int[] parents, int memoryMb, int vcores, long[] taskDurationsMs) {
      this.name = name;
      this.parents = parents;
      this.memoryMb = memoryMb;
      this.vcores = vcores;
      this.taskDurationsMs = taskDurationsMs;
    }
  }

  /** One job: a Tez DAG submitted at its arrival into its queue. */
  public static final class Job {
    public final String name;
    public final String queue;
    public final String jobClass;
    public final long arrivalMs;

    /** Absolute deadline in workload time, or -1. */
    public final long deadlineMs;

    public final List<Stage> stages;

    Job(
        String name,
        String queue,
        String jobClass,
        long arrivalMs,
        long deadlineMs,
        List<Stage> stages) {
      this.name = name;
      this.queue = queue;
      this.jobClass = jobClass;
      this.arrivalMs = arrivalMs;
      this.deadlineMs = deadlineMs;
      this.stages = stages;
    }

    public int tasks() {
      int n = 0;
      for (Stage s : stages) {
        n += s.taskDurationsMs.length;
      }
      return n;
    }
  }

  public final String name;
  public final String policy;
  public final String allocationsXml;

  /** By arrival, ties in the document's order. */
  public final List<Job> jobs;

  private Workload(String name, String policy, String allocationsXml, List<Job> jobs) {
    this.name = name;
    this.policy = policy;
    this.allocationsXml = allocationsXml;
    this.jobs = jobs;
  }

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Reads and checks {@code file}; errors name the file and what is wrong. */
  public static Workload read(File file) throws IOException {
    JsonNode doc;
    try {
      doc = MAPPER.readTree(file);
    } catch (IOException e) {
      throw new IOException(file + ": not a JSON document: " + e.getMessage(), e);
    }
    Schema schema;
    try (InputStream in = Workload.class.getResourceAsStream("workload.schema.json")) {
      schema = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(in);
    }
    List<Error> errors = schema.validate(doc);
    if (!errors.isEmpty()) {
      StringBuilder msg = new StringBuilder(file + " does not match the workload schema:");
      for (Error e : errors.subList(0, Math.min(10, errors.size()))) {
        msg.append("\n  ").append(e);
      }
      throw new IOException(msg.toString());
    }
    List<Job> jobs = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (JsonNode j : doc.get("jobs")) {
      String name = j.get("name").asText();
      if (!names.add(name)) {
        throw new IOException(file + ": job name '" + name + "' is used twice");
      }
      List<Stage> stages = new ArrayList<>();
      JsonNode ss = j.get("stages");
      for (JsonNode s : ss) {
        int[] parents = new int[s.get("parents").size()];
        for (int i = 0; i < parents.length; i++) {
          parents[i] = s.get("parents").get(i).asInt();
          if (parents[i] >= ss.size() || parents[i] == stages.size()) {
            throw new IOException(
                file
                    + ": job '"
                    + name
                    + "', stage '"
                    + s.get("name").asText()
                    + "': parent #"
                    + parents[i]
                    + " is not another stage of the job");
          }
        }
        JsonNode durations = s.get("task_durations_ms");
        long[] ms = new long[durations.size()];
        for (int i = 0; i < ms.length; i++) {
          ms[i] = durations.get(i).asLong();
        }
        JsonNode r = s.get("resources");
        stages.add(
            new Stage(
                s.get("name").asText(),
                parents,
                r.get("memory_mb").asInt(),
                r.get("vcores").asInt(),
                ms));
      }
      checkAcyclic(file, name, stages);
      jobs.add(
          new Job(
              name,
              j.get("queue").asText(),
              j.get("class").asText(),
              j.get("arrival_ms").asLong(),
              j.get("deadline_ms").isNull() ? -1 : j.get("deadline_ms").asLong(),
              Collections.unmodifiableList(stages)));
    }
    jobs.sort((a, b) -> Long.compare(a.arrivalMs, b.arrivalMs));
    return new Workload(
        doc.get("name").asText(),
        doc.get("policy").asText(),
        doc.get("allocations_xml").asText(),
        Collections.unmodifiableList(jobs));
  }

  /** Kahn's algorithm: every stage must be peeled off, else some lie on a cycle. */
  private static void checkAcyclic(File file, String job, List<Stage> stages) throws IOException {
    int[] waiting = new int[stages.size()];
    List<Integer> ready = new ArrayList<>();
    for (int i = 0; i < stages.size(); i++) {
      waiting[i] = stages.get(i).parents.length;
      if (waiting[i] == 0) {
        ready.add(i);
      }
    }
    int peeled = 0;
    while (!ready.isEmpty()) {
      int done = ready.remove(ready.size() - 1);
      peeled++;
      for (int i = 0; i < stages.size(); i++) {
        for (int p : stages.get(i).parents) {
          if (p == done && --waiting[i] == 0) {
            ready.add(i);
          }
        }
      }
    }
    if (peeled < stages.size()) {
      throw new IOException(file + ": job '" + job + "': its stages form a cycle");
    }
  }
}
