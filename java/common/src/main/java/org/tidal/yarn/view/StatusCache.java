package org.tidal.yarn.view;

import java.io.IOException;
import java.util.function.Supplier;

/**
 * The core's status, parsed, reused while it is younger than a short age. Metrics publish one
 * record per queue, and each record would otherwise take a whole snapshot of the core (every queue,
 * under the core's lock that heartbeats take too): a publishing round over n queues would cost n
 * snapshots. A second is below the finest metrics period Hadoop offers, so one round reads one
 * snapshot and every published value is at most that old.
 */
public final class StatusCache {
  public static final long MAX_AGE_MS = 1000;

  private final Supplier<String> json;
  private final long maxAgeNanos;
  private QueueStatus last;
  private long takenNanos;

  public StatusCache(Supplier<String> json, long maxAgeMs) {
    this.json = json;
    this.maxAgeNanos = maxAgeMs * 1000000L;
  }

  /** Drops the snapshot: the next reader takes a fresh one (the queues changed). */
  synchronized void invalidate() {
    last = null;
  }

  /**
   * A snapshot at most the maximum age old. The core's status call locks inside the core, as for
   * every other status reader; this monitor only keeps concurrent readers from taking two.
   */
  public synchronized QueueStatus get() throws IOException {
    long now = System.nanoTime();
    if (last == null || now - takenNanos >= maxAgeNanos) {
      last = QueueStatus.parse(json.get());
      takenNanos = now;
    }
    return last;
  }
}
