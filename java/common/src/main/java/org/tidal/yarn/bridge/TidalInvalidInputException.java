package org.tidal.yarn.bridge;

/** Malformed or out-of-range input the core refused: a queue file, an ask, DAG hints, settings. */
public class TidalInvalidInputException extends TidalException {
  private static final long serialVersionUID = 1L;

  public TidalInvalidInputException(String message) {
    super(message);
  }

  /** Raised by the bridge with what the error is about; see {@link TidalException}. */
  TidalInvalidInputException(String message, long appKey, int nodeId, String queue, String field) {
    super(message, appKey, nodeId, queue, field);
  }
}
