package org.tidal.yarn.io;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** Stream helpers shared by the shim, its CLI and the Tez plugin (no Hadoop dependency). */
public final class Streams {
  private Streams() {}

  /** Reads {@code in} to the end as UTF-8 and closes it. */
  public static String readUtf8(InputStream in) throws IOException {
    return new String(readAll(in), StandardCharsets.UTF_8);
  }

  /** Reads {@code in} to the end and closes it. */
  public static byte[] readAll(InputStream in) throws IOException {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      int n;
      while ((n = in.read(buffer)) > 0) {
        out.write(buffer, 0, n);
      }
      return out.toByteArray();
    } finally {
      in.close();
    }
  }
}
