package org.tidal.it;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.event.Dispatcher;
import org.apache.hadoop.yarn.event.EventHandler;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.NodeUpdateSchedulerEvent;
import org.tidal.yarn.TidalScheduler;

/**
 * What the ResourceManagers of this JVM allocate, observed from inside the RM and the same way for
 * every scheduler.
 *
 * <ul>
 *   <li>New allocations: a 2.7 RM container that a scheduler allocates goes from NEW to ALLOCATED
 *       and tells its attempt CONTAINER_ALLOCATED on the RM's dispatcher; a container recovered
 *       after a restart goes from NEW straight to RUNNING and sends nothing. So the first such
 *       event after a restart is the new RM's first new allocation, whatever the scheduler.
 *   <li>Node heartbeats (only when asked for): each NODE_UPDATE the scheduler handles, with the
 *       containers on that node before and after and the scheduler's core rebuild count around it,
 *       under the scheduler's monitor, so that a test can tell exactly which heartbeat was the one
 *       it armed to fail. An exception the scheduler lets out of a heartbeat is recorded, not
 *       passed on: the RM would exit the JVM on it.
 * </ul>
 */
final class RmProbe {
  /** One CONTAINER_ALLOCATED event. */
  static final class Allocation {
    final long nanos;
    final ApplicationAttemptId attempt;

    Allocation(long nanos, ApplicationAttemptId attempt) {
      this.nanos = nanos;
      this.attempt = attempt;
    }
  }

  /** One node heartbeat handled by the scheduler after the probe was armed. */
  static final class Heartbeat {
    final long nanos;
    final NodeId node;

    /** Whether this is the first heartbeat after {@link #armNextHeartbeat}. */
    final boolean armed;

    final int allocated;
    final int completed;

    /** vcores free on the node before the heartbeat plus those its completed containers freed. */
    final int roomVcores;

    /** Containers the scheduler's applications were asking for when the heartbeat began. */
    final int pendingContainers;

    final int rebuildsBefore;
    final int rebuildsAfter;

    /** What the scheduler threw out of the heartbeat, if anything (a real RM would exit). */
    final Throwable failure;

    Heartbeat(
        long nanos,
        NodeId node,
        boolean armed,
        int allocated,
        int completed,
        int roomVcores,
        int pendingContainers,
        int rebuildsBefore,
        int rebuildsAfter,
        Throwable failure) {
      this.nanos = nanos;
      this.node = node;
      this.armed = armed;
      this.allocated = allocated;
      this.completed = completed;
      this.roomVcores = roomVcores;
      this.pendingContainers = pendingContainers;
      this.rebuildsBefore = rebuildsBefore;
      this.rebuildsAfter = rebuildsAfter;
      this.failure = failure;
    }
  }

  private static final List<Allocation> ALLOCATIONS = new CopyOnWriteArrayList<>();
  private static final List<Heartbeat> HEARTBEATS = new CopyOnWriteArrayList<>();

  /** Set under the scheduler's monitor; the next heartbeat clears it. */
  private static volatile boolean armNext;

  private static volatile boolean recordHeartbeats;

  private RmProbe() {}

  static void reset() {
    ALLOCATIONS.clear();
    HEARTBEATS.clear();
    armNext = false;
    recordHeartbeats = false;
  }

  static List<Allocation> allocations() {
    return new ArrayList<>(ALLOCATIONS);
  }

  /** The first allocation after {@code nanos}, or null. */
  static Allocation firstAllocationAfter(long nanos) {
    for (Allocation a : ALLOCATIONS) {
      if (a.nanos > nanos) {
        return a;
      }
    }
    return null;
  }

  static int allocationsAfter(long nanos) {
    int n = 0;
    for (Allocation a : ALLOCATIONS) {
      if (a.nanos > nanos) {
        n++;
      }
    }
    return n;
  }

  static List<Heartbeat> heartbeats() {
    return new ArrayList<>(HEARTBEATS);
  }

  /**
   * Marks the next heartbeat the scheduler handles as the armed one. The caller holds the
   * scheduler's monitor, as the probe does around each heartbeat, so that no heartbeat is half done
   * when the mark is set.
   */
  static void armNextHeartbeat() {
    recordHeartbeats = true;
    armNext = true;
  }

  /** Listens for new allocations on an RM's dispatcher (before the RM starts). */
  static void watchAllocations(Dispatcher dispatcher) {
    dispatcher.register(
        RMAppAttemptEventType.class,
        (EventHandler<RMAppAttemptEvent>)
            event -> {
              if (event.getType() == RMAppAttemptEventType.CONTAINER_ALLOCATED) {
                ALLOCATIONS.add(new Allocation(System.nanoTime(), event.getApplicationAttemptId()));
              }
            });
  }

  /**
   * The scheduler as the RM's scheduler event thread sees it: node heartbeats go through {@link
   * #heartbeat}, everything else straight to the scheduler.
   */
  static ResourceScheduler observeHeartbeats(ResourceScheduler scheduler, RMContext rmContext) {
    InvocationHandler handler =
        (proxy, method, args) -> {
          if (method.getName().equals("handle")
              && args != null
              && args.length == 1
              && args[0] instanceof NodeUpdateSchedulerEvent) {
            heartbeat(scheduler, rmContext, (NodeUpdateSchedulerEvent) args[0]);
            return null;
          }
          try {
            return method.invoke(scheduler, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        };
    return (ResourceScheduler)
        Proxy.newProxyInstance(
            RmProbe.class.getClassLoader(), new Class<?>[] {ResourceScheduler.class}, handler);
  }

  private static void heartbeat(
      ResourceScheduler scheduler, RMContext rmContext, NodeUpdateSchedulerEvent event) {
    // The scheduler's own heartbeat handling takes this monitor too (FifoScheduler and its
    // subclasses do); taking it around every whole heartbeat lets the test arm between two.
    synchronized (scheduler) {
      if (!recordHeartbeats) {
        scheduler.handle(event);
        return;
      }
      boolean armed = armNext;
      armNext = false;
      NodeId nodeId = event.getRMNode().getNodeID();
      SchedulerNode node = ((AbstractYarnScheduler<?, ?>) scheduler).getSchedulerNode(nodeId);
      List<RMContainer> before = running(node);
      int free = node == null ? 0 : node.getAvailableResource().getVirtualCores();
      int pending = pendingContainers(scheduler, rmContext);
      int rebuildsBefore = rebuilds(scheduler);
      Throwable failure = null;
      try {
        scheduler.handle(event);
      } catch (RuntimeException | Error e) {
        failure = e;
      }
      Set<ContainerId> beforeIds = ids(before);
      Set<ContainerId> afterIds = ids(running(node));
      int allocated = 0;
      for (ContainerId id : afterIds) {
        if (!beforeIds.contains(id)) {
          allocated++;
        }
      }
      int completed = 0;
      int freed = 0;
      for (RMContainer c : before) {
        if (!afterIds.contains(c.getContainerId())) {
          completed++;
          freed += c.getContainer().getResource().getVirtualCores();
        }
      }
      HEARTBEATS.add(
          new Heartbeat(
              System.nanoTime(),
              nodeId,
              armed,
              allocated,
              completed,
              free + freed,
              pending,
              rebuildsBefore,
              rebuilds(scheduler),
              failure));
      // Not rethrown: an exception out of a heartbeat makes the RM's scheduler thread exit the
      // JVM, which here is the test's. The test fails on the recorded failure instead.
    }
  }

  private static List<RMContainer> running(SchedulerNode node) {
    return node == null ? new ArrayList<>() : node.getRunningContainers();
  }

  private static Set<ContainerId> ids(List<RMContainer> containers) {
    Set<ContainerId> ids = new HashSet<>();
    for (RMContainer c : containers) {
      ids.add(c.getContainerId());
    }
    return ids;
  }

  /** Containers every running attempt asks for (its off-switch requests), 0 if unknown. */
  private static int pendingContainers(ResourceScheduler scheduler, RMContext rmContext) {
    int pending = 0;
    for (RMApp app : rmContext.getRMApps().values()) {
      RMAppAttempt attempt = app.getCurrentAppAttempt();
      if (attempt == null) {
        continue;
      }
      SchedulerApplicationAttempt schedulerAttempt =
          ((AbstractYarnScheduler<?, ?>) scheduler)
              .getApplicationAttempt(attempt.getAppAttemptId());
      if (schedulerAttempt == null) {
        continue;
      }
      for (ResourceRequest request :
          schedulerAttempt.getAppSchedulingInfo().getAllResourceRequests()) {
        if (ResourceRequest.ANY.equals(request.getResourceName())) {
          pending += Math.max(0, request.getNumContainers());
        }
      }
    }
    return pending;
  }

  /** How many times a Tidal scheduler rebuilt its core; -1 for other schedulers. */
  private static int rebuilds(ResourceScheduler scheduler) {
    return scheduler instanceof TidalScheduler ? ((TidalScheduler) scheduler).coreRebuilds() : -1;
  }
}
