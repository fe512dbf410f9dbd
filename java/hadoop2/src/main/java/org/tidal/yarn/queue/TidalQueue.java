package org.tidal.yarn.queue;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ActiveUsersManager;
import org.apache.hadoop.yarn.util.Records;

/** A Tidal queue in Hadoop 2.7's records: {@link QueueHandle} and 2.7's active-users accessor. */
public final class TidalQueue extends QueueHandle {
  TidalQueue(QueueManager queues, String name, TidalQueue parent, Configuration conf) {
    super(queues, name, parent, conf);
  }

  /** A queue's record for Hadoop's clients, named. */
  static QueueInfo newQueueInfo(String fullName) {
    QueueInfo info = Records.newRecord(QueueInfo.class);
    info.setQueueName(fullName);
    return info;
  }

  @Override
  public ActiveUsersManager getActiveUsersManager() {
    return users();
  }
}
