package org.tidal.it;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.apache.hadoop.yarn.server.api.AuxiliaryService;
import org.apache.hadoop.yarn.server.api.ContainerInitializationContext;
import org.apache.hadoop.yarn.server.api.ContainerTerminationContext;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.containermanager.container.Container;

/**
 * Every container the NodeManagers of this JVM start and how it ended, seen from the NodeManagers:
 * the one view of a container's end that no ResourceManager restart, failover or scheduler bug can
 * hide. An RM that does not recover a container either has the NodeManager kill it, which ends it
 * with exit status {@link ContainerExitStatus#KILLED_BY_RESOURCEMANAGER} or, when the killed
 * process reports its own exit code, with the diagnostics "Container Killed by ResourceManager"; or
 * it ignores the container, which the job outcome shows.
 *
 * <p>It is a NodeManager auxiliary service (the extension point YARN gives NodeManager plug-ins, as
 * the MapReduce shuffle is): each NodeManager calls it when a container starts initializing and,
 * once the container reached its final state, on the NodeManager's event thread. The exit status
 * and diagnostics are then read from the NodeManager's record of the container, which it keeps
 * until the RM has acknowledged the container's end (or, once the container's application has
 * finished on the node, until its next heartbeat); an end whose record is already gone is counted
 * with an unknown status. A container stopped before it started initializing ran no work and is not
 * seen.
 *
 * <p>The records are static because the NodeManagers create the service by class name in this JVM.
 * A test calls {@link #reset} with the NodeManagers' contexts before it submits anything.
 */
public final class ContainerLedger extends AuxiliaryService {
  /** The service's name in yarn.nodemanager.aux-services. */
  public static final String NAME = "it_container_ledger";

  /** One container started on a NodeManager. */
  static final class Entry {
    final ContainerId id;
    final long startedNanos;
    volatile long endedNanos = -1;
    volatile int exitStatus = ContainerExitStatus.INVALID;
    volatile String diagnostics = "";

    /** Whether the container ended after its final record was gone from the NodeManager. */
    volatile boolean statusUnknown;

    Entry(ContainerId id, long startedNanos) {
      this.id = id;
      this.startedNanos = startedNanos;
    }

    ApplicationId app() {
      return id.getApplicationAttemptId().getApplicationId();
    }

    boolean ended() {
      return endedNanos >= 0;
    }

    /**
     * Killed on the RM's order (or aborted or preempted by it) rather than finished or stopped. A
     * process that exited 0 finished its work, whatever arrived after: an AM that stops a finished
     * task's container also releases it, and under load the RM's clean-up of the release can reach
     * the NodeManager before the AM's own stop does, which labels the container with the RM's kill.
     */
    boolean killedByRm() {
      if (!ended() || exitStatus == ContainerExitStatus.SUCCESS) {
        return false;
      }
      return exitStatus == ContainerExitStatus.KILLED_BY_RESOURCEMANAGER
          || exitStatus == ContainerExitStatus.ABORTED
          || exitStatus == ContainerExitStatus.PREEMPTED
          || diagnostics.toLowerCase(Locale.ROOT).contains("killed by resourcemanager");
    }

    String describe() {
      String diag = diagnostics.replaceAll("\\s+", " ").trim();
      if (diag.length() > 120) {
        diag = diag.substring(0, 120) + "...";
      }
      return id + " (exit " + exitStatus + (diag.isEmpty() ? "" : ", '" + diag + "'") + ")";
    }
  }

  private static final List<Entry> ENTRIES = new CopyOnWriteArrayList<>();
  private static final List<Context> NODE_MANAGERS = new CopyOnWriteArrayList<>();
  private static final AtomicLong ENDED = new AtomicLong();

  public ContainerLedger() {
    super(NAME);
  }

  /** Forgets every record and watches the given NodeManagers from now on. */
  static void reset(List<Context> nodeManagers) {
    ENTRIES.clear();
    NODE_MANAGERS.clear();
    NODE_MANAGERS.addAll(nodeManagers);
    ENDED.set(0);
  }

  /** Every container started so far, in the order they started. */
  static List<Entry> entries() {
    return new ArrayList<>(ENTRIES);
  }

  /** How many containers have ended so far. */
  static long endedCount() {
    return ENDED.get();
  }

  static List<Entry> ofApp(ApplicationId app) {
    List<Entry> out = new ArrayList<>();
    for (Entry e : ENTRIES) {
      if (e.app().equals(app)) {
        out.add(e);
      }
    }
    return out;
  }

  static List<Entry> killedByRm() {
    List<Entry> out = new ArrayList<>();
    for (Entry e : ENTRIES) {
      if (e.killedByRm()) {
        out.add(e);
      }
    }
    return out;
  }

  /** Containers that ended but whose final record the NodeManager no longer had. */
  static int endedWithUnknownStatus() {
    int n = 0;
    for (Entry e : ENTRIES) {
      if (e.statusUnknown) {
        n++;
      }
    }
    return n;
  }

  /** Containers that started and have not ended. */
  static List<Entry> runningNow() {
    List<Entry> out = new ArrayList<>();
    for (Entry e : ENTRIES) {
      if (!e.ended()) {
        out.add(e);
      }
    }
    return out;
  }

  /** Containers of {@code app} that started and have not ended. */
  static int running(ApplicationId app) {
    int n = 0;
    for (Entry e : ENTRIES) {
      if (!e.ended() && e.app().equals(app)) {
        n++;
      }
    }
    return n;
  }

  @Override
  public void initializeContainer(ContainerInitializationContext context) {
    ENTRIES.add(new Entry(context.getContainerId(), System.nanoTime()));
  }

  @Override
  public void stopContainer(ContainerTerminationContext context) {
    long now = System.nanoTime();
    ContainerId id = context.getContainerId();
    Entry entry = null;
    for (Entry e : ENTRIES) {
      if (e.id.equals(id) && !e.ended()) {
        entry = e;
      }
    }
    if (entry == null) {
      entry = new Entry(id, now);
      ENTRIES.add(entry);
    }
    ContainerStatus status = null;
    for (Context nm : NODE_MANAGERS) {
      Container container = nm.getContainers().get(id);
      if (container != null) {
        status = container.cloneAndGetContainerStatus();
      }
    }
    if (status == null) {
      entry.statusUnknown = true;
    } else {
      entry.exitStatus = status.getExitStatus();
      entry.diagnostics = status.getDiagnostics() == null ? "" : status.getDiagnostics();
    }
    entry.endedNanos = now;
    ENDED.incrementAndGet();
  }

  @Override
  public void initializeApplication(ApplicationInitializationContext context) {
    // Containers are what is recorded.
  }

  @Override
  public void stopApplication(ApplicationTerminationContext context) {
    // Containers are what is recorded.
  }

  @Override
  public ByteBuffer getMetaData() {
    return ByteBuffer.allocate(0);
  }
}
