package org.tidal.yarn;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmissionData;
import org.apache.hadoop.yarn.server.resourcemanager.MockRMAppSubmitter;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.YarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler;

/**
 * The test harness calls whose shape differs between Hadoop lines, for Hadoop 3; the shared suite
 * (java/common/src/test) reaches MockRM and scheduler records through it where the lines differ.
 */
public final class RmLine {
  /** Hadoop 3's RM shuts the JVM's metrics system down when it stops, every RM's sources too. */
  public static final boolean RM_STOP_SHUTS_DOWN_METRICS = true;

  /**
   * Whether the RM's {@code /ws/v1/cluster/scheduler} is Tidal's own without its web filter
   * configured: the Hadoop 3 adapter adds the filter, as Hadoop 3 knows no plugin scheduler's.
   */
  public static final boolean TIDAL_SERVES_SCHEDULER_REST = true;

  /** How {@code yarn queue -status} prints a percentage. */
  public static final String QUEUE_CLI_PERCENT = "#.00";

  /** The Hadoop line, as the benchmarks name their results. */
  public static final String LINE = "hadoop3";

  /** This line's bookkeeping calls, for harnesses that book containers as the shim does. */
  public static LineBookkeeping bookkeeping(TidalScheduler scheduler) {
    return new Hadoop3Bookkeeping(scheduler);
  }

  /**
   * The asks a just-started container decremented, most specific first (node, rack, ANY); empty
   * once Hadoop dropped them.
   */
  public static List<ResourceRequest> decremented(RMContainer container) {
    ContainerRequest request = container.getContainerRequest();
    return request == null
        ? Collections.<ResourceRequest>emptyList()
        : request.getResourceRequests();
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
    return MockRMAppSubmitter.submit(
        rm,
        MockRMAppSubmissionData.Builder.createWithMemory(amMemoryMb, rm)
            .withAppName(name)
            .withUser(user)
            .withUnmanagedAM(unmanaged)
            .withQueue(queue)
            .withMaxAppAttempts(maxAttempts)
            .withAppType(appType)
            .withWaitForAppAcceptedState(waitForAccepted)
            .withKeepContainers(keepContainers)
            .build());
  }

  /** A scheduler allocate call with asks, releases and blacklist changes only. */
  public static Allocation allocate(
      YarnScheduler scheduler,
      ApplicationAttemptId attemptId,
      List<ResourceRequest> ask,
      List<ContainerId> release,
      List<String> blacklistAdditions,
      List<String> blacklistRemovals) {
    return scheduler.allocate(
        attemptId,
        ask,
        Collections.<SchedulingRequest>emptyList(),
        release,
        blacklistAdditions,
        blacklistRemovals,
        new ContainerUpdates());
  }

  /**
   * What a scheduler's own threads would do in a heartbeat interval, for harnesses that drive it
   * without them: Hadoop 3's FairScheduler offers a node only to apps whose demand its update
   * thread (every 500 ms) has computed.
   */
  public static void periodicWork(YarnScheduler scheduler) {
    if (scheduler instanceof FairScheduler) {
      ((FairScheduler) scheduler).update();
    }
  }

  /** A node heartbeat's container updates. */
  public static UpdatedContainerInfo containerUpdates(
      List<ContainerStatus> launched, List<ContainerStatus> completed) {
    return new UpdatedContainerInfo(
        launched, completed, Collections.<Map.Entry<ApplicationId, ContainerStatus>>emptyList());
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
        id, 0, state, resource, diagnostics, exitStatus, priority, creationTime);
  }
}
