package org.tidal.it;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdater;
import org.apache.hadoop.yarn.server.nodemanager.NodeStatusUpdaterImpl;

/**
 * Restarts a Hadoop 2.7.7 NodeManager's heartbeat thread when a resync with the RM ended it.
 *
 * <p>On every resync (an RM restart or failover, or a node that comes back after a partition),
 * 2.7.7's {@code NodeStatusUpdaterImpl.rebootNodeStatusUpdaterAndRegisterWithRM} registers again,
 * starts a new heartbeat thread and only then clears its {@code isStopped} flag. When the new
 * thread reaches its {@code while (!isStopped)} loop first, on a loaded machine, it ends at once:
 * the NodeManager keeps its containers but never heartbeats again, so the RM places nothing there
 * and marks it LOST after the liveness expiry, taking its containers (an AM's too) with it. This
 * happens with any scheduler; Hadoop 3 clears the flag before it starts the thread. The clusters
 * that restart RMs in these tests use this repair so that they test the scheduler, not the race.
 *
 * <p>Reflection, because every piece involved is private to Hadoop's class: the flag, the thread,
 * and (protected) the method that starts the thread.
 */
final class HeartbeatThreadRepair {

  /** A thread that lost the race ends within microseconds; a live one is waiting or in an RPC. */
  private static final long LOST_THREAD_JOIN_MS = 500;

  private static final long SETTLE_TIMEOUT_MS = 10_000;

  private HeartbeatThreadRepair() {}

  /**
   * Once the resync has finished (the flag is clear), starts the heartbeat thread again if it
   * ended. Returns whether it did; false also when the NodeManager is stopping.
   */
  static boolean restartIfEnded(NodeStatusUpdater updater, String node) {
    if (!(updater instanceof NodeStatusUpdaterImpl)) {
      return false;
    }
    try {
      Field stoppedField = NodeStatusUpdaterImpl.class.getDeclaredField("isStopped");
      Field threadField = NodeStatusUpdaterImpl.class.getDeclaredField("statusUpdater");
      stoppedField.setAccessible(true);
      threadField.setAccessible(true);
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_TIMEOUT_MS);
      while (stoppedField.getBoolean(updater)) {
        if (System.nanoTime() > deadline) {
          return false; // stopping, not resyncing
        }
        Thread.sleep(20);
      }
      Thread thread = (Thread) threadField.get(updater);
      thread.join(LOST_THREAD_JOIN_MS);
      if (thread.isAlive() || stoppedField.getBoolean(updater)) {
        return false;
      }
      Method start = NodeStatusUpdaterImpl.class.getDeclaredMethod("startStatusUpdater");
      start.setAccessible(true);
      start.invoke(updater);
      System.out.println(
          "== NodeManager "
              + node
              + ": the resync ended its heartbeat thread (Hadoop 2.7.7's start-before-clear"
              + " race); started it again");
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(
          "NodeStatusUpdaterImpl is not the Hadoop 2.7.7 class this repair was written for", e);
    }
  }
}
