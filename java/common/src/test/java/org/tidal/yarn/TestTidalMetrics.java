package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.QUEUES_AB;
import static org.tidal.yarn.TidalTestSupport.THREE_CLASSES;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.launchAm;
import static org.tidal.yarn.TidalTestSupport.startThreeClasses;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.Assume;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.view.TidalMetrics;
import org.tidal.yarn.view.TidalQueueReport;

/** Tidal's metrics2 sources as JMX shows them. */
public class TestTidalMetrics {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();

  /** The MBean of a metrics source, whatever service name the RM's metrics system has. */
  private static ObjectName bean(String source) throws Exception {
    Set<ObjectName> names = JMX.queryNames(new ObjectName("Hadoop:name=" + source + ",*"), null);
    return names.size() == 1 ? names.iterator().next() : null;
  }

  private static Object attribute(String source, String name) throws Exception {
    ObjectName bean = bean(source);
    return bean == null ? null : JMX.getAttribute(bean, name);
  }

  private MockRM start(String queues) throws Exception {
    File allocation = tmp.newFile();
    write(allocation, queues);
    return rms.start(conf(allocation));
  }

  /**
   * Hadoop's SLS reads the root queue's metrics from the moment it wraps the scheduler, before the
   * RM initialises it, and takes null for "not yet" as FairScheduler answers.
   */
  @Test
  public void rootQueueMetricsAreNullBeforeInitialisation() {
    assertNull(new TidalScheduler().getRootQueueMetrics());
  }

  /**
   * The queue reports tools such as SLS's metrics read: the core's numbers, shares as resources.
   */
  @Test(timeout = 120000)
  public void queueReportsGiveTheCoresNumbers() throws Exception {
    MockRM rm = start(THREE_CLASSES);
    MockNM nm = startThreeClasses(rm);
    MockAM am = launchAm(rm, "lq", "alice", nm);
    am.allocate(ResourceRequest.ANY, 2048, 3, new ArrayList<ContainerId>());
    TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
    // Reports come from a snapshot up to a second old: wait for the ask to show.
    waitFor(
        "root.lq's pending containers in its report",
        () -> scheduler.getQueueReport("lq").getPendingContainers() == 3);
    TidalQueueReport lq = scheduler.getQueueReport("lq");
    assertEquals("root.lq", lq.getQueueName());
    assertEquals(Resource.newInstance(102400, 100), lq.getClusterResource());
    assertEquals(Resource.newInstance(1024, 1), lq.getUsed());
    assertEquals(Resource.newInstance(3 * 2048, 3), lq.getPending());
    assertEquals(Resource.newInstance(1024 + 3 * 2048, 4), lq.getDemand());
    assertEquals(1L, lq.getRunningContainers());
    assertEquals(1, lq.getApps());
    assertEquals(0.01, lq.getDominantShare(), 1e-9);
    // The burst is on: the LQ's guarantee, and it alone has demand, so its fair share is all.
    assertEquals(0.8, lq.getGuaranteedShare(), 1e-9);
    assertEquals(Resource.newInstance(81920, 80), lq.getGuaranteedResource());
    assertEquals(1.0, lq.getFairShare(), 1e-9);
    assertEquals(Resource.newInstance(102400, 100), lq.getFairShareResource());

    TidalQueueReport etl = scheduler.getQueueReport("root.etl");
    assertEquals("root.etl", etl.getQueueName());
    assertEquals(Resource.newInstance(0, 0), etl.getDemand());
    assertEquals(Resource.newInstance(0, 0), etl.getGuaranteedResource());
    assertEquals(1.0, etl.getWeight(), 1e-9);
    assertNull(scheduler.getQueueReport("nosuchqueue"));
  }

  @Test(timeout = 120000)
  public void queueAndSchedulerMetricsShowClassesAndBursts() throws Exception {
    MockRM rm = start(THREE_CLASSES);
    MockNM nm = startThreeClasses(rm);
    launchAm(rm, "lq", "alice", nm);
    String lq = TidalMetrics.sourceName("root.lq");
    assertEquals("TidalQueueMetrics,q0=root,q1=lq", lq);
    // JMX caches each source's values for a metrics period; wait for the burst to show.
    waitFor("root.lq's burst in JMX", () -> "on".equals(attribute(lq, "tag.BurstPhase")));
    assertEquals("hard", attribute(lq, "tag.AdmissionClass"));
    assertEquals("root.lq", attribute(lq, "tag.Queue"));
    assertEquals(0.8, (Double) attribute(lq, "GuaranteedShare"), 1e-9);
    assertEquals(1.0, (Double) attribute(lq, "FairShare"), 1e-9);
    assertEquals(0.01, (Double) attribute(lq, "DominantShare"), 1e-9);
    assertTrue((Double) attribute(lq, "LongTermShare") >= 0);
    assertEquals(1L, ((Number) attribute(lq, "RunningContainers")).longValue());
    assertEquals(1L, ((Number) attribute(lq, "Apps")).longValue());
    assertEquals(1L, ((Number) attribute(lq, "BurstsStarted")).longValue());
    assertEquals(0L, ((Number) attribute(lq, "BurstsMetDeadline")).longValue());
    // The running burst has not missed anything yet.
    assertEquals(0L, ((Number) attribute(lq, "BurstsMissedDeadline")).longValue());

    String etl = TidalMetrics.sourceName("root.etl");
    assertEquals("elastic", attribute(etl, "tag.AdmissionClass"));
    assertEquals(TidalMetrics.NO_BURST, attribute(etl, "tag.BurstPhase"));
    assertEquals(0.0, (Double) attribute(etl, "GuaranteedShare"), 1e-9);
    assertEquals(0.0, (Double) attribute(etl, "FairShare"), 1e-9);
    assertEquals(0L, ((Number) attribute(etl, "Apps")).longValue());

    // Each source has its own JMX cache, which may predate the admission round: wait as above.
    String late = TidalMetrics.sourceName("root.late");
    waitFor(
        "root.late rejected in JMX",
        () -> "rejected".equals(attribute(late, "tag.AdmissionClass")));

    String cluster = TidalMetrics.SCHEDULER_RECORD;
    waitFor(
        "the rejected queue counted in JMX",
        () -> ((Number) attribute(cluster, "RejectedQueues")).intValue() == 1);
    assertEquals("bopf", attribute(cluster, "tag.Policy"));
    assertEquals(3, ((Number) attribute(cluster, "Queues")).intValue());
    assertEquals(1, ((Number) attribute(cluster, "HardQueues")).intValue());
    assertEquals(0, ((Number) attribute(cluster, "SoftQueues")).intValue());
    assertEquals(1, ((Number) attribute(cluster, "ElasticQueues")).intValue());
    assertEquals(1, ((Number) attribute(cluster, "RejectedQueues")).intValue());

    // Stopping the scheduler frees every name for the next one in this JVM.
    rms.stop();
    assertEquals(null, bean(lq));
    assertEquals(null, bean(cluster));
  }

  @Test(timeout = 120000)
  public void sourcesFollowQueuesAddedAndRemovedAndSurviveARestart() throws Exception {
    MockRM rm = start(QUEUES_AB);
    rm.registerNode("127.0.0.1:1234", 8192, 8).nodeHeartbeat(true);
    String adhoc = TidalMetrics.sourceName("root.adhoc");
    assertEquals(null, bean(adhoc));
    HttpCall register =
        HttpCall.request("POST", rms.restBase() + "/queues?user.name=alice")
            .body("application/xml", "<queue name=\"adhoc\"><weight>3</weight></queue>")
            .send();
    assertEquals(register.toString(), 201, register.status);
    assertEquals("elastic", attribute(adhoc, "tag.AdmissionClass"));
    HttpCall delete =
        HttpCall.request("DELETE", rms.restBase() + "/queues/adhoc?user.name=alice").send();
    assertEquals(delete.toString(), 200, delete.status);
    assertEquals(null, bean(adhoc));

    // A second scheduler in the same JVM registers the same names again.
    rms.stop();
    assertEquals(null, bean(TidalMetrics.sourceName("root.a")));
    start(QUEUES_AB);
    assertEquals("elastic", attribute(TidalMetrics.sourceName("root.b"), "tag.AdmissionClass"));
    assertFalse(bean(TidalMetrics.SCHEDULER_RECORD) == null);
  }

  /**
   * Two RMs in one JVM (as Hadoop's restart tests run them): the one started last owns the sources,
   * and the first one's stop leaves them registered.
   */
  @Test(timeout = 120000)
  public void theSchedulerStartedLastOwnsTheSourcesOfItsJvm() throws Exception {
    start(QUEUES_AB);
    File other = tmp.newFile("other-queues.xml");
    write(other, "<tidal><queue name=\"a\"/><queue name=\"c\"/></tidal>");
    MockRM second = new MockRM(conf(other));
    try {
      second.start();
      waitFor(
          "the second scheduler's queue source",
          () ->
              "elastic".equals(attribute(TidalMetrics.sourceName("root.c"), "tag.AdmissionClass")));
      Assume.assumeFalse(
          "this Hadoop's RM shuts the JVM's metrics system down as it stops",
          RmLine.RM_STOP_SHUTS_DOWN_METRICS);
      rms.stop();
      assertFalse(
          "the first scheduler's stop took the second's source",
          bean(TidalMetrics.sourceName("root.a")) == null);
      assertFalse(bean(TidalMetrics.SCHEDULER_RECORD) == null);
    } finally {
      second.stop();
    }
    assertEquals(null, bean(TidalMetrics.sourceName("root.a")));
    assertEquals(null, bean(TidalMetrics.SCHEDULER_RECORD));
  }
}
