package org.tidal.it.sls;

import com.codahale.metrics.Gauge;
import java.io.IOException;
import java.util.Collection;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationResourceUsageReport;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerAppReport;
import org.apache.hadoop.yarn.sls.scheduler.FairSchedulerMetrics;
import org.tidal.yarn.TidalScheduler;
import org.tidal.yarn.view.TidalQueueReport;

/**
 * Hadoop SLS's per-queue and per-application metrics for Tidal. SLS picks a SchedulerMetrics class
 * by the scheduler's class name and knows only Hadoop's three schedulers; without one its wrapper
 * fails on the first scheduler event. This one records Tidal's own numbers under the names SLS's
 * FairScheduler metrics use ({@code variable.queue.<q>.usage.memory} and so on), so SLS's CSV
 * files, its real-time track and its per-queue web page read the same for both schedulers. It
 * extends FairSchedulerMetrics only because SLS's web view serves queue tracking for that class
 * alone; every metric it registers comes from {@link TidalScheduler#getQueueReport}.
 *
 * <p>Queue gauges: usage (what the queue's containers hold), demand (usage plus pending), fairshare
 * (Tidal's weighted DRF share of the cluster), minshare (an LQ's guaranteed rate, else 0) and
 * maxshare (the cluster: Tidal queues have no static maximum in the status), each in memory (MB)
 * and vcores. Application gauges (for SLS's tracked jobs): live and reserved containers, usage and
 * demand. This class lives outside the scheduler jar: an RM never loads SLS.
 */
public class TidalSchedulerMetrics extends FairSchedulerMetrics {
  private static final Log LOG = LogFactory.getLog(TidalSchedulerMetrics.class);

  @Override
  public void trackQueue(String queueName) {
    trackedQueues.add(queueName);
    TidalScheduler tidal = (TidalScheduler) scheduler;
    queueGauges(tidal, queueName, "usage", TidalQueueReport::getUsed);
    queueGauges(tidal, queueName, "demand", TidalQueueReport::getDemand);
    queueGauges(tidal, queueName, "fairshare", TidalQueueReport::getFairShareResource);
    queueGauges(tidal, queueName, "minshare", TidalQueueReport::getGuaranteedResource);
    queueGauges(tidal, queueName, "maxshare", TidalQueueReport::getClusterResource);
  }

  @Override
  public void trackApp(final ApplicationAttemptId attempt, String oldAppId) {
    String prefix = "variable.app." + oldAppId + ".";
    metrics.register(
        prefix + "live.containers",
        (Gauge<Integer>) () -> containers(attempt, SchedulerAppReport::getLiveContainers));
    metrics.register(
        prefix + "reserved.containers",
        (Gauge<Integer>) () -> containers(attempt, SchedulerAppReport::getReservedContainers));
    appGauges(attempt, prefix + "usage", ApplicationResourceUsageReport::getUsedResources);
    appGauges(attempt, prefix + "demand", ApplicationResourceUsageReport::getNeededResources);
  }

  private void queueGauges(
      TidalScheduler tidal,
      String queueName,
      String metric,
      Function<TidalQueueReport, Resource> amount) {
    String prefix = "variable.queue." + queueName + "." + metric;
    metrics.register(
        prefix + ".memory",
        (Gauge<Integer>) () -> queueValue(tidal, queueName, amount, Resource::getMemory));
    metrics.register(
        prefix + ".vcores",
        (Gauge<Integer>) () -> queueValue(tidal, queueName, amount, Resource::getVirtualCores));
  }

  /**
   * A gauge must not throw: SLS's CSV reporter would stop reporting for the rest of the run. A
   * queue the core cannot report reads 0, with the reason logged.
   */
  private static int queueValue(
      TidalScheduler tidal,
      String queueName,
      Function<TidalQueueReport, Resource> amount,
      ToIntFunction<Resource> part) {
    try {
      TidalQueueReport report = tidal.getQueueReport(queueName);
      if (report == null) {
        LOG.warn("Tidal reports no queue " + queueName + "; its SLS metrics read 0");
        return 0;
      }
      return part.applyAsInt(amount.apply(report));
    } catch (IOException e) {
      LOG.warn("Cannot read Tidal's status for queue " + queueName + ": " + e.getMessage());
      return 0;
    }
  }

  private void appGauges(
      ApplicationAttemptId attempt,
      String prefix,
      Function<ApplicationResourceUsageReport, Resource> amount) {
    metrics.register(
        prefix + ".memory", (Gauge<Integer>) () -> appValue(attempt, amount, Resource::getMemory));
    metrics.register(
        prefix + ".vcores",
        (Gauge<Integer>) () -> appValue(attempt, amount, Resource::getVirtualCores));
  }

  /** An application's value, 0 once the scheduler no longer has the attempt. */
  private int appValue(
      ApplicationAttemptId attempt,
      Function<ApplicationResourceUsageReport, Resource> amount,
      ToIntFunction<Resource> part) {
    ApplicationResourceUsageReport usage = scheduler.getAppResourceUsageReport(attempt);
    return usage == null ? 0 : part.applyAsInt(amount.apply(usage));
  }

  /** How many containers of a kind an application has, 0 once the scheduler dropped it. */
  private int containers(
      ApplicationAttemptId attempt, Function<SchedulerAppReport, Collection<?>> kind) {
    SchedulerAppReport report = scheduler.getSchedulerAppInfo(attempt);
    return report == null ? 0 : kind.apply(report).size();
  }
}
