package org.tidal.conformance.tidal;

import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Ignore;
import org.junit.Test;
import org.junit.rules.TestRule;

/**
 * Hadoop's {@code TestApplicationMasterService} under Tidal: the class selects FifoScheduler in a
 * static configuration before its tests; {@link #selectTidal} (run after the superclass's) selects
 * Tidal there instead. Tests that cannot apply to a third-party scheduler are skipped here and
 * listed in not-applicable.txt.
 */
public class TestApplicationMasterService
    extends org.apache.hadoop.yarn.server.resourcemanager.TestApplicationMasterService {
  @ClassRule public static final TestRule TIDAL = TidalSite.required();

  /** After the superclass's {@code @BeforeClass} method: Tidal, not FifoScheduler. */
  @BeforeClass
  public static void selectTidal() {
    TidalSite.selectInStaticField(
        org.apache.hadoop.yarn.server.resourcemanager.TestApplicationMasterService.class, "conf");
  }

  @Override
  @Test
  @Ignore("not applicable: runs CapacityScheduler and FairScheduler configurations of its own")
  public void testResourceTypes() throws Exception {}
}
