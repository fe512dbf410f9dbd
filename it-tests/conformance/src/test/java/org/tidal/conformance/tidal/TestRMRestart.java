package org.tidal.conformance.tidal;

import java.io.IOException;
import org.apache.hadoop.yarn.server.resourcemanager.ParameterizedSchedulerTestBase.SchedulerType;
import org.junit.ClassRule;
import org.junit.rules.TestRule;

/**
 * Hadoop's {@code TestRMRestart} under Tidal: ParameterizedSchedulerTestBase configures
 * CapacityScheduler [0] or FairScheduler [1] for each test (the suite runs [0]); {@link
 * #configureScheduler} selects Tidal in that configuration, so [0] is the test's CapacityScheduler
 * code path under Tidal.
 */
public class TestRMRestart extends org.apache.hadoop.yarn.server.resourcemanager.TestRMRestart {
  @ClassRule public static final TestRule TIDAL = TidalSite.required();

  public TestRMRestart(SchedulerType type) {
    super(type);
  }

  /**
   * ParameterizedSchedulerTestBase's hook, run before each test and called again by some tests: the
   * parameter's configuration, with Tidal for its scheduler. Not annotated here, so JUnit runs it
   * where the base class's {@code @Before} stands, before the test class's own set-up.
   */
  @Override
  public void configureScheduler() throws IOException {
    super.configureScheduler();
    TidalSite.select(getConf());
  }
}
