package org.tidal.yarn;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ha.HAServiceProtocol.HAServiceState;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.exceptions.YarnRuntimeException;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppAttemptRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.AppRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.ContainerExpiredSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeRemovedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeResourceUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.NativeLoader;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.TidalPanicException;
import org.tidal.yarn.config.AllocationFileLoader;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.queue.QueueManager;
import org.tidal.yarn.rest.RestEndpoint;
import org.tidal.yarn.state.DurableState;
import org.tidal.yarn.view.TidalQueueReport;

/**
 * The version-neutral body of {@link TidalScheduler}, which each Hadoop line's adapter extends from
 * that line's scheduler base class and forwards here. This class only routes: it takes YARN's
 * scheduler events and calls and hands each to the part that translates it. None of them holds
 * scheduling policy.
 *
 * <ul>
 *   <li>{@link ClusterNodes}: nodes and their heartbeats, whose decisions {@link
 *       DecisionMaterializer} turns into containers;
 *   <li>{@link AppAttemptRegistry}: applications and attempts, and the core's key of each;
 *   <li>{@link AllocateHandler}: the ApplicationMasters' allocate calls;
 *   <li>{@link ContainerCompletion}: containers that end, whatever ended them;
 *   <li>{@link AllocationFileLoader} and {@link QueueManager}: the queue file and the queues;
 *   <li>{@link RestEndpoint}: the REST endpoint; {@link UsageMetrics}: Hadoop's usage metrics;
 *   <li>{@link CoreInstance}: the native instance, its clock and its log pump;
 *   <li>{@link LineBookkeeping}: Hadoop's records where the Hadoop lines differ.
 * </ul>
 *
 * <p>Locking follows FifoScheduler: node events and container completion hold the scheduler's
 * monitor, allocate calls (RPC threads) hold only the application's monitor while they update asks,
 * and the native core locks internally without calling back into Java.
 *
 * <p>Restarts and faults: with work-preserving recovery, containers that nodes kept running are
 * recovered by Hadoop and adopted by the core; Tidal's own state is restored from {@link
 * DurableState} before the RM recovers its applications. A panic in the core is contained by {@link
 * PanicRecovery}, which rebuilds the core from the RM's view and stops no container.
 */
public final class TidalShim {
  private static final Log LOG = LogFactory.getLog(TidalShim.class);

  private final TidalScheduler scheduler;
  private final CoreInstance core = new CoreInstance();
  private final AllocationFileLoader allocationFile = new AllocationFileLoader();
  private final UsageMetrics usage = new UsageMetrics();
  private final AllocationIds ids = new AllocationIds();
  private DurableState durable;
  private volatile boolean restored;
  private PanicRecovery panicRecovery;

  /** Null until {@link #init}; read by metrics threads that may start before it. */
  private volatile QueueManager queues;

  private RMContext rmContext;
  private AppAttemptRegistry attempts;
  private ContainerCompletion completion;
  private ClusterNodes clusterNodes;
  private LocationTable locations;
  private AllocateHandler allocateHandler;
  private RestEndpoint rest;

  TidalShim(TidalScheduler scheduler) {
    this.scheduler = scheduler;
  }

  /**
   * Creates the native core and every part around it, after the scheduler base class initialised
   * Hadoop's records; returns the minimum allocation Hadoop's records use.
   */
  Resource init(
      Configuration conf,
      RMContext rmContext,
      ConcurrentMap<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> applications,
      Allocation emptyAllocation,
      LineBookkeeping line)
      throws IOException {
    this.rmContext = rmContext;
    Resource minimumAllocation =
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
    synchronized (scheduler) {
      durable = new DurableState(core, conf, rmContext);
      queues = new QueueManager(core, conf, durable);
      attempts = new AppAttemptRegistry(core, queues, rmContext, conf, applications, ids, line);
      NodeReservations reservations = new NodeReservations(scheduler, line);
      completion = new ContainerCompletion(scheduler, core, usage, ids, reservations, line);
      clusterNodes =
          new ClusterNodes(
              scheduler,
              core,
              locations,
              usage,
              queues.root().getMetrics(),
              new DecisionMaterializer(core, attempts, usage, ids, reservations, line),
              completion,
              rmContext,
              usePortForNodeName,
              attempts,
              ids,
              line);
      clusterNodes.setMaxAssignPerHeartbeat(allocationFile.maxAssignPerHeartbeat());
      allocateHandler =
          new AllocateHandler(
              scheduler, attempts, completion, core, locations, line, emptyAllocation, ids, usage);
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
              scheduler);
      rest = new RestEndpoint(queues, attempts, core, rmContext, conf);
    }
    queues.syncWithCore();
    LOG.info("Tidal scheduler created from " + AllocationFileLoader.fileName(conf));
    return minimumAllocation;
  }

  /** Before the scheduler base class starts. */
  void start() throws IOException {
    restoreOnce();
    core.startLogPump();
  }

  /** After the scheduler base class started. */
  void started() throws Exception {
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
  private void restoreOnce() throws IOException {
    synchronized (scheduler) {
      if (restored) {
        return;
      }
      restored = true;
      if (durable.restore() != null) {
        queues.syncWithCore();
      }
    }
  }

  /**
   * Before the scheduler base class stops: the endpoints and metrics go first so that no request
   * reaches a destroyed native instance; they do not exist when initialisation failed before they
   * were created.
   */
  void stop() throws Exception {
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
  }

  /** After the scheduler base class stopped. */
  void stopped() throws InterruptedException {
    long detached;
    synchronized (scheduler) {
      detached = core.detach();
    }
    core.destroy(detached);
  }

  /**
   * Reloads the queue allocation file ({@code yarn rmadmin -refreshQueues}). An invalid file leaves
   * the running queues untouched and is reported to the caller as an IOException.
   */
  void reinitialize(Configuration conf) throws IOException {
    synchronized (scheduler) {
      allocationFile.reload(core, conf);
      clusterNodes.setMaxAssignPerHeartbeat(allocationFile.maxAssignPerHeartbeat());
      queues.syncWithCore();
    }
    LOG.info("Reloaded queue allocation file " + AllocationFileLoader.fileName(conf));
  }

  // ---------------------------------------------------------------------------------------
  // Events

  /**
   * Handles one scheduler event. An exception escaping here makes the RM's event thread exit the
   * JVM; a failing native call is an error of this one event, so it is logged and the RM keeps
   * scheduling. A panic poisons the core: it is rebuilt and the event handled once more.
   */
  void handle(SchedulerEvent event) {
    try {
      if (!restored) {
        restoreOnce();
      }
    } catch (IOException e) {
      // Only the RM's recovery reaches here first, which then fails the start with this reason.
      throw new YarnRuntimeException(e);
    }
    try {
      dispatch(event);
    } catch (TidalPanicException e) {
      try {
        synchronized (scheduler) {
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

  /** The events every Hadoop line sends; the adapter handles the rest. */
  private void dispatch(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED:
        {
          NodeAddedSchedulerEvent added = (NodeAddedSchedulerEvent) event;
          RMNode rmNode = added.getAddedRMNode();
          synchronized (scheduler) {
            clusterNodes.add(rmNode);
          }
          // Hadoop's own recovery first (it kills containers of apps that did not come back),
          // then the core adopts what Hadoop recovered.
          scheduler.recoverContainersOnNode(added.getContainerReports(), rmNode);
          synchronized (scheduler) {
            clusterNodes.adoptRecovered(rmNode, added.getContainerReports());
          }
          break;
        }
      case NODE_REMOVED:
        synchronized (scheduler) {
          clusterNodes.remove(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        }
        break;
      case NODE_UPDATE:
        synchronized (scheduler) {
          clusterNodes.heartbeat(((NodeUpdateSchedulerEvent) event).getRMNode());
        }
        break;
      case NODE_RESOURCE_UPDATE:
        {
          NodeResourceUpdateSchedulerEvent update = (NodeResourceUpdateSchedulerEvent) event;
          scheduler.updateNodeResource(update.getRMNode(), update.getResourceOption());
          break;
        }
      case APP_ADDED:
        {
          AppAddedSchedulerEvent added = (AppAddedSchedulerEvent) event;
          scheduler.addApplication(
              added.getApplicationId(),
              added.getQueue(),
              added.getUser(),
              added.getIsAppRecovering());
          break;
        }
      case APP_REMOVED:
        {
          AppRemovedSchedulerEvent removed = (AppRemovedSchedulerEvent) event;
          synchronized (scheduler) {
            attempts.removeApplication(removed.getApplicationID(), removed.getFinalState());
          }
          break;
        }
      case APP_ATTEMPT_ADDED:
        {
          AppAttemptAddedSchedulerEvent added = (AppAttemptAddedSchedulerEvent) event;
          scheduler.addApplicationAttempt(
              added.getApplicationAttemptId(),
              added.getTransferStateFromPreviousAttempt(),
              added.getIsAttemptRecovering());
          break;
        }
      case APP_ATTEMPT_REMOVED:
        {
          AppAttemptRemovedSchedulerEvent removed = (AppAttemptRemovedSchedulerEvent) event;
          removeAttempt(
              removed.getApplicationAttemptID(),
              removed.getFinalAttemptState(),
              removed.getKeepContainersAcrossAppAttempts());
          break;
        }
      case CONTAINER_EXPIRED:
        completion.expired(((ContainerExpiredSchedulerEvent) event).getContainerId());
        break;
      case NODE_LABELS_UPDATE:
        LOG.debug("Ignoring node label update: Tidal does not schedule by node label");
        break;
      default:
        if (!scheduler.handleLineEvent(event)) {
          LOG.error("Ignoring unsupported scheduler event " + event.getType());
        }
    }
  }

  private void removeAttempt(
      ApplicationAttemptId attemptId, RMAppAttemptState finalState, boolean keepContainers) {
    synchronized (scheduler) {
      FiCaSchedulerApp attempt = attempts.current(attemptId);
      if (attempt == null) {
        LOG.warn("Cannot remove unknown application attempt " + attemptId);
        return;
      }
      completion.attemptEnded(attempt, keepContainers);
      attempts.removeAttempt(attempt, finalState);
    }
  }

  /**
   * Updates a node's capacity; true when the node is known and its capacity changed, after which
   * the adapter updates Hadoop's record and calls {@link #nodeResourceUpdated}.
   */
  boolean updateNodeResource(RMNode rmNode, ResourceOption resourceOption) {
    return clusterNodes.updateResource(rmNode, resourceOption);
  }

  void nodeResourceUpdated() {
    clusterNodes.publishAvailable();
  }

  void addApplication(
      ApplicationId applicationId, String queue, String user, boolean isAppRecovering) {
    attempts.addApplication(applicationId, queue, user, isAppRecovering);
  }

  void addApplicationAttempt(
      ApplicationAttemptId attemptId,
      boolean transferStateFromPreviousAttempt,
      boolean isAttemptRecovering) {
    attempts.addAttempt(attemptId, transferStateFromPreviousAttempt, isAttemptRecovering);
  }

  /**
   * Orders the application by the priority the adapter recorded in its Hadoop record from the next
   * heartbeat; false for an application the scheduler does not hold.
   */
  boolean applicationPriorityChanged(ApplicationId appId) {
    synchronized (scheduler) {
      return attempts.priorityChanged(appId);
    }
  }

  /** See {@link QueueManager#appLifetimes}. */
  long[] appLifetimes(String queueName) {
    return queues.appLifetimes(queueName);
  }

  AllocateHandler allocateHandler() {
    return allocateHandler;
  }

  /**
   * Starts a container an RM component placed on a node outside a heartbeat (see {@link
   * ClusterNodes#startPlaced}). Such components call from their own threads, which nothing catches:
   * a failing core call is logged and refuses the placement, and a panic rebuilds the core first.
   */
  boolean startPlaced(
      ApplicationAttemptId attemptId,
      NodeId nodeId,
      Priority priority,
      Resource resource,
      ClusterNodes.PlacedContainer record) {
    synchronized (scheduler) {
      FiCaSchedulerApp attempt = attempts.current(attemptId);
      FiCaSchedulerNode node = scheduler.node(nodeId);
      if (attempt == null || node == null) {
        return false;
      }
      try {
        return clusterNodes.startPlaced(attempt, node, priority, resource, record);
      } catch (TidalPanicException e) {
        panicRecovery.rebuild(e, "placement of a container of " + attemptId);
      } catch (TidalException e) {
        LOG.error("Tidal core failed to place a container of " + attemptId + ": " + e.getMessage());
      }
      return false;
    }
  }

  /** Completes a container, whatever ended it; the caller holds the scheduler's monitor. */
  void completedContainer(
      RMContainer rmContainer, ContainerStatus status, RMContainerEventType event) {
    if (rmContainer == null) {
      LOG.info("Null container completed...");
      return;
    }
    completion.complete(rmContainer, status, event);
  }

  // ---------------------------------------------------------------------------------------
  // Queues, REST and metrics

  /** Where the REST endpoint listens, or null when it is not running. */
  public InetSocketAddress getRestAddress() {
    return rest.address();
  }

  /** Throws IOException for an unknown queue, as {@code YarnScheduler} declares. */
  QueueInfo getQueueInfo(String queueName, boolean includeChildQueues, boolean recursive)
      throws IOException {
    return queues.queueInfo(queueName, includeChildQueues, recursive);
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
  List<QueueUserACLInfo> getQueueUserAclInfo() {
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
  QueueMetrics getRootQueueMetrics() {
    QueueManager created = queues;
    return created == null ? null : created.root().getMetrics();
  }

  boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return queues.access().hasAccess(callerUGI, acl, queueName);
  }

  List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    return attempts.attemptsInQueue(queueName);
  }

  static YarnException moveRefused(ApplicationId appId, String newQueue) {
    return new YarnException(
        "Tidal does not support moving applications between queues"
            + " (application "
            + appId
            + " to queue "
            + newQueue
            + ")");
  }

  Resource getUsedResource() {
    return usage.used();
  }

  // ---------------------------------------------------------------------------------------
  // Faults

  /**
   * Test-only: the next node heartbeat panics inside the native core after the core booked its
   * decisions, the worst case for the shim. Refused unless {@value TidalConfig#FAULT_INJECTION} is
   * true.
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
