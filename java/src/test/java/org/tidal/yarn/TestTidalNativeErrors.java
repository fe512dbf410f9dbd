package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * How failed native calls reach Java: typed exceptions, and fallbacks when an exception class
 * cannot be raised.
 */
public class TestTidalNativeErrors {
  @Rule public TemporaryFolder tmp = new TemporaryFolder();

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
        out.get(0).startsWith("org.tidal.yarn.TidalException: invalid configuration: "));
    assertEquals("org.tidal.yarn.TidalException: unknown application 4242", out.get(1));
  }

  @Test(timeout = 60000)
  public void withoutTidalExceptionsTheJvmsOwnClassNamesTheError() throws Exception {
    String prefix = "java.lang.IllegalStateException: Tidal native call failed and org/tidal/yarn/";
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

  /**
   * Runs {@link NativeErrorProbe} in a child JVM whose class path holds the native bindings and
   * none of the Tidal exception classes but, with {@code plainException}, {@link TidalException}.
   * Returns the probe's lines.
   */
  private List<String> probe(boolean plainException) throws Exception {
    File classes = tmp.newFolder("classes");
    File pkg = new File(classes, "org/tidal/yarn");
    assertTrue(pkg.mkdirs());
    List<Class<?>> kept = new ArrayList<Class<?>>();
    kept.addAll(Arrays.asList(TidalNative.class, NativeLoader.class, NativeErrorProbe.class));
    if (plainException) {
      kept.add(TidalException.class);
    }
    for (Class<?> c : kept) {
      String file = c.getSimpleName() + ".class";
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
