package org.tidal.yarn;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * Bridges what the started containers use into Hadoop's metrics: the scheduler's used resource, the
 * root queue's available resources and every attempt's headroom. The core keeps its own accounting;
 * these figures only feed the RM's web UI, JMX and the AMs' allocate responses. Callers hold the
 * scheduler's monitor, but for {@link #headroom}.
 */
final class UsageMetrics {
  private final Resource used = Resource.newInstance(0, 0);

  /** Read by allocate calls on the RPC threads, which do not hold the scheduler's monitor. */
  private volatile Resource headroom = Resource.newInstance(0, 0);

  /** The live sum, as {@code YarnScheduler#getUsedResource} hands it out. */
  Resource used() {
    return used;
  }

  void containerStarted(Resource capability) {
    Resources.addTo(used, capability);
  }

  void containerFinished(Resource capability) {
    Resources.subtractFrom(used, capability);
  }

  /**
   * Sets the root queue's available resources to what the cluster has left, and keeps that as the
   * headroom every attempt's next allocate call reports: one figure for all attempts, so it is kept
   * once here rather than copied into each attempt on every heartbeat.
   */
  void publishAvailable(Resource cluster, QueueMetrics root) {
    Resource left = available(cluster);
    headroom = left;
    root.setAvailableResourcesToQueue(left);
  }

  /** What the cluster had left when it was last published; never modified once published. */
  Resource headroom() {
    return headroom;
  }

  private Resource available(Resource cluster) {
    return Resources.componentwiseMax(Resources.subtract(cluster, used), Resources.none());
  }
}
