package org.tidal.yarn.replay;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * A tiny replay through each scheduler, so that the RM benchmark's harness keeps working: more is
 * asked than the cluster holds at once, so every application gets all it asked for only when the
 * completed containers fed back free their room.
 */
public class TestSchedulerReplay {
  private static final int APPS = 3;
  private static final int ASKS = 40;

  @Rule public TemporaryFolder dir = new TemporaryFolder();

  @Test
  public void tidalPlacesEveryAskedContainer() throws Exception {
    check(SchedulerReplay.Kind.TIDAL);
  }

  @Test
  public void fairSchedulerPlacesEveryAskedContainer() throws Exception {
    check(SchedulerReplay.Kind.FAIR);
  }

  @Test
  public void capacitySchedulerPlacesEveryAskedContainer() throws Exception {
    check(SchedulerReplay.Kind.CAPACITY);
  }

  private void check(SchedulerReplay.Kind kind) throws Exception {
    // 4 nodes of 16 vcores hold at most 64 of the 120 containers asked (some take 2 vcores).
    SchedulerReplay.Workload workload =
        new SchedulerReplay.Workload("smoke", 4, APPS, 2, ASKS, 0, 30, 2, false);
    SchedulerReplay.Result result = new SchedulerReplay(kind, workload, dir.getRoot()).run();
    for (int a = 0; a < APPS; a++) {
      assertEquals(kind + " app " + a, ASKS, result.containersPerApp[a]);
    }
    assertEquals(APPS * ASKS, result.containers);
    assertTrue(kind + " completed " + result.completed, result.completed >= APPS * ASKS - 64);
    assertEquals(30 * 4, result.nodeUpdateNanos.length);
    assertEquals(30 * APPS, result.allocateNanos.length);
  }
}
