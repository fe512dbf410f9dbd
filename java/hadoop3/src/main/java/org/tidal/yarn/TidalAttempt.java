package org.tidal.yarn;

import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerImpl;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

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
      updateAMContainerDiagnostics(AMState.ASSIGNED, null);
      addToNewlyAllocatedContainers(node, rmContainer);
      liveContainers.put(container.getId(), rmContainer);
      ContainerRequest request = appSchedulingInfo.allocate(type, node, key, rmContainer);
      attemptResourceUsage.incUsed(node.getPartition(), container.getResource());
      rmContainer.setContainerRequest(request);
      rmContainer.handle(new RMContainerEvent(container.getId(), RMContainerEventType.START));
      return rmContainer;
    } finally {
      writeLock.unlock();
    }
  }
}
