package org.tidal.it;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;

/**
 * The two schedulers the same harness runs: Tidal and, as the reference it must be a drop-in for,
 * Hadoop's FairScheduler with the DRF policy. Both get the same two equally weighted queues, {@code
 * root.a} and {@code root.b}.
 */
public enum SchedulerUnderTest {
  TIDAL("Tidal", "org.tidal.yarn.TidalScheduler") {
    @Override
    void configure(Configuration conf) {
      conf.set("tidal.allocation.file", resourcePath("tidal-two-queues.xml"));
      // Tidal's own REST endpoint defaults to a fixed port on all interfaces.
      conf.set("tidal.rest.address", "127.0.0.1:0");
      // As the sample yarn-site.xml: up to 10 containers per node heartbeat (the default is one).
      conf.setInt("tidal.max-assign-per-heartbeat", 10);
      // As docs/operations.md ("Tidal in Hadoop's own tools") has it: Tidal's views in the RM's web
      // app.
      conf.set(
          "hadoop.http.filter.initializers",
          "org.apache.hadoop.http.lib.StaticUserWebFilter,org.tidal.yarn.TidalWebFilterInitializer");
    }
  },

  FAIR(
      "FairScheduler",
      "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler") {
    @Override
    void configure(Configuration conf) {
      conf.set(
          "yarn.scheduler.fair.allocation.file", resourcePath("fair-scheduler-two-queues.xml"));
      // Jobs must land in the queue they name, never in a per-user queue.
      conf.setBoolean("yarn.scheduler.fair.user-as-default-queue", false);
      conf.setBoolean("yarn.scheduler.fair.allow-undeclared-pools", false);
      // FairScheduler rounds requests up to this (default 1024 MB), which would
      // double every 512 MB container and halve the number of slots.
      conf.setInt("yarn.scheduler.increment-allocation-mb", HarnessSettings.MIN_ALLOCATION_MB);
      conf.setInt("yarn.scheduler.increment-allocation-vcores", 1);
    }
  };

  private final String displayName;
  private final String schedulerClass;

  SchedulerUnderTest(String displayName, String schedulerClass) {
    this.displayName = displayName;
    this.schedulerClass = schedulerClass;
  }

  public String displayName() {
    return displayName;
  }

  public String schedulerClass() {
    return schedulerClass;
  }

  /** Scheduler-specific settings on top of {@link HarnessSettings}. */
  abstract void configure(Configuration conf);

  /** Absolute path of a test resource, so the daemons do not depend on the working directory. */
  static String resourcePath(String name) {
    URL url = SchedulerUnderTest.class.getClassLoader().getResource(name);
    if (url == null) {
      throw new IllegalStateException("test resource not on the class path: " + name);
    }
    try {
      return new File(url.toURI()).getAbsolutePath();
    } catch (URISyntaxException | IllegalArgumentException e) {
      throw new IllegalStateException("test resource is not a plain file: " + url, e);
    }
  }

  /** The system property that names the schedulers the parameterized tests run. */
  static final String SCHEDULERS_PROPERTY = "it.schedulers";

  /**
   * The schedulers named by {@value #SCHEDULERS_PROPERTY} (comma-separated, e.g. {@code
   * TIDAL,FAIR}), as JUnit's Parameterized runner takes them: one test run per scheduler. Unset,
   * Tidal alone: FairScheduler's runs check the harness, not Tidal, and {@code make
   * test-it-references} runs them.
   */
  static List<Object[]> parameters() {
    String names = System.getProperty(SCHEDULERS_PROPERTY, "").trim();
    List<Object[]> out = new ArrayList<>();
    for (String name : (names.isEmpty() ? TIDAL.name() : names).split(",")) {
      try {
        out.add(new Object[] {valueOf(name.trim())});
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            SCHEDULERS_PROPERTY
                + " names '"
                + name.trim()
                + "'; the schedulers are "
                + Arrays.toString(values()),
            e);
      }
    }
    return out;
  }
}
