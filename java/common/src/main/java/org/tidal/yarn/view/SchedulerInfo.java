package org.tidal.yarn.view;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.LongUnaryOperator;
import org.tidal.yarn.config.TidalConfig;

/**
 * The answer of {@code GET /ws/v1/cluster/scheduler} for Tidal: the queue tree in FairScheduler's
 * field names where the meaning is the same (queueName, usedResources, fairResources, maxResources,
 * numActiveApps, childQueues), plus Tidal's own fields. Parent queues hold their children in
 * childQueues, as in FairScheduler's answer; a parent's figures are the totals of its leaves. Burst
 * times are wall-clock milliseconds since 1970, as the RM's REST API gives every time.
 */
public final class SchedulerInfo {
  public static final String TYPE = "tidalScheduler";

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private SchedulerInfo() {}

  /**
   * {"scheduler":{"schedulerInfo":{...}}}; {@code wallClock} maps core times to wall clock. A
   * string, so that no caller outside the jar meets the Jackson types it shades.
   */
  public static String json(QueueStatus status, LongUnaryOperator wallClock) {
    return of(status, wallClock).toString();
  }

  private static ObjectNode of(QueueStatus status, LongUnaryOperator wallClock) {
    ObjectNode info = NODES.objectNode();
    info.put("type", TYPE);
    info.put("policy", status.policy);
    info.put("appPolicy", status.appPolicy);
    info.put("numNodes", status.nodes);
    info.set("clusterResources", resources(status.cluster));
    info.set("rootQueue", root(status, wallClock));
    ObjectNode scheduler = NODES.objectNode();
    scheduler.set("schedulerInfo", info);
    ObjectNode top = NODES.objectNode();
    top.set("scheduler", scheduler);
    return top;
  }

  private static ObjectNode root(QueueStatus status, LongUnaryOperator wallClock) {
    ObjectNode root = NODES.objectNode();
    root.put("queueName", TidalConfig.ROOT_QUEUE);
    root.set("usedResources", resources(status.used()));
    root.set("fairResources", resources(status.cluster));
    root.set("maxResources", resources(status.cluster));
    int apps = 0;
    int waiting = 0;
    for (QueueStatus.Leaf leaf : status.leaves) {
      apps += leaf.apps;
      waiting += leaf.waitingApps;
    }
    root.put("numActiveApps", apps);
    root.put("numPendingApps", waiting);
    root.put("dominantShare", status.used().dominantShareOf(status.cluster));
    root.set("childQueues", children(status, TidalConfig.ROOT_QUEUE, wallClock));
    return root;
  }

  /** {"queue":[...]}: the queues directly under {@code parent}, each with its own children. */
  private static ObjectNode children(
      QueueStatus status, String parent, LongUnaryOperator wallClock) {
    ArrayNode children = NODES.arrayNode();
    for (QueueStatus.Leaf child : status.children(parent)) {
      ObjectNode queue = leaf(child, status.cluster, wallClock);
      if (!child.leaf) {
        queue.set("childQueues", children(status, child.name, wallClock));
      }
      children.add(queue);
    }
    ObjectNode childQueues = NODES.objectNode();
    childQueues.set("queue", children);
    return childQueues;
  }

  private static ObjectNode leaf(
      QueueStatus.Leaf leaf, QueueStatus.Amount cluster, LongUnaryOperator wallClock) {
    ObjectNode queue = NODES.objectNode();
    queue.put("queueName", leaf.name);
    queue.put("type", leaf.type);
    queue.put("weight", leaf.weight);
    queue.put("class", leaf.admissionClass);
    queue.put("admitted", !leaf.rejected());
    queue.put("admissionReason", leaf.admissionReason);
    queue.set("usedResources", resources(leaf.used));
    queue.set(
        "fairResources",
        resources(
            Math.round(cluster.memoryMb * leaf.fairShare),
            Math.round(cluster.vcores * leaf.fairShare)));
    // Queues are work conserving: each may take the whole cluster.
    queue.set("maxResources", resources(cluster));
    queue.set("pendingResources", resources(leaf.pending));
    if (leaf.guaranteed != null) {
      queue.set("guaranteedResources", resources(leaf.guaranteed));
    } else {
      queue.putNull("guaranteedResources");
    }
    // As FairScheduler's view: active apps may get containers, pending ones wait for a
    // running-apps limit.
    queue.put("numActiveApps", leaf.apps);
    queue.put("numPendingApps", leaf.waitingApps);
    queue.put("runningContainers", leaf.runningContainers);
    queue.put("pendingContainers", leaf.pendingContainers);
    queue.put("dominantShare", leaf.dominantShare);
    queue.put("fairShare", leaf.fairShare);
    queue.put("longTermShare", leaf.longTermShare);
    Double guaranteedShare = leaf.guaranteedShare(cluster);
    if (guaranteedShare != null) {
      queue.put("guaranteedShare", guaranteedShare.doubleValue());
    } else {
      queue.putNull("guaranteedShare");
    }
    if (leaf.burst != null) {
      queue.set("burst", burst(leaf.burst, wallClock));
    } else {
      queue.putNull("burst");
    }
    return queue;
  }

  private static ObjectNode burst(QueueStatus.Burst burst, LongUnaryOperator wallClock) {
    ObjectNode node = NODES.objectNode();
    node.put("phase", burst.phase);
    putTime(node, "startedMs", burst.startedMs, wallClock);
    putTime(node, "deadlineAtMs", burst.deadlineAtMs, wallClock);
    node.put("burstsStarted", burst.burstsStarted);
    node.put("burstsMetDeadline", burst.burstsMetDeadline);
    return node;
  }

  private static void putTime(ObjectNode node, String field, Long coreMs, LongUnaryOperator clock) {
    if (coreMs != null) {
      node.put(field, clock.applyAsLong(coreMs.longValue()));
    } else {
      node.putNull(field);
    }
  }

  private static ObjectNode resources(QueueStatus.Amount amount) {
    return resources(amount.memoryMb, amount.vcores);
  }

  /** FairScheduler's resource shape: {"memory": MB, "vCores": n}. */
  private static ObjectNode resources(long memoryMb, long vcores) {
    ObjectNode node = NODES.objectNode();
    node.put("memory", memoryMb);
    node.put("vCores", vcores);
    return node;
  }
}
