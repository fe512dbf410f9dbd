package org.tidal.yarn.state;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.FileSystemRMStateStore;
import org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore;

/**
 * Where Tidal keeps what YARN's own state store has no place for (queues registered at run time,
 * BoPF's admission classes, burst phases and long-term usage), beside the RM's state and as durable
 * as it: a directory on a Hadoop file system ({@value #URI}, or {@code tidal} under a {@link
 * FileSystemRMStateStore}'s directory), or znodes on the ensemble of a {@link ZKRMStateStore}.
 *
 * <p>Each save writes a new blob, {@code state-<epoch>.<sequence>.json}, whole, and only then
 * removes the ones before it; so whenever the RM stops, one complete blob holds the latest saved
 * state. The epoch is the RM's, which YARN's state store raises on every start and failover with
 * work-preserving recovery. An RM starts from the newest state of an epoch not above its own and
 * refuses to save once a newer epoch has saved: an RM that lost its role is fenced, as YARN's own
 * store fences it, and can at most add to its own older epoch, which nobody reads again.
 */
public final class TidalStateStore {
  /** Directory URI of the store (any Hadoop file system). */
  public static final String URI = "tidal.state-store.uri";

  /** A stored state is a few kilobytes per queue; this only bounds what a bad blob can cost. */
  static final int MAX_STATE_BYTES = 64 * 1024 * 1024;

  private static final Log LOG = LogFactory.getLog(TidalStateStore.class);
  private static final String PREFIX = "state-";
  private static final String SUFFIX = ".json";

  private final StateStorage storage;

  /**
   * Whether the epochs come from the RM's own state store (recovery is on). An RM store starts with
   * epoch 0 once, when it is new: after {@code yarn resourcemanager -format-state-store} deleted
   * it, Tidal's blobs beside it belong to the deleted store.
   */
  private final boolean epochsFromRmStore;

  /** Sequence number of this RM's latest blob in its epoch. */
  private long sequence;

  TidalStateStore(StateStorage storage, boolean epochsFromRmStore) {
    this.storage = storage;
    this.epochsFromRmStore = epochsFromRmStore;
  }

  /**
   * The store the configuration names, or null when it names none: {@value #URI}, else beside the
   * RM's own state store when recovery uses the file-system or the ZooKeeper one.
   */
  static TidalStateStore open(Configuration conf) throws IOException {
    String uri = conf.getTrimmed(URI, "");
    boolean recovery =
        conf.getBoolean(
            YarnConfiguration.RECOVERY_ENABLED, YarnConfiguration.DEFAULT_RM_RECOVERY_ENABLED);
    if (!uri.isEmpty()) {
      return new TidalStateStore(new FileSystemStateStorage(uri, conf), recovery);
    }
    if (!recovery) {
      return null;
    }
    String rmStore = conf.get(YarnConfiguration.RM_STORE, "");
    if (FileSystemRMStateStore.class.getName().equals(rmStore)) {
      String rmDir = conf.getTrimmed(YarnConfiguration.FS_RM_STATE_STORE_URI, "");
      if (!rmDir.isEmpty()) {
        return new TidalStateStore(
            new FileSystemStateStorage(new Path(rmDir, "tidal").toString(), conf), true);
      }
    }
    if (ZKRMStateStore.class.getName().equals(rmStore)) {
      return new TidalStateStore(new ZooKeeperStateStorage(conf), true);
    }
    return null;
  }

  /** Where the store is, for logs. */
  String location() {
    return storage.location();
  }

  /**
   * The newest state of an epoch not above {@code epoch}, or null when there is none. The first RM
   * on a new (or formatted) RM store, epoch 0, deletes what an earlier store left and starts
   * afresh, as the RM's own state does.
   */
  String load(long epoch) throws IOException {
    if (epochsFromRmStore && epoch == 0) {
      int stale = 0;
      for (String name : storage.names()) {
        if (versionOf(name) != null) {
          storage.delete(name);
          stale++;
        }
      }
      if (stale > 0) {
        LOG.warn(
            "The ResourceManager's state store is new (epoch 0), formatted since Tidal last saved:"
                + " deleted "
                + stale
                + " Tidal state file(s) of the earlier store in "
                + location());
      }
      return null;
    }
    String newest = null;
    long[] best = {-1, -1};
    for (String name : storage.names()) {
      long[] version = versionOf(name);
      if (version != null && version[0] <= epoch && newer(version, best)) {
        best = version;
        newest = name;
      }
    }
    if (newest == null) {
      return null;
    }
    byte[] bytes = storage.read(newest, MAX_STATE_BYTES);
    sequence = epoch == best[0] ? best[1] : 0;
    LOG.info("Loaded Tidal state of epoch " + best[0] + " from " + location() + "/" + newest);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /**
   * Stores {@code json} as the newest state of {@code epoch}, then removes the older blobs. Refuses
   * when a newer RM has saved: this one is fenced.
   */
  synchronized void save(long epoch, String json) throws IOException {
    for (String name : storage.names()) {
      long[] version = versionOf(name);
      if (version != null && version[0] > epoch) {
        throw new IOException(
            "fenced: a ResourceManager of epoch "
                + version[0]
                + " owns the Tidal state in "
                + location()
                + "; this one has epoch "
                + epoch);
      }
    }
    sequence++;
    storage.create(PREFIX + epoch + "." + sequence + SUFFIX, json.getBytes(StandardCharsets.UTF_8));
    long[] saved = {epoch, sequence};
    for (String name : storage.names()) {
      long[] version = versionOf(name);
      if (version != null && newer(saved, version)) {
        storage.delete(name);
      }
    }
  }

  void close() throws IOException {
    storage.close();
  }

  private static boolean newer(long[] a, long[] b) {
    return a[0] != b[0] ? a[0] > b[0] : a[1] > b[1];
  }

  /** The epoch and sequence number a state blob's name carries, or null for other names. */
  static long[] versionOf(String name) {
    if (!name.startsWith(PREFIX) || !name.endsWith(SUFFIX)) {
      return null;
    }
    String[] parts = name.substring(PREFIX.length(), name.length() - SUFFIX.length()).split("\\.");
    if (parts.length != 2) {
      return null;
    }
    try {
      long[] version = {Long.parseLong(parts[0]), Long.parseLong(parts[1])};
      return version[0] < 0 || version[1] < 0 ? null : version;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
