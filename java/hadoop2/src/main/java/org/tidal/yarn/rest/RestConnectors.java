package org.tidal.yarn.rest;

import com.sun.jersey.api.core.ClassNamesResourceConfig;
import com.sun.jersey.spi.container.servlet.ServletContainer;
import org.apache.hadoop.http.HttpServer2;
import org.mortbay.jetty.Connector;
import org.mortbay.jetty.nio.SelectChannelConnector;
import org.mortbay.jetty.servlet.ServletHolder;

/** The REST endpoint's Jetty 6 connectors and Jersey 1 servlet, as Hadoop 2.7 ships them. */
final class RestConnectors {
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
    for (Connector connector : server.getWebAppContext().getServer().getConnectors()) {
      connector.setMaxIdleTime(idleTimeoutMs);
      if (connector instanceof SelectChannelConnector) {
        SelectChannelConnector select = (SelectChannelConnector) connector;
        select.setLowResourcesConnections(lowResourcesConnections);
        select.setLowResourceMaxIdleTime(lowResourcesIdleTimeoutMs);
      }
    }
  }

  /**
   * Jersey with the endpoint's classes named, as {@link HttpServer2#addJerseyResourcePackage} would
   * find them by scanning their package, which Jersey 1.9's class reader cannot do once the package
   * holds Java 8 lambdas.
   */
  static void addJersey(HttpServer2 server, String pathSpec, Class<?>[] classes) {
    ServletHolder jersey = new ServletHolder(ServletContainer.class);
    jersey.setInitParameter(
        ServletContainer.RESOURCE_CONFIG_CLASS, ClassNamesResourceConfig.class.getName());
    StringBuilder names = new StringBuilder();
    for (Class<?> c : classes) {
      names.append(names.length() == 0 ? "" : ";").append(c.getName());
    }
    jersey.setInitParameter(ClassNamesResourceConfig.PROPERTY_CLASSNAMES, names.toString());
    server.getWebAppContext().addServlet(jersey, pathSpec);
  }
}
