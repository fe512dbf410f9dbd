package org.tidal.yarn.rest;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.security.MessageDigest;
import org.apache.hadoop.security.token.SecretManager.InvalidToken;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;

/**
 * Proves that an HTTP caller is an application's current attempt: it must present the AMRM token
 * the RM gave that attempt's ApplicationMaster (the token that authenticates its allocate calls),
 * URL-encoded as by {@link Token#encodeToUrlString}. The password is checked against the RM's own
 * AMRM secret manager, so no new secret is shared with the AM and neither YARN nor the AM framework
 * needs a patch.
 */
final class AmRmTokenVerifier {
  private static final int MAX_ENCODED_LENGTH = 8192;

  private final RMContext rmContext;
  private final HintedAttempts attempts;

  AmRmTokenVerifier(RMContext rmContext, HintedAttempts attempts) {
    this.rmContext = rmContext;
    this.attempts = attempts;
  }

  /**
   * Returns the attempt the token belongs to, or 401 when the token is missing, malformed, forged
   * or no longer valid (the attempt finished).
   */
  ApplicationAttemptId authenticate(String encoded) throws RestException {
    if (encoded == null || encoded.trim().isEmpty()) {
      throw new RestException(
          401,
          "missing "
              + HintsResource.TOKEN_HEADER
              + " header: send "
              + "the application attempt's AMRM token (Token.encodeToUrlString)");
    }
    if (encoded.length() > MAX_ENCODED_LENGTH) {
      throw new RestException(
          401, "malformed AMRM token: longer than " + MAX_ENCODED_LENGTH + " characters");
    }
    Token<AMRMTokenIdentifier> token = new Token<AMRMTokenIdentifier>();
    AMRMTokenIdentifier identifier = new AMRMTokenIdentifier();
    try {
      token.decodeFromUrlString(encoded.trim());
      if (!AMRMTokenIdentifier.KIND_NAME.equals(token.getKind())) {
        throw new RestException(
            401,
            "token of kind '"
                + token.getKind()
                + "' is not an AMRM"
                + " token ("
                + AMRMTokenIdentifier.KIND_NAME
                + ")");
      }
      identifier.readFields(new DataInputStream(new ByteArrayInputStream(token.getIdentifier())));
    } catch (IOException e) {
      throw new RestException(401, "malformed AMRM token");
    } catch (RuntimeException e) {
      // Base64 and protobuf decoding throw unchecked exceptions on garbage.
      throw new RestException(401, "malformed AMRM token");
    }
    ApplicationAttemptId attempt = identifier.getApplicationAttemptId();
    if (attempt == null) {
      throw new RestException(401, "malformed AMRM token: no application attempt");
    }
    byte[] expected;
    try {
      // Also refuses attempts that have finished: the secret manager forgets them.
      expected = rmContext.getAMRMTokenSecretManager().retrievePassword(identifier);
    } catch (InvalidToken e) {
      throw new RestException(401, "invalid AMRM token: " + e.getMessage());
    }
    if (expected == null || !MessageDigest.isEqual(expected, token.getPassword())) {
      throw new RestException(401, "invalid AMRM token for " + attempt);
    }
    return attempt;
  }

  /** 403 unless {@code attempt}, authenticated, is the current attempt of {@code appId}. */
  void authorize(ApplicationAttemptId attempt, ApplicationId appId) throws RestException {
    if (!attempt.getApplicationId().equals(appId)) {
      throw new RestException(
          403, "the AMRM token of " + attempt + " may not set hints for " + appId);
    }
    if (!attempts.isCurrent(attempt)) {
      throw new RestException(403, attempt + " is not the current attempt of " + appId);
    }
  }
}
