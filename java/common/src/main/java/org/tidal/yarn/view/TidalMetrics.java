package org.tidal.yarn.view;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsException;
import org.apache.hadoop.metrics2.MetricsInfo;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.MetricsSystem;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.metrics2.lib.Interns;

/**
 * Tidal's metrics2 sources, which the RM's metrics system publishes over JMX and to its sinks: one
 * {@value #QUEUE_RECORD} per queue, named as Hadoop's QueueMetrics name theirs ({@code
 * TidalQueueMetrics,q0=root,q1=etl}), and one cluster-wide {@value #SCHEDULER_RECORD}. Values are
 * read from a {@link StatusCache}. Sources are registered while the scheduler runs and follow the
 * queues the core reports; the metrics system is JVM-wide, so they are unregistered at stop and a
 * scheduler started again in the same JVM registers the same names afresh.
 */
public final class TidalMetrics {
  static final String QUEUE_RECORD = "TidalQueueMetrics";
  public static final String SCHEDULER_RECORD = "TidalSchedulerMetrics";
  static final String CONTEXT = "yarn";

  /** Tag value of the burst phase of a queue that keeps no burst state (TQs, non-BoPF). */
  public static final String NO_BURST = "none";

  private static final Log LOG = LogFactory.getLog(TidalMetrics.class);

  private static final MetricsInfo QUEUE = Interns.info("Queue", "Full queue name");
  private static final MetricsInfo CLASS =
      Interns.info("AdmissionClass", "hard, soft, elastic or rejected");
  private static final MetricsInfo PHASE =
      Interns.info("BurstPhase", "idle, on, catch-up, beyond-declaration; none without bursts");
  private static final MetricsInfo DOMINANT_SHARE =
      Interns.info("DominantShare", "Share of the cluster in the queue's dominant resource");
  private static final MetricsInfo FAIR_SHARE =
      Interns.info("FairShare", "Weighted DRF fair share among queues with demand");
  private static final MetricsInfo LONG_TERM_SHARE =
      Interns.info("LongTermShare", "Average dominant share since the queue was created");
  private static final MetricsInfo GUARANTEED_SHARE =
      Interns.info("GuaranteedShare", "Guaranteed burst rate as a dominant share; 0 without one");
  private static final MetricsInfo RUNNING =
      Interns.info("RunningContainers", "Containers running");
  private static final MetricsInfo PENDING =
      Interns.info("PendingContainers", "Containers asked for and not started");
  private static final MetricsInfo APPS = Interns.info("Apps", "Applications in the queue");
  private static final MetricsInfo BURSTS_STARTED =
      Interns.info("BurstsStarted", "Bursts started since the queue was created");
  private static final MetricsInfo BURSTS_MET =
      Interns.info("BurstsMetDeadline", "Bursts that finished by their deadline");
  private static final MetricsInfo BURSTS_MISSED =
      Interns.info("BurstsMissedDeadline", "Bursts that ended without meeting their deadline");
  private static final MetricsInfo POLICY = Interns.info("Policy", "Scheduling policy");
  private static final MetricsInfo QUEUES = Interns.info("Queues", "Queues the core reports");
  private static final MetricsInfo REJECTED =
      Interns.info("RejectedQueues", "Queues admission control rejected");

  private static final String[] ADMITTED_CLASSES = {"hard", "soft", "elastic"};

  /** Which scheduler's metrics hold each source name in this JVM's metrics system. */
  private static final Map<String, TidalMetrics> OWNERS = new HashMap<String, TidalMetrics>();

  private final StatusCache status;

  /** Registered queue sources by full queue name, null while stopped. */
  private Map<String, String> registered;

  private boolean schedulerRegistered;

  public TidalMetrics(StatusCache status) {
    this.status = status;
  }

  /** Registers the scheduler's source and one per queue of {@code queues}. */
  public synchronized void start(Collection<String> queues) {
    registered = new LinkedHashMap<String, String>();
    schedulerRegistered = register(SCHEDULER_RECORD, "Tidal admission outcomes", new Scheduler());
    sync(queues);
  }

  /**
   * Registers sources for queues that are new and unregisters those of queues that are gone. A
   * no-op while stopped: sources follow the queues only while the scheduler runs.
   */
  public synchronized void sync(Collection<String> queues) {
    if (registered == null) {
      return;
    }
    // A new queue's source is read as it registers: from a snapshot that has the queue.
    status.invalidate();
    Set<String> live = new HashSet<String>(queues);
    for (String queue : new ArrayList<String>(registered.keySet())) {
      if (!live.contains(queue)) {
        unregister(registered.remove(queue));
      }
    }
    for (String queue : queues) {
      if (!registered.containsKey(queue)) {
        String name = sourceName(queue);
        if (register(name, "Tidal metrics of queue " + queue, new Queue(queue))) {
          registered.put(queue, name);
        }
      }
    }
  }

  /** Unregisters every source; the names are free for a scheduler started later. */
  public synchronized void stop() {
    if (registered == null) {
      return;
    }
    for (String name : registered.values()) {
      unregister(name);
    }
    if (schedulerRegistered) {
      unregister(SCHEDULER_RECORD);
    }
    registered = null;
    schedulerRegistered = false;
  }

  /** {@code TidalQueueMetrics,q0=root,q1=etl}, as QueueMetrics names a queue's source. */
  public static String sourceName(String fullQueueName) {
    StringBuilder name = new StringBuilder(QUEUE_RECORD);
    String[] parts = fullQueueName.split("\\.");
    for (int i = 0; i < parts.length; i++) {
      name.append(",q").append(i).append('=').append(parts[i]);
    }
    return name.toString();
  }

  private static MetricsSystem system() {
    return DefaultMetricsSystem.instance();
  }

  /**
   * Registers a source under {@code name}. With several schedulers in one JVM (RMs of a test, an RM
   * started again before the old one stopped) a name belongs to the one that registered it last, as
   * the RM started last is the one watched; the older one's stop leaves it alone. Metrics are never
   * a reason for the scheduler not to run: a failure is logged.
   */
  private boolean register(String name, String description, MetricsSource source) {
    synchronized (OWNERS) {
      TidalMetrics previous = OWNERS.get(name);
      if (previous != null && previous != this) {
        system().unregisterSource(name);
        LOG.info("Metrics source " + name + " moves to the Tidal scheduler started last");
      }
      try {
        system().register(name, description, source);
        OWNERS.put(name, this);
        return true;
      } catch (MetricsException e) {
        OWNERS.remove(name);
        LOG.warn("Metrics source " + name + " not registered: " + e.getMessage());
        return false;
      }
    }
  }

  /** Unregisters {@code name} if this scheduler still owns it. */
  private void unregister(String name) {
    synchronized (OWNERS) {
      if (OWNERS.get(name) == this) {
        OWNERS.remove(name);
        system().unregisterSource(name);
      }
    }
  }

  /** A snapshot for one publishing call, or null (logged) when the core cannot give one. */
  private QueueStatus snapshot() {
    try {
      return status.get();
    } catch (IOException | RuntimeException e) {
      LOG.warn("No Tidal metrics this round: cannot read the queue status: " + e.getMessage());
      return null;
    }
  }

  /** One queue's record; nothing while the core does not report the queue. */
  private final class Queue implements MetricsSource {
    private final String name;

    Queue(String name) {
      this.name = name;
    }

    @Override
    public void getMetrics(MetricsCollector collector, boolean all) {
      QueueStatus snapshot = snapshot();
      QueueStatus.Leaf leaf = snapshot == null ? null : snapshot.find(name);
      if (leaf == null) {
        return;
      }
      QueueStatus.Burst burst = leaf.burst;
      Double guaranteed = leaf.guaranteedShare(snapshot.cluster);
      MetricsRecordBuilder record =
          collector
              .addRecord(QUEUE_RECORD)
              .setContext(CONTEXT)
              .tag(QUEUE, name)
              .tag(CLASS, leaf.admissionClass)
              .tag(PHASE, burst == null ? NO_BURST : burst.phase)
              .addGauge(DOMINANT_SHARE, leaf.dominantShare)
              .addGauge(FAIR_SHARE, leaf.fairShare)
              .addGauge(LONG_TERM_SHARE, leaf.longTermShare)
              .addGauge(GUARANTEED_SHARE, guaranteed == null ? 0.0 : guaranteed.doubleValue())
              .addGauge(RUNNING, leaf.runningContainers)
              .addGauge(PENDING, leaf.pendingContainers)
              .addGauge(APPS, leaf.apps);
      if (burst != null) {
        record
            .addCounter(BURSTS_STARTED, burst.burstsStarted)
            .addCounter(BURSTS_MET, burst.burstsMetDeadline)
            .addGauge(BURSTS_MISSED, burst.burstsMissedDeadline());
      }
    }
  }

  /** The cluster-wide record: how admission control classed the queues. */
  private final class Scheduler implements MetricsSource {
    @Override
    public void getMetrics(MetricsCollector collector, boolean all) {
      QueueStatus snapshot = snapshot();
      if (snapshot == null) {
        return;
      }
      MetricsRecordBuilder record =
          collector
              .addRecord(SCHEDULER_RECORD)
              .setContext(CONTEXT)
              .tag(POLICY, snapshot.policy)
              .addGauge(QUEUES, snapshot.leaves.size());
      for (String admitted : ADMITTED_CLASSES) {
        record.addGauge(
            Interns.info(capitalised(admitted) + "Queues", "Queues admitted as " + admitted),
            count(snapshot, admitted));
      }
      record.addGauge(REJECTED, count(snapshot, "rejected"));
    }
  }

  private static int count(QueueStatus snapshot, String admissionClass) {
    int count = 0;
    for (QueueStatus.Leaf leaf : snapshot.leaves) {
      if (admissionClass.equals(leaf.admissionClass)) {
        count++;
      }
    }
    return count;
  }

  private static String capitalised(String word) {
    return Character.toUpperCase(word.charAt(0)) + word.substring(1);
  }
}
