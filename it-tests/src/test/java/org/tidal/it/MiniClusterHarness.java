package org.tidal.it;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.logging.Level;
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
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;
import org.tidal.it.workload.WorkloadCluster;

/**
 * One JVM holding a real ResourceManager and two NodeManagers (each running the MapReduce shuffle
 * service), with the chosen scheduler plugged into the RM by class name, exactly as yarn-site.xml
 * would. MapReduce jobs run their ApplicationMaster and tasks in containers the NodeManagers launch
 * as child JVMs. There is no JobHistoryServer: clients take a finished job's state from the RM
 * instead.
 */
public final class MiniClusterHarness implements AutoCloseable, WorkloadCluster {
  /**
   * Jersey and Guice log through java.util.logging: keep their per-web-app start-up chatter and the
   * expected "multiple servlet injectors" warning (see RmWebPipeline) out of the output. Held here
   * so the settings stick.
   */
  private static final java.util.logging.Logger JERSEY = quiet("com.sun.jersey", Level.WARNING);

  private static final java.util.logging.Logger GUICE_FILTER =
      quiet("com.google.inject.servlet.GuiceFilter", Level.SEVERE);

  private static java.util.logging.Logger quiet(String name, Level level) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(level);
    return logger;
  }

  private final SchedulerUnderTest scheduler;
  private final MiniYARNCluster cluster;

  private MiniClusterHarness(SchedulerUnderTest scheduler, MiniYARNCluster cluster) {
    this.scheduler = scheduler;
    this.cluster = cluster;
  }

  public static MiniClusterHarness start(SchedulerUnderTest scheduler) throws Exception {
    return start(scheduler, conf -> {});
  }

  /** As {@link #start(SchedulerUnderTest)}, with test-specific settings applied last. */
  public static MiniClusterHarness start(
      SchedulerUnderTest scheduler, Consumer<Configuration> overrides) throws Exception {
    requireLoopbackHostname();
    Configuration conf = baseConfiguration();
    conf.set(YarnConfiguration.RM_SCHEDULER, scheduler.schedulerClass());
    scheduler.configure(conf);
    overrides.accept(conf);

    // MiniYARNCluster puts its work dir under ./target, i.e. this module's target/.
    AtomicReference<Object> rmWebPipeline = new AtomicReference<>();
    MiniYARNCluster cluster =
        new MiniYARNCluster(
            "it-" + scheduler.name().toLowerCase(Locale.ROOT),
            1,
            HarnessSettings.NODE_MANAGERS,
            1,
            1) {
          @Override
          protected ResourceManager createResourceManager() {
            return new ResourceManager() {
              @Override
              protected void doSecureLogin() {
                // No Kerberos in the mini cluster.
              }

              @Override
              protected void startWepApp() {
                super.startWepApp();
                rmWebPipeline.set(RmWebPipeline.current());
              }
            };
          }
        };
    try {
      cluster.init(conf);
      cluster.start();
      if (!cluster.waitForNodeManagersToConnect(TimeUnit.SECONDS.toMillis(60))) {
        throw new IllegalStateException(
            "NodeManagers did not register with the " + scheduler.displayName() + " RM");
      }
      RmWebPipeline.restore(rmWebPipeline.get());
    } catch (Exception | Error e) {
      cluster.stop();
      throw e;
    }
    return new MiniClusterHarness(scheduler, cluster);
  }

  static Configuration baseConfiguration() {
    Configuration conf = new YarnConfiguration();
    String workDir =
        System.getProperty("it.work.dir", new File("target", "it-work").getAbsolutePath());
    conf.set("hadoop.tmp.dir", new File(workDir, "hadoop-tmp").getAbsolutePath());

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
    // No JobHistoryServer: an empty address makes the MR client report finished
    // jobs from the RM's final status instead of retrying a server that is not there.
    conf.set(JHAdminConfig.MR_HISTORY_ADDRESS, "");
    conf.setBoolean(MRJobConfig.JOB_UBERTASK_ENABLE, false);

    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, HarnessSettings.NM_MEMORY_MB);
    conf.setInt(YarnConfiguration.NM_VCORES, HarnessSettings.NM_VCORES);
    conf.setInt(
        YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, HarnessSettings.MIN_ALLOCATION_MB);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, HarnessSettings.NM_MEMORY_MB);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_VCORES, 1);
    conf.setInt(
        YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, HarnessSettings.NM_VCORES);
    // Faster node heartbeats mean faster reassignment of freed containers.
    conf.setLong(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 500);
    // A JDK 17 JVM with -Xmx200m reserves ~2.4 GB of address space, over the
    // 2.1 x 512 MB the virtual-memory check allows; MiniYARNCluster already
    // turns it off by default, this keeps it off if that default changes.
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    // A nearly full build disk must not turn the NodeManagers unhealthy.
    conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.5f);
    // The RM must not hold finished apps' state in a store between tests.
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, false);

    // MapReduce: small containers and heaps, and the JDK flags Hadoop 2.7 needs on 17.
    conf.setInt(MRJobConfig.MR_AM_VMEM_MB, HarnessSettings.CONTAINER_MB);
    conf.setInt(MRJobConfig.MR_AM_CPU_VCORES, HarnessSettings.CONTAINER_VCORES);
    conf.set(MRJobConfig.MR_AM_COMMAND_OPTS, HarnessSettings.amJavaOpts());
    conf.setInt(MRJobConfig.MAP_MEMORY_MB, HarnessSettings.CONTAINER_MB);
    conf.setInt(MRJobConfig.MAP_CPU_VCORES, HarnessSettings.CONTAINER_VCORES);
    conf.set(MRJobConfig.MAP_JAVA_OPTS, HarnessSettings.taskJavaOpts());
    conf.setInt(MRJobConfig.REDUCE_MEMORY_MB, HarnessSettings.CONTAINER_MB);
    conf.setInt(MRJobConfig.REDUCE_CPU_VCORES, HarnessSettings.CONTAINER_VCORES);
    conf.set(MRJobConfig.REDUCE_JAVA_OPTS, HarnessSettings.taskJavaOpts());
    conf.setInt(MRJobConfig.IO_SORT_MB, 16);
    // Container launch scripts run "$JAVA_HOME/bin/java"; the NodeManager only
    // passes JAVA_HOME through if it happens to be in its own environment.
    String javaHome = "JAVA_HOME=" + System.getProperty("java.home");
    conf.set(MRJobConfig.MR_AM_ENV, javaHome);
    conf.set(MRJobConfig.MAP_ENV, javaHome);
    conf.set(MRJobConfig.REDUCE_ENV, javaHome);
    // Reducers wait for all maps, so while maps are pending every container is a map or an AM.
    conf.setFloat(MRJobConfig.COMPLETED_MAPS_FOR_REDUCE_SLOWSTART, 1.0f);
    conf.setInt("mapreduce.client.completion.pollinterval", 250);
    // Once an AM has exited, the client's status calls would retry its dead
    // address for ~30 s before falling back to the RM; one retry is enough on loopback.
    conf.setInt(MRJobConfig.MR_CLIENT_TO_AM_IPC_MAX_RETRIES, 1);
    conf.setInt("mapreduce.client.progressmonitor.pollinterval", 250);
    return conf;
  }

  /** Every daemon binds and connects by this name; it must not leave the machine. */
  static void requireLoopbackHostname() throws IOException {
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

  public SchedulerUnderTest scheduler() {
    return scheduler;
  }

  @Override
  public String schedulerName() {
    return scheduler.displayName();
  }

  @Override
  public Resource containerSize() {
    return Resource.newInstance(HarnessSettings.CONTAINER_MB, HarnessSettings.CONTAINER_VCORES);
  }

  /** Client configuration pointing at this cluster's RM. */
  @Override
  public Configuration clientConf() {
    return new Configuration(cluster.getConfig());
  }

  public ResourceManager resourceManager() {
    return cluster.getResourceManager();
  }

  /** http://host:port of the RM web app. */
  public String rmWebUrl() {
    return WebAppUtils.getRMWebAppURLWithScheme(cluster.getConfig());
  }

  /**
   * Stops the NodeManagers side by side first: each one waits ~14 s on shutdown for its finished
   * apps' log-retention timers, and the stock stop would wait for them one after the other.
   */
  @Override
  public void close() {
    List<Thread> stoppers = new ArrayList<>();
    for (int i = 0; i < HarnessSettings.NODE_MANAGERS; i++) {
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
  }
}
