package org.tidal.yarn.bridge;

import org.tidal.yarn.NativeSettings;

/**
 * Run in a child JVM by {@link TestTidalNativeErrors} on a class path without some of the Tidal
 * exception classes: prints, one line per native call that fails, the class and message of what
 * Java received. It names no exception class itself, so that it loads without them.
 */
public final class NativeErrorProbe {
  private static final long[] SETTINGS = NativeSettings.forTests();

  private NativeErrorProbe() {}

  public static void main(String[] args) {
    // Invalid XML: an error that carries no subject.
    report(() -> TidalNative.create("<tidal>", SETTINGS));
    long handle = TidalNative.create("<tidal><queue name=\"a\"/></tidal>", SETTINGS);
    // An unknown app: an error raised with its app key.
    report(() -> TidalNative.removeApp(handle, 4242));
    TidalNative.destroy(handle);
  }

  private static void report(Runnable call) {
    try {
      call.run();
      System.out.println("no exception");
    } catch (Throwable t) {
      System.out.println(t.getClass().getName() + ": " + t.getMessage());
    }
  }
}
