package org.tidal.conformance.tidal;

import java.io.IOException;
import org.apache.hadoop.yarn.server.resourcemanager.ParameterizedSchedulerTestBase.SchedulerType;
import org.junit.ClassRule;
import org.junit.Ignore;
import org.junit.Test;
import org.junit.rules.TestRule;

/**
 * Hadoop's {@code TestWorkPreservingRMRestart} under Tidal: ParameterizedSchedulerTestBase
 * configures CapacityScheduler [0] or FairScheduler [1] for each test (the suite runs [0]); {@link
 * #configureScheduler} selects Tidal in that configuration, so [0] is the test's CapacityScheduler
 * code path under Tidal. Tests that cannot apply to a third-party scheduler are skipped here and
 * listed in not-applicable.txt.
 */
public class TestWorkPreservingRMRestart
    extends org.apache.hadoop.yarn.server.resourcemanager.TestWorkPreservingRMRestart {
  @ClassRule public static final TestRule TIDAL = TidalSite.required();

  public TestWorkPreservingRMRestart(SchedulerType type) {
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
  @Ignore(
      "not applicable: a CapacityScheduler test: CapacityScheduler queues and their LeafQueue state")
  public void testCapacitySchedulerRecovery() throws Exception {}

  @Override
  @Test
  @Ignore(
      "not applicable: a CapacityScheduler test: CapacityScheduler queue configuration on recovery")
  public void testCapacityLeafQueueBecomesParentOnRecovery() throws Exception {}

  @Override
  @Test
  @Ignore(
      "not applicable: a CapacityScheduler test: CapacityScheduler queue configuration on recovery")
  public void testCapacitySchedulerQueueRemovedRecovery() throws Exception {}
}
