package org.tidal.yarn;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.WireLayout;

/**
 * The cluster's nodes on both sides, Hadoop's {@link FiCaSchedulerNode} records and capacity and
 * the core's dense node ids, and their heartbeats: one native call per heartbeat frees the
 * containers the node reports completed and decides what it starts, which {@link
 * DecisionMaterializer} turns into containers. Every method runs under the scheduler's monitor.
 */
final class ClusterNodes {
  private static final Log LOG = LogFactory.getLog(ClusterNodes.class);
  private static final long[] NO_IDS = new long[0];

  private final TidalScheduler scheduler;

  private final CoreInstance core;
  private final LineBookkeeping line;
  private final LocationTable locations;
  private final UsageMetrics usage;
  private final QueueMetrics rootMetrics;
  private final DecisionMaterializer materializer;
  private final ContainerCompletion completion;
  private final RMContext rmContext;
  private final boolean usePortForNodeName;
  private final AppAttemptRegistry attempts;
  private final AllocationIds ids;

  private final Map<NodeId, Integer> nodeIds = new ConcurrentHashMap<NodeId, Integer>();
  private final TreeSet<Integer> freeNodeIds = new TreeSet<Integer>();
  private int nextNodeId;

  /** The heartbeat's exchange buffer: completed ids in, decisions out; grown as needed. */
  private ByteBuffer exchange = TidalNative.heartbeatBuffer(0);

  /**
   * The allocation ids of the containers a heartbeat completed, reused by every heartbeat (they run
   * one at a time, under the scheduler's monitor); grown as needed.
   */
  private long[] completedIds = NO_IDS;

  private int maxAssign;

  ClusterNodes(
      TidalScheduler scheduler,
      CoreInstance core,
      LocationTable locations,
      UsageMetrics usage,
      QueueMetrics rootMetrics,
      DecisionMaterializer materializer,
      ContainerCompletion completion,
      RMContext rmContext,
      boolean usePortForNodeName,
      AppAttemptRegistry attempts,
      AllocationIds ids,
      LineBookkeeping line) {
    this.line = line;
    this.attempts = attempts;
    this.ids = ids;
    this.scheduler = scheduler;
    this.core = core;
    this.locations = locations;
    this.usage = usage;
    this.rootMetrics = rootMetrics;
    this.materializer = materializer;
    this.completion = completion;
    this.rmContext = rmContext;
    this.usePortForNodeName = usePortForNodeName;
  }

  /** Makes room for up to {@code maxAssign} decisions per heartbeat. */
  void setMaxAssignPerHeartbeat(int maxAssign) {
    this.maxAssign = maxAssign;
    ensureExchange(maxAssign * WireLayout.DECISION_STRIDE);
  }

  private void ensureExchange(int longs) {
    if (exchange.capacity() < longs * Long.BYTES) {
      exchange = TidalNative.heartbeatBuffer(longs);
    }
  }

  void add(RMNode rmNode) {
    FiCaSchedulerNode node = new FiCaSchedulerNode(rmNode, usePortForNodeName);
    Integer id = freeNodeIds.isEmpty() ? Integer.valueOf(nextNodeId++) : freeNodeIds.pollFirst();
    try {
      addToCore(id, node);
    } catch (TidalException e) {
      freeNodeIds.add(id);
      throw e;
    }
    nodeIds.put(rmNode.getNodeID(), id);
    scheduler.trackNode(node);
    publishAvailable();
    LOG.info(
        "Added node "
            + rmNode.getNodeAddress()
            + " (native id "
            + id
            + ") with "
            + node.getTotalResource()
            + ", cluster capacity "
            + scheduler.getClusterResource());
  }

  /**
   * After a work-preserving RM restart a node reports the containers it kept running; Hadoop's own
   * recovery ({@code AbstractYarnScheduler#recoverContainersOnNode}) has rebuilt its records of
   * those whose application came back, and killed the rest. The core adopts each recovered one, so
   * that its app's and queue's usage count it and nothing is stopped.
   */
  void adoptRecovered(RMNode rmNode, List<NMContainerStatus> reports) {
    if (reports == null || !rmContext.isWorkPreservingRecoveryEnabled()) {
      return;
    }
    for (NMContainerStatus report : reports) {
      RMContainer container = scheduler.getRMContainer(report.getContainerId());
      if (report.getContainerState() == ContainerState.COMPLETE
          || container == null
          || ids.allocationId(report.getContainerId()) != AllocationIds.NONE) {
        continue;
      }
      if (adopt(container)) {
        usage.containerStarted(container.getContainer().getResource());
      }
    }
    publishAvailable();
  }

  /**
   * Books a running container in the core under its attempt's key; false when it cannot be (it
   * ended, or its attempt or node is gone). The core takes it even when the node has no room left
   * for it: running work is never refused.
   */
  boolean adopt(RMContainer container) {
    if (container.getState() == RMContainerState.COMPLETED) {
      return false;
    }
    ContainerId containerId = container.getContainerId();
    Long key = attempts.key(containerId.getApplicationAttemptId());
    Integer nodeId = nodeIds.get(container.getContainer().getNodeId());
    if (key == null || nodeId == null) {
      LOG.warn(
          "Cannot adopt "
              + containerId
              + ": "
              + (key == null ? "its attempt is not the current one" : "its node is unknown"));
      return false;
    }
    Resource resource = container.getContainer().getResource();
    long allocationId =
        TidalNative.adoptAllocation(
            core.handle(),
            key,
            nodeId,
            container.getContainer().getPriority().getPriority(),
            resource.getMemory(),
            resource.getVirtualCores(),
            line.devices(resource, LineBookkeeping.GPU),
            line.devices(resource, LineBookkeeping.FPGA));
    ids.booked(containerId, allocationId);
    LOG.info("Adopted running container " + containerId + " as allocation " + allocationId);
    return true;
  }

  /**
   * Starts a container that an RM component placed on {@code node} (a tracked node) outside a
   * heartbeat, when the core books it (the node and the attempt's queue have room for it); {@code
   * record} then makes Hadoop's container record, or null when it cannot (a stopped attempt). False
   * when the core refuses or the record cannot be made.
   */
  boolean startPlaced(
      FiCaSchedulerApp attempt,
      FiCaSchedulerNode node,
      Priority priority,
      Resource resource,
      PlacedContainer record) {
    Long key = attempts.key(attempt.getApplicationAttemptId());
    Integer nodeId = nodeIds.get(node.getNodeID());
    if (key == null || nodeId == null) {
      return false;
    }
    long allocationId =
        TidalNative.placeOnNode(
            core.handle(),
            key,
            nodeId,
            priority.getPriority(),
            resource.getMemory(),
            resource.getVirtualCores(),
            line.devices(resource, LineBookkeeping.GPU),
            line.devices(resource, LineBookkeeping.FPGA));
    if (allocationId < 0) {
      return false;
    }
    RMContainer rmContainer = null;
    try {
      synchronized (attempt) {
        rmContainer = record.start(attempt, node);
      }
    } finally {
      // Whatever kept the record from being made, the core must not keep the allocation.
      if (rmContainer == null) {
        TidalNative.releaseAllocation(core.handle(), allocationId);
      }
    }
    if (rmContainer == null) {
      return false;
    }
    materializer.booked(node, rmContainer, allocationId);
    publishAvailable();
    return true;
  }

  /** Makes Hadoop's record of a container the core booked outside a heartbeat. */
  interface PlacedContainer {
    /** The started container of {@code attempt} on {@code node}, or null when it cannot start. */
    RMContainer start(FiCaSchedulerApp attempt, FiCaSchedulerNode node);
  }

  /** Adds every node to a rebuilt core, under the ids and locations the old one had. */
  void replay() {
    for (Map.Entry<NodeId, Integer> entry : nodeIds.entrySet()) {
      addToCore(entry.getValue(), scheduler.node(entry.getKey()));
    }
  }

  /** Gives the core node {@code id}: its host, rack and capacity. */
  private void addToCore(int id, FiCaSchedulerNode node) {
    Resource total = node.getTotalResource();
    try (LocationTable.Batch names = locations.batch()) {
      TidalNative.addNode(
          core.handle(),
          id,
          names.intern(node.getNodeName()),
          names.intern(node.getRackName()),
          total.getMemory(),
          total.getVirtualCores(),
          line.devices(total, LineBookkeeping.GPU),
          line.devices(total, LineBookkeeping.FPGA));
    }
  }

  void remove(RMNode rmNode) {
    FiCaSchedulerNode node = scheduler.node(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    completion.nodeLost(node);
    scheduler.untrackNode(node);
    publishAvailable();
    Integer id = nodeIds.remove(rmNode.getNodeID());
    // The core forgets the node's allocations along with the node.
    TidalNative.removeNode(core.handle(), id);
    freeNodeIds.add(id);
    LOG.info(
        "Removed node "
            + rmNode.getNodeAddress()
            + ", cluster capacity "
            + scheduler.getClusterResource());
  }

  /** Resizes a node in the core; false for a node it does not know. */
  boolean updateResource(RMNode rmNode, ResourceOption resourceOption) {
    Integer id = nodeIds.get(rmNode.getNodeID());
    if (id == null) {
      return false;
    }
    Resource resource = resourceOption.getResource();
    TidalNative.updateNodeResource(
        core.handle(),
        id,
        resource.getMemory(),
        resource.getVirtualCores(),
        line.devices(resource, LineBookkeeping.GPU),
        line.devices(resource, LineBookkeeping.FPGA));
    return true;
  }

  /** One node heartbeat: launched and completed containers in, started containers out. */
  void heartbeat(RMNode rmNode) {
    List<UpdatedContainerInfo> updates = rmNode.pullContainerUpdates();
    FiCaSchedulerNode node = scheduler.node(rmNode.getNodeID());
    Integer id = nodeIds.get(rmNode.getNodeID());
    if (node == null || id == null) {
      return;
    }
    int reported = 0;
    for (UpdatedContainerInfo update : updates) {
      for (ContainerStatus launched : update.getNewlyLaunchedContainers()) {
        scheduler.containerLaunched(launched.getContainerId(), node);
      }
      reported += update.getCompletedContainers().size();
    }
    if (completedIds.length < reported) {
      completedIds = new long[reported];
    }
    int count = 0;
    for (UpdatedContainerInfo update : updates) {
      for (ContainerStatus status : update.getCompletedContainers()) {
        RMContainer container = scheduler.getRMContainer(status.getContainerId());
        long allocationId = ids.allocationId(status.getContainerId());
        if (container != null
            && completion.complete(container, status, RMContainerEventType.FINISHED)
            && allocationId != AllocationIds.NONE) {
          completedIds[count++] = allocationId;
        }
      }
    }

    if (rmContext.isWorkPreservingRecoveryEnabled()
        && !rmContext.isSchedulerReadyForAllocatingContainers()) {
      // Hadoop holds back allocation right after an RM restart; free without deciding.
      for (int i = 0; i < count; i++) {
        TidalNative.releaseAllocation(core.handle(), completedIds[i]);
      }
      publishAvailable();
      return;
    }

    int decided;
    try {
      ensureExchange(count);
      for (int i = 0; i < count; i++) {
        exchange.putLong(i * Long.BYTES, completedIds[i]);
      }
      decided =
          TidalNative.nodeHeartbeat(core.handle(), id, core.nowMs(), exchange, count, maxAssign);
    } catch (TidalException e) {
      // The heartbeat frees completed allocations before deciding; releasing them again is a
      // no-op when that already happened and keeps the core's accounting right when it did not.
      for (int i = 0; i < count; i++) {
        try {
          TidalNative.releaseAllocation(core.handle(), completedIds[i]);
        } catch (TidalException again) {
          LOG.error("Cannot release allocation " + completedIds[i] + ": " + again.getMessage());
        }
      }
      throw e;
    }
    for (int i = 0; i < decided; i++) {
      materializer.materialize(node, exchange, i * WireLayout.DECISION_STRIDE);
    }
    publishAvailable();
  }

  /**
   * Publishes the root queue's available resources and the attempts' headroom after the capacity or
   * usage changed.
   */
  void publishAvailable() {
    usage.publishAvailable(scheduler.getClusterResource(), rootMetrics);
  }
}
