package org.tidal.conformance.tidal;

import org.junit.ClassRule;
import org.junit.rules.TestRule;

/**
 * Hadoop's {@code TestAMRMRPCResponseId} under Tidal: the site's yarn-site.xml selects Tidal for
 * every configuration the tests create.
 */
public class TestAMRMRPCResponseId
    extends org.apache.hadoop.yarn.server.resourcemanager.applicationsmanager
        .TestAMRMRPCResponseId {
  @ClassRule public static final TestRule TIDAL = TidalSite.required();
}
