package org.tidal.yarn.bridge;

/** Run in a child JVM by the loader test: prints how loading the native library ended. */
public final class NativeLoaderProbe {
  private NativeLoaderProbe() {}

  public static void main(String[] args) {
    try {
      NativeLoader.load();
      System.out.println("loaded");
    } catch (UnsatisfiedLinkError e) {
      System.out.println("failed: " + e.getMessage());
    }
  }
}
