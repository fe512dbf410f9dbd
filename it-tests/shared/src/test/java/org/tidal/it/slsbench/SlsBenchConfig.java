package org.tidal.it.slsbench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;

/**
 * A benchmark run's configuration directory, first on the SLS JVM's class path: sls-runner.xml
 * (SLS's node size, 1 s heartbeats, the probed AM, SLS's metrics switch), yarn-site.xml naming the
 * scheduler and its queue file with it-tests/sls/core-site.xml's RM addresses, written for the
 * trace's queues and the cluster's size (Tidal's LQ burst is sized to the cluster). Every scheduler
 * gets the queues of the trace with equal weights; only Tidal gives lq BoPF's guarantee, the others
 * have no such queue type.
 */
final class SlsBenchConfig {
  private SlsBenchConfig() {}

  static void write(
      Path dir, Path coreSite, String name, String schedulerClass, String trace, int nodes)
      throws IOException {
    Files.createDirectories(dir);
    List<String> queues = SlsBenchTrace.queues(trace);
    // The RM's loopback addresses on free ports, as in it-tests/sls for every SLS run.
    Configuration shared = new Configuration(false);
    shared.addResource(new org.apache.hadoop.fs.Path(coreSite.toUri()));
    StringBuilder common = new StringBuilder();
    for (Map.Entry<String, String> p : shared) {
      common.append(prop(p.getKey(), p.getValue()));
    }
    String site = common + prop("yarn.resourcemanager.scheduler.class", schedulerClass);
    switch (name) {
      case "tidal" -> {
        site +=
            prop("tidal.allocation.file", "tidal-bench-queues.xml")
                + prop("tidal.max-assign-per-heartbeat", 10)
                + prop("tidal.rest.enabled", "false")
                // SLS's metrics class for Tidal, by scheduler class name (it-tests' SlsRun too).
                + (SlsBench.slsMetrics()
                    ? prop(schedulerClass, "org.tidal.it.sls.TidalSchedulerMetrics")
                    : "");
        xml(dir.resolve("tidal-bench-queues.xml"), "tidal", tidalQueues(queues, nodes));
      }
      case "fair" -> {
        site +=
            prop("yarn.scheduler.fair.allocation.file", "fair-bench-queues.xml")
                + prop("yarn.scheduler.fair.assignmultiple", "true");
        StringBuilder q =
            new StringBuilder("<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>");
        for (String queue : queues) {
          q.append("<queue name=\"").append(queue).append("\"><weight>1.0</weight></queue>");
        }
        q.append("<queuePlacementPolicy><rule name=\"specified\" create=\"false\"/>")
            .append("<rule name=\"reject\"/></queuePlacementPolicy>");
        xml(dir.resolve("fair-bench-queues.xml"), "allocations", q.toString());
      }
      case "capacity" ->
          xml(dir.resolve("capacity-scheduler.xml"), "configuration", capacity(queues));
      default -> throw new IllegalArgumentException("no queue file for scheduler " + name);
    }
    String runner =
        prop("yarn.sls.runner.pool.size", "50")
            + prop("yarn.sls.nm.memory.mb", SlsBenchTrace.NODE_VCORES * SlsBenchTrace.CONTAINER_MB)
            + prop("yarn.sls.nm.vcores", SlsBenchTrace.NODE_VCORES)
            + prop("yarn.sls.nm.heartbeat.interval.ms", 1000)
            + prop("yarn.sls.am.heartbeat.interval.ms", 1000)
            + prop("yarn.sls.am.type.mapreduce", amClass())
            + prop("yarn.sls.container.memory.mb", SlsBenchTrace.CONTAINER_MB)
            + prop("yarn.sls.container.vcores", 1)
            + prop("yarn.sls.metrics.switch", SlsBench.slsMetrics());
    xml(dir.resolve("yarn-site.xml"), "configuration", site);
    // Hadoop 3's SLS builds the RM's configuration from sls-runner.xml alone.
    xml(dir.resolve("sls-runner.xml"), "configuration", runner + site);
  }

  /**
   * The line's AM ({@code sls.bench.am}): {@link ProbedMrAmSimulator}, or on Hadoop 3 its subclass
   * that keeps the trace's job start times.
   */
  private static String amClass() {
    String am = System.getProperty("sls.bench.am", "");
    if (am.isEmpty()) {
      throw new IllegalStateException("system property sls.bench.am must name this line's SLS AM");
    }
    return am;
  }

  /**
   * DRF over the throughput queues; with an lq, BoPF with the LQ's burst (vcore-seconds and
   * MB-seconds of one burst job) due within the trace's deadline once a period. Admission: the
   * burst is 5/4 vcore-s a node against a fair 40 a node per period (4 slots, 30 s, 3 queues).
   */
  private static String tidalQueues(List<String> queues, int nodes) {
    StringBuilder q = new StringBuilder();
    boolean lq = queues.contains("lq");
    q.append("<policy>").append(lq ? "bopf" : "drf").append("</policy>");
    if (lq) {
      q.append("<n-min>").append(queues.size()).append("</n-min>");
    }
    for (String queue : queues) {
      if (queue.equals("lq")) {
        long vcoreSeconds = SlsBenchTrace.lqTasks(nodes) * SlsBenchTrace.LQ_TASK_MS / 1000;
        q.append(
            String.format(
                Locale.ROOT,
                "<queue name=\"lq\"><type>lq</type><period-sec>%d</period-sec>"
                    + "<deadline-sec>%d</deadline-sec><burst-demand><memory-mb>%d</memory-mb>"
                    + "<vcores>%d</vcores></burst-demand></queue>",
                SlsBenchTrace.LQ_PERIOD_S,
                SlsBenchTrace.LQ_DEADLINE_S,
                vcoreSeconds * SlsBenchTrace.CONTAINER_MB,
                vcoreSeconds));
      } else {
        q.append("<queue name=\"").append(queue).append("\"><weight>1</weight></queue>");
      }
    }
    return q.toString();
  }

  /**
   * Equal capacities (in tenths of a percent, summing to 100), elastic to the whole cluster. One
   * user runs every job, so the user limit must not cap a queue at its capacity, and many jobs run
   * at once, so AMs may take half a queue.
   */
  private static String capacity(List<String> queues) {
    StringBuilder c =
        new StringBuilder(prop("yarn.scheduler.capacity.root.queues", String.join(",", queues)));
    int tenths = 1000 / queues.size();
    for (int i = 0; i < queues.size(); i++) {
      String prefix = "yarn.scheduler.capacity.root." + queues.get(i) + ".";
      int share = i == queues.size() - 1 ? 1000 - tenths * (queues.size() - 1) : tenths;
      c.append(prop(prefix + "capacity", String.format(Locale.ROOT, "%.1f", share / 10.0)))
          .append(prop(prefix + "maximum-capacity", "100"))
          .append(prop(prefix + "user-limit-factor", "100"));
    }
    return c.append(prop("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5")).toString();
  }

  private static String prop(String name, Object value) {
    return "<property><name>" + name + "</name><value>" + value + "</value></property>\n";
  }

  private static void xml(Path file, String root, String body) throws IOException {
    Files.writeString(
        file,
        "<?xml version=\"1.0\"?>\n<" + root + ">\n" + body + "</" + root + ">\n",
        StandardCharsets.UTF_8);
  }
}
