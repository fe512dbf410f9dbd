package org.tidal.yarn.bridge;

/** A valid request that clashes with existing state, such as a queue name already in use. */
public class TidalConflictException extends TidalException {
  private static final long serialVersionUID = 1L;

  public TidalConflictException(String message) {
    super(message);
  }

  /** Raised by the bridge with what the error is about; see {@link TidalException}. */
  TidalConflictException(String message, long appKey, int nodeId, String queue, String field) {
    super(message, appKey, nodeId, queue, field);
  }
}
