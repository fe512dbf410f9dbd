package org.tidal.it3.sls;

import java.util.List;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ContainerUpdates;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.event.SchedulerEvent;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerMetrics;
import org.apache.hadoop.yarn.sls.scheduler.SchedulerWrapper;
import org.apache.hadoop.yarn.sls.scheduler.Tracker;
import org.tidal.yarn.TidalScheduler;

/**
 * Tidal as Hadoop 3's SLS expects a scheduler: SLSRunner and its AMs cast the RM's scheduler to
 * SchedulerWrapper, which SLS itself implements only for CapacityScheduler and FairScheduler. This
 * one is Tidal unchanged, without SLS's scheduler metrics (the benchmark turns them off for every
 * scheduler and measures with its own probe), so events and allocations go straight to Tidal.
 */
public class SlsTidalScheduler extends TidalScheduler implements SchedulerWrapper {
  private final Tracker tracker = new Tracker();
  private volatile SLSRunner runner;

  @Override
  public SchedulerMetrics getSchedulerMetrics() {
    return null;
  }

  @Override
  public Tracker getTracker() {
    return tracker;
  }

  /** Tidal's queues are named as the trace names them; an unknown one fails at submission. */
  @Override
  public String getRealQueueName(String queue) {
    return queue;
  }

  @Override
  public void propagatedHandle(SchedulerEvent event) {
    handle(event);
  }

  @Override
  public Allocation allocatePropagated(
      ApplicationAttemptId attemptId,
      List<ResourceRequest> resourceRequests,
      List<SchedulingRequest> schedulingRequests,
      List<ContainerId> releases,
      List<String> blacklistAdditions,
      List<String> blacklistRemovals,
      ContainerUpdates updateRequests) {
    return allocate(
        attemptId,
        resourceRequests,
        schedulingRequests,
        releases,
        blacklistAdditions,
        blacklistRemovals,
        updateRequests);
  }

  @Override
  public void setSLSRunner(SLSRunner runner) {
    this.runner = runner;
  }

  @Override
  public SLSRunner getSLSRunner() {
    return runner;
  }
}
