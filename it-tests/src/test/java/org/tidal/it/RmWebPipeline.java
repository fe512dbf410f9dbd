package org.tidal.it;

import com.google.inject.servlet.GuiceFilter;
import java.lang.reflect.Field;

/**
 * Guice 3.0, which Hadoop 2.7's web apps use, keeps the servlet pipeline in a static field of
 * GuiceFilter: with the RM and both NodeManagers in one JVM, whichever web app starts last answers
 * on every port, and the RM's pages (/cluster, /ws/v1/cluster/...) return 404. A real RM has a JVM
 * of its own. The harness remembers the RM's pipeline when the RM web app starts and puts it back
 * once the NodeManagers are up, so the RM web UI behaves as in a real deployment (NodeManager web
 * pages are not used by these tests).
 */
final class RmWebPipeline {
  private static final Field PIPELINE = pipelineField();

  private RmWebPipeline() {}

  private static Field pipelineField() {
    try {
      Field f = GuiceFilter.class.getDeclaredField("pipeline");
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException("GuiceFilter has no static pipeline: not Guice 3.0?", e);
    }
  }

  static Object current() {
    try {
      return PIPELINE.get(null);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  static void restore(Object pipeline) {
    if (pipeline == null) {
      throw new IllegalStateException("the RM web app never started");
    }
    try {
      PIPELINE.set(null, pipeline);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }
}
