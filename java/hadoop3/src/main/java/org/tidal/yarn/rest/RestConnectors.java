package org.tidal.yarn.rest;

import org.apache.hadoop.http.HttpServer2;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.LowResourceMonitor;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletHolder;

/**
 * The REST endpoint's Jetty 9 connectors and its Jersey servlet. Hadoop 3.4 ships Jersey 1 and 3.5
 * Jersey 2; both take the resources by class name, so the servlet is named by class name too and
 * this jar needs neither at compile time.
 */
final class RestConnectors {
  private static final String JERSEY2_SERVLET = "org.glassfish.jersey.servlet.ServletContainer";
  private static final String JERSEY1_SERVLET =
      "com.sun.jersey.spi.container.servlet.ServletContainer";

  private RestConnectors() {}

  /**
   * Closes connections idle for {@code idleTimeoutMs}, or for {@code lowResourcesIdleTimeoutMs}
   * beyond {@code lowResourcesConnections} open ones.
   */
  static void tune(
      HttpServer2 server,
      int idleTimeoutMs,
      int lowResourcesConnections,
      int lowResourcesIdleTimeoutMs) {
    Server jetty = server.getWebAppContext().getServer();
    for (Connector connector : jetty.getConnectors()) {
      if (connector instanceof ServerConnector) {
        ((ServerConnector) connector).setIdleTimeout(idleTimeoutMs);
      }
    }
    LowResourceMonitor monitor = new LowResourceMonitor(jetty);
    monitor.setMaxConnections(lowResourcesConnections);
    monitor.setLowResourcesIdleTimeout(lowResourcesIdleTimeoutMs);
    jetty.addBean(monitor);
  }

  /** Jersey serving exactly {@code classes} under {@code pathSpec}. */
  static void addJersey(HttpServer2 server, String pathSpec, Class<?>[] classes) {
    ServletHolder jersey = new ServletHolder();
    if (present(JERSEY2_SERVLET)) {
      jersey.setClassName(JERSEY2_SERVLET);
      jersey.setInitParameter("jersey.config.server.provider.classnames", names(classes, ","));
    } else {
      jersey.setClassName(JERSEY1_SERVLET);
      jersey.setInitParameter(
          "com.sun.jersey.config.property.resourceConfigClass",
          "com.sun.jersey.api.core.ClassNamesResourceConfig");
      jersey.setInitParameter("com.sun.jersey.config.property.classnames", names(classes, ";"));
    }
    server.getWebAppContext().addServlet(jersey, pathSpec);
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, RestConnectors.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  private static String names(Class<?>[] classes, String separator) {
    StringBuilder names = new StringBuilder();
    for (Class<?> c : classes) {
      names.append(names.length() == 0 ? "" : separator).append(c.getName());
    }
    return names.toString();
  }
}
