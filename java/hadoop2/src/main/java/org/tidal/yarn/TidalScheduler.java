package org.tidal.yarn;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerRescheduledEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.tidal.yarn.view.TidalQueueReport;

/**
 * Tidal in a Hadoop 2.7 ResourceManager: the scheduler class an operator names in {@code
 * yarn.resourcemanager.scheduler.class}. It translates 2.7's scheduler calls to {@link TidalShim},
 * the version-neutral body every Hadoop line shares, whose Rust core makes the decisions.
 *
 * <p>It extends {@link FifoScheduler} (and through it {@code AbstractYarnScheduler}) only because
 * the 2.7 web UI renders every scheduler that is neither Capacity nor Fair with a page that casts
 * it to {@code FifoScheduler}; every FifoScheduler method that carries FIFO state or policy is
 * overridden here.
 */
public class TidalScheduler extends FifoScheduler {
  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private final TidalShim shim = new TidalShim(this);

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    // FifoScheduler.serviceInit validates the memory bounds, creates the application map and the
    // configured maximum allocation that AbstractYarnScheduler maintains. It also registers the
    // FIFO "default" queue metrics, which nothing here updates, so they stay at zero.
    super.serviceInit(conf);
    minimumAllocation =
        shim.init(conf, rmContext, applications, EMPTY_ALLOCATION, new Hadoop2Bookkeeping(this));
  }

  @Override
  public void serviceStart() throws Exception {
    shim.start();
    super.serviceStart();
    shim.started();
  }

  @Override
  public void serviceStop() throws Exception {
    shim.stop();
    super.serviceStop();
    shim.stopped();
  }

  @Override
  public synchronized void reinitialize(Configuration conf, RMContext rmContext)
      throws IOException {
    shim.reinitialize(conf);
  }

  /** The version-neutral body, for the parts of Tidal and the tests that reach it. */
  TidalShim shim() {
    return shim;
  }

  // ---------------------------------------------------------------------------------------
  // Events

  @Override
  public void handle(SchedulerEvent event) {
    shim.handle(event);
  }

  /** The events only 2.7 sends; true when handled. */
  boolean handleLineEvent(SchedulerEvent event) {
    if (event.getType() == SchedulerEventType.CONTAINER_RESCHEDULED) {
      RMContainer container = ((ContainerRescheduledEvent) event).getContainer();
      // 2.7 leaves putting back the asks of a container killed before its AM pulled it here.
      recoverResourceRequestForContainer(container);
      shim.allocateHandler().restoreAsks(container, container.getResourceRequests());
      return true;
    }
    return false;
  }

  @Override
  public synchronized void updateNodeResource(RMNode rmNode, ResourceOption resourceOption) {
    if (shim.updateNodeResource(rmNode, resourceOption)) {
      super.updateNodeResource(rmNode, resourceOption);
      shim.nodeResourceUpdated();
    }
  }

  @Override
  public synchronized void addApplication(
      ApplicationId applicationId, String queue, String user, boolean isAppRecovering) {
    shim.addApplication(applicationId, queue, user, isAppRecovering);
  }

  @Override
  public synchronized void addApplicationAttempt(
      ApplicationAttemptId attemptId,
      boolean transferStateFromPreviousAttempt,
      boolean isAttemptRecovering) {
    shim.addApplicationAttempt(attemptId, transferStateFromPreviousAttempt, isAttemptRecovering);
  }

  @Override
  public Allocation allocate(
      ApplicationAttemptId attemptId,
      List<ResourceRequest> ask,
      List<ContainerId> release,
      List<String> blacklistAdditions,
      List<String> blacklistRemovals) {
    return shim.allocateHandler()
        .allocate(attemptId, ask, release, blacklistAdditions, blacklistRemovals);
  }

  @Override
  protected synchronized void completedContainer(
      RMContainer rmContainer, ContainerStatus containerStatus, RMContainerEventType event) {
    shim.completedContainer(rmContainer, containerStatus, event);
  }

  // Hadoop keeps these scheduler operations protected; the version-neutral classes reach them
  // here.

  void containerLaunched(ContainerId containerId, FiCaSchedulerNode node) {
    containerLaunchedOnNode(containerId, node);
  }

  /** Adds a node to Hadoop's node map, the cluster's capacity and the maximum allocation. */
  void trackNode(FiCaSchedulerNode node) {
    nodes.put(node.getNodeID(), node);
    Resources.addTo(clusterResource, node.getTotalResource());
    updateMaximumAllocation(node, true);
  }

  /** Removes a node from what {@link #trackNode} added it to. */
  void untrackNode(FiCaSchedulerNode node) {
    nodes.remove(node.getNodeID());
    updateMaximumAllocation(node, false);
    Resources.subtractFrom(clusterResource, node.getTotalResource());
  }

  /** The node's record, or null for a node the scheduler does not hold. */
  FiCaSchedulerNode node(NodeId nodeId) {
    return nodes.get(nodeId);
  }

  Collection<FiCaSchedulerNode> allNodes() {
    return nodes.values();
  }

  void releaseUnknownContainer(ContainerId containerId, FiCaSchedulerApp attempt) {
    releaseContainers(Collections.singletonList(containerId), attempt);
  }

  // ---------------------------------------------------------------------------------------
  // Queues, REST and metrics

  /** Where the REST endpoint listens, or null when it is not running. */
  public InetSocketAddress getRestAddress() {
    return shim.getRestAddress();
  }

  /**
   * Throws IOException for an unknown queue, as {@code YarnScheduler} declares and its callers
   * expect (request validation skips the queue check on it, {@code yarn queue -status} reports it).
   * FifoScheduler narrowed the throws clause away, hence the unchecked rethrow.
   */
  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive) {
    try {
      return shim.getQueueInfo(queueName, includeChildQueues, recursive);
    } catch (IOException e) {
      throw TidalScheduler.<RuntimeException>rethrowUnchecked(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E rethrowUnchecked(Throwable t) throws E {
    throw (E) t;
  }

  /** See {@link TidalShim#getQueueReport}. */
  public TidalQueueReport getQueueReport(String queueName) throws IOException {
    return shim.getQueueReport(queueName);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    return shim.getQueueUserAclInfo();
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return shim.getRootQueueMetrics();
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return shim.checkAccess(callerUGI, acl, queueName);
  }

  @Override
  public List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    return shim.getAppsInQueue(queueName);
  }

  @Override
  public String moveApplication(ApplicationId appId, String newQueue) throws YarnException {
    throw TidalShim.moveRefused(appId, newQueue);
  }

  @Override
  public ResourceCalculator getResourceCalculator() {
    return calculator;
  }

  @Override
  public EnumSet<SchedulerResourceTypes> getSchedulingResourceTypes() {
    return EnumSet.of(SchedulerResourceTypes.MEMORY, SchedulerResourceTypes.CPU);
  }

  @Override
  public Resource getUsedResource() {
    return shim.getUsedResource();
  }

  /** See {@link TidalShim#armHeartbeatPanic}. */
  public void armHeartbeatPanic() {
    shim.armHeartbeatPanic();
  }

  /** How many times a panic made the shim rebuild its core. */
  public int coreRebuilds() {
    return shim.coreRebuilds();
  }
}
