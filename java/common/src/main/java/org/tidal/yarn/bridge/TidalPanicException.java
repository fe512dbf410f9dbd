package org.tidal.yarn.bridge;

/**
 * A panic inside the Rust core, caught at the JNI boundary and turned into this exception so the
 * JVM keeps running. Other scheduler instances and the native library stay usable.
 */
public class TidalPanicException extends TidalException {
  private static final long serialVersionUID = 1L;

  public TidalPanicException(String message) {
    super(message);
  }
}
