package org.tidal.yarn.queue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.state.DurableState;
import org.tidal.yarn.view.QueueStatus;
import org.tidal.yarn.view.StatusCache;
import org.tidal.yarn.view.TidalMetrics;
import org.tidal.yarn.view.TidalQueueReport;

/**
 * The scheduler's queues as Hadoop sees them, as FairScheduler's QueueManager keeps its own: a
 * {@link TidalQueue} handle for every queue the core reports, created with its parents on first
 * use, the queue info and ACLs YARN's clients read, and queue registration at run time. The queues'
 * state and shares live in the core; every view here reads a fresh snapshot of it.
 */
public final class QueueManager {
  private static final Log LOG = LogFactory.getLog(QueueManager.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ROOT = TidalConfig.ROOT_QUEUE;

  private final CoreInstance core;
  private final Configuration conf;
  private final DurableState durable;
  private final QueueAccess access;
  private final Map<String, TidalQueue> queues = new ConcurrentHashMap<String, TidalQueue>();
  private final TidalQueue root;

  /** Snapshots for the metrics and the queue reports, at most a second old. */
  private final StatusCache cachedStatus =
      new StatusCache(this::statusJson, StatusCache.MAX_AGE_MS);

  private final TidalMetrics metrics = new TidalMetrics(cachedStatus);

  public QueueManager(CoreInstance core, Configuration conf, DurableState durable) {
    this.core = core;
    this.conf = conf;
    this.durable = durable;
    this.access = new QueueAccess(conf);
    root = new TidalQueue(this, ROOT, null, conf);
    queues.put(ROOT, root);
  }

  public TidalQueue root() {
    return root;
  }

  /** Who may do what in which queue, as of the last {@link #syncWithCore}. */
  public QueueAccess access() {
    return access;
  }

  /** "a" and "root.a" name the same queue; null and "" name the root. The core builds names. */
  public static String fullName(String queueName) {
    return TidalNative.fullQueueName(queueName);
  }

  /** Whether a queue of this full name has a Hadoop-side handle. */
  public boolean contains(String fullName) {
    return queues.containsKey(fullName);
  }

  /** The Java handle of a queue the core named, created with its parents on first use. */
  public TidalQueue queue(String fullName) {
    TidalQueue queue = queues.get(fullName);
    if (queue != null) {
      return queue;
    }
    synchronized (queues) {
      queue = queues.get(fullName);
      if (queue == null) {
        int dot = fullName.lastIndexOf('.');
        TidalQueue parent = dot > 0 ? queue(fullName.substring(0, dot)) : root;
        queue = new TidalQueue(this, fullName, parent, conf);
        queues.put(fullName, queue);
      }
      return queue;
    }
  }

  /**
   * Creates the Java side of every queue the core reports and takes their ACLs. Called whenever the
   * core's queues change; serialised so that the last call leaves the newest ACLs.
   */
  public synchronized void syncWithCore() throws IOException {
    QueueStatus status = status();
    for (QueueStatus.Leaf leaf : status.queues) {
      queue(leaf.name);
    }
    access.update(status);
    metrics.sync(names(status));
  }

  /** Publishes the queues' metrics from now on (see {@link TidalMetrics}). */
  public synchronized void startMetrics() throws IOException {
    metrics.start(names(status()));
  }

  /** Takes the queues' metrics sources away, so that a later scheduler can register them. */
  public void stopMetrics() {
    metrics.stop();
  }

  private static List<String> names(QueueStatus status) {
    List<String> names = new ArrayList<String>();
    for (QueueStatus.Leaf leaf : status.queues) {
      names.add(leaf.name);
    }
    return names;
  }

  /** The core's queue status JSON (see {@link TidalNative#queueStatusJson}). */
  public String statusJson() {
    return TidalNative.queueStatusJson(core.handle());
  }

  private QueueStatus status() throws IOException {
    return QueueStatus.parse(statusJson());
  }

  /**
   * The queue's application lifetimes from a recent snapshot, in seconds: its maximum and its
   * default, -1 where it sets none or the core does not have the queue. The RM asks while it stores
   * a new application, which nothing may fail: a status the core cannot give counts as unset, and
   * is logged.
   */
  public long[] appLifetimes(String queueName) {
    QueueStatus.Leaf leaf = null;
    try {
      leaf = queueName == null ? null : cachedStatus.get().find(fullName(queueName));
    } catch (IOException | TidalException e) {
      LOG.error("Cannot read the lifetimes of queue " + queueName + ": " + e.getMessage());
    }
    return new long[] {
      leaf == null || leaf.maxLifetimeS == null ? -1 : leaf.maxLifetimeS,
      leaf == null || leaf.defaultLifetimeS == null ? -1 : leaf.defaultLifetimeS
    };
  }

  /** A queue's report from a recent snapshot; null for a queue the core does not report. */
  public TidalQueueReport queueReport(String queueName) throws IOException {
    QueueStatus status = cachedStatus.get();
    QueueStatus.Leaf leaf = status.find(fullName(queueName));
    return leaf == null ? null : new TidalQueueReport(status, leaf);
  }

  /** Queue info of a queue named short or full; an IOException for an unknown one. */
  public QueueInfo queueInfo(String queueName, boolean includeChildQueues, boolean recursive)
      throws IOException {
    QueueInfo info = queueInfo(status(), fullName(queueName), includeChildQueues, recursive);
    if (info == null) {
      throw new IOException("Unknown queue: " + queueName);
    }
    return info;
  }

  /**
   * Queue info of a queue's handle, from a fresh core snapshot: STOPPED when the core no longer has
   * the queue (a queue dropped from the file keeps its handle) or cannot report it.
   */
  QueueInfo queueInfoOrStopped(String fullName, boolean includeChildQueues, boolean recursive) {
    QueueInfo info = null;
    try {
      info = queueInfo(status(), fullName, includeChildQueues, recursive);
    } catch (IOException e) {
      LOG.error("Cannot read queue status: " + e.getMessage(), e);
    }
    return info != null ? info : stoppedQueueInfo(fullName);
  }

  /**
   * Queue info in the terms of {@code yarn queue -status}: as in FairScheduler, the capacities are
   * fractions of the whole cluster. Capacity is what the queue is promised: an LQ's guaranteed rate
   * as a dominant share where it has one, else its fair share; the current capacity is its dominant
   * share. A queue admission control rejected takes no applications, so it is STOPPED. Node-label
   * fields stay empty: the RM would copy a queue's default label expression into its requests.
   */
  private static QueueInfo queueInfo(
      QueueStatus status, String fullName, boolean includeChildQueues, boolean recursive) {
    QueueInfo info = TidalQueue.newQueueInfo(fullName);
    info.setMaximumCapacity(1.0f);
    info.setApplications(Collections.<ApplicationReport>emptyList());
    if (fullName.equals(ROOT)) {
      info.setQueueState(QueueState.RUNNING);
      info.setCapacity(1.0f);
      info.setCurrentCapacity((float) status.used().dominantShareOf(status.cluster));
    } else {
      QueueStatus.Leaf leaf = status.find(fullName);
      if (leaf == null) {
        return null;
      }
      info.setQueueState(leaf.rejected() ? QueueState.STOPPED : QueueState.RUNNING);
      Double guaranteed = leaf.guaranteedShare(status.cluster);
      info.setCapacity((float) (guaranteed != null ? guaranteed.doubleValue() : leaf.fairShare));
      info.setCurrentCapacity((float) leaf.dominantShare);
    }
    List<QueueInfo> children = new ArrayList<QueueInfo>();
    if (includeChildQueues) {
      for (QueueStatus.Leaf leaf : status.queues) {
        if (isChild(fullName, leaf.name)) {
          children.add(queueInfo(status, leaf.name, recursive, recursive));
        }
      }
    }
    info.setChildQueues(children);
    return info;
  }

  private static boolean isChild(String parent, String name) {
    return name.startsWith(parent + ".") && name.indexOf('.', parent.length() + 1) < 0;
  }

  private static QueueInfo stoppedQueueInfo(String fullName) {
    QueueInfo info = TidalQueue.newQueueInfo(fullName);
    info.setQueueState(QueueState.STOPPED);
    info.setChildQueues(new ArrayList<QueueInfo>());
    return info;
  }

  /** The rights {@code user} has on the root and on each queue. */
  public List<QueueUserACLInfo> userAclInfo(UserGroupInformation user) {
    List<QueueUserACLInfo> infos = new ArrayList<QueueUserACLInfo>();
    infos.add(access.userAclInfo(ROOT, user));
    try {
      for (QueueStatus.Leaf leaf : status().queues) {
        infos.add(access.userAclInfo(leaf.name, user));
      }
    } catch (IOException e) {
      LOG.error("Cannot read queue status: " + e.getMessage(), e);
    }
    return infos;
  }

  /**
   * Registers a queue at run time for {@code user} and returns the core's verdict JSON. An admitted
   * queue is stored durably before this returns, and gets its Hadoop-side handle right away, so
   * apps can be submitted to it. When the state cannot be stored the queue is removed again and a
   * {@link TidalException} says why: an acknowledged queue must survive a restart.
   */
  public String register(String queueXml, String user, boolean admin) throws IOException {
    String verdict = TidalNative.registerQueue(core.handle(), queueXml, user, admin);
    JsonNode node = JSON.readTree(verdict);
    String name = node.path("queue").textValue();
    if (name != null && node.path("admitted").booleanValue()) {
      try {
        durable.save();
      } catch (IOException e) {
        TidalNative.unregisterQueue(core.handle(), name, user, true);
        throw new TidalException(
            "queue " + name + " not registered: its state cannot be stored: " + e.getMessage());
      }
      syncWithCore();
    }
    LOG.info(
        "User "
            + user
            + (admin ? " (administrator)" : "")
            + " registered queue "
            + name
            + ": "
            + node.path("class").textValue()
            + " ("
            + node.path("reason").textValue()
            + ")");
    return verdict;
  }

  /**
   * Removes a queue registered at run time; the core checks that {@code user} may. The removal is
   * stored before this returns; when it cannot be, a {@link TidalException} says that the queue
   * would come back after a restart.
   */
  public void unregister(String queue, String user, boolean admin) {
    TidalNative.unregisterQueue(core.handle(), queue, user, admin);
    try {
      metrics.sync(names(status()));
    } catch (IOException e) {
      LOG.error("Cannot read queue status: " + e.getMessage(), e);
    }
    try {
      durable.save();
    } catch (IOException e) {
      throw new TidalException(
          "queue "
              + queue
              + " is removed but the removal cannot be stored, so it returns after a restart: "
              + e.getMessage());
    }
    LOG.info("User " + user + (admin ? " (administrator)" : "") + " unregistered queue " + queue);
  }
}
