package org.tidal.yarn;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.UserGroupInformation.AuthenticationMethod;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.codehaus.jackson.JsonNode;
import org.codehaus.jackson.map.ObjectMapper;
import org.codehaus.jackson.node.ObjectNode;

/**
 * The REST endpoint's queues: every queue's or one queue's status, and queues registered and
 * unregistered at run time.
 *
 * <p>Queue changes identify the caller the way Hadoop's pseudo authentication does ({@value
 * RestRequest#USER_PARAM}), so they are refused when Kerberos is on: the endpoint cannot check a
 * SPNEGO ticket.
 */
final class QueueResource {
  /** A queue definition is a few hundred bytes; the limit only stops abuse. */
  static final int MAX_QUEUE_BODY_BYTES = 64 * 1024;

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final QueueManager queues;
  private final CoreInstance core;
  private final boolean simpleAuth;
  private final boolean aclsEnabled;
  private final AccessControlList adminAcl;

  QueueResource(QueueManager queues, CoreInstance core, Configuration conf) {
    this.queues = queues;
    this.core = core;
    this.simpleAuth = SecurityUtil.getAuthenticationMethod(conf) == AuthenticationMethod.SIMPLE;
    this.aclsEnabled =
        conf.getBoolean(
            YarnConfiguration.YARN_ACL_ENABLE, YarnConfiguration.DEFAULT_YARN_ACL_ENABLE);
    this.adminAcl =
        new AccessControlList(
            conf.get(YarnConfiguration.YARN_ADMIN_ACL, YarnConfiguration.DEFAULT_YARN_ADMIN_ACL));
  }

  /** Who may change queues, for the endpoint's start-up line. */
  String accessSummary() {
    return "queue changes: "
        + (simpleAuth
            ? "simple authentication by " + RestRequest.USER_PARAM
            : "refused, Kerberos is on and SPNEGO is not supported")
        + "; administrators: "
        + (aclsEnabled
            ? YarnConfiguration.YARN_ADMIN_ACL + "=" + adminAcl.getAclString()
            : "none, " + YarnConfiguration.YARN_ACL_ENABLE + " is false");
  }

  /** GET queues. */
  RestReply list() throws IOException {
    return new RestReply(200, MAPPER.writeValueAsString(status()), "queue status");
  }

  /** GET queues/{name}. */
  RestReply get(String name) throws RestException, IOException {
    String fullName = QueueManager.fullName(name);
    for (JsonNode queue : status().path("queues")) {
      if (fullName.equals(queue.path("name").getTextValue())) {
        return new RestReply(200, MAPPER.writeValueAsString(queue), "status of " + fullName);
      }
    }
    throw new RestException(404, "unknown queue '" + fullName + "'");
  }

  /**
   * The core's status with burst times on the wall clock (the core counts from the scheduler's
   * start), so clients can show them as dates.
   */
  private JsonNode status() throws IOException {
    JsonNode root = MAPPER.readTree(queues.statusJson());
    for (JsonNode queue : root.path("queues")) {
      JsonNode burst = queue.path("burst");
      if (burst.isObject()) {
        for (String field : new String[] {"started_ms", "deadline_at_ms"}) {
          if (burst.path(field).isNumber()) {
            ((ObjectNode) burst).put(field, core.wallClockMs(burst.path(field).getLongValue()));
          }
        }
      }
    }
    return root;
  }

  /**
   * POST queues: registers the queue the body defines (a &lt;queue&gt; element). 201 with its
   * location when admitted, 409 with the core's verdict when admission rejects it.
   */
  RestReply register(RestRequest request) throws RestException, IOException {
    String user = caller(request);
    request.requireContentType("application/xml", "text/xml");
    String xml = request.body(MAX_QUEUE_BODY_BYTES);
    String verdict;
    try {
      queues.access().check(user, QueueACL.ADMINISTER_QUEUE, TidalScheduler.ROOT_QUEUE);
      verdict = queues.register(xml, user, isAdmin(user));
    } catch (TidalPanicException e) {
      throw e;
    } catch (TidalException e) {
      throw queueError(e);
    }
    JsonNode node = MAPPER.readTree(verdict);
    String queue = node.path("queue").getTextValue();
    String admissionClass = node.path("class").getTextValue();
    String outcome =
        "queue " + queue + " " + admissionClass + ": " + node.path("reason").getTextValue();
    if (!node.path("admitted").getBooleanValue()) {
      return new RestReply(409, verdict, outcome);
    }
    return new RestReply(201, verdict, outcome)
        .header("Location", TidalRestServer.PREFIX + "/queues/" + queue);
  }

  /** DELETE queues/{name}: unregisters a queue registered at run time. */
  RestReply unregister(RestRequest request, String name) throws RestException {
    String user = caller(request);
    String fullName = QueueManager.fullName(name);
    try {
      queues.access().check(user, QueueACL.ADMINISTER_QUEUE, fullName);
      queues.unregister(fullName, user, isAdmin(user));
    } catch (TidalPanicException e) {
      throw e;
    } catch (TidalException e) {
      throw queueError(e);
    }
    ObjectNode body = MAPPER.createObjectNode();
    body.put("queue", fullName);
    body.put("unregistered", true);
    return new RestReply(200, body.toString(), "queue " + fullName + " unregistered");
  }

  /**
   * Maps the core's refusal of a queue change to an HTTP status by its exception class, which the
   * bridge picks from the kind of the core's error.
   */
  static RestException queueError(TidalException e) {
    String message = e.getMessage() == null ? "refused" : e.getMessage();
    int status;
    if (e instanceof TidalForbiddenException) {
      status = 403;
    } else if (e instanceof TidalConflictException) {
      status = 409;
    } else if (e instanceof TidalNotFoundException) {
      status = 404;
    } else if (e instanceof TidalInvalidInputException) {
      status = 400;
    } else {
      // A failure of the bridge itself, or a scheduler already stopped.
      status = 503;
    }
    return new RestException(status, message);
  }

  /** The caller of a queue change, which needs simple authentication. */
  private String caller(RestRequest request) throws RestException {
    if (!simpleAuth) {
      throw new RestException(
          501,
          "Queue changes over this endpoint need simple "
              + "authentication ("
              + RestRequest.USER_PARAM
              + "); hadoop.security.authentication is not simple "
              + "and SPNEGO (Kerberos) is not supported by the Tidal endpoint yet. Change queues "
              + "in the allocation file and run yarn rmadmin -refreshQueues instead.");
    }
    return request.pseudoUser();
  }

  /**
   * Administrators (who may remove any user's queue) are the members of yarn.admin.acl when YARN
   * ACLs are on. With ACLs off nobody is, so a user's queue is only ever removed by its owner;
   * Hadoop's "ACLs off means everyone is an administrator" would make ownership moot.
   */
  private boolean isAdmin(String user) {
    return aclsEnabled && adminAcl.isUserAllowed(UserGroupInformation.createRemoteUser(user));
  }
}
