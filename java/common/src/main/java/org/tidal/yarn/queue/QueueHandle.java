package org.tidal.yarn.queue;

import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;

/**
 * The Hadoop-side handle of one Tidal queue, as far as every Hadoop line's {@link Queue} agrees:
 * metrics and active-user bookkeeping that Hadoop's application objects update. Its state and
 * shares live in the Rust core; {@link #getQueueInfo} reads them from there. Its ACLs are answered
 * by {@link QueueAccess}. Each adapter's {@code TidalQueue} adds what its line's {@link Queue} asks
 * beyond this.
 */
abstract class QueueHandle implements Queue {
  private final QueueManager queues;
  private final String name;
  private final QueueMetrics metrics;
  private final ActiveUsersManager activeUsersManager;

  QueueHandle(QueueManager queues, String name, QueueHandle parent, Configuration conf) {
    this.queues = queues;
    this.name = name;
    // Metrics are registered JVM-wide under the queue name and cached by Hadoop, so several
    // scheduler instances in one JVM share them instead of registering twice.
    this.metrics = QueueMetrics.forQueue(name, parent, true, conf);
    this.activeUsersManager = new ActiveUsersManager(metrics);
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

  /** The queue's active users, under the name every Hadoop line's adapter gives them. */
  public ActiveUsersManager users() {
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
}
