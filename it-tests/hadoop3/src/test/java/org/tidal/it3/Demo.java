package org.tidal.it3;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.tidal.it.workload.DemoRunner;

/**
 * {@code make demo} (Hadoop 3.4.3, the default line): {@link DemoRunner} on Hadoop 3's embedded
 * cluster, with Tidal, then FairScheduler (DRF), then CapacityScheduler (dominant resource
 * calculator). Arguments, if any, name the schedulers to run (TIDAL, FAIR, CAPACITY).
 */
public final class Demo {
  private Demo() {}

  public static void main(String[] args) {
    List<String> schedulers = new ArrayList<>();
    for (String arg : args) {
      schedulers.add(arg.toUpperCase(Locale.ROOT));
    }
    if (schedulers.isEmpty()) {
      schedulers.addAll(Arrays.asList("TIDAL", "FAIR", "CAPACITY"));
    }
    String cluster =
        String.format(
            Locale.ROOT,
            "Hadoop 3.4.3: RM + %d NodeManagers (%d MB, %d vcores each)",
            TidalMiniCluster.NODE_MANAGERS,
            TidalMiniCluster.NM_MEMORY_MB,
            TidalMiniCluster.NM_VCORES);
    boolean ok = DemoRunner.run(schedulers, TidalMiniCluster::startTwoQueues, cluster);
    // Daemon threads of the stopped clusters must not keep the JVM alive.
    System.exit(ok ? 0 : 1);
  }
}
