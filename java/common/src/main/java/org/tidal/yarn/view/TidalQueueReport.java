package org.tidal.yarn.view;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * One queue's numbers as the core reports them, for tools that watch the scheduler from inside the
 * RM's JVM the way they read FairScheduler's queues (Hadoop's Scheduler Load Simulator records
 * usage, demand and shares per queue). Read-only; taken from a status snapshot at most a second
 * old, the one Tidal's metrics publish from. Shares are the core's dominant-share fractions, also
 * given as resources: that fraction of the cluster in memory and in vcores.
 */
public final class TidalQueueReport {
  private final String queueName;
  private final Resource used;
  private final Resource pending;
  private final Resource cluster;
  private final double dominantShare;
  private final double fairShare;
  private final double guaranteedShare;
  private final double weight;
  private final long runningContainers;
  private final long pendingContainers;
  private final int apps;

  public TidalQueueReport(QueueStatus status, QueueStatus.Leaf leaf) {
    queueName = leaf.name;
    used = Resources.createResource((int) leaf.used.memoryMb, (int) leaf.used.vcores);
    pending = Resources.createResource((int) leaf.pending.memoryMb, (int) leaf.pending.vcores);
    cluster = Resources.createResource((int) status.cluster.memoryMb, (int) status.cluster.vcores);
    dominantShare = leaf.dominantShare;
    fairShare = leaf.fairShare;
    Double guaranteed = leaf.guaranteedShare(status.cluster);
    guaranteedShare = guaranteed == null ? 0.0 : guaranteed.doubleValue();
    weight = leaf.weight;
    runningContainers = leaf.runningContainers;
    pendingContainers = leaf.pendingContainers;
    apps = leaf.apps;
  }

  /** The full name, {@code root.a}. */
  public String getQueueName() {
    return queueName;
  }

  /** What the queue's containers hold now. */
  public Resource getUsed() {
    return Resources.clone(used);
  }

  /** What the queue's applications ask for and have not got. */
  public Resource getPending() {
    return Resources.clone(pending);
  }

  /** Used plus pending: FairScheduler's notion of a queue's demand. */
  public Resource getDemand() {
    return Resources.add(used, pending);
  }

  /** The cluster's resources in the snapshot. */
  public Resource getClusterResource() {
    return Resources.clone(cluster);
  }

  /** The weighted DRF fair share as a fraction of the cluster's dominant resource. */
  public double getFairShare() {
    return fairShare;
  }

  /** The fair share as resources: that fraction of the cluster's memory and vcores. */
  public Resource getFairShareResource() {
    return fractionOfCluster(fairShare);
  }

  /** An LQ's guaranteed rate as a dominant share; 0 for a queue without a guarantee. */
  public double getGuaranteedShare() {
    return guaranteedShare;
  }

  /** The guaranteed rate as resources (zero without a guarantee). */
  public Resource getGuaranteedResource() {
    return fractionOfCluster(guaranteedShare);
  }

  /** The queue's share of the cluster in its dominant resource now. */
  public double getDominantShare() {
    return dominantShare;
  }

  public double getWeight() {
    return weight;
  }

  public long getRunningContainers() {
    return runningContainers;
  }

  public long getPendingContainers() {
    return pendingContainers;
  }

  /** Applications in the queue. */
  public int getApps() {
    return apps;
  }

  private Resource fractionOfCluster(double fraction) {
    return Resources.createResource(
        (int) Math.round(fraction * cluster.getMemory()),
        (int) Math.round(fraction * cluster.getVirtualCores()));
  }
}
