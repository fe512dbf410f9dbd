package org.tidal.yarn.rest;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import javax.servlet.ServletContext;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.http.HttpServer2;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.authentication.server.KerberosAuthenticationHandler;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.security.http.RMAuthenticationFilterInitializer;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.queue.QueueManager;

/**
 * Serves the scheduler's own REST endpoint on Hadoop's web stack, as the RM serves its own: an
 * {@link HttpServer2} (Jetty) running this package's Jersey resources, with the RM's authentication
 * filter in front of the queue paths.
 *
 * <pre>
 *   GET    /ws/v1/tidal/queues                     every queue's class, burst state, shares
 *   GET    /ws/v1/tidal/queues/{queue}             one queue
 *   POST   /ws/v1/tidal/queues?user.name=U         register a queue (a &lt;queue&gt; element)
 *   DELETE /ws/v1/tidal/queues/{queue}?user.name=U unregister a queue registered at run time
 *   PUT    /ws/v1/tidal/apps/{appId}/hints         an ApplicationMaster's hints (JSON), with
 *                                                  header X-Tidal-AMRM-Token
 * </pre>
 *
 * <p>{@link QueueResource} serves the queues and {@link HintsResource} the hints; {@link
 * RestErrorMapper} turns whatever fails into {@code {"status":..,"message":..}} and {@link
 * RestAuditFilter} writes each request's audit line.
 *
 * <p>Authentication is Hadoop's ({@code hadoop.http.authentication.*}, through the RM's {@link
 * RMAuthenticationFilterInitializer}: simple with {@code user.name}, or Kerberos SPNEGO, and proxy
 * users by {@code doAs} under {@code hadoop.proxyuser.*}). The hints path is outside it: an AM
 * proves itself with its AMRM token, which works under both.
 *
 * <p>Jetty's connector ({@link RestConnectors}, which differ between Hadoop lines) parses request
 * headers without holding a thread, closes connections idle for {@value
 * TidalConfig#REST_IDLE_TIMEOUT_MS} (reads and writes alike), and sheds idle connections sooner
 * beyond {@value TidalConfig#REST_LOW_RESOURCES_CONNECTIONS}; at most {@value
 * TidalConfig#REST_MAX_THREADS} threads serve requests.
 */
public final class TidalRestServer {
  public static final String PREFIX = "/ws/v1/tidal";

  /** The paths the authentication filter guards: the queues, not the AMRM-token hints. */
  private static final String[] AUTHENTICATED_PATHS = {PREFIX + "/queues/*"};

  /** The resources and providers Jersey serves. */
  private static final Class<?>[] JERSEY_CLASSES = {
    QueueResource.class, HintsResource.class, RestErrorMapper.class
  };

  private static final String AUTH_TYPE = "hadoop.http.authentication.type";
  private static final String AUTH_KEYTAB = "hadoop.http.authentication.kerberos.keytab";

  /** Jetty's minimum: the selector keeps one thread, and requests need at least one more. */
  private static final int MIN_THREADS = 2;

  private static final Log LOG = LogFactory.getLog(TidalRestServer.class);

  private final InetSocketAddress requested;
  private final Configuration conf;
  private final int idleTimeoutMs;
  private final int maxThreads;
  private final int lowResourcesConnections;
  private final int lowResourcesIdleTimeoutMs;

  /** What the resources serve, by type name: see {@link #part}. */
  private final Map<String, Object> parts = new HashMap<String, Object>();

  private HttpServer2 http;

  TidalRestServer(
      QueueManager queues,
      HintedAttempts attempts,
      CoreInstance core,
      RMContext rmContext,
      Configuration conf) {
    this.requested =
        NetUtils.createSocketAddr(
            TidalConfig.restAddress(conf), TidalConfig.DEFAULT_REST_PORT, TidalConfig.REST_ADDRESS);
    this.conf = conf;
    this.idleTimeoutMs =
        positive(conf, TidalConfig.REST_IDLE_TIMEOUT_MS, TidalConfig.DEFAULT_REST_IDLE_TIMEOUT_MS);
    this.maxThreads =
        positive(conf, TidalConfig.REST_MAX_THREADS, TidalConfig.DEFAULT_REST_MAX_THREADS);
    if (maxThreads < MIN_THREADS) {
      throw new IllegalArgumentException(
          TidalConfig.REST_MAX_THREADS
              + " is "
              + maxThreads
              + "; it must be at least "
              + MIN_THREADS);
    }
    this.lowResourcesConnections =
        positive(
            conf,
            TidalConfig.REST_LOW_RESOURCES_CONNECTIONS,
            TidalConfig.DEFAULT_REST_LOW_RESOURCES_CONNECTIONS);
    this.lowResourcesIdleTimeoutMs =
        positive(
            conf,
            TidalConfig.REST_LOW_RESOURCES_IDLE_TIMEOUT_MS,
            TidalConfig.DEFAULT_REST_LOW_RESOURCES_IDLE_TIMEOUT_MS);
    if (KerberosAuthenticationHandler.TYPE.equals(conf.getTrimmed(AUTH_TYPE))) {
      // Jetty would only report a filter that failed to start.
      String keytab = conf.getTrimmed(AUTH_KEYTAB, "");
      if (!new File(keytab).canRead()) {
        throw new IllegalArgumentException(
            AUTH_TYPE
                + " is kerberos but "
                + AUTH_KEYTAB
                + " ('"
                + keytab
                + "') is not a readable file: the REST endpoint needs the HTTP principal's keytab");
      }
    }
    parts.put(QueueManager.class.getName(), queues);
    parts.put(HintedAttempts.class.getName(), attempts);
    parts.put(CoreInstance.class.getName(), core);
    parts.put(RMContext.class.getName(), rmContext);
    parts.put(Configuration.class.getName(), conf);
  }

  private static int positive(Configuration conf, String key, int defaultValue) {
    int value;
    try {
      value = conf.getInt(key, defaultValue);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " is not a number: " + conf.get(key), e);
    }
    if (value <= 0) {
      throw new IllegalArgumentException(key + " is " + value + "; it must be positive");
    }
    return value;
  }

  public void start() throws IOException {
    // The endpoint authenticates with the RM's filter alone: the RM's static-user filter would
    // name every anonymous caller, and other initializers belong to the RM's own web app.
    Configuration serverConf = new Configuration(conf);
    serverConf.set(
        "hadoop.http.filter.initializers", RMAuthenticationFilterInitializer.class.getName());
    HttpServer2 server =
        new HttpServer2.Builder()
            .setName("tidal")
            .addEndpoint(URI.create("http://" + NetUtils.getHostPortString(requested)))
            .setFindPort(false)
            .setConf(serverConf)
            .setPathSpec(AUTHENTICATED_PATHS)
            .build();
    server.setThreads(MIN_THREADS, maxThreads);
    RestConnectors.tune(server, idleTimeoutMs, lowResourcesConnections, lowResourcesIdleTimeoutMs);
    // Jersey builds the resources; they find the scheduler's parts here, as Hadoop's own do.
    for (Map.Entry<String, Object> part : parts.entrySet()) {
      server.setAttribute(part.getKey(), part.getValue());
    }
    HttpServer2.defineFilter(
        server.getWebAppContext(),
        "tidal-audit",
        RestAuditFilter.class.getName(),
        Collections.<String, String>emptyMap(),
        new String[] {PREFIX + "/*"});
    RestConnectors.addJersey(server, PREFIX + "/*", JERSEY_CLASSES);
    try {
      server.start();
    } catch (IOException e) {
      stopQuietly(server);
      throw new IOException(
          "Cannot start the Tidal REST endpoint on "
              + requested
              + " ("
              + TidalConfig.REST_ADDRESS
              + "): "
              + e.getMessage(),
          e);
    }
    http = server;
    LOG.info(
        "Tidal REST endpoint listening on http://"
            + NetUtils.getHostPortString(address())
            + PREFIX
            + "/ (idle timeout "
            + idleTimeoutMs
            + " ms, at most "
            + maxThreads
            + " threads; "
            + QueueResource.accessSummary(conf)
            + ")");
  }

  /** The bound address (the real port when the configured one was 0). */
  public InetSocketAddress address() {
    return http.getConnectorAddress(0);
  }

  public void stop() {
    if (http != null) {
      stopQuietly(http);
      http = null;
    }
  }

  private static void stopQuietly(HttpServer2 server) {
    try {
      server.stop();
    } catch (Exception e) {
      LOG.warn("Could not stop the Tidal REST endpoint cleanly", e);
    }
  }

  /** A part the server put in its servlet context for the resources. */
  static <T> T part(ServletContext context, Class<T> type) {
    Object part = context.getAttribute(type.getName());
    if (part == null) {
      throw new IllegalStateException(type.getName() + " is missing from the servlet context");
    }
    return type.cast(part);
  }
}
