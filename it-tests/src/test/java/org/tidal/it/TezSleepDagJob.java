package org.tidal.it;

import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.tez.client.TezClient;
import org.apache.tez.dag.api.client.DAGClient;
import org.apache.tez.dag.api.client.DAGStatus;

/**
 * {@link TezSleepDag} as a command, for a cluster of separate hosts (the docker cluster's {@code
 * make cluster-run}): submits the DAG to the queue given and waits for it. The AM and its tasks run
 * on this JVM's class path, which every host of that cluster has at the same place; the staging
 * directory ({@code -Dit.work.dir}) must be on the cluster's shared file system.
 *
 * <pre>
 *   TezSleepDagJob QUEUE PRODUCERS PRODUCER_MILLIS CONSUMER_MILLIS
 * </pre>
 *
 * <p>Exits 0 when the DAG succeeded, 1 when it did not, 2 on bad arguments.
 */
public final class TezSleepDagJob {
  private TezSleepDagJob() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println(
          "usage: TezSleepDagJob QUEUE PRODUCERS PRODUCER_MILLIS CONSUMER_MILLIS (got "
              + args.length
              + " arguments)");
      System.exit(2);
    }
    String queue = args[0];
    int producers;
    long producerMillis;
    long consumerMillis;
    try {
      producers = Integer.parseInt(args[1]);
      producerMillis = Long.parseLong(args[2]);
      consumerMillis = Long.parseLong(args[3]);
    } catch (NumberFormatException e) {
      System.err.println("TezSleepDagJob: PRODUCERS and the MILLIS must be numbers: " + e);
      System.exit(2);
      return;
    }
    String name = "sleep-dag-" + queue;
    TezClient tez =
        TezClient.create(name, TezSleepDag.configuration(new YarnConfiguration(), queue), false);
    tez.start();
    DAGStatus.State state;
    try {
      DAGClient dag =
          tez.submitDAG(TezSleepDag.dag(name, producers, producerMillis, consumerMillis));
      state = dag.waitForCompletion().getState();
      System.out.println("DAG " + name + " of " + tez.getAppMasterApplicationId() + ": " + state);
    } finally {
      tez.stop();
    }
    System.exit(state == DAGStatus.State.SUCCEEDED ? 0 : 1);
  }
}
