package org.tidal.yarn.rest;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import javax.servlet.http.HttpServletRequest;
import javax.ws.rs.WebApplicationException;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import javax.ws.rs.ext.ExceptionMapper;
import javax.ws.rs.ext.Provider;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.tidal.yarn.bridge.TidalConflictException;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalForbiddenException;
import org.tidal.yarn.bridge.TidalInvalidInputException;
import org.tidal.yarn.bridge.TidalNotFoundException;
import org.tidal.yarn.bridge.TidalPanicException;

/**
 * Turns whatever a REST request fails with into {@code {"status":..,"message":..}}: the resources'
 * refusals, the core's typed refusals by their class, Jersey's own (no such path, method not
 * allowed, wrong content type), and failures, whose stack traces stay in the RM log.
 */
@Provider
public final class RestErrorMapper implements ExceptionMapper<Exception> {
  private static final String INTERNAL_ERROR =
      "internal error in the Tidal scheduler; see the ResourceManager log";

  private static final Log LOG = LogFactory.getLog(RestErrorMapper.class);

  @Context private HttpServletRequest request;

  @Override
  public Response toResponse(Exception e) {
    int status;
    String message;
    Response.ResponseBuilder reply;
    if (e instanceof RestException) {
      status = ((RestException) e).status;
      message = e.getMessage();
      reply = Response.status(status);
      for (Map.Entry<String, String> header : ((RestException) e).headers.entrySet()) {
        reply.header(header.getKey(), header.getValue());
      }
    } else if (e instanceof TidalPanicException) {
      LOG.error("Tidal core panicked serving " + describe(), e);
      status = 500;
      message = INTERNAL_ERROR;
      reply = Response.status(status);
    } else if (e instanceof TidalException) {
      status = status((TidalException) e);
      message = e.getMessage() == null ? "refused" : e.getMessage();
      reply = Response.status(status);
    } else if (e instanceof WebApplicationException) {
      Response jersey = ((WebApplicationException) e).getResponse();
      status = jersey.getStatus();
      message = jerseyMessage(jersey);
      reply = Response.status(status);
      for (Map.Entry<String, List<Object>> header : jersey.getMetadata().entrySet()) {
        if (!header.getKey().equalsIgnoreCase("Content-Type")) {
          for (Object value : header.getValue()) {
            reply.header(header.getKey(), value);
          }
        }
      }
    } else {
      LOG.error("Failed to serve " + describe(), e);
      status = 500;
      message = INTERNAL_ERROR;
      reply = Response.status(status);
    }
    RestAuditFilter.outcome(request, message);
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.put("status", status);
    body.put("message", message);
    return reply.type(MediaType.APPLICATION_JSON_TYPE).entity(body.toString()).build();
  }

  /**
   * The status of the core's refusal, by its exception class, which the bridge picks from the kind
   * of the core's error.
   */
  public static int status(TidalException e) {
    if (e instanceof TidalForbiddenException) {
      return 403;
    } else if (e instanceof TidalConflictException) {
      return 409;
    } else if (e instanceof TidalNotFoundException) {
      return 404;
    } else if (e instanceof TidalInvalidInputException) {
      return 400;
    }
    // A failure of the bridge itself, or a scheduler already stopped.
    return 503;
  }

  private String jerseyMessage(Response jersey) {
    switch (jersey.getStatus()) {
      case 404:
        return "no such resource: " + request.getRequestURI();
      case 405:
        return request.getMethod()
            + " is not allowed here; use "
            + jersey.getMetadata().getFirst("Allow");
      case 406:
        return "this resource answers " + MediaType.APPLICATION_JSON + " only";
      case 415:
        String type = request.getContentType();
        return "Content-Type "
            + (type == null ? "is missing" : "'" + type + "' is not accepted")
            + " for "
            + request.getMethod()
            + " "
            + request.getRequestURI();
      default:
        Response.Status known = Response.Status.fromStatusCode(jersey.getStatus());
        return known == null ? "refused" : known.getReasonPhrase();
    }
  }

  private String describe() {
    return request.getMethod() + " " + request.getRequestURI();
  }
}
