package org.tidal.it.slsbench;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.hadoop.yarn.sls.SLSRunner;

/**
 * Entry point of one benchmark SLS JVM: starts SLSRunner in this JVM with a probe beside it and
 * ends the JVM after the simulated time, so that a run lasts as long as asked whatever the trace's
 * backlog. Arguments: seconds to simulate, then SLSRunner's own. The probe samples the RM's
 * scheduler event dispatcher every {@link #SAMPLE_MS} ms (its queue length and its thread's CPU
 * time, the thread every scheduler event of either Hadoop line is handled on) and keeps the
 * ask-to-allocation latencies {@link ProbedMrAmSimulator} reports; it writes them to
 * probe-samples.csv and probe-allocations.csv in the working directory when the JVM ends. Times are
 * ms since SLS started simulating.
 */
public final class SlsProbe {
  static final int SAMPLE_MS = 200;

  static final String SAMPLES_FILE = "probe-samples.csv";
  static final String ALLOCATIONS_FILE = "probe-allocations.csv";

  /** The scheduler event dispatcher's thread: Hadoop 2.7's name, then Hadoop 3's. */
  private static final List<String> DISPATCHER_THREADS =
      List.of("ResourceManager Event Processor", "SchedulerEventDispatcher:Event Processor");

  /** One allocated container: when the AM got it, after how long, in which queue. */
  private record Allocation(long atMs, long latencyMs, String queue) {}

  /** One sample: the dispatcher's queue length and CPU times so far (-1 before the RM runs). */
  private record Sample(long atMs, int eventQueue, long schedCpuMs, long jvmCpuMs) {}

  private static final Queue<Allocation> ALLOCATIONS = new ConcurrentLinkedQueue<>();
  private static final Queue<Sample> SAMPLES = new ConcurrentLinkedQueue<>();

  private static final long ORIGIN_NANOS = System.nanoTime();

  /** When SLS started simulating, in {@link #nowMs}'s time; the files count from there. */
  private static volatile long simulationStartMs;

  private SlsProbe() {}

  static long nowMs() {
    return (System.nanoTime() - ORIGIN_NANOS) / 1_000_000;
  }

  /** An AM got a container {@code latencyMs} after asking for it (-1: no matching ask). */
  static void allocated(String queue, long latencyMs) {
    ALLOCATIONS.add(new Allocation(nowMs(), latencyMs, queue));
  }

  public static void main(String[] args) throws Exception {
    long simulateSeconds = Long.parseLong(args[0]);
    Path out = Paths.get("").toAbsolutePath();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> write(out)));
    Thread sampler = new Thread(SlsProbe::sample, "sls-probe");
    sampler.setDaemon(true);
    sampler.start();
    // Returns once SLS's nodes and AMs are set up and its task runner simulates.
    SLSRunner.main(Arrays.copyOfRange(args, 1, args.length));
    simulationStartMs = nowMs();
    Thread.sleep(simulateSeconds * 1000);
    System.exit(0);
  }

  private static void sample() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    Thread dispatcher = null;
    java.util.Collection<?> queue = null;
    while (true) {
      if (dispatcher == null) {
        dispatcher = findDispatcher();
        queue = dispatcher == null ? null : eventQueue(dispatcher);
      }
      long cpu = dispatcher == null ? -1 : threads.getThreadCpuTime(dispatcher.getId()) / 1_000_000;
      SAMPLES.add(
          new Sample(
              nowMs(), queue == null ? -1 : queue.size(), cpu, os.getProcessCpuTime() / 1_000_000));
      try {
        Thread.sleep(SAMPLE_MS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private static Thread findDispatcher() {
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (DISPATCHER_THREADS.contains(t.getName())) {
        return t;
      }
    }
    return null;
  }

  /**
   * The dispatcher's event queue: the thread runs an inner EventProcessor of the dispatcher
   * (ResourceManager.SchedulerEventDispatcher on 2.7, EventDispatcher on 3), whose {@code
   * eventQueue} neither line exposes. Null, and the queue column -1, if that ever changes.
   */
  private static java.util.Collection<?> eventQueue(Thread dispatcher) {
    try {
      Object processor = field(Thread.class, "target").get(dispatcher);
      for (Field f : processor.getClass().getDeclaredFields()) {
        if (f.getName().startsWith("this$")) {
          f.setAccessible(true);
          Object owner = f.get(processor);
          for (Class<?> c = owner.getClass(); c != null; c = c.getSuperclass()) {
            try {
              Field q = c.getDeclaredField("eventQueue");
              q.setAccessible(true);
              return (java.util.Collection<?>) q.get(owner);
            } catch (NoSuchFieldException e) {
              // try the superclass
            }
          }
        }
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      System.err.println("probe: cannot read the scheduler event queue: " + e);
    }
    return null;
  }

  private static Field field(Class<?> c, String name) throws NoSuchFieldException {
    Field f = c.getDeclaredField(name);
    f.setAccessible(true);
    return f;
  }

  private static void write(Path out) {
    try (PrintWriter s =
            new PrintWriter(
                Files.newBufferedWriter(out.resolve(SAMPLES_FILE), StandardCharsets.UTF_8));
        PrintWriter a =
            new PrintWriter(
                Files.newBufferedWriter(out.resolve(ALLOCATIONS_FILE), StandardCharsets.UTF_8))) {
      s.println("at_ms,event_queue,sched_cpu_ms,jvm_cpu_ms");
      for (Sample x : SAMPLES) {
        s.println(
            x.atMs()
                - simulationStartMs
                + ","
                + x.eventQueue()
                + ","
                + x.schedCpuMs()
                + ","
                + x.jvmCpuMs());
      }
      a.println("at_ms,latency_ms,queue");
      for (Allocation x : ALLOCATIONS) {
        a.println(x.atMs() - simulationStartMs + "," + x.latencyMs() + "," + x.queue());
      }
    } catch (IOException e) {
      System.err.println("probe: cannot write its files to " + out + ": " + e);
    }
  }
}
