package org.tidal.yarn;

import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.nodelabels.RMNodeLabelsManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.tidal.yarn.queue.TidalQueue;

/**
 * Hadoop 3's bookkeeping calls. Hadoop 3 keys an attempt's asks by scheduler request key (priority
 * and allocation request id); the core knows an ask by its priority, so a priority resolves to the
 * first key of that priority (in Hadoop's order: lowest allocation request id first) that still has
 * an ask outstanding at the location. Attempts are {@link TidalAttempt}s, which book a started
 * container as FifoScheduler's do.
 */
final class Hadoop3Bookkeeping implements LineBookkeeping {
  private final TidalScheduler scheduler;

  Hadoop3Bookkeeping(TidalScheduler scheduler) {
    this.scheduler = scheduler;
  }

  @Override
  public SchedulerApplication<FiCaSchedulerApp> newApplication(TidalQueue queue, String user) {
    return new SchedulerApplication<FiCaSchedulerApp>(queue, user, false);
  }

  @Override
  public FiCaSchedulerApp newAttempt(
      ApplicationAttemptId attemptId, String user, TidalQueue queue, RMContext rmContext) {
    return new TidalAttempt(attemptId, user, queue, rmContext);
  }

  @Override
  public void applicationSubmitted(TidalQueue queue, String user) {
    queue.getMetrics().submitApp(user, false);
  }

  @Override
  public void attemptSubmitted(TidalQueue queue, String user) {
    queue.getMetrics().submitAppAttempt(user, false);
  }

  @Override
  public void takeSubmittedPriority(
      SchedulerApplication<FiCaSchedulerApp> application, RMApp rmApp) {
    application.setPriority(rmApp.getApplicationPriority());
  }

  @Override
  public int priority(SchedulerApplication<FiCaSchedulerApp> application) {
    Priority priority = application.getPriority();
    return priority == null ? 0 : priority.getPriority();
  }

  @Override
  public long devices(Resource resource, String type) {
    Integer index = ResourceUtils.getResourceTypeIndex().get(type);
    return index == null ? 0 : resource.getResourceInformation(index).getValue();
  }

  @Override
  public Resource resource(long memoryMb, long vcores, long gpus, long fpgas) {
    Resource resource = Resource.newInstance(memoryMb, (int) vcores);
    setDevices(resource, GPU, gpus);
    setDevices(resource, FPGA, fpgas);
    return resource;
  }

  private static void setDevices(Resource resource, String type, long amount) {
    if (amount == 0) {
      return;
    }
    Integer index = ResourceUtils.getResourceTypeIndex().get(type);
    if (index == null) {
      // The core hands out devices only that nodes and asks had, so the type was declared.
      throw new IllegalStateException(amount + " " + type + " for a cluster without that type");
    }
    resource.setResourceValue(index, amount);
  }

  /**
   * Asks each key of the priority once, as {@link #key} would resolve it: the pending ask carries
   * both the count and the capability, and every look takes the attempt's and its asks' locks.
   */
  @Override
  public Resource outstanding(FiCaSchedulerApp app, Priority priority, String resourceName) {
    for (SchedulerRequestKey key : app.getSchedulerKeys()) {
      if (key.getPriority().equals(priority)) {
        PendingAsk ask = app.getPendingAsk(key, resourceName);
        if (ask.getCount() > 0) {
          return ask.getPerAllocationResource();
        }
      }
    }
    return null;
  }

  /** The first key of {@code priority} with an ask outstanding at {@code resourceName}. */
  private static SchedulerRequestKey key(
      FiCaSchedulerApp app, Priority priority, String resourceName) {
    for (SchedulerRequestKey key : app.getSchedulerKeys()) {
      if (key.getPriority().equals(priority)
          && app.getOutstandingAsksCount(key, resourceName) > 0) {
        return key;
      }
    }
    return null;
  }

  @Override
  public void normalize(List<ResourceRequest> asks) {
    scheduler.normalize(asks);
  }

  @Override
  public RMContainer allocate(
      FiCaSchedulerApp app,
      NodeType type,
      FiCaSchedulerNode node,
      Priority priority,
      String resourceName,
      Container container) {
    SchedulerRequestKey key = key(app, priority, resourceName);
    if (key == null) {
      return null;
    }
    container.setAllocationRequestId(key.getAllocationRequestId());
    return ((TidalAttempt) app).start(type, node, key, container);
  }

  @Override
  public Allocation pullAllocation(FiCaSchedulerApp app, Resource headroom) {
    List<Container> containers = app.pullNewlyAllocatedContainers();
    return new Allocation(containers, headroom, null, null, null, app.pullUpdatedNMTokens());
  }

  @Override
  public boolean containerCompleted(
      FiCaSchedulerApp app,
      RMContainer container,
      ContainerStatus status,
      RMContainerEventType event) {
    return app.containerCompleted(container, status, event, RMNodeLabelsManager.NO_LABEL);
  }

  @Override
  public void releaseOnNode(FiCaSchedulerNode node, Container container) {
    node.releaseContainer(container.getId(), false);
  }

  @Override
  public List<RMContainer> runningOn(FiCaSchedulerNode node) {
    return node.getCopiedListOfRunningContainers();
  }

  @Override
  public RMContainer reserve(
      FiCaSchedulerApp app, FiCaSchedulerNode node, Priority priority, Container container) {
    SchedulerRequestKey key = key(app, priority, ResourceRequest.ANY);
    // The attempt records the reservation in the node and the queue's metrics too.
    app.reserve(key, node, null, container, false);
    return node.getReservedContainer();
  }

  @Override
  public Priority reservedPriority(RMContainer reserved) {
    return reserved.getReservedSchedulerKey().getPriority();
  }

  @Override
  public void unreserve(FiCaSchedulerApp app, FiCaSchedulerNode node, RMContainer reserved) {
    // The attempt frees the node and the queue's reserved metrics too.
    app.unreserve(reserved.getReservedSchedulerKey(), node, reserved);
  }
}
