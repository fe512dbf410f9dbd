package org.tidal.it3;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.commons.io.FileUtils;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.v2.jobhistory.JHAdminConfig;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.service.Service;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.util.resource.ResourceUtils;
import org.tidal.it.workload.WorkloadCluster;

/**
 * A Hadoop 3.4 ResourceManager with Tidal plugged in by class name, as yarn-site.xml would, and two
 * NodeManagers running the MapReduce shuffle service, all in this JVM (MiniYARNCluster). AMs and
 * tasks run as child JVMs on this JVM's class path. There is no JobHistoryServer: clients take a
 * finished job's state from the RM. Small enough for a 2-core machine: 2 x (3 GB, 3 vcores), 512 MB
 * and 1 vcore per container, so vcores are every queue's dominant resource.
 */
final class TidalMiniCluster implements WorkloadCluster {
  static final int NODE_MANAGERS = 2;
  static final int NM_MEMORY_MB = 3072;
  static final int NM_VCORES = 3;
  static final int CONTAINER_MB = 512;

  /**
   * Container JVMs: a heap well inside CONTAINER_MB; C1 only and the serial collector cut start-up
   * CPU on a small machine.
   */
  static final String CHILD_OPTS =
      "-Xmx200m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData";

  /** Hadoop 3's resource type for GPUs. */
  static final String GPU = "yarn.io/gpu";

  private final MiniYARNCluster cluster;
  private final boolean resourceTypes;
  private final String schedulerName;

  private TidalMiniCluster(MiniYARNCluster cluster, boolean resourceTypes, String schedulerName) {
    this.cluster = cluster;
    this.resourceTypes = resourceTypes;
    this.schedulerName = schedulerName;
  }

  /**
   * Starts the cluster under {@code scheduler}: TIDAL with the queue file {@code
   * tidal-two-queues.xml}, FAIR (FairScheduler, DRF) with its equivalent, or CAPACITY
   * (CapacityScheduler with the dominant resource calculator) with the same two queues at half the
   * cluster each, elastic to all of it.
   */
  static TidalMiniCluster startTwoQueues(String scheduler) throws Exception {
    Configuration conf = configuration(resourcePath("tidal-two-queues.xml"));
    switch (scheduler) {
      case "TIDAL":
        return start("demo-tidal", conf, false, "Tidal");
      case "FAIR":
        conf.set(
            YarnConfiguration.RM_SCHEDULER,
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler");
        conf.set(
            "yarn.scheduler.fair.allocation.file", resourcePath("fair-scheduler-two-queues.xml"));
        // Jobs must land in the queue they name, never in a per-user queue.
        conf.setBoolean("yarn.scheduler.fair.user-as-default-queue", false);
        conf.setBoolean("yarn.scheduler.fair.allow-undeclared-pools", false);
        return start("demo-fair", conf, false, "FairScheduler");
      case "CAPACITY":
        conf.set(
            YarnConfiguration.RM_SCHEDULER,
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler");
        conf.set("yarn.scheduler.capacity.root.queues", "a,b");
        for (String q : new String[] {"a", "b"}) {
          conf.set("yarn.scheduler.capacity.root." + q + ".capacity", "50");
          conf.set("yarn.scheduler.capacity.root." + q + ".maximum-capacity", "100");
          conf.set("yarn.scheduler.capacity.root." + q + ".user-limit-factor", "2");
        }
        conf.set(
            "yarn.scheduler.capacity.resource-calculator",
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
        return start("demo-capacity", conf, false, "CapacityScheduler");
      default:
        throw new IllegalArgumentException(
            "scheduler must be TIDAL, FAIR or CAPACITY, not " + scheduler);
    }
  }

  /** Starts the cluster with the queue file {@code queueResource} (a test resource). */
  static TidalMiniCluster start(String name, String queueResource) throws Exception {
    return start(name, queueResource, 0);
  }

  /**
   * Starts the cluster with the queue file {@code queueResource} and Hadoop's placement processor
   * ({@code yarn.resourcemanager.placement-constraints.handler=placement-processor}): scheduling
   * requests with placement constraints are placed by the processor, which asks Tidal to commit
   * each container on the node it picked.
   */
  static TidalMiniCluster startWithPlacementProcessor(String name, String queueResource)
      throws Exception {
    Configuration conf = configuration(resourcePath(queueResource));
    conf.set(
        YarnConfiguration.RM_PLACEMENT_CONSTRAINTS_HANDLER,
        YarnConfiguration.PROCESSOR_RM_PLACEMENT_CONSTRAINTS_HANDLER);
    return start(name, conf, false, "Tidal");
  }

  /**
   * Starts a cluster whose RM can restart while its NodeManagers and their containers stay:
   * work-preserving recovery from a FileSystemRMStateStore under the work directory, with Tidal's
   * own state beside it (its default). The NodeManagers reach the RM over RPC at YARN's default
   * ports (fixed, so that a restarted RM listens where the old one did: 8030-8033, 8088, 8090,
   * which must be free), and find a restarted RM on their own: it answers their heartbeat with
   * RESYNC and they register again with the containers they run, as on a real cluster.
   */
  static TidalMiniCluster startRestartable(String name, String queueResource) throws Exception {
    Configuration conf = configuration(resourcePath(queueResource));
    File store = new File(workDir(), "rm-state-" + name);
    FileUtils.deleteDirectory(store);
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.setBoolean(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_ENABLED, true);
    // The NodeManagers are back within about a second; Hadoop waits 10 s by default.
    conf.setLong(YarnConfiguration.RM_WORK_PRESERVING_RECOVERY_SCHEDULING_WAIT_MS, 3000);
    conf.set(YarnConfiguration.RM_STORE, FileSystemRMStateStore.class.getName());
    conf.set(YarnConfiguration.FS_RM_STATE_STORE_URI, store.toURI().toString());
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
    conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_USE_RPC, true);
    // Whoever loses the RM (NodeManager, AM, client) retries every 250 ms for up to 2 min.
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 250);
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_MAX_WAIT_MS, 120_000);
    // Each task runs once unless something goes wrong: nothing runs twice on purpose.
    conf.setBoolean(MRJobConfig.MAP_SPECULATIVE, false);
    conf.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, false);
    return start(name, conf, false, "Tidal");
  }

  /**
   * Stops the RM and starts a new one on the same configuration, ports and state store; returns
   * once it is active and every NodeManager has registered with it again.
   */
  void restartResourceManager() throws Exception {
    cluster.restartResourceManager(0);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (resourceManager().getRMContext().getRMNodes().size() < NODE_MANAGERS) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("NodeManagers did not register with the restarted RM");
      }
      Thread.sleep(100);
    }
  }

  /**
   * Starts the cluster with {@code gpusPerNode} GPUs on every NodeManager when positive: {@link
   * #GPU} declared as a resource type and advertised by configuration, as an operator without GPU
   * discovery would (no GPU is needed). Resource types live in static state, set here for the whole
   * JVM (daemons and test clients alike) and reset by {@link #close}.
   */
  static TidalMiniCluster start(String name, String queueResource, int gpusPerNode)
      throws Exception {
    Configuration conf = configuration(resourcePath(queueResource));
    if (gpusPerNode > 0) {
      conf.set(YarnConfiguration.RESOURCE_TYPES, GPU);
      conf.setInt(YarnConfiguration.NM_RESOURCES_PREFIX + GPU, gpusPerNode);
      ResourceUtils.resetResourceTypes(conf);
      // NodeManagers read their resources once per JVM unless told to read them again.
      ResourceUtils.resetNodeResources();
    }
    return start(name, conf, gpusPerNode > 0, "Tidal");
  }

  private static TidalMiniCluster start(
      String name, Configuration conf, boolean resourceTypes, String schedulerName)
      throws Exception {
    requireLoopbackHostname();
    // MiniYARNCluster puts its work dir under ./target, i.e. this module's target/.
    MiniYARNCluster cluster = new MiniYARNCluster("it3-" + name, 1, NODE_MANAGERS, 1, 1);
    try {
      cluster.init(conf);
      cluster.start();
      if (!cluster.waitForNodeManagersToConnect(TimeUnit.SECONDS.toMillis(60))) {
        throw new IllegalStateException("NodeManagers did not register with the RM");
      }
    } catch (Exception | Error e) {
      cluster.stop();
      resetResourceTypes(resourceTypes);
      throw e;
    }
    return new TidalMiniCluster(cluster, resourceTypes, schedulerName);
  }

  private static Configuration configuration(String queueFile) {
    Configuration conf = new YarnConfiguration();
    String workDir = workDir();
    conf.set("hadoop.tmp.dir", new File(workDir, "hadoop-tmp").getAbsolutePath());

    conf.set(YarnConfiguration.RM_SCHEDULER, "org.tidal.yarn.TidalScheduler");
    conf.set("tidal.allocation.file", queueFile);
    // A free port on loopback; the tests ask the scheduler which (getRestAddress).
    conf.set("tidal.rest.address", "127.0.0.1:0");
    conf.setInt("tidal.max-assign-per-heartbeat", 10);

    // MapReduce on YARN, with the shuffle service every NodeManager must run for reducers.
    conf.set(MRConfig.FRAMEWORK_NAME, MRConfig.YARN_FRAMEWORK_NAME);
    conf.set(MRJobConfig.MR_AM_STAGING_DIR, new File(workDir, "staging").getAbsolutePath());
    conf.setStrings(YarnConfiguration.NM_AUX_SERVICES, ShuffleHandler.MAPREDUCE_SHUFFLE_SERVICEID);
    conf.setClass(
        String.format(
            YarnConfiguration.NM_AUX_SERVICE_FMT, ShuffleHandler.MAPREDUCE_SHUFFLE_SERVICEID),
        ShuffleHandler.class,
        Service.class);
    conf.setInt(ShuffleHandler.SHUFFLE_PORT_CONFIG_KEY, 0);
    // No JobHistoryServer: an empty address makes the MR client report finished jobs from the
    // RM's final status instead of retrying a server that is not there.
    conf.set(JHAdminConfig.MR_HISTORY_ADDRESS, "");
    conf.setBoolean(MRJobConfig.JOB_UBERTASK_ENABLE, false);

    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, NM_MEMORY_MB);
    conf.setInt(YarnConfiguration.NM_VCORES, NM_VCORES);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 256);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, NM_MEMORY_MB);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES, 1);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, NM_VCORES);
    // Faster node heartbeats mean faster reassignment of freed containers.
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 500);
    // A JDK 17 JVM reserves far more address space than 2.1 x its container's memory.
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    // A nearly full build disk must not turn the NodeManagers unhealthy.
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.5f);
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, false);

    // MapReduce: small containers and heaps; the AM's web app needs this JVM's --add-opens.
    conf.setInt(MRJobConfig.MR_AM_VMEM_MB, CONTAINER_MB);
    conf.set(MRJobConfig.MR_AM_COMMAND_OPTS, amJavaOpts());
    conf.setInt(MRJobConfig.MAP_MEMORY_MB, CONTAINER_MB);
    conf.set(MRJobConfig.MAP_JAVA_OPTS, CHILD_OPTS);
    conf.setInt(MRJobConfig.REDUCE_MEMORY_MB, CONTAINER_MB);
    conf.set(MRJobConfig.REDUCE_JAVA_OPTS, CHILD_OPTS);
    conf.setInt(MRJobConfig.IO_SORT_MB, 16);
    // Container launch scripts run "$JAVA_HOME/bin/java"; pass this JVM's JDK explicitly.
    String javaHome = "JAVA_HOME=" + System.getProperty("java.home");
    conf.set(MRJobConfig.MR_AM_ENV, javaHome);
    conf.set(MRJobConfig.MAP_ENV, javaHome);
    conf.set(MRJobConfig.REDUCE_ENV, javaHome);
    conf.setInt("mapreduce.client.completion.pollinterval", 250);
    conf.setInt("mapreduce.client.progressmonitor.pollinterval", 250);
    // Once an AM has exited, one retry of its dead address is enough on loopback.
    conf.setInt(MRJobConfig.MR_CLIENT_TO_AM_IPC_MAX_RETRIES, 1);
    return conf;
  }

  /**
   * The --add-opens/--add-exports flags this JVM was started with (the pom is the one place they
   * are listed) and the child options: MapReduce and Tez AMs start a Guice web app like the RM.
   */
  static String amJavaOpts() {
    List<String> flags = new ArrayList<>();
    for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (arg.startsWith("--add-opens=") || arg.startsWith("--add-exports=")) {
        flags.add(arg);
      }
    }
    flags.add(CHILD_OPTS);
    return String.join(" ", flags);
  }

  static String workDir() {
    return System.getProperty("it.work.dir", new File("target", "it-work").getAbsolutePath());
  }

  /** Absolute path of a test resource, so the daemons do not depend on the working directory. */
  static String resourcePath(String name) {
    URL url = TidalMiniCluster.class.getClassLoader().getResource(name);
    if (url == null) {
      throw new IllegalStateException("test resource not on the class path: " + name);
    }
    try {
      return new File(url.toURI()).getAbsolutePath();
    } catch (URISyntaxException | IllegalArgumentException e) {
      throw new IllegalStateException("test resource is not a plain file: " + url, e);
    }
  }

  /** Every daemon binds and connects by this name; it must not leave the machine. */
  private static void requireLoopbackHostname() throws IOException {
    String host = MiniYARNCluster.getHostname();
    for (InetAddress address : InetAddress.getAllByName(host)) {
      if (!address.isLoopbackAddress()) {
        throw new IllegalStateException(
            "host name "
                + host
                + " resolves to "
                + address
                + "; the mini cluster only runs when it resolves to loopback (see /etc/hosts)");
      }
    }
  }

  /** Client configuration pointing at this cluster's RM. */
  @Override
  public Configuration clientConf() {
    return new Configuration(cluster.getConfig());
  }

  @Override
  public String schedulerName() {
    return schedulerName;
  }

  @Override
  public Resource containerSize() {
    return Resource.newInstance(CONTAINER_MB, 1);
  }

  ResourceManager resourceManager() {
    return cluster.getResourceManager();
  }

  /**
   * Stops the NodeManagers side by side first: each waits on shutdown for its finished apps'
   * timers, and the stock stop would wait for them one after the other.
   */
  @Override
  public void close() {
    List<Thread> stoppers = new ArrayList<>();
    for (int i = 0; i < NODE_MANAGERS; i++) {
      NodeManager nm = cluster.getNodeManager(i);
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
    cluster.stop();
    // Queue metrics live in static registries; the next RM in this JVM must start clean.
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.shutdown();
    resetResourceTypes(resourceTypes);
  }

  private static void resetResourceTypes(boolean declared) {
    if (declared) {
      ResourceUtils.resetResourceTypes(new Configuration());
      ResourceUtils.resetNodeResources();
    }
  }
}
