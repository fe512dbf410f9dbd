package org.tidal.yarn.rest;

import java.util.LinkedHashMap;
import java.util.Map;

/** A refused REST request: the HTTP status, the message the caller gets, and reply headers. */
final class RestException extends Exception {
  private static final long serialVersionUID = 1L;

  final int status;
  final Map<String, String> headers = new LinkedHashMap<String, String>();

  RestException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** Adds a header to the refusal (a challenge, say); returns it. */
  RestException header(String name, String value) {
    headers.put(name, value);
    return this;
  }
}
