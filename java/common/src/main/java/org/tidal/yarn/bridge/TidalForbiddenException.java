package org.tidal.yarn.bridge;

/** The caller may not do this, such as change a run-time queue someone else owns. */
public class TidalForbiddenException extends TidalException {
  private static final long serialVersionUID = 1L;

  public TidalForbiddenException(String message) {
    super(message);
  }
}
