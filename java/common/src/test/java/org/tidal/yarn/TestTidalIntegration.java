package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.QUEUES_AB;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.freePort;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.bridge.NativeLoader;
import org.tidal.yarn.bridge.NativeLoaderProbe;
import org.tidal.yarn.bridge.NativeLogPump;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.io.Streams;
import org.tidal.yarn.view.SchedulerInfo;

/** Start-up, configuration, logging and web UI behaviour of the scheduler inside an RM. */
public class TestTidalIntegration {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  @Test(timeout = 120000)
  public void schedulerPagesOfTheWebUiRender() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, QUEUES_AB);
    YarnConfiguration conf = conf(allocation);
    conf.setBoolean("mockrm.webapp.enabled", true);
    int port = freePort();
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:" + port);
    MockRM rm = rms.start(conf);
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    MockRM.launchAndRegisterAM(
        RmLine.submit(
            rm,
            1024,
            "web",
            "alice",
            "a",
            false,
            YarnConfiguration.DEFAULT_RM_AM_MAX_ATTEMPTS,
            null,
            true,
            false),
        rm,
        nm);

    String base = "http://127.0.0.1:" + port;
    String page = get(base + "/cluster/scheduler");
    assertTrue(page, page.contains("root"));
    String overview = get(base + "/cluster");
    assertTrue(overview.contains("Scheduler Metrics"));
    JsonNode info =
        new ObjectMapper()
            .readTree(get(base + "/ws/v1/cluster/scheduler"))
            .path("scheduler")
            .path("schedulerInfo");
    assertEquals(info.toString(), 1, info.path("numNodes").intValue());
    if (RmLine.TIDAL_SERVES_SCHEDULER_REST) {
      assertEquals(info.toString(), SchedulerInfo.TYPE, info.path("type").textValue());
    } else {
      assertEquals(info.toString(), 1024, info.path("minQueueMemoryCapacity").intValue());
    }
  }

  @Test(timeout = 120000)
  public void defaultAllocationFileComesFromTheClasspathAndNativeLogsReachLog4j() throws Exception {
    NativeLogCapture nativeLog = new NativeLogCapture();
    try {
      rms.start(conf(null));
      TidalScheduler scheduler = rms.scheduler();
      assertEquals(
          "root.classpath", scheduler.getQueueInfo("classpath", false, false).getQueueName());
      nativeLog.await(
          "the core's start-up record in log4j",
          NativeLogPump.LOGGER_PREFIX,
          " INFO ",
          "scheduler created");
    } finally {
      nativeLog.close();
    }
  }

  @Test(timeout = 60000)
  public void invalidAllocationFileStopsStartupWithTheCoreMessage() throws Exception {
    File allocation = tmp.newFile("broken.xml");
    write(
        allocation,
        "<tidal><policy>drf</policy><queue name=\"a\"><weight>x</weight></queue></tidal>");
    try {
      new MockRM(conf(allocation));
      fail("an invalid allocation file must stop the scheduler from starting");
    } catch (Exception e) {
      // The scheduler's IOException names the file, around the core's refusal.
      IOException failure = ioCause(e);
      assertTrue(failure.getMessage(), failure.getMessage().contains(allocation.getPath()));
      assertTrue(String.valueOf(failure.getCause()), failure.getCause() instanceof TidalException);
    }
    File missing = new File(tmp.getRoot(), "missing.xml");
    try {
      new MockRM(conf(missing));
      fail("a missing allocation file must stop the scheduler from starting");
    } catch (Exception e) {
      IOException failure = ioCause(e);
      assertTrue(failure.getMessage(), failure.getMessage().contains(missing.getPath()));
    }
  }

  /** The IOException among the causes of a failed start-up. */
  private static IOException ioCause(Throwable e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof IOException) {
        return (IOException) cause;
      }
    }
    throw new AssertionError("no IOException among the causes of " + e, e);
  }

  @Test(timeout = 60000)
  public void missingNativeLibraryNamesWhereItLooked() throws Exception {
    String explicit = new File(tmp.getRoot(), "libnothere.so").getPath();
    String out = probe("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + explicit);
    assertTrue(out, out.startsWith("failed: "));
    assertTrue(out, out.contains(explicit) && out.contains(NativeLoader.LIBRARY_PROPERTY));

    String dir = tmp.newFolder("empty-lib-dir").getPath();
    out = probe("-Djava.library.path=" + dir);
    assertTrue(out, out.startsWith("failed: "));
    assertTrue(out, out.contains("libtidal_jni.so") && out.contains(dir));

    out = probe("-Djava.library.path=" + System.getProperty("java.library.path"));
    assertEquals("loaded", out);
  }

  private static String probe(String property) throws Exception {
    File java = new File(System.getProperty("java.home"), "bin/java");
    Process process =
        new ProcessBuilder(
                java.getPath(),
                property,
                "-cp",
                System.getProperty("java.class.path"),
                NativeLoaderProbe.class.getName())
            .redirectErrorStream(true)
            .start();
    String out = Streams.readUtf8(process.getInputStream()).trim();
    assertEquals(out, 0, process.waitFor());
    return out;
  }

  private static String get(String url) throws Exception {
    HttpURLConnection connection = (HttpURLConnection) new URL(url).openConnection();
    connection.setRequestProperty("Accept", "application/json, text/html");
    try {
      int status = connection.getResponseCode();
      if (status != 200) {
        InputStream error = connection.getErrorStream();
        fail(url + " answered " + status + ": " + (error == null ? "" : Streams.readUtf8(error)));
      }
      return Streams.readUtf8(connection.getInputStream());
    } finally {
      connection.disconnect();
    }
  }
}
