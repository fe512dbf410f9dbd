package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.waitFor;
import static org.tidal.yarn.TidalTestSupport.write;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import java.util.Arrays;
import java.util.concurrent.Callable;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.MockNM;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.cli.TidalQueueCli;
import org.tidal.yarn.config.TidalConfig;

/** The queue CLI against a running MockRM's endpoint. */
public class TestTidalQueueCli {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private YarnConfiguration clientConf;

  /** What one CLI run printed and returned. */
  private static final class Run {
    int code;
    String out;
    String err;

    @Override
    public String toString() {
      return "exit " + code + "\nstdout:\n" + out + "\nstderr:\n" + err;
    }
  }

  @Before
  public void setUp() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, TestTidalRest.BOPF_QUEUES);
    MockRM rm = rms.start(conf(allocation));
    final MockNM nm = rm.registerNode("127.0.0.1:1234", 100 * 1024, 100);
    nm.nodeHeartbeat(true);
    int port = rms.scheduler().getRestAddress().getPort();
    // As on a cluster: the endpoint binds every address, clients find the RM's host.
    clientConf = new YarnConfiguration();
    clientConf.set(TidalConfig.REST_ADDRESS, "0.0.0.0:" + port);
    clientConf.set(YarnConfiguration.RM_HOSTNAME, "127.0.0.1");
    waitFor(
        "admission against the node's capacity",
        new Callable<Boolean>() {
          @Override
          public Boolean call() throws Exception {
            return !cli("alice", "-list").out.contains("provisional")
                && cli("alice", "-status", "etl").out.contains("safety condition");
          }
        });
  }

  private Run cli(String user, final String... args) throws Exception {
    final Run run = new Run();
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();
    UserGroupInformation.createRemoteUser(user)
        .doAs(
            new PrivilegedExceptionAction<Void>() {
              @Override
              public Void run() throws Exception {
                TidalQueueCli cli =
                    new TidalQueueCli(
                        new PrintStream(out, true, "UTF-8"), new PrintStream(err, true, "UTF-8"));
                cli.setConf(clientConf);
                run.code = cli.run(args);
                return null;
              }
            });
    run.out = new String(out.toByteArray(), StandardCharsets.UTF_8);
    run.err = new String(err.toByteArray(), StandardCharsets.UTF_8);
    return run;
  }

  @Test(timeout = 120000)
  public void registerListStatusAndUnregisterThroughTheCli() throws Exception {
    File xml = tmp.newFile("adhoc.xml");
    write(xml, TestTidalRest.ADHOC_LQ);

    Run register = cli("alice", "-register", xml.getPath());
    assertEquals(register.toString(), 0, register.code);
    assertTrue(
        register.toString(), register.out.contains("Queue root.adhoc registered: class hard"));
    assertTrue(register.toString(), register.out.contains("Reason: "));

    Run list = cli("bob", "-list");
    assertEquals(list.toString(), 0, list.code);
    assertTrue(list.out, list.out.startsWith("Policy: bopf, 1 nodes"));
    String adhocRow = null;
    for (String line : list.out.split("\n")) {
      if (line.startsWith("root.adhoc ")) {
        adhocRow = line;
      }
    }
    assertTrue(
        list.out,
        adhocRow != null
            && Arrays.asList(adhocRow.trim().split(" +"))
                .containsAll(Arrays.asList("lq", "hard", "alice", "idle")));

    Run status = cli("bob", "-status", "adhoc");
    assertEquals(status.toString(), 0, status.code);
    assertTrue(status.out, status.out.contains("Queue:             root.adhoc"));
    assertTrue(status.out, status.out.contains("Class:             hard"));
    assertTrue(status.out, status.out.contains("Guarantee:         20480 MB, 20 vcores"));
    assertTrue(
        status.out,
        status.out.contains("Burst consumed:    0 of 204800 MB-s, 0 of 200" + " vcore-s"));

    Run again = cli("alice", "-register", xml.getPath());
    assertEquals(again.toString(), 1, again.code);
    assertTrue(again.err, again.err.contains("HTTP 409") && again.err.contains("already exists"));

    Run bob = cli("bob", "-unregister", "adhoc");
    assertEquals(bob.toString(), 1, bob.code);
    assertTrue(
        bob.err,
        bob.err.contains("HTTP 403")
            && bob.err.contains("user 'bob' may not change queue 'root.adhoc'"));

    Run alice = cli("alice", "-unregister", "adhoc");
    assertEquals(alice.toString(), 0, alice.code);
    assertTrue(alice.out, alice.out.contains("Queue root.adhoc unregistered"));

    Run gone = cli("alice", "-status", "adhoc");
    assertEquals(1, gone.code);
    assertTrue(gone.err, gone.err.contains("HTTP 404") && gone.err.contains("unknown queue"));
  }

  @Test(timeout = 120000)
  public void errorsExitNonZeroWithTheReason() throws Exception {
    File bad = tmp.newFile("bad.xml");
    write(bad, "<queue name=\"x\"><colour>red</colour></queue>");
    Run invalid = cli("alice", "-register", bad.getPath());
    assertEquals(invalid.toString(), 1, invalid.code);
    assertTrue(invalid.err, invalid.err.contains("HTTP 400") && invalid.err.contains("colour"));

    Run missing = cli("alice", "-register", new File(tmp.getRoot(), "none.xml").getPath());
    assertEquals(1, missing.code);
    assertTrue(missing.err, missing.err.contains("cannot read"));

    assertEquals(2, cli("alice").code);
    assertEquals(2, cli("alice", "-status").code);
    assertEquals(2, cli("alice", "-frobnicate", "x").code);

    ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    int closedPort = socket.getLocalPort();
    socket.close();
    clientConf.set(TidalConfig.REST_ADDRESS, "127.0.0.1:" + closedPort);
    Run unreachable = cli("alice", "-list");
    assertEquals(1, unreachable.code);
    assertTrue(
        unreachable.err,
        unreachable.err.contains(
            "cannot reach the Tidal REST endpoint" + " at http://127.0.0.1:" + closedPort));
  }

  @Test
  public void endpointsFollowTheResourceManagerHosts() {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(TidalConfig.REST_ADDRESS, "0.0.0.0:9999");
    conf.set(YarnConfiguration.RM_HOSTNAME, "rm.example.com");
    assertEquals(Arrays.asList("http://rm.example.com:9999"), TidalQueueCli.endpoints(conf));

    conf.setBoolean(YarnConfiguration.RM_HA_ENABLED, true);
    conf.set(YarnConfiguration.RM_HA_IDS, "rm1,rm2");
    conf.set(YarnConfiguration.RM_HOSTNAME + ".rm1", "rm1.example.com");
    conf.set(YarnConfiguration.RM_HOSTNAME + ".rm2", "rm2.example.com");
    assertEquals(
        Arrays.asList("http://rm1.example.com:9999", "http://rm2.example.com:9999"),
        TidalQueueCli.endpoints(conf));

    conf.set(TidalConfig.REST_ADDRESS, "10.0.0.7:8089");
    assertEquals(Arrays.asList("http://10.0.0.7:8089"), TidalQueueCli.endpoints(conf));

    YarnConfiguration defaults = new YarnConfiguration();
    defaults.unset(YarnConfiguration.RM_HOSTNAME);
    assertEquals(
        Arrays.asList("http://localhost:" + TidalConfig.DEFAULT_REST_PORT),
        TidalQueueCli.endpoints(defaults));
  }
}
