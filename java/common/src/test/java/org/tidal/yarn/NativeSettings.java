package org.tidal.yarn;

import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.WireLayout;

/** The settings array tests create native instances with, laid out by {@link TidalNative}. */
public final class NativeSettings {
  private NativeSettings() {}

  /**
   * YARN's default allocation limits (1024 MB and 1 vcore to 8192 MB and 8 vcores), up to 10
   * containers per heartbeat, no fault injection, no reservations and no default AM share.
   */
  public static long[] forTests() {
    long[] settings = new long[WireLayout.SETTINGS_LEN];
    settings[WireLayout.SET_MIN_MEMORY_MB] = 1024;
    settings[WireLayout.SET_MIN_VCORES] = 1;
    settings[WireLayout.SET_MAX_MEMORY_MB] = 8192;
    settings[WireLayout.SET_MAX_VCORES] = 8;
    settings[WireLayout.SET_MAX_ASSIGN_PER_HEARTBEAT] = 10;
    settings[WireLayout.SET_DEFAULT_MAX_AM_SHARE_PPM] = -1;
    return settings;
  }
}
