package org.tidal.yarn.state;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;

/**
 * Tidal's own state across restarts and core rebuilds: the core's snapshot (queues registered at
 * run time, admission classes, burst phases, long-term usage, the recent history) with the origin
 * of the core's clock, saved to the {@link TidalStateStore} when a queue changes (before the change
 * is acknowledged) and every {@value #INTERVAL_MS} for what changes with time, and restored into a
 * new core. The last saved document is also kept in memory, which is what a core rebuilt after a
 * panic starts from.
 */
public final class DurableState {
  /** How often the time-driven state (bursts, usage) is saved. */
  public static final String INTERVAL_MS = "tidal.state-store.interval-ms";

  static final long DEFAULT_INTERVAL_MS = 10_000;

  private static final Log LOG = LogFactory.getLog(DurableState.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int VERSION = 1;

  private final CoreInstance core;
  private final TidalStateStore store;
  private final RMContext rmContext;
  private final long intervalMs;
  private ScheduledExecutorService timer;

  /** The last document saved, or restored; null before either. */
  private volatile String last;

  /** Whether the latest periodic save failed, so a failing store logs once, not every round. */
  private boolean failing;

  public DurableState(CoreInstance core, Configuration conf, RMContext rmContext)
      throws IOException {
    this.core = core;
    this.store = TidalStateStore.open(conf);
    this.rmContext = rmContext;
    this.intervalMs = conf.getLong(INTERVAL_MS, DEFAULT_INTERVAL_MS);
    if (intervalMs <= 0) {
      throw new IOException(INTERVAL_MS + " must be positive, was " + intervalMs);
    }
  }

  /**
   * Restores the stored state into the new core and continues its clock; returns the core's
   * summary, or null when nothing is stored. Runs before the RM recovers its applications, so their
   * queues exist when they come back. A stored state the core refuses stops the start with an error
   * naming the file's problem: starting without it would reject the apps of its queues.
   */
  public String restore() throws IOException {
    if (store == null) {
      return null;
    }
    String document = store.load(rmContext.getEpoch());
    if (document == null) {
      LOG.info("No Tidal state stored in " + store.location() + "; starting afresh");
      return null;
    }
    JsonNode root;
    try {
      root = JSON.readTree(document);
    } catch (IOException e) {
      throw new IOException("Tidal state in " + store.location() + " is not JSON: " + e, e);
    }
    if (root.path("version").intValue() != VERSION
        || !root.path("clock_origin_wall_ms").isIntegralNumber()
        || !root.path("core").isObject()) {
      throw new IOException(
          "Tidal state in "
              + store.location()
              + " is not a version "
              + VERSION
              + " document with clock_origin_wall_ms and core");
    }
    core.continueClock(root.path("clock_origin_wall_ms").longValue());
    String summary;
    try {
      summary = TidalNative.restoreState(core.handle(), root.path("core").toString());
    } catch (TidalException e) {
      throw new IOException(
          "Tidal state in " + store.location() + " cannot be restored: " + e.getMessage(), e);
    }
    last = document;
    LOG.info("Restored Tidal state from " + store.location() + ": " + summary);
    return summary;
  }

  /** Restores the last saved document into a core rebuilt after a panic. */
  public void restoreLast() {
    String document = last;
    if (document == null) {
      return;
    }
    try {
      TidalNative.restoreState(core.handle(), JSON.readTree(document).path("core").toString());
    } catch (IOException e) {
      throw new TidalException("cannot read the last saved Tidal state: " + e.getMessage());
    }
  }

  /**
   * Takes the core's snapshot and stores it. Throws IOException when the store refuses (a file
   * system failure, or a newer RM fenced this one); the snapshot is still kept in memory.
   */
  public synchronized void save() throws IOException {
    ObjectNode root = JSON.createObjectNode();
    root.put("version", VERSION);
    root.put("clock_origin_wall_ms", core.clockOriginWallMs());
    root.set("core", JSON.readTree(TidalNative.snapshotState(core.handle())));
    String document = root.toString();
    last = document;
    if (store != null) {
      store.save(rmContext.getEpoch(), document);
    }
  }

  /** Saves the time-driven state periodically from a daemon thread. */
  public void start() {
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "tidal-state-saver");
              t.setDaemon(true);
              return t;
            });
    timer.scheduleWithFixedDelay(this::saveQuietly, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
  }

  /** Stops the periodic saves and saves once more, so a clean stop loses nothing. */
  public void stop() throws InterruptedException {
    if (timer != null) {
      timer.shutdownNow();
      timer.awaitTermination(10, TimeUnit.SECONDS);
    }
    if (core.handle() != 0) {
      saveQuietly();
    }
    if (store != null) {
      try {
        store.close();
      } catch (IOException e) {
        LOG.warn("Cannot close the Tidal state store: " + e.getMessage());
      }
    }
  }

  private synchronized void saveQuietly() {
    try {
      save();
      if (failing) {
        LOG.info("Tidal state saved again");
      }
      failing = false;
    } catch (IOException | TidalException e) {
      if (!failing) {
        LOG.error("Cannot save Tidal state: " + e.getMessage(), e);
      }
      failing = true;
    }
  }
}
