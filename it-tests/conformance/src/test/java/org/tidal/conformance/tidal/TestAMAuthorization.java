package org.tidal.conformance.tidal;

import org.apache.hadoop.conf.Configuration;
import org.junit.ClassRule;
import org.junit.rules.TestRule;

/**
 * Hadoop's {@code TestAMAuthorization} under Tidal: the site's yarn-site.xml selects Tidal for
 * every configuration the tests create; the class's parameters are security settings.
 */
public class TestAMAuthorization
    extends org.apache.hadoop.yarn.server.resourcemanager.TestAMAuthorization {
  @ClassRule public static final TestRule TIDAL = TidalSite.required();

  public TestAMAuthorization(Configuration conf) {
    super(conf);
  }
}
