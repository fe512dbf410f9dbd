package org.tidal.it3;

import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.RejectedSchedulingRequest;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.SchedulingRequest;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.api.resource.PlacementConstraint;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;

/**
 * An application whose AM is this JVM: submitted unmanaged, registered with its AMRM token (and,
 * when given, the app's placement constraints by allocation tags), and unregistered on close. Its
 * containers are granted but never launched.
 */
final class UnmanagedAm implements AutoCloseable {
  final List<Container> held = new ArrayList<>();
  final List<RejectedSchedulingRequest> rejected = new ArrayList<>();
  private final UserGroupInformation ugi;
  private final AMRMClient<ContainerRequest> client;

  private UnmanagedAm(UserGroupInformation ugi, AMRMClient<ContainerRequest> client) {
    this.ugi = ugi;
    this.client = client;
  }

  static UnmanagedAm start(YarnClient yarn, Configuration conf, String queue) throws Exception {
    return start(yarn, conf, queue, Collections.emptyMap());
  }

  static UnmanagedAm start(
      YarnClient yarn,
      Configuration conf,
      String queue,
      Map<Set<String>, PlacementConstraint> constraints)
      throws Exception {
    ApplicationSubmissionContext context =
        yarn.createApplication().getApplicationSubmissionContext();
    ApplicationId app = context.getApplicationId();
    context.setApplicationName("unmanaged-it-" + queue);
    context.setQueue(queue);
    context.setUnmanagedAM(true);
    context.setResource(Resource.newInstance(256, 1));
    context.setAMContainerSpec(
        ContainerLaunchContext.newInstance(null, null, null, null, null, null));
    yarn.submitApplication(context);
    ApplicationAttemptId attempt = awaitLaunched(yarn, app);
    Token<AMRMTokenIdentifier> token = yarn.getAMRMToken(app);
    token.setService(ClientRMProxy.getAMRMTokenService(conf));
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(attempt.toString());
    ugi.addToken(token);
    AMRMClient<ContainerRequest> client =
        ugi.doAs(
            (PrivilegedExceptionAction<AMRMClient<ContainerRequest>>)
                () -> {
                  AMRMClient<ContainerRequest> c = AMRMClient.createAMRMClient();
                  c.init(conf);
                  c.start();
                  c.registerApplicationMaster("localhost", 0, "", constraints);
                  return c;
                });
    return new UnmanagedAm(ugi, client);
  }

  private static ApplicationAttemptId awaitLaunched(YarnClient yarn, ApplicationId app)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      ApplicationReport report = yarn.getApplicationReport(app);
      ApplicationAttemptId attempt = report.getCurrentApplicationAttemptId();
      if (attempt != null
          && yarn.getApplicationAttemptReport(attempt).getYarnApplicationAttemptState()
              == YarnApplicationAttemptState.LAUNCHED) {
        return attempt;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(app + " was not launched: " + report);
      }
      Thread.sleep(100);
    }
  }

  /** Asks for {@code count} containers of {@code capability}, anywhere. */
  void ask(Resource capability, int count) {
    for (int i = 0; i < count; i++) {
      client.addContainerRequest(
          new ContainerRequest(capability, null, null, Priority.newInstance(1)));
    }
  }

  /** Sends a scheduling request (Hadoop 3's placement-constrained ask). */
  void ask(SchedulingRequest request) {
    client.addSchedulingRequests(Collections.singletonList(request));
  }

  /** One allocate call: keeps what it grants and what it rejects. */
  void poll() throws Exception {
    ugi.doAs(
        (PrivilegedExceptionAction<Void>)
            () -> {
              AllocateResponse response = client.allocate(0.5f);
              held.addAll(response.getAllocatedContainers());
              rejected.addAll(response.getRejectedSchedulingRequests());
              return null;
            });
  }

  @Override
  public void close() throws Exception {
    ugi.doAs(
        (PrivilegedExceptionAction<Void>)
            () -> {
              client.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "", "");
              client.stop();
              return null;
            });
  }
}
