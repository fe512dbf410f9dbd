package org.tidal.conformance.tidal;

import java.lang.reflect.Field;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.rules.TestRule;
import org.junit.runner.Description;
import org.junit.runners.model.Statement;

/**
 * The scheduler the tidal run's yarn-site.xml selects (src/conf/tidal), for the Hadoop tests that
 * set a scheduler of their own: a subclass here puts it back into the test's configuration after
 * the test's own set-up, before the test body runs. Hadoop's classes stay as they are.
 */
final class TidalSite {
  private TidalSite() {}

  /**
   * The site's scheduler class name. Fails when the class path has no site file that selects one
   * (the subclasses would then run Hadoop's default scheduler and prove nothing about Tidal).
   */
  static String scheduler() {
    String scheduler = new YarnConfiguration().get(YarnConfiguration.RM_SCHEDULER);
    if (scheduler == null || scheduler.equals(YarnConfiguration.DEFAULT_RM_SCHEDULER)) {
      throw new IllegalStateException(
          "no yarn-site.xml selecting the scheduler under test on the class path (found "
              + scheduler
              + "); run these classes through it-tests/conformance/pom.xml");
    }
    return scheduler;
  }

  /** Selects the site's scheduler in {@code conf}, which a test set to its own. */
  static void select(Configuration conf) {
    conf.set(YarnConfiguration.RM_SCHEDULER, scheduler());
  }

  /**
   * Selects the site's scheduler in the configuration a test class keeps in a private static field
   * set up by its {@code @BeforeClass} method. Read reflectively: the field is private, and no
   * other hook reaches it without changing the class.
   */
  static void selectInStaticField(Class<?> testClass, String field) {
    try {
      Field f = testClass.getDeclaredField(field);
      f.setAccessible(true);
      select((Configuration) f.get(null));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(testClass.getName() + "." + field, e);
    }
  }

  /**
   * A class rule that checks, before any test of the class, that the site selects a scheduler other
   * than Hadoop's default: every class of the tidal run has it.
   */
  static TestRule required() {
    return (Statement base, Description description) ->
        new Statement() {
          @Override
          public void evaluate() throws Throwable {
            scheduler();
            base.evaluate();
          }
        };
  }
}
