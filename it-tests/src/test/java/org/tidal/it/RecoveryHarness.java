package org.tidal.it;

import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.ha.HAServiceProtocol.HAServiceState;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.conf.HAUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;

/**
 * A mini cluster whose ResourceManager can go away while its NodeManagers and their containers
 * stay: restarted in place (one RM, work-preserving recovery from a FileSystemRMStateStore) or
 * failed over to a standby (two RMs, ZKRMStateStore and the embedded ZooKeeper elector).
 *
 * <p>Hadoop 2.7's MiniYARNCluster normally hands each NodeManager the RM's ResourceTrackerService
 * object directly instead of an RPC client, fetched once when the NodeManager starts; a restarted
 * or failed-over RM would never hear from it again. Here the NodeManagers use RPC ({@code
 * yarn.minicluster.use-rpc}, which needs fixed ports), and every RM address is a free loopback port
 * chosen up front, so a new RM listens where the old one did (one RM) or where clients fail over to
 * (HA). A NodeManager then finds the new RM on its own: the RM does not know the node, answers its
 * heartbeat with RESYNC, and the NodeManager registers again with the containers it runs, as on a
 * real cluster.
 *
 * <p>A restart stops the RM through the mini cluster and starts a fresh ResourceManager, kept here,
 * on the cluster's configuration: the mini cluster's own restartResourceManager would do the same
 * but start a plain ResourceManager, which {@link RmProbe} could not observe from its start.
 *
 * <p>Two RMs in one JVM share more than a real HA pair: the cluster's configuration object (see
 * {@link #clientConf}), the static queue metrics registry, in which the standby's scheduler finds
 * the active one's queue metrics (metrics only: a restart clears them, a failover cannot), and the
 * one servlet pipeline of their web UIs (see RmWebPipeline), which these tests do not use.
 *
 * <p>NodeManagers run {@link ContainerLedger}; every RM is observed by {@link RmProbe}.
 */
final class RecoveryHarness implements AutoCloseable {
  /**
   * How long a recovered RM waits for NodeManagers to re-register before it schedules new
   * containers (Hadoop's default is 10 s); the NodeManagers here are back within about a second.
   */
  static final long SCHEDULING_WAIT_MILLIS = 3000;

  /** The RM addresses a client, a NodeManager or an AM may need, each set to a fixed port. */
  private static final String[] RM_ADDRESSES = {
    YarnConfiguration.RM_ADDRESS,
    YarnConfiguration.RM_SCHEDULER_ADDRESS,
    YarnConfiguration.RM_ADMIN_ADDRESS,
    YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS,
    YarnConfiguration.RM_WEBAPP_ADDRESS,
    YarnConfiguration.RM_WEBAPP_HTTPS_ADDRESS,
  };

  /** When one RM change happened, in System.nanoTime(). */
  static final class Switch {
    final String kind;
    long stopping;
    long stopped;
    long active;
    long nodesBack;
    long epoch;

    Switch(String kind) {
      this.kind = kind;
    }

    /** Seconds from the moment the old RM began to stop. */
    double secondsSinceStop(long nanos) {
      return nanos < 0 ? Double.NaN : (nanos - stopping) / 1e9;
    }
  }

  /** A ResourceManager that {@link RmProbe} observes from its initialisation on. */
  private static final class ObservedResourceManager extends ResourceManager {
    private final boolean heartbeats;

    ObservedResourceManager(boolean heartbeats) {
      this.heartbeats = heartbeats;
    }

    @Override
    protected void doSecureLogin() {
      // No Kerberos in the mini cluster.
    }

    /**
     * Called each time the RM creates its active services, right after the scheduler and on the
     * dispatcher those services use: the place to listen before anything is scheduled.
     */
    @Override
    protected EventHandler<SchedulerEvent> createSchedulerEventDispatcher() {
      RmProbe.watchAllocations(rmContext.getDispatcher());
      return new SchedulerEventDispatcher(
          heartbeats ? RmProbe.observeHeartbeats(scheduler, rmContext) : scheduler);
    }
  }

  private final SchedulerUnderTest scheduler;
  private final MiniYARNCluster cluster;
  private final boolean heartbeats;

  /** Every RM address key this harness set, with the address it chose. */
  private final Map<String, String> rmAddresses;

  /** The RM of the last restart; the mini cluster no longer manages one then. */
  private ResourceManager restarted;

  private RecoveryHarness(
      SchedulerUnderTest scheduler,
      MiniYARNCluster cluster,
      boolean heartbeats,
      Map<String, String> rmAddresses) {
    this.scheduler = scheduler;
    this.cluster = cluster;
    this.heartbeats = heartbeats;
    this.rmAddresses = rmAddresses;
  }

  /** One RM without recovery; {@code heartbeats} has {@link RmProbe} record node heartbeats. */
  static RecoveryHarness single(
      SchedulerUnderTest scheduler, boolean heartbeats, Consumer<Configuration> overrides)
      throws Exception {
    return start(scheduler, 1, heartbeats, overrides);
  }

  /** One RM with work-preserving recovery from a FileSystemRMStateStore under {@code stateDir}. */
  static RecoveryHarness restartable(
      SchedulerUnderTest scheduler, File stateDir, Consumer<Configuration> overrides)
      throws Exception {
    return start(
        scheduler,
        1,
        false,
        conf -> {
          workPreserving(conf);
          conf.set(YarnConfiguration.RM_STORE, FileSystemRMStateStore.class.getName());
          conf.set(
              YarnConfiguration.FS_RM_STATE_STORE_URI,
              new File(stateDir, "rm-state").toURI().toString());
          overrides.accept(conf);
        });
  }

  /**
   * Two RMs in HA with automatic failover (the embedded elector) and work-preserving recovery, both
   * on the ZooKeeper at {@code zooKeeper}.
   */
  static RecoveryHarness highlyAvailable(
      SchedulerUnderTest scheduler, String zooKeeper, Consumer<Configuration> overrides)
      throws Exception {
    return start(
        scheduler,
        2,
        false,
        conf -> {
          workPreserving(conf);
          conf.set(YarnConfiguration.RM_STORE, ZKRMStateStore.class.getName());
          conf.set(YarnConfiguration.RM_ZK_ADDRESS, zooKeeper);
          conf.setInt(YarnConfiguration.RM_ZK_TIMEOUT_MS, 5000);
          conf.set(YarnConfiguration.RM_CLUSTER_ID, "it-cluster");
          conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_ENABLED, true);
          conf.setBoolean(YarnConfiguration.AUTO_FAILOVER_EMBEDDED, true);
          // Clients, NodeManagers and AMs try the other RM after 0.1 s, backing off to 1 s.
          conf.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_BASE_MS, 100);
          conf.setLong(YarnConfiguration.CLIENT_FAILOVER_SLEEPTIME_MAX_MS, 1000);
          overrides.accept(conf);
        });
  }

  private static void workPreserving(Configuration conf) {
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    conf.setLong(
        YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, SCHEDULING_WAIT_MILLIS);
  }

  private static RecoveryHarness start(
      SchedulerUnderTest scheduler,
      int resourceManagers,
      boolean heartbeats,
      Consumer<Configuration> overrides)
      throws Exception {
    MiniClusterHarness.requireLoopbackHostname();
    Configuration conf = MiniClusterHarness.baseConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, scheduler.schedulerClass());
    scheduler.configure(conf);

    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    String host = MiniYARNCluster.getHostname();
    Map<String, String> rmAddresses = new LinkedHashMap<>();
    if (resourceManagers == 1) {
      for (String key : RM_ADDRESSES) {
        rmAddresses.put(key, host + ":" + FreePorts.belowEphemeral(host));
      }
    } else {
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < resourceManagers; i++) {
        ids.add("rm" + i);
      }
      conf.set(YarnConfiguration.RM_HA_IDS, String.join(",", ids));
      for (String id : ids) {
        for (String key : RM_ADDRESSES) {
          rmAddresses.put(HAUtil.addSuffix(key, id), host + ":" + FreePorts.belowEphemeral(host));
        }
      }
    }
    rmAddresses.forEach(conf::set);
    // Whoever loses the RM (NodeManager, AM, client) retries every 250 ms for up to 2 min,
    // instead of every 30 s for up to 15 min.
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 250);
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 120_000);
    conf.setInt(CommonConfigurationKeysPublic.IPC_CLIENT_CONNECT_MAX_RETRIES_KEY, 4);
    conf.setInt(CommonConfigurationKeysPublic.IPC_CLIENT_CONNECT_RETRY_INTERVAL_KEY, 250);
    // Each task attempt runs once unless something goes wrong: nothing is run twice on purpose.
    conf.setBoolean(MRJobConfig.MAP_SPECULATIVE, false);
    conf.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, false);
    conf.setStrings(
        YarnConfiguration.NM_AUX_SERVICES,
        ShuffleHandler.MAPREDUCE_SHUFFLE_SERVICEID,
        ContainerLedger.NAME);
    conf.setClass(
        String.format(YarnConfiguration.NM_AUX_SERVICE_FMT, ContainerLedger.NAME),
        ContainerLedger.class,
        Service.class);
    overrides.accept(conf);

    RmProbe.reset();
    MiniYARNCluster cluster =
        new MiniYARNCluster(
            "it-recovery-" + scheduler.name().toLowerCase(Locale.ROOT),
            resourceManagers,
            HarnessSettings.NODE_MANAGERS,
            1,
            1) {
          @Override
          protected ResourceManager createResourceManager() {
            return new ObservedResourceManager(heartbeats);
          }
        };
    RecoveryHarness harness = new RecoveryHarness(scheduler, cluster, heartbeats, rmAddresses);
    try {
      cluster.init(conf);
      cluster.start();
      ResourceManager rm = harness.awaitActive(TimeUnit.SECONDS.toNanos(60));
      harness.awaitNodes(rm, TimeUnit.SECONDS.toNanos(60));
      List<Context> contexts = new ArrayList<>();
      for (int i = 0; i < HarnessSettings.NODE_MANAGERS; i++) {
        contexts.add(cluster.getNodeManager(i).getNMContext());
      }
      ContainerLedger.reset(contexts);
    } catch (Exception | Error e) {
      harness.close();
      throw e;
    }
    return harness;
  }

  SchedulerUnderTest scheduler() {
    return scheduler;
  }

  /**
   * Client configuration (for the AMs too, through their jobs): every RM address, and in HA the RM
   * ids, so that clients fail over.
   *
   * <p>The RMs of one JVM share the cluster's configuration object. Each RM sets its own id there
   * at initialisation, so the id is the last RM's when the first one starts, and an HA RM that
   * starts a service writes the address it bound under its current id's key: the first RM's
   * addresses end up under the second RM's keys, and a client copying them could never reach the
   * second RM once the first is gone. The addresses chosen here are what every RM binds.
   */
  Configuration clientConf() {
    Configuration conf = new Configuration(cluster.getConfig());
    conf.unset(YarnConfiguration.RM_HA_ID);
    rmAddresses.forEach(conf::set);
    return conf;
  }

  /** The active RM, or null while there is none. */
  ResourceManager activeRm() {
    if (restarted != null) {
      return restarted;
    }
    int count = cluster.getNumOfResourceManager();
    for (int i = 0; i < count; i++) {
      ResourceManager rm = cluster.getResourceManager(i);
      if (rm == null || rm.getServiceState() != Service.STATE.STARTED) {
        continue;
      }
      if (count == 1 || rm.getRMContext().getHAServiceState() == HAServiceState.ACTIVE) {
        return rm;
      }
    }
    return null;
  }

  /** The Tidal endpoint of the active RM. */
  TidalRest tidalRest() {
    return TidalRest.of(activeRm());
  }

  /** Stops the only RM and starts a new one on the same ports and state store. */
  Switch restart() throws Exception {
    if (cluster.getNumOfResourceManager() != 1) {
      throw new IllegalStateException("restart() is for a single RM; use failover()");
    }
    Switch s = new Switch("restart");
    s.stopping = System.nanoTime();
    if (restarted != null) {
      restarted.stop();
      restarted = null;
    } else {
      cluster.stopResourceManager(0);
    }
    s.stopped = System.nanoTime();
    // A new RM process starts with no queue metrics; the old RM's are in a static registry.
    QueueMetrics.clearQueueMetrics();
    ResourceManager rm = new ObservedResourceManager(heartbeats);
    rm.init(cluster.getConfig());
    rm.start();
    restarted = rm;
    s.active = System.nanoTime();
    s.epoch = rm.getRMContext().getEpoch();
    awaitNodes(rm, TimeUnit.SECONDS.toNanos(60));
    s.nodesBack = System.nanoTime();
    restartEndedHeartbeats();
    return s;
  }

  /** Stops the active RM of an HA pair and waits for the standby to take over. */
  Switch failover() throws Exception {
    int count = cluster.getNumOfResourceManager();
    if (count < 2) {
      throw new IllegalStateException("failover() needs two RMs");
    }
    int active = -1;
    for (int i = 0; i < count; i++) {
      if (cluster.getResourceManager(i) == activeRm()) {
        active = i;
      }
    }
    if (active < 0) {
      throw new IllegalStateException("no active RM to fail over from");
    }
    Switch s = new Switch("failover from rm" + active);
    s.stopping = System.nanoTime();
    cluster.stopResourceManager(active);
    s.stopped = System.nanoTime();
    ResourceManager rm = awaitActive(TimeUnit.SECONDS.toNanos(60));
    s.active = System.nanoTime();
    s.epoch = rm.getRMContext().getEpoch();
    awaitNodes(rm, TimeUnit.SECONDS.toNanos(60));
    s.nodesBack = System.nanoTime();
    restartEndedHeartbeats();
    return s;
  }

  private ResourceManager awaitActive(long timeoutNanos) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      ResourceManager rm = activeRm();
      if (rm != null) {
        return rm;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no " + scheduler.displayName() + " RM became active within 60 s");
      }
      Thread.sleep(50);
    }
  }

  /** After a resync: see {@link HeartbeatThreadRepair}. */
  private void restartEndedHeartbeats() {
    for (int i = 0; i < HarnessSettings.NODE_MANAGERS; i++) {
      NodeManager nm = cluster.getNodeManager(i);
      HeartbeatThreadRepair.restartIfEnded(
          nm.getNodeStatusUpdater(), String.valueOf(nm.getNMContext().getNodeId()));
    }
  }

  /** Waits until every NodeManager is registered and running with {@code rm}. */
  private void awaitNodes(ResourceManager rm, long timeoutNanos) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      int running = 0;
      for (RMNode node : rm.getRMContext().getRMNodes().values()) {
        if (node.getState() == NodeState.RUNNING) {
          running++;
        }
      }
      if (running == HarnessSettings.NODE_MANAGERS) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            running
                + " of "
                + HarnessSettings.NODE_MANAGERS
                + " NodeManagers registered with the "
                + scheduler.displayName()
                + " RM within 60 s");
      }
      Thread.sleep(50);
    }
  }

  /**
   * Stops the NodeManagers side by side first (each waits some 14 s for its finished apps' log
   * timers), then the RMs.
   */
  @Override
  public void close() {
    List<Thread> stoppers = new ArrayList<>();
    for (int i = 0; i < HarnessSettings.NODE_MANAGERS; i++) {
      NodeManager nm = cluster.getNodeManager(i);
      if (nm == null) {
        continue;
      }
      Thread t = new Thread(nm::stop, "stop-nm-" + i);
      t.start();
      stoppers.add(t);
    }
    for (Thread t : stoppers) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(60));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (restarted != null) {
      restarted.stop();
      restarted = null;
    }
    cluster.stop();
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
  }
}
