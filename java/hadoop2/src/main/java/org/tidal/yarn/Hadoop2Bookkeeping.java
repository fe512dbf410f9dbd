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
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt.ContainersAndNMTokensAllocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.tidal.yarn.queue.TidalQueue;

/** Hadoop 2.7's bookkeeping calls: asks keyed by priority, as FifoScheduler makes them. */
final class Hadoop2Bookkeeping implements LineBookkeeping {
  private final TidalScheduler scheduler;

  Hadoop2Bookkeeping(TidalScheduler scheduler) {
    this.scheduler = scheduler;
  }

  @Override
  public SchedulerApplication<FiCaSchedulerApp> newApplication(TidalQueue queue, String user) {
    return new SchedulerApplication<FiCaSchedulerApp>(queue, user);
  }

  @Override
  public FiCaSchedulerApp newAttempt(
      ApplicationAttemptId attemptId, String user, TidalQueue queue, RMContext rmContext) {
    return new FiCaSchedulerApp(attemptId, user, queue, queue.users(), rmContext);
  }

  @Override
  public void applicationSubmitted(TidalQueue queue, String user) {
    queue.getMetrics().submitApp(user);
  }

  @Override
  public void attemptSubmitted(TidalQueue queue, String user) {
    queue.getMetrics().submitAppAttempt(user);
  }

  /** Hadoop 2.7 has no application priority. */
  @Override
  public void takeSubmittedPriority(
      SchedulerApplication<FiCaSchedulerApp> application, RMApp rmApp) {}

  @Override
  public int priority(SchedulerApplication<FiCaSchedulerApp> application) {
    return 0;
  }

  /** Hadoop 2 has no resource types: no devices. */
  @Override
  public long devices(Resource resource, String type) {
    return 0;
  }

  /** Devices are always 0 here: Hadoop 2's nodes and asks have none for the core to hand out. */
  @Override
  public Resource resource(long memoryMb, long vcores, long gpus, long fpgas) {
    return Resource.newInstance((int) memoryMb, (int) vcores);
  }

  @Override
  public Resource outstanding(FiCaSchedulerApp app, Priority priority, String resourceName) {
    ResourceRequest request = app.getResourceRequest(priority, resourceName);
    return request == null || request.getNumContainers() <= 0 ? null : request.getCapability();
  }

  @Override
  public void normalize(List<ResourceRequest> asks) {
    SchedulerUtils.normalizeRequests(
        asks,
        scheduler.getResourceCalculator(),
        scheduler.getClusterResource(),
        scheduler.getMinimumResourceCapability(),
        scheduler.getMaximumResourceCapability());
  }

  @Override
  public RMContainer allocate(
      FiCaSchedulerApp app,
      NodeType type,
      FiCaSchedulerNode node,
      Priority priority,
      String resourceName,
      Container container) {
    ResourceRequest request = app.getResourceRequest(priority, resourceName);
    return app.allocate(type, node, priority, request, container);
  }

  @Override
  public Allocation pullAllocation(FiCaSchedulerApp app, Resource headroom) {
    ContainersAndNMTokensAllocation allocation = app.pullNewlyAllocatedContainersAndNMTokens();
    return new Allocation(
        allocation.getContainerList(), headroom, null, null, null, allocation.getNMTokenList());
  }

  @Override
  public boolean containerCompleted(
      FiCaSchedulerApp app,
      RMContainer container,
      ContainerStatus status,
      RMContainerEventType event) {
    return app.containerCompleted(container, status, event);
  }

  @Override
  public void releaseOnNode(FiCaSchedulerNode node, Container container) {
    node.releaseContainer(container);
  }

  @Override
  public List<RMContainer> runningOn(FiCaSchedulerNode node) {
    return node.getRunningContainers();
  }

  @Override
  public RMContainer reserve(
      FiCaSchedulerApp app, FiCaSchedulerNode node, Priority priority, Container container) {
    RMContainer reserved = app.reserve(node, priority, null, container);
    node.reserveResource(app, priority, reserved);
    app.getQueue().getMetrics().reserveResource(app.getUser(), container.getResource());
    return reserved;
  }

  @Override
  public Priority reservedPriority(RMContainer reserved) {
    return reserved.getReservedPriority();
  }

  @Override
  public void unreserve(FiCaSchedulerApp app, FiCaSchedulerNode node, RMContainer reserved) {
    app.unreserve(node, reserved.getReservedPriority());
    app.getQueue().getMetrics().unreserveResource(app.getUser(), reserved.getReservedResource());
    node.unreserveResource(app);
  }
}
