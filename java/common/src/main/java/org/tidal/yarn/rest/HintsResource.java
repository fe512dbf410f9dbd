package org.tidal.yarn.rest;

import com.sun.jersey.spi.resource.Singleton;
import java.io.IOException;
import javax.servlet.ServletContext;
import javax.servlet.http.HttpServletRequest;
import javax.ws.rs.Consumes;
import javax.ws.rs.PUT;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.util.ConverterUtils;
import org.tidal.yarn.bridge.TidalConflictException;
import org.tidal.yarn.bridge.TidalNotFoundException;

/**
 * The REST endpoint's hints: an ApplicationMaster's hints document (JSON) for its application,
 * passed to the core. The caller is authenticated by the application attempt's AMRM token, which
 * the RM issued and can verify under simple authentication and Kerberos alike, so this path is
 * outside Hadoop's HTTP authentication filter.
 */
@Path("apps/{app}/hints")
@Singleton
@Produces(MediaType.APPLICATION_JSON)
public final class HintsResource {
  /** The header that carries the attempt's AMRM token (Token.encodeToUrlString). */
  public static final String TOKEN_HEADER = "X-Tidal-AMRM-Token";

  /** The core's limit on a hints document (MAX_HINTS_BYTES in hints.rs). */
  public static final int MAX_HINTS_BODY_BYTES = 1 << 20;

  private final HintedAttempts attempts;
  private final AmRmTokenVerifier tokens;

  /** Jersey's constructor: the scheduler's parts come from the server's servlet context. */
  public HintsResource(@Context ServletContext context) {
    this.attempts = TidalRestServer.part(context, HintedAttempts.class);
    this.tokens = new AmRmTokenVerifier(TidalRestServer.part(context, RMContext.class), attempts);
  }

  /** PUT apps/{app}/hints, from the application's current attempt. */
  @PUT
  @Consumes(MediaType.APPLICATION_JSON)
  public Response put(@Context HttpServletRequest request, @PathParam("app") String app)
      throws RestException, IOException {
    ApplicationId appId;
    try {
      appId = ConverterUtils.toApplicationId(app);
    } catch (RuntimeException e) {
      throw new RestException(400, "'" + app + "' is not an application id");
    }
    ApplicationAttemptId attempt = tokens.authenticate(request.getHeader(TOKEN_HEADER));
    RestAuditFilter.identify(request, attempt.toString());
    tokens.authorize(attempt, appId);
    String json = RestInput.body(request, MAX_HINTS_BODY_BYTES);
    String reply;
    try {
      reply = attempts.setHints(attempt, json);
    } catch (TidalNotFoundException e) {
      // The attempt finished between the token check and the call: its state moved on.
      throw new TidalConflictException(e.getMessage());
    }
    RestAuditFilter.outcome(request, "hints accepted");
    return Response.ok(reply).build();
  }
}
