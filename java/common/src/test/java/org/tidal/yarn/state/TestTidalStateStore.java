package org.tidal.yarn.state;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Tidal's state blobs, on a file system and on ZooKeeper: newest wins, a crash mid-save loses
 * nothing, newer epochs fence older.
 */
public class TestTidalStateStore {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private TidalStateStore open(File dir) throws IOException {
    Configuration conf = new Configuration(false);
    conf.set(TidalStateStore.URI, dir.toURI().toString());
    return TidalStateStore.open(conf);
  }

  @Test
  public void noStoreUnlessConfiguredOrBesideTheRmFileSystemStore() throws Exception {
    Configuration conf = new Configuration(false);
    assertNull(TidalStateStore.open(conf));
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, FileSystemRMStateStore.class.getName());
    File rmStore = tmp.newFolder("rm-store");
    conf.set(YarnConfiguration.FS_RM_STATE_STORE_URI, rmStore.toURI().toString());
    TidalStateStore store = TidalStateStore.open(conf);
    store.save(0, "{}");
    assertTrue(new File(rmStore, "tidal").isDirectory());
  }

  /**
   * {@code yarn resourcemanager -format-state-store} deletes the RM store, whose next RM starts at
   * epoch 0 again: Tidal's state of the earlier store is dropped with it instead of fencing every
   * save of the new one.
   */
  @Test
  public void aFormattedRmStoreStartsTidalsStateAfresh() throws Exception {
    Configuration conf = new Configuration(false);
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, FileSystemRMStateStore.class.getName());
    File rmStore = tmp.newFolder("rm-store");
    conf.set(YarnConfiguration.FS_RM_STATE_STORE_URI, rmStore.toURI().toString());
    TidalStateStore before = TidalStateStore.open(conf);
    before.save(4, "of the store before the format");
    assertEquals("of the store before the format", TidalStateStore.open(conf).load(5));
    // The format: the RM store's root goes, the next RM has epoch 0.
    TidalStateStore after = TidalStateStore.open(conf);
    assertNull(after.load(0));
    after.save(0, "new");
    assertEquals("new", TidalStateStore.open(conf).load(1));
    // Without recovery the epoch is always 0 and a configured store keeps its state.
    File dir = tmp.newFolder();
    open(dir).save(0, "kept");
    assertEquals("kept", open(dir).load(0));
  }

  @Test
  public void theNewestSaveOfAnEpochNotAboveOursIsLoaded() throws Exception {
    File dir = tmp.newFolder();
    TidalStateStore store = open(dir);
    assertNull(store.load(3));
    store.save(1, "one");
    store.save(1, "one again");
    assertEquals("one again", store.load(1));
    assertEquals("a later epoch starts from an earlier one's state", "one again", store.load(2));
    store.save(2, "two");
    assertEquals("two", store.load(2));
    assertEquals(1, dir.list((d, name) -> name.startsWith("state-")).length);
  }

  @Test
  public void aSaveCutShortLeavesTheLastCompleteState() throws Exception {
    File dir = tmp.newFolder();
    TidalStateStore store = open(dir);
    store.save(1, "complete");
    // What a crash between writing and renaming leaves behind.
    Files.write(
        new File(dir, ".state-1.2.json.tmp").toPath(), "{trunc".getBytes(StandardCharsets.UTF_8));
    assertEquals("complete", open(dir).load(1));
  }

  @Test
  public void aNewerRmFencesAnOlderOne() throws Exception {
    File dir = tmp.newFolder();
    assertFencing(open(dir), open(dir));
  }

  /** Two RMs on one store: the one of the newer epoch takes over and fences the other. */
  private static void assertFencing(TidalStateStore older, TidalStateStore newer)
      throws IOException {
    older.save(1, "old");
    assertEquals("old", newer.load(2));
    newer.save(2, "new");
    try {
      older.save(1, "stale");
      fail("an RM of an older epoch overwrote a newer one's state");
    } catch (IOException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().startsWith("fenced"));
    }
    assertEquals("new", older.load(5));
    assertEquals("the older epoch's state is gone", null, older.load(1));
  }

  @Test
  public void besideTheZooKeeperStoreTheSameRulesHold() throws Exception {
    File data = tmp.newFolder("zk");
    ZooKeeperServer server = new ZooKeeperServer(data, data, 2000);
    ServerCnxnFactory factory =
        ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", 0), 16);
    factory.startup(server);
    Configuration conf = new Configuration(false);
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, true);
    conf.set(YarnConfiguration.RM_STORE, ZKRMStateStore.class.getName());
    conf.set(YarnConfiguration.RM_ZK_ADDRESS, "127.0.0.1:" + factory.getLocalPort());
    TidalStateStore older = TidalStateStore.open(conf);
    TidalStateStore newer = TidalStateStore.open(conf);
    try {
      assertTrue(older.location(), older.location().startsWith("zookeeper:/rmstore/"));
      assertFencing(older, newer);
    } finally {
      older.close();
      newer.close();
      factory.shutdown();
    }
  }

  @Test
  public void onlyStateFilesCount() {
    assertEquals(3L, TidalStateStore.versionOf("state-3.7.json")[0]);
    assertNull(TidalStateStore.versionOf("state-3.json"));
    assertNull(TidalStateStore.versionOf("state--1.2.json"));
    assertNull(TidalStateStore.versionOf(".state-1.2.json.tmp"));
    assertNull(TidalStateStore.versionOf("other.json"));
  }
}
