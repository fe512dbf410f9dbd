package org.tidal.yarn.bridge;

import java.io.File;

/**
 * Loads {@code libtidal_jni} once per JVM. The system property {@value #LIBRARY_PROPERTY}, a full
 * path to the shared library, wins when set; otherwise the library is looked up on {@code
 * java.library.path}. A library from another build than this jar is refused before any call into
 * it: its functions would read this jar's arguments as other types and crash the JVM.
 */
public final class NativeLoader {
  /** System property naming the shared library file to load instead of searching. */
  public static final String LIBRARY_PROPERTY = "tidal.native.library";

  /** Library name for {@link System#loadLibrary}. */
  public static final String LIBRARY_NAME = "tidal_jni";

  private static boolean loaded;

  private NativeLoader() {}

  /**
   * Loads the library if this JVM has not yet. Throws {@link UnsatisfiedLinkError} naming every
   * place that was searched when it cannot be found or loaded.
   */
  public static synchronized void load() {
    if (loaded) {
      return;
    }
    String explicit = System.getProperty(LIBRARY_PROPERTY);
    if (explicit != null && !explicit.trim().isEmpty()) {
      File file = new File(explicit.trim()).getAbsoluteFile();
      try {
        System.load(file.getPath());
      } catch (UnsatisfiedLinkError e) {
        throw linkError("cannot load " + file + " (from -D" + LIBRARY_PROPERTY + ")", e);
      }
    } else {
      try {
        System.loadLibrary(LIBRARY_NAME);
      } catch (UnsatisfiedLinkError e) {
        throw linkError(
            "cannot load "
                + System.mapLibraryName(LIBRARY_NAME)
                + " from java.library.path="
                + System.getProperty("java.library.path")
                + " (set -Djava.library.path=<dir> or -D"
                + LIBRARY_PROPERTY
                + "=<file>)",
            e);
      }
    }
    int found;
    try {
      found = bridgeVersion();
    } catch (UnsatisfiedLinkError older) {
      // Libraries before version 2 lack the call; those before 7 export it under the class's
      // name before the bridge package.
      found = 0;
    }
    if (found != WireLayout.BRIDGE_VERSION) {
      throw new UnsatisfiedLinkError(
          "Tidal native library: the library speaks "
              + (found == 0 ? "a bridge version before 7" : "bridge version " + found)
              + ", this jar version "
              + WireLayout.BRIDGE_VERSION
              + "; install the jar and the library of the same build");
    }
    loaded = true;
  }

  /**
   * The library's bridge version, which must equal this jar's {@link WireLayout#BRIDGE_VERSION};
   * libraries before version 2 lack it.
   */
  private static native int bridgeVersion();

  private static UnsatisfiedLinkError linkError(String message, UnsatisfiedLinkError cause) {
    UnsatisfiedLinkError error =
        new UnsatisfiedLinkError("Tidal native library: " + message + ": " + cause.getMessage());
    error.initCause(cause);
    return error;
  }
}
