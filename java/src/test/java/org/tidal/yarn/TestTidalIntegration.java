package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.tidal.yarn.TidalTestSupport.QUEUES_AB;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.File;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** Start-up, configuration, logging and web UI behaviour of the scheduler inside an RM. */
public class TestTidalIntegration {
  @Rule
  public TemporaryFolder tmp = new TemporaryFolder();

  private MockRM rm;

  @Before
  public void setUp() {
    QueueMetrics.clearQueueMetrics();
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  @After
  public void tearDown() {
    if (rm != null) {
      rm.stop();
    }
  }

  @Test(timeout = 120000)
  public void schedulerPagesOfTheWebUiRender() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, QUEUES_AB);
    YarnConfiguration conf = conf(allocation);
    conf.setBoolean("mockrm.webapp.enabled", true);
    int port = freePort();
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, "127.0.0.1:" + port);
    rm = new MockRM(conf);
    rm.start();
    MockNM nm = rm.registerNode("127.0.0.1:1234", 8192, 8);
    MockRM.launchAndRegisterAM(rm.submitApp(1024, "web", "alice", null, "a"), rm, nm);

    String base = "http://127.0.0.1:" + port;
    String page = get(base + "/cluster/scheduler");
    assertTrue(page, page.contains("root"));
    String overview = get(base + "/cluster");
    assertTrue(overview.contains("Scheduler Metrics"));
    String rest = get(base + "/ws/v1/cluster/scheduler");
    assertTrue(rest, rest.contains("\"minQueueMemoryCapacity\":1024"));
    assertTrue(rest, rest.contains("\"numNodes\":1"));
  }

  @Test(timeout = 120000)
  public void defaultAllocationFileComesFromTheClasspathAndNativeLogsReachLog4j()
      throws Exception {
    final List<String> nativeMessages = Collections.synchronizedList(new ArrayList<String>());
    AppenderSkeleton appender = new AppenderSkeleton() {
      @Override
      protected void append(LoggingEvent event) {
        nativeMessages.add(event.getLoggerName() + " " + event.getLevel() + " "
            + event.getRenderedMessage());
      }

      @Override
      public void close() {}

      @Override
      public boolean requiresLayout() {
        return false;
      }
    };
    Logger nativeLogger = Logger.getLogger("tidal.native");
    nativeLogger.addAppender(appender);
    try {
      rm = new MockRM(conf(null));
      rm.start();
      TidalScheduler scheduler = (TidalScheduler) rm.getResourceScheduler();
      assertEquals("root.classpath", scheduler.getQueueInfo("classpath", false, false)
          .getQueueName());
      waitFor("the core's start-up record in log4j", new Callable<Boolean>() {
        @Override
        public Boolean call() {
          synchronized (nativeMessages) {
            for (String message : nativeMessages) {
              if (message.startsWith(NativeLogPump.LOGGER_PREFIX)
                  && message.contains(" INFO ") && message.contains("scheduler created")) {
                return true;
              }
            }
            return false;
          }
        }
      });
    } finally {
      nativeLogger.removeAppender(appender);
    }
  }

  @Test(timeout = 60000)
  public void invalidAllocationFileStopsStartupWithTheCoreMessage() throws Exception {
    File allocation = tmp.newFile("broken.xml");
    write(allocation, "<tidal><policy>drf</policy><queue name=\"a\"><weight>x</weight></queue>"
        + "</tidal>");
    try {
      rm = new MockRM(conf(allocation));
      fail("an invalid allocation file must stop the scheduler from starting");
    } catch (Exception e) {
      String message = String.valueOf(e.getMessage());
      assertTrue(message, message.contains("Invalid Tidal queue allocation file"));
      assertTrue(message, message.contains(allocation.getPath()));
    }
    File missing = new File(tmp.getRoot(), "missing.xml");
    try {
      rm = new MockRM(conf(missing));
      fail("a missing allocation file must stop the scheduler from starting");
    } catch (Exception e) {
      assertTrue(e.getMessage(), e.getMessage().contains(missing.getPath()));
    }
    rm = null;
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
    Process process = new ProcessBuilder(java.getPath(), property, "-cp",
        System.getProperty("java.class.path"), NativeLoaderProbe.class.getName())
        .redirectErrorStream(true).start();
    String out = Streams.readUtf8(process.getInputStream()).trim();
    assertEquals(out, 0, process.waitFor());
    return out;
  }

  private static int freePort() throws Exception {
    ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
    try {
      return socket.getLocalPort();
    } finally {
      socket.close();
    }
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
