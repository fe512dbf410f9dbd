package org.tidal.replay;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.tez.dag.api.DAG;
import org.apache.tez.dag.api.records.DAGProtos.DAGPlan;
import org.apache.tez.dag.api.records.DAGProtos.VertexPlan;
import org.apache.tez.dag.library.vertexmanager.ShuffleVertexManager;
import org.junit.Test;

/** Reading workload documents, and the Tez DAG a job becomes. */
public class TestWorkload {
  /** A two-job document: a three-stage join in lq0 and a one-stage job in tq0. */
  static String doc(String stagesOfFirst) {
    return "{\"version\":1,\"name\":\"t\",\"seed\":1,"
        + "\"cluster\":{\"machines\":3,\"machine\":{\"memory_mb\":4096,\"vcores\":4},"
        + "\"heartbeat_ms\":500},\"policy\":\"bopf\",\"allocations_xml\":\"<tidal/>\",\"jobs\":["
        + "{\"name\":\"tq0-0\",\"queue\":\"tq0\",\"user\":\"tq0\",\"class\":\"TQ\",\"arrival_ms\":0,"
        + "\"deadline_ms\":null,\"stages\":["
        + stage("s0", "", "100,200")
        + "]},"
        + "{\"name\":\"lq0-0\",\"queue\":\"lq0\",\"user\":\"lq0\",\"class\":\"LQ\","
        + "\"arrival_ms\":0,\"deadline_ms\":30000,\"stages\":["
        + stagesOfFirst
        + "]}]}";
  }

  static String stage(String name, String parents, String durations) {
    return "{\"name\":\""
        + name
        + "\",\"parents\":["
        + parents
        + "],"
        + "\"resources\":{\"memory_mb\":512,\"vcores\":1},\"task_durations_ms\":["
        + durations
        + "]}";
  }

  static final String JOIN =
      stage("a", "", "1000,2000") + "," + stage("b", "", "500") + "," + stage("c", "0,1", "300");

  static Workload read(String json) throws IOException {
    File f = File.createTempFile("workload", ".json");
    f.deleteOnExit();
    Files.write(f.toPath(), json.getBytes(StandardCharsets.UTF_8));
    return Workload.read(f);
  }

  static String error(String json) {
    try {
      read(json);
    } catch (IOException e) {
      return e.getMessage();
    }
    fail("accepted: " + json);
    return null;
  }

  @Test
  public void aDocumentReadsIntoJobsAndStages() throws IOException {
    Workload w = read(doc(JOIN));
    assertEquals("bopf", w.policy);
    assertEquals(2, w.jobs.size());
    Workload.Job lq = w.jobs.get(1);
    assertEquals("lq0", lq.queue);
    assertEquals("LQ", lq.jobClass);
    assertEquals(30000, lq.deadlineMs);
    assertEquals(4, lq.tasks());
    assertEquals(2000, lq.stages.get(0).taskDurationsMs[1]);
    assertEquals(-1, w.jobs.get(0).deadlineMs);
  }

  @Test
  public void badDocumentsAreRefusedWithTheReason() {
    assertTrue(error("{\"version\":1}").contains("does not match the workload schema"));
    assertTrue(error(doc(stage("a", "", ""))).contains("task_durations_ms"));
    assertTrue(error(doc(stage("a", "0", "1"))).contains("not another stage"));
    assertTrue(error(doc(stage("a", "3", "1"))).contains("not another stage"));
    String cycle = stage("a", "1", "1") + "," + stage("b", "0", "1");
    assertTrue(error(doc(cycle)).contains("cycle"));
    String twice = doc(JOIN).replace("\"lq0-0\"", "\"tq0-0\"");
    assertTrue(error(twice).contains("used twice"));
  }

  @Test
  public void aJobBecomesADagWithItsVerticesEdgesAndSizes() throws IOException {
    Workload.Job lq = read(doc(JOIN)).jobs.get(1);
    DAG dag = JobDag.of(lq, 0.5, false, 0.5, new Configuration(false));
    DAGPlan plan = dag.createDag(new Configuration(false), null, null, null, true);
    assertEquals(3, plan.getVertexCount());
    assertEquals(2, plan.getEdgeCount());
    Map<String, VertexPlan> byName = new HashMap<>();
    for (VertexPlan v : plan.getVertexList()) {
      byName.put(v.getName(), v);
    }
    VertexPlan a = byName.get("a");
    assertEquals(2, a.getTaskConfig().getNumTasks());
    assertEquals(512, a.getTaskConfig().getMemoryMb());
    assertEquals(0, a.getInEdgeIdCount());
    VertexPlan c = byName.get("c");
    assertEquals(2, c.getInEdgeIdCount());
    // The join waits for all of both parents: slow start at 100%.
    assertTrue(c.hasVertexManagerPlugin());
    assertTrue(
        c.getVertexManagerPlugin()
            .getClassName()
            .endsWith(ShuffleVertexManager.class.getSimpleName()));
  }

  @Test
  public void percentilesInterpolateAsTheSimulatorDoes() {
    double[] v = {1, 2, 3, 4};
    assertEquals(2.5, Results.percentile(v, 0.5), 1e-9);
    assertEquals(3.85, Results.percentile(v, 0.95), 1e-9);
    assertEquals(4, Results.percentile(new double[] {4}, 0.95), 1e-9);
  }
}
