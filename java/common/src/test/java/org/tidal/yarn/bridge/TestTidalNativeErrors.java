package org.tidal.yarn.bridge;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import org.tidal.yarn.NativeSettings;
import org.tidal.yarn.io.Streams;

/**
 * How failed native calls reach Java: typed exceptions that carry what they are about, fallbacks
 * when an exception class cannot be raised, and allocate's releases checked whole.
 */
public class TestTidalNativeErrors {
  private static final long[] SETTINGS = NativeSettings.forTests();
  private static final long APP = 7;
  private static final long OTHER_APP = 8;

  @Rule public TemporaryFolder tmp = new TemporaryFolder();

  private long handle;

  @Before
  public void create() {
    handle = TidalNative.create("<tidal><queue name=\"a\"/></tidal>", SETTINGS);
    TidalNative.addNode(handle, 0, 1, 2, 8192, 8, 0, 0);
    TidalNative.addApp(handle, APP, "a", "alice");
  }

  @After
  public void destroy() {
    TidalNative.destroy(handle);
  }

  @Test
  public void anUnknownAppKeyComesBackAsTheTypedExceptionWithThatKey() {
    try {
      TidalNative.removeApp(handle, 4242);
      fail("removed an unknown app");
    } catch (TidalNotFoundException e) {
      assertEquals(OptionalLong.of(4242), e.appKey());
      assertEquals(OptionalInt.empty(), e.nodeId());
      assertEquals(Optional.empty(), e.queue());
      assertEquals("unknown application 4242", e.getMessage());
    }
    try {
      TidalNative.addApp(handle, APP, "a", "alice");
      fail("added an app twice");
    } catch (TidalConflictException e) {
      assertEquals(OptionalLong.of(APP), e.appKey());
    }
  }

  @Test
  public void unknownNodesAndQueuesAreNamedByTheirFields() {
    try {
      TidalNative.removeNode(handle, 77);
      fail("removed an unknown node");
    } catch (TidalNotFoundException e) {
      assertEquals(OptionalInt.of(77), e.nodeId());
      assertEquals(OptionalLong.empty(), e.appKey());
    }
    try {
      TidalNative.addApp(handle, OTHER_APP, "nosuch", "bob");
      fail("added an app to an unknown queue");
    } catch (TidalNotFoundException e) {
      assertEquals(Optional.of("root.nosuch"), e.queue());
    }
  }

  @Test
  public void aRefusedHintsFieldIsNamedByTheException() {
    String hints =
        "{\"version\":1,\"stages\":[{\"id\":\"m\",\"tasks\":-1,"
            + "\"demand\":{\"memory-mb\":1024,\"vcores\":1},\"duration_ms\":1000}]}";
    try {
      TidalNative.setHints(handle, APP, hints);
      fail("accepted a negative task count");
    } catch (TidalInvalidInputException e) {
      assertEquals(Optional.of("stages[0].tasks"), e.field());
      assertEquals(OptionalLong.of(APP), e.appKey());
    }
    // Errors about nothing in particular carry nothing.
    try {
      TidalNative.setHints(handle, APP, "{");
      fail("accepted malformed JSON");
    } catch (TidalInvalidInputException e) {
      assertEquals(Optional.empty(), e.field());
      assertEquals(OptionalLong.empty(), e.appKey());
    }
  }

  @Test
  public void anInvalidReleaseRefusesTheWholeListAndNamesIt() throws Exception {
    long[] mine = start(APP, 2);
    TidalNative.addApp(handle, OTHER_APP, "a", "bob");
    long[] theirs = start(OTHER_APP, 1);
    long outOfRange = 1L << 40;

    try {
      TidalNative.allocate(
          handle, APP, null, new long[] {mine[0], outOfRange, mine[1]}, null, null);
      fail("released an out-of-range allocation id");
    } catch (TidalInvalidInputException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("release 1: allocation id " + outOfRange));
    }
    assertEquals(3 * 1024, usedMemoryMb());

    try {
      TidalNative.allocate(handle, APP, null, new long[] {mine[0], theirs[0]}, null, null);
      fail("released another app's allocation");
    } catch (TidalInvalidInputException e) {
      assertEquals(OptionalLong.of(APP), e.appKey());
      assertTrue(e.getMessage(), e.getMessage().contains("allocation " + theirs[0]));
    }
    assertEquals(3 * 1024, usedMemoryMb());

    // A valid list frees its allocations; one already freed is skipped.
    TidalNative.allocate(handle, APP, null, new long[] {mine[0], mine[1], mine[0]}, null, null);
    assertEquals(1024, usedMemoryMb());
  }

  @Test
  public void aZeroHandleIsNeverTakenForAnInstance() {
    assertEquals(5, CoreInstance.created(5));
    try {
      CoreInstance.created(0);
      fail("took handle 0 for an instance");
    } catch (TidalException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("no scheduler instance"));
    }
  }

  @Test(timeout = 60000)
  public void aMissingExceptionClassFallsBackToThePlainTidalException() throws Exception {
    List<String> out = probe(true);
    assertTrue(
        out.toString(),
        out.get(0).startsWith("org.tidal.yarn.bridge.TidalException: invalid configuration: "));
    assertEquals("org.tidal.yarn.bridge.TidalException: unknown application 4242", out.get(1));
  }

  @Test(timeout = 60000)
  public void withoutTidalExceptionsTheJvmsOwnClassNamesTheError() throws Exception {
    String prefix =
        "java.lang.IllegalStateException: Tidal native call failed and org/tidal/yarn/bridge/";
    List<String> out = probe(false);
    assertTrue(
        out.toString(),
        out.get(0)
            .startsWith(
                prefix + "TidalInvalidInputException could not be raised: invalid configuration"));
    assertEquals(
        prefix + "TidalNotFoundException could not be raised: unknown application 4242",
        out.get(1));
  }

  /** Starts {@code count} containers of 1 GB for {@code app}; returns their allocation ids. */
  private long[] start(long app, int count) {
    long[] asks = {1, WireLayout.ANY_LOCATION, count, 1, 1024, 1, 0, 0};
    TidalNative.allocate(handle, app, asks, null, null, null);
    ByteBuffer exchange = TidalNative.heartbeatBuffer(10 * WireLayout.DECISION_STRIDE);
    int made = TidalNative.nodeHeartbeat(handle, 0, 1000, exchange, 0, 10);
    assertEquals(count, made);
    long[] ids = new long[made];
    for (int i = 0; i < made; i++) {
      ids[i] =
          exchange.getLong((i * WireLayout.DECISION_STRIDE + WireLayout.DEC_ALLOCATION_ID) * 8);
    }
    return ids;
  }

  private long usedMemoryMb() throws Exception {
    String status = TidalNative.queueStatusJson(handle);
    return new ObjectMapper().readTree(status).path("used").path("memory_mb").longValue();
  }

  /**
   * Runs {@link NativeErrorProbe} in a child JVM whose class path holds the native bindings and
   * none of the Tidal exception classes but, with {@code plainException}, {@link TidalException}.
   * Returns the probe's lines.
   */
  private List<String> probe(boolean plainException) throws Exception {
    File classes = tmp.newFolder("classes");
    List<Class<?>> kept = new ArrayList<Class<?>>();
    kept.addAll(
        Arrays.asList(
            TidalNative.class, NativeLoader.class, NativeErrorProbe.class, NativeSettings.class));
    if (plainException) {
      kept.add(TidalException.class);
    }
    for (Class<?> c : kept) {
      String file = c.getSimpleName() + ".class";
      File pkg = new File(classes, c.getPackage().getName().replace('.', '/'));
      assertTrue(pkg.isDirectory() || pkg.mkdirs());
      Files.copy(c.getResourceAsStream(file), new File(pkg, file).toPath());
    }
    File java = new File(System.getProperty("java.home"), "bin/java");
    Process process =
        new ProcessBuilder(
                java.getPath(),
                "-Djava.library.path=" + System.getProperty("java.library.path"),
                "-cp",
                classes.getPath(),
                NativeErrorProbe.class.getName())
            .redirectErrorStream(true)
            .start();
    String out = Streams.readUtf8(process.getInputStream()).trim();
    assertEquals(out, 0, process.waitFor());
    List<String> lines = Arrays.asList(out.split("\n"));
    assertEquals(out, 2, lines.size());
    assertFalse(out, out.contains("no exception"));
    return lines;
  }
}
