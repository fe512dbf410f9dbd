package org.tidal.yarn;

import java.util.Collections;
import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.YarnScheduler;

/**
 * The test harness calls whose shape differs between Hadoop lines, for Hadoop 2.7; the shared suite
 * (java/common/src/test) reaches MockRM and scheduler records through it where the lines differ.
 */
public final class RmLine {
  /** Hadoop 2.7's RM leaves the JVM's metrics system running when it stops. */
  public static final boolean RM_STOP_SHUTS_DOWN_METRICS = false;

  /**
   * Whether the RM's {@code /ws/v1/cluster/scheduler} is Tidal's own without its web filter
   * configured: 2.7 answers with FifoScheduler's, whose class Tidal's extends.
   */
  public static final boolean TIDAL_SERVES_SCHEDULER_REST = false;

  /** How {@code yarn queue -status} prints a percentage. */
  public static final String QUEUE_CLI_PERCENT = "#.0";

  /** The Hadoop line, as the benchmarks name their results. */
  public static final String LINE = "hadoop2";

  /** This line's bookkeeping calls, for harnesses that book containers as the shim does. */
  public static LineBookkeeping bookkeeping(TidalScheduler scheduler) {
    return new Hadoop2Bookkeeping(scheduler);
  }

  /**
   * The asks a just-started container decremented, most specific first (node, rack, ANY); empty
   * once Hadoop dropped them.
   */
  public static List<ResourceRequest> decremented(RMContainer container) {
    List<ResourceRequest> requests = container.getResourceRequests();
    return requests == null ? Collections.<ResourceRequest>emptyList() : requests;
  }

  private RmLine() {}

  /** Submits an application as MockRM's submitApp does. */
  public static RMApp submit(
      MockRM rm,
      int amMemoryMb,
      String name,
      String user,
      String queue,
      boolean unmanaged,
      int maxAttempts,
      String appType,
      boolean waitForAccepted,
      boolean keepContainers)
      throws Exception {
    return rm.submitApp(
        amMemoryMb,
        name,
        user,
        null,
        unmanaged,
        queue,
        maxAttempts,
        null,
        appType,
        waitForAccepted,
        keepContainers);
  }

  /** A scheduler allocate call with asks, releases and blacklist changes only. */
  public static Allocation allocate(
      YarnScheduler scheduler,
      ApplicationAttemptId attemptId,
      List<ResourceRequest> ask,
      List<ContainerId> release,
      List<String> blacklistAdditions,
      List<String> blacklistRemovals) {
    return scheduler.allocate(attemptId, ask, release, blacklistAdditions, blacklistRemovals);
  }

  /**
   * What a scheduler's own threads would do in a heartbeat interval, for harnesses that drive it
   * without them: nothing 2.7's schedulers need to place containers.
   */
  public static void periodicWork(YarnScheduler scheduler) {}

  /** A node heartbeat's container updates. */
  public static UpdatedContainerInfo containerUpdates(
      List<ContainerStatus> launched, List<ContainerStatus> completed) {
    return new UpdatedContainerInfo(launched, completed);
  }

  /** A container a node reports when it re-registers. */
  public static NMContainerStatus reportedContainer(
      ContainerId id,
      ContainerState state,
      Resource resource,
      String diagnostics,
      int exitStatus,
      Priority priority,
      long creationTime) {
    return NMContainerStatus.newInstance(
        id, state, resource, diagnostics, exitStatus, priority, creationTime);
  }
}
