package org.tidal.replay;

import java.nio.ByteBuffer;
import org.apache.tez.dag.api.ProcessorDescriptor;
import org.apache.tez.dag.api.UserPayload;
import org.apache.tez.runtime.api.LogicalInput;
import org.apache.tez.runtime.api.ProcessorContext;
import org.apache.tez.runtime.library.api.KeyValueReader;
import org.apache.tez.runtime.library.processor.SimpleProcessor;

/**
 * A replayed task: holds its container for its traced duration, sleeping or, when asked, keeping
 * its vcores busy and its memory touched. It drains its inputs (empty: nothing is shuffled, the
 * edges only order the vertices) and writes no output.
 *
 * <p>Payload: burn flag (1 byte), megabytes to touch (int), threads to spin (int), then one
 * duration in milliseconds (long) per task of the vertex, by task index.
 */
public final class HoldProcessor extends SimpleProcessor {
  public HoldProcessor(ProcessorContext context) {
    super(context);
  }

  static ProcessorDescriptor descriptor(boolean burn, int touchMb, int threads, long[] taskMs) {
    ByteBuffer b = ByteBuffer.allocate(9 + 8 * taskMs.length);
    b.put((byte) (burn ? 1 : 0)).putInt(touchMb).putInt(threads);
    for (long ms : taskMs) {
      b.putLong(ms);
    }
    b.flip();
    return ProcessorDescriptor.create(HoldProcessor.class.getName())
        .setUserPayload(UserPayload.create(b));
  }

  @Override
  public void run() throws Exception {
    for (LogicalInput input : getInputs().values()) {
      KeyValueReader reader = (KeyValueReader) input.getReader();
      while (reader.next()) {
        // Edges carry no records; reading them only completes the inputs.
      }
    }
    ByteBuffer b = getContext().getUserPayload().getPayload();
    boolean burn = b.get(0) == 1;
    int touchMb = b.getInt(1);
    int threads = b.getInt(5);
    long ms = b.getLong(9 + 8 * getContext().getTaskIndex());
    hold(burn, touchMb, threads, ms);
  }

  /**
   * Holds for {@code ms}: asleep, or with {@code threads} threads spinning and {@code touchMb}
   * megabytes allocated and written.
   */
  static void hold(boolean burn, int touchMb, int threads, long ms) throws InterruptedException {
    long end = System.nanoTime() + ms * 1_000_000L;
    if (!burn) {
      Thread.sleep(ms);
      return;
    }
    // Memory first, a page at a time, so the container's resident size is what it asked for.
    byte[][] held = new byte[touchMb][];
    for (int i = 0; i < touchMb; i++) {
      held[i] = new byte[1 << 20];
      for (int k = 0; k < held[i].length; k += 4096) {
        held[i][k] = 1;
      }
    }
    Thread[] spinners = new Thread[Math.max(1, threads)];
    for (int t = 0; t < spinners.length; t++) {
      spinners[t] = new Thread(() -> spinUntil(end));
      spinners[t].start();
    }
    for (Thread t : spinners) {
      t.join();
    }
    if (held.length > 0 && held[0][0] != 1) {
      throw new IllegalStateException("touched memory lost its contents");
    }
  }

  private static void spinUntil(long endNanos) {
    double x = 1;
    while (System.nanoTime() < endNanos) {
      for (int i = 0; i < 10_000; i++) {
        x = x * 1.0000001 + 1e-9;
      }
    }
    if (x < 0) {
      throw new IllegalStateException("unreachable: " + x);
    }
  }
}
