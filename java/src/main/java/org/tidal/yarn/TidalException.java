package org.tidal.yarn;

/** An error reported by the Rust core: bad input, an unknown node or app, an invalid config. */
public class TidalException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public TidalException(String message) {
    super(message);
  }
}
