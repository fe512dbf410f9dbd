package org.tidal.yarn;

import java.nio.ByteBuffer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.WireLayout;

/**
 * Turns the core's decision records into containers with Hadoop's own bookkeeping: the attempt's
 * {@link FiCaSchedulerApp#allocate} (which decrements its asks as Hadoop's schedulers do) and the
 * node's. A decision Hadoop cannot take, because the attempt stopped or its asks changed since the
 * core saw them, is handed back to the core. Containers are numbered from their attempt's own
 * sequence, as Hadoop's schedulers number them; {@link AllocationIds} keeps each one's allocation.
 */
final class DecisionMaterializer {
  private static final Log LOG = LogFactory.getLog(DecisionMaterializer.class);

  private final CoreInstance core;
  private final AppAttemptRegistry attempts;
  private final UsageMetrics usage;
  private final AllocationIds ids;
  private final NodeReservations reservations;
  private final LineBookkeeping line;

  /**
   * The priority record of the last decision, reused while decisions keep its priority (most do):
   * each new record goes through Hadoop's reflective record factory. Hadoop never modifies a
   * container's priority, so containers may share one, as CapacityScheduler's share theirs.
   */
  private Priority lastPriority = Priority.newInstance(0);

  DecisionMaterializer(
      CoreInstance core,
      AppAttemptRegistry attempts,
      UsageMetrics usage,
      AllocationIds ids,
      NodeReservations reservations,
      LineBookkeeping line) {
    this.line = line;
    this.reservations = reservations;
    this.core = core;
    this.attempts = attempts;
    this.usage = usage;
    this.ids = ids;
  }

  private static long field(ByteBuffer d, int offset, int field) {
    return d.getLong((offset + field) * Long.BYTES);
  }

  /**
   * Turns the decision record at long index {@code offset} of {@code d} (a heartbeat buffer) into a
   * container on {@code node}.
   */
  void materialize(FiCaSchedulerNode node, ByteBuffer d, int offset) {
    long allocationId = field(d, offset, WireLayout.DEC_ALLOCATION_ID);
    FiCaSchedulerApp app = attempts.attempt(field(d, offset, WireLayout.DEC_APP_KEY));
    Priority priority = priority((int) field(d, offset, WireLayout.DEC_PRIORITY));
    Resource capability =
        line.resource(
            field(d, offset, WireLayout.DEC_MEMORY_MB),
            field(d, offset, WireLayout.DEC_VCORES),
            field(d, offset, WireLayout.DEC_GPUS),
            field(d, offset, WireLayout.DEC_FPGAS));
    int kind = (int) field(d, offset, WireLayout.DEC_KIND);
    if (kind == WireLayout.KIND_UNRESERVE) {
      reservations.cancel(node, "the application no longer asks for it");
      return;
    }
    if (kind == WireLayout.KIND_RESERVE) {
      // An attempt that stopped is removed from the core soon, which ends the reservation there.
      if (app != null && !app.isStopped()) {
        synchronized (app) {
          reservations.reserve(app, node, priority, capability);
        }
      }
      return;
    }
    int locality = (int) field(d, offset, WireLayout.DEC_LOCALITY);
    String resourceName = resourceName(node, locality);
    String failure;
    RMContainer rmContainer = null;
    if (app == null) {
      failure = "its application attempt is gone";
    } else {
      synchronized (app) {
        failure = unmaterializable(app, node, priority, locality, resourceName, capability);
        if (failure == null) {
          NodeType type = nodeType(locality);
          // A reservation of this ask on the node ends as the ask starts, under its container id.
          ContainerId containerId = reservations.fulfil(app, node, priority);
          if (containerId == null) {
            containerId =
                ContainerId.newContainerId(app.getApplicationAttemptId(), app.getNewContainerId());
          }
          Container container =
              Container.newInstance(
                  containerId,
                  node.getNodeID(),
                  node.getRMNode().getHttpAddress(),
                  capability,
                  priority,
                  null);
          rmContainer = line.allocate(app, type, node, priority, resourceName, container);
          if (rmContainer == null) {
            failure = "the attempt is stopped or has no outstanding request";
          }
        }
      }
    }
    if (rmContainer == null) {
      LOG.warn(
          "Releasing allocation "
              + allocationId
              + " on "
              + node.getNodeName()
              + " (priority "
              + priority
              + ", "
              + capability
              + "): "
              + failure);
      TidalNative.releaseAllocation(core.handle(), allocationId);
      return;
    }
    booked(node, rmContainer, allocationId);
  }

  private Priority priority(int value) {
    if (lastPriority.getPriority() != value) {
      lastPriority = Priority.newInstance(value);
    }
    return lastPriority;
  }

  /** Records a container the core booked under {@code allocationId} on the node and in metrics. */
  void booked(FiCaSchedulerNode node, RMContainer rmContainer, long allocationId) {
    ids.booked(rmContainer.getContainerId(), allocationId);
    node.allocateContainer(rmContainer);
    usage.containerStarted(rmContainer.getContainer().getResource());
  }

  /** Why Hadoop's bookkeeping cannot take the decision, or null when it can. */
  private String unmaterializable(
      FiCaSchedulerApp app,
      FiCaSchedulerNode node,
      Priority priority,
      int locality,
      String resourceName,
      Resource capability) {
    if (app.isStopped()) {
      return "its application attempt is stopped";
    }
    if (locality != WireLayout.LOCALITY_NODE
        && locality != WireLayout.LOCALITY_RACK
        && locality != WireLayout.LOCALITY_OFF_SWITCH) {
      return "unknown locality " + locality;
    }
    Resource asked = line.outstanding(app, priority, resourceName);
    if (asked == null) {
      return "no outstanding request at " + resourceName;
    }
    if (!asked.equals(capability)) {
      return "the request now asks for " + asked;
    }
    // Hadoop decrements the rack and ANY requests along with a node-local one.
    if (locality == WireLayout.LOCALITY_NODE
        && line.outstanding(app, priority, node.getRackName()) == null) {
      return "no outstanding request at " + node.getRackName();
    }
    if (locality != WireLayout.LOCALITY_OFF_SWITCH
        && line.outstanding(app, priority, ResourceRequest.ANY) == null) {
      return "no outstanding request at " + ResourceRequest.ANY;
    }
    return null;
  }

  private static NodeType nodeType(int locality) {
    switch (locality) {
      case WireLayout.LOCALITY_NODE:
        return NodeType.NODE_LOCAL;
      case WireLayout.LOCALITY_RACK:
        return NodeType.RACK_LOCAL;
      default:
        return NodeType.OFF_SWITCH;
    }
  }

  private static String resourceName(FiCaSchedulerNode node, int locality) {
    switch (locality) {
      case WireLayout.LOCALITY_NODE:
        return node.getNodeName();
      case WireLayout.LOCALITY_RACK:
        return node.getRackName();
      default:
        return ResourceRequest.ANY;
    }
  }
}
