package org.tidal.yarn;

import java.io.IOException;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.util.ConverterUtils;

/**
 * The REST endpoint's hints: an ApplicationMaster's hints document (JSON) for its application,
 * passed to the core. The caller is authenticated by the application attempt's AMRM token, which
 * the RM issued and can verify under simple authentication and Kerberos alike.
 */
final class HintsResource {
  /** The header that carries the attempt's AMRM token (Token.encodeToUrlString). */
  static final String TOKEN_HEADER = "X-Tidal-AMRM-Token";

  /** The core's limit on a hints document (MAX_HINTS_BYTES in hints.rs). */
  static final int MAX_HINTS_BODY_BYTES = 1 << 20;

  private final AppAttemptRegistry attempts;
  private final AmRmTokenVerifier tokens;

  HintsResource(AppAttemptRegistry attempts, RMContext rmContext) {
    this.attempts = attempts;
    this.tokens = new AmRmTokenVerifier(rmContext, attempts);
  }

  /** PUT apps/{app}/hints, from the application's current attempt. */
  RestReply put(RestRequest request, String app) throws RestException, IOException {
    ApplicationId appId;
    try {
      appId = ConverterUtils.toApplicationId(app);
    } catch (RuntimeException e) {
      throw new RestException(400, "'" + app + "' is not an application id");
    }
    ApplicationAttemptId attempt = tokens.authenticate(request.header(TOKEN_HEADER));
    request.identify(attempt.toString());
    tokens.authorize(attempt, appId);
    request.requireContentType("application/json");
    String json = request.body(MAX_HINTS_BODY_BYTES);
    String reply;
    try {
      reply = attempts.setHints(attempt, json);
    } catch (TidalPanicException e) {
      throw e;
    } catch (TidalException e) {
      String message = e.getMessage() == null ? "refused" : e.getMessage();
      // The attempt may have finished between the token check and the call.
      throw new RestException(message.startsWith("unknown application") ? 409 : 400, message);
    }
    return new RestReply(200, reply, "hints accepted");
  }
}
