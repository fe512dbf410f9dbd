package org.tidal.yarn;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.log4j.AppenderSkeleton;
import org.apache.log4j.Logger;
import org.apache.log4j.spi.LoggingEvent;

/**
 * Records what the core's log pump writes to log4j (logger {@code tidal.native} and below) as
 * {@code "<logger> <LEVEL> <message>"} lines, until closed.
 */
final class NativeLogCapture implements Closeable {
  private final List<String> lines = Collections.synchronizedList(new ArrayList<String>());
  private final Logger logger = Logger.getLogger("tidal.native");
  private final AppenderSkeleton appender =
      new AppenderSkeleton() {
        @Override
        protected void append(LoggingEvent event) {
          lines.add(
              event.getLoggerName() + " " + event.getLevel() + " " + event.getRenderedMessage());
        }

        @Override
        public void close() {}

        @Override
        public boolean requiresLayout() {
          return false;
        }
      };

  NativeLogCapture() {
    logger.addAppender(appender);
  }

  /** Waits until one recorded line contains every fragment. */
  void await(String what, final String... fragments) throws Exception {
    TidalTestSupport.waitFor(
        what,
        new Callable<Boolean>() {
          @Override
          public Boolean call() {
            synchronized (lines) {
              for (String line : lines) {
                if (containsAll(line, fragments)) {
                  return true;
                }
              }
              return false;
            }
          }
        });
  }

  private static boolean containsAll(String line, String[] fragments) {
    for (String fragment : fragments) {
      if (!line.contains(fragment)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    logger.removeAppender(appender);
  }
}
