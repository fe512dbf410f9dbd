package org.tidal.yarn.rest;

import java.io.IOException;
import java.net.InetSocketAddress;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.queue.QueueManager;

/**
 * The scheduler's REST endpoint over the scheduler's life: wires a {@link TidalRestServer} to the
 * parts it serves (queues, attempts, the core's clock, the RM's AMRM secrets), starts it with the
 * scheduler when {@value TidalConfig#REST_ENABLED} is on, and stops it before the core goes.
 */
public final class RestEndpoint {
  private final QueueManager queues;
  private final HintedAttempts attempts;
  private final CoreInstance core;
  private final RMContext rmContext;
  private final Configuration conf;
  private volatile TidalRestServer server;

  public RestEndpoint(
      QueueManager queues,
      HintedAttempts attempts,
      CoreInstance core,
      RMContext rmContext,
      Configuration conf) {
    this.queues = queues;
    this.attempts = attempts;
    this.core = core;
    this.rmContext = rmContext;
    this.conf = conf;
  }

  /** Starts the endpoint unless the scheduler's configuration turns it off. */
  public void start() throws IOException {
    if (conf.getBoolean(TidalConfig.REST_ENABLED, TidalConfig.DEFAULT_REST_ENABLED)) {
      TidalRestServer started = newServer(conf);
      started.start();
      server = started;
    }
  }

  /** A server on these parts under {@code serverConf} (address, authentication, admin ACL). */
  public TidalRestServer newServer(Configuration serverConf) {
    return new TidalRestServer(queues, attempts, core, rmContext, serverConf);
  }

  /** Stops the endpoint, so that no request reaches a destroyed native instance. */
  public void stop() {
    TidalRestServer running = server;
    server = null;
    if (running != null) {
      running.stop();
    }
  }

  /** Where the endpoint listens, or null when it is not running. */
  public InetSocketAddress address() {
    TidalRestServer running = server;
    return running == null ? null : running.address();
  }
}
