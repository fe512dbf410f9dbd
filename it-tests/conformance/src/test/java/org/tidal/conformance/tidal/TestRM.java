package org.tidal.conformance.tidal;

import java.io.IOException;
import org.apache.hadoop.yarn.server.resourcemanager.ParameterizedSchedulerTestBase.SchedulerType;
import org.junit.ClassRule;
import org.junit.Ignore;
import org.junit.Test;
import org.junit.rules.TestRule;

/**
 * Hadoop's {@code TestRM} under Tidal: ParameterizedSchedulerTestBase configures CapacityScheduler
 * [0] or FairScheduler [1] for each test (the suite runs [0]); {@link #configureScheduler} selects
 * Tidal in that configuration, so [0] is the test's CapacityScheduler code path under Tidal. Tests
 * that cannot apply to a third-party scheduler are skipped here and listed in not-applicable.txt.
 */
public class TestRM extends org.apache.hadoop.yarn.server.resourcemanager.TestRM {
  @ClassRule public static final TestRule TIDAL = TidalSite.required();

  public TestRM(SchedulerType type) {
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

  @Override
  @Test
  @Ignore("not applicable: sets CapacityScheduler itself in the test body")
  public void testNMTokenSentForNormalContainer() throws Exception {}
}
