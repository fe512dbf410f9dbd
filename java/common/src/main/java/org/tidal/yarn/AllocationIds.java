package org.tidal.yarn;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.yarn.api.records.ContainerId;

/**
 * The core's allocation id of every container the current core tracks, by container id. Containers
 * are numbered as every stock scheduler numbers them, from the attempt's own sequence (so an
 * attempt's ApplicationMaster is always its container 1, which NodeManager log retention and
 * Hadoop's tooling rely on), and the core's cluster-wide allocation id is kept beside it here
 * rather than in the number. A container the core started, adopted (kept running across an RM
 * restart) or was re-fed after a rebuild is recorded when it is booked and forgotten when it ends.
 */
final class AllocationIds {
  /** No allocation of the core: the container is not one it tracks. */
  static final long NONE = -1;

  private final Map<ContainerId, Long> tracked = new ConcurrentHashMap<ContainerId, Long>();

  /** Records the allocation id the core gave a container, started or adopted. */
  void booked(ContainerId containerId, long allocationId) {
    tracked.put(containerId, allocationId);
  }

  /** The core's allocation id of a container, or {@link #NONE}. */
  long allocationId(ContainerId containerId) {
    Long id = tracked.get(containerId);
    return id == null ? NONE : id;
  }

  /** Forgets a container that ended. */
  void ended(ContainerId containerId) {
    tracked.remove(containerId);
  }

  /**
   * A new core replaces the old one: it knows none of the old ids, so every container is re-fed.
   */
  void newCore() {
    tracked.clear();
  }
}
