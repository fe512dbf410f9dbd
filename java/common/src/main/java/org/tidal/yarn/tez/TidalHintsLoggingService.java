package org.tidal.yarn.tez;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.ReflectionUtils;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;
import org.apache.tez.dag.api.oldrecords.TaskState;
import org.apache.tez.dag.history.DAGHistoryEvent;
import org.apache.tez.dag.history.HistoryEvent;
import org.apache.tez.dag.history.events.DAGFinishedEvent;
import org.apache.tez.dag.history.events.DAGSubmittedEvent;
import org.apache.tez.dag.history.events.TaskFinishedEvent;
import org.apache.tez.dag.history.events.TaskStartedEvent;
import org.apache.tez.dag.history.events.VertexConfigurationDoneEvent;
import org.apache.tez.dag.history.events.VertexInitializedEvent;
import org.apache.tez.dag.history.logging.HistoryLoggingService;
import org.tidal.yarn.cli.TidalQueueCli;
import org.tidal.yarn.io.Streams;

/**
 * Publishes the running DAG's hints to the Tidal scheduler from inside a Tez 0.9 AM, turned on by
 * configuration alone:
 *
 * <pre>
 *   tez.history.logging.service.class = org.tidal.yarn.tez.TidalHintsLoggingService
 *   tidal.tez.history.logging.delegate.class = (the logging service to keep; default
 *       org.apache.tez.dag.history.logging.impl.SimpleHistoryLoggingService)
 * </pre>
 *
 * Tez hands every history event to its logging service; this one forwards each to the delegate
 * unchanged, and from the DAG plan (DAG submitted), vertex parallelism (vertex initialised or
 * reconfigured) and task starts and ends builds a {@link TezDagHints} document that a background
 * thread PUTs to {@code /ws/v1/tidal/apps/{app}/hints} at most every {@code
 * tidal.tez.hints.min-interval-ms}, authenticated by the AM's own AMRM token. Failures to publish
 * are logged and never affect the DAG: the app is then scheduled without hints.
 */
public class TidalHintsLoggingService extends HistoryLoggingService {
  public static final String DELEGATE = "tidal.tez.history.logging.delegate.class";
  public static final String DEFAULT_DELEGATE =
      "org.apache.tez.dag.history.logging.impl.SimpleHistoryLoggingService";

  /** Estimated task duration of a vertex until one of its tasks has finished. */
  public static final String DEFAULT_DURATION_MS = "tidal.tez.hints.default-task-duration-ms";

  public static final long DEFAULT_DEFAULT_DURATION_MS = 60000;
  public static final String MIN_INTERVAL_MS = "tidal.tez.hints.min-interval-ms";
  public static final long DEFAULT_MIN_INTERVAL_MS = 2000;

  /** {@code natural-order} (Tez 0.9) or {@code distance} (Tez 0.8 and earlier). */
  public static final String PRIORITY_SCHEME = "tidal.tez.hints.priority-scheme";

  static final String TOKEN_HEADER = "X-Tidal-AMRM-Token";

  private static final Log LOG = LogFactory.getLog(TidalHintsLoggingService.class);

  private HistoryLoggingService delegate;
  private Configuration conf;
  private long defaultDurationMs;
  private long minIntervalMs;
  private TezDagHints.Scheme scheme;
  private UserGroupInformation amUser;
  private ScheduledExecutorService publisher;

  /** Guarded by this service's monitor. */
  private TezDagHints hints;

  private ApplicationId appId;
  private boolean dirty;
  private boolean refused;
  private String lastProblem;

  public TidalHintsLoggingService() {
    super(TidalHintsLoggingService.class.getName());
  }

  @Override
  protected void serviceInit(Configuration configuration) throws Exception {
    conf = configuration;
    defaultDurationMs = conf.getLong(DEFAULT_DURATION_MS, DEFAULT_DEFAULT_DURATION_MS);
    minIntervalMs = Math.max(100, conf.getLong(MIN_INTERVAL_MS, DEFAULT_MIN_INTERVAL_MS));
    scheme =
        "distance"
                .equals(conf.getTrimmed(PRIORITY_SCHEME, "natural-order").toLowerCase(Locale.ROOT))
            ? TezDagHints.Scheme.DISTANCE
            : TezDagHints.Scheme.NATURAL_ORDER;
    Class<? extends HistoryLoggingService> type =
        conf.getClass(
            DELEGATE,
            conf.getClassByName(DEFAULT_DELEGATE).asSubclass(HistoryLoggingService.class),
            HistoryLoggingService.class);
    delegate = ReflectionUtils.newInstance(type, conf);
    delegate.setAppContext(appContext);
    delegate.init(conf);
    super.serviceInit(conf);
  }

  @Override
  protected void serviceStart() throws Exception {
    delegate.start();
    // The AM's user holds the AMRM token (and its renewals, which the AM's RM client adds).
    amUser = UserGroupInformation.getCurrentUser();
    publisher =
        Executors.newSingleThreadScheduledExecutor(
            new ThreadFactory() {
              @Override
              public Thread newThread(Runnable r) {
                Thread t = new Thread(r, "tidal-hints-publisher");
                t.setDaemon(true);
                return t;
              }
            });
    publisher.scheduleWithFixedDelay(
        new Runnable() {
          @Override
          public void run() {
            publish();
          }
        },
        minIntervalMs,
        minIntervalMs,
        TimeUnit.MILLISECONDS);
    super.serviceStart();
  }

  @Override
  protected void serviceStop() throws Exception {
    if (publisher != null) {
      publisher.shutdownNow();
    }
    if (delegate != null) {
      delegate.stop();
    }
    super.serviceStop();
  }

  @Override
  public void handle(DAGHistoryEvent event) {
    delegate.handle(event);
    try {
      track(event.getHistoryEvent());
    } catch (RuntimeException e) {
      LOG.warn(
          "Cannot derive scheduler hints from "
              + event.getHistoryEvent().getEventType()
              + ": "
              + e);
    }
  }

  private synchronized void track(HistoryEvent event) {
    switch (event.getEventType()) {
      case DAG_SUBMITTED:
        {
          DAGSubmittedEvent submitted = (DAGSubmittedEvent) event;
          hints = new TezDagHints(submitted.getDAGPlan(), defaultDurationMs, scheme);
          appId = submitted.getApplicationAttemptId().getApplicationId();
          refused = false;
          dirty = true;
          break;
        }
      case VERTEX_INITIALIZED:
        {
          VertexInitializedEvent e = (VertexInitializedEvent) event;
          if (hints != null && hints.setTasks(e.getVertexName(), e.getNumTasks())) {
            dirty = true;
          }
          break;
        }
      case VERTEX_CONFIGURE_DONE:
        {
          VertexConfigurationDoneEvent e = (VertexConfigurationDoneEvent) event;
          if (hints != null
              && hints.setTasks(hints.vertexName(e.getVertexID().getId()), e.getNumTasks())) {
            dirty = true;
          }
          break;
        }
      case TASK_STARTED:
        {
          TaskStartedEvent e = (TaskStartedEvent) event;
          if (hints != null) {
            hints.taskStarted(
                e.getTaskID().getVertexID().getId(), e.getTaskID().getId(), e.getStartTime());
            dirty = true;
          }
          break;
        }
      case TASK_FINISHED:
        {
          TaskFinishedEvent e = (TaskFinishedEvent) event;
          if (hints != null) {
            hints.taskFinished(
                e.getTaskID().getVertexID().getId(),
                e.getTaskID().getId(),
                e.getStartTime(),
                e.getFinishTime(),
                e.getState() == TaskState.SUCCEEDED);
            dirty = true;
          }
          break;
        }
      case DAG_FINISHED:
        if (event instanceof DAGFinishedEvent) {
          hints = null;
          dirty = false;
        }
        break;
      default:
        break;
    }
  }

  private void publish() {
    String json;
    ApplicationId app;
    synchronized (this) {
      if (!dirty || refused || hints == null) {
        return;
      }
      json = hints.toJson(System.currentTimeMillis());
      app = appId;
      dirty = false;
    }
    try {
      String token = amRmToken();
      if (token == null) {
        problem("no AMRM token in the AM's credentials; hints are not published");
        return;
      }
      IOException failure = null;
      for (String base : TidalQueueCli.endpoints(conf)) {
        try {
          put(new URL(base + "/ws/v1/tidal/apps/" + app + "/hints"), token, json);
          return;
        } catch (IOException e) {
          failure = e;
        }
      }
      problem("cannot reach the Tidal scheduler: " + failure);
    } catch (RuntimeException e) {
      problem("cannot publish hints: " + e);
    }
  }

  private String amRmToken() throws RuntimeException {
    for (Token<?> token : amUser.getTokens()) {
      if (AMRMTokenIdentifier.KIND_NAME.equals(token.getKind())) {
        try {
          return token.encodeToUrlString();
        } catch (IOException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    return null;
  }

  private void put(URL url, String token, String json) throws IOException {
    HttpURLConnection connection = (HttpURLConnection) url.openConnection();
    try {
      connection.setConnectTimeout(5000);
      connection.setReadTimeout(10000);
      connection.setRequestMethod("PUT");
      connection.setDoOutput(true);
      connection.setRequestProperty("Content-Type", "application/json");
      connection.setRequestProperty(TOKEN_HEADER, token);
      OutputStream out = connection.getOutputStream();
      out.write(json.getBytes(StandardCharsets.UTF_8));
      out.close();
      int status = connection.getResponseCode();
      InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
      String reply = in == null ? "" : Streams.readUtf8(in);
      if (status == 200) {
        LOG.debug("Hints accepted: " + reply);
        return;
      }
      if (status == 401 || status == 403 || status == 404) {
        // Not authorised or no hints endpoint: retrying cannot help for this DAG.
        synchronized (this) {
          refused = true;
        }
      }
      problem("the Tidal scheduler refused the hints (HTTP " + status + "): " + reply);
    } finally {
      connection.disconnect();
    }
  }

  /** Logs a publishing problem once until it changes, so a DAG's log stays readable. */
  private synchronized void problem(String message) {
    if (!message.equals(lastProblem)) {
      lastProblem = message;
      LOG.warn(message + " (the DAG runs on; it is scheduled without hints)");
    }
  }

  /** For tests: the document that would be published now, or null without a DAG. */
  synchronized String currentHints(long nowMs) {
    return hints == null ? null : hints.toJson(nowMs);
  }
}
