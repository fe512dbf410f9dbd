package org.tidal.it;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.codehaus.jackson.JsonNode;

/**
 * The queues the Tidal core knows at one moment, from its REST status: each queue's admission class
 * and, for a queue registered at run time, its owner (queues from the allocation file have none).
 */
final class QueueSnapshot {
  /** Full queue name to admission class (hard, soft, elastic, rejected). */
  final Map<String, String> classes = new TreeMap<>();

  /** Queues registered at run time, to their owner. */
  final Map<String, String> runtimeOwners = new TreeMap<>();

  final long clusterVcores;

  /** Why there is no status, or null. */
  final String unavailable;

  private QueueSnapshot(long clusterVcores, String unavailable) {
    this.clusterVcores = clusterVcores;
    this.unavailable = unavailable;
  }

  /** No queues at all: a scheduler without Tidal's status, or an RM that did not answer. */
  static QueueSnapshot none(String why) {
    return new QueueSnapshot(0, why);
  }

  static QueueSnapshot of(JsonNode status) {
    QueueSnapshot s = new QueueSnapshot(status.path("cluster").path("vcores").getLongValue(), null);
    for (JsonNode q : status.path("queues")) {
      if (q.path("retired").getBooleanValue()) {
        continue;
      }
      String name = q.path("name").getTextValue();
      s.classes.put(name, q.path("class").getTextValue());
      if (q.path("owner").isTextual()) {
        s.runtimeOwners.put(name, q.path("owner").getTextValue());
      }
    }
    return s;
  }

  /** The snapshot of whatever Tidal RM {@code rest} reaches now. */
  static QueueSnapshot read(Supplier<TidalRest> rest) {
    try {
      return of(rest.get().queues());
    } catch (Exception | AssertionError e) {
      return none(String.valueOf(e));
    }
  }

  /**
   * Reads the status until it shows the same queues and classes as {@code expected} with the whole
   * cluster's capacity, for at most {@code timeoutSeconds}; returns the last one read. A recovered
   * core learns the capacity as NodeManagers register again and re-runs admission when it changes,
   * so the classes are compared once it has.
   */
  static QueueSnapshot awaitSame(
      Supplier<TidalRest> rest, QueueSnapshot expected, long timeoutSeconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    while (true) {
      QueueSnapshot now = read(rest);
      if (now.sameAs(expected) || System.nanoTime() > deadline) {
        return now;
      }
      Thread.sleep(500);
    }
  }

  boolean sameAs(QueueSnapshot other) {
    return unavailable == null
        && classes.equals(other.classes)
        && runtimeOwners.equals(other.runtimeOwners)
        && clusterVcores == other.clusterVcores;
  }
}
