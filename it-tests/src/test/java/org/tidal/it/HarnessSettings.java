package org.tidal.it;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/** Sizes and JVM options shared by the tests and the demo. */
final class HarnessSettings {
  static final int NODE_MANAGERS = 2;

  /** Per NodeManager; overridable with -Dit.nm.memory.mb / -Dit.nm.vcores. */
  static final int NM_MEMORY_MB = Integer.getInteger("it.nm.memory.mb", 4096);

  static final int NM_VCORES = Integer.getInteger("it.nm.vcores", 4);

  static final int MIN_ALLOCATION_MB = 256;

  /**
   * AM, map and reduce containers: 512 MB and 1 vcore each, so vcores are every queue's dominant
   * resource.
   */
  static final int CONTAINER_MB = 512;

  static final int CONTAINER_VCORES = 1;

  /** Heap of container JVMs, well inside CONTAINER_MB. */
  static final String CHILD_HEAP = "-Xmx200m";

  /**
   * Container JVMs run short sleep tasks on a 2-core machine: C1 only and the serial collector cut
   * their start-up CPU and thread count. Not needed for correctness.
   */
  static final String CHILD_TUNING = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData";

  private HarnessSettings() {}

  /**
   * The --add-opens/--add-exports flags this JVM was started with (the pom is the one place they
   * are listed). The MR ApplicationMaster starts a Guice 3 web app just like the RM, so it needs
   * the same flags.
   */
  static List<String> inheritedModuleFlags() {
    List<String> flags = new ArrayList<>();
    List<String> args = ManagementFactory.getRuntimeMXBean().getInputArguments();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (arg.startsWith("--add-opens=") || arg.startsWith("--add-exports=")) {
        flags.add(arg);
      } else if ((arg.equals("--add-opens") || arg.equals("--add-exports"))
          && i + 1 < args.size()) {
        flags.add(arg + "=" + args.get(++i));
      }
    }
    return flags;
  }

  static String amJavaOpts() {
    return String.join(" ", inheritedModuleFlags()) + " " + CHILD_HEAP + " " + CHILD_TUNING;
  }

  /** Map and reduce tasks touch no JDK internals: they run on Java 17 without any flag. */
  static String taskJavaOpts() {
    return CHILD_HEAP + " " + CHILD_TUNING;
  }
}
