package org.tidal.yarn;

import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.util.Records;

/**
 * The Hadoop-side handle of one Tidal queue: metrics and active-user bookkeeping that Hadoop's
 * application objects update. Its state and shares live in the Rust core; {@link #getQueueInfo}
 * reads them from there. Its ACLs are answered by {@link QueueAccess}.
 */
final class TidalQueue implements Queue {
  private final QueueManager queues;
  private final String name;
  private final QueueMetrics metrics;
  private final ActiveUsersManager activeUsersManager;

  TidalQueue(QueueManager queues, String name, TidalQueue parent, Configuration conf) {
    this.queues = queues;
    this.name = name;
    // Metrics are registered JVM-wide under the queue name and cached by Hadoop, so several
    // scheduler instances in one JVM share them instead of registering twice.
    this.metrics = QueueMetrics.forQueue(name, parent, true, conf);
    this.activeUsersManager = new ActiveUsersManager(metrics);
  }

  /** A queue's record for Hadoop's clients, named by its full name and path. */
  static QueueInfo newQueueInfo(String fullName) {
    QueueInfo info = Records.newRecord(QueueInfo.class);
    info.setQueueName(fullName);
    // Hadoop 3's clients print the path too (yarn queue -status).
    info.setQueuePath(fullName);
    return info;
  }

  @Override
  public String getQueueName() {
    return name;
  }

  @Override
  public QueueMetrics getMetrics() {
    return metrics;
  }

  @Override
  public QueueInfo getQueueInfo(boolean includeChildQueues, boolean recursive) {
    return queues.queueInfoOrStopped(name, includeChildQueues, recursive);
  }

  @Override
  public List<QueueUserACLInfo> getQueueUserAclInfo(UserGroupInformation user) {
    return Collections.singletonList(queues.access().userAclInfo(name, user));
  }

  @Override
  public boolean hasAccess(QueueACL acl, UserGroupInformation user) {
    return queues.access().hasAccess(user, acl, name);
  }

  @Override
  public AbstractUsersManager getAbstractUsersManager() {
    return activeUsersManager;
  }

  /** The queue's active users, under the name every Hadoop line's adapter gives them. */
  ActiveUsersManager users() {
    return activeUsersManager;
  }

  @Override
  public void recoverContainer(
      Resource clusterResource,
      SchedulerApplicationAttempt schedulerAttempt,
      RMContainer rmContainer) {
    // Hadoop's recovery updates the attempt's and the queue's metrics itself; the core adopts the
    // container once Hadoop has recovered it (ClusterNodes#adoptRecovered).
  }

  @Override
  public Set<String> getAccessibleNodeLabels() {
    return null;
  }

  @Override
  public String getDefaultNodeLabelExpression() {
    return null;
  }

  // Pending and reserved totals per partition are CapacityScheduler's; Tidal's core keeps its own
  // and the queue metrics carry Hadoop's.

  @Override
  public void incPendingResource(String nodeLabel, Resource resourceToInc) {}

  @Override
  public void decPendingResource(String nodeLabel, Resource resourceToDec) {}

  @Override
  public void incReservedResource(String partition, Resource reservedRes) {}

  @Override
  public void decReservedResource(String partition, Resource reservedRes) {}

  @Override
  public Priority getDefaultApplicationPriority() {
    return null;
  }
}
