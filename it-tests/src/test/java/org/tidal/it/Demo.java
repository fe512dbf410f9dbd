package org.tidal.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.tidal.it.workload.DemoRunner;

/**
 * {@code make demo HADOOP=2.7.7}: {@link DemoRunner} on Hadoop 2.7.7's embedded cluster, first with
 * Tidal and then with FairScheduler (DRF). Arguments, if any, name the schedulers to run (TIDAL,
 * FAIR).
 */
public final class Demo {
  private Demo() {}

  public static void main(String[] args) {
    List<String> schedulers = new ArrayList<>();
    for (String arg : args.length > 0 ? args : new String[] {"TIDAL", "FAIR"}) {
      schedulers.add(SchedulerUnderTest.valueOf(arg.toUpperCase(Locale.ROOT)).name());
    }
    String cluster =
        String.format(
            Locale.ROOT,
            "Hadoop 2.7.7: RM + %d NodeManagers (%d MB, %d vcores each)",
            HarnessSettings.NODE_MANAGERS,
            HarnessSettings.NM_MEMORY_MB,
            HarnessSettings.NM_VCORES);
    boolean ok =
        DemoRunner.run(
            schedulers,
            name -> MiniClusterHarness.start(SchedulerUnderTest.valueOf(name)),
            cluster);
    // Daemon threads of the stopped clusters must not keep the JVM alive.
    System.exit(ok ? 0 : 1);
  }
}
