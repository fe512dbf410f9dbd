package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.heartbeat;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.rest.TidalRestServer;

/**
 * The REST endpoint on loopback with 100 slow clients connected (silent, or stalled in the middle
 * of a request's headers or body) while normal clients list, register, read and remove queues:
 * every normal request must succeed, and the server must cut each slow socket once it has been idle
 * for the configured timeout. Prints the normal clients' latencies.
 */
public class TestTidalRestLoad {
  private static final int SLOW_CLIENTS = 100;
  private static final int NORMAL_CLIENTS = 8;
  private static final int ROUNDS = 10;
  private static final int IDLE_TIMEOUT_MS = 8000;

  /** How long after a slow client's last byte the test waits for the server to cut it. */
  private static final int CUT_WAIT_MS = IDLE_TIMEOUT_MS + 20000;

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  @Test(timeout = 180000)
  public void slowClientsAreCutWhileNormalClientsAreServed() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, TestTidalRest.BOPF_QUEUES);
    YarnConfiguration conf = conf(allocation);
    conf.setInt(TidalConfig.REST_IDLE_TIMEOUT_MS, IDLE_TIMEOUT_MS);
    MockRM rm = rms.start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 100 * 1024, 100);
    waitFor("the node to join", () -> rms.scheduler().getNumClusterNodes() == 1);
    heartbeat(rm, nm);
    int port = rms.scheduler().getRestAddress().getPort();
    String base = rms.restBase();

    List<SlowClient> slow = new ArrayList<SlowClient>();
    CountDownLatch stalled = new CountDownLatch(SLOW_CLIENTS);
    for (int i = 0; i < SLOW_CLIENTS; i++) {
      SlowClient client = new SlowClient(port, SlowClient.Kind.values()[i % 3], stalled);
      slow.add(client);
      client.start();
    }
    assertTrue("the slow clients connected and stalled", stalled.await(60, TimeUnit.SECONDS));

    List<NormalClient> normal = new ArrayList<NormalClient>();
    for (int i = 0; i < NORMAL_CLIENTS; i++) {
      NormalClient client = new NormalClient(base, i);
      normal.add(client);
      client.start();
    }
    List<Long> latencies = new ArrayList<Long>();
    List<String> failures = new ArrayList<String>();
    List<Long> finishes = new ArrayList<Long>();
    for (NormalClient client : normal) {
      client.join();
      latencies.addAll(client.latenciesNanos);
      finishes.addAll(client.finishNanos);
      if (client.failure != null) {
        failures.add(client.failure);
      }
    }
    for (SlowClient client : slow) {
      client.join();
    }

    long firstCut = Long.MAX_VALUE;
    List<String> notCut = new ArrayList<String>();
    List<String> cutEarly = new ArrayList<String>();
    List<String> answered = new ArrayList<String>();
    long minIdle = Long.MAX_VALUE;
    long maxIdle = 0;
    for (SlowClient client : slow) {
      if (client.cutNanos == 0) {
        notCut.add(client.describe());
        continue;
      }
      firstCut = Math.min(firstCut, client.cutNanos);
      long idleMs = TimeUnit.NANOSECONDS.toMillis(client.cutNanos - client.lastSentNanos);
      minIdle = Math.min(minIdle, idleMs);
      maxIdle = Math.max(maxIdle, idleMs);
      // Generous: the cut may come early only by the timer's granularity.
      if (idleMs < IDLE_TIMEOUT_MS / 2) {
        cutEarly.add(client.describe() + " after " + idleMs + " ms");
      }
      if (client.reply.startsWith("HTTP/1.1 2")) {
        answered.add(client.describe() + ": " + client.reply);
      }
    }
    int servedWhileAllSlowOpen = 0;
    for (long finish : finishes) {
      if (finish < firstCut) {
        servedWhileAllSlowOpen++;
      }
    }
    Collections.sort(latencies);
    System.out.println(
        String.format(
            Locale.ROOT,
            "REST load: %d slow clients (idle timeout %d ms), %d normal clients x %d rounds:"
                + " %d requests ok, %d served while every slow client was connected;"
                + " latency p50 %.1f ms, p99 %.1f ms, max %.1f ms;"
                + " %d slow clients cut after %d..%d ms idle, %d not cut",
            SLOW_CLIENTS,
            IDLE_TIMEOUT_MS,
            NORMAL_CLIENTS,
            ROUNDS,
            latencies.size(),
            servedWhileAllSlowOpen,
            percentileMs(latencies, 50),
            percentileMs(latencies, 99),
            percentileMs(latencies, 100),
            SLOW_CLIENTS - notCut.size(),
            minIdle == Long.MAX_VALUE ? 0 : minIdle,
            maxIdle,
            notCut.size()));

    assertEquals("normal requests that failed: " + failures, 0, failures.size());
    assertEquals(NORMAL_CLIENTS * ROUNDS * NormalClient.CALLS_PER_ROUND, latencies.size());
    assertTrue(
        "a normal request waited longer than the idle timeout",
        percentileMs(latencies, 100) < IDLE_TIMEOUT_MS);
    assertTrue(
        "no normal request was served while all slow clients were connected",
        servedWhileAllSlowOpen > 0);
    assertEquals(
        "slow clients the server never cut: " + new TreeSet<String>(notCut), 0, notCut.size());
    assertEquals("slow clients cut before the timeout: " + cutEarly, 0, cutEarly.size());
    assertEquals("stalled requests that were answered: " + answered, 0, answered.size());
    assertEquals(200, HttpCall.request("GET", base + "/queues").send().status);
  }

  private static double percentileMs(List<Long> sortedNanos, int percentile) {
    if (sortedNanos.isEmpty()) {
      return 0;
    }
    int index = (int) Math.ceil(percentile / 100.0 * sortedNanos.size()) - 1;
    return sortedNanos.get(Math.max(0, index)) / 1e6;
  }

  /**
   * A client that opens a socket, trickles part of a request (or nothing), then stays silent and
   * waits for the server to close the connection.
   */
  private static final class SlowClient extends Thread {
    /** What the client sends before it stalls. */
    enum Kind {
      SILENT(""),
      PARTIAL_HEADERS(
          "GET " + TidalRestServer.PREFIX + "/queues HTTP/1.1\r\nHost: localhost\r\nX-"),
      PARTIAL_BODY(
          "POST "
              + TidalRestServer.PREFIX
              + "/queues?user.name=slow HTTP/1.1\r\nHost: localhost\r\n"
              + "Content-Type: application/xml\r\nContent-Length: 1000\r\n\r\n<queue name=");

      final byte[] bytes;

      Kind(String text) {
        this.bytes = text.getBytes(StandardCharsets.US_ASCII);
      }
    }

    private static final int TRICKLE_BYTES = 5;
    private static final int TRICKLE_GAP_MS = 200;

    private final int port;
    private final Kind kind;
    private final CountDownLatch stalled;
    volatile long lastSentNanos;
    volatile long cutNanos;
    volatile String reply = "";
    volatile String error = "";

    SlowClient(int port, Kind kind, CountDownLatch stalled) {
      this.port = port;
      this.kind = kind;
      this.stalled = stalled;
      setDaemon(true);
    }

    String describe() {
      return kind + (error.isEmpty() ? "" : " (" + error + ")");
    }

    @Override
    public void run() {
      try (Socket socket = new Socket()) {
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10000);
        OutputStream out = socket.getOutputStream();
        // All but the last few bytes at once, those one at a time: slow, but each within the
        // timeout of the one before.
        int bulk = Math.max(0, kind.bytes.length - TRICKLE_BYTES);
        out.write(kind.bytes, 0, bulk);
        out.flush();
        lastSentNanos = System.nanoTime();
        for (int i = bulk; i < kind.bytes.length; i++) {
          Thread.sleep(TRICKLE_GAP_MS);
          out.write(kind.bytes[i]);
          out.flush();
          lastSentNanos = System.nanoTime();
        }
        stalled.countDown();
        socket.setSoTimeout(CUT_WAIT_MS);
        InputStream in = socket.getInputStream();
        StringBuilder received = new StringBuilder();
        byte[] buffer = new byte[4096];
        try {
          int n;
          while ((n = in.read(buffer)) >= 0) {
            received.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
          }
          cutNanos = System.nanoTime();
        } catch (SocketTimeoutException e) {
          error = "still open " + CUT_WAIT_MS + " ms after its last byte";
        } catch (IOException e) {
          // A reset is a cut too.
          cutNanos = System.nanoTime();
        }
        reply = received.toString();
      } catch (IOException | InterruptedException e) {
        error = e.toString();
        stalled.countDown();
      }
    }
  }

  /** A client that lists, registers, reads and removes its own queues, and times each call. */
  private static final class NormalClient extends Thread {
    static final int CALLS_PER_ROUND = 4;

    private final String base;
    private final int id;
    final List<Long> latenciesNanos = new ArrayList<Long>();
    final List<Long> finishNanos = new ArrayList<Long>();
    volatile String failure;

    NormalClient(String base, int id) {
      this.base = base;
      this.id = id;
      setDaemon(true);
    }

    @Override
    public void run() {
      try {
        for (int round = 0; round < ROUNDS; round++) {
          String queue = "load" + id + "x" + round;
          String xml = "<queue name=\"" + queue + "\"><weight>1</weight></queue>";
          expect(
              201,
              HttpCall.request("POST", base + "/queues?user.name=u" + id)
                  .body("application/xml", xml));
          expect(200, HttpCall.request("GET", base + "/queues/" + queue));
          expect(200, HttpCall.request("GET", base + "/queues"));
          expect(200, HttpCall.request("DELETE", base + "/queues/" + queue + "?user.name=u" + id));
        }
      } catch (Exception e) {
        failure = "client " + id + ": " + e;
      }
    }

    private void expect(int status, HttpCall.Builder request) throws IOException {
      long start = System.nanoTime();
      HttpCall call = request.send();
      long end = System.nanoTime();
      if (call.status != status) {
        throw new IOException("expected " + status + ", got " + call);
      }
      latenciesNanos.add(end - start);
      finishNanos.add(end);
    }
  }
}
