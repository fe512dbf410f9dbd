package org.tidal.it;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

/**
 * A standalone ZooKeeper server on loopback in this JVM, from the ZooKeeper 3.4 jar Hadoop 2.7
 * already depends on: the store and the leader election of an HA ResourceManager pair.
 */
final class EmbeddedZooKeeper implements AutoCloseable {
  /** Short ticks allow short sessions (a session lasts 2 to 20 ticks). */
  private static final int TICK_MILLIS = 500;

  private final ServerCnxnFactory factory;

  private EmbeddedZooKeeper(ServerCnxnFactory factory) {
    this.factory = factory;
  }

  static EmbeddedZooKeeper start(File dataDir) throws IOException, InterruptedException {
    File snapshots = new File(dataDir, "snapshots");
    File log = new File(dataDir, "log");
    if (!snapshots.mkdirs() && !snapshots.isDirectory() || !log.mkdirs() && !log.isDirectory()) {
      throw new IOException("cannot create ZooKeeper directories under " + dataDir);
    }
    ZooKeeperServer server = new ZooKeeperServer(snapshots, log, TICK_MILLIS);
    ServerCnxnFactory factory =
        ServerCnxnFactory.createFactory(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 100);
    factory.startup(server);
    return new EmbeddedZooKeeper(factory);
  }

  /** host:port for yarn.resourcemanager.zk-address. */
  String connectString() {
    return InetAddress.getLoopbackAddress().getHostAddress() + ":" + factory.getLocalPort();
  }

  @Override
  public void close() {
    factory.shutdown();
  }
}
