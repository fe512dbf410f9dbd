package org.tidal.yarn;

import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import javax.xml.stream.XMLStreamException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.view.QueueStatus;
import org.tidal.yarn.view.SchedulerInfo;
import org.tidal.yarn.view.SchedulerPage;
import org.tidal.yarn.view.WebAssets;
import org.tidal.yarn.view.WebReply;

/**
 * Shows Tidal in the RM's own web app. Installed on every path of the RM's HTTP server by {@link
 * TidalWebFilterInitializer}, ahead of the RM's web app, it answers a few routes itself:
 *
 * <ul>
 *   <li>{@code /cluster/scheduler}: the scheduler page ({@link SchedulerPage});
 *   <li>{@code /ws/v1/cluster/scheduler}: the scheduler's REST view ({@link SchedulerInfo}), where
 *       the RM would only know Capacity, Fair and FIFO schedulers;
 *   <li>{@code /ws/v1/cluster/tidal/status}: the core's status JSON as it is;
 *   <li>{@code /ws/v1/cluster/tidal/history?since=<ms>}: what the core recorded over time, samples
 *       after {@code since} (all without it);
 *   <li>{@code /tidal/dashboard} and {@code /tidal/static/<file>}: the dashboard ({@link
 *       WebAssets}).
 * </ul>
 *
 * <p>Every other request, and every request when no Tidal scheduler runs in this JVM (a NodeManager
 * reading the same configuration), goes on unchanged. The routes answer GET and HEAD only (405
 * otherwise); a failure is a JSON error (503 when the core cannot answer, 500 otherwise), never an
 * exception out of the filter.
 */
public final class TidalWebFilter implements Filter {
  /** What a route answers to a GET or HEAD, given the scheduler that runs in this JVM. */
  interface Route {
    WebReply answer(HttpServletRequest request, TidalShim scheduler)
        throws IOException, XMLStreamException;
  }

  static final String STATIC_PREFIX = "/tidal/static/";

  private static final Log LOG = LogFactory.getLog(TidalWebFilter.class);
  private static final WebAssets ASSETS =
      new WebAssets(TidalWebFilter.class.getClassLoader(), WebAssets.BASE);
  private static final String SCHEDULER_PAGE_PATH = "/cluster/scheduler";
  private static final Map<String, Route> ROUTES = routes();

  private static Map<String, Route> routes() {
    Map<String, Route> routes = new HashMap<String, Route>();
    routes.put(
        SCHEDULER_PAGE_PATH,
        (request, scheduler) ->
            new WebReply(
                200,
                WebReply.HTML,
                SchedulerPage.render(status(scheduler), scheduler::wallClockMs)));
    routes.put(
        "/ws/v1/cluster/scheduler",
        (request, scheduler) ->
            WebReply.json(SchedulerInfo.json(status(scheduler), scheduler::wallClockMs)));
    routes.put(
        "/ws/v1/cluster/tidal/status",
        (request, scheduler) -> WebReply.json(scheduler.statusJson()));
    routes.put(
        "/ws/v1/cluster/tidal/history",
        (request, scheduler) -> {
          String since = request.getParameter("since");
          try {
            return WebReply.json(
                scheduler.historyJson(since == null ? Long.MIN_VALUE : Long.parseLong(since)));
          } catch (NumberFormatException e) {
            return WebReply.error(
                400,
                "since must be a time in milliseconds of the core's clock, not '" + since + "'");
          }
        });
    routes.put("/tidal/dashboard", (request, scheduler) -> ASSETS.get("dashboard.html"));
    return Collections.unmodifiableMap(routes);
  }

  private static QueueStatus status(TidalShim scheduler) throws IOException {
    return QueueStatus.parse(scheduler.statusJson());
  }

  /** The route of a request path, or null for a path this filter leaves to the RM. */
  static Route route(String path) {
    if (path.startsWith(STATIC_PREFIX)) {
      String name = "static/" + path.substring(STATIC_PREFIX.length());
      return (request, scheduler) -> ASSETS.get(name);
    }
    return ROUTES.get(
        path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path);
  }

  @Override
  public void init(FilterConfig config) {}

  @Override
  public void doFilter(ServletRequest req, ServletResponse resp, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest)) {
      chain.doFilter(req, resp);
      return;
    }
    HttpServletRequest request = (HttpServletRequest) req;
    // The whole URI, not the part after the context: the filter is on every context of the
    // server (/static, /logs too), and only the RM web app's root context holds these routes.
    Route route = route(request.getRequestURI());
    TidalShim scheduler = route == null ? null : RunningSchedulers.current();
    if (scheduler == null) {
      chain.doFilter(req, resp);
      return;
    }
    HttpServletResponse response = (HttpServletResponse) resp;
    String method = request.getMethod();
    boolean head = "HEAD".equals(method);
    if (!head && !"GET".equals(method)) {
      response.setHeader("Allow", "GET, HEAD");
      WebReply.error(405, method + " is not allowed on " + request.getRequestURI() + ": use GET")
          .send(response, false);
      return;
    }
    answer(route, request, scheduler).send(response, head);
  }

  /** The scheduler page, for a web UI that renders it in place of this filter. */
  static WebReply schedulerPage(HttpServletRequest request) {
    TidalShim scheduler = RunningSchedulers.current();
    if (scheduler == null) {
      return WebReply.error(503, "no active Tidal scheduler in this ResourceManager");
    }
    return answer(route(SCHEDULER_PAGE_PATH), request, scheduler);
  }

  static WebReply answer(Route route, HttpServletRequest request, TidalShim scheduler) {
    String uri = request.getRequestURI();
    try {
      return route.answer(request, scheduler);
    } catch (TidalException e) {
      LOG.warn("Tidal core cannot answer " + uri + ": " + e.getMessage());
      return WebReply.error(503, "the Tidal scheduler cannot answer now: " + e.getMessage());
    } catch (IOException | XMLStreamException | RuntimeException e) {
      LOG.error("Cannot answer " + uri + ": " + e, e);
      return WebReply.error(500, "cannot answer " + uri + ": " + e);
    }
  }

  @Override
  public void destroy() {}
}
