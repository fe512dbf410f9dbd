package org.tidal.yarn.replay;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.net.NodeBase;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockAM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNodeImpl;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.UpdatedContainerInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeAddedSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairSchedulerConfiguration;
import org.apache.hadoop.yarn.util.resource.DominantResourceCalculator;
import org.apache.log4j.Level;
import org.apache.log4j.LogManager;
import org.tidal.yarn.FloorScheduler;
import org.tidal.yarn.RmLine;
import org.tidal.yarn.TidalScheduler;
import org.tidal.yarn.config.TidalConfig;

/**
 * Replays one synthetic event stream into a ResourceManager's scheduler the way Hadoop's own
 * scheduler tests drive theirs: a started MockRM supplies the RM's context (dispatcher, token
 * secret managers, container bookkeeping), and nodes, applications, attempts, allocate calls and
 * node heartbeats reach the scheduler synchronously on the calling thread, so that the time of each
 * {@code handle(NODE_UPDATE)} and {@code allocate()} is the scheduler's own.
 *
 * <p>Each round heartbeats every node once, with one application's allocate call after every {@code
 * nodes / apps} heartbeats. A heartbeat reports the containers its node's applications pulled since
 * the last one as launched, and those launched {@link Workload#lifetimeRounds} rounds ago as
 * completed, so capacity turns over. With {@link Workload#topUp} every allocate call asks for the
 * application's full pending count again (new tasks arrive as old ones are placed); without it each
 * application asks once.
 *
 * <p>Node host names are IP literals (127.x.y.z): Hadoop resolves a node's host name for every
 * container token it makes, and a literal resolves without a DNS lookup.
 */
public final class SchedulerReplay {
  /** The schedulers under comparison, configured alike: DRF, the same queues and weights. */
  public enum Kind {
    /**
     * Books the containers a Tidal run booked, heartbeat by heartbeat, with Hadoop's bookkeeping
     * and no decision of its own: the floor under any scheduler's heartbeat (see {@link
     * FloorScheduler}).
     */
    FLOOR("floor"),
    TIDAL("Tidal"),
    FAIR("FairScheduler"),
    CAPACITY("CapacityScheduler");

    /** The scheduler's name in reports. */
    public final String label;

    Kind(String label) {
      this.label = label;
    }
  }

  /** CapacityScheduler's configuration prefix. */
  private static final String CS = "yarn.scheduler.capacity.";

  /** FairScheduler's cap on containers per heartbeat (its key is not public in 2.7). */
  private static final String FAIR_MAX_ASSIGN = "yarn.scheduler.fair.max.assign";

  /** Containers per heartbeat for both schedulers, as the sample yarn-site.xml sets Tidal's. */
  private static final int MAX_ASSIGN = 10;

  private static final int NODE_MEMORY_MB = 16 * 1024;
  private static final int NODE_VCORES = 16;
  private static final int NODES_PER_RACK = 40;
  private static final int HOSTS_PER_ASK = 3;
  private static final Priority PRIORITY = Priority.newInstance(1);
  private static final long SETUP_TIMEOUT_MS = 60000;

  /** The shape of one replay. */
  public static final class Workload {
    final String name;
    final int nodes;
    final int apps;
    final int queues;
    final int asksPerApp;
    final int warmupRounds;
    final int rounds;
    final int lifetimeRounds;
    final boolean topUp;

    public Workload(
        String name,
        int nodes,
        int apps,
        int queues,
        int asksPerApp,
        int warmupRounds,
        int rounds,
        int lifetimeRounds,
        boolean topUp) {
      if (nodes < 1 || apps < 1 || apps > nodes || queues < 1 || asksPerApp < 1) {
        throw new IllegalArgumentException(
            "workload "
                + name
                + " needs at least one node, app, queue and ask, and no more apps than nodes");
      }
      if (nodes > 250 * 250) {
        throw new IllegalArgumentException("workload " + name + ": at most 62500 nodes");
      }
      this.name = name;
      this.nodes = nodes;
      this.apps = apps;
      this.queues = queues;
      this.asksPerApp = asksPerApp;
      this.warmupRounds = warmupRounds;
      this.rounds = rounds;
      this.lifetimeRounds = lifetimeRounds;
      this.topUp = topUp;
    }

    public String name() {
      return name;
    }

    public int nodes() {
      return nodes;
    }

    public int apps() {
      return apps;
    }

    public int pending() {
      return apps * asksPerApp;
    }
  }

  /** What one replay measured (the warm-up rounds excluded) and what each application got. */
  public static final class Result {
    public final Kind kind;
    public final Workload workload;
    public final long[] nodeUpdateNanos;
    public final long[] allocateNanos;

    /** Containers each measured allocate call handed out, in call order. */
    public final int[] allocateContainers;

    public final long containers;
    public final long completed;
    public final int[] containersPerApp;

    /** What a Tidal run booked on each heartbeat, for a floor run; null for other schedulers. */
    public final FloorScheduler.Plan plan;

    Result(
        Kind kind,
        Workload workload,
        long[] nodeUpdateNanos,
        long[] allocateNanos,
        int[] allocateContainers,
        long containers,
        long completed,
        int[] containersPerApp,
        FloorScheduler.Plan plan) {
      this.kind = kind;
      this.workload = workload;
      this.nodeUpdateNanos = nodeUpdateNanos;
      this.allocateNanos = allocateNanos;
      this.allocateContainers = allocateContainers;
      this.containers = containers;
      this.completed = completed;
      this.containersPerApp = containersPerApp;
      this.plan = plan;
    }

    /** Containers started per second of scheduler time (heartbeats and allocate calls). */
    public double containersPerSchedulerSecond() {
      long nanos = sum(nodeUpdateNanos) + sum(allocateNanos);
      return nanos == 0 ? 0 : containers * 1e9 / nanos;
    }

    private static long sum(long[] values) {
      long total = 0;
      for (long v : values) {
        total += v;
      }
      return total;
    }
  }

  /** A node whose heartbeats carry the container statuses the replay hands it. */
  private static final class ReplayNode extends RMNodeImpl {
    private final List<ContainerStatus> launched = new ArrayList<ContainerStatus>();
    private final List<ContainerStatus> completed = new ArrayList<ContainerStatus>();

    ReplayNode(NodeId id, RMContext context, String rack) {
      super(
          id,
          context,
          id.getHost(),
          id.getPort() + 1,
          id.getPort() + 2,
          new NodeBase(id.getHost(), rack),
          Resource.newInstance(NODE_MEMORY_MB, NODE_VCORES),
          "2.7.7");
    }

    /**
     * Running, as a node that heartbeats is; Hadoop 3's CapacityScheduler allocates on no other.
     */
    @Override
    public NodeState getState() {
      return NodeState.RUNNING;
    }

    @Override
    public List<UpdatedContainerInfo> pullContainerUpdates() {
      if (launched.isEmpty() && completed.isEmpty()) {
        return Collections.emptyList();
      }
      UpdatedContainerInfo update =
          RmLine.containerUpdates(
              new ArrayList<ContainerStatus>(launched), new ArrayList<ContainerStatus>(completed));
      launched.clear();
      completed.clear();
      return Collections.singletonList(update);
    }
  }

  private final Kind kind;
  private final Workload workload;
  private final File workDir;
  private final FloorScheduler.Plan plan;

  /** A replay under {@code kind}, which must not be {@link Kind#FLOOR}. */
  public SchedulerReplay(Kind kind, Workload workload, File workDir) {
    this(kind, workload, workDir, null);
  }

  /** A floor replay of what a Tidal replay of the same workload booked. */
  public SchedulerReplay(Workload workload, File workDir, FloorScheduler.Plan plan) {
    this(Kind.FLOOR, workload, workDir, plan);
  }

  private SchedulerReplay(Kind kind, Workload workload, File workDir, FloorScheduler.Plan plan) {
    if ((kind == Kind.FLOOR) != (plan != null)) {
      throw new IllegalArgumentException("a floor replay, and only one, follows a Tidal plan");
    }
    this.kind = kind;
    this.workload = workload;
    this.workDir = workDir;
    this.plan = plan;
  }

  /** Starts an RM with the scheduler, replays the workload into it and stops the RM. */
  public Result run() throws Exception {
    // Queue metrics are JVM-wide; each RM starts from none.
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.setMiniClusterMode(true);
    MockRM rm = new MockRM(configuration());
    // MockRM turns the root logger to DEBUG; the measured paths log at INFO and below only.
    LogManager.getRootLogger().setLevel(Level.WARN);
    rm.start();
    try {
      return replay(rm);
    } finally {
      rm.stop();
    }
  }

  private YarnConfiguration configuration() throws IOException {
    YarnConfiguration conf = new YarnConfiguration();
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 1024);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES, 1);
    // The AMs only register: the replay calls the scheduler's allocate directly, not through the
    // ApplicationMasterService, whose liveness monitor would otherwise expire them mid-run.
    conf.setInt(YarnConfiguration.RM_AM_EXPIRY_INTERVAL_MS, 3600 * 1000);
    StringBuilder queues = new StringBuilder();
    if (kind == Kind.TIDAL || kind == Kind.FLOOR) {
      queues.append("<tidal>\n  <policy>drf</policy>\n");
      for (int q = 0; q < workload.queues; q++) {
        queues.append("  <queue name=\"").append(queueName(q)).append("\"><weight>");
        queues.append(q + 1).append("</weight></queue>\n");
      }
      queues.append("</tidal>\n");
      conf.setClass(
          YarnConfiguration.RM_SCHEDULER,
          kind == Kind.FLOOR ? FloorScheduler.class : TidalScheduler.class,
          ResourceScheduler.class);
      conf.set(TidalConfig.ALLOCATION_FILE, write("tidal-queues.xml", queues));
      conf.setInt(TidalConfig.MAX_ASSIGN_PER_HEARTBEAT, MAX_ASSIGN);
      conf.setBoolean(TidalConfig.REST_ENABLED, false);
    } else if (kind == Kind.CAPACITY) {
      // Shares as the weights give them, elastic up to the whole cluster and with no cap per
      // user, as the fair schedulers share; no locality delay, as FairScheduler's default.
      conf.setClass(
          YarnConfiguration.RM_SCHEDULER, CapacityScheduler.class, ResourceScheduler.class);
      conf.set(CS + "resource-calculator", DominantResourceCalculator.class.getName());
      conf.setInt(CS + "node-locality-delay", -1);
      conf.setInt(CS + "per-node-heartbeat.maximum-container-assignments", MAX_ASSIGN);
      StringBuilder names = new StringBuilder();
      int weights = workload.queues * (workload.queues + 1) / 2;
      for (int q = 0; q < workload.queues; q++) {
        String queue = CS + "root." + queueName(q) + ".";
        names.append(q == 0 ? "" : ",").append(queueName(q));
        conf.setFloat(queue + "capacity", 100f * (q + 1) / weights);
        conf.setFloat(queue + "maximum-capacity", 100f);
        conf.setFloat(queue + "user-limit-factor", 100f);
      }
      conf.set(CS + "root.queues", names.toString());
    } else {
      queues.append("<allocations>\n");
      queues.append("  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>\n");
      for (int q = 0; q < workload.queues; q++) {
        queues.append("  <queue name=\"").append(queueName(q)).append("\"><weight>");
        queues.append(q + 1).append("</weight><schedulingPolicy>drf</schedulingPolicy></queue>\n");
      }
      queues.append("</allocations>\n");
      conf.setClass(YarnConfiguration.RM_SCHEDULER, FairScheduler.class, ResourceScheduler.class);
      conf.set(FairSchedulerConfiguration.ALLOCATION_FILE, write("fair-scheduler.xml", queues));
      conf.setBoolean(FairSchedulerConfiguration.ASSIGN_MULTIPLE, true);
      conf.setInt(FAIR_MAX_ASSIGN, MAX_ASSIGN);
    }
    return conf;
  }

  private String write(String name, CharSequence text) throws IOException {
    File file = new File(workDir, kind.name().toLowerCase() + "-" + workload.name + "-" + name);
    Files.write(file.toPath(), text.toString().getBytes(StandardCharsets.UTF_8));
    return file.getAbsolutePath();
  }

  private static String queueName(int q) {
    return "q" + (q + 1);
  }

  private Result replay(MockRM rm) throws Exception {
    Workload w = workload;
    RMContext context = rm.getRMContext();
    ResourceScheduler scheduler = rm.getResourceScheduler();
    List<ReplayNode> nodes = new ArrayList<ReplayNode>(w.nodes);
    Map<NodeId, ReplayNode> byId = new HashMap<NodeId, ReplayNode>();
    for (int n = 0; n < w.nodes; n++) {
      NodeId id = NodeId.newInstance("127.0." + (n / 250) + "." + (n % 250 + 1), 45454);
      ReplayNode node = new ReplayNode(id, context, "/rack-" + (n / NODES_PER_RACK));
      nodes.add(node);
      byId.put(id, node);
      scheduler.handle(new NodeAddedSchedulerEvent(node));
    }
    List<ApplicationAttemptId> attempts = startApps(rm);
    Map<ApplicationAttemptId, Integer> appIndex = new HashMap<ApplicationAttemptId, Integer>();
    for (int a = 0; a < attempts.size(); a++) {
      appIndex.put(attempts.get(a), a);
    }
    FloorScheduler.Plan recording = kind == Kind.TIDAL ? new FloorScheduler.Plan() : null;
    if (kind == Kind.FLOOR) {
      ((FloorScheduler) scheduler).follow(plan, attempts);
    }
    List<List<ResourceRequest>> asks = new ArrayList<List<ResourceRequest>>(w.apps);
    for (int a = 0; a < w.apps; a++) {
      asks.add(asksOf(a, nodes));
    }
    int[] containersPerApp = new int[w.apps];
    boolean[] asked = new boolean[w.apps];
    // Containers launched per round, completed lifetimeRounds later.
    List<List<Container>> launchedByRound = new ArrayList<List<Container>>();
    int totalRounds = w.warmupRounds + w.rounds;
    long[] nodeUpdateNanos = new long[w.rounds * w.nodes];
    long[] allocateNanos = new long[w.rounds * w.apps];
    int[] allocateContainers = new int[w.rounds * w.apps];
    int nodeUpdates = 0;
    int allocates = 0;
    long containers = 0;
    long completed = 0;
    int stride = w.nodes / w.apps;
    Map<NodeId, List<Container>> pulled = new HashMap<NodeId, List<Container>>();
    for (int round = 0; round < totalRounds; round++) {
      // A round is a heartbeat interval, in which a scheduler's periodic work runs too.
      RmLine.periodicWork(scheduler);
      boolean measured = round >= w.warmupRounds;
      List<Container> launchedNow = new ArrayList<Container>();
      launchedByRound.add(launchedNow);
      if (round >= w.lifetimeRounds) {
        for (Container done : launchedByRound.get(round - w.lifetimeRounds)) {
          byId.get(done.getNodeId()).completed.add(completedStatus(done.getId()));
          completed += measured ? 1 : 0;
        }
        launchedByRound.set(round - w.lifetimeRounds, null);
      }
      for (int n = 0; n < w.nodes; n++) {
        ReplayNode node = nodes.get(n);
        List<Container> toLaunch = pulled.remove(node.getNodeID());
        if (toLaunch != null) {
          for (Container c : toLaunch) {
            node.launched.add(
                ContainerStatus.newInstance(c.getId(), ContainerState.RUNNING, "", 0));
          }
          launchedNow.addAll(toLaunch);
        }
        long start = System.nanoTime();
        scheduler.handle(new NodeUpdateSchedulerEvent(node));
        long took = System.nanoTime() - start;
        if (measured) {
          nodeUpdateNanos[nodeUpdates++] = took;
        }
        if (recording != null) {
          recording.record((TidalScheduler) scheduler, node.getNodeID(), appIndex);
        }
        if (n % stride == 0 && n / stride < w.apps) {
          int a = n / stride;
          List<ResourceRequest> ask =
              w.topUp || !asked[a] ? copy(asks.get(a)) : new ArrayList<ResourceRequest>();
          asked[a] = true;
          start = System.nanoTime();
          List<Container> got =
              RmLine.allocate(
                      scheduler,
                      attempts.get(a),
                      ask,
                      Collections.<ContainerId>emptyList(),
                      null,
                      null)
                  .getContainers();
          took = System.nanoTime() - start;
          if (measured) {
            allocateContainers[allocates] = got.size();
            allocateNanos[allocates++] = took;
            containers += got.size();
          }
          containersPerApp[a] += got.size();
          for (Container c : got) {
            pulled.computeIfAbsent(c.getNodeId(), k -> new ArrayList<Container>()).add(c);
          }
        }
      }
    }
    return new Result(
        kind,
        w,
        Arrays.copyOf(nodeUpdateNanos, nodeUpdates),
        Arrays.copyOf(allocateNanos, allocates),
        Arrays.copyOf(allocateContainers, allocates),
        containers,
        completed,
        containersPerApp,
        recording);
  }

  /**
   * Submits the applications through the RM, as a client would, each with an unmanaged AM (no AM
   * container takes room), and registers their AMs; the RM hands APP_ADDED and APP_ATTEMPT_ADDED to
   * the scheduler on its dispatcher. Applications go round-robin into the queues.
   */
  private List<ApplicationAttemptId> startApps(MockRM rm) throws Exception {
    List<RMApp> apps = new ArrayList<RMApp>(workload.apps);
    for (int a = 0; a < workload.apps; a++) {
      apps.add(
          RmLine.submit(
              rm,
              1024,
              "replay-" + a,
              "user" + a,
              queueName(a % workload.queues),
              true,
              1,
              "YARN",
              false,
              false));
    }
    List<ApplicationAttemptId> attempts = new ArrayList<ApplicationAttemptId>(apps.size());
    for (RMApp app : apps) {
      awaitAttempt(app, RMAppAttemptState.LAUNCHED);
      RMAppAttempt attempt = app.getCurrentAppAttempt();
      new MockAM(rm.getRMContext(), rm.getApplicationMasterService(), attempt.getAppAttemptId())
          .registerAppAttempt();
      awaitAttempt(app, RMAppAttemptState.RUNNING);
      attempts.add(attempt.getAppAttemptId());
    }
    return attempts;
  }

  private static void awaitAttempt(RMApp app, RMAppAttemptState state) throws InterruptedException {
    long deadline = System.currentTimeMillis() + SETUP_TIMEOUT_MS;
    while (app.getCurrentAppAttempt() == null
        || app.getCurrentAppAttempt().getAppAttemptState() != state) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException(
            app.getApplicationId()
                + " did not reach "
                + state
                + " (application "
                + app.getState()
                + ", diagnostics: "
                + app.getDiagnostics()
                + ")");
      }
      Thread.sleep(1);
    }
  }

  /**
   * An application's asks: a few preferred hosts in one rack, the rack and ANY, each for the
   * application's whole pending count, with sizes that differ between applications so that DRF has
   * two dominant resources to weigh.
   */
  private List<ResourceRequest> asksOf(int app, List<ReplayNode> nodes) {
    Resource size = Resource.newInstance(1024 * (1 + app % 2), 1 + (app % 3 == 0 ? 1 : 0));
    int count = workload.asksPerApp;
    List<ResourceRequest> asks = new ArrayList<ResourceRequest>();
    ReplayNode first = nodes.get((app * 7) % nodes.size());
    for (int h = 0; h < HOSTS_PER_ASK && h < nodes.size(); h++) {
      ReplayNode host = nodes.get(((app * 7) + h) % nodes.size());
      asks.add(ResourceRequest.newInstance(PRIORITY, host.getHostName(), size, count));
    }
    asks.add(ResourceRequest.newInstance(PRIORITY, first.getRackName(), size, count));
    asks.add(ResourceRequest.newInstance(PRIORITY, ResourceRequest.ANY, size, count));
    return asks;
  }

  /** Fresh records per call: schedulers normalise asks in place. */
  private static List<ResourceRequest> copy(List<ResourceRequest> asks) {
    List<ResourceRequest> copies = new ArrayList<ResourceRequest>(asks.size());
    for (ResourceRequest r : asks) {
      copies.add(
          ResourceRequest.newInstance(
              r.getPriority(), r.getResourceName(), r.getCapability(), r.getNumContainers()));
    }
    return copies;
  }

  private static ContainerStatus completedStatus(ContainerId id) {
    return ContainerStatus.newInstance(id, ContainerState.COMPLETE, "", 0);
  }
}
