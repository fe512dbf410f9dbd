package org.tidal.yarn;

import java.util.Optional;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ExecutionType;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.constraint.InvalidAllocationTagsQueryException;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.constraint.PlacementConstraintsUtil;

/**
 * Placement constraints through Hadoop's placement-constraint processor ({@code
 * yarn.resourcemanager.placement-constraints.handler=placement-processor}): the processor picks a
 * node for each scheduling request by the app's affinity and anti-affinity and asks the scheduler
 * to start the container there, from its own threads. As CapacityScheduler does, the constraints
 * are checked once more against the allocation tags of the containers running now (the processor
 * planned against a snapshot); the core then decides whether the node and the app's queue have
 * room. A refusal sends the request back to the processor, which tries another node.
 */
final class ConstrainedPlacement {
  private static final Log LOG = LogFactory.getLog(ConstrainedPlacement.class);

  private final TidalShim shim;
  private final RMContext rmContext;

  ConstrainedPlacement(TidalShim shim, RMContext rmContext) {
    this.shim = shim;
    this.rmContext = rmContext;
  }

  /** Starts the one container {@code request} places on {@code node}; false when it cannot. */
  boolean attempt(
      SchedulerApplicationAttempt attempt, SchedulingRequest request, SchedulerNode node) {
    if (attempt == null || node == null) {
      return false;
    }
    ApplicationAttemptId attemptId = attempt.getApplicationAttemptId();
    // The processor hands over one allocation at a time.
    if (request.getResourceSizing().getNumAllocations() != 1) {
      LOG.warn(
          "Refusing a placement of "
              + request.getResourceSizing().getNumAllocations()
              + " containers at once for "
              + attemptId);
      return false;
    }
    if (request.getExecutionType() != null
        && request.getExecutionType().getExecutionType() != ExecutionType.GUARANTEED) {
      LOG.warn("Refusing an opportunistic placement for " + attemptId + ": Tidal starts none");
      return false;
    }
    try {
      if (!PlacementConstraintsUtil.canSatisfyConstraints(
          attemptId.getApplicationId(),
          request,
          node,
          rmContext.getPlacementConstraintManager(),
          rmContext.getAllocationTagsManager(),
          Optional.empty())) {
        LOG.info(
            "Placement of a container of "
                + attemptId
                + " on "
                + node.getNodeName()
                + " no longer meets its constraints");
        return false;
      }
    } catch (InvalidAllocationTagsQueryException e) {
      LOG.warn("Refusing a placement for " + attemptId + ": " + e.getMessage());
      return false;
    }
    Resource resource = request.getResourceSizing().getResources();
    return shim.startPlaced(
        attemptId,
        node.getNodeID(),
        request.getPriority(),
        resource,
        (app, on) -> {
          Container container =
              Container.newInstance(
                  ContainerId.newContainerId(attemptId, app.getNewContainerId()),
                  on.getNodeID(),
                  on.getRMNode().getHttpAddress(),
                  resource,
                  request.getPriority(),
                  null,
                  ExecutionType.GUARANTEED);
          container.setAllocationRequestId(request.getAllocationRequestId());
          container.setAllocationTags(request.getAllocationTags());
          return ((TidalAttempt) app).startPlaced(on, container, request.getAllocationTags());
        });
  }
}
