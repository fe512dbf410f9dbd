package org.tidal.yarn;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The Tidal schedulers running in this JVM, for code that Hadoop builds without a handle on the
 * ResourceManager: the web filter that {@link TidalWebFilterInitializer} installs is made by the
 * HTTP server from its class name. A scheduler is listed from its start to its stop.
 *
 * <p>In production an RM has a JVM of its own, so there is at most one. Tests may run several RMs
 * in one JVM (RM HA): then the one whose RM is active answers, else the one started last.
 */
final class RunningSchedulers {
  private static final CopyOnWriteArrayList<TidalShim> RUNNING =
      new CopyOnWriteArrayList<TidalShim>();

  private RunningSchedulers() {}

  static void add(TidalShim scheduler) {
    RUNNING.addIfAbsent(scheduler);
  }

  static void remove(TidalShim scheduler) {
    RUNNING.remove(scheduler);
  }

  /** The scheduler that answers for this JVM, or null when no Tidal scheduler runs here. */
  static TidalShim current() {
    TidalShim latest = null;
    for (TidalShim scheduler : RUNNING) {
      if (scheduler.isActive()) {
        return scheduler;
      }
      latest = scheduler;
    }
    return latest;
  }
}
