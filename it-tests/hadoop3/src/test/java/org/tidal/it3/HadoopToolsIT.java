package org.tidal.it3;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.cli.QueueCLI;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.Test;
import org.tidal.it.tools.OperatorTools;

/**
 * What an operator of a Hadoop 3 cluster sees of Tidal through Hadoop's own tools, on a Hadoop
 * 3.4.3 mini cluster under BoPF while its LQ bursts: the RM web UI's scheduler page (the page class
 * Tidal names for Hadoop 3), the RM's {@code /ws/v1/cluster/scheduler}, {@code yarn queue -status}
 * (Hadoop's QueueCLI) and JMX. The dashboard's browser check runs on 2.7 (TidalViewsIT): it reads
 * Tidal's own REST and pages, which are the same classes on both lines.
 */
public class HadoopToolsIT {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @Test(timeout = 240_000)
  public void hadoopsToolsShowTidalsQueuesClassesAndBurst() throws Exception {
    try (TidalMiniCluster cluster = TidalMiniCluster.start("tools", "tidal-bopf-lq.xml")) {
      Configuration conf = cluster.clientConf();
      String rmWeb = "http://" + conf.get(YarnConfiguration.RM_WEBAPP_ADDRESS);
      TidalRest rest = TidalRest.of(cluster);
      rest.awaitClass("lq", Set.of("hard"));
      YarnClient yarn = YarnClient.createYarnClient();
      yarn.init(conf);
      yarn.start();
      try (UnmanagedAm am = UnmanagedAm.start(yarn, conf, "lq")) {
        am.ask(Resource.newInstance(256, 1), 2);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (am.held.size() < 2) {
          assertTrue("the LQ got no containers: " + am.held, System.nanoTime() < deadline);
          am.poll();
          Thread.sleep(250);
        }

        JsonNode info =
            MAPPER
                .readTree(OperatorTools.get(rmWeb + "/ws/v1/cluster/scheduler"))
                .path("scheduler")
                .path("schedulerInfo");
        assertEquals("scheduler type in " + info, "tidalScheduler", info.path("type").asText());
        List<String> children = new ArrayList<>();
        JsonNode lq = null;
        for (JsonNode q : info.path("rootQueue").path("childQueues").path("queue")) {
          children.add(q.path("queueName").asText());
          if ("root.lq".equals(q.path("queueName").asText())) {
            lq = q;
          }
        }
        assertEquals("children of root", List.of("root.a", "root.lq"), children);
        assertEquals("LQ class in " + lq, "hard", lq.path("class").asText());
        assertEquals(
            "LQ guaranteed vcores in " + lq,
            2,
            lq.path("guaranteedResources").path("vCores").asLong());
        String phase = lq.path("burst").path("phase").asText();
        assertTrue("no burst on in " + lq, !phase.isEmpty() && !"idle".equals(phase));

        String page = OperatorTools.get(rmWeb + "/cluster/scheduler");
        assertTrue(
            "the RM's scheduler page is not Tidal's: " + page, page.contains("Tidal scheduler"));
        assertTrue("the RM's scheduler page lacks root.lq: " + page, page.contains("root.lq"));

        QueueCLI cli = new QueueCLI();
        // Hadoop 3's QueueCLI makes its own client from the configuration it is given.
        cli.setConf(conf);
        String status = OperatorTools.queueStatus(cli, "lq");
        assertTrue("yarn queue -status lq:\n" + status, status.contains("Queue Name : root.lq"));
        assertTrue("yarn queue -status lq:\n" + status, status.contains("\tState : RUNNING"));
        // The LQ's guaranteed rate, 2 of the cluster's 6 vcores.
        assertTrue("yarn queue -status lq:\n" + status, status.contains("\tCapacity : 33.33%"));

        // The metrics system publishes to JMX on its own period: wait for the burst to show.
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        ObjectName pattern = new ObjectName("Hadoop:name=TidalQueueMetrics,q0=root,q1=lq,*");
        Object cls = null;
        Object burstPhase = null;
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
          Set<ObjectName> names = jmx.queryNames(pattern, null);
          if (!names.isEmpty()) {
            ObjectName bean = names.iterator().next();
            cls = jmx.getAttribute(bean, "tag.AdmissionClass");
            burstPhase = jmx.getAttribute(bean, "tag.BurstPhase");
            if ("hard".equals(cls) && !"idle".equals(burstPhase)) {
              break;
            }
          }
          Thread.sleep(500);
        }
        System.out.printf(
            "== Hadoop 3 tools: scheduler REST children %s, LQ class %s, phase %s;"
                + " yarn queue -status:%n%s== JMX root.lq: class %s, phase %s%n",
            children, lq.path("class").asText(), phase, status, cls, burstPhase);
        assertEquals("JMX TidalQueueMetrics root.lq class", "hard", cls);
        assertTrue("JMX TidalQueueMetrics root.lq phase " + burstPhase, !"idle".equals(burstPhase));
      } finally {
        yarn.stop();
      }
    }
  }
}
