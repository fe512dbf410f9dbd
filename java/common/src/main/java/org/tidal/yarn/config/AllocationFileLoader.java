package org.tidal.yarn.config;

import java.io.File;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.WireLayout;
import org.tidal.yarn.io.Streams;

/**
 * Loads the queue allocation file ({@value TidalConfig#ALLOCATION_FILE}) into the core, as
 * FairScheduler's AllocationFileLoaderService does for its own file: reads it, builds the settings
 * array that goes with it, and creates or reconfigures the core's instance from both. The core
 * validates the file; a refusal becomes an IOException naming the file.
 */
public final class AllocationFileLoader {
  private static final Log LOG = LogFactory.getLog(AllocationFileLoader.class);

  /** The settings the core runs with; only touched under the scheduler's monitor. */
  private long[] settings;

  /** The allocation file's text the core runs with. */
  private String xml;

  /** Creates the core's instance from the allocation file and the scheduler's limits. */
  public void create(CoreInstance core, Configuration conf, Resource minimumAllocation)
      throws IOException {
    long[] initial = settings(conf, minimumAllocation);
    String source = fileName(conf);
    String xml = read(conf);
    try {
      core.create(xml, initial);
    } catch (TidalException e) {
      throw invalid(source, e);
    }
    settings = initial;
    this.xml = xml;
  }

  /**
   * Creates a new instance from the queue file and settings the running one has, as it was last
   * loaded: a file edited since is not read until the next refresh.
   */
  public void recreate(CoreInstance core) {
    core.create(xml, settings);
  }

  /**
   * Reloads the allocation file ({@code yarn rmadmin -refreshQueues}). Of the settings only the
   * per-heartbeat cap is re-read; the allocation limits are YARN's and fixed at start-up. An
   * invalid file leaves the running configuration untouched.
   */
  public void reload(CoreInstance core, Configuration conf) throws IOException {
    String source = fileName(conf);
    String xml = read(conf);
    long[] next = settings.clone();
    next[WireLayout.SET_MAX_ASSIGN_PER_HEARTBEAT] = maxAssignPerHeartbeat(conf);
    try {
      TidalNative.reconfigure(core.handle(), xml, next);
    } catch (TidalException e) {
      LOG.error(
          "Rejected queue allocation file "
              + source
              + ", keeping the running configuration: "
              + e.getMessage());
      throw invalid(source, e);
    }
    settings = next;
    this.xml = xml;
  }

  /** The cap on containers started per node heartbeat that the core runs with. */
  public int maxAssignPerHeartbeat() {
    return (int) settings[WireLayout.SET_MAX_ASSIGN_PER_HEARTBEAT];
  }

  public static String fileName(Configuration conf) {
    return conf.get(TidalConfig.ALLOCATION_FILE, TidalConfig.DEFAULT_ALLOCATION_FILE);
  }

  /**
   * Reads the allocation file: an absolute path from the file system, anything else from the
   * classpath (as FairScheduler resolves its allocation file).
   */
  static String read(Configuration conf) throws IOException {
    String name = fileName(conf);
    File file = new File(name);
    InputStream in;
    if (file.isAbsolute()) {
      if (!file.isFile()) {
        throw new IOException(
            "Tidal queue allocation file "
                + file
                + " does not exist ("
                + TidalConfig.ALLOCATION_FILE
                + ")");
      }
      in = new FileInputStream(file);
    } else {
      ClassLoader loader = Thread.currentThread().getContextClassLoader();
      if (loader == null) {
        loader = AllocationFileLoader.class.getClassLoader();
      }
      URL url = loader.getResource(name);
      if (url == null) {
        throw new IOException(
            "Tidal queue allocation file "
                + name
                + " not found on the classpath ("
                + TidalConfig.ALLOCATION_FILE
                + ")");
      }
      in = url.openStream();
    }
    return Streams.readUtf8(in);
  }

  private static long[] settings(Configuration conf, Resource minimumAllocation)
      throws IOException {
    long[] s = new long[WireLayout.SETTINGS_LEN];
    s[WireLayout.SET_MIN_MEMORY_MB] = minimumAllocation.getMemory();
    s[WireLayout.SET_MIN_VCORES] = minimumAllocation.getVirtualCores();
    s[WireLayout.SET_MAX_MEMORY_MB] =
        conf.getInt(
            YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_MB);
    s[WireLayout.SET_MAX_VCORES] =
        conf.getInt(
            YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES,
            YarnConfiguration.DEFAULT_RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES);
    s[WireLayout.SET_MAX_ASSIGN_PER_HEARTBEAT] = maxAssignPerHeartbeat(conf);
    s[WireLayout.SET_FAULT_INJECTION] = conf.getBoolean(TidalConfig.FAULT_INJECTION, false) ? 1 : 0;
    s[WireLayout.SET_RESERVE_CONTAINERS] =
        conf.getBoolean(TidalConfig.RESERVE_CONTAINERS, TidalConfig.DEFAULT_RESERVE_CONTAINERS)
            ? 1
            : 0;
    float share =
        conf.getFloat(
            TidalConfig.QUEUE_MAX_AM_SHARE_DEFAULT, TidalConfig.DEFAULT_QUEUE_MAX_AM_SHARE_DEFAULT);
    if (share != -1f && !(share >= 0f && share <= 1f)) {
      throw new IOException(
          TidalConfig.QUEUE_MAX_AM_SHARE_DEFAULT
              + " must be a fraction in [0, 1] or -1 (no check), was "
              + share);
    }
    s[WireLayout.SET_DEFAULT_MAX_AM_SHARE_PPM] = share < 0 ? -1 : Math.round(share * 1e6);
    return s;
  }

  private static int maxAssignPerHeartbeat(Configuration conf) throws IOException {
    int value =
        conf.getInt(
            TidalConfig.MAX_ASSIGN_PER_HEARTBEAT, TidalConfig.DEFAULT_MAX_ASSIGN_PER_HEARTBEAT);
    if (value <= 0) {
      throw new IOException(
          TidalConfig.MAX_ASSIGN_PER_HEARTBEAT + " must be positive, was " + value);
    }
    return value;
  }

  private static IOException invalid(String source, TidalException e) {
    return new IOException(
        "Invalid Tidal queue allocation file " + source + ": " + e.getMessage(), e);
  }
}
