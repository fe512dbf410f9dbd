package org.tidal.it;

import java.util.ArrayList;
import java.util.List;

/**
 * Assertions collected over a whole run and reported together, so that one failed run names every
 * way it failed (a recovery that kills containers usually also loses attempts and queues).
 */
final class Checks {
  private final String subject;
  private final List<String> failures = new ArrayList<>();

  Checks(String subject) {
    this.subject = subject;
  }

  void check(boolean ok, String failure) {
    if (!ok) {
      failures.add(failure);
    }
  }

  /** Throws one AssertionError listing every failed check, if any failed. */
  void assertAllPassed() {
    if (failures.isEmpty()) {
      return;
    }
    StringBuilder message = new StringBuilder(subject).append(" failed ");
    message.append(failures.size()).append(failures.size() == 1 ? " check:" : " checks:");
    for (String f : failures) {
      message.append("\n  - ").append(f);
    }
    throw new AssertionError(message.toString());
  }
}
