package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.tidal.yarn.TidalTestSupport.THREE_CLASSES;
import static org.tidal.yarn.TidalTestSupport.conf;
import static org.tidal.yarn.TidalTestSupport.startThreeClasses;
import static org.tidal.yarn.TidalTestSupport.write;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.yarn.api.records.QueueInfo;
import org.apache.hadoop.yarn.api.records.QueueState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.cli.QueueCLI;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.ClientRMService;
import org.apache.hadoop.yarn.server.resourcemanager.MockRM;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** Hadoop's own {@code yarn queue -status} against an RM running Tidal, over the client RPC. */
public class TestTidalYarnQueueCli {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  @Rule public final MockRmRule rms = new MockRmRule();

  private YarnClient client;
  private YarnConfiguration clientConf;

  /** A MockRM whose client service listens, as a real RM's does (MockRM's does not). */
  private static final class ListeningRm extends MockRM {
    ListeningRm(YarnConfiguration conf) {
      super(conf);
    }

    @Override
    protected ClientRMService createClientRMService() {
      return new ClientRMService(
          getRMContext(),
          scheduler,
          rmAppManager,
          applicationACLsManager,
          queueACLsManager,
          getRMContext().getRMDelegationTokenSecretManager());
    }
  }

  @Before
  public void setUp() throws Exception {
    File allocation = tmp.newFile("queues.xml");
    write(allocation, THREE_CLASSES);
    YarnConfiguration conf = conf(allocation);
    conf.set(YarnConfiguration.RM_ADDRESS, "127.0.0.1:0");
    MockRM rm = rms.start(conf, ListeningRm::new);
    startThreeClasses(rm);
    clientConf = new YarnConfiguration();
    clientConf.set(
        YarnConfiguration.RM_ADDRESS,
        "127.0.0.1:" + rm.getClientRMService().getBindAddress().getPort());
    client = YarnClient.createYarnClient();
    client.init(clientConf);
    client.start();
  }

  @After
  public void tearDown() {
    if (client != null) {
      client.stop();
    }
  }

  /** What {@code yarn queue -status <queue>} prints. */
  private String status(String queue) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    QueueCLI cli = new QueueCLI();
    // Hadoop 3's command makes its own client from its configuration.
    cli.setConf(clientConf);
    cli.setClient(client);
    cli.setSysOutPrintStream(new PrintStream(out, true, "UTF-8"));
    cli.setSysErrPrintStream(new PrintStream(out, true, "UTF-8"));
    assertEquals(0, cli.run(new String[] {"-status", queue}));
    return new String(out.toByteArray(), StandardCharsets.UTF_8);
  }

  /** A percentage as QueueCLI prints it. */
  private static String percent(double fraction) {
    return new DecimalFormat(RmLine.QUEUE_CLI_PERCENT).format(fraction * 100) + "%";
  }

  @Test(timeout = 120000)
  public void queueStatusShowsGuaranteesSharesAndRejection() throws Exception {
    String lq = status("lq");
    assertTrue(lq, lq.contains("Queue Name : root.lq"));
    assertTrue(lq, lq.contains("\tState : RUNNING"));
    // A Hard LQ's capacity is its guaranteed rate: 80 of 100 vcores.
    assertTrue(lq, lq.contains("\tCapacity : " + percent(0.8)));
    assertTrue(lq, lq.contains("\tCurrent Capacity : " + percent(0)));
    assertTrue(lq, lq.contains("\tMaximum Capacity : " + percent(1)));

    // A TQ's capacity is its fair share, as the core reports it now.
    JsonNode status = new ObjectMapper().readTree(rms.scheduler().shim().statusJson());
    double etlFairShare = -1;
    for (JsonNode queue : status.path("queues")) {
      if ("root.etl".equals(queue.path("name").textValue())) {
        etlFairShare = queue.path("fair_share").doubleValue();
      }
    }
    assertTrue(status.toString(), etlFairShare > 0 && etlFairShare != 0.8);
    String etl = status("etl");
    assertTrue(etl, etl.contains("Queue Name : root.etl"));
    assertTrue(etl, etl.contains("\tState : RUNNING"));
    assertTrue(
        etl + " vs fair share " + etlFairShare,
        etl.contains("\tCapacity : " + percent(etlFairShare)));

    String late = status("late");
    assertTrue(late, late.contains("Queue Name : root.late"));
    assertTrue(late, late.contains("\tState : STOPPED"));

    // The tree, and no node labels anywhere (the RM would copy a default label into requests).
    List<String> children = new ArrayList<String>();
    for (QueueInfo child : client.getChildQueueInfos("root")) {
      children.add(child.getQueueName() + " " + child.getQueueState());
      assertNull(child.getDefaultNodeLabelExpression());
      assertTrue(
          child.getAccessibleNodeLabels() == null || child.getAccessibleNodeLabels().isEmpty());
    }
    assertEquals(
        Arrays.asList("root.lq RUNNING", "root.etl RUNNING", "root.late STOPPED"), children);
    QueueInfo root = client.getQueueInfo("root");
    assertEquals(QueueState.RUNNING, root.getQueueState());
    assertEquals(1.0f, root.getCapacity(), 1e-6f);
  }
}
