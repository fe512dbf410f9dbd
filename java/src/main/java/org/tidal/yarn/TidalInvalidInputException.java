package org.tidal.yarn;

/** Malformed or out-of-range input the core refused: a queue file, an ask, DAG hints, settings. */
public class TidalInvalidInputException extends TidalException {
  private static final long serialVersionUID = 1L;

  public TidalInvalidInputException(String message) {
    super(message);
  }
}
