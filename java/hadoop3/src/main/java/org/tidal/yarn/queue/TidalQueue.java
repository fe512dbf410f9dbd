package org.tidal.yarn.queue;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractUsersManager;
import org.apache.hadoop.yarn.util.Records;

/**
 * A Tidal queue in Hadoop 3's records: {@link QueueHandle} and what Hadoop 3's queue interface
 * adds.
 */
public final class TidalQueue extends QueueHandle {
  TidalQueue(QueueManager queues, String name, TidalQueue parent, Configuration conf) {
    super(queues, name, parent, conf);
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
  public AbstractUsersManager getAbstractUsersManager() {
    return users();
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
