package org.tidal.yarn.state;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.AuthInfo;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.ZKUtil;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;

/**
 * Blobs as znodes under the ZooKeeper state store's parent path, on the ensemble, with the ACLs and
 * authentication the RM's own ZooKeeper state store uses. Creating a znode is atomic.
 */
final class ZooKeeperStateStorage implements StateStorage {
  private final CuratorFramework client;
  private final String path;
  private final List<ACL> acls;

  ZooKeeperStateStorage(Configuration conf) throws IOException {
    String address = conf.getTrimmed(YarnConfiguration.RM_ZK_ADDRESS);
    if (address == null || address.isEmpty()) {
      throw new IOException(YarnConfiguration.RM_ZK_ADDRESS + " is not set");
    }
    this.path =
        conf.get(
                YarnConfiguration.ZK_RM_STATE_STORE_PARENT_PATH,
                YarnConfiguration.DEFAULT_ZK_RM_STATE_STORE_PARENT_PATH)
            + "/TidalState";
    try {
      this.acls =
          ZKUtil.parseACLs(
              ZKUtil.resolveConfIndirection(
                  conf.get(YarnConfiguration.RM_ZK_ACL, YarnConfiguration.DEFAULT_RM_ZK_ACL)));
      CuratorFrameworkFactory.Builder builder =
          CuratorFrameworkFactory.builder()
              .connectString(address)
              .sessionTimeoutMs(
                  conf.getInt(
                      YarnConfiguration.RM_ZK_TIMEOUT_MS,
                      YarnConfiguration.DEFAULT_RM_ZK_TIMEOUT_MS))
              .retryPolicy(
                  new RetryNTimes(
                      conf.getInt(
                          YarnConfiguration.RM_ZK_NUM_RETRIES,
                          YarnConfiguration.DEFAULT_ZK_RM_NUM_RETRIES),
                      (int)
                          conf.getLong(
                              YarnConfiguration.RM_ZK_RETRY_INTERVAL_MS,
                              YarnConfiguration.DEFAULT_RM_ZK_RETRY_INTERVAL_MS)));
      String auth = ZKUtil.resolveConfIndirection(conf.get(YarnConfiguration.RM_ZK_AUTH));
      List<AuthInfo> auths = new ArrayList<AuthInfo>();
      for (ZKUtil.ZKAuthInfo info : ZKUtil.parseAuth(auth)) {
        auths.add(new AuthInfo(info.getScheme(), info.getAuth()));
      }
      builder.authorization(auths);
      client = builder.build();
      client.start();
      if (!client.blockUntilConnected(
          conf.getInt(
              YarnConfiguration.RM_ZK_TIMEOUT_MS, YarnConfiguration.DEFAULT_RM_ZK_TIMEOUT_MS),
          TimeUnit.MILLISECONDS)) {
        client.close();
        throw new IOException("cannot reach ZooKeeper at " + address);
      }
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("cannot connect to ZooKeeper at " + address + ": " + e, e);
    }
    try {
      client.create().creatingParentsIfNeeded().withACL(acls).forPath(path);
    } catch (KeeperException.NodeExistsException e) {
      // Made by an earlier start, or by the other RM.
    } catch (Exception e) {
      client.close();
      throw new IOException("cannot create the Tidal state znode " + path + ": " + e, e);
    }
  }

  @Override
  public void close() {
    client.close();
  }

  @Override
  public String location() {
    return "zookeeper:" + path;
  }

  @Override
  public List<String> names() throws IOException {
    try {
      return client.getChildren().forPath(path);
    } catch (Exception e) {
      throw new IOException("cannot list " + path + ": " + e, e);
    }
  }

  @Override
  public byte[] read(String name, int maxBytes) throws IOException {
    try {
      byte[] data = client.getData().forPath(path + "/" + name);
      if (data.length > maxBytes) {
        throw new IOException(
            path + "/" + name + " is " + data.length + " bytes, over " + maxBytes);
      }
      return data;
    } catch (IOException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("cannot read " + path + "/" + name + ": " + e, e);
    }
  }

  @Override
  public void create(String name, byte[] data) throws IOException {
    try {
      client.create().withACL(acls).forPath(path + "/" + name, data);
    } catch (Exception e) {
      throw new IOException("cannot write " + path + "/" + name + ": " + e, e);
    }
  }

  @Override
  public void delete(String name) throws IOException {
    try {
      client.delete().forPath(path + "/" + name);
    } catch (KeeperException.NoNodeException e) {
      // Deleted already, by this RM's previous save or another one.
    } catch (Exception e) {
      throw new IOException("cannot delete " + path + "/" + name + ": " + e, e);
    }
  }
}
