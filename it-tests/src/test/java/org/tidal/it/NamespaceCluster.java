package org.tidal.it;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.client.cli.RMAdminCLI;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;
import org.junit.Assume;

/**
 * The cluster of {@code it-tests/cluster/cluster.sh} on network namespaces: a ResourceManager and
 * three NodeManagers, each a JVM of its own on a host with its own name and address, under Tidal.
 * This JVM is the client host {@code tidal-client}: it resolves the cluster's names from the hosts
 * file the script writes (the failsafe execution sets {@code jdk.net.hosts.file}), and submits jobs
 * whose files go to the directory all hosts share (the default file system is {@code file:///}).
 */
final class NamespaceCluster implements AutoCloseable {
  static final String RM_HOST = "tidal-rm";
  static final List<String> NODE_MANAGERS = List.of("tidal-nm1", "tidal-nm2", "tidal-nm3");

  /** Per NodeManager: two 512 MB / 1 vcore containers, six in the cluster. */
  static final int NM_VCORES = 2;

  static final int NM_MEMORY_MB = 2048;

  /** How long the RM waits for a silent NodeManager before it is LOST (cluster yarn-site.xml). */
  static final long NM_EXPIRY_MILLIS = 10_000;

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final File dir = new File(System.getProperty("it.cluster.dir"));
  private final String script = System.getProperty("it.cluster.script");

  /** What the start printed: its set-up and daemon times. */
  final String startReport;

  private NamespaceCluster(String startReport) {
    this.startReport = startReport;
  }

  /**
   * Starts the cluster with the queue file {@code queuesResource} (a test resource), or skips the
   * calling test with the reason when this machine cannot run it (not root, no network namespaces).
   */
  static NamespaceCluster start(String queuesResource) throws Exception {
    String unavailable = unavailableReason();
    if (unavailable != null) {
      System.out.println("== namespace cluster tests skipped: " + unavailable);
    }
    Assume.assumeTrue("namespace cluster tests skipped: " + unavailable, unavailable == null);
    List<String> lines =
        script(
            Map.of(
                "CLUSTER_DIR", System.getProperty("it.cluster.dir"),
                "CLUSTER_CLASSPATH", System.getProperty("it.cluster.classpath"),
                "CLUSTER_NATIVE_LIB", System.getProperty("it.cluster.native.lib"),
                "CLUSTER_QUEUES", SchedulerUnderTest.resourcePath(queuesResource),
                "NODEMANAGER_CLASS", ResyncSafeNodeManager.class.getName(),
                "NODEMANAGER_CLASSPATH", System.getProperty("it.cluster.nodemanager.jar"),
                "NM_VCORES", Integer.toString(NM_VCORES),
                "NM_MEMORY_MB", Integer.toString(NM_MEMORY_MB)),
            "start");
    return new NamespaceCluster(String.join("; ", lines));
  }

  /** Why the namespace cluster cannot run here, or null. */
  static String unavailableReason() throws IOException, InterruptedException {
    Object uid = Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
    if (!Integer.valueOf(0).equals(uid)) {
      return "they need root (network namespaces, a bridge, bind mounts); this JVM runs as uid "
          + uid;
    }
    for (List<String> probe :
        List.of(List.of("ip", "netns", "list"), List.of("unshare", "--version"))) {
      if (!succeeds(probe)) {
        return "'" + String.join(" ", probe) + "' does not work on this machine";
      }
    }
    for (String key :
        List.of(
            "it.cluster.dir",
            "it.cluster.script",
            "it.cluster.classpath",
            "it.cluster.nodemanager.jar")) {
      if (System.getProperty(key) == null) {
        return "system property " + key + " is not set (run them through it-tests/pom.xml)";
      }
    }
    return null;
  }

  private static boolean succeeds(List<String> command) throws InterruptedException {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
      return p.waitFor() == 0;
    } catch (IOException e) {
      return false;
    }
  }

  /** Runs {@code cluster.sh args} and returns its output; a failure throws with that output. */
  private static List<String> script(Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    List<String> command =
        new ArrayList<>(List.of("bash", System.getProperty("it.cluster.script")));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("CLUSTER_DIR", System.getProperty("it.cluster.dir"));
    pb.environment().putAll(env);
    Process p = pb.start();
    List<String> lines = new ArrayList<>();
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        System.out.println("   [cluster.sh " + args[0] + "] " + line);
        lines.add(line);
      }
    }
    int status = p.waitFor();
    if (status != 0) {
      throw new IOException(
          "cluster.sh " + String.join(" ", args) + " exited with " + status + ": " + lines);
    }
    return lines;
  }

  private List<String> script(String... args) throws IOException, InterruptedException {
    return script(Map.of(), args);
  }

  /**
   * Configuration of a client on this host: the it-tests' MapReduce settings (512 MB containers,
   * the JDK flags of this JVM for the AM, staging under the shared build directory) pointed at the
   * cluster's RM. Every task attempt runs once unless its container is lost.
   */
  Configuration clientConf() {
    Configuration conf = MiniClusterHarness.baseConfiguration();
    conf.set(YarnConfiguration.RM_HOSTNAME, RM_HOST);
    conf.setBoolean(MRJobConfig.MAP_SPECULATIVE, false);
    conf.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, false);
    // An AM that loses the RM (a restart) retries it every 250 ms rather than every 30 s.
    conf.setLong(YarnConfiguration.RESOURCEMANAGER_CONNECT_RETRY_INTERVAL_MS, 250);
    // An AM re-runs a task lost with its node only once it gave up stopping the container there:
    // by default after 3 minutes of 20 s connection attempts to the unreachable NodeManager.
    conf.setLong(YarnConfiguration.CLIENT_NM_CONNECT_MAX_WAIT_MS, 15_000);
    conf.setLong(YarnConfiguration.CLIENT_NM_CONNECT_RETRY_INTERVAL_MS, 1_000);
    conf.setInt(CommonConfigurationKeysPublic.IPC_CLIENT_CONNECT_TIMEOUT_KEY, 3_000);
    return conf;
  }

  TidalRest tidal() {
    return TidalRest.at("http://" + RM_HOST + ":8089/ws/v1/tidal");
  }

  /** Cuts {@code nm}'s link to the bridge: it and its containers are unreachable, still running. */
  void partition(String nm) throws Exception {
    script("partition", nm);
  }

  void heal(String nm) throws Exception {
    script("heal", nm);
  }

  /** Stops the RM and starts it again on the same state store; returns once all NMs are back. */
  void restartResourceManager() throws Exception {
    script("restart-rm");
  }

  /**
   * Replaces the RM's queue file with {@code queuesResource} and reloads it with {@code yarn
   * rmadmin -refreshQueues}, as an operator would.
   */
  void useQueues(String queuesResource) throws Exception {
    Path rmQueues = dir.toPath().resolve("nodes/" + RM_HOST + "/conf/tidal-queues.xml");
    Files.copy(
        Paths.get(SchedulerUnderTest.resourcePath(queuesResource)),
        rmQueues,
        StandardCopyOption.REPLACE_EXISTING);
    RMAdminCLI admin = new RMAdminCLI(new YarnConfiguration(clientConf()));
    int status = admin.run(new String[] {"-refreshQueues"});
    if (status != 0) {
      throw new IllegalStateException("yarn rmadmin -refreshQueues exited with " + status);
    }
  }

  /**
   * Container id to state of {@code app}'s containers that NodeManager {@code nm} has, from its own
   * REST API.
   */
  static Map<String, String> containersOn(String nm, ApplicationId app) throws IOException {
    HttpURLConnection http =
        (HttpURLConnection)
            new URL("http://" + nm + ":8042/ws/v1/node/containers").openConnection();
    http.setConnectTimeout(5_000);
    http.setReadTimeout(10_000);
    http.setRequestProperty("Accept", "application/json");
    Map<String, String> out = new TreeMap<>();
    try {
      JsonNode body = MAPPER.readTree(http.getInputStream());
      for (JsonNode c : body.path("containers").path("container")) {
        String id = c.path("id").getTextValue();
        if (ContainerId.fromString(id).getApplicationAttemptId().getApplicationId().equals(app)) {
          out.put(id, c.path("state").getTextValue());
        }
      }
    } finally {
      http.disconnect();
    }
    return out;
  }

  /** The running containers of {@code app} on every NodeManager. */
  static List<String> containersOnAll(ApplicationId app) throws IOException {
    List<String> running = new ArrayList<>();
    for (String nm : NODE_MANAGERS) {
      containersOn(nm, app)
          .forEach(
              (id, state) -> {
                if ("RUNNING".equals(state)) {
                  running.add(id);
                }
              });
    }
    return running;
  }

  /** Polls {@code condition} every 250 ms for at most {@code timeoutMillis}. */
  static boolean await(long timeoutMillis, Check condition) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    while (!condition.holds()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(250);
    }
    return true;
  }

  /** A condition polled by {@link #await}. */
  interface Check {
    boolean holds() throws Exception;
  }

  /** Copies every host's logs under the it-tests' work directory, then stops the cluster. */
  @Override
  public void close() throws Exception {
    File logs = new File(System.getProperty("it.work.dir"), "ns-cluster-logs");
    try {
      script("logs", logs.getAbsolutePath());
    } finally {
      script("stop");
    }
  }
}
