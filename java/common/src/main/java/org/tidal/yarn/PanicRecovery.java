package org.tidal.yarn;

import java.io.IOException;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalPanicException;
import org.tidal.yarn.config.AllocationFileLoader;
import org.tidal.yarn.queue.QueueManager;
import org.tidal.yarn.state.DurableState;

/**
 * Contains a panic of the native core. The bridge poisons an instance that panicked (every later
 * call on it fails), since it may be half-updated; this replaces it with a fresh core built from
 * what the RM itself knows and Tidal's last saved state: the queue file, runtime queues, admission
 * classes and bursts ({@link DurableState}), then the nodes, the applications under their keys,
 * every live container (adopted, so none is stopped), and every attempt's outstanding asks and
 * blacklist. Hints are not replayed: each AM's next hints document brings them back.
 *
 * <p>Runs under the scheduler's monitor, and under the durable state's, so that no periodic save
 * stores the half-built core.
 */
final class PanicRecovery {
  private static final Log LOG = LogFactory.getLog(PanicRecovery.class);

  private final CoreInstance core;
  private final AllocationFileLoader allocationFile;
  private final DurableState durable;
  private final AllocationIds ids;
  private final ClusterNodes nodes;
  private final AppAttemptRegistry attempts;
  private final AllocateHandler allocateHandler;
  private final QueueManager queues;
  private final NodeReservations reservations;

  /** The scheduler's live node records. */
  private final TidalScheduler scheduler;

  private volatile int rebuilds;

  PanicRecovery(
      CoreInstance core,
      AllocationFileLoader allocationFile,
      DurableState durable,
      AllocationIds ids,
      ClusterNodes nodes,
      AppAttemptRegistry attempts,
      AllocateHandler allocateHandler,
      QueueManager queues,
      NodeReservations reservations,
      TidalScheduler scheduler) {
    this.reservations = reservations;
    this.scheduler = scheduler;
    this.core = core;
    this.allocationFile = allocationFile;
    this.durable = durable;
    this.ids = ids;
    this.nodes = nodes;
    this.attempts = attempts;
    this.allocateHandler = allocateHandler;
    this.queues = queues;
  }

  /** How many times the core was rebuilt. */
  int rebuilds() {
    return rebuilds;
  }

  /** Replaces the poisoned core; see the class comment. */
  void rebuild(TidalPanicException cause, String during) {
    LOG.error(
        "Tidal core panicked during "
            + during
            + ": "
            + cause.getMessage()
            + "; rebuilding it from the ResourceManager's view",
        cause);
    long started = System.nanoTime();
    int adopted = 0;
    int apps;
    synchronized (durable) {
      core.replace(() -> allocationFile.recreate(core));
      durable.restoreLast();
      ids.newCore();
      // The new core holds no node: asks that still do not fit reserve again.
      reservations.cancelAll(scheduler.allNodes());
      nodes.replay();
      Map<Long, FiCaSchedulerApp> current = attempts.replay();
      apps = current.size();
      for (Map.Entry<Long, FiCaSchedulerApp> entry : current.entrySet()) {
        for (RMContainer container : entry.getValue().getLiveContainers()) {
          if (nodes.adopt(container)) {
            adopted++;
          }
        }
      }
      for (Map.Entry<Long, FiCaSchedulerApp> entry : current.entrySet()) {
        allocateHandler.replay(entry.getValue(), entry.getKey());
      }
    }
    try {
      queues.syncWithCore();
    } catch (IOException e) {
      LOG.error("Cannot read the rebuilt core's queues: " + e.getMessage(), e);
    }
    nodes.publishAvailable();
    rebuilds++;
    LOG.info(
        "Rebuilt the Tidal core in "
            + (System.nanoTime() - started) / 1000000
            + " ms: "
            + apps
            + " attempts, "
            + adopted
            + " running containers adopted, none stopped");
  }
}
