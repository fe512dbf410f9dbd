package org.tidal.yarn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.Groups;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEvent;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptEventType;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplication;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalConflictException;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalForbiddenException;
import org.tidal.yarn.bridge.TidalInvalidInputException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.TidalNotFoundException;
import org.tidal.yarn.bridge.TidalPanicException;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.queue.QueueManager;
import org.tidal.yarn.queue.TidalQueue;
import org.tidal.yarn.rest.HintedAttempts;

/**
 * Applications and their attempts on both sides: Hadoop's {@link SchedulerApplication} and {@link
 * FiCaSchedulerApp} records, and the core's app key of each. An application gets its key when it is
 * accepted, so an unknown queue is refused up front; its first attempt takes that key over, and
 * every later attempt starts afresh in the core with a new one.
 *
 * <p>Adding and removing run under the scheduler's monitor; the lookups are safe from any thread.
 */
public final class AppAttemptRegistry implements HintedAttempts {
  private static final Log LOG = LogFactory.getLog(AppAttemptRegistry.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] NO_GROUPS = new String[0];

  private final CoreInstance core;
  private final QueueManager queues;
  private final RMContext rmContext;
  private final Configuration conf;

  /** The scheduler's own application map, which Hadoop's code reads too. */
  private final Map<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> applications;

  private final AllocationIds ids;
  private final LineBookkeeping line;

  private final AtomicLong nextAppKey = new AtomicLong(1);

  /** Keys registered at APP_ADDED and not yet bound to the first attempt. */
  private final Map<ApplicationId, Long> unboundKeys = new ConcurrentHashMap<ApplicationId, Long>();

  private final Map<ApplicationAttemptId, Long> attemptKeys =
      new ConcurrentHashMap<ApplicationAttemptId, Long>();
  private final Map<Long, FiCaSchedulerApp> attemptsByKey =
      new ConcurrentHashMap<Long, FiCaSchedulerApp>();

  AppAttemptRegistry(
      CoreInstance core,
      QueueManager queues,
      RMContext rmContext,
      Configuration conf,
      Map<ApplicationId, SchedulerApplication<FiCaSchedulerApp>> applications,
      AllocationIds ids,
      LineBookkeeping line) {
    this.line = line;
    this.ids = ids;
    this.core = core;
    this.queues = queues;
    this.rmContext = rmContext;
    this.conf = conf;
    this.applications = applications;
  }

  /**
   * Accepts an application into the queue the core places it in (the allocation file's queue
   * placement policy, given the user's groups as Hadoop maps them), or rejects it: with the core's
   * reason (an unknown queue, a placement rule), or when its user may not submit to the placed
   * queue (as FairScheduler does, since the 2.7 RM leaves that check to the scheduler).
   */
  void addApplication(
      ApplicationId applicationId, String queue, String user, boolean isAppRecovering) {
    long key = nextAppKey.getAndIncrement();
    String requested = queue == null ? "" : queue;
    String queueName;
    try {
      String[] groups = groups(user);
      String placed = TidalNative.placeApp(core.handle(), requested, user, groups);
      queues.access().check(user, QueueACL.SUBMIT_APPLICATIONS, placed);
      queueName = TidalNative.submitApp(core.handle(), key, requested, user, groups);
    } catch (TidalException e) {
      LOG.info(
          "Rejecting application "
              + applicationId
              + " of user "
              + user
              + " in queue "
              + queue
              + ": "
              + e.getMessage());
      rmContext
          .getDispatcher()
          .getEventHandler()
          .handle(new RMAppEvent(applicationId, RMAppEventType.APP_REJECTED, e.getMessage()));
      return;
    }
    TidalQueue tidalQueue = queues.queue(queueName);
    SchedulerApplication<FiCaSchedulerApp> application = line.newApplication(tidalQueue, user);
    applications.put(applicationId, application);
    unboundKeys.put(applicationId, key);
    line.applicationSubmitted(tidalQueue, user);
    RMApp rmApp = rmContext.getRMApps().get(applicationId);
    if (rmApp != null) {
      rmApp.setQueue(queueName);
      line.takeSubmittedPriority(application, rmApp);
      tellPriority(key, application);
    }
    LOG.info(
        "Accepted application " + applicationId + " of user " + user + " into queue " + queueName);
    if (!isAppRecovering) {
      rmContext
          .getDispatcher()
          .getEventHandler()
          .handle(new RMAppEvent(applicationId, RMAppEventType.APP_ACCEPTED));
    }
  }

  /**
   * The user's groups, primary first, from Hadoop's group mapping (the RM's, which {@code yarn
   * rmadmin -refreshUserToGroupsMappings} refreshes); none when the mapping has none for the user,
   * which placement rules on groups then report. Looked up only for a placement policy with a group
   * rule, as FairScheduler does: the default mapping forks a shell per uncached user, which would
   * slow every submission's APP_ADDED for nothing.
   */
  private String[] groups(String user) {
    if (!TidalNative.placementUsesGroups(core.handle())) {
      return NO_GROUPS;
    }
    try {
      List<String> groups = Groups.getUserToGroupsMappingService(conf).getGroups(user);
      return groups.toArray(NO_GROUPS);
    } catch (IOException e) {
      LOG.debug("No groups for user " + user + ": " + e.getMessage());
      return NO_GROUPS;
    }
  }

  /** Makes a new attempt its application's current one, in Hadoop and in the core. */
  void addAttempt(
      ApplicationAttemptId attemptId,
      boolean transferStateFromPreviousAttempt,
      boolean isAttemptRecovering) {
    ApplicationId appId = attemptId.getApplicationId();
    SchedulerApplication<FiCaSchedulerApp> application = applications.get(appId);
    if (application == null) {
      LOG.warn("Ignoring attempt " + attemptId + " of unknown application");
      return;
    }
    TidalQueue queue = (TidalQueue) application.getQueue();
    String user = application.getUser();
    Long key = unboundKeys.remove(appId);
    if (key == null) {
      key = nextAppKey.getAndIncrement();
      try {
        TidalNative.addApp(core.handle(), key, queue.getQueueName(), user);
        tellPriority(key, application);
      } catch (TidalException e) {
        String message =
            "Cannot schedule attempt "
                + attemptId
                + " in queue "
                + queue.getQueueName()
                + ": "
                + e.getMessage();
        LOG.error(message);
        rmContext
            .getDispatcher()
            .getEventHandler()
            .handle(new RMAppEvent(appId, RMAppEventType.KILL, message));
        return;
      }
    }
    FiCaSchedulerApp attempt = line.newAttempt(attemptId, user, queue, rmContext);
    if (transferStateFromPreviousAttempt) {
      attempt.transferStateFromPreviousAttempt(application.getCurrentAppAttempt());
    }
    application.setCurrentAppAttempt(attempt);
    attemptKeys.put(attemptId, key);
    attemptsByKey.put(key, attempt);
    line.attemptSubmitted(queue, user);
    LOG.info(
        "Added attempt " + attemptId + " (app key " + key + ") in queue " + queue.getQueueName());
    if (!isAttemptRecovering) {
      rmContext
          .getDispatcher()
          .getEventHandler()
          .handle(new RMAppAttemptEvent(attemptId, RMAppAttemptEventType.ATTEMPT_ADDED));
    }
  }

  /** Forgets a finished application, and in the core its key with whatever it still holds. */
  void removeApplication(ApplicationId appId, RMAppState finalState) {
    SchedulerApplication<FiCaSchedulerApp> application = applications.remove(appId);
    if (application == null) {
      LOG.warn("Cannot remove unknown application " + appId);
      return;
    }
    TidalQueue queue = (TidalQueue) application.getQueue();
    queue.users().deactivateApplication(application.getUser(), appId);
    application.stop(finalState);
    Long key = unboundKeys.remove(appId);
    FiCaSchedulerApp attempt = application.getCurrentAppAttempt();
    if (key == null && attempt != null) {
      key = attemptKeys.remove(attempt.getApplicationAttemptId());
    }
    if (key != null) {
      attemptsByKey.remove(key);
      TidalNative.removeApp(core.handle(), key);
    }
  }

  /** Stops an attempt whose containers are completed or kept; the core drops it. */
  void removeAttempt(FiCaSchedulerApp attempt, RMAppAttemptState finalState) {
    attempt.stop(finalState);
    Long key = attemptKeys.remove(attempt.getApplicationAttemptId());
    if (key != null) {
      attemptsByKey.remove(key);
      // The core drops the attempt's asks and frees its allocations.
      TidalNative.removeApp(core.handle(), key);
    }
  }

  /**
   * Registers every application with a rebuilt core under the key the old core knew it by, in
   * submission order (keys grow with it), and returns the current attempts by key. An application
   * whose queue the new core does not have (dropped from the file since) is logged and skipped.
   */
  Map<Long, FiCaSchedulerApp> replay() {
    TreeMap<Long, SchedulerApplication<FiCaSchedulerApp>> keys = new TreeMap<>();
    for (Map.Entry<ApplicationId, Long> unbound : unboundKeys.entrySet()) {
      SchedulerApplication<FiCaSchedulerApp> app = applications.get(unbound.getKey());
      if (app != null) {
        keys.put(unbound.getValue(), app);
      }
    }
    for (Map.Entry<Long, FiCaSchedulerApp> attempt : attemptsByKey.entrySet()) {
      SchedulerApplication<FiCaSchedulerApp> app =
          applications.get(attempt.getValue().getApplicationId());
      if (app != null) {
        keys.put(attempt.getKey(), app);
      }
    }
    for (Map.Entry<Long, SchedulerApplication<FiCaSchedulerApp>> entry : keys.entrySet()) {
      SchedulerApplication<FiCaSchedulerApp> app = entry.getValue();
      try {
        TidalNative.addApp(
            core.handle(), entry.getKey(), app.getQueue().getQueueName(), app.getUser());
        tellPriority(entry.getKey(), app);
      } catch (TidalException e) {
        LOG.error("Cannot schedule app key " + entry.getKey() + " again: " + e.getMessage());
      }
    }
    return attemptsByKey;
  }

  /** Gives the core an application's priority, unless it is the default. */
  private void tellPriority(long key, SchedulerApplication<FiCaSchedulerApp> application) {
    int priority = line.priority(application);
    if (priority != 0) {
      TidalNative.setAppPriority(core.handle(), key, priority);
    }
  }

  /**
   * Changes an application's priority in the core, which orders its queue by it from the next
   * heartbeat; the adapter has recorded it in Hadoop's records. False for an unknown application.
   */
  boolean priorityChanged(ApplicationId appId) {
    SchedulerApplication<FiCaSchedulerApp> application = applications.get(appId);
    if (application == null) {
      return false;
    }
    Long key = unboundKeys.get(appId);
    FiCaSchedulerApp attempt = application.getCurrentAppAttempt();
    if (key == null && attempt != null) {
      key = attemptKeys.get(attempt.getApplicationAttemptId());
    }
    if (key != null) {
      TidalNative.setAppPriority(core.handle(), key, line.priority(application));
    }
    return true;
  }

  /** The attempt when it is its application's current one, else null. */
  FiCaSchedulerApp current(ApplicationAttemptId attemptId) {
    SchedulerApplication<FiCaSchedulerApp> app = applications.get(attemptId.getApplicationId());
    FiCaSchedulerApp attempt = app == null ? null : app.getCurrentAppAttempt();
    return attempt != null && attempt.getApplicationAttemptId().equals(attemptId) ? attempt : null;
  }

  @Override
  public boolean isCurrent(ApplicationAttemptId attemptId) {
    return current(attemptId) != null;
  }

  /** The core's key of an attempt, or null when the core does not schedule it. */
  Long key(ApplicationAttemptId attemptId) {
    return attemptKeys.get(attemptId);
  }

  /** The attempt the core knows by {@code key}, or null when it is gone. */
  FiCaSchedulerApp attempt(long key) {
    return attemptsByKey.get(key);
  }

  /** Current attempts of the apps in a queue and its descendants; null for an unknown queue. */
  List<ApplicationAttemptId> attemptsInQueue(String queueName) {
    String fullName = QueueManager.fullName(queueName);
    if (!queues.contains(fullName)) {
      return null;
    }
    List<ApplicationAttemptId> attempts = new ArrayList<ApplicationAttemptId>();
    for (SchedulerApplication<FiCaSchedulerApp> app : applications.values()) {
      String appQueue = app.getQueue().getQueueName();
      FiCaSchedulerApp attempt = app.getCurrentAppAttempt();
      if (attempt != null
          && (fullName.equals(TidalConfig.ROOT_QUEUE)
              || appQueue.equals(fullName)
              || appQueue.startsWith(fullName + "."))) {
        attempts.add(attempt.getApplicationAttemptId());
      }
    }
    return attempts;
  }

  @Override
  public String setHints(ApplicationAttemptId attemptId, String hintsJson) throws IOException {
    Long key = attemptKeys.get(attemptId);
    if (key == null) {
      throw new TidalNotFoundException(
          "unknown application attempt "
              + attemptId
              + ": it is not scheduled (finished, or not yet added)");
    }
    String reply;
    try {
      reply = TidalNative.setHints(core.handle(), key, hintsJson);
    } catch (TidalPanicException e) {
      throw e;
    } catch (TidalException e) {
      // The core names the app by its internal key; the AM knows its application id.
      String message =
          String.valueOf(e.getMessage())
              .replace("application " + key + ":", attemptId.getApplicationId() + ":");
      throw sameKind(e, message);
    }
    LOG.debug("Hints of " + attemptId + " accepted: " + reply);
    return withContainerIds(reply, attemptsByKey.get(key));
  }

  /**
   * The core's hints reply with the allocation ids of its straggler advice turned into the
   * container ids the AM knows (an allocation that ended meanwhile is left out).
   */
  private String withContainerIds(String reply, FiCaSchedulerApp attempt) throws IOException {
    JsonNode root = JSON.readTree(reply);
    JsonNode stragglers = root.path("stragglers");
    if (attempt == null || stragglers.size() == 0) {
      return reply;
    }
    Map<Long, ContainerId> byAllocation = new HashMap<Long, ContainerId>();
    for (RMContainer container : attempt.getLiveContainers()) {
      byAllocation.put(ids.allocationId(container.getContainerId()), container.getContainerId());
    }
    for (JsonNode advice : stragglers) {
      ArrayNode containers = JSON.createArrayNode();
      for (JsonNode allocation : advice.path("containers")) {
        ContainerId containerId = byAllocation.get(allocation.asLong());
        if (containerId != null) {
          containers.add(containerId.toString());
        }
      }
      ((ObjectNode) advice).set("containers", containers);
    }
    return JSON.writeValueAsString(root);
  }

  /** {@code e}'s kind of refusal, which callers map to a status, with another message. */
  private static TidalException sameKind(TidalException e, String message) {
    if (e instanceof TidalInvalidInputException) {
      return new TidalInvalidInputException(message);
    }
    if (e instanceof TidalNotFoundException) {
      return new TidalNotFoundException(message);
    }
    if (e instanceof TidalConflictException) {
      return new TidalConflictException(message);
    }
    if (e instanceof TidalForbiddenException) {
      return new TidalForbiddenException(message);
    }
    return new TidalException(message);
  }
}
