package org.tidal.yarn;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.com.google.common.util.concurrent.SettableFuture;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeAttribute;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.RejectionReason;
import org.apache.hadoop.yarn.api.records.ResourceInformation;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.records.UpdateContainerRequest;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.RMStateStore.RMState;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.records.ApplicationStateData;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAttributesUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ReleaseContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.view.TidalQueueReport;

/**
 * Tidal in a Hadoop 3 ResourceManager (built against 3.4, run on 3.4 and 3.5): the scheduler class
 * an operator names in {@code yarn.resourcemanager.scheduler.class}. It translates Hadoop 3's
 * scheduler calls to {@link TidalShim}, the version-neutral body every Hadoop line shares, whose
 * Rust core makes the decisions. Hadoop 3 lets a scheduler name its own web page, so unlike the 2.7
 * adapter this one extends {@link AbstractYarnScheduler} directly.
 */
public class TidalScheduler extends AbstractYarnScheduler<FiCaSchedulerApp, FiCaSchedulerNode> {
  private static final Log LOG = LogFactory.getLog(TidalScheduler.class);

  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private final TidalShim shim = new TidalShim(this);
  private ConstrainedPlacement placement;

  public TidalScheduler() {
    super(TidalScheduler.class.getName());
  }

  /** The RM web app's scheduler page class, which Hadoop 3 needs named for a plugin scheduler. */
  static final String SCHEDULER_PAGE = "yarn.http.rmwebapp.scheduler.page.class";

  private static final String FILTER_INITIALIZERS = "hadoop.http.filter.initializers";

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    // Hadoop 3 renders a plugin scheduler's page only by a class named here, and answers
    // /ws/v1/cluster/scheduler "Unknown scheduler" for it: Tidal names its page and adds its web
    // filter, which serves its views. The RM reads both from the configuration it gives the
    // scheduler, and only after initialising it.
    if (conf.get(SCHEDULER_PAGE) == null) {
      conf.set(SCHEDULER_PAGE, TidalSchedulerPage.class.getName());
    }
    String initializers = conf.getTrimmed(FILTER_INITIALIZERS, "");
    if (!initializers.contains(TidalWebFilterInitializer.class.getName())) {
      conf.set(
          FILTER_INITIALIZERS,
          (initializers.isEmpty() ? "" : initializers + ",")
              + TidalWebFilterInitializer.class.getName());
    }
    // What FifoScheduler sets up before AbstractYarnScheduler's own initialisation.
    applications = new ConcurrentSkipListMap<>();
    initMaximumResourceCapability(getMaximumAllocation());
    super.serviceInit(conf);
    minimumAllocation =
        shim.init(conf, rmContext, applications, EMPTY_ALLOCATION, new Hadoop3Bookkeeping(this));
    placement = new ConstrainedPlacement(shim, rmContext);
    String others = typesBeyondTheCore(ResourceUtils.getResourceTypesArray());
    if (!others.isEmpty()) {
      LOG.warn(
          "Tidal schedules memory, vcores, "
              + LineBookkeeping.GPU
              + " and "
              + LineBookkeeping.FPGA
              + "; asks for the other resource types configured here ("
              + others
              + ") are refused to their ApplicationMasters");
    }
  }

  /** The names of the resource types the core has no dimension for, comma-separated. */
  private static String typesBeyondTheCore(ResourceInformation[] types) {
    StringBuilder names = new StringBuilder();
    for (int i = 2; i < types.length; i++) {
      if (!inCore(types[i].getName())) {
        names.append(names.length() == 0 ? "" : ", ").append(types[i].getName());
      }
    }
    return names.toString();
  }

  private static boolean inCore(String type) {
    return type.equals(LineBookkeeping.GPU) || type.equals(LineBookkeeping.FPGA);
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
  public void setRMContext(RMContext rmContext) {
    this.rmContext = rmContext;
  }

  @Override
  public synchronized void reinitialize(Configuration conf, RMContext rmContext)
      throws IOException {
    super.reinitialize(conf, rmContext);
    // Hadoop 3's admin service passes capacity-scheduler.xml alone; the queue file is named in
    // the RM's configuration, as FairScheduler's is.
    shim.reinitialize(conf.get(TidalConfig.ALLOCATION_FILE) == null ? getConfig() : conf);
  }

  @Override
  public void recover(RMState state) {
    // Applications and containers come back through the RM's own recovery events.
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

  /** The events only Hadoop 3 sends; true when handled. */
  boolean handleLineEvent(SchedulerEvent event) {
    switch (event.getType()) {
      case RELEASE_CONTAINER:
        {
          RMContainer container = ((ReleaseContainerEvent) event).getContainer();
          completedContainer(
              container,
              SchedulerUtils.createAbnormalContainerStatus(
                  container.getContainerId(), SchedulerUtils.RELEASED_CONTAINER),
              RMContainerEventType.RELEASED);
          return true;
        }
      case NODE_ATTRIBUTES_UPDATE:
        {
          // The core does not weigh attributes; the placement processor reads them from the
          // nodes to meet node-attribute constraints.
          Map<String, Set<NodeAttribute>> updated =
              ((NodeAttributesUpdateSchedulerEvent) event).getUpdatedNodeToAttributes();
          for (Map.Entry<String, Set<NodeAttribute>> host : updated.entrySet()) {
            for (FiCaSchedulerNode node : nodeTracker.getNodesByResourceName(host.getKey())) {
              node.updateNodeAttributes(host.getValue());
            }
          }
          return true;
        }
      default:
        return false;
    }
  }

  @Override
  public synchronized void updateNodeResource(RMNode rmNode, ResourceOption resourceOption) {
    if (shim.updateNodeResource(rmNode, resourceOption)) {
      super.updateNodeResource(rmNode, resourceOption);
      shim.nodeResourceUpdated();
    }
  }

  synchronized void addApplication(
      ApplicationId applicationId, String queue, String user, boolean isAppRecovering) {
    shim.addApplication(applicationId, queue, user, isAppRecovering);
  }

  synchronized void addApplicationAttempt(
      ApplicationAttemptId attemptId,
      boolean transferStateFromPreviousAttempt,
      boolean isAttemptRecovering) {
    shim.addApplicationAttempt(attemptId, transferStateFromPreviousAttempt, isAttemptRecovering);
  }

  @Override
  public Allocation allocate(
      ApplicationAttemptId attemptId,
      List<ResourceRequest> ask,
      List<SchedulingRequest> schedulingRequests,
      List<ContainerId> release,
      List<String> blacklistAdditions,
      List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    refuseOtherResourceTypes(attemptId, ask);
    Allocation allocation =
        shim.allocateHandler()
            .allocate(attemptId, ask, release, blacklistAdditions, blacklistRemovals);
    refuseUpdates(attemptId, updateRequests);
    if (schedulingRequests == null || schedulingRequests.isEmpty()) {
      return allocation;
    }
    // With yarn.resourcemanager.placement-constraints.handler=scheduler Hadoop hands placement
    // constraints to the scheduler; Tidal's core does not place by them, so each is rejected back
    // to the AM, which sees it in its allocate response.
    LOG.warn(
        "Rejecting "
            + schedulingRequests.size()
            + " scheduling request(s) of "
            + attemptId
            + ": Tidal does not place containers by placement constraints as the scheduler;"
            + " set yarn.resourcemanager.placement-constraints.handler to placement-processor");
    List<RejectedSchedulingRequest> rejected = new ArrayList<>(schedulingRequests.size());
    for (SchedulingRequest request : schedulingRequests) {
      rejected.add(
          RejectedSchedulingRequest.newInstance(
              RejectionReason.COULD_NOT_SCHEDULE_ON_NODE, request));
    }
    return new Allocation(
        allocation.getContainers(),
        allocation.getResourceLimit(),
        null,
        null,
        null,
        allocation.getNMTokens(),
        null,
        null,
        null,
        null,
        null,
        rejected);
  }

  /**
   * Tidal's core knows memory, vcores, GPUs and FPGAs; an ask for any other resource type fails the
   * AM's allocate call with a message naming it, rather than starting a container without it.
   */
  private static void refuseOtherResourceTypes(
      ApplicationAttemptId attemptId, List<ResourceRequest> asks) {
    for (ResourceRequest ask : asks) {
      ResourceInformation[] resources = ask.getCapability().getResources();
      for (int i = 2; i < resources.length; i++) {
        if (resources[i].getValue() > 0 && !inCore(resources[i].getName())) {
          throw new YarnRuntimeException(
              "Tidal schedules memory, vcores, GPUs and FPGAs only: "
                  + attemptId
                  + " asks for "
                  + resources[i].getValue()
                  + " "
                  + resources[i].getName()
                  + " at priority "
                  + ask.getPriority());
        }
      }
    }
  }

  /**
   * Tidal's core does not resize or retype a running container: requests to increase, decrease,
   * promote or demote one are refused, and the RM log names each.
   */
  private static void refuseUpdates(ApplicationAttemptId attemptId, ContainerUpdates updates) {
    if (updates == null) {
      return;
    }
    refuse(attemptId, "increase", updates.getIncreaseRequests());
    refuse(attemptId, "decrease", updates.getDecreaseRequests());
    refuse(attemptId, "promotion", updates.getPromotionRequests());
    refuse(attemptId, "demotion", updates.getDemotionRequests());
  }

  private static void refuse(
      ApplicationAttemptId attemptId, String kind, List<UpdateContainerRequest> requests) {
    for (UpdateContainerRequest request : requests) {
      LOG.warn(
          "Refusing the "
              + kind
              + " of container "
              + request.getContainerId()
              + " of "
              + attemptId
              + ": Tidal does not change running containers");
    }
  }

  /** See {@link ConstrainedPlacement}. */
  @Override
  public boolean attemptAllocationOnNode(
      SchedulerApplicationAttempt appAttempt,
      SchedulingRequest schedulingRequest,
      SchedulerNode schedulerNode) {
    return placement.attempt(appAttempt, schedulingRequest, schedulerNode);
  }

  // ---------------------------------------------------------------------------------------
  // Containers

  /**
   * Hadoop 3 puts back the asks of a container killed before its AM pulled it as it completes the
   * container; the core then gets them as fresh asks.
   */
  @Override
  public void completedContainer(
      RMContainer rmContainer, ContainerStatus containerStatus, RMContainerEventType event) {
    ContainerRequest request = rmContainer == null ? null : rmContainer.getContainerRequest();
    List<ResourceRequest> restored = request == null ? null : request.getResourceRequests();
    super.completedContainer(rmContainer, containerStatus, event);
    if (restored != null) {
      shim.allocateHandler().restoreAsks(rmContainer, restored);
    }
  }

  @Override
  protected synchronized void completedContainerInternal(
      RMContainer rmContainer, ContainerStatus containerStatus, RMContainerEventType event) {
    shim.completedContainer(rmContainer, containerStatus, event);
  }

  // ---------------------------------------------------------------------------------------
  // Application priority

  /**
   * As CapacityScheduler: an application without a priority gets 0 (Tidal's queues set no default
   * priority of their own), and one above the cluster's maximum ({@code
   * yarn.cluster.max-application-priority}, 0 unless set) gets the maximum. A queue's apps are then
   * tried highest priority first.
   */
  @Override
  public Priority checkAndGetApplicationPriority(
      Priority priority, UserGroupInformation user, String queueName, ApplicationId applicationId)
      throws YarnException {
    Priority max = getMaxClusterLevelAppPriority();
    if (priority == null) {
      return Priority.newInstance(0);
    }
    if (priority.getPriority() > max.getPriority()) {
      LOG.info(
          "Application "
              + applicationId
              + " asked for priority "
              + priority.getPriority()
              + ", above the cluster's maximum: it runs at "
              + max.getPriority());
      return max;
    }
    return priority;
  }

  /**
   * Changes a running application's priority, as CapacityScheduler does: the new priority (capped
   * as at submission) is written to the RM's state store, which completes {@code future}, so that
   * it survives a restart, and the core orders the queue by it from the next heartbeat.
   */
  @Override
  public Priority updateApplicationPriority(
      Priority newPriority,
      ApplicationId applicationId,
      SettableFuture<Object> future,
      UserGroupInformation user)
      throws YarnException {
    SchedulerApplication<FiCaSchedulerApp> application = applications.get(applicationId);
    RMApp rmApp = rmContext.getRMApps().get(applicationId);
    if (application == null || rmApp == null) {
      throw new YarnException(
          "Cannot change the priority of " + applicationId + ": the scheduler does not hold it");
    }
    Priority priority =
        checkAndGetApplicationPriority(newPriority, user, rmApp.getQueue(), applicationId);
    if (priority.equals(application.getPriority())) {
      future.set(null);
      return priority;
    }
    rmApp.getApplicationSubmissionContext().setPriority(priority);
    ApplicationStateData state =
        ApplicationStateData.newInstance(
            rmApp.getSubmitTime(),
            rmApp.getStartTime(),
            rmApp.getApplicationSubmissionContext(),
            rmApp.getUser(),
            rmApp.getRealUser(),
            rmApp.getCallerContext());
    state.setApplicationTimeouts(rmApp.getApplicationTimeouts());
    state.setLaunchTime(rmApp.getLaunchTime());
    rmContext.getStateStore().updateApplicationStateSynchronously(state, false, future);
    application.setPriority(priority);
    FiCaSchedulerApp attempt = application.getCurrentAppAttempt();
    if (attempt != null) {
      attempt.setPriority(priority);
    }
    shim.applicationPriorityChanged(applicationId);
    LOG.info("Priority of " + applicationId + " is now " + priority.getPriority());
    return priority;
  }

  // ---------------------------------------------------------------------------------------
  // Application lifetime

  /**
   * As CapacityScheduler, by the queue's {@code <maxApplicationLifetime>} and {@code
   * <defaultApplicationLifetime>} (seconds): an app asking for no lifetime gets the default, one
   * asking for more than the maximum gets the maximum; the RM then kills it when the time is up.
   * The RM asks with the queue the app was submitted to, before placement rules run.
   */
  @Override
  public long checkAndGetApplicationLifetime(String queueName, long lifetime) {
    long[] queue = shim.appLifetimes(queueName);
    long max = queue[0];
    long byDefault = queue[1];
    if (lifetime <= 0) {
      return byDefault > 0 ? byDefault : lifetime;
    }
    return max > 0 && lifetime > max ? max : lifetime;
  }

  /**
   * Hadoop 3.5's form of {@link #checkAndGetApplicationLifetime(String, long)}, which it calls
   * instead; this jar is built against 3.4, which lacks it, so it overrides only on 3.5.
   */
  public long checkAndGetApplicationLifetime(String queueName, long lifetime, RMAppImpl app) {
    return checkAndGetApplicationLifetime(queueName, lifetime);
  }

  @Override
  public long getMaximumApplicationLifetime(String queueName) {
    return shim.appLifetimes(queueName)[0];
  }

  @Override
  public void killContainer(RMContainer container) {
    LOG.info("Killing running container " + container.getContainerId());
    completedContainer(
        container,
        SchedulerUtils.createKilledContainerStatus(
            container.getContainerId(), "Killed by the ResourceManager"),
        RMContainerEventType.KILL);
  }

  // Hadoop keeps these scheduler operations protected; the version-neutral classes reach them
  // here.

  void containerLaunched(ContainerId containerId, FiCaSchedulerNode node) {
    containerLaunchedOnNode(containerId, node);
  }

  /** Adds a node to Hadoop's node tracker, which keeps the cluster's capacity and maximum. */
  void trackNode(FiCaSchedulerNode node) {
    nodeTracker.addNode(node);
  }

  /** Removes a node from Hadoop's node tracker. */
  void untrackNode(FiCaSchedulerNode node) {
    nodeTracker.removeNode(node.getNodeID());
  }

  /** The node's record, or null for a node the scheduler does not hold. */
  FiCaSchedulerNode node(NodeId nodeId) {
    return nodeTracker.getNode(nodeId);
  }

  Collection<FiCaSchedulerNode> allNodes() {
    return nodeTracker.getAllNodes();
  }

  void releaseUnknownContainer(ContainerId containerId, FiCaSchedulerApp attempt) {
    releaseContainers(Collections.singletonList(containerId), attempt);
  }

  void normalize(List<ResourceRequest> asks) {
    normalizeResourceRequests(asks);
  }

  // ---------------------------------------------------------------------------------------
  // Queues, REST and metrics

  /** Where the REST endpoint listens, or null when it is not running. */
  public InetSocketAddress getRestAddress() {
    return shim.getRestAddress();
  }

  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive)
      throws IOException {
    return shim.getQueueInfo(queueName, includeChildQueues, recursive);
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
  public int getNumClusterNodes() {
    return nodeTracker.nodeCount();
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

  /** See {@link TidalShim#armHeartbeatPanic}. */
  public void armHeartbeatPanic() {
    shim.armHeartbeatPanic();
  }

  /** How many times a panic made the shim rebuild its core. */
  public int coreRebuilds() {
    return shim.coreRebuilds();
  }
}
