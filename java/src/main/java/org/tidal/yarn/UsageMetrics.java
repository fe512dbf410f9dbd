package org.tidal.yarn;

import java.util.Collection;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.util.resource.Resources;

/**
 * Bridges what the started containers use into Hadoop's metrics: the scheduler's used resource, the
 * root queue's available resources and every attempt's headroom. The core keeps its own accounting;
 * these figures only feed the RM's web UI, JMX and the AMs' allocate responses. Callers hold the
 * scheduler's monitor.
 */
final class UsageMetrics {
  private final Resource used = Resource.newInstance(0, 0);

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

  /** Sets the root queue's available resources to what the cluster has left. */
  void publishAvailable(Resource cluster, QueueMetrics root) {
    root.setAvailableResourcesToQueue(available(cluster));
  }

  /** Gives every running attempt what the cluster has left as its headroom. */
  void publishHeadroom(
      Resource cluster, Collection<SchedulerApplication<FiCaSchedulerApp>> applications) {
    for (SchedulerApplication<FiCaSchedulerApp> app : applications) {
      FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
      if (attempt != null) {
        attempt.setHeadroom(available(cluster));
      }
    }
  }

  private Resource available(Resource cluster) {
    return Resources.componentwiseMax(Resources.subtract(cluster, used), Resources.none());
  }
}
