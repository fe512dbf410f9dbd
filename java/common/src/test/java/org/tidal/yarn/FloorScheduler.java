package org.tidal.yarn;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;

/**
 * The floor of a heartbeat for benchmarks: a scheduler that decides nothing and books, on each node
 * heartbeat, exactly the containers a Tidal run booked on that heartbeat of the same event stream
 * (a {@link Plan}), through Hadoop's own per-container bookkeeping: the container id and record,
 * the attempt's {@code RMContainer} and its START transition, the asks it decrements, the node's
 * and the queue's usage, and on completion the FINISHED transition and the releases. What Tidal's
 * heartbeat costs above this is the shim's and the core's own work.
 *
 * <p>Everything but node heartbeats is Tidal's: applications, attempts and allocate calls (whose
 * container tokens Hadoop makes as the AM pulls the containers) go through the shim as under Tidal,
 * so that the applications' records are the same. The core takes part in no heartbeat.
 */
public final class FloorScheduler extends TidalScheduler {
  private final UsageMetrics usage = new UsageMetrics();
  private LineBookkeeping line;
  private Plan plan;
  private List<ApplicationAttemptId> attempts;
  private int heartbeat;

  /**
   * From the next heartbeat on, books the plan's containers, whose applications are {@code
   * attempts} in the order the plan numbered them.
   */
  public synchronized void follow(Plan plan, List<ApplicationAttemptId> attempts) {
    this.line = RmLine.bookkeeping(this);
    this.plan = plan;
    this.attempts = attempts;
    this.heartbeat = 0;
  }

  @Override
  public void handle(SchedulerEvent event) {
    if (event.getType() == SchedulerEventType.NODE_UPDATE && plan != null) {
      synchronized (this) {
        heartbeat(((NodeUpdateSchedulerEvent) event).getRMNode());
      }
    } else {
      super.handle(event);
    }
  }

  private void heartbeat(RMNode rmNode) {
    List<UpdatedContainerInfo> updates = rmNode.pullContainerUpdates();
    FiCaSchedulerNode node = node(rmNode.getNodeID());
    for (UpdatedContainerInfo update : updates) {
      for (ContainerStatus launched : update.getNewlyLaunchedContainers()) {
        containerLaunched(launched.getContainerId(), node);
      }
      for (ContainerStatus completed : update.getCompletedContainers()) {
        RMContainer container = getRMContainer(completed.getContainerId());
        if (container != null) {
          complete(container, completed);
        }
      }
    }
    for (Booking booking : plan.bookings(heartbeat++)) {
      book(node, booking);
    }
    usage.publishAvailable(getClusterResource(), getRootQueueMetrics());
  }

  private void book(FiCaSchedulerNode node, Booking booking) {
    FiCaSchedulerApp app = getApplicationAttempt(attempts.get(booking.app));
    synchronized (app) {
      ContainerId id =
          ContainerId.newContainerId(app.getApplicationAttemptId(), app.getNewContainerId());
      Container container =
          Container.newInstance(
              id,
              node.getNodeID(),
              node.getRMNode().getHttpAddress(),
              booking.capability,
              booking.priority,
              null);
      RMContainer rmContainer =
          line.allocate(app, booking.type, node, booking.priority, booking.resourceName, container);
      if (rmContainer == null) {
        throw new IllegalStateException(
            "the floor cannot book " + id + " for " + booking.resourceName + ": no ask left");
      }
      node.allocateContainer(rmContainer);
      usage.containerStarted(booking.capability);
    }
  }

  private void complete(RMContainer container, ContainerStatus status) {
    FiCaSchedulerApp app = getCurrentAttemptForContainer(container.getContainerId());
    if (app != null
        && line.containerCompleted(app, container, status, RMContainerEventType.FINISHED)) {
      line.releaseOnNode(node(container.getContainer().getNodeId()), container.getContainer());
      usage.containerFinished(container.getContainer().getResource());
    }
  }

  /** One container as Tidal booked it: for which application, ask and locality. */
  static final class Booking {
    final int app;
    final Priority priority;
    final Resource capability;
    final String resourceName;
    final NodeType type;

    Booking(int app, Priority priority, Resource capability, String resourceName, NodeType type) {
      this.app = app;
      this.priority = priority;
      this.capability = capability;
      this.resourceName = resourceName;
      this.type = type;
    }
  }

  /** The containers a Tidal run booked, per heartbeat in the order the heartbeats came. */
  public static final class Plan {
    private final List<List<Booking>> heartbeats = new ArrayList<List<Booking>>();

    /**
     * The containers each node held in ALLOCATED at its last heartbeat: a container stays there
     * from its booking until its AM pulls it, so one not among them is new. Only those still
     * allocated are kept: the ids of all containers ever booked would grow the live heap through
     * the Tidal run alone, which lengthens its collections and not the floor run's.
     */
    private final Map<NodeId, Set<ContainerId>> allocated = new HashMap<NodeId, Set<ContainerId>>();

    private long containers;

    /**
     * Records what {@code tidal} booked on the heartbeat of {@code nodeId} it just handled: the
     * containers on the node not seen there before, with the ask each decremented; {@code apps}
     * numbers the applications.
     */
    public void record(
        TidalScheduler tidal, NodeId nodeId, Map<ApplicationAttemptId, Integer> apps) {
      FiCaSchedulerNode node = tidal.node(nodeId);
      Set<ContainerId> before = allocated.getOrDefault(nodeId, Collections.emptySet());
      Set<ContainerId> now = new HashSet<ContainerId>();
      List<RMContainer> booked = new ArrayList<RMContainer>();
      for (RMContainer container : RmLine.bookkeeping(tidal).runningOn(node)) {
        if (container.getState() == RMContainerState.ALLOCATED) {
          now.add(container.getContainerId());
          if (!before.contains(container.getContainerId())) {
            booked.add(container);
          }
        }
      }
      allocated.put(nodeId, now);
      // In the order Tidal numbered them, which is the order it booked them in.
      Collections.sort(booked, (a, b) -> a.getContainerId().compareTo(b.getContainerId()));
      List<Booking> bookings = new ArrayList<Booking>(booked.size());
      for (RMContainer container : booked) {
        List<ResourceRequest> asks = RmLine.decremented(container);
        String resourceName = asks.isEmpty() ? ResourceRequest.ANY : asks.get(0).getResourceName();
        NodeType type =
            resourceName.equals(node.getNodeName())
                ? NodeType.NODE_LOCAL
                : resourceName.equals(ResourceRequest.ANY)
                    ? NodeType.OFF_SWITCH
                    : NodeType.RACK_LOCAL;
        bookings.add(
            new Booking(
                apps.get(container.getApplicationAttemptId()),
                container.getContainer().getPriority(),
                container.getContainer().getResource(),
                resourceName,
                type));
      }
      heartbeats.add(bookings);
      containers += bookings.size();
    }

    /** The containers booked in the run, all heartbeats counted. */
    public long containers() {
      return containers;
    }

    List<Booking> bookings(int heartbeat) {
      return heartbeat < heartbeats.size()
          ? heartbeats.get(heartbeat)
          : Collections.<Booking>emptyList();
    }
  }
}
