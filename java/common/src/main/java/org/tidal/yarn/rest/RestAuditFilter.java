package org.tidal.yarn.rest;

import java.io.IOException;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.FilterConfig;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import javax.servlet.http.HttpServletResponseWrapper;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Writes one audit line per REST request: method, path, caller, client address, status and outcome,
 * which the resources and {@link RestErrorMapper} record on the request. Also keeps browsers from
 * sniffing the JSON replies as something else.
 */
public final class RestAuditFilter implements Filter {
  private static final String CALLER = RestAuditFilter.class.getName() + ".caller";
  private static final String OUTCOME = RestAuditFilter.class.getName() + ".outcome";

  private static final Log LOG = LogFactory.getLog(TidalRestServer.class);

  /** Names the caller a resource authenticated (a user, or an application attempt). */
  static void identify(HttpServletRequest request, String caller) {
    request.setAttribute(CALLER, caller);
  }

  /** Records what became of the request. */
  static void outcome(HttpServletRequest request, String outcome) {
    request.setAttribute(OUTCOME, outcome);
  }

  @Override
  public void init(FilterConfig config) {}

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest request = (HttpServletRequest) req;
    StatusRecorder response = new StatusRecorder((HttpServletResponse) res);
    response.setHeader("X-Content-Type-Options", "nosniff");
    try {
      chain.doFilter(request, response);
    } finally {
      Object caller = request.getAttribute(CALLER);
      if (caller == null) {
        caller = request.getRemoteUser() == null ? "anonymous" : request.getRemoteUser();
      }
      Object outcome = request.getAttribute(OUTCOME);
      LOG.info(
          "REST "
              + request.getMethod()
              + " "
              + request.getRequestURI()
              + " by "
              + caller
              + " from "
              + request.getRemoteAddr()
              + ":"
              + request.getRemotePort()
              + ": "
              + response.status
              + (outcome == null ? "" : " " + outcome));
    }
  }

  @Override
  public void destroy() {}

  /** The servlet API of Hadoop's Jetty cannot tell a reply's status; this remembers it. */
  private static final class StatusRecorder extends HttpServletResponseWrapper {
    int status = SC_OK;

    StatusRecorder(HttpServletResponse response) {
      super(response);
    }

    @Override
    public void setStatus(int sc) {
      status = sc;
      super.setStatus(sc);
    }

    @Override
    @SuppressWarnings("deprecation")
    public void setStatus(int sc, String sm) {
      status = sc;
      super.setStatus(sc, sm);
    }

    @Override
    public void sendError(int sc) throws IOException {
      status = sc;
      super.sendError(sc);
    }

    @Override
    public void sendError(int sc, String msg) throws IOException {
      status = sc;
      super.sendError(sc, msg);
    }
  }
}
