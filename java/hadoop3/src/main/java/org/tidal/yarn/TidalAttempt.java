package org.tidal.yarn;

import java.util.Set;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AppSchedulingInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.tidal.yarn.queue.TidalQueue;

/**
 * An application attempt in Hadoop 3's records. Hadoop 3's {@link FiCaSchedulerApp} only proposes a
 * container (CapacityScheduler commits it in a second step), and FifoScheduler's attempt, which
 * books one at once, cannot be made outside its package; this attempt books a started container as
 * FifoScheduler's does: the container record, the attempt's live and newly allocated containers,
 * the asks it satisfies and the attempt's usage.
 */
final class TidalAttempt extends FiCaSchedulerApp {
  TidalAttempt(ApplicationAttemptId attemptId, String user, TidalQueue queue, RMContext context) {
    super(attemptId, user, queue, queue.users(), context);
  }

  /** Starts {@code container} for the ask under {@code key}; null when the ask is gone. */
  RMContainer start(
      NodeType type, FiCaSchedulerNode node, SchedulerRequestKey key, Container container) {
    writeLock.lock();
    try {
      if (isStopped || getOutstandingAsksCount(key) <= 0) {
        return null;
      }
      RMContainerImpl rmContainer = book(node, key, container);
      updateAMContainerDiagnostics(AMState.ASSIGNED, null);
      ContainerRequest request = appSchedulingInfo.allocate(type, node, key, rmContainer);
      attemptResourceUsage.incUsed(node.getPartition(), container.getResource());
      rmContainer.setContainerRequest(request);
      rmContainer.handle(new RMContainerEvent(container.getId(), RMContainerEventType.START));
      return rmContainer;
    } finally {
      writeLock.unlock();
    }
  }

  /**
   * Starts {@code container}, which the placement-constraint processor placed on {@code node} for a
   * scheduling request carrying {@code tags}; such requests never become asks, so none is
   * decremented and the queue's metrics count the container directly. Null when the attempt is
   * stopped. The RM adds the tags to its allocation tags when the container starts running.
   */
  RMContainer startPlaced(FiCaSchedulerNode node, Container container, Set<String> tags) {
    writeLock.lock();
    try {
      if (isStopped) {
        return null;
      }
      RMContainerImpl rmContainer =
          book(node, SchedulerRequestKey.extractFrom(container), container);
      rmContainer.setAllocationTags(tags);
      AppSchedulingInfo.updateMetrics(
          getApplicationId(), NodeType.NODE_LOCAL, node, rmContainer, getUser(), getQueue());
      attemptResourceUsage.incUsed(node.getPartition(), container.getResource());
      rmContainer.handle(new RMContainerEvent(container.getId(), RMContainerEventType.START));
      return rmContainer;
    } finally {
      writeLock.unlock();
    }
  }

  /** The container's record, among the attempt's live and newly allocated containers. */
  private RMContainerImpl book(
      FiCaSchedulerNode node, SchedulerRequestKey key, Container container) {
    RMContainerImpl rmContainer =
        new RMContainerImpl(
            container,
            key,
            getApplicationAttemptId(),
            node.getNodeID(),
            getUser(),
            rmContext,
            node.getPartition());
    rmContainer.setQueueName(getQueueName());
    addToNewlyAllocatedContainers(node, rmContainer);
    liveContainers.put(container.getId(), rmContainer);
    return rmContainer;
  }
}
