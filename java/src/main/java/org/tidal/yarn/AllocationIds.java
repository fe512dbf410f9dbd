package org.tidal.yarn;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;

/**
 * Container ids and the core's allocation ids, both ways. A container the core started carries its
 * allocation id in its container number, below the RM's epoch (which YARN keeps in the bits above
 * 40, so containers of an RM restarted with work-preserving recovery never reuse an earlier RM's
 * numbers), offset by a base that grows each time the core is rebuilt. A container the core adopted
 * (kept running across an RM restart, or re-fed to a rebuilt core) has a number an earlier RM or
 * core chose; its allocation id is looked up instead.
 */
final class AllocationIds {
  /** YARN's {@code ContainerId} keeps the RM epoch above these bits. */
  static final long NUMBER_BITS = (1L << 40) - 1;

  /** No allocation of the core: the container is not one it tracks. */
  static final long NONE = -1;

  private final Map<ContainerId, Long> adopted = new ConcurrentHashMap<ContainerId, Long>();
  private volatile long epochBits;
  private volatile long base;

  /** The highest allocation id turned into a container by the current core. */
  private volatile long highest;

  /** Takes the RM's epoch, which YARN sets when recovery starts, before any container exists. */
  void setEpoch(long epoch) {
    epochBits = epoch << 40;
  }

  /** The container id of a decision the current core made. */
  ContainerId containerId(ApplicationAttemptId attempt, long allocationId) {
    if (allocationId > highest) {
      highest = allocationId;
    }
    return ContainerId.newContainerId(attempt, epochBits | (base + allocationId));
  }

  /** The core's allocation id of a container, or {@link #NONE}. */
  long allocationId(ContainerId containerId) {
    Long id = adopted.get(containerId);
    if (id != null) {
      return id;
    }
    long raw = containerId.getContainerId();
    long number = raw & NUMBER_BITS;
    return (raw & ~NUMBER_BITS) == epochBits && number > base ? number - base : NONE;
  }

  /** Records the allocation id the core gave a container it adopted. */
  void adopted(ContainerId containerId, long allocationId) {
    adopted.put(containerId, allocationId);
  }

  /** Forgets a container that ended. */
  void ended(ContainerId containerId) {
    adopted.remove(containerId);
  }

  /**
   * A new core replaces the old one: it knows none of the old allocation ids, so every live
   * container is adopted again, and its own containers are numbered above every earlier one.
   */
  void newCore() {
    adopted.clear();
    base += highest;
    highest = 0;
  }
}
