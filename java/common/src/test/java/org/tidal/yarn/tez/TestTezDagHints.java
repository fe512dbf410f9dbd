package org.tidal.yarn.tez;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.tez.dag.api.oldrecords.TaskState;
import org.apache.tez.dag.api.records.DAGProtos.DAGPlan;
import org.apache.tez.dag.api.records.DAGProtos.EdgePlan;
import org.apache.tez.dag.api.records.DAGProtos.PlanEdgeDataMovementType;
import org.apache.tez.dag.api.records.DAGProtos.PlanEdgeDataSourceType;
import org.apache.tez.dag.api.records.DAGProtos.PlanEdgeSchedulingType;
import org.apache.tez.dag.api.records.DAGProtos.PlanTaskConfiguration;
import org.apache.tez.dag.api.records.DAGProtos.PlanVertexType;
import org.apache.tez.dag.api.records.DAGProtos.VertexPlan;
import org.apache.tez.dag.history.DAGHistoryEvent;
import org.apache.tez.dag.history.events.DAGSubmittedEvent;
import org.apache.tez.dag.history.events.TaskFinishedEvent;
import org.apache.tez.dag.history.events.TaskStartedEvent;
import org.apache.tez.dag.history.events.VertexInitializedEvent;
import org.apache.tez.dag.history.logging.HistoryLoggingService;
import org.apache.tez.dag.records.TezDAGID;
import org.apache.tez.dag.records.TezTaskID;
import org.apache.tez.dag.records.TezVertexID;
import org.junit.Test;
import org.tidal.yarn.NativeSettings;
import org.tidal.yarn.bridge.TidalNative;

/** Translation of a Tez DAG plan and its progress into scheduler hints. */
public class TestTezDagHints {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * Two maps (the second's parallelism decided at run time) join in Reducer 3, which feeds Reducer
   * 4.
   */
  static DAGPlan plan() {
    DAGPlan.Builder dag = DAGPlan.newBuilder().setName("join");
    dag.addVertex(vertex("Map 1", 10, 1024, 1));
    dag.addVertex(vertex("Map 2", -1, 2048, 1));
    dag.addVertex(vertex("Reducer 3", 4, 4096, 2));
    dag.addVertex(vertex("Reducer 4", 1, 1024, 1));
    dag.addEdge(edge("e1", "Map 1", "Reducer 3"));
    dag.addEdge(edge("e2", "Map 2", "Reducer 3"));
    dag.addEdge(edge("e3", "Reducer 3", "Reducer 4"));
    return dag.build();
  }

  private static VertexPlan vertex(String name, int tasks, int memoryMb, int vcores) {
    return VertexPlan.newBuilder()
        .setName(name)
        .setType(PlanVertexType.NORMAL)
        .setTaskConfig(
            PlanTaskConfiguration.newBuilder()
                .setNumTasks(tasks)
                .setMemoryMb(memoryMb)
                .setVirtualCores(vcores)
                .setJavaOpts("")
                .setTaskModule("m"))
        .build();
  }

  private static EdgePlan edge(String id, String from, String to) {
    return EdgePlan.newBuilder()
        .setId(id)
        .setInputVertexName(from)
        .setOutputVertexName(to)
        .setDataMovementType(PlanEdgeDataMovementType.SCATTER_GATHER)
        .setDataSourceType(PlanEdgeDataSourceType.PERSISTED)
        .setSchedulingType(PlanEdgeSchedulingType.SEQUENTIAL)
        .build();
  }

  private static JsonNode stage(JsonNode doc, String id) {
    for (JsonNode s : doc.path("stages")) {
      if (id.equals(s.path("id").textValue())) {
        return s;
      }
    }
    throw new AssertionError("no stage " + id + " in " + doc);
  }

  private static JsonNode progress(JsonNode doc, String id) {
    for (JsonNode p : doc.path("progress")) {
      if (id.equals(p.path("stage").textValue())) {
        return p;
      }
    }
    return null;
  }

  @Test
  public void stagesCarryTasksResourcesParentsAndTezPriorities() throws Exception {
    TezDagHints hints = new TezDagHints(plan(), 30000, TezDagHints.Scheme.NATURAL_ORDER);
    // Tez 0.9: (distance + 1) * vertices * 3 + id * 3, re-attempts up to two more urgent.
    assertArrayEquals(new int[] {10, 11, 12}, hints.priorities("Map 1"));
    assertArrayEquals(new int[] {13, 14, 15}, hints.priorities("Map 2"));
    assertArrayEquals(new int[] {28, 29, 30}, hints.priorities("Reducer 3"));
    assertArrayEquals(new int[] {43, 44, 45}, hints.priorities("Reducer 4"));
    TezDagHints old = new TezDagHints(plan(), 30000, TezDagHints.Scheme.DISTANCE);
    assertArrayEquals(new int[] {1, 2, 3}, old.priorities("Map 2"));
    assertArrayEquals(new int[] {7, 8, 9}, old.priorities("Reducer 4"));

    JsonNode doc = MAPPER.readTree(hints.toJson(0));
    assertEquals(1, doc.path("version").intValue());
    JsonNode reducer = stage(doc, "Reducer 3");
    assertEquals(4, reducer.path("tasks").intValue());
    assertEquals(4096, reducer.path("demand").path("memory_mb").longValue());
    assertEquals(2, reducer.path("demand").path("vcores").longValue());
    assertEquals(30000, reducer.path("duration_ms").longValue());
    assertEquals("[\"Map 1\",\"Map 2\"]", reducer.path("parents").toString());
    assertEquals("[28,29,30]", reducer.path("priorities").toString());
    // Parallelism not decided yet: no tasks to plan for.
    assertEquals(0, stage(doc, "Map 2").path("tasks").intValue());
    assertEquals(0, doc.path("progress").size());
  }

  @Test
  public void progressAndObservedDurationsFollowTheTasks() throws Exception {
    TezDagHints hints = new TezDagHints(plan(), 30000, TezDagHints.Scheme.NATURAL_ORDER);
    assertTrue(hints.setTasks("Map 2", 6));
    assertTrue(!hints.setTasks("Map 2", 6));
    hints.taskStarted(0, 0, 1000);
    hints.taskStarted(0, 1, 1000);
    hints.taskStarted(0, 2, 3000);
    hints.taskFinished(0, 0, 1000, 5000, true);
    hints.taskFinished(0, 1, 1000, 9000, true);
    // A failed task is neither finished nor running, and its time is not a duration.
    hints.taskStarted(1, 0, 2000);
    hints.taskFinished(1, 0, 2000, 2500, false);

    JsonNode doc = MAPPER.readTree(hints.toJson(10000));
    assertEquals(6, stage(doc, "Map 2").path("tasks").intValue());
    assertEquals(6000, stage(doc, "Map 1").path("duration_ms").longValue());
    assertEquals(30000, stage(doc, "Map 2").path("duration_ms").longValue());
    JsonNode map1 = progress(doc, "Map 1");
    assertEquals(2, map1.path("finished").intValue());
    assertEquals(1, map1.path("running").intValue());
    assertEquals(7000, map1.path("running_elapsed_ms").longValue());
    assertNull(progress(doc, "Map 2"));
  }

  /** The documents are what the Rust core reads: it accepts them for a registered app. */
  @Test
  public void theCoreAcceptsTheDocuments() throws Exception {
    long handle =
        TidalNative.create(
            "<tidal><policy>drf</policy><app-policy>carbyne"
                + "</app-policy><queue name=\"a\"><weight>1</weight></queue></tidal>",
            NativeSettings.forTests());
    try {
      TidalNative.addApp(handle, 7, "a", "alice");
      TezDagHints hints = new TezDagHints(plan(), 30000, TezDagHints.Scheme.NATURAL_ORDER);
      hints.setTasks("Map 2", 6);
      hints.taskStarted(0, 0, 1000);
      hints.taskFinished(0, 0, 1000, 4000, true);
      hints.taskStarted(0, 1, 1000);
      JsonNode reply = MAPPER.readTree(TidalNative.setHints(handle, 7, hints.toJson(5000)));
      assertEquals(reply.toString(), 4, reply.path("stages").intValue());
      // 10 + 6 + 4 + 1 tasks, one finished and one running.
      assertEquals(reply.toString(), 19, reply.path("pending_tasks").longValue());
    } finally {
      TidalNative.destroy(handle);
    }
  }

  /** A history logging delegate that records what it was given. */
  public static final class Recorder extends HistoryLoggingService {
    static final List<DAGHistoryEvent> EVENTS = new ArrayList<DAGHistoryEvent>();

    public Recorder() {
      super("recorder");
    }

    @Override
    public void handle(DAGHistoryEvent event) {
      EVENTS.add(event);
    }
  }

  @Test
  public void theLoggingServiceForwardsEveryEventAndTracksTheDag() throws Exception {
    Configuration conf = new Configuration(false);
    conf.setClass(TidalHintsLoggingService.DELEGATE, Recorder.class, HistoryLoggingService.class);
    conf.setLong(TidalHintsLoggingService.MIN_INTERVAL_MS, 3600000);
    TidalHintsLoggingService service = new TidalHintsLoggingService();
    service.init(conf);
    service.start();
    Recorder.EVENTS.clear();
    try {
      ApplicationId app = ApplicationId.newInstance(1, 2);
      TezDAGID dag = TezDAGID.getInstance(app, 1);
      TezVertexID map2 = TezVertexID.getInstance(dag, 1);
      DAGHistoryEvent[] events = {
        new DAGHistoryEvent(
            dag,
            new DAGSubmittedEvent(
                dag,
                1L,
                plan(),
                ApplicationAttemptId.newInstance(app, 1),
                null,
                "alice",
                conf,
                null,
                "a")),
        new DAGHistoryEvent(
            dag, new VertexInitializedEvent(map2, "Map 2", 1L, 2L, 3, "p", null, null, null)),
        new DAGHistoryEvent(
            dag, new TaskStartedEvent(TezTaskID.getInstance(map2, 0), "Map 2", 100L, 100L)),
        new DAGHistoryEvent(
            dag, new TaskStartedEvent(TezTaskID.getInstance(map2, 1), "Map 2", 100L, 200L)),
        new DAGHistoryEvent(
            dag,
            new TaskFinishedEvent(
                TezTaskID.getInstance(map2, 0),
                "Map 2",
                100L,
                2100L,
                null,
                TaskState.SUCCEEDED,
                "",
                null,
                0)),
      };
      for (DAGHistoryEvent event : events) {
        service.handle(event);
      }
      assertEquals(events.length, Recorder.EVENTS.size());
      JsonNode doc = MAPPER.readTree(service.currentHints(1200L));
      assertEquals(3, stage(doc, "Map 2").path("tasks").intValue());
      assertEquals(2000, stage(doc, "Map 2").path("duration_ms").longValue());
      JsonNode progress = progress(doc, "Map 2");
      assertEquals(1, progress.path("finished").intValue());
      assertEquals(1, progress.path("running").intValue());
      assertEquals(1000, progress.path("running_elapsed_ms").longValue());
    } finally {
      service.stop();
    }
  }
}
