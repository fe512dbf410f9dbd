package org.tidal.conformance.tidal;

import org.junit.ClassRule;
import org.junit.Ignore;
import org.junit.Test;
import org.junit.rules.TestRule;

/**
 * Hadoop's {@code TestNMReconnect} under Tidal: the site's yarn-site.xml selects Tidal for every
 * configuration the tests create. Tests that cannot apply to a third-party scheduler are skipped
 * here and listed in not-applicable.txt.
 */
public class TestNMReconnect
    extends org.apache.hadoop.yarn.server.resourcemanager.resourcetracker.TestNMReconnect {
  @ClassRule public static final TestRule TIDAL = TidalSite.required();

  @Override
  @Test
  @Ignore("not applicable: creates a CapacityScheduler itself")
  public void testCompareRMNodeAfterReconnect() throws Exception {}
}
