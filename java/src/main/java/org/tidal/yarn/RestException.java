package org.tidal.yarn;

/** A refused REST request: the HTTP status and the message the caller gets. */
final class RestException extends Exception {
  private static final long serialVersionUID = 1L;

  final int status;

  RestException(int status, String message) {
    super(message);
    this.status = status;
  }
}
