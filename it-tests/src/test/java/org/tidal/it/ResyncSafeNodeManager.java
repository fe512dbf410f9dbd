package org.tidal.it;

import java.io.IOException;
import java.lang.reflect.Method;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.GenericOptionsParser;
import org.apache.hadoop.yarn.YarnUncaughtExceptionHandler;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.event.Dispatcher;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.NodeHealthCheckerService;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdater;
import org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdaterImpl;

/**
 * The NodeManager the namespace cluster runs: Hadoop 2.7.7's, except that a resync which ends its
 * heartbeat thread starts it again ({@link HeartbeatThreadRepair} says why). Run as the stock
 * NodeManager's main class is.
 */
public final class ResyncSafeNodeManager extends NodeManager {

  @Override
  protected NodeStatusUpdater createNodeStatusUpdater(
      Context context, Dispatcher dispatcher, NodeHealthCheckerService healthChecker) {
    return new NodeStatusUpdaterImpl(context, dispatcher, healthChecker, metrics) {
      @Override
      protected void rebootNodeStatusUpdaterAndRegisterWithRM() {
        super.rebootNodeStatusUpdaterAndRegisterWithRM();
        HeartbeatThreadRepair.restartIfEnded(this, String.valueOf(context.getNodeId()));
      }
    };
  }

  public static void main(String[] args) throws IOException {
    Thread.setDefaultUncaughtExceptionHandler(new YarnUncaughtExceptionHandler());
    Configuration conf = new YarnConfiguration();
    new GenericOptionsParser(conf, args);
    // The stock main's start-up (shutdown hook, exit on a SHUTDOWN from the RM) is private.
    try {
      Method start =
          NodeManager.class.getDeclaredMethod(
              "initAndStartNodeManager", Configuration.class, boolean.class);
      start.setAccessible(true);
      start.invoke(new ResyncSafeNodeManager(), conf, false);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("not the Hadoop 2.7.7 NodeManager", e);
    }
  }
}
