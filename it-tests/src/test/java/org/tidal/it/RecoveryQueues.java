package org.tidal.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.apache.hadoop.conf.Configuration;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;

/**
 * The queues of the recovery tests: two TQs ({@code tq} for a MapReduce job, {@code dag} for a Tez
 * DAG) and a BoPF LQ ({@code lq}) from the allocation file, and a second LQ ({@code adhoc}) that
 * Tidal runs register at run time through REST. FairScheduler gets the same four queues from its
 * allocation file.
 */
final class RecoveryQueues {
  static final String TQ = "tq";
  static final String DAG = "dag";
  static final String LQ = "lq";
  static final String RUNTIME = "adhoc";

  /** Who registers the runtime queue (simple authentication). */
  static final String OWNER = "it";

  /** The same LQ as root.lq in tidal-recovery.xml, which admission makes Hard. */
  static final String RUNTIME_QUEUE_XML =
      "<queue name=\""
          + RUNTIME
          + "\">"
          + "<type>lq</type><period-sec>100</period-sec><deadline-sec>40</deadline-sec>"
          + "<burst-demand><memory-mb>40960</memory-mb><vcores>80</vcores></burst-demand>"
          + "</queue>";

  private RecoveryQueues() {}

  /** A fresh directory under the work directory for one run's state stores. */
  static File freshDir(String prefix) throws IOException {
    Path work =
        Paths.get(
            System.getProperty("it.work.dir", new File("target", "it-work").getAbsolutePath()));
    Files.createDirectories(work);
    return Files.createTempDirectory(work, prefix).toFile().getAbsoluteFile();
  }

  /**
   * Queue files of the scheduler. Tidal keeps its own state where an operator's defaults put it,
   * beside the RM's state store: a {@code tidal} directory beside a FileSystemRMStateStore, znodes
   * beside a ZKRMStateStore.
   */
  static void configure(SchedulerUnderTest scheduler, Configuration conf) {
    if (scheduler == SchedulerUnderTest.TIDAL) {
      conf.set("tidal.allocation.file", SchedulerUnderTest.resourcePath("tidal-recovery.xml"));
    } else {
      conf.set(
          "yarn.scheduler.fair.allocation.file",
          SchedulerUnderTest.resourcePath("fair-scheduler-recovery.xml"));
    }
  }

  /**
   * Registers root.adhoc through the Tidal REST endpoint of the active RM and returns its class;
   * fails unless admission accepted it.
   */
  static String registerRuntimeQueue(RecoveryHarness cluster) throws IOException {
    TidalRest.Reply reply = cluster.tidalRest().registerQueue(OWNER, RUNTIME_QUEUE_XML);
    if (reply.status != 201) {
      throw new AssertionError("registering root." + RUNTIME + " answered " + reply);
    }
    JsonNode verdict = new ObjectMapper().readTree(reply.body);
    return verdict.path("class").getTextValue();
  }
}
