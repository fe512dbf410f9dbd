package org.tidal.yarn.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.jersey.spi.resource.Singleton;
import java.io.IOException;
import javax.servlet.ServletContext;
import javax.servlet.http.HttpServletRequest;
import javax.ws.rs.Consumes;
import javax.ws.rs.DELETE;
import javax.ws.rs.GET;
import javax.ws.rs.POST;
import javax.ws.rs.Path;
import javax.ws.rs.PathParam;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Context;
import javax.ws.rs.core.MediaType;
import javax.ws.rs.core.Response;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation.AuthenticationMethod;
import org.apache.hadoop.security.authentication.server.PseudoAuthenticationHandler;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.queue.QueueManager;

/**
 * The REST endpoint's queues: every queue's or one queue's status, and queues registered and
 * unregistered at run time.
 *
 * <p>Who changes a queue is the user Hadoop's authentication filter established ({@value
 * RestInput#USER_PARAM} under simple authentication, SPNEGO under Kerberos, {@code doAs} for proxy
 * users); {@link #caller} is the one place that takes it. Status reads are open, as the RM's own.
 */
@Path("queues")
@Singleton
@Produces(MediaType.APPLICATION_JSON)
public final class QueueResource {
  /** A queue definition is a few hundred bytes; the limit only stops abuse. */
  public static final int MAX_QUEUE_BODY_BYTES = 64 * 1024;

  private static final String HTTP_AUTH_TYPE = "hadoop.http.authentication.type";
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final QueueManager queues;
  private final CoreInstance core;
  private final String unverifiedCallers;

  /** Jersey's constructor: the scheduler's parts come from the server's servlet context. */
  public QueueResource(@Context ServletContext context) {
    this(
        TidalRestServer.part(context, QueueManager.class),
        TidalRestServer.part(context, CoreInstance.class),
        TidalRestServer.part(context, Configuration.class));
  }

  QueueResource(QueueManager queues, CoreInstance core, Configuration conf) {
    this.queues = queues;
    this.core = core;
    this.unverifiedCallers = unverifiedCallers(conf);
  }

  /**
   * Why callers' names cannot be trusted for queue changes, or null when they can: a cluster that
   * authenticates RPC by Kerberos but HTTP by the unverified {@value RestInput#USER_PARAM} would
   * let anyone act as anyone.
   */
  private static String unverifiedCallers(Configuration conf) {
    String httpAuth = conf.getTrimmed(HTTP_AUTH_TYPE, PseudoAuthenticationHandler.TYPE);
    if (SecurityUtil.getAuthenticationMethod(conf) != AuthenticationMethod.SIMPLE
        && PseudoAuthenticationHandler.TYPE.equals(httpAuth)) {
      return "hadoop.security.authentication is not simple but "
          + HTTP_AUTH_TYPE
          + " is simple, so "
          + RestInput.USER_PARAM
          + " is unverified. Set "
          + HTTP_AUTH_TYPE
          + "=kerberos, or change queues in the allocation file and run yarn rmadmin"
          + " -refreshQueues.";
    }
    return null;
  }

  /** Who may change queues, for the endpoint's start-up line. */
  static String accessSummary(Configuration conf) {
    String refusal = unverifiedCallers(conf);
    boolean acls =
        conf.getBoolean(
            YarnConfiguration.YARN_ACL_ENABLE, YarnConfiguration.DEFAULT_YARN_ACL_ENABLE);
    return "queue changes: "
        + (refusal == null
            ? conf.getTrimmed(HTTP_AUTH_TYPE, PseudoAuthenticationHandler.TYPE) + " authentication"
            : "refused, " + HTTP_AUTH_TYPE + " is simple on a secure cluster")
        + "; administrators: "
        + (acls
            ? YarnConfiguration.YARN_ADMIN_ACL
                + "="
                + conf.get(
                    YarnConfiguration.YARN_ADMIN_ACL, YarnConfiguration.DEFAULT_YARN_ADMIN_ACL)
            : "none, " + YarnConfiguration.YARN_ACL_ENABLE + " is false");
  }

  /** GET queues. */
  @GET
  public Response list(@Context HttpServletRequest request) throws IOException {
    RestAuditFilter.outcome(request, "queue status");
    return Response.ok(MAPPER.writeValueAsString(status())).build();
  }

  /** GET queues/{name}. */
  @GET
  @Path("{queue}")
  public Response get(@Context HttpServletRequest request, @PathParam("queue") String name)
      throws RestException, IOException {
    String fullName = QueueManager.fullName(name);
    for (JsonNode queue : status().path("queues")) {
      if (fullName.equals(queue.path("name").textValue())) {
        RestAuditFilter.outcome(request, "status of " + fullName);
        return Response.ok(MAPPER.writeValueAsString(queue)).build();
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
            ((ObjectNode) burst).put(field, core.wallClockMs(burst.path(field).longValue()));
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
  @POST
  @Consumes({MediaType.APPLICATION_XML, MediaType.TEXT_XML})
  public Response register(@Context HttpServletRequest request) throws RestException, IOException {
    String user = caller(request);
    queues.access().check(user, QueueACL.ADMINISTER_QUEUE, TidalConfig.ROOT_QUEUE);
    String xml = RestInput.body(request, MAX_QUEUE_BODY_BYTES);
    String verdict = queues.register(xml, user, queues.access().isAdministrator(user));
    JsonNode node = MAPPER.readTree(verdict);
    String queue = node.path("queue").textValue();
    RestAuditFilter.outcome(
        request,
        "queue "
            + queue
            + " "
            + node.path("class").textValue()
            + ": "
            + node.path("reason").textValue());
    if (!node.path("admitted").booleanValue()) {
      return Response.status(409).entity(verdict).build();
    }
    return Response.status(201)
        .entity(verdict)
        .header("Location", TidalRestServer.PREFIX + "/queues/" + queue)
        .build();
  }

  /** DELETE queues/{name}: unregisters a queue registered at run time. */
  @DELETE
  @Path("{queue}")
  public Response unregister(@Context HttpServletRequest request, @PathParam("queue") String name)
      throws RestException {
    String user = caller(request);
    String fullName = QueueManager.fullName(name);
    queues.access().check(user, QueueACL.ADMINISTER_QUEUE, fullName);
    queues.unregister(fullName, user, queues.access().isAdministrator(user));
    ObjectNode body = MAPPER.createObjectNode();
    body.put("queue", fullName);
    body.put("unregistered", true);
    RestAuditFilter.outcome(request, "queue " + fullName + " unregistered");
    return Response.ok(body.toString()).build();
  }

  /**
   * The caller of a queue change, as the authentication filter established it: 401 when there is
   * none, 501 when this cluster's HTTP authentication cannot be trusted for changes.
   */
  private String caller(HttpServletRequest request) throws RestException {
    if (unverifiedCallers != null) {
      throw new RestException(
          501, "Queue changes over this endpoint are off: " + unverifiedCallers);
    }
    String user = request.getRemoteUser();
    if (user == null) {
      throw new RestException(
              401,
              "missing "
                  + RestInput.USER_PARAM
                  + " query parameter (simple authentication): add ?"
                  + RestInput.USER_PARAM
                  + "=<your user name>")
          .header("WWW-Authenticate", "PseudoAuth");
    }
    RestInput.checkUserName(user);
    RestAuditFilter.identify(request, user);
    return user;
  }
}
