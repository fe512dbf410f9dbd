package org.tidal.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for servers a test must name before they start (fixed RM addresses, a web port handed to a
 * child process).
 *
 * <p>A port the kernel hands out for port 0 lies in the ephemeral range, which every outgoing
 * connection and every server bound to port 0 draws from too: between choosing it and binding it (a
 * mini cluster starts NodeManagers and ZooKeeper clients first) another socket can take it, and the
 * bind fails with "Address already in use". Ports below the ephemeral range are only ever taken by
 * explicit binds, and this JVM never hands out the same one twice.
 */
final class FreePorts {
  private static final Path EPHEMERAL_RANGE = Paths.get("/proc/sys/net/ipv4/ip_local_port_range");
  private static final int LOWEST = 10_000;
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private FreePorts() {}

  /** A port below the ephemeral range that nothing on {@code host} listens on now. */
  static synchronized int belowEphemeral(String host) {
    InetAddress address;
    try {
      address = InetAddress.getByName(host);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot resolve " + host, e);
    }
    int end = ephemeralStart();
    int span = end - LOWEST;
    int start = ThreadLocalRandom.current().nextInt(span);
    for (int i = 0; i < span; i++) {
      int port = LOWEST + (start + i) % span;
      if (HANDED_OUT.contains(port)) {
        continue;
      }
      try (ServerSocket socket = new ServerSocket(port, 1, address)) {
        HANDED_OUT.add(port);
        return port;
      } catch (IOException taken) {
        // In use: try the next one.
      }
    }
    throw new IllegalStateException(
        "no free port on " + host + " between " + LOWEST + " and " + end);
  }

  /** The first ephemeral port; Linux's default when the range cannot be read. */
  private static int ephemeralStart() {
    try {
      String range = new String(Files.readAllBytes(EPHEMERAL_RANGE), StandardCharsets.US_ASCII);
      int first = Integer.parseInt(range.trim().split("\\s+")[0]);
      if (first > LOWEST + 1000) {
        return first;
      }
    } catch (IOException | RuntimeException unreadable) {
      // Not Linux, or an odd range: fall back below.
    }
    return 32_768;
  }
}
