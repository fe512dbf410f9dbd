package org.tidal.yarn.bridge;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Moves the Rust core's buffered log records into commons-logging (and so into the RM log): a
 * daemon thread drains them every {@value #INTERVAL_MS} ms and once more when stopped. Each record
 * is {@code LEVEL<TAB>target<TAB>message}; the target becomes the logger name under {@value
 * #LOGGER_PREFIX} so log4j can filter by Rust module.
 */
public final class NativeLogPump implements Runnable {
  static final long INTERVAL_MS = 100;
  public static final String LOGGER_PREFIX = "tidal.native.";

  private static final Log LOG = LogFactory.getLog(NativeLogPump.class);
  private static final ConcurrentMap<String, Log> LOGGERS = new ConcurrentHashMap<String, Log>();

  private final Object lock = new Object();
  private Thread thread;
  private boolean stopping;

  void start() {
    synchronized (lock) {
      if (thread != null) {
        return;
      }
      stopping = false;
      thread = new Thread(this, "tidal-native-log");
      thread.setDaemon(true);
      thread.start();
    }
  }

  /** Stops the thread, waits for it, then drains whatever is still buffered. */
  void stop() throws InterruptedException {
    Thread running;
    synchronized (lock) {
      running = thread;
      thread = null;
      stopping = true;
      lock.notifyAll();
    }
    if (running != null) {
      running.join();
    }
    drain();
  }

  @Override
  public void run() {
    while (true) {
      synchronized (lock) {
        if (stopping) {
          return;
        }
      }
      try {
        drain();
      } catch (RuntimeException e) {
        LOG.error("Failed to drain native log records", e);
      }
      synchronized (lock) {
        if (stopping) {
          return;
        }
        try {
          lock.wait(INTERVAL_MS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** Forwards every buffered record; safe to call from any thread. */
  static void drain() {
    String text = TidalNative.drainLogs();
    if (text == null || text.isEmpty()) {
      return;
    }
    int start = 0;
    while (start < text.length()) {
      int end = text.indexOf('\n', start);
      if (end < 0) {
        end = text.length();
      }
      if (end > start) {
        forward(text.substring(start, end));
      }
      start = end + 1;
    }
  }

  static void forward(String line) {
    int first = line.indexOf('\t');
    int second = first < 0 ? -1 : line.indexOf('\t', first + 1);
    if (second < 0) {
      // A line without the level and target prefix is the continuation of a multi-line message.
      LOG.info(line);
      return;
    }
    String level = line.substring(0, first);
    String target = line.substring(first + 1, second);
    String message = line.substring(second + 1);
    Log log = LOGGERS.get(target);
    if (log == null) {
      log = LogFactory.getLog(LOGGER_PREFIX + target);
      Log raced = LOGGERS.putIfAbsent(target, log);
      if (raced != null) {
        log = raced;
      }
    }
    if ("ERROR".equals(level)) {
      log.error(message);
    } else if ("WARN".equals(level)) {
      log.warn(message);
    } else if ("INFO".equals(level)) {
      log.info(message);
    } else if ("DEBUG".equals(level)) {
      log.debug(message);
    } else if ("TRACE".equals(level)) {
      log.trace(message);
    } else {
      log.info(line);
    }
  }
}
