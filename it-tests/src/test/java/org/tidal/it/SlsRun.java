package org.tidal.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One run of Hadoop's Scheduler Load Simulator (SLSRunner of hadoop-sls 2.7.7) in a JVM of its own:
 * SLSRunner ends its JVM with System.exit once every job is done. The JVM gets this JVM's class
 * path behind the scheduler's configuration directory (it-tests/sls/tidal or fair, with its
 * yarn-site.xml and queue file), it-tests/sls (sls-runner.xml, core-site.xml, the metrics2 file
 * sink) and SLS's page templates; its working directory and SLS's output directory are {@code
 * outDir}, where its log goes to sls.log.
 */
final class SlsRun {
  /** A scheduler SLS can run: its configuration directory under it-tests/sls and its label. */
  enum Scheduler {
    TIDAL("tidal", "Tidal (drf)"),
    FAIR("fair", "FairScheduler (drf)");

    final String dir;
    final String label;

    Scheduler(String dir, String label) {
      this.dir = dir;
      this.label = label;
    }
  }

  /** it-tests/sls, from -Dit.sls.dir (the pom sets it). */
  static Path slsDir() {
    return requiredDir("it.sls.dir");
  }

  final Scheduler scheduler;
  final Path outDir;
  final int webPort;
  private final Process process;

  private SlsRun(Scheduler scheduler, Path outDir, int webPort, Process process) {
    this.scheduler = scheduler;
    this.outDir = outDir;
    this.webPort = webPort;
    this.process = process;
  }

  /**
   * Starts SLS on {@code inputArgs} (-inputsls FILE or -inputrumen FILE) with the nodes of {@code
   * nodes}, its web view on {@code webPort} (0: a free one), tracking {@code trackJob} if not null.
   */
  static SlsRun start(
      Scheduler scheduler,
      List<String> inputArgs,
      Path nodes,
      Path outDir,
      int webPort,
      String trackJob)
      throws IOException {
    // SLS's CSV reporter appends to the files of an earlier run.
    if (Files.exists(outDir)) {
      try (Stream<Path> old = Files.walk(outDir)) {
        for (Path p : old.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
    Files.createDirectories(outDir);
    // SLS's web view serves its charts' scripts from ./html: the binary tarball's
    // share/hadoop/tools/sls/html, when -Dsls.html names it.
    String html = System.getProperty("sls.html", "");
    if (!html.isEmpty()) {
      Files.createSymbolicLink(outDir.resolve("html"), Paths.get(html).toAbsolutePath());
    }
    int port = webPort > 0 ? webPort : FreePorts.belowEphemeral("0.0.0.0");
    List<String> cmd = new ArrayList<>();
    cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(HarnessSettings.inheritedModuleFlags());
    cmd.add("-Xmx768m");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-Djava.library.path=" + System.getProperty("java.library.path"));
    cmd.add("-Dsls.web.port=" + port);
    cmd.add("-cp");
    cmd.add(
        String.join(
            File.pathSeparator,
            slsDir().resolve(scheduler.dir).toString(),
            slsDir().toString(),
            requiredDir("it.sls.web").toString(),
            System.getProperty("java.class.path")));
    cmd.add("org.apache.hadoop.yarn.sls.SLSRunner");
    cmd.addAll(inputArgs);
    cmd.addAll(
        List.of("-nodes", nodes.toString(), "-output", outDir.toString(), "-printsimulation"));
    if (trackJob != null) {
      cmd.addAll(List.of("-trackjobs", trackJob));
    }
    Process process =
        new ProcessBuilder(cmd)
            .directory(outDir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(outDir.resolve("sls.log").toFile())
            .start();
    return new SlsRun(scheduler, outDir, port, process);
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /**
   * Waits for SLS to end by itself. Returns its exit code; throws, after stopping the JVM, when it
   * runs past {@code timeoutSeconds} (a job that never finishes keeps SLS running for ever).
   */
  int await(long timeoutSeconds) throws InterruptedException {
    if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      stop();
      throw new IllegalStateException(
          "SLS under "
              + scheduler.label
              + " was still running after "
              + timeoutSeconds
              + " s (some job never finished); log: "
              + outDir.resolve("sls.log"));
    }
    return process.exitValue();
  }

  /** Stops the SLS JVM if it still runs. */
  void stop() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    }
  }

  private static Path requiredDir(String property) {
    String dir = System.getProperty(property);
    if (dir == null || !Files.isDirectory(Paths.get(dir))) {
      throw new IllegalStateException(
          "-D" + property + " must name a directory (the it-tests pom sets it), got " + dir);
    }
    return Paths.get(dir);
  }
}
