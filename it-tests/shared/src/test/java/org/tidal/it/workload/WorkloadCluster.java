package org.tidal.it.workload;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.Resource;

/** What a workload needs of the running cluster it is submitted to, whichever Hadoop line. */
public interface WorkloadCluster extends AutoCloseable {
  /** A configuration that reaches the cluster's RM, for clients and their jobs. */
  Configuration clientConf();

  /** The RM's scheduler, as reports name it. */
  String schedulerName();

  /** The size of every container the workload's jobs ask for. */
  Resource containerSize();
}
