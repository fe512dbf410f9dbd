package org.tidal.it;

import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.apache.tez.dag.api.TezConfiguration;
import org.tidal.it.tez.SleepDag;
import org.tidal.replay.TezAmClassLoader;

/**
 * {@link SleepDag} on Tez 0.9.2 and Hadoop 2.7.7: the harness's container size and JVM options, and
 * what Tez 0.9 needs on Java 17. As a command (the docker cluster's {@code make cluster-run}):
 * {@code TezSleepDag QUEUE PRODUCERS PRODUCER_MILLIS CONSUMER_MILLIS}, staging under {@code
 * -Dit.work.dir}.
 */
public final class TezSleepDag {
  /**
   * Tez 0.9 on Java 17: a URLClassLoader as system class loader (see TezAmClassLoader) and access
   * to its protected addURL, which Tez calls reflectively.
   */
  static final String TEZ_JDK_OPTS =
      "--add-opens=java.base/java.net=ALL-UNNAMED -Djava.system.class.loader="
          + TezAmClassLoader.class.getName();

  private TezSleepDag() {}

  public static void main(String[] args) throws Exception {
    System.exit(SleepDag.runFromCommandLine(args, TezSleepDag::configuration));
  }

  /** Tez settings for a DAG in {@code queue} of the cluster {@code base} points at. */
  static TezConfiguration configuration(Configuration base, String queue) {
    File workDir =
        new File(System.getProperty("it.work.dir", new File("target", "it-work").getPath()));
    return SleepDag.configuration(
        base,
        queue,
        workDir,
        HarnessSettings.CONTAINER_MB,
        HarnessSettings.amJavaOpts() + " " + TEZ_JDK_OPTS);
  }
}
