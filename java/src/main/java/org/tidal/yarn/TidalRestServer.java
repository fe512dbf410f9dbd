package org.tidal.yarn;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;

/**
 * Serves the scheduler's own HTTP endpoint (JDK built-in server, so the jar needs no web
 * framework): binds it, runs its threads, routes each request to its resource, turns whatever fails
 * into a JSON error reply and writes each request's audit line.
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
 * <p>{@link QueueResource} serves the queues and {@link HintsResource} the hints. Errors reach the
 * client as {@code {"status":..,"message":..}}; stack traces stay in the RM log.
 */
final class TidalRestServer {
  static final String PREFIX = "/ws/v1/tidal";

  private static final int THREADS = 4;
  private static final String INTERNAL_ERROR =
      "internal error in the Tidal scheduler; see the ResourceManager log";

  private static final Log LOG = LogFactory.getLog(TidalRestServer.class);

  private final InetSocketAddress requested;
  private final QueueResource queues;
  private final HintsResource hints;
  private HttpServer server;
  private ExecutorService executor;

  TidalRestServer(
      QueueManager queues,
      AppAttemptRegistry attempts,
      CoreInstance core,
      RMContext rmContext,
      Configuration conf) {
    this.requested =
        NetUtils.createSocketAddr(
            conf.getTrimmed(TidalScheduler.REST_ADDRESS, TidalScheduler.DEFAULT_REST_ADDRESS),
            TidalScheduler.DEFAULT_REST_PORT,
            TidalScheduler.REST_ADDRESS);
    this.queues = new QueueResource(queues, core, conf);
    this.hints = new HintsResource(attempts, rmContext);
  }

  void start() throws IOException {
    final AtomicInteger threadNumber = new AtomicInteger();
    executor =
        Executors.newFixedThreadPool(
            THREADS,
            new ThreadFactory() {
              @Override
              public Thread newThread(Runnable r) {
                Thread t = new Thread(r, "tidal-rest-" + threadNumber.incrementAndGet());
                t.setDaemon(true);
                return t;
              }
            });
    try {
      server = HttpServer.create(requested, 64);
    } catch (IOException e) {
      executor.shutdownNow();
      throw new IOException(
          "Cannot bind the Tidal REST endpoint to "
              + requested
              + " ("
              + TidalScheduler.REST_ADDRESS
              + "): "
              + e.getMessage(),
          e);
    }
    server.setExecutor(executor);
    server.createContext(
        PREFIX + "/",
        new HttpHandler() {
          @Override
          public void handle(HttpExchange exchange) {
            serve(exchange);
          }
        });
    server.start();
    LOG.info(
        "Tidal REST endpoint listening on http://"
            + NetUtils.getHostPortString(address())
            + PREFIX
            + "/ ("
            + queues.accessSummary()
            + ")");
  }

  /** The bound address (the real port when the configured one was 0). */
  InetSocketAddress address() {
    return server.getAddress();
  }

  void stop() {
    if (server != null) {
      server.stop(0);
      server = null;
    }
    if (executor != null) {
      executor.shutdownNow();
      try {
        executor.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      executor = null;
    }
  }

  private void serve(HttpExchange exchange) {
    String method = exchange.getRequestMethod();
    String rawPath = exchange.getRequestURI().getRawPath();
    RestRequest request = null;
    RestReply reply;
    try {
      request = new RestRequest(exchange, PREFIX);
      reply = route(request);
    } catch (RestException e) {
      reply = RestReply.error(e.status, e.getMessage());
    } catch (TidalPanicException e) {
      LOG.error("Tidal core panicked serving " + method + " " + rawPath, e);
      reply = RestReply.error(500, INTERNAL_ERROR);
    } catch (TidalException e) {
      reply = RestReply.error(400, e.getMessage());
    } catch (Throwable t) {
      LOG.error("Failed to serve " + method + " " + rawPath, t);
      reply = RestReply.error(500, INTERNAL_ERROR);
    }
    try {
      reply.send(exchange);
    } catch (IOException e) {
      LOG.info("Could not send the reply to " + method + " " + rawPath + ": " + e.getMessage());
    } finally {
      exchange.close();
    }
    LOG.info(
        "REST "
            + method
            + " "
            + rawPath
            + " by "
            + (request == null ? "anonymous" : request.caller())
            + " from "
            + addressOf(exchange)
            + ": "
            + reply.status
            + " "
            + reply.outcome);
  }

  private static String addressOf(HttpExchange exchange) {
    InetSocketAddress remote = exchange.getRemoteAddress();
    return remote == null ? "?" : NetUtils.getHostPortString(remote);
  }

  private RestReply route(RestRequest request) throws RestException, IOException {
    List<String> p = request.path;
    if (!p.isEmpty() && p.get(0).equals("queues")) {
      if (p.size() == 1) {
        if (request.method.equals("GET")) {
          return queues.list();
        }
        if (request.method.equals("POST")) {
          return queues.register(request);
        }
        throw notAllowed(request, "GET, POST");
      }
      if (p.size() == 2) {
        if (request.method.equals("GET")) {
          return queues.get(p.get(1));
        }
        if (request.method.equals("DELETE")) {
          return queues.unregister(request, p.get(1));
        }
        throw notAllowed(request, "GET, DELETE");
      }
    }
    if (p.size() == 3 && p.get(0).equals("apps") && p.get(2).equals("hints")) {
      if (request.method.equals("PUT")) {
        return hints.put(request, p.get(1));
      }
      throw notAllowed(request, "PUT");
    }
    throw new RestException(404, "no such resource: " + request.rawPath());
  }

  private static RestException notAllowed(RestRequest request, String allowed) {
    request.replyHeader("Allow", allowed);
    return new RestException(405, request.method + " is not allowed here; use " + allowed);
  }
}
