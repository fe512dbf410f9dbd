package org.tidal.it3;

import java.io.File;
import org.apache.hadoop.conf.Configuration;
import org.apache.tez.dag.api.TezConfiguration;
import org.tidal.it.tez.SleepDag;

/**
 * {@link SleepDag} on Tez 0.10 and Hadoop 3: the harness's container size and JVM options. Unlike
 * Tez 0.9, Tez 0.10 loads classes through a class loader of its own, so Java 17 needs no system
 * class loader in its containers. As a command (the docker cluster's {@code make cluster-run}):
 * {@code TezSleepDag QUEUE PRODUCERS PRODUCER_MILLIS CONSUMER_MILLIS}, staging under {@code
 * -Dit.work.dir}.
 */
public final class TezSleepDag {
  private TezSleepDag() {}

  public static void main(String[] args) throws Exception {
    System.exit(SleepDag.runFromCommandLine(args, TezSleepDag::configuration));
  }

  /** Tez settings for a DAG in {@code queue} of the cluster {@code base} points at. */
  static TezConfiguration configuration(Configuration base, String queue) {
    return SleepDag.configuration(
        base,
        queue,
        new File(TidalMiniCluster.workDir()),
        TidalMiniCluster.CONTAINER_MB,
        TidalMiniCluster.amJavaOpts());
  }
}
