package org.tidal.yarn;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * The shim's packages form layers with no cycle: each package of the version-neutral part and of
 * the adapter uses only the packages below it, and nothing uses the scheduler's own package ({@code
 * org.tidal.yarn}), which sits on top. Read from the sources this module is built from (the
 * adapter's and {@code java/common}'s), where every use of another Tidal package is an import or a
 * fully qualified name.
 */
public class TestPackageLayering {
  private static final String ROOT = "org.tidal.yarn";

  /** What each package may use, besides itself. */
  private static final Map<String, Set<String>> ALLOWED = new TreeMap<String, Set<String>>();

  static {
    allow("bridge");
    allow("io");
    allow("state", "bridge");
    allow("config", "bridge", "io");
    allow("view", "bridge", "config", "io");
    allow("queue", "bridge", "config", "state", "view");
    allow("rest", "bridge", "config", "queue", "view", "io");
    allow("cli", "config", "io");
    allow("tez", "cli", "io");
    allow("", "bridge", "config", "io", "queue", "rest", "state", "view");
  }

  private static final Pattern USE =
      Pattern.compile("\\borg\\.tidal\\.yarn((?:\\.[a-z]\\w*)*)\\.[A-Z]");

  private static void allow(String pkg, String... below) {
    ALLOWED.put(
        qualified(pkg),
        Arrays.stream(below).map(TestPackageLayering::qualified).collect(Collectors.toSet()));
  }

  private static String qualified(String pkg) {
    return pkg.isEmpty() ? ROOT : ROOT + "." + pkg;
  }

  @Test
  public void everyPackageUsesOnlyTheLayersBelowIt() throws IOException {
    List<Path> roots =
        Arrays.asList(Paths.get("src/main/java"), Paths.get("../common/src/main/java"));
    List<String> violations = new ArrayList<String>();
    Set<String> seen = new HashSet<String>();
    for (Path root : roots) {
      assertTrue(root.toAbsolutePath() + " is not a directory", Files.isDirectory(root));
      List<Path> sources;
      try (Stream<Path> walk = Files.walk(root)) {
        sources = walk.filter(p -> p.toString().endsWith(".java")).collect(Collectors.toList());
      }
      for (Path source : sources) {
        String pkg = root.relativize(source.getParent()).toString().replace('/', '.');
        seen.add(pkg);
        Set<String> allowed = ALLOWED.get(pkg);
        if (allowed == null) {
          violations.add(pkg + " is a package the layering does not name (" + source + ")");
          continue;
        }
        String text = new String(Files.readAllBytes(source), StandardCharsets.UTF_8);
        Matcher use = USE.matcher(text);
        while (use.find()) {
          String used = ROOT + use.group(1);
          if (!used.equals(pkg) && !allowed.contains(used)) {
            violations.add(source.getFileName() + " in " + pkg + " uses " + used);
          }
        }
      }
    }
    assertEquals("layer violations", new ArrayList<String>(), violations);
    assertTrue("the scan found the layers: " + seen, seen.containsAll(ALLOWED.keySet()));
  }
}
