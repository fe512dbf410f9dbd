package org.tidal.yarn;

/** A valid request that clashes with existing state, such as a queue name already in use. */
public class TidalConflictException extends TidalException {
  private static final long serialVersionUID = 1L;

  public TidalConflictException(String message) {
    super(message);
  }
}
