package org.tidal.replay;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import org.junit.Test;

/** A replayed task's payload and its hold: asleep, or burning CPU. */
public class TestHoldProcessor {
  @Test
  public void thePayloadCarriesTheModeAndEveryTasksDuration() {
    ByteBuffer b =
        HoldProcessor.descriptor(true, 64, 2, new long[] {5, 7}).getUserPayload().getPayload();
    assertEquals(1, b.get(0));
    assertEquals(64, b.getInt(1));
    assertEquals(2, b.getInt(5));
    assertEquals(5, b.getLong(9));
    assertEquals(7, b.getLong(17));
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  @Test
  public void aTaskHoldsForItsDurationAndBurnsWhenAsked() throws Exception {
    long cpu0 = processCpuNanos();
    long t0 = System.nanoTime();
    HoldProcessor.hold(false, 0, 1, 400);
    long sleptWall = System.nanoTime() - t0;
    long sleptCpu = processCpuNanos() - cpu0;
    assertTrue("slept " + sleptWall / 1e6 + " ms", sleptWall >= 400_000_000L);

    cpu0 = processCpuNanos();
    t0 = System.nanoTime();
    HoldProcessor.hold(true, 8, 1, 400);
    long burntWall = System.nanoTime() - t0;
    long burntCpu = processCpuNanos() - cpu0;
    assertTrue("burnt for " + burntWall / 1e6 + " ms", burntWall >= 400_000_000L);
    // A spinning thread is always runnable, a sleeping one never: even on a machine loaded many
    // times over (this one's load average reaches 30 on 2 cores) it gets some CPU.
    assertTrue(
        "burning used " + burntCpu / 1e6 + " ms of CPU, sleeping " + sleptCpu / 1e6,
        burntCpu >= sleptCpu + 5_000_000L);
  }
}
