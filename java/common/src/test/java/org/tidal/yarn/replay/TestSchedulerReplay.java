package org.tidal.yarn.replay;

import static org.junit.Assert.assertArrayEquals;
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

  /** The floor books on every heartbeat what Tidal booked on it, so the stream stays the same. */
  @Test
  public void floorBooksWhatTidalBooked() throws Exception {
    SchedulerReplay.Result tidal = check(SchedulerReplay.Kind.TIDAL);
    SchedulerReplay.Result floor = new SchedulerReplay(workload(), dir.getRoot(), tidal.plan).run();
    assertEquals(APPS * ASKS, tidal.plan.containers());
    assertArrayEquals(tidal.containersPerApp, floor.containersPerApp);
    assertArrayEquals(tidal.allocateContainers, floor.allocateContainers);
    assertEquals(tidal.completed, floor.completed);
  }

  @Test
  public void fairSchedulerPlacesEveryAskedContainer() throws Exception {
    check(SchedulerReplay.Kind.FAIR);
  }

  @Test
  public void capacitySchedulerPlacesEveryAskedContainer() throws Exception {
    check(SchedulerReplay.Kind.CAPACITY);
  }

  private static SchedulerReplay.Workload workload() {
    // 4 nodes of 16 vcores hold at most 64 of the 120 containers asked (some take 2 vcores).
    return new SchedulerReplay.Workload("smoke", 4, APPS, 2, ASKS, 0, 30, 2, false);
  }

  private SchedulerReplay.Result check(SchedulerReplay.Kind kind) throws Exception {
    SchedulerReplay.Result result = new SchedulerReplay(kind, workload(), dir.getRoot()).run();
    for (int a = 0; a < APPS; a++) {
      assertEquals(kind + " app " + a, ASKS, result.containersPerApp[a]);
    }
    assertEquals(APPS * ASKS, result.containers);
    assertTrue(kind + " completed " + result.completed, result.completed >= APPS * ASKS - 64);
    assertEquals(30 * 4, result.nodeUpdateNanos.length);
    assertEquals(30 * APPS, result.allocateNanos.length);
    return result;
  }
}
