package org.tidal.yarn;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URL;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.SecretManager.InvalidToken;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceOption;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.proto.YarnServiceProtos.SchedulerResourceTypes;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.api.protocolrecords.NMContainerStatus;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeCleanContainerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt.ContainersAndNMTokensAllocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
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
import org.apache.hadoop.yarn.util.Records;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.hadoop.yarn.util.resource.ResourceCalculator;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;

/**
 * A Hadoop 2.7 ResourceManager scheduler whose decisions are made by the Rust core behind
 * {@link TidalNative}. This class only translates YARN events into native calls and turns the
 * returned decisions into containers with Hadoop's own {@link FiCaSchedulerApp} and
 * {@link FiCaSchedulerNode} bookkeeping; it holds no scheduling policy.
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
 * <p>Containers are not recovered across ResourceManager restarts: the native core would not
 * know them, so containers that nodes kept running are stopped instead of replayed.
 */
public class TidalScheduler extends FifoScheduler {
  /** Queue allocation file: absolute path, or a name resolved on the classpath. */
  public static final String ALLOCATION_FILE = "tidal.allocation.file";
  public static final String DEFAULT_ALLOCATION_FILE = "tidal-queues.xml";
  /** Upper bound on containers started per node heartbeat. */
  public static final String MAX_ASSIGN_PER_HEARTBEAT = "tidal.max-assign-per-heartbeat";
  public static final int DEFAULT_MAX_ASSIGN_PER_HEARTBEAT = 10;
  public static final String ROOT_QUEUE = "root";
  /**
   * Address of the scheduler's REST endpoint (queue status and registration, AM hints).
   * Port 0 binds a free port; {@link #getRestAddress} tells which.
   */
  public static final String REST_ADDRESS = "tidal.rest.address";
  public static final int DEFAULT_REST_PORT = 8089;
  public static final String DEFAULT_REST_ADDRESS = "0.0.0.0:" + DEFAULT_REST_PORT;
  /** Whether the REST endpoint runs at all. */
  public static final String REST_ENABLED = "tidal.rest.enabled";
  public static final boolean DEFAULT_REST_ENABLED = true;

  private static final Log LOG = LogFactory.getLog(TidalScheduler.class);
  private static final long[] NO_IDS = new long[0];
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ResourceCalculator calculator = new DominantResourceCalculator();
  private final LocationTable locations = new LocationTable();
  private final NativeLogPump logPump = new NativeLogPump();

  private final AtomicLong nextAppKey = new AtomicLong(1);
  /** Keys registered at APP_ADDED and not yet bound to the first attempt. */
  private final Map<ApplicationId, Long> unboundKeys = new ConcurrentHashMap<ApplicationId, Long>();
  private final Map<ApplicationAttemptId, Long> attemptKeys =
      new ConcurrentHashMap<ApplicationAttemptId, Long>();
  private final Map<Long, FiCaSchedulerApp> attemptsByKey =
      new ConcurrentHashMap<Long, FiCaSchedulerApp>();

  /** Dense native node ids; guarded by this scheduler's monitor. */
  private final Map<NodeId, Integer> nodeIds = new ConcurrentHashMap<NodeId, Integer>();
  private final TreeSet<Integer> freeNodeIds = new TreeSet<Integer>();
  private int nextNodeId;

  private final Map<String, TidalQueue> queues = new ConcurrentHashMap<String, TidalQueue>();
  private TidalQueue rootQueue;
  private final Resource usedResource = Resource.newInstance(0, 0);

  /**
   * The core's clock is milliseconds since this scheduler was created, read from a monotonic
   * source. BoPF lays burst windows out in a profile that is dense from its epoch and bounded
   * in length, so epoch-based wall-clock times would put every burst beyond it; a monotonic
   * clock also keeps burst and share accounting right across wall-clock steps.
   */
  private final long clockOriginNanos = System.nanoTime();
  private final long clockOriginWallMs = System.currentTimeMillis();

  private volatile long handle;
  private long[] settings;
  /** Decision buffer of the heartbeat path; only touched under this scheduler's monitor. */
  private long[] decisions;
  private boolean usePortForNodeName;
  private Configuration schedulerConf;
  private volatile TidalRestServer restServer;

  @Override
  public void serviceInit(Configuration conf) throws Exception {
    // FifoScheduler.serviceInit validates the memory bounds, creates the application map and the
    // configured maximum allocation that AbstractYarnScheduler maintains. It also registers the
    // FIFO "default" queue metrics, which nothing here updates, so they stay at zero.
    super.serviceInit(conf);
    schedulerConf = conf;
    minimumAllocation = Resources.createResource(
        conf.getInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_MINIMUM_ALLOCATION_MB),
        conf.getInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES));
    usePortForNodeName = conf.getBoolean(
        YarnConfiguration.RM_SCHEDULER_INCLUDE_PORT_IN_NODE_NAME,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_USE_PORT_FOR_NODE_NAME);
    NativeLoader.load();
    long[] initial = settings(conf);
    String source = allocationFileName(conf);
    String xml = readAllocationFile(conf);
    try {
      handle = TidalNative.create(xml, initial);
    } catch (TidalException e) {
      NativeLogPump.drain();
      throw new IOException("Invalid Tidal queue allocation file " + source + ": "
          + e.getMessage(), e);
    }
    synchronized (this) {
      settings = initial;
      decisions = new long[(int) initial[TidalNative.SET_MAX_ASSIGN_PER_HEARTBEAT]
          * TidalNative.DECISION_STRIDE];
      rootQueue = new TidalQueue(this, ROOT_QUEUE, null, conf);
      queues.put(ROOT_QUEUE, rootQueue);
    }
    syncQueues();
    LOG.info("Tidal scheduler created from " + source);
  }

  @Override
  public void serviceStart() throws Exception {
    logPump.start();
    super.serviceStart();
    if (schedulerConf.getBoolean(REST_ENABLED, DEFAULT_REST_ENABLED)) {
      TidalRestServer server = new TidalRestServer(this, schedulerConf);
      server.start();
      restServer = server;
    }
  }

  @Override
  public void serviceStop() throws Exception {
    // The endpoint goes first so that no request reaches a destroyed native instance.
    TidalRestServer server = restServer;
    restServer = null;
    if (server != null) {
      server.stop();
    }
    super.serviceStop();
    long old;
    synchronized (this) {
      old = handle;
      handle = 0;
    }
    // Nothing native exists when initialisation failed before the instance was created.
    if (old != 0) {
      TidalNative.destroy(old);
      logPump.stop();
    }
  }

  /**
   * Reloads the queue allocation file ({@code yarn rmadmin -refreshQueues}). An invalid file
   * leaves the running queues untouched and is reported to the caller as an IOException.
   */
  @Override
  public synchronized void reinitialize(Configuration conf, RMContext rmContext)
      throws IOException {
    String source = allocationFileName(conf);
    String xml = readAllocationFile(conf);
    long[] next = settings.clone();
    next[TidalNative.SET_MAX_ASSIGN_PER_HEARTBEAT] = maxAssignPerHeartbeat(conf);
    try {
      TidalNative.reconfigure(handle, xml, next);
    } catch (TidalException e) {
      LOG.error("Rejected queue allocation file " + source
          + ", keeping the running configuration: " + e.getMessage());
      throw new IOException("Invalid Tidal queue allocation file " + source + ": "
          + e.getMessage(), e);
    }
    settings = next;
    int capacity = (int) next[TidalNative.SET_MAX_ASSIGN_PER_HEARTBEAT]
        * TidalNative.DECISION_STRIDE;
    if (decisions.length != capacity) {
      decisions = new long[capacity];
    }
    syncQueues();
    LOG.info("Reloaded queue allocation file " + source);
  }

  private long[] settings(Configuration conf) throws IOException {
    long[] s = new long[TidalNative.SETTINGS_LEN];
    s[TidalNative.SET_MIN_MEMORY_MB] = minimumAllocation.getMemory();
    s[TidalNative.SET_MIN_VCORES] = minimumAllocation.getVirtualCores();
    s[TidalNative.SET_MAX_MEMORY_MB] = conf.getInt(
        YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_MB);
    s[TidalNative.SET_MAX_VCORES] = conf.getInt(
        YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES,
        YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES);
    s[TidalNative.SET_MAX_ASSIGN_PER_HEARTBEAT] = maxAssignPerHeartbeat(conf);
    return s;
  }

  private static int maxAssignPerHeartbeat(Configuration conf) throws IOException {
    int value = conf.getInt(MAX_ASSIGN_PER_HEARTBEAT, DEFAULT_MAX_ASSIGN_PER_HEARTBEAT);
    if (value <= 0) {
      throw new IOException(MAX_ASSIGN_PER_HEARTBEAT + " must be positive, was "
          + value);
    }
    return value;
  }

  private static String allocationFileName(Configuration conf) {
    return conf.get(ALLOCATION_FILE, DEFAULT_ALLOCATION_FILE);
  }

  /**
   * Reads the allocation file: an absolute path from the file system, anything else from the
   * classpath (as FairScheduler resolves its allocation file).
   */
  static String readAllocationFile(Configuration conf) throws IOException {
    String name = allocationFileName(conf);
    File file = new File(name);
    InputStream in;
    if (file.isAbsolute()) {
      if (!file.isFile()) {
        throw new IOException("Tidal queue allocation file " + file + " does not exist ("
            + ALLOCATION_FILE + ")");
      }
      in = new FileInputStream(file);
    } else {
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      if (loader == null) {
        loader = TidalScheduler.class.getClassLoader();
      }
      URL url = loader.getResource(name);
      if (url == null) {
        throw new IOException("Tidal queue allocation file " + name
            + " not found on the classpath (" + ALLOCATION_FILE + ")");
      }
      in = url.openStream();
    }
    return Streams.readUtf8(in);
  }

  // ---------------------------------------------------------------------------------------
  // Events

  @Override
  public void handle(SchedulerEvent event) {
    // An exception escaping here makes the RM's event thread exit the JVM; a failing native
    // call is an error of this one event, so it is logged and the RM keeps scheduling.
    try {
      dispatch(event);
    } catch (TidalException e) {
      LOG.error("Tidal core failed on " + event.getType() + ": " + e.getMessage(), e);
    }
  }

  private void dispatch(SchedulerEvent event) {
    switch (event.getType()) {
      case NODE_ADDED: {
        NodeAddedSchedulerEvent added = (NodeAddedSchedulerEvent) event;
        addNode(added.getAddedRMNode());
        stopUnrecoveredContainers(added.getAddedRMNode(), added.getContainerReports());
        break;
      }
      case NODE_REMOVED:
        removeNode(((NodeRemovedSchedulerEvent) event).getRemovedRMNode());
        break;
      case NODE_UPDATE:
        nodeUpdate(((NodeUpdateSchedulerEvent) event).getRMNode());
        break;
      case NODE_RESOURCE_UPDATE: {
        NodeResourceUpdateSchedulerEvent update = (NodeResourceUpdateSchedulerEvent) event;
        updateNodeResource(update.getRMNode(), update.getResourceOption());
        break;
      }
      case APP_ADDED: {
        AppAddedSchedulerEvent added = (AppAddedSchedulerEvent) event;
        addApplication(added.getApplicationId(), added.getQueue(), added.getUser(),
            added.getIsAppRecovering());
        break;
      }
      case APP_REMOVED: {
        AppRemovedSchedulerEvent removed = (AppRemovedSchedulerEvent) event;
        doneApplication(removed.getApplicationID(), removed.getFinalState());
        break;
      }
      case APP_ATTEMPT_ADDED: {
        AppAttemptAddedSchedulerEvent added = (AppAttemptAddedSchedulerEvent) event;
        addApplicationAttempt(added.getApplicationAttemptId(),
            added.getTransferStateFromPreviousAttempt(), added.getIsAttemptRecovering());
        break;
      }
      case APP_ATTEMPT_REMOVED: {
        AppAttemptRemovedSchedulerEvent removed = (AppAttemptRemovedSchedulerEvent) event;
        doneApplicationAttempt(removed.getApplicationAttemptID(),
            removed.getFinalAttemptState(), removed.getKeepContainersAcrossAppAttempts());
        break;
      }
      case CONTAINER_EXPIRED:
        containerExpired(((ContainerExpiredSchedulerEvent) event).getContainerId());
        break;
      case CONTAINER_RESCHEDULED:
        containerRescheduled(((ContainerRescheduledEvent) event).getContainer());
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
    FiCaSchedulerNode node = new FiCaSchedulerNode(rmNode, usePortForNodeName);
    Integer id = freeNodeIds.isEmpty() ? Integer.valueOf(nextNodeId++) : freeNodeIds.pollFirst();
    Resource total = node.getTotalResource();
    try {
      TidalNative.addNode(handle, id, locations.intern(node.getNodeName()),
          locations.intern(node.getRackName()), total.getMemory(), total.getVirtualCores());
    } catch (TidalException e) {
      freeNodeIds.add(id);
      throw e;
    }
    nodeIds.put(rmNode.getNodeID(), id);
    nodes.put(rmNode.getNodeID(), node);
    Resources.addTo(clusterResource, total);
    updateMaximumAllocation(node, true);
    updateRootAvailable();
    LOG.info("Added node " + rmNode.getNodeAddress() + " (native id " + id + ") with " + total
        + ", cluster capacity " + clusterResource);
  }

  /**
   * After a work-preserving RM restart a node reports the containers it kept running. The core
   * cannot adopt them, so the node is told to stop them and their apps ask again.
   */
  private void stopUnrecoveredContainers(RMNode rmNode, List<NMContainerStatus> reports) {
    if (reports == null || !rmContext.isWorkPreservingRecoveryEnabled()) {
      return;
    }
    for (NMContainerStatus report : reports) {
      if (report.getContainerState() != ContainerState.COMPLETE) {
        LOG.info("Stopping " + report.getContainerId() + " on " + rmNode.getNodeAddress()
            + ": Tidal does not recover containers");
        rmContext.getDispatcher().getEventHandler().handle(
            new RMNodeCleanContainerEvent(rmNode.getNodeID(), report.getContainerId()));
      }
    }
  }

  private synchronized void removeNode(RMNode rmNode) {
    FiCaSchedulerNode node = nodes.get(rmNode.getNodeID());
    if (node == null) {
      return;
    }
    for (RMContainer container : node.getRunningContainers()) {
      finishContainer(container, SchedulerUtils.createAbnormalContainerStatus(
          container.getContainerId(), SchedulerUtils.LOST_CONTAINER), RMContainerEventType.KILL);
    }
    nodes.remove(rmNode.getNodeID());
    updateMaximumAllocation(node, false);
    Resources.subtractFrom(clusterResource, node.getTotalResource());
    updateRootAvailable();
    Integer id = nodeIds.remove(rmNode.getNodeID());
    // The core forgets the node's allocations along with the node.
    TidalNative.removeNode(handle, id);
    freeNodeIds.add(id);
    LOG.info("Removed node " + rmNode.getNodeAddress() + ", cluster capacity "
        + clusterResource);
  }

  @Override
  public synchronized void updateNodeResource(RMNode rmNode, ResourceOption resourceOption) {
    Integer id = nodeIds.get(rmNode.getNodeID());
    if (id == null) {
      return;
    }
    Resource resource = resourceOption.getResource();
    TidalNative.updateNodeResource(handle, id, resource.getMemory(),
        resource.getVirtualCores());
    super.updateNodeResource(rmNode, resourceOption);
    updateRootAvailable();
  }

  private synchronized void nodeUpdate(RMNode rmNode) {
    List<UpdatedContainerInfo> updates = rmNode.pullContainerUpdates();
    FiCaSchedulerNode node = nodes.get(rmNode.getNodeID());
    Integer id = nodeIds.get(rmNode.getNodeID());
    if (node == null || id == null) {
      return;
    }
    List<ContainerStatus> completed = new ArrayList<ContainerStatus>();
    for (UpdatedContainerInfo update : updates) {
      for (ContainerStatus launched : update.getNewlyLaunchedContainers()) {
        containerLaunchedOnNode(launched.getContainerId(), node);
      }
      completed.addAll(update.getCompletedContainers());
    }
    long[] completedIds = new long[completed.size()];
    int count = 0;
    for (ContainerStatus status : completed) {
      RMContainer container = getRMContainer(status.getContainerId());
      if (container != null
          && finishContainer(container, status, RMContainerEventType.FINISHED)) {
        completedIds[count++] = status.getContainerId().getContainerId();
      }
    }
    completedIds = count == completedIds.length ? completedIds : Arrays.copyOf(completedIds, count);

    if (rmContext.isWorkPreservingRecoveryEnabled()
        && !rmContext.isSchedulerReadyForAllocatingContainers()) {
      // Hadoop holds back allocation right after an RM restart; free without deciding.
      for (long allocationId : completedIds) {
        TidalNative.releaseAllocation(handle, allocationId);
      }
      updateRootAvailable();
      return;
    }

    int decided;
    try {
      decided = TidalNative.nodeHeartbeat(handle, id, coreNowMs(), completedIds,
          decisions);
    } catch (TidalException e) {
      // The heartbeat frees completed allocations before deciding; releasing them again is a
      // no-op when that already happened and keeps the core's accounting right when it did not.
      for (long allocationId : completedIds) {
        try {
          TidalNative.releaseAllocation(handle, allocationId);
        } catch (TidalException again) {
          LOG.error("Cannot release allocation " + allocationId + ": " + again.getMessage());
        }
      }
      throw e;
    }
    for (int i = 0; i < decided; i++) {
      materialize(node, decisions, i * TidalNative.DECISION_STRIDE);
    }
    for (SchedulerApplication<FiCaSchedulerApp> app : applications.values()) {
      FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
      if (attempt != null) {
        attempt.setHeadroom(Resources.componentwiseMax(
            Resources.subtract(clusterResource, usedResource), Resources.none()));
      }
    }
    updateRootAvailable();
  }

  /** Turns one decision record into a container on {@code node}, or hands it back. */
  private void materialize(FiCaSchedulerNode node, long[] d, int offset) {
    long allocationId = d[offset + TidalNative.DEC_ALLOCATION_ID];
    FiCaSchedulerApp app = attemptsByKey.get(d[offset + TidalNative.DEC_APP_KEY]);
    Priority priority = Priority.newInstance((int) d[offset + TidalNative.DEC_PRIORITY]);
    Resource capability = Resource.newInstance((int) d[offset + TidalNative.DEC_MEMORY_MB],
        (int) d[offset + TidalNative.DEC_VCORES]);
    int locality = (int) d[offset + TidalNative.DEC_LOCALITY];
    String failure;
    RMContainer rmContainer = null;
    if (app == null) {
      failure = "its application attempt is gone";
    } else {
      synchronized (app) {
        failure = unmaterializable(app, node, priority, locality, capability);
        if (failure == null) {
          NodeType type = nodeType(locality);
          ResourceRequest request = app.getResourceRequest(priority, resourceName(node, locality));
          ContainerId containerId =
              ContainerId.newContainerId(app.getApplicationAttemptId(), allocationId);
          Container container = Container.newInstance(containerId, node.getNodeID(),
              node.getRMNode().getHttpAddress(), capability, priority, null);
          rmContainer = app.allocate(type, node, priority, request, container);
          if (rmContainer == null) {
            failure = "the attempt is stopped or has no outstanding request";
          }
        }
      }
    }
    if (rmContainer == null) {
      LOG.warn("Releasing allocation " + allocationId + " on " + node.getNodeName()
          + " (priority " + priority + ", " + capability + "): " + failure);
      TidalNative.releaseAllocation(handle, allocationId);
      return;
    }
    node.allocateContainer(rmContainer);
    Resources.addTo(usedResource, capability);
  }

  /** Why Hadoop's bookkeeping cannot take the decision, or null when it can. */
  private static String unmaterializable(FiCaSchedulerApp app, FiCaSchedulerNode node,
      Priority priority, int locality, Resource capability) {
    if (app.isStopped()) {
      return "its application attempt is stopped";
    }
    if (locality != TidalNative.LOCALITY_NODE && locality != TidalNative.LOCALITY_RACK
        && locality != TidalNative.LOCALITY_OFF_SWITCH) {
      return "unknown locality " + locality;
    }
    ResourceRequest request = app.getResourceRequest(priority, resourceName(node, locality));
    if (request == null || request.getNumContainers() <= 0) {
      return "no outstanding request at " + resourceName(node, locality);
    }
    if (!request.getCapability().equals(capability)) {
      return "the request now asks for " + request.getCapability();
    }
    // Hadoop decrements the rack and ANY requests along with a node-local one.
    if (locality == TidalNative.LOCALITY_NODE) {
      ResourceRequest rack = app.getResourceRequest(priority, node.getRackName());
      if (rack == null || rack.getNumContainers() <= 0) {
        return "no outstanding request at " + node.getRackName();
      }
    }
    if (locality != TidalNative.LOCALITY_OFF_SWITCH) {
      ResourceRequest any = app.getResourceRequest(priority, ResourceRequest.ANY);
      if (any == null || any.getNumContainers() <= 0) {
        return "no outstanding request at " + ResourceRequest.ANY;
      }
    }
    return null;
  }

  private static NodeType nodeType(int locality) {
    switch (locality) {
      case TidalNative.LOCALITY_NODE:
        return NodeType.NODE_LOCAL;
      case TidalNative.LOCALITY_RACK:
        return NodeType.RACK_LOCAL;
      default:
        return NodeType.OFF_SWITCH;
    }
  }

  private static String resourceName(FiCaSchedulerNode node, int locality) {
    switch (locality) {
      case TidalNative.LOCALITY_NODE:
        return node.getNodeName();
      case TidalNative.LOCALITY_RACK:
        return node.getRackName();
      default:
        return ResourceRequest.ANY;
    }
  }

  private void updateRootAvailable() {
    rootQueue.getMetrics().setAvailableResourcesToQueue(Resources.componentwiseMax(
        Resources.subtract(clusterResource, usedResource), Resources.none()));
  }

  // ---------------------------------------------------------------------------------------
  // Applications

  @Override
  public synchronized void addApplication(ApplicationId applicationId, String queue,
      String user, boolean isAppRecovering) {
    long key = nextAppKey.getAndIncrement();
    String queueName;
    try {
      queueName = TidalNative.addApp(handle, key, queue == null ? "" : queue, user);
    } catch (TidalException e) {
      LOG.info("Rejecting application " + applicationId + " of user " + user + " in queue "
          + queue + ": " + e.getMessage());
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppEvent(applicationId, RMAppEventType.APP_REJECTED, e.getMessage()));
      return;
    }
    TidalQueue tidalQueue = queue(queueName);
    SchedulerApplication<FiCaSchedulerApp> application =
        new SchedulerApplication<FiCaSchedulerApp>(tidalQueue, user);
    applications.put(applicationId, application);
    unboundKeys.put(applicationId, key);
    tidalQueue.getMetrics().submitApp(user);
    RMApp rmApp = rmContext.getRMApps().get(applicationId);
    if (rmApp != null) {
      rmApp.setQueue(queueName);
    }
    LOG.info("Accepted application " + applicationId + " of user " + user + " into queue "
        + queueName);
    if (!isAppRecovering) {
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppEvent(applicationId, RMAppEventType.APP_ACCEPTED));
    }
  }

  @Override
  public synchronized void addApplicationAttempt(ApplicationAttemptId attemptId,
      boolean transferStateFromPreviousAttempt, boolean isAttemptRecovering) {
    ApplicationId appId = attemptId.getApplicationId();
    SchedulerApplication<FiCaSchedulerApp> application = applications.get(appId);
    if (application == null) {
      LOG.warn("Ignoring attempt " + attemptId + " of unknown application");
      return;
    }
    TidalQueue queue = (TidalQueue) application.getQueue();
    String user = application.getUser();
    Long key = unboundKeys.remove(appId);
    if (key == null) {
      key = nextAppKey.getAndIncrement();
      try {
        TidalNative.addApp(handle, key, queue.getQueueName(), user);
      } catch (TidalException e) {
        String message = "Cannot schedule attempt " + attemptId + " in queue "
            + queue.getQueueName() + ": " + e.getMessage();
        LOG.error(message);
        rmContext.getDispatcher().getEventHandler().handle(
            new RMAppEvent(appId, RMAppEventType.KILL, message));
        return;
      }
    }
    FiCaSchedulerApp attempt = new FiCaSchedulerApp(attemptId, user, queue,
        queue.getActiveUsersManager(), rmContext);
    if (transferStateFromPreviousAttempt) {
      attempt.transferStateFromPreviousAttempt(application.getCurrentAppAttempt());
    }
    application.setCurrentAppAttempt(attempt);
    attemptKeys.put(attemptId, key);
    attemptsByKey.put(key, attempt);
    queue.getMetrics().submitAppAttempt(user);
    LOG.info("Added attempt " + attemptId + " (app key " + key + ") in queue "
        + queue.getQueueName());
    if (!isAttemptRecovering) {
      rmContext.getDispatcher().getEventHandler().handle(
          new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  private synchronized void doneApplication(ApplicationId appId, RMAppState finalState) {
    SchedulerApplication<FiCaSchedulerApp> application = applications.remove(appId);
    if (application == null) {
      LOG.warn("Cannot remove unknown application " + appId);
      return;
    }
    TidalQueue queue = (TidalQueue) application.getQueue();
    queue.getActiveUsersManager().deactivateApplication(application.getUser(), appId);
    application.stop(finalState);
    Long key = unboundKeys.remove(appId);
    FiCaSchedulerApp attempt = application.getCurrentAppAttempt();
    if (key == null && attempt != null) {
      key = attemptKeys.remove(attempt.getApplicationAttemptId());
    }
    if (key != null) {
      attemptsByKey.remove(key);
      TidalNative.removeApp(handle, key);
    }
  }

  private synchronized void doneApplicationAttempt(ApplicationAttemptId attemptId,
      RMAppAttemptState finalState, boolean keepContainers) {
    FiCaSchedulerApp attempt = getApplicationAttempt(attemptId);
    if (attempt == null || !attempt.getApplicationAttemptId().equals(attemptId)) {
      LOG.warn("Cannot remove unknown application attempt " + attemptId);
      return;
    }
    for (RMContainer container : attempt.getLiveContainers()) {
      if (keepContainers && container.getState().equals(RMContainerState.RUNNING)) {
        continue;
      }
      finishContainer(container, SchedulerUtils.createAbnormalContainerStatus(
          container.getContainerId(), SchedulerUtils.COMPLETED_APPLICATION),
          RMContainerEventType.KILL);
    }
    attempt.stop(finalState);
    Long key = attemptKeys.remove(attemptId);
    if (key != null) {
      attemptsByKey.remove(key);
      // The core drops the attempt's asks and frees its allocations.
      TidalNative.removeApp(handle, key);
    }
  }

  // ---------------------------------------------------------------------------------------
  // Containers

  @Override
  protected synchronized void completedContainer(RMContainer rmContainer,
      ContainerStatus containerStatus, RMContainerEventType event) {
    if (rmContainer == null) {
      LOG.info("Null container completed...");
      return;
    }
    finishContainer(rmContainer, containerStatus, event);
  }

  /**
   * Completes a container in Hadoop's bookkeeping. Returns true only for the one call that
   * actually completed it, so its allocation is handed back to the core exactly once.
   */
  private synchronized boolean finishContainer(RMContainer rmContainer, ContainerStatus status,
      RMContainerEventType event) {
    Container container = rmContainer.getContainer();
    FiCaSchedulerApp app = getCurrentAttemptForContainer(container.getId());
    if (app == null) {
      LOG.info("Container " + container.getId() + " of an unknown application completed ("
          + event + ")");
      return false;
    }
    if (!app.containerCompleted(rmContainer, status, event)) {
      return false;
    }
    FiCaSchedulerNode node = nodes.get(container.getNodeId());
    if (node != null) {
      node.releaseContainer(container);
    }
    Resources.subtractFrom(usedResource, container.getResource());
    LOG.info("Attempt " + app.getApplicationAttemptId() + " released container "
        + container.getId() + " on " + container.getNodeId() + " (" + event + ")");
    return true;
  }

  private synchronized void containerExpired(ContainerId containerId) {
    RMContainer container = getRMContainer(containerId);
    if (container != null && finishContainer(container, SchedulerUtils
        .createAbnormalContainerStatus(containerId, SchedulerUtils.EXPIRED_CONTAINER),
        RMContainerEventType.EXPIRE)) {
      TidalNative.releaseAllocation(handle, containerId.getContainerId());
    }
  }

  /**
   * A container killed before its AM pulled it: Hadoop puts its request back, and the core
   * gets the restored outstanding counts as fresh asks.
   */
  private void containerRescheduled(RMContainer container) {
    FiCaSchedulerApp attempt = getCurrentAttemptForContainer(container.getContainerId());
    List<ResourceRequest> requests = container.getResourceRequests();
    if (attempt == null || requests == null) {
      return;
    }
    Long key = attemptKeys.get(attempt.getApplicationAttemptId());
    if (key == null) {
      return;
    }
    synchronized (attempt) {
      recoverResourceRequestForContainer(container);
      List<ResourceRequest> restored = new ArrayList<ResourceRequest>(requests.size());
      for (ResourceRequest request : requests) {
        ResourceRequest current =
            attempt.getResourceRequest(request.getPriority(), request.getResourceName());
        if (current != null) {
          restored.add(current);
        }
      }
      TidalNative.allocate(handle, key, packAsks(restored), NO_IDS, null, null);
    }
  }

  @Override
  public Allocation allocate(ApplicationAttemptId attemptId, List<ResourceRequest> ask,
      List<ContainerId> release, List<String> blacklistAdditions,
      List<String> blacklistRemovals) {
    FiCaSchedulerApp application = getApplicationAttempt(attemptId);
    if (application == null || !application.getApplicationAttemptId().equals(attemptId)) {
      LOG.error("allocate called for unknown or previous attempt " + attemptId);
      return EMPTY_ALLOCATION;
    }
    Long key = attemptKeys.get(attemptId);
    if (key == null) {
      LOG.error("allocate called for attempt " + attemptId + " that the core does not know");
      return EMPTY_ALLOCATION;
    }
    SchedulerUtils.normalizeRequests(ask, calculator, clusterResource, minimumAllocation,
        getMaximumResourceCapability());
    long[] released = release(release, application);

    synchronized (application) {
      if (application.isStopped()) {
        LOG.info("allocate called for stopped attempt " + attemptId);
        return EMPTY_ALLOCATION;
      }
      if (!ask.isEmpty()) {
        application.updateResourceRequests(ask);
      }
      application.updateBlacklist(blacklistAdditions, blacklistRemovals);
      boolean noBlacklistChange = (blacklistAdditions == null || blacklistAdditions.isEmpty())
          && (blacklistRemovals == null || blacklistRemovals.isEmpty());
      if (!ask.isEmpty() || released.length > 0 || !noBlacklistChange) {
        try {
          TidalNative.allocate(handle, key, packAsks(ask), released,
              locations.internAll(blacklistAdditions), locations.internAll(blacklistRemovals));
        } catch (TidalException e) {
          // Containers already started must still reach the AM, so the call goes on.
          LOG.error("Tidal core rejected allocate of " + attemptId + ": " + e.getMessage(), e);
        }
      }
      ContainersAndNMTokensAllocation allocation =
          application.pullNewlyAllocatedContainersAndNMTokens();
      Resource headroom = application.getHeadroom();
      application.setApplicationHeadroomForMetrics(headroom);
      return new Allocation(allocation.getContainerList(), headroom, null, null, null,
          allocation.getNMTokenList());
    }
  }

  /** Completes released containers; returns the allocation ids this call freed. */
  private long[] release(List<ContainerId> release, FiCaSchedulerApp application) {
    if (release == null || release.isEmpty()) {
      return NO_IDS;
    }
    long[] ids = new long[release.size()];
    int count = 0;
    for (ContainerId containerId : release) {
      RMContainer container = getRMContainer(containerId);
      if (container == null) {
        // Hadoop's path: remember it across an RM restart or audit-log the bad release.
        releaseContainers(Collections.singletonList(containerId), application);
      } else if (finishContainer(container, SchedulerUtils.createAbnormalContainerStatus(
          containerId, SchedulerUtils.RELEASED_CONTAINER), RMContainerEventType.RELEASED)) {
        ids[count++] = containerId.getContainerId();
      }
    }
    return count == ids.length ? ids : Arrays.copyOf(ids, count);
  }

  private long[] packAsks(List<ResourceRequest> asks) {
    long[] packed = new long[asks.size() * TidalNative.ASK_STRIDE];
    int offset = 0;
    for (ResourceRequest ask : asks) {
      packed[offset + TidalNative.ASK_PRIORITY] = ask.getPriority().getPriority();
      packed[offset + TidalNative.ASK_LOCATION] = locations.intern(ask.getResourceName());
      packed[offset + TidalNative.ASK_NUM_CONTAINERS] = ask.getNumContainers();
      packed[offset + TidalNative.ASK_RELAX_LOCALITY] = ask.getRelaxLocality() ? 1 : 0;
      packed[offset + TidalNative.ASK_MEMORY_MB] = ask.getCapability().getMemory();
      packed[offset + TidalNative.ASK_VCORES] = ask.getCapability().getVirtualCores();
      offset += TidalNative.ASK_STRIDE;
    }
    return packed;
  }

  // ---------------------------------------------------------------------------------------
  // REST endpoint

  /** Now on the core's clock. */
  long coreNowMs() {
    return (System.nanoTime() - clockOriginNanos) / 1000000L;
  }

  /** A time of the core's clock as wall-clock milliseconds since 1970. */
  long wallClockMs(long coreMs) {
    return clockOriginWallMs + coreMs;
  }

  /** Where the REST endpoint listens, or null when it is not running. */
  public InetSocketAddress getRestAddress() {
    TidalRestServer server = restServer;
    return server == null ? null : server.address();
  }

  /** The core's queue status JSON (see {@link TidalNative#queueStatusJson}). */
  String queueStatusJson() {
    return TidalNative.queueStatusJson(handle);
  }

  /**
   * Registers a queue at run time for {@code user} and returns the core's verdict JSON. An
   * admitted queue gets its Hadoop-side handle right away, so apps can be submitted to it.
   */
  String registerQueue(String queueXml, String user, boolean admin) throws IOException {
    String verdict = TidalNative.registerQueue(handle, queueXml, user, admin);
    JsonNode node = JSON.readTree(verdict);
    String name = node.path("queue").getTextValue();
    if (name != null && !"rejected".equals(node.path("class").getTextValue())) {
      queue(fullQueueName(name));
    }
    LOG.info("User " + user + (admin ? " (administrator)" : "") + " registered queue " + name
        + ": " + node.path("class").getTextValue() + " (" + node.path("reason").getTextValue()
        + ")");
    return verdict;
  }

  /** Removes a queue registered at run time; the core checks that {@code user} may. */
  void unregisterQueue(String queue, String user, boolean admin) {
    TidalNative.unregisterQueue(handle, queue, user, admin);
    LOG.info("User " + user + (admin ? " (administrator)" : "") + " unregistered queue "
        + queue);
  }

  /**
   * The expected password of an AMRM token, from the RM's own secret manager. Throws
   * InvalidToken for attempts it no longer knows (finished) and for unknown master keys.
   */
  byte[] amRmTokenPassword(AMRMTokenIdentifier identifier) throws InvalidToken {
    return rmContext.getAMRMTokenSecretManager().retrievePassword(identifier);
  }

  /**
   * Passes an ApplicationMaster's hints to the core for its attempt, which the caller has
   * authenticated. Returns the core's reply JSON; a refused document leaves the app scheduled
   * as before and surfaces as a TidalException with the core's message.
   */
  String setHints(ApplicationAttemptId attemptId, String hintsJson) {
    Long key = attemptKeys.get(attemptId);
    if (key == null) {
      throw new TidalException("unknown application attempt " + attemptId
          + ": it is not scheduled (finished, or not yet added)");
    }
    String reply;
    try {
      reply = TidalNative.setHints(handle, key, hintsJson);
    } catch (TidalPanicException e) {
      throw e;
    } catch (TidalException e) {
      // The core names the app by its internal key; the AM knows its application id.
      String message = String.valueOf(e.getMessage()).replace("application " + key + ":",
          attemptId.getApplicationId() + ":");
      throw new TidalException(message);
    }
    LOG.debug("Hints of " + attemptId + " accepted: " + reply);
    return reply;
  }

  // ---------------------------------------------------------------------------------------
  // Queues

  /** The Java handle of a queue the core named, created with its parents on first use. */
  private TidalQueue queue(String fullName) {
    TidalQueue queue = queues.get(fullName);
    if (queue != null) {
      return queue;
    }
    synchronized (queues) {
      queue = queues.get(fullName);
      if (queue == null) {
        int dot = fullName.lastIndexOf('.');
        TidalQueue parent = dot > 0 ? queue(fullName.substring(0, dot)) : rootQueue;
        queue = new TidalQueue(this, fullName, parent, schedulerConf);
        queues.put(fullName, queue);
      }
      return queue;
    }
  }

  /** Creates the Java side of every queue the core reports. */
  private void syncQueues() throws IOException {
    for (QueueStatus.Leaf leaf : status().queues) {
      queue(leaf.name);
    }
  }

  private QueueStatus status() throws IOException {
    return QueueStatus.parse(TidalNative.queueStatusJson(handle));
  }

  /** "a" and "root.a" name the same queue; null and "" name the root. */
  static String fullQueueName(String queueName) {
    if (queueName == null || queueName.isEmpty()) {
      return ROOT_QUEUE;
    }
    if (queueName.equals(ROOT_QUEUE) || queueName.startsWith(ROOT_QUEUE + ".")) {
      return queueName;
    }
    return ROOT_QUEUE + "." + queueName;
  }

  /**
   * Throws IOException for an unknown queue, as {@code YarnScheduler} declares and its callers
   * expect (request validation skips the queue check on it, {@code yarn queue -status} reports
   * it). FifoScheduler narrowed the throws clause away, hence the unchecked rethrow.
   */
  @Override
  public QueueInfo getQueueInfo(String queueName, boolean includeChildQueues,
      boolean recursive) {
    try {
      QueueInfo info = queueInfo(status(), fullQueueName(queueName), includeChildQueues,
          recursive);
      if (info == null) {
        throw new IOException("Unknown queue: " + queueName);
      }
      return info;
    } catch (IOException e) {
      throw TidalScheduler.<RuntimeException>rethrowUnchecked(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E rethrowUnchecked(Throwable t) throws E {
    throw (E) t;
  }

  /** Queue info from a fresh core snapshot, or null when the core has no such queue. */
  QueueInfo queueInfo(String fullName, boolean includeChildQueues, boolean recursive) {
    try {
      return queueInfo(status(), fullName, includeChildQueues, recursive);
    } catch (IOException e) {
      LOG.error("Cannot read queue status: " + e.getMessage(), e);
      return null;
    }
  }

  private static QueueInfo queueInfo(QueueStatus status, String fullName,
      boolean includeChildQueues, boolean recursive) {
    QueueInfo info = Records.newRecord(QueueInfo.class);
    info.setQueueName(fullName);
    info.setQueueState(QueueState.RUNNING);
    info.setMaximumCapacity(1.0f);
    info.setApplications(Collections.<ApplicationReport>emptyList());
    if (fullName.equals(ROOT_QUEUE)) {
      info.setCapacity(1.0f);
      info.setCurrentCapacity((float) Math.max(
          share(status.usedMemoryMb(), status.clusterMemoryMb),
          share(status.usedVcores(), status.clusterVcores)));
    } else {
      QueueStatus.Leaf leaf = status.find(fullName);
      if (leaf == null) {
        return null;
      }
      // As in FairScheduler, both figures are fractions of the whole cluster.
      info.setCapacity((float) leaf.fairShare);
      info.setCurrentCapacity((float) leaf.dominantShare);
    }
    List<QueueInfo> children = new ArrayList<QueueInfo>();
    if (includeChildQueues) {
      for (QueueStatus.Leaf leaf : status.queues) {
        if (isChild(fullName, leaf.name)) {
          children.add(queueInfo(status, leaf.name, recursive, recursive));
        }
      }
    }
    info.setChildQueues(children);
    return info;
  }

  private static boolean isChild(String parent, String name) {
    return name.startsWith(parent + ".") && name.indexOf('.', parent.length() + 1) < 0;
  }

  private static double share(long used, long total) {
    return total <= 0 ? 0.0 : (double) used / total;
  }

  static QueueInfo stoppedQueueInfo(String fullName) {
    QueueInfo info = Records.newRecord(QueueInfo.class);
    info.setQueueName(fullName);
    info.setQueueState(QueueState.STOPPED);
    info.setChildQueues(new ArrayList<QueueInfo>());
    return info;
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo() {
    List<QueueUserACLInfo> infos = new ArrayList<QueueUserACLInfo>();
    infos.add(TidalQueue.userAclInfo(ROOT_QUEUE));
    try {
      for (QueueStatus.Leaf leaf : status().queues) {
        infos.add(TidalQueue.userAclInfo(leaf.name));
      }
    } catch (IOException e) {
      LOG.error("Cannot read queue status: " + e.getMessage(), e);
    }
    return infos;
  }

  @Override
  public QueueMetrics getRootQueueMetrics() {
    return rootQueue.getMetrics();
  }

  /** Tidal queues carry no ACLs: everyone may submit to and administer every queue. */
  @Override
  public boolean checkAccess(UserGroupInformation callerUGI, QueueACL acl, String queueName) {
    return true;
  }

  @Override
  public List<ApplicationAttemptId> getAppsInQueue(String queueName) {
    String fullName = fullQueueName(queueName);
    if (!queues.containsKey(fullName)) {
      return null;
    }
    List<ApplicationAttemptId> attempts = new ArrayList<ApplicationAttemptId>();
    for (SchedulerApplication<FiCaSchedulerApp> app : applications.values()) {
      String appQueue = app.getQueue().getQueueName();
      FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
      if (attempt != null && (fullName.equals(ROOT_QUEUE) || appQueue.equals(fullName)
          || appQueue.startsWith(fullName + "."))) {
        attempts.add(attempt.getApplicationAttemptId());
      }
    }
    return attempts;
  }

  @Override
  public String moveApplication(ApplicationId appId, String newQueue) throws YarnException {
    throw new YarnException("Tidal does not support moving applications between queues"
        + " (application " + appId + " to queue " + newQueue + ")");
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
    return usedResource;
  }
}
