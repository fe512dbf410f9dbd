package org.tidal.yarn;

/** A node, application, queue or scheduler handle the core does not know. */
public class TidalNotFoundException extends TidalException {
  private static final long serialVersionUID = 1L;

  public TidalNotFoundException(String message) {
    super(message);
  }
}
