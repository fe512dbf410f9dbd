package org.tidal.yarn;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;

/** A parsed {@link TidalNative#queueStatusJson} snapshot. */
final class QueueStatus {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** A queue's ACLs in Hadoop's notation, null where its definition gives none. */
  static final class Acls {
    final String submitApps;
    final String administerApps;

    Acls(JsonNode node) {
      submitApps = node.path("submit_apps").getTextValue();
      administerApps = node.path("administer_apps").getTextValue();
    }
  }

  /** One leaf queue of the snapshot. */
  static final class Leaf {
    final String name;
    final double weight;
    final int apps;
    final long pendingContainers;
    final long usedMemoryMb;
    final long usedVcores;
    final double dominantShare;
    final double fairShare;
    final Acls acls;

    Leaf(JsonNode node) {
      name = node.path("name").getTextValue();
      weight = node.path("weight").getDoubleValue();
      apps = node.path("apps").getIntValue();
      pendingContainers = node.path("pending_containers").getLongValue();
      usedMemoryMb = node.path("used").path("memory_mb").getLongValue();
      usedVcores = node.path("used").path("vcores").getLongValue();
      dominantShare = node.path("dominant_share").getDoubleValue();
      fairShare = node.path("fair_share").getDoubleValue();
      acls = new Acls(node.path("acls"));
    }
  }

  final String policy;
  final long clusterMemoryMb;
  final long clusterVcores;
  final Acls rootAcls;
  final List<Leaf> queues;

  private QueueStatus(JsonNode root) throws IOException {
    policy = root.path("policy").getTextValue();
    clusterMemoryMb = root.path("cluster").path("memory_mb").getLongValue();
    clusterVcores = root.path("cluster").path("vcores").getLongValue();
    rootAcls = new Acls(root.path("root_acls"));
    List<Leaf> leaves = new ArrayList<Leaf>();
    for (JsonNode node : root.path("queues")) {
      Leaf leaf = new Leaf(node);
      if (leaf.name == null) {
        throw new IOException("queue status entry without a name: " + node);
      }
      leaves.add(leaf);
    }
    queues = Collections.unmodifiableList(leaves);
  }

  static QueueStatus parse(String json) throws IOException {
    JsonNode root = MAPPER.readTree(json);
    if (root == null || !root.isObject()) {
      throw new IOException("queue status is not a JSON object: " + json);
    }
    return new QueueStatus(root);
  }

  Leaf find(String fullName) {
    for (Leaf leaf : queues) {
      if (leaf.name.equals(fullName)) {
        return leaf;
      }
    }
    return null;
  }

  long usedMemoryMb() {
    long sum = 0;
    for (Leaf leaf : queues) {
      sum += leaf.usedMemoryMb;
    }
    return sum;
  }

  long usedVcores() {
    long sum = 0;
    for (Leaf leaf : queues) {
      sum += leaf.usedVcores;
    }
    return sum;
  }
}
