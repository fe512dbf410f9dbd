package org.tidal.conformance.tidal;

import org.junit.ClassRule;
import org.junit.Ignore;
import org.junit.Test;
import org.junit.rules.TestRule;

/**
 * Hadoop's {@code TestAMRestart} under Tidal: the site's yarn-site.xml selects Tidal for every
 * configuration the tests create. Tests that cannot apply to a third-party scheduler are skipped
 * here and listed in not-applicable.txt.
 */
public class TestAMRestart
    extends org.apache.hadoop.yarn.server.resourcemanager.applicationsmanager.TestAMRestart {
  @ClassRule public static final TestRule TIDAL = TidalSite.required();

  @Override
  @Test
  @Ignore("not applicable: sets CapacityScheduler itself in the test body")
  public void testShouldNotCountFailureToMaxAttemptRetry() throws Exception {}

  @Override
  @Test
  @Ignore("not applicable: sets CapacityScheduler itself in the test body")
  public void testPreemptedAMRestartOnRMRestart() throws Exception {}

  @Override
  @Test
  @Ignore("not applicable: sets CapacityScheduler itself in the test body")
  public void testRMRestartOrFailoverNotCountedForAMFailures() throws Exception {}

  @Override
  @Test
  @Ignore("not applicable: sets CapacityScheduler itself in the test body")
  public void testRMAppAttemptFailuresValidityInterval() throws Exception {}
}
