package org.tidal.yarn;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalNative;

/**
 * Completes containers in Hadoop's bookkeeping (attempt, node, used resources), whatever ended
 * them: the node reported them finished, the AM released them, their node was lost, their attempt
 * ended, or they expired before launch. Each container completes once, so the caller that completed
 * it hands its allocation back to the core exactly once. Completion holds the scheduler's monitor,
 * as Hadoop's {@code completedContainer} does.
 */
final class ContainerCompletion {
  private static final Log LOG = LogFactory.getLog(ContainerCompletion.class);

  private final TidalScheduler scheduler;

  private final CoreInstance core;
  private final UsageMetrics usage;
  private final AllocationIds ids;
  private final NodeReservations reservations;
  private final LineBookkeeping line;

  ContainerCompletion(
      TidalScheduler scheduler,
      CoreInstance core,
      UsageMetrics usage,
      AllocationIds ids,
      NodeReservations reservations,
      LineBookkeeping line) {
    this.line = line;
    this.reservations = reservations;
    this.scheduler = scheduler;
    this.core = core;
    this.usage = usage;
    this.ids = ids;
  }

  /** Returns true only for the one call that actually completed the container. */
  boolean complete(RMContainer rmContainer, ContainerStatus status, RMContainerEventType event) {
    synchronized (scheduler) {
      Container container = rmContainer.getContainer();
      FiCaSchedulerApp app = scheduler.getCurrentAttemptForContainer(container.getId());
      if (app == null) {
        LOG.info(
            "Container "
                + container.getId()
                + " of an unknown application completed ("
                + event
                + ")");
        return false;
      }
      if (!line.containerCompleted(app, rmContainer, status, event)) {
        return false;
      }
      FiCaSchedulerNode node = scheduler.node(container.getNodeId());
      if (node != null) {
        line.releaseOnNode(node, container);
      }
      usage.containerFinished(container.getResource());
      ids.ended(container.getId());
      // Hadoop's attempt already logs every completed container at INFO; a second INFO line
      // per container cost some 4% of the heartbeat under churn.
      if (LOG.isDebugEnabled()) {
        LOG.debug(
            "Attempt "
                + app.getApplicationAttemptId()
                + " released container "
                + container.getId()
                + " on "
                + container.getNodeId()
                + " ("
                + event
                + ")");
      }
      return true;
    }
  }

  /** A container whose AM never launched it; the core frees its allocation too. */
  void expired(ContainerId containerId) {
    synchronized (scheduler) {
      RMContainer container = scheduler.getRMContainer(containerId);
      long allocationId = ids.allocationId(containerId);
      if (container != null
          && complete(
              container,
              SchedulerUtils.createAbnormalContainerStatus(
                  containerId, SchedulerUtils.EXPIRED_CONTAINER),
              RMContainerEventType.EXPIRE)
          && allocationId != AllocationIds.NONE) {
        TidalNative.releaseAllocation(core.handle(), allocationId);
      }
    }
  }

  /**
   * Kills an ended attempt's containers, but those running on when the attempt keeps them, and
   * cancels its reservations.
   */
  void attemptEnded(FiCaSchedulerApp attempt, boolean keepRunningContainers) {
    reservations.attemptEnded(attempt);
    for (RMContainer container : attempt.getLiveContainers()) {
      if (keepRunningContainers && container.getState().equals(RMContainerState.RUNNING)) {
        continue;
      }
      complete(
          container,
          SchedulerUtils.createAbnormalContainerStatus(
              container.getContainerId(), SchedulerUtils.COMPLETED_APPLICATION),
          RMContainerEventType.KILL);
    }
  }

  /** Kills the containers and the reservation of a lost node; the core forgets them with it. */
  void nodeLost(FiCaSchedulerNode node) {
    reservations.cancel(node, "its node was lost");
    for (RMContainer container : line.runningOn(node)) {
      complete(
          container,
          SchedulerUtils.createAbnormalContainerStatus(
              container.getContainerId(), SchedulerUtils.LOST_CONTAINER),
          RMContainerEventType.KILL);
    }
  }
}
