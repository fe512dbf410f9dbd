package org.tidal.yarn;

import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.tidal.yarn.queue.TidalQueue;

/**
 * Hadoop's scheduler bookkeeping where the Hadoop lines differ in shape: 2.7 keys an attempt's asks
 * by {@link Priority}, 3.x by a scheduler request key (priority and allocation request id), and
 * several records gained arguments (node partitions, unmanaged AMs, application priority). Each
 * adapter implements this once; the version-neutral classes reach Hadoop's records through it
 * wherever the lines differ, and directly wherever they agree.
 *
 * <p>The core knows an ask by its priority. Where Hadoop 3 holds several asks of one priority
 * (under different allocation request ids), the adapter resolves a priority to the first of them
 * that is still outstanding at the location; its implementation says so.
 *
 * <p>Callers hold the attempt's monitor for calls on an attempt, as Hadoop's schedulers do.
 */
public interface LineBookkeeping {

  // Applications and attempts

  /** Hadoop's record of an application accepted into {@code queue}. */
  SchedulerApplication<FiCaSchedulerApp> newApplication(TidalQueue queue, String user);

  /** A new attempt of an application in {@code queue}, with Hadoop's usage and ask records. */
  FiCaSchedulerApp newAttempt(
      ApplicationAttemptId attemptId, String user, TidalQueue queue, RMContext rmContext);

  /** Counts an accepted application in its queue's metrics. */
  void applicationSubmitted(TidalQueue queue, String user);

  /** Counts a new attempt in its queue's metrics. */
  void attemptSubmitted(TidalQueue queue, String user);

  /**
   * Records in {@code application} the priority the RM accepted for it at submission (Hadoop 3);
   * Hadoop 2.7 has no application priority.
   */
  void takeSubmittedPriority(SchedulerApplication<FiCaSchedulerApp> application, RMApp rmApp);

  /** The application's priority in its queue: 0 where the line has none. */
  int priority(SchedulerApplication<FiCaSchedulerApp> application);

  // Resources

  /** Hadoop 3's resource type for GPUs, a dimension of the core's resource vector. */
  String GPU = "yarn.io/gpu";

  /** Hadoop 3's resource type for FPGAs, a dimension of the core's resource vector. */
  String FPGA = "yarn.io/fpga";

  /**
   * A resource's amount of {@link #GPU} or {@link #FPGA}: 0 where the line or the cluster has no
   * such resource type.
   */
  long devices(Resource resource, String type);

  /**
   * A resource of these amounts. The devices are non-zero only where the cluster declares their
   * type (the core hands out only what nodes and asks had).
   */
  Resource resource(long memoryMb, long vcores, long gpus, long fpgas);

  // Asks

  /**
   * The capability of the attempt's outstanding ask at {@code priority} for {@code resourceName} (a
   * node, a rack or {@link ResourceRequest#ANY}), or null when nothing is outstanding there.
   */
  Resource outstanding(FiCaSchedulerApp app, Priority priority, String resourceName);

  /**
   * Brings asks within the scheduler's minimum, maximum and increment, as Hadoop's allocate does.
   */
  void normalize(List<ResourceRequest> asks);

  // Containers

  /**
   * Starts {@code container} for the attempt's ask at {@code priority} on {@code node} with the
   * given locality, decrementing the asks Hadoop decrements; null when Hadoop refuses.
   */
  RMContainer allocate(
      FiCaSchedulerApp app,
      NodeType type,
      FiCaSchedulerNode node,
      Priority priority,
      String resourceName,
      Container container);

  /** The containers started for the attempt since its AM last asked, with their tokens. */
  Allocation pullAllocation(FiCaSchedulerApp app, Resource headroom);

  /** Completes a container in its attempt's records; false when it had already completed. */
  boolean containerCompleted(
      FiCaSchedulerApp app,
      RMContainer container,
      ContainerStatus status,
      RMContainerEventType event);

  /** Frees a completed container's place on its node. */
  void releaseOnNode(FiCaSchedulerNode node, Container container);

  /** A copy of the containers running on {@code node}. */
  List<RMContainer> runningOn(FiCaSchedulerNode node);

  // Reservations

  /**
   * Reserves {@code node} for the attempt's ask at {@code priority} under {@code container}, in the
   * attempt's, the node's and the queue's records; returns the reserved container.
   */
  RMContainer reserve(
      FiCaSchedulerApp app, FiCaSchedulerNode node, Priority priority, Container container);

  /** The priority of the ask a reserved container holds its node for. */
  Priority reservedPriority(RMContainer reserved);

  /** Ends a reservation in the attempt's, the node's and the queue's records. */
  void unreserve(FiCaSchedulerApp app, FiCaSchedulerNode node, RMContainer reserved);
}
