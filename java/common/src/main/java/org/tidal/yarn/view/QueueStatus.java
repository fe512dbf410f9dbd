package org.tidal.yarn.view;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.tidal.yarn.bridge.TidalNative;

/** A parsed {@link TidalNative#queueStatusJson} snapshot. */
public final class QueueStatus {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** A number, or null where the JSON has none. */
  private static Long optionalLong(JsonNode node) {
    return node.isNumber() ? Long.valueOf(node.longValue()) : null;
  }

  /** A queue's ACLs in Hadoop's notation, null where its definition gives none. */
  public static final class Acls {
    public final String submitApps;
    public final String administerApps;

    Acls(JsonNode node) {
      submitApps = node.path("submit_apps").textValue();
      administerApps = node.path("administer_apps").textValue();
    }
  }

  /** Memory, vcores, GPUs and FPGAs, as the core reports an amount of resources. */
  public static final class Amount {
    final long memoryMb;
    final long vcores;
    final long gpus;
    final long fpgas;

    Amount(long memoryMb, long vcores, long gpus, long fpgas) {
      this.memoryMb = memoryMb;
      this.vcores = vcores;
      this.gpus = gpus;
      this.fpgas = fpgas;
    }

    Amount(JsonNode node) {
      this(
          node.path("memory_mb").longValue(),
          node.path("vcores").longValue(),
          node.path("gpus").longValue(),
          node.path("fpgas").longValue());
    }

    Amount plus(Amount other) {
      return new Amount(
          memoryMb + other.memoryMb, vcores + other.vcores, gpus + other.gpus, fpgas + other.fpgas);
    }

    /** The largest fraction of {@code whole} over the dimensions: the dominant share. */
    public double dominantShareOf(Amount whole) {
      return Math.max(
          Math.max(share(memoryMb, whole.memoryMb), share(vcores, whole.vcores)),
          Math.max(share(gpus, whole.gpus), share(fpgas, whole.fpgas)));
    }

    private static double share(long part, long total) {
      return total <= 0 ? 0.0 : (double) part / total;
    }
  }

  /**
   * An LQ's burst state. Times are on the core's clock (milliseconds since the scheduler instance
   * started), null while no burst is on.
   */
  static final class Burst {
    final String phase;
    final Long startedMs;
    final Long deadlineAtMs;
    final long burstsStarted;
    final long burstsMetDeadline;

    Burst(JsonNode node) {
      phase = node.path("phase").textValue();
      startedMs = optionalLong(node.path("started_ms"));
      deadlineAtMs = optionalLong(node.path("deadline_at_ms"));
      burstsStarted = node.path("bursts_started").longValue();
      burstsMetDeadline = node.path("bursts_met_deadline").longValue();
    }

    /** Whether a burst is running now (any phase but idle). */
    boolean isOn() {
      return !"idle".equals(phase);
    }

    /** Bursts that ended without meeting their deadline; the running one is not counted. */
    long burstsMissedDeadline() {
      long ended = isOn() ? burstsStarted - 1 : burstsStarted;
      return Math.max(0, ended - burstsMetDeadline);
    }
  }

  /** One queue of the snapshot: a leaf, or a parent with the totals of the leaves below it. */
  public static final class Leaf {
    public final String name;

    /** The parent's full name ({@code root} for a queue directly under the root). */
    final String parent;

    /** Whether the queue takes applications; false for a parent queue. */
    final boolean leaf;

    /** {@code tq} or {@code lq}; {@code parent} for a parent queue. */
    final String type;

    final double weight;
    final boolean admitted;

    /** hard, soft, elastic or rejected. */
    final String admissionClass;

    final String admissionReason;

    /** The rate guaranteed while a burst is on; null for queues without a guarantee. */
    final Amount guaranteed;

    /** Null under policies that keep no burst state, and for TQs. */
    final Burst burst;

    /** Runnable apps, and apps held back by a running-apps limit. */
    final int apps;

    final int waitingApps;
    final long runningContainers;
    final long pendingContainers;
    final Amount used;
    final Amount pending;
    public final double dominantShare;
    public final double fairShare;
    final double longTermShare;
    public final Acls acls;

    /**
     * Seconds the queue's apps may run at most, and get when they ask for no limit; null: unset.
     */
    public final Long maxLifetimeS;

    public final Long defaultLifetimeS;

    Leaf(JsonNode node) {
      name = node.path("name").textValue();
      parent = node.path("parent").textValue();
      leaf = node.path("leaf").booleanValue();
      type = node.path("type").textValue();
      weight = node.path("weight").doubleValue();
      admitted = node.path("admitted").booleanValue();
      admissionClass = node.path("class").textValue();
      admissionReason = node.path("admission_reason").textValue();
      guaranteed = node.path("guaranteed").isObject() ? new Amount(node.path("guaranteed")) : null;
      burst = node.path("burst").isObject() ? new Burst(node.path("burst")) : null;
      apps = node.path("apps").intValue();
      waitingApps = node.path("waiting_apps").intValue();
      runningContainers = node.path("running_containers").longValue();
      pendingContainers = node.path("pending_containers").longValue();
      used = new Amount(node.path("used"));
      pending = new Amount(node.path("pending"));
      dominantShare = node.path("dominant_share").doubleValue();
      fairShare = node.path("fair_share").doubleValue();
      longTermShare = node.path("long_term_share").doubleValue();
      acls = new Acls(node.path("acls"));
      maxLifetimeS = optionalLong(node.path("lifetime").path("max_s"));
      defaultLifetimeS = optionalLong(node.path("lifetime").path("default_s"));
    }

    /** Whether admission control rejected the queue (also when re-admission did). */
    public boolean rejected() {
      return !admitted;
    }

    /** The guaranteed rate as a dominant share of {@code cluster}; null without a guarantee. */
    public Double guaranteedShare(Amount cluster) {
      return guaranteed == null ? null : Double.valueOf(guaranteed.dominantShareOf(cluster));
    }
  }

  public final String policy;
  final String appPolicy;
  final int nodes;
  public final Amount cluster;
  public final Acls rootAcls;

  /** Every queue below the root: the leaves, then the parents. */
  public final List<Leaf> queues;

  /** The leaf queues, which take applications. */
  final List<Leaf> leaves;

  private QueueStatus(JsonNode root) throws IOException {
    policy = root.path("policy").textValue();
    appPolicy = root.path("app_policy").textValue();
    nodes = root.path("nodes").intValue();
    cluster = new Amount(root.path("cluster"));
    rootAcls = new Acls(root.path("root_acls"));
    List<Leaf> all = new ArrayList<Leaf>();
    List<Leaf> leaves = new ArrayList<Leaf>();
    for (JsonNode node : root.path("queues")) {
      Leaf leaf = new Leaf(node);
      if (leaf.name == null || leaf.parent == null) {
        throw new IOException("queue status entry without a name or parent: " + node);
      }
      all.add(leaf);
      if (leaf.leaf) {
        leaves.add(leaf);
      }
    }
    queues = Collections.unmodifiableList(all);
    this.leaves = Collections.unmodifiableList(leaves);
  }

  /** The queues directly under the queue named {@code parent} (full name). */
  List<Leaf> children(String parent) {
    List<Leaf> children = new ArrayList<Leaf>();
    for (Leaf queue : queues) {
      if (queue.parent.equals(parent)) {
        children.add(queue);
      }
    }
    return children;
  }

  public static QueueStatus parse(String json) throws IOException {
    JsonNode root = MAPPER.readTree(json);
    if (!root.isObject()) {
      throw new IOException("queue status is not a JSON object: " + json);
    }
    return new QueueStatus(root);
  }

  public Leaf find(String fullName) {
    for (Leaf leaf : queues) {
      if (leaf.name.equals(fullName)) {
        return leaf;
      }
    }
    return null;
  }

  /** What all queues use together. */
  public Amount used() {
    Amount sum = new Amount(0, 0, 0, 0);
    for (Leaf leaf : leaves) {
      sum = sum.plus(leaf.used);
    }
    return sum;
  }
}
