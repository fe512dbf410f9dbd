package org.tidal.it.workload;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.management.JMException;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.TIPStatus;
import org.apache.hadoop.mapreduce.Cluster;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.SleepJob;
import org.apache.hadoop.mapreduce.TaskReport;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.NodeState;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;

/**
 * Submits one MapReduce SleepJob per queue at the same moment and, until all finish, samples what
 * the RM reports each queue is using (the sum of its running applications' used resources, the same
 * numbers "yarn application -status" shows) together with how many map tasks each job still has
 * waiting for a container.
 */
public final class TwoQueueWorkload {

  /** One SleepJob: {@code maps} tasks sleeping {@code mapMillis} each, then one short reduce. */
  public static final class JobSpec {
    public final String queue;
    public final int maps;
    public final long mapMillis;

    public JobSpec(String queue, int maps, long mapMillis) {
      this.queue = queue;
      this.maps = maps;
      this.mapMillis = mapMillis;
    }
  }

  /** Per queue: used resources, dominant share of the cluster and waiting maps at one instant. */
  public static final class Sample {
    public final long elapsedMillis;
    public final Map<String, Resource> used = new LinkedHashMap<>();
    public final Map<String, Double> dominantShare = new LinkedHashMap<>();
    public final Map<String, Integer> pendingMaps = new LinkedHashMap<>();

    /** The same share computed from the RM's QueueMetrics, NaN if the queue has none. */
    public final Map<String, Double> metricsShare = new LinkedHashMap<>();

    Sample(long elapsedMillis) {
      this.elapsedMillis = elapsedMillis;
    }

    /** Every queue still has maps waiting: the scheduler had to divide the cluster between them. */
    public boolean contended() {
      if (pendingMaps.isEmpty()) {
        return false;
      }
      for (int pending : pendingMaps.values()) {
        if (pending == 0) {
          return false;
        }
      }
      return true;
    }
  }

  /** How one job ended: its queue, the queue YARN put it in, and its status and run time. */
  public static final class JobOutcome {
    public final String queue;
    public final String appQueue;
    public final boolean succeeded;
    public final FinalApplicationStatus finalStatus;
    public final long elapsedMillis;

    JobOutcome(
        String queue,
        String appQueue,
        boolean succeeded,
        FinalApplicationStatus finalStatus,
        long elapsedMillis) {
      this.queue = queue;
      this.appQueue = appQueue;
      this.succeeded = succeeded;
      this.finalStatus = finalStatus;
      this.elapsedMillis = elapsedMillis;
    }
  }

  /** One run of the workload: the cluster's capacity, the samples taken, each job's outcome. */
  public static final class Result {
    /** The scheduler's display name. */
    public final String scheduler;

    public final Resource clusterCapacity;

    /** The size of every container of the workload. */
    public final Resource containerSize;

    public final List<Sample> samples = new ArrayList<>();
    public final Map<String, JobOutcome> outcomes = new LinkedHashMap<>();

    Result(String scheduler, Resource clusterCapacity, Resource containerSize) {
      this.scheduler = scheduler;
      this.clusterCapacity = clusterCapacity;
      this.containerSize = containerSize;
    }

    /** Equal weights: each queue's DRF fair share is 1/queues of the dominant resource. */
    public double fairShare() {
      return 1.0 / outcomesOrQueues();
    }

    private int outcomesOrQueues() {
      return samples.isEmpty() ? Math.max(1, outcomes.size()) : samples.get(0).dominantShare.size();
    }

    /** How far one container moves a queue's dominant share: the granularity of any allocation. */
    public double oneContainerShare() {
      return Math.max(
          (double) containerSize.getMemory() / clusterCapacity.getMemory(),
          (double) containerSize.getVirtualCores() / clusterCapacity.getVirtualCores());
    }

    public List<Sample> contendedSamples() {
      List<Sample> out = new ArrayList<>();
      for (Sample s : samples) {
        if (s.contended()) {
          out.add(s);
        }
      }
      return out;
    }

    /**
     * Contended samples from the first one in which every queue is within {@code tolerance} of
     * {@code fairShare} onwards. Neither scheduler preempts here, so until then the queue whose AM
     * asked first keeps the containers it was given while the other queue was idle; that start-up
     * skew is measured by {@link #convergenceMillis} instead.
     */
    public List<Sample> convergedSamples(double fairShare, double tolerance) {
      List<Sample> contended = contendedSamples();
      for (int i = 0; i < contended.size(); i++) {
        if (balanced(contended.get(i), fairShare, tolerance)) {
          return contended.subList(i, contended.size());
        }
      }
      return new ArrayList<>();
    }

    /** Time from the first contended sample to the first balanced one; -1 if never balanced. */
    public long convergenceMillis(double fairShare, double tolerance) {
      List<Sample> converged = convergedSamples(fairShare, tolerance);
      if (converged.isEmpty()) {
        return -1;
      }
      return converged.get(0).elapsedMillis - contendedSamples().get(0).elapsedMillis;
    }

    private static boolean balanced(Sample s, double fairShare, double tolerance) {
      for (double share : s.dominantShare.values()) {
        if (Math.abs(share - fairShare) > tolerance + 1e-9) {
          return false;
        }
      }
      return true;
    }

    /** Mean dominant share of a queue over some samples, or NaN if there are none. */
    public static double meanShare(List<Sample> samples, String queue) {
      double sum = 0;
      for (Sample s : samples) {
        sum += s.dominantShare.getOrDefault(queue, 0.0);
      }
      return samples.isEmpty() ? Double.NaN : sum / samples.size();
    }

    /**
     * Like {@link #meanShare} from QueueMetrics; NaN if any sample had no metrics for the queue.
     */
    public static double meanMetricsShare(List<Sample> samples, String queue) {
      double sum = 0;
      for (Sample s : samples) {
        sum += s.metricsShare.getOrDefault(queue, Double.NaN);
      }
      return samples.isEmpty() ? Double.NaN : sum / samples.size();
    }
  }

  private final WorkloadCluster cluster;
  private final List<JobSpec> jobs;
  private final long sampleEveryMillis;
  private final long timeoutMillis;

  public TwoQueueWorkload(
      WorkloadCluster cluster, List<JobSpec> jobs, long sampleEveryMillis, long timeoutMillis) {
    this.cluster = cluster;
    this.jobs = jobs;
    this.sampleEveryMillis = sampleEveryMillis;
    this.timeoutMillis = timeoutMillis;
  }

  public Result run() throws Exception {
    Configuration conf = cluster.clientConf();
    YarnClient yarn = YarnClient.createYarnClient();
    yarn.init(conf);
    yarn.start();
    ExecutorService pool = Executors.newFixedThreadPool(jobs.size());
    try {
      Result result =
          new Result(cluster.schedulerName(), clusterCapacity(yarn), cluster.containerSize());

      List<Job> submitted = new ArrayList<>();
      for (JobSpec spec : jobs) {
        submitted.add(createJob(conf, spec));
      }
      long start = System.nanoTime();
      List<Future<Long>> finished = new ArrayList<>();
      for (Job job : submitted) {
        job.submit();
      }
      for (Job job : submitted) {
        finished.add(
            pool.submit(
                () -> {
                  job.waitForCompletion(false);
                  return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                }));
      }

      Cluster mrCluster = new Cluster(conf);
      try {
        long deadline = start + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!allDone(finished)) {
          if (System.nanoTime() > deadline) {
            throw new AssertionError(
                "workload did not finish within "
                    + timeoutMillis
                    + " ms under "
                    + cluster.schedulerName());
          }
          result.samples.add(
              sample(
                  yarn,
                  mrCluster,
                  submitted,
                  result.clusterCapacity,
                  TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)));
          Thread.sleep(sampleEveryMillis);
        }
      } finally {
        closeQuietly(mrCluster);
      }

      for (int i = 0; i < submitted.size(); i++) {
        Job job = submitted.get(i);
        long elapsed = finished.get(i).get();
        ApplicationReport app = yarn.getApplicationReport(appId(job.getJobID()));
        result.outcomes.put(
            jobs.get(i).queue,
            new JobOutcome(
                jobs.get(i).queue,
                app.getQueue(),
                job.isSuccessful(),
                app.getFinalApplicationStatus(),
                elapsed));
      }
      return result;
    } finally {
      pool.shutdownNow();
      yarn.stop();
    }
  }

  /**
   * Without a JobHistoryServer the client caches a plain NotRunningJob for finished jobs, which
   * Cluster.close() then fails to close as an RPC proxy.
   */
  private static void closeQuietly(Cluster mrCluster) {
    try {
      mrCluster.close();
    } catch (IOException | RuntimeException e) {
      // Nothing left to release for finished jobs.
    }
  }

  private static Job createJob(Configuration base, JobSpec spec) throws Exception {
    Configuration conf = new Configuration(base);
    conf.set(MRJobConfig.QUEUE_NAME, spec.queue);
    SleepJob sleep = new SleepJob();
    sleep.setConf(conf);
    Job job = sleep.createJob(spec.maps, 1, spec.mapMillis, 1, 100, 1);
    job.setJobName("sleep-" + spec.queue);
    return job;
  }

  private static boolean allDone(List<Future<Long>> futures) {
    for (Future<Long> f : futures) {
      if (!f.isDone()) {
        return false;
      }
    }
    return true;
  }

  public static Resource clusterCapacity(YarnClient yarn) throws Exception {
    int mb = 0;
    int vcores = 0;
    for (NodeReport node : yarn.getNodeReports(NodeState.RUNNING)) {
      mb += node.getCapability().getMemory();
      vcores += node.getCapability().getVirtualCores();
    }
    return Resource.newInstance(mb, vcores);
  }

  private Sample sample(
      YarnClient yarn,
      Cluster mrCluster,
      List<Job> submitted,
      Resource capacity,
      long elapsedMillis)
      throws Exception {
    Sample s = new Sample(elapsedMillis);
    for (JobSpec spec : jobs) {
      s.used.put(spec.queue, Resource.newInstance(0, 0));
    }
    for (ApplicationReport app : yarn.getApplications(EnumSet.of(YarnApplicationState.RUNNING))) {
      Resource total = s.used.get(shortQueueName(app.getQueue()));
      if (total == null || app.getApplicationResourceUsageReport() == null) {
        continue;
      }
      Resource used = app.getApplicationResourceUsageReport().getUsedResources();
      total.setMemory(total.getMemory() + Math.max(0, used.getMemory()));
      total.setVirtualCores(total.getVirtualCores() + Math.max(0, used.getVirtualCores()));
    }
    for (Map.Entry<String, Resource> e : s.used.entrySet()) {
      Resource r = e.getValue();
      double share =
          Math.max(
              (double) r.getMemory() / capacity.getMemory(),
              (double) r.getVirtualCores() / capacity.getVirtualCores());
      s.dominantShare.put(e.getKey(), share);
    }
    for (String queue : s.used.keySet()) {
      s.metricsShare.put(queue, queueMetricsShare(queue, capacity));
    }
    for (int i = 0; i < submitted.size(); i++) {
      s.pendingMaps.put(jobs.get(i).queue, pendingMaps(mrCluster, submitted.get(i).getJobID()));
    }
    return s;
  }

  /**
   * Dominant share from the queue's QueueMetrics, the numbers the RM's web UI and /jmx report; NaN
   * if the scheduler registered none for the queue. The live gauges are read, not the JMX
   * attributes, which are cached for the metrics period (10 s) and would lag the allocation by that
   * much.
   */
  private double queueMetricsShare(String queue, Resource capacity) {
    String fullName = "root." + queue;
    try {
      ObjectName name =
          new ObjectName("Hadoop:service=ResourceManager,name=QueueMetrics,q0=root,q1=" + queue);
      if (!ManagementFactory.getPlatformMBeanServer().isRegistered(name)) {
        return Double.NaN;
      }
    } catch (JMException e) {
      return Double.NaN;
    }
    // Registered, so this returns the scheduler's own instance rather than creating one.
    QueueMetrics metrics = QueueMetrics.forQueue(fullName, null, false, cluster.clientConf());
    return Math.max(
        (double) metrics.getAllocatedMB() / capacity.getMemory(),
        (double) metrics.getAllocatedVirtualCores() / capacity.getVirtualCores());
  }

  /** Map tasks not yet given a container; 0 once the job is finished or not yet running. */
  private static int pendingMaps(Cluster mrCluster, JobID id) {
    try {
      Job job = mrCluster.getJob(id);
      if (job == null || job.isComplete()) {
        return 0;
      }
      int pending = 0;
      for (TaskReport report : job.getTaskReports(TaskType.MAP)) {
        if (report.getCurrentStatus() == TIPStatus.PENDING) {
          pending++;
        }
      }
      return pending;
    } catch (Exception e) {
      // The AM is starting or exiting: it has no map waiting that the RM could serve.
      return 0;
    }
  }

  public static ApplicationId appId(JobID job) {
    return ApplicationId.newInstance(Long.parseLong(job.getJtIdentifier()), job.getId());
  }

  /** "root.a" (FairScheduler, Tidal) and "a" both name queue a. */
  public static String shortQueueName(String queue) {
    return queue != null && queue.startsWith("root.") ? queue.substring("root.".length()) : queue;
  }
}
