package org.tidal.it;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.TaskCompletionEvent;
import org.apache.hadoop.mapreduce.TaskID;

/**
 * Every task attempt of a running MapReduce job and how it ended, read from its AM while it runs
 * (without a JobHistoryServer nobody has them once the AM has exited): which attempts were lost and
 * where each task finally succeeded.
 */
final class AttemptWatch implements AutoCloseable {
  /** One attempt's end: its status and the host it ran on. */
  static final class Attempt {
    final String id;
    final TaskCompletionEvent.Status status;
    final String host;

    Attempt(TaskCompletionEvent e) {
      this.id = e.getTaskAttemptId().toString();
      this.status = e.getStatus();
      String http = e.getTaskTrackerHttp();
      this.host = http == null || http.isEmpty() ? "?" : URI.create(http).getHost();
    }

    boolean succeeded() {
      return status == TaskCompletionEvent.Status.SUCCEEDED;
    }

    @Override
    public String toString() {
      return id + " " + status + " on " + host;
    }
  }

  private final Job job;
  private final Map<TaskID, List<Attempt>> byTask = new TreeMap<>();
  private final Thread poller;
  private volatile Exception failure;
  private int from;

  AttemptWatch(Job job) {
    this.job = job;
    this.poller = new Thread(this::pollUntilComplete, "attempts-" + job.getJobID());
    poller.setDaemon(true);
    poller.start();
  }

  private void pollUntilComplete() {
    try {
      boolean complete;
      do {
        complete = job.isComplete();
        poll();
        Thread.sleep(200);
      } while (!complete);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      failure = e;
    }
  }

  private void poll() throws Exception {
    while (true) {
      TaskCompletionEvent[] events = job.getTaskCompletionEvents(from, 100);
      if (events.length == 0) {
        return;
      }
      synchronized (byTask) {
        for (TaskCompletionEvent e : events) {
          byTask
              .computeIfAbsent(e.getTaskAttemptId().getTaskID(), t -> new ArrayList<>())
              .add(new Attempt(e));
        }
      }
      from += events.length;
    }
  }

  /**
   * Waits for the job and the last events; returns each task's attempts in the order they ended.
   */
  Map<TaskID, List<Attempt>> awaitJob(long timeoutMillis) throws Exception {
    poller.join(timeoutMillis);
    if (poller.isAlive()) {
      throw new AssertionError(job.getJobID() + " did not finish within " + timeoutMillis + " ms");
    }
    if (failure != null) {
      throw failure;
    }
    synchronized (byTask) {
      return new TreeMap<>(byTask);
    }
  }

  @Override
  public void close() {
    poller.interrupt();
  }
}
