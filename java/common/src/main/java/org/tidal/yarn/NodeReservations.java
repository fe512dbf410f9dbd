package org.tidal.yarn;

import java.util.Collection;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerFinishedEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;

/**
 * Hadoop's bookkeeping of the reservations the core makes (a node held for an ask larger than its
 * free space): the reserved container on the attempt and the node, and the queue's reserved
 * metrics, as CapacityScheduler keeps them. A reservation ends in one of two ways: its ask starts
 * on the node under the reserved container's id, or it is cancelled (the app no longer asks, its
 * attempt ended, its node was lost, the core was rebuilt) and the reserved container is killed, so
 * the attempt counts it among its finished containers as with the stock schedulers. Runs under the
 * scheduler's monitor.
 */
final class NodeReservations {
  private static final Log LOG = LogFactory.getLog(NodeReservations.class);

  private final TidalScheduler scheduler;
  private final LineBookkeeping line;

  NodeReservations(TidalScheduler scheduler, LineBookkeeping line) {
    this.scheduler = scheduler;
    this.line = line;
  }

  /** Reserves {@code node} for {@code app}'s ask, under the attempt's next container number. */
  void reserve(FiCaSchedulerApp app, FiCaSchedulerNode node, Priority priority, Resource ask) {
    if (node.getReservedContainer() != null) {
      cancel(node, "the core reserved the node for another ask");
    }
    ContainerId containerId =
        ContainerId.newContainerId(app.getApplicationAttemptId(), app.getNewContainerId());
    Container container =
        Container.newInstance(
            containerId, node.getNodeID(), node.getRMNode().getHttpAddress(), ask, priority, null);
    line.reserve(app, node, priority, container);
    LOG.info("Reserved " + node.getNodeName() + " for " + containerId + " (" + ask + ")");
  }

  /**
   * Ends the node's reservation because {@code app}'s ask at {@code priority} starts there, and
   * returns the reserved container's id for the new container; null when the node is not reserved
   * for that ask (any other reservation on it is cancelled).
   */
  ContainerId fulfil(FiCaSchedulerApp app, FiCaSchedulerNode node, Priority priority) {
    RMContainer reserved = node.getReservedContainer();
    if (reserved == null) {
      return null;
    }
    if (!reserved.getApplicationAttemptId().equals(app.getApplicationAttemptId())
        || !line.reservedPriority(reserved).equals(priority)) {
      cancel(node, "another container starts on the node");
      return null;
    }
    release(app, node, reserved);
    return reserved.getContainerId();
  }

  /** Cancels the node's reservation, if any, killing the reserved container. */
  void cancel(FiCaSchedulerNode node, String why) {
    RMContainer reserved = node.getReservedContainer();
    if (reserved == null) {
      return;
    }
    FiCaSchedulerApp app = scheduler.getApplicationAttempt(reserved.getApplicationAttemptId());
    if (app == null || !app.getApplicationAttemptId().equals(reserved.getApplicationAttemptId())) {
      // Attempts cancel their reservations when they end, so this is a bookkeeping fault: the
      // core no longer holds the node, and Hadoop's record only reports it.
      LOG.warn("Reservation of " + node.getNodeName() + " outlived its attempt: " + reserved);
      return;
    }
    release(app, node, reserved);
    ContainerId id = reserved.getContainerId();
    reserved.handle(
        new RMContainerFinishedEvent(
            id,
            SchedulerUtils.createAbnormalContainerStatus(id, "reservation cancelled: " + why),
            RMContainerEventType.KILL));
    LOG.info("Cancelled the reservation of " + node.getNodeName() + " for " + id + ": " + why);
  }

  /** Cancels every reservation of an attempt that is ending (it is still the current one). */
  void attemptEnded(FiCaSchedulerApp app) {
    for (RMContainer reserved : app.getReservedContainers()) {
      FiCaSchedulerNode node = scheduler.node(reserved.getReservedNode());
      if (node != null) {
        cancel(node, "its attempt ended");
      }
    }
  }

  /** Cancels every reservation, when a rebuilt core knows none of them. */
  void cancelAll(Collection<FiCaSchedulerNode> nodes) {
    for (FiCaSchedulerNode node : nodes) {
      cancel(node, "the scheduler's core was rebuilt");
    }
  }

  private void release(FiCaSchedulerApp app, FiCaSchedulerNode node, RMContainer reserved) {
    line.unreserve(app, node, reserved);
  }
}
