package org.tidal.replay;

import java.net.URL;
import java.net.URLClassLoader;

/**
 * System class loader for Tez 0.9 containers on Java 9+: Tez adds a DAG's extra resources by
 * casting the system class loader to URLClassLoader
 * (ReflectionUtils.addResourcesToSystemClassLoader), which Java 9 made a different type: without it
 * every DAG fails at start with a ClassCastException. Installed with -Djava.system.class.loader; it
 * adds no URLs of its own and delegates every class to the JDK's application class loader.
 */
public final class TezAmClassLoader extends URLClassLoader {
  static {
    ClassLoader.registerAsParallelCapable();
  }

  public TezAmClassLoader(ClassLoader parent) {
    super(new URL[0], parent);
  }
}
