package org.tidal.yarn.rest;

import java.io.IOException;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;

/**
 * What the REST endpoint needs of the scheduler's application attempts: whether an attempt is
 * current, and passing an authenticated attempt's hints to the core. The scheduler's attempt
 * registry implements it, so that this package does not depend on the scheduler's.
 */
public interface HintedAttempts {
  /** Whether {@code attemptId} is its application's current attempt. */
  boolean isCurrent(ApplicationAttemptId attemptId);

  /**
   * Passes an ApplicationMaster's hints to the core for its attempt, which the caller has
   * authenticated. Returns the core's reply JSON; a refused document leaves the app scheduled as
   * before and surfaces as a TidalException with the core's message.
   */
  String setHints(ApplicationAttemptId attemptId, String hintsJson) throws IOException;
}
