package org.tidal.yarn;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol.HAServiceState;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerRescheduledEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;

/**
 * A Hadoop 2.7 ResourceManager scheduler whose decisions are made by the Rust core behind {@link
 * TidalNative}. This class only routes: it takes YARN's scheduler events and calls, holds the
 * scheduler's monitor where Hadoop expects it, and hands each to the part that translates it. None
 * of them holds scheduling policy.
 *
 * <ul>
 *   <li>{@link ClusterNodes}: nodes and their heartbeats, whose decisions {@link
 *       DecisionMaterializer} turns into containers;
 *   <li>{@link AppAttemptRegistry}: applications and attempts, and the core's key of each;
 *   <li>{@link AllocateHandler}: the ApplicationMasters' allocate calls;
 *   <li>{@link ContainerCompletion}: containers that end, whatever ended them;
 *   <li>{@link AllocationFileLoader} and {@link QueueManager}: the queue file and the queues;
 *   <li>{@link RestEndpoint}: the REST endpoint; {@link UsageMetrics}: Hadoop's usage metrics;
 *   <li>{@link CoreInstance}: the native instance, its clock and its log pump.
 * </ul>
 *
 * <p>It extends {@link FifoScheduler} (and through it {@code AbstractYarnScheduler}) only because
 * the 2.7 web UI renders every scheduler that is neither Capacity nor Fair with a page that casts
 * it to {@code FifoScheduler}; every FifoScheduler method that carries FIFO state or policy is
 * overridden here.
 *
 * <p>Locking follows FifoScheduler: node events and container completion hold the scheduler's
 * monitor, {@link #allocate} (RPC threads) holds only the application's monitor while it updates
 * asks, and the native core locks internally without calling back into Java.
 *
 * <p>Restarts and faults: with work-preserving recovery, containers that nodes kept running are
 * recovered by Hadoop and adopted by the core; Tidal's own state is restored from {@link
 * DurableState} before the RM recovers its applications. A panic in the core is contained by {@link
 * PanicRecovery}, which rebuilds the core from the RM's view and stops no container.
 */
public class TidalScheduler extends FifoScheduler {
  /** Queue allocation file: absolute path, or a name resolved on the classpath. */
  public static final String ALLOCATION_FILE = "tidal.allocation.file";

  public static final String DEFAULT_ALLOCATION_FILE = "tidal-queues.xml";

  /**
   * Upper bound on containers started per node heartbeat. One by default, as FairScheduler ({@code
   * yarn.scheduler.fair.assignmultiple} false) and 2.7's CapacityScheduler start one per node
   * heartbeat; raise it as FairScheduler's {@code max.assign} for faster ramp-up.
   */
  public static final String MAX_ASSIGN_PER_HEARTBEAT = "tidal.max-assign-per-heartbeat";

  public static final int DEFAULT_MAX_ASSIGN_PER_HEARTBEAT = 1;

  /**
   * Whether a node is reserved for an ask larger than its free space, as Hadoop's schedulers do, so
   * that a large request does not wait forever behind smaller ones.
   */
  public static final String RESERVE_CONTAINERS = "tidal.reservations.enabled";

  public static final boolean DEFAULT_RESERVE_CONTAINERS = true;

  /**
   * The AM share (fraction of a queue's fair share its ApplicationMasters may take) of leaves the
   * queue file gives none, neither {@code <maxAMShare>} nor {@code <queueMaxAMShareDefault>}; -1
   * checks none. FairScheduler's default, 0.5.
   */
  public static final String QUEUE_MAX_AM_SHARE_DEFAULT = "tidal.queue-max-am-share-default";

  public static final float DEFAULT_QUEUE_MAX_AM_SHARE_DEFAULT = 0.5f;
  public static final String ROOT_QUEUE = "root";

  /**
   * Address of the scheduler's REST endpoint (queue status and registration, AM hints). Port 0
   * binds a free port; {@link #getRestAddress} tells which. Unset, the endpoint binds the host of
   * the RM's web address ({@code yarn.resourcemanager.webapp.address}) on {@link
   * #DEFAULT_REST_PORT}: see {@link #restAddress}.
   */
  public static final String REST_ADDRESS = "tidal.rest.address";

  public static final int DEFAULT_REST_PORT = 8089;

  /**
   * How long a REST connection may stay idle (nothing read or written: a stalled request, an unread
   * reply, or keep-alive between requests) before the endpoint closes it.
   */
  public static final String REST_IDLE_TIMEOUT_MS = "tidal.rest.idle-timeout-ms";

  public static final int DEFAULT_REST_IDLE_TIMEOUT_MS = 30000;

  /** Most threads serving REST requests at once (the connection selector takes one of them). */
  public static final String REST_MAX_THREADS = "tidal.rest.max-threads";

  public static final int DEFAULT_REST_MAX_THREADS = 64;

  /**
   * Open REST connections beyond which the endpoint is short of resources and closes connections
   * idle for {@value #REST_LOW_RESOURCES_IDLE_TIMEOUT_MS} instead.
   */
  public static final String REST_LOW_RESOURCES_CONNECTIONS =
      "tidal.rest.low-resources.connections";

  public static final int DEFAULT_REST_LOW_RESOURCES_CONNECTIONS = 256;

  public static final String REST_LOW_RESOURCES_IDLE_TIMEOUT_MS =
      "tidal.rest.low-resources.idle-timeout-ms";

  public static final int DEFAULT_REST_LOW_RESOURCES_IDLE_TIMEOUT_MS = 5000;

  /** Whether the REST endpoint runs at all. */
  public static final String REST_ENABLED = "tidal.rest.enabled";

  public static final boolean DEFAULT_REST_ENABLED = true;

  /**
   * Test-only: lets {@link #armHeartbeatPanic} make the core panic. Off by default; the bridge
   * refuses the trigger unless the instance was created with it on.
   */
  public static final String FAULT_INJECTION = "tidal.test.fault-injection";

  private static final Log LOG = LogFactory.getLog(TidalScheduler.class);

  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private final CoreInstance core = new CoreInstance();
  private final AllocationFileLoader allocationFile = new AllocationFileLoader();
  private final UsageMetrics usage = new UsageMetrics();
  private final AllocationIds ids = new AllocationIds();
  private DurableState durable;
  private volatile boolean restored;
  private PanicRecovery panicRecovery;

  /** Null until serviceInit; read by metrics threads that may start before it. */
  private volatile QueueManager queues;

  private AppAttemptRegistry attempts;
  private ContainerCompletion completion;
  private ClusterNodes clusterNodes;
  private LocationTable locations;
  private AllocateHandler allocateHandler;
  private RestEndpoint rest;

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    // FifoScheduler.serviceInit validates the memory bounds, creates the application map and the
    // configured maximum allocation that AbstractYarnScheduler maintains. It also registers the
    // FIFO "default" queue metrics, which nothing here updates, so they stay at zero.
    super.serviceInit(conf);
    minimumAllocation =
        Resources.createResource(
            conf.getInt(
                YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB,
                YarnConfiguration.DEFAULT_RM_SCHEDULER_MINIMUM_ALLOCATION_MB),
            conf.getInt(
                YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES,
                YarnConfiguration.DEFAULT_RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES));
    boolean usePortForNodeName =
        conf.getBoolean(
            YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    NativeLoader.load();
    allocationFile.create(core, conf, minimumAllocation);
    locations = new LocationTable(() -> TidalNative.locationsInUse(core.handle()));
    synchronized (this) {
      durable = new DurableState(core, conf, rmContext);
      queues = new QueueManager(core, conf, durable);
      attempts = new AppAttemptRegistry(core, queues, rmContext, conf, applications, ids);
      NodeReservations reservations = new NodeReservations(this);
      completion = new ContainerCompletion(this, nodes, core, usage, ids, reservations);
      clusterNodes =
          new ClusterNodes(
              this,
              nodes,
              clusterResource,
              core,
              locations,
              usage,
              queues.root().getMetrics(),
              new DecisionMaterializer(core, attempts, usage, ids, reservations),
              completion,
              rmContext,
              usePortForNodeName,
              attempts,
              ids);
      clusterNodes.setMaxAssignPerHeartbeat(allocationFile.maxAssignPerHeartbeat());
      allocateHandler =
          new AllocateHandler(
              this,
              attempts,
              completion,
              core,
              locations,
              calculator,
              EMPTY_ALLOCATION,
              ids,
              usage);
      panicRecovery =
          new PanicRecovery(
              core,
              allocationFile,
              durable,
              ids,
              clusterNodes,
              attempts,
              allocateHandler,
              queues,
              reservations,
              nodes.values());
      rest = new RestEndpoint(queues, attempts, core, rmContext, conf);
    }
    queues.syncWithCore();
    LOG.info("Tidal scheduler created from " + AllocationFileLoader.fileName(conf));
  }

  @Override
  public void serviceStart() throws Exception {
    restoreOnce();
    core.startLogPump();
    super.serviceStart();
    durable.start();
    rest.start();
    queues.startMetrics();
    RunningSchedulers.add(this);
  }

  /**
   * Restores Tidal's saved state, once, before anything else reaches the core. The RM recovers its
   * applications before it starts the scheduler, handing them over synchronously, so the first of
   * those events restores; the RM's epoch (which fences the store) is known by then.
   */
  private synchronized void restoreOnce() throws IOException {
    if (restored) {
      return;
    }
    restored = true;
    if (durable.restore() != null) {
      queues.syncWithCore();
    }
  }

  @Override
  public void serviceStop() throws Exception {
    // The endpoints and metrics go first so that no request reaches a destroyed native instance;
    // they do not exist when initialisation failed before they were created.
    RunningSchedulers.remove(this);
    if (rest != null) {
      rest.stop();
    }
    if (queues != null) {
      queues.stopMetrics();
    }
    if (durable != null) {
      durable.stop();
    }
    super.serviceStop();
    long detached;
    synchronized (this) {
      detached = core.detach();
    }
    core.destroy(detached);
  }

  /**
   * Reloads the queue allocation file ({@code yarn rmadmin -refreshQueues}). An invalid file leaves
   * the running queues untouched and is reported to the caller as an IOException.
   */
  @Override
  public synchronized void reinitialize(Configuration conf, RMContext rmContext)
      throws IOException {
    allocationFile.reload(core, conf);
    clusterNodes.setMaxAssignPerHeartbeat(allocationFile.maxAssignPerHeartbeat());
    queues.syncWithCore();
    LOG.info("Reloaded queue allocation file " + AllocationFileLoader.fileName(conf));
  }

  // ---------------------------------------------------------------------------------------
  // Events

  @Override
  public void handle(SchedulerEvent event) {
    try {
      if (!restored) {
        restoreOnce();
      }
    } catch (IOException e) {
      // Only the RM's recovery reaches here first, which then fails the start with this reason.
      throw new YarnRuntimeException(e);
    }
    // An exception escaping here makes the RM's event thread exit the JVM; a failing native
    // call is an error of this one event, so it is logged and the RM keeps scheduling. A panic
    // poisons the core: it is rebuilt and the event handled once more.
    try {
      dispatch(event);
    } catch (TidalPanicException e) {
      try {
        synchronized (this) {
          panicRecovery.rebuild(e, event.getType().toString());
        }
        dispatch(event);
      } catch (TidalException again) {
        LOG.error("Tidal core failed again on " + event.getType() + ": " + again.getMessage());
      }
    } catch (TidalException e) {
      LOG.error("Tidal core failed on " + event.getType() + ": " + e.getMessage(), e);
    }
  }

  private void dispatch(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED:
        {
          NodeAddedSchedulerEvent added = (NodeAddedSchedulerEvent) event;
          addNode(added.getAddedRMNode());
          // Hadoop's own recovery first (it kills containers of apps that did not come back),
          // then the core adopts what Hadoop recovered.
          recoverContainersOnNode(added.getContainerReports(), added.getAddedRMNode());
          adoptRecovered(added.getAddedRMNode(), added.getContainerReports());
          break;
        }
      case NODE_REMOVED:
        removeNode(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        break;
      case NODE_UPDATE:
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        break;
      case NODE_RESOURCE_UPDATE:
        {
          NodeResourceUpdateSchedulerEvent update = (NodeResourceUpdateSchedulerEvent) event;
          updateNodeResource(update.getRMNode(), update.getResourceOption());
          break;
        }
      case APP_ADDED:
        {
          AppAddedSchedulerEvent added = (AppAddedSchedulerEvent) event;
          addApplication(
              added.getApplicationId(),
              added.getQueue(),
              added.getUser(),
              added.getIsAppRecovering());
          break;
        }
      case APP_REMOVED:
        {
          AppRemovedSchedulerEvent removed = (AppRemovedSchedulerEvent) event;
          removeApplication(removed.getApplicationID(), removed.getFinalState());
          break;
        }
      case APP_ATTEMPT_ADDED:
        {
          AppAttemptAddedSchedulerEvent added = (AppAttemptAddedSchedulerEvent) event;
          addApplicationAttempt(
              added.getApplicationAttemptId(),
              added.getTransferStateFromPreviousAttempt(),
              added.getIsAttemptRecovering());
          break;
        }
      case APP_ATTEMPT_REMOVED:
        {
          AppAttemptRemovedSchedulerEvent removed = (AppAttemptRemovedSchedulerEvent) event;
          removeApplicationAttempt(
              removed.getApplicationAttemptID(),
              removed.getFinalAttemptState(),
              removed.getKeepContainersAcrossAppAttempts());
          break;
        }
      case CONTAINER_EXPIRED:
        completion.expired(((ContainerExpiredSchedulerEvent) event).getContainerId());
        break;
      case CONTAINER_RESCHEDULED:
        allocateHandler.containerRescheduled(((ContainerRescheduledEvent) event).getContainer());
        break;
      case NODE_LABELS_UPDATE:
        LOG.debug("Ignoring node label update: Tidal does not schedule by node label");
        break;
      default:
        LOG.error("Ignoring unsupported scheduler event " + event.getType());
    }
  }

  // ---------------------------------------------------------------------------------------
  // Nodes

  private synchronized void addNode(RMNode rmNode) {
    clusterNodes.add(rmNode);
  }

  private synchronized void adoptRecovered(RMNode rmNode, List<NMContainerStatus> reports) {
    clusterNodes.adoptRecovered(rmNode, reports);
  }

  private synchronized void removeNode(RMNode rmNode) {
    clusterNodes.remove(rmNode);
  }

  private synchronized void nodeUpdate(RMNode rmNode) {
    clusterNodes.heartbeat(rmNode);
  }

  @Override
  public synchronized void updateNodeResource(RMNode rmNode, ResourceOption resourceOption) {
    if (clusterNodes.updateResource(rmNode, resourceOption)) {
      super.updateNodeResource(rmNode, resourceOption);
      clusterNodes.publishAvailable();
    }
  }

  // ---------------------------------------------------------------------------------------
  // Applications

  @Override
  public synchronized void addApplication(
      ApplicationId applicationId, String queue, String user, boolean isAppRecovering) {
    attempts.addApplication(applicationId, queue, user, isAppRecovering);
  }

  @Override
  public synchronized void addApplicationAttempt(
      ApplicationAttemptId attemptId,
      boolean transferStateFromPreviousAttempt,
      boolean isAttemptRecovering) {
    attempts.addAttempt(attemptId, transferStateFromPreviousAttempt, isAttemptRecovering);
  }

  private synchronized void removeApplication(ApplicationId appId, RMAppState finalState) {
    attempts.removeApplication(appId, finalState);
  }

  private synchronized void removeApplicationAttempt(
      ApplicationAttemptId attemptId, RMAppAttemptState finalState, boolean keepContainers) {
    FiCaSchedulerApp attempt = attempts.current(attemptId);
    if (attempt == null) {
      LOG.warn("Cannot remove unknown application attempt " + attemptId);
      return;
    }
    completion.attemptEnded(attempt, keepContainers);
    attempts.removeAttempt(attempt, finalState);
  }

  @Override
  public Allocation allocate(
      ApplicationAttemptId attemptId,
      List<ResourceRequest> ask,
      List<ContainerId> release,
      List<String> blacklistAdditions,
      List<String> blacklistRemovals) {
    return allocateHandler.allocate(attemptId, ask, release, blacklistAdditions, blacklistRemovals);
  }

  // ---------------------------------------------------------------------------------------
  // Containers

  @Override
  protected synchronized void completedContainer(
      RMContainer rmContainer, ContainerStatus containerStatus, RMContainerEventType event) {
    if (rmContainer == null) {
      LOG.info("Null container completed...");
      return;
    }
    completion.complete(rmContainer, containerStatus, event);
  }

  // Hadoop keeps these scheduler operations protected; the classes this scheduler delegates to
  // reach them here.

  void containerLaunched(ContainerId containerId, FiCaSchedulerNode node) {
    containerLaunchedOnNode(containerId, node);
  }

  void maximumAllocationChanged(FiCaSchedulerNode node, boolean added) {
    updateMaximumAllocation(node, added);
  }

  void releaseUnknownContainer(ContainerId containerId, FiCaSchedulerApp attempt) {
    releaseContainers(Collections.singletonList(containerId), attempt);
  }

  void restoreRequests(RMContainer container) {
    recoverResourceRequestForContainer(container);
  }

  // ---------------------------------------------------------------------------------------
  // Queues, REST and metrics

  /**
   * The REST endpoint's address: {@value #REST_ADDRESS}, or else the host of the RM's web address
   * (the one its web UI and REST API listen on) with {@link #DEFAULT_REST_PORT}, so that the
   * endpoint is reachable wherever the RM's own web services are and nowhere else.
   */
  public static String restAddress(Configuration conf) {
    String configured = conf.getTrimmed(REST_ADDRESS);
    if (configured != null && !configured.isEmpty()) {
      return configured;
    }
    String web = WebAppUtils.getRMWebAppURLWithoutScheme(conf);
    int colon = web.lastIndexOf(':');
    String host = colon < 0 ? web : web.substring(0, colon);
    // ${yarn.resourcemanager.hostname} stays unexpanded when that is unset: the RM's default,
    // the wildcard, is what its web app binds then.
    if (host.contains("${")) {
      host = "0.0.0.0";
    }
    return host + ":" + DEFAULT_REST_PORT;
  }

  /** Where the REST endpoint listens, or null when it is not running. */
  public InetSocketAddress getRestAddress() {
    return rest.address();
  }

  /**
   * Throws IOException for an unknown queue, as {@code YarnScheduler} declares and its callers
   * expect (request validation skips the queue check on it, {@code yarn queue -status} reports it).
   * FifoScheduler narrowed the throws clause away, hence the unchecked rethrow.
   */
  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive) {
    try {
      return queues.queueInfo(queueName, includeChildQueues, recursive);
    } catch (IOException e) {
      throw TidalScheduler.<RuntimeException>rethrowUnchecked(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E rethrowUnchecked(Throwable t) throws E {
    throw (E) t;
  }

  /**
   * A queue's numbers (named short or full) from a status snapshot at most a second old, for tools
   * that watch the scheduler in the RM's JVM; null for a queue the core does not report.
   *
   * @throws IOException when the core's status cannot be read
   */
  public TidalQueueReport getQueueReport(String queueName) throws IOException {
    return queues.queueReport(queueName);
  }

  /** The calling user's rights on every queue, as FairScheduler reports them. */
  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    try {
      return queues.userAclInfo(UserGroupInformation.getCurrentUser());
    } catch (IOException e) {
      LOG.error("Cannot tell the calling user: " + e.getMessage(), e);
      return Collections.emptyList();
    }
  }

  /**
   * Null until the scheduler is initialised, as FairScheduler's: Hadoop's SLS starts its metrics
   * and web view, which read the root queue's metrics, before the RM initialises the scheduler.
   */
  @Override
  public QueueMetrics getRootQueueMetrics() {
    QueueManager created = queues;
    return created == null ? null : created.root().getMetrics();
  }

  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return queues.access().hasAccess(callerUGI, acl, queueName);
  }

  @Override
  public List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    return attempts.attemptsInQueue(queueName);
  }

  @Override
  public String moveApplication(ApplicationId appId, String newQueue) throws YarnException {
    throw new YarnException(
        "Tidal does not support moving applications between queues"
            + " (application "
            + appId
            + " to queue "
            + newQueue
            + ")");
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
    return usage.used();
  }

  // ---------------------------------------------------------------------------------------
  // Faults

  /**
   * Test-only: the next node heartbeat panics inside the native core after the core booked its
   * decisions, the worst case for the shim. Refused unless {@value #FAULT_INJECTION} is true.
   */
  public void armHeartbeatPanic() {
    TidalNative.armHeartbeatPanic(core.handle());
  }

  /** How many times a panic made the shim rebuild its core. */
  public int coreRebuilds() {
    return panicRecovery.rebuilds();
  }

  /** Host and rack names interned now, for tests of their lifecycle. */
  int locationNames() {
    return locations.size();
  }

  /** Whether this scheduler's RM is the active one (always, without RM HA, once started). */
  boolean isActive() {
    return rmContext != null && rmContext.getHAServiceState() == HAServiceState.ACTIVE;
  }

  /** The core's status JSON as it is (see {@link TidalNative#queueStatusJson}). */
  String statusJson() {
    return queues.statusJson();
  }

  /**
   * The core's history JSON, samples after {@code sinceMs} (see {@link TidalNative#historyJson}).
   */
  String historyJson(long sinceMs) {
    return TidalNative.historyJson(core.handle(), sinceMs);
  }

  /** A time of the core's clock as wall-clock milliseconds since 1970. */
  long wallClockMs(long coreMs) {
    return core.wallClockMs(coreMs);
  }

  /** The scheduler's REST endpoint, for tests that start a second server on its parts. */
  RestEndpoint restEndpoint() {
    return rest;
  }
}
