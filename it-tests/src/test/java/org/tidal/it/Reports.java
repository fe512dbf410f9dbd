package org.tidal.it;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/** Plain-text tables of recovery runs, and where the tests keep them. */
final class Reports {
  private Reports() {}

  /**
   * One recovery run (RM restart, failover or core panic): every application's outcome, Tidal's
   * queues and classes before and after (when the scheduler has them), then {@code facts}, one per
   * line.
   */
  static String recovery(
      String title,
      List<RecoveryWorkload.App> apps,
      QueueSnapshot before,
      QueueSnapshot after,
      List<String> facts) {
    StringBuilder out = new StringBuilder(title).append('\n');
    String row = "%-32s %-10s %-9s %-9s %-10s %8s %11s %9s %13s%n";
    out.append(
        String.format(
            Locale.ROOT,
            row,
            "application",
            "kind",
            "queue",
            "state",
            "final",
            "attempts",
            "containers",
            "expected",
            "killed by RM"));
    int containers = 0;
    int killed = 0;
    for (RecoveryWorkload.App app : apps) {
      containers += app.containers;
      killed += app.killedByRm.size();
      out.append(
          String.format(
              Locale.ROOT,
              row,
              app.id,
              app.kind,
              app.queue,
              app.state,
              app.finalStatus,
              app.attempts,
              app.containers,
              app.expectedContainers,
              app.killedByRm.size()));
    }
    out.append(
        String.format(
            Locale.ROOT,
            "%-32s %-10s %-9s %-9s %-10s %8s %11d %9s %13d%n",
            "total",
            "",
            "",
            "",
            "",
            "",
            containers,
            "",
            killed));
    if (before == null || after == null) {
      out.append("Queue classes: none (the scheduler has no admission classes)\n");
    } else {
      out.append(
          String.format(
              Locale.ROOT,
              "%-12s %-14s %-14s %s%n",
              "queue",
              "class before",
              "class after",
              "kind"));
      Set<String> names = new TreeSet<>(before.classes.keySet());
      names.addAll(after.classes.keySet());
      for (String q : names) {
        String owner = before.runtimeOwners.getOrDefault(q, after.runtimeOwners.get(q));
        out.append(
            String.format(
                Locale.ROOT,
                "%-12s %-14s %-14s %s%n",
                q,
                before.classes.getOrDefault(q, "(missing)"),
                after.classes.getOrDefault(q, "(missing)"),
                owner == null ? "allocation file" : "registered at run time by " + owner));
      }
      out.append(
          String.format(
              Locale.ROOT,
              "Runtime queues before: %s; after: %s%s%n",
              before.runtimeOwners.keySet(),
              after.runtimeOwners.keySet(),
              after.unavailable == null ? "" : " (status unavailable: " + after.unavailable + ")"));
    }
    for (String fact : facts) {
      out.append(fact).append('\n');
    }
    return out.toString();
  }

  /** Prints the table and keeps a copy under target/it-results for later reading. */
  static void publish(String name, String table, PrintStream out) throws IOException {
    out.println(table);
    Path dir = Paths.get("target", "it-results");
    Files.createDirectories(dir);
    Files.write(dir.resolve(name + ".txt"), table.getBytes(StandardCharsets.UTF_8));
  }
}
