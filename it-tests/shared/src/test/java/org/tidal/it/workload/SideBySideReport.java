package org.tidal.it.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.tidal.it.workload.TwoQueueWorkload.JobOutcome;
import org.tidal.it.workload.TwoQueueWorkload.Result;
import org.tidal.it.workload.TwoQueueWorkload.Sample;

/** Plain-text tables of {@link TwoQueueWorkload} runs under several schedulers, side by side. */
public final class SideBySideReport {
  private SideBySideReport() {}

  private static String pct(double share) {
    return String.format(Locale.ROOT, "%5.1f%%", 100 * share);
  }

  private static String pctOrDash(double share) {
    return Double.isNaN(share) ? "-" : pct(share);
  }

  /** Share-over-time and completion-time tables for one or more runs side by side. */
  public static String sideBySide(List<Result> runs, List<String> queues) {
    return sideBySide(runs, queues, false);
  }

  /**
   * With {@code withMetrics}, each queue also gets a column of its share according to QueueMetrics.
   */
  public static String sideBySide(List<Result> runs, List<String> queues, boolean withMetrics) {
    int perRun = withMetrics ? 2 * queues.size() : queues.size();
    StringBuilder out = new StringBuilder();
    out.append(
        "Dominant share of the cluster per queue over time (* = every queue had maps waiting)\n");
    StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%7s", "t(s)"));
    for (Result r : runs) {
      header
          .append(" | ")
          .append(String.format(Locale.ROOT, "%-" + (8 * perRun + 1) + "s", r.scheduler));
    }
    out.append(header).append('\n');
    StringBuilder sub = new StringBuilder(String.format(Locale.ROOT, "%7s", ""));
    for (int i = 0; i < runs.size(); i++) {
      sub.append(" |");
      for (String q : queues) {
        sub.append(String.format(Locale.ROOT, " %7s", "root." + q));
      }
      if (withMetrics) {
        for (String q : queues) {
          sub.append(String.format(Locale.ROOT, " %7s", "qm." + q));
        }
      }
      sub.append(' ');
    }
    out.append(sub).append('\n');

    int rows = 0;
    for (Result r : runs) {
      rows = Math.max(rows, r.samples.size());
    }
    for (int i = 0; i < rows; i++) {
      long t = -1;
      for (Result r : runs) {
        if (i < r.samples.size()) {
          t = Math.max(t, r.samples.get(i).elapsedMillis);
        }
      }
      StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%7.1f", t / 1000.0));
      for (Result r : runs) {
        line.append(" |");
        if (i < r.samples.size()) {
          Sample s = r.samples.get(i);
          for (String q : queues) {
            line.append(
                String.format(Locale.ROOT, " %7s", pct(s.dominantShare.getOrDefault(q, 0.0))));
          }
          if (withMetrics) {
            for (String q : queues) {
              line.append(
                  String.format(
                      Locale.ROOT, " %7s", pctOrDash(s.metricsShare.getOrDefault(q, Double.NaN))));
            }
          }
          line.append(s.contended() ? '*' : ' ');
        } else {
          for (int k = 0; k < perRun; k++) {
            line.append(String.format(Locale.ROOT, " %7s", ""));
          }
          line.append(' ');
        }
      }
      out.append(line).append('\n');
    }

    out.append(
        "\nSummary (contended: every queue had maps waiting; converged: contended samples from the"
            + " first one with every queue within one container of its fair share; metrics: converged mean from"
            + " the RM's QueueMetrics)\n");
    out.append(
        String.format(
            Locale.ROOT,
            "%-17s %-7s %10s %10s %8s %8s %10s %12s %12s %10s%n",
            "scheduler",
            "queue",
            "contended",
            "converged",
            "min",
            "max",
            "metrics",
            "converge(s)",
            "job time(s)",
            "result"));
    for (Result r : runs) {
      double fair = r.fairShare();
      double tol = r.oneContainerShare();
      List<Sample> converged = r.convergedSamples(fair, tol);
      long convergence = r.convergenceMillis(fair, tol);
      for (String q : queues) {
        double min = Double.NaN;
        double max = Double.NaN;
        for (Sample s : converged) {
          double v = s.dominantShare.getOrDefault(q, 0.0);
          min = Double.isNaN(min) ? v : Math.min(min, v);
          max = Double.isNaN(max) ? v : Math.max(max, v);
        }
        JobOutcome o = r.outcomes.get(q);
        out.append(
            String.format(
                Locale.ROOT,
                "%-17s %-7s %10s %10s %8s %8s %10s %12s %12s %10s%n",
                r.scheduler,
                o == null || o.appQueue == null ? q : o.appQueue,
                pctOrDash(Result.meanShare(r.contendedSamples(), q)),
                pctOrDash(Result.meanShare(converged, q)),
                pctOrDash(min),
                pctOrDash(max),
                pctOrDash(Result.meanMetricsShare(converged, q)),
                convergence < 0
                    ? "never"
                    : String.format(Locale.ROOT, "%.1f", convergence / 1000.0),
                o == null ? "-" : String.format(Locale.ROOT, "%.1f", o.elapsedMillis / 1000.0),
                o == null ? "-" : (o.succeeded ? "SUCCEEDED" : String.valueOf(o.finalStatus))));
      }
      out.append(
          String.format(
              Locale.ROOT,
              "%-17s samples: %d, contended %d, converged %d; cluster %d MB / %d vcores; fair share %s, one"
                  + " container %s%n",
              r.scheduler,
              r.samples.size(),
              r.contendedSamples().size(),
              converged.size(),
              r.clusterCapacity.getMemory(),
              r.clusterCapacity.getVirtualCores(),
              pct(fair).trim(),
              pct(tol).trim()));
    }
    return out.toString();
  }

  /** The queues of {@code jobs}, in order. */
  public static List<String> queues(List<TwoQueueWorkload.JobSpec> jobs) {
    List<String> qs = new ArrayList<>();
    for (TwoQueueWorkload.JobSpec j : jobs) {
      qs.add(j.queue);
    }
    return qs;
  }
}
