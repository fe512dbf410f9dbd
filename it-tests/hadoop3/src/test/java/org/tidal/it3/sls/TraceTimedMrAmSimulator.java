package org.tidal.it3.sls;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.tools.rumen.JobTraceReader;
import org.apache.hadoop.tools.rumen.LoggedJob;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.sls.AMDefinition;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.appmaster.AMSimulator;
import org.tidal.it.slsbench.ProbedMrAmSimulator;

/**
 * The benchmark's AM on Hadoop 3, started at its job's submit time in the Rumen trace. Hadoop 3.4's
 * SLS starts every job of a Rumen trace at once: its AMRunner passes each job a baseline of 0,
 * which AMDefinitionRumen replaces by that job's own submit time, so every start comes out as 0 and
 * the trace's arrivals (the throughput jobs' steady stream, the LQ's bursts) are lost. 2.7's SLS
 * keeps them relative to the first job; the trace starts at 0, so the submit times are the start
 * times on both lines. The trace is the one file the benchmark names in {@code sls.bench.trace},
 * read once.
 */
public class TraceTimedMrAmSimulator extends ProbedMrAmSimulator {
  private static final String TRACE_PROPERTY = "sls.bench.trace";

  @Override
  public void init(
      AMDefinition amDef,
      ResourceManager rm,
      SLSRunner slsRunner,
      boolean tracked,
      long baselineTimeMS,
      long heartbeatInterval,
      Map<ApplicationId, AMSimulator> appIdToAMSim) {
    super.init(amDef, rm, slsRunner, tracked, baselineTimeMS, heartbeatInterval, appIdToAMSim);
    Long start = SubmitTimes.BY_JOB.get(amDef.getOldAppId());
    if (start == null) {
      throw new IllegalStateException(
          "job "
              + amDef.getOldAppId()
              + " is not in the trace "
              + System.getProperty(TRACE_PROPERTY));
    }
    // As AMSimulator.init times it, from the trace's start instead of 0.
    init(start, start + 1_000_000L * heartbeatInterval, heartbeatInterval);
    traceStartTimeMS = start;
  }

  /** The trace's submit times by job id, read on first use (the holder's initialisation). */
  private static final class SubmitTimes {
    static final Map<String, Long> BY_JOB = read(System.getProperty(TRACE_PROPERTY));
  }

  private static Map<String, Long> read(String trace) {
    if (trace == null || trace.isEmpty()) {
      throw new IllegalStateException(
          "system property " + TRACE_PROPERTY + " must name the Rumen trace SLS runs");
    }
    Configuration conf = new Configuration(false);
    conf.set("fs.defaultFS", "file:///");
    Map<String, Long> times = new HashMap<>();
    try (JobTraceReader reader = new JobTraceReader(new Path(trace), conf)) {
      for (LoggedJob job = reader.getNext(); job != null; job = reader.getNext()) {
        times.put(job.getJobID().toString(), job.getSubmitTime());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading the trace " + trace, e);
    }
    return times;
  }
}
