package org.tidal.yarn.bridge;

/**
 * The Rust core's scheduler instance behind one {@code TidalScheduler}: its handle, the clock the
 * core is driven by, and the pump that forwards the core's log records to the RM log.
 */
public final class CoreInstance {
  private final NativeLogPump logPump = new NativeLogPump();

  /**
   * The core's clock is milliseconds since this instance's scheduler was created, read from a
   * monotonic source. BoPF lays burst windows out in a profile that is dense from its epoch and
   * bounded in length, so epoch-based wall-clock times would put every burst beyond it; a monotonic
   * clock also keeps burst and share accounting right across wall-clock steps.
   */
  private volatile long clockOriginNanos = System.nanoTime();

  private volatile long clockOriginWallMs = System.currentTimeMillis();

  /** 0 before {@link #create} and after {@link #detach}: native calls then fail, none crash. */
  private volatile long handle;

  /** Creates the native instance; the core's records of a refusal reach the log first. */
  public void create(String allocationXml, long[] settings) {
    try {
      handle = created(TidalNative.create(allocationXml, settings));
    } catch (TidalException e) {
      NativeLogPump.drain();
      throw e;
    }
  }

  /**
   * {@code handle}, which is never 0 for an instance: 0 is what a failed call returns, and the
   * bridge raises an exception with it unless even that failed.
   */
  static long created(long handle) {
    if (handle == 0) {
      throw new TidalException(
          "the native library created no scheduler instance and raised no exception");
    }
    return handle;
  }

  public long handle() {
    return handle;
  }

  public void startLogPump() {
    logPump.start();
  }

  /** Takes the handle away from every later call; returns it for {@link #destroy}. */
  public long detach() {
    long old = handle;
    handle = 0;
    return old;
  }

  /**
   * Frees a detached instance and stops the log pump after its last records. Nothing native exists
   * when initialisation failed before the instance was created.
   */
  public void destroy(long detached) throws InterruptedException {
    if (detached != 0) {
      TidalNative.destroy(detached);
      logPump.stop();
    }
  }

  /**
   * Continues the clock of an earlier instance (before a restart) that started at {@code
   * originWallMs}: the time since then, as the wall clock tells it, is where this clock starts, and
   * the monotonic source counts on from there. Burst windows and usage integrals stored by the
   * earlier instance then stay on the same time line; the time the RM was down passes as time.
   */
  public void continueClock(long originWallMs) {
    long nowNanos = System.nanoTime();
    long elapsedMs = Math.max(0, System.currentTimeMillis() - originWallMs);
    clockOriginNanos = nowNanos - elapsedMs * 1000000L;
    clockOriginWallMs = originWallMs;
  }

  /** When the core's clock read 0, on the wall clock. */
  public long clockOriginWallMs() {
    return clockOriginWallMs;
  }

  /**
   * Replaces the instance by a new one made by {@code create}, and frees the old one (which may be
   * poisoned by a panic: the bridge still frees it).
   */
  public void replace(Runnable create) {
    long old = handle;
    create.run();
    if (old != 0 && old != handle) {
      TidalNative.destroy(old);
    }
  }

  /** Now on the core's clock. */
  public long nowMs() {
    return (System.nanoTime() - clockOriginNanos) / 1000000L;
  }

  /** A time of the core's clock as wall-clock milliseconds since 1970. */
  public long wallClockMs(long coreMs) {
    return clockOriginWallMs + coreMs;
  }
}
