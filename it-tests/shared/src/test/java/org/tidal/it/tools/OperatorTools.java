package org.tidal.it.tools;

import static org.junit.Assert.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.yarn.client.cli.QueueCLI;

/** What an operator's tools answer, the same way on both Hadoop lines. */
public final class OperatorTools {
  private OperatorTools() {}

  /**
   * What {@code yarn queue -status <queue>} prints, through Hadoop's own QueueCLI, configured by
   * the caller to reach the cluster (Hadoop 2.7 takes a client, Hadoop 3 makes its own from its
   * conf).
   */
  public static String queueStatus(QueueCLI cli, String queue) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream print = new PrintStream(out, true, "UTF-8");
    cli.setSysOutPrintStream(print);
    cli.setSysErrPrintStream(print);
    int code = cli.run(new String[] {"-status", queue});
    String text = out.toString(StandardCharsets.UTF_8);
    assertEquals("yarn queue -status " + queue + ":\n" + text, 0, code);
    return text;
  }

  /** The body of a GET of {@code url} asking for JSON; fails unless it answers 200. */
  public static String get(String url) throws IOException {
    HttpURLConnection http = (HttpURLConnection) new URL(url).openConnection();
    http.setRequestProperty("Accept", "application/json");
    http.setConnectTimeout(10_000);
    http.setReadTimeout(30_000);
    int code = http.getResponseCode();
    String body;
    try (InputStream in = code >= 400 ? http.getErrorStream() : http.getInputStream()) {
      body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertEquals(url + " answered " + code + ": " + body, 200, code);
    return body;
  }
}
