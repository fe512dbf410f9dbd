package org.tidal.yarn.bench;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.tidal.yarn.RmLine;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.WireLayout;

/**
 * Cost of one node heartbeat through JNI, as the scheduler's event thread pays it.
 *
 * <p>Run: {@code mvn -f java/pom.xml -Pbench verify} (add {@code -Dtidal.native.dir=<dir>} for
 * another .so).
 *
 * <ul>
 *   <li>nativeHeartbeat: TidalNative.nodeHeartbeat handing back the previous ten allocations and
 *       returning ten new decisions (steady state of a busy node) through the direct exchange
 *       buffer.
 *   <li>javaBaseline: the same Java-side work (id bookkeeping, ten decision records written to the
 *       same buffer in Java) without crossing into native code.
 * </ul>
 *
 * <p>main() runs both in a forked JVM and prints the difference of their sampled medians.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class HeartbeatJniBenchmark {
  static final int DECISIONS = 10;
  private static final String QUEUES =
      "<tidal><policy>drf</policy>" + "<queue name=\"a\"><weight>1</weight></queue></tidal>";
  private static final int NODE = 0;
  private static final long APP = 1;
  private static final int PRIORITY = 1;

  private long handle;
  private final ByteBuffer exchange =
      TidalNative.heartbeatBuffer(DECISIONS * WireLayout.DECISION_STRIDE);
  private final long[] completed = new long[DECISIONS];
  private long now;
  private long nextJavaId = 1;

  @Setup(Level.Trial)
  public void setUp() {
    long[] settings = new long[WireLayout.SETTINGS_LEN];
    settings[WireLayout.SET_MIN_MEMORY_MB] = 1024;
    settings[WireLayout.SET_MIN_VCORES] = 1;
    settings[WireLayout.SET_MAX_MEMORY_MB] = 8192;
    settings[WireLayout.SET_MAX_VCORES] = 32;
    settings[WireLayout.SET_MAX_ASSIGN_PER_HEARTBEAT] = DECISIONS;
    settings[WireLayout.SET_DEFAULT_MAX_AM_SHARE_PPM] = -1;
    handle = TidalNative.create(QUEUES, settings);
    // Room for exactly the ten containers in flight between two heartbeats, and more.
    TidalNative.addNode(handle, NODE, 1, 2, 16 * 1024, 16, 0, 0);
    TidalNative.addApp(handle, APP, "a", "bench");
    long[] ask = new long[WireLayout.ASK_STRIDE];
    ask[WireLayout.ASK_PRIORITY] = PRIORITY;
    ask[WireLayout.ASK_LOCATION] = WireLayout.ANY_LOCATION;
    ask[WireLayout.ASK_NUM_CONTAINERS] = Integer.MAX_VALUE;
    ask[WireLayout.ASK_RELAX_LOCALITY] = 1;
    ask[WireLayout.ASK_MEMORY_MB] = 1024;
    ask[WireLayout.ASK_VCORES] = 1;
    TidalNative.allocate(handle, APP, ask, null, null, null);
    int made = TidalNative.nodeHeartbeat(handle, NODE, ++now, exchange, 0, DECISIONS);
    check(made);
    collectIds();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    TidalNative.destroy(handle);
  }

  @Benchmark
  public int nativeHeartbeat() {
    putCompleted();
    int made = TidalNative.nodeHeartbeat(handle, NODE, ++now, exchange, DECISIONS, DECISIONS);
    check(made);
    collectIds();
    return made;
  }

  @Benchmark
  public int javaBaseline() {
    putCompleted();
    int made = javaHeartbeat();
    check(made);
    collectIds();
    return made;
  }

  /** Writes ten decision records the way the native side does, in plain Java. */
  private int javaHeartbeat() {
    for (int i = 0; i < DECISIONS; i++) {
      int offset = i * WireLayout.DECISION_STRIDE;
      put(offset + WireLayout.DEC_ALLOCATION_ID, nextJavaId++);
      put(offset + WireLayout.DEC_APP_KEY, APP);
      put(offset + WireLayout.DEC_PRIORITY, PRIORITY);
      put(offset + WireLayout.DEC_LOCALITY, WireLayout.LOCALITY_OFF_SWITCH);
      put(offset + WireLayout.DEC_MEMORY_MB, 1024);
      put(offset + WireLayout.DEC_VCORES, 1);
    }
    return DECISIONS;
  }

  private void put(int index, long value) {
    exchange.putLong(index * Long.BYTES, value);
  }

  /** The previous heartbeat's allocations, as the shim hands them in. */
  private void putCompleted() {
    for (int i = 0; i < DECISIONS; i++) {
      put(i, completed[i]);
    }
  }

  private void collectIds() {
    for (int i = 0; i < DECISIONS; i++) {
      int index = i * WireLayout.DECISION_STRIDE + WireLayout.DEC_ALLOCATION_ID;
      completed[i] = exchange.getLong(index * Long.BYTES);
    }
  }

  private static void check(int made) {
    if (made != DECISIONS) {
      throw new IllegalStateException("expected " + DECISIONS + " decisions, got " + made);
    }
  }

  public static void main(String[] args) throws Exception {
    Options options =
        new OptionsBuilder()
            .include(HeartbeatJniBenchmark.class.getName() + "\\.")
            .jvmArgsAppend("-Djava.library.path=" + System.getProperty("java.library.path"))
            .build();
    Collection<RunResult> results = new Runner(options).run();
    double nativeMedian = Double.NaN;
    double javaMedian = Double.NaN;
    for (RunResult result : results) {
      String name = result.getParams().getBenchmark();
      double median = result.getPrimaryResult().getStatistics().getPercentile(50.0);
      if (name.endsWith(".nativeHeartbeat")) {
        nativeMedian = median;
      } else if (name.endsWith(".javaBaseline")) {
        javaMedian = median;
      }
    }
    System.out.printf(
        "nodeHeartbeat with %d decisions: median %.0f ns; Java baseline median "
            + "%.0f ns; median added cost %.0f ns per heartbeat%n",
        DECISIONS, nativeMedian, javaMedian, nativeMedian - javaMedian);
    // For the README's benchmark table (make bench gathers the directory's files).
    File out =
        new File(System.getProperty("bench.out", "target/bench"), "jni-" + RmLine.LINE + ".csv");
    out.getAbsoluteFile().getParentFile().mkdirs();
    List<String> csv =
        Arrays.asList(
            "benchmark,median_ns",
            String.format(Locale.ROOT, "nativeHeartbeat,%.1f", nativeMedian),
            String.format(Locale.ROOT, "javaBaseline,%.1f", javaMedian));
    Files.write(out.toPath(), csv, StandardCharsets.UTF_8);
    System.out.println("Results: " + out.getCanonicalPath());
  }
}
