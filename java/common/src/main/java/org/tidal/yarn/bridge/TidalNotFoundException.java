package org.tidal.yarn.bridge;

/** A node, application, queue or scheduler handle the core does not know. */
public class TidalNotFoundException extends TidalException {
  private static final long serialVersionUID = 1L;

  public TidalNotFoundException(String message) {
    super(message);
  }

  /** Raised by the bridge with what the error is about; see {@link TidalException}. */
  TidalNotFoundException(String message, long appKey, int nodeId, String queue, String field) {
    super(message, appKey, nodeId, queue, field);
  }
}
