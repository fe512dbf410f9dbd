package org.tidal.yarn.config;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;

/** The scheduler's configuration keys (in {@code yarn-site.xml}) and their defaults. */
public final class TidalConfig {
  /** Queue allocation file: absolute path, or a name resolved on the classpath. */
  public static final String ALLOCATION_FILE = "tidal.allocation.file";

  public static final String DEFAULT_ALLOCATION_FILE = "tidal-queues.xml";

  /**
   * Upper bound on containers started per node heartbeat. One by default, as FairScheduler ({@code
   * yarn.scheduler.fair.assignmultiple} false) and 2.7's CapacityScheduler start one per node
   * heartbeat; raise it as FairScheduler's {@code max.assign} for faster ramp-up.
   */
  public static final String MAX_ASSIGN_PER_HEARTBEAT = "tidal.max-assign-per-heartbeat";

  public static final int DEFAULT_MAX_ASSIGN_PER_HEARTBEAT = 1;

  /**
   * Whether a node is reserved for an ask larger than its free space, as Hadoop's schedulers do, so
   * that a large request does not wait forever behind smaller ones.
   */
  public static final String RESERVE_CONTAINERS = "tidal.reservations.enabled";

  public static final boolean DEFAULT_RESERVE_CONTAINERS = true;

  /**
   * The AM share (fraction of a queue's fair share its ApplicationMasters may take) of leaves the
   * queue file gives none, neither {@code <maxAMShare>} nor {@code <queueMaxAMShareDefault>}; -1
   * checks none. FairScheduler's default, 0.5.
   */
  public static final String QUEUE_MAX_AM_SHARE_DEFAULT = "tidal.queue-max-am-share-default";

  public static final float DEFAULT_QUEUE_MAX_AM_SHARE_DEFAULT = 0.5f;
  public static final String ROOT_QUEUE = "root";

  /**
   * Address of the scheduler's REST endpoint (queue status and registration, AM hints). Port 0
   * binds a free port; the scheduler's {@code getRestAddress} tells which. Unset, the endpoint
   * binds the host of the RM's web address ({@code yarn.resourcemanager.webapp.address}) on {@link
   * #DEFAULT_REST_PORT}: see {@link #restAddress}.
   */
  public static final String REST_ADDRESS = "tidal.rest.address";

  public static final int DEFAULT_REST_PORT = 8089;

  /**
   * How long a REST connection may stay idle (nothing read or written: a stalled request, an unread
   * reply, or keep-alive between requests) before the endpoint closes it.
   */
  public static final String REST_IDLE_TIMEOUT_MS = "tidal.rest.idle-timeout-ms";

  public static final int DEFAULT_REST_IDLE_TIMEOUT_MS = 30000;

  /** Most threads serving REST requests at once (the connection selector takes one of them). */
  public static final String REST_MAX_THREADS = "tidal.rest.max-threads";

  public static final int DEFAULT_REST_MAX_THREADS = 64;

  /**
   * Open REST connections beyond which the endpoint is short of resources and closes connections
   * idle for {@value #REST_LOW_RESOURCES_IDLE_TIMEOUT_MS} instead.
   */
  public static final String REST_LOW_RESOURCES_CONNECTIONS =
      "tidal.rest.low-resources.connections";

  public static final int DEFAULT_REST_LOW_RESOURCES_CONNECTIONS = 256;

  public static final String REST_LOW_RESOURCES_IDLE_TIMEOUT_MS =
      "tidal.rest.low-resources.idle-timeout-ms";

  public static final int DEFAULT_REST_LOW_RESOURCES_IDLE_TIMEOUT_MS = 5000;

  /** Whether the REST endpoint runs at all. */
  public static final String REST_ENABLED = "tidal.rest.enabled";

  public static final boolean DEFAULT_REST_ENABLED = true;

  /**
   * Test-only: lets the scheduler's {@code armHeartbeatPanic} make the core panic. Off by default;
   * the bridge refuses the trigger unless the instance was created with it on.
   */
  public static final String FAULT_INJECTION = "tidal.test.fault-injection";

  /**
   * The REST endpoint's address: {@value #REST_ADDRESS}, or else the host of the RM's web address
   * (the one its web UI and REST API listen on) with {@link #DEFAULT_REST_PORT}, so that the
   * endpoint is reachable wherever the RM's own web services are and nowhere else.
   */
  public static String restAddress(Configuration conf) {
    String configured = conf.getTrimmed(REST_ADDRESS);
    if (configured != null && !configured.isEmpty()) {
      return configured;
    }
    String web = WebAppUtils.getRMWebAppURLWithoutScheme(conf);
    int colon = web.lastIndexOf(':');
    String host = colon < 0 ? web : web.substring(0, colon);
    // ${yarn.resourcemanager.hostname} stays unexpanded when that is unset: the RM's default,
    // the wildcard, is what its web app binds then.
    if (host.contains("${")) {
      host = "0.0.0.0";
    }
    return host + ":" + DEFAULT_REST_PORT;
  }

  private TidalConfig() {}
}
