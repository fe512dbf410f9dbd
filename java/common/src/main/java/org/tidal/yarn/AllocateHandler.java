package org.tidal.yarn;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerEventType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Allocation;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AppSchedulingInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerUtils;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerApp;
import org.apache.hadoop.yarn.util.resource.Resources;
import org.tidal.yarn.bridge.CoreInstance;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.WireLayout;

/**
 * The ApplicationMasters' side of scheduling: an allocate call's asks, releases and blacklist
 * changes go to Hadoop's bookkeeping and, packed as ask records, to the core, and the containers
 * started for the attempt since its last call go back. Asks that Hadoop restores for a container
 * killed before its AM pulled it reach the core the same way. Runs on the RM's RPC threads under
 * the attempt's monitor only, as FifoScheduler's allocate does.
 */
final class AllocateHandler {
  private static final Log LOG = LogFactory.getLog(AllocateHandler.class);
  private static final long[] NO_IDS = new long[0];

  private final TidalScheduler scheduler;
  private final AppAttemptRegistry attempts;
  private final ContainerCompletion completion;
  private final CoreInstance core;
  private final LocationTable locations;
  private final LineBookkeeping line;
  private final Allocation emptyAllocation;
  private final AllocationIds ids;
  private final UsageMetrics usage;

  AllocateHandler(
      TidalScheduler scheduler,
      AppAttemptRegistry attempts,
      ContainerCompletion completion,
      CoreInstance core,
      LocationTable locations,
      LineBookkeeping line,
      Allocation emptyAllocation,
      AllocationIds ids,
      UsageMetrics usage) {
    this.ids = ids;
    this.usage = usage;
    this.scheduler = scheduler;
    this.attempts = attempts;
    this.completion = completion;
    this.core = core;
    this.locations = locations;
    this.line = line;
    this.emptyAllocation = emptyAllocation;
  }

  Allocation allocate(
      ApplicationAttemptId attemptId,
      List<ResourceRequest> ask,
      List<ContainerId> release,
      List<String> blacklistAdditions,
      List<String> blacklistRemovals) {
    FiCaSchedulerApp application = attempts.current(attemptId);
    if (application == null) {
      LOG.error("allocate called for unknown or previous attempt " + attemptId);
      return emptyAllocation;
    }
    Long key = attempts.key(attemptId);
    if (key == null) {
      LOG.error("allocate called for attempt " + attemptId + " that the core does not know");
      return emptyAllocation;
    }
    line.normalize(ask);
    long[] released = release(release, application);

    synchronized (application) {
      if (application.isStopped()) {
        LOG.info("allocate called for stopped attempt " + attemptId);
        return emptyAllocation;
      }
      if (!ask.isEmpty()) {
        application.updateResourceRequests(ask);
      }
      application.updateBlacklist(blacklistAdditions, blacklistRemovals);
      boolean noBlacklistChange =
          (blacklistAdditions == null || blacklistAdditions.isEmpty())
              && (blacklistRemovals == null || blacklistRemovals.isEmpty());
      if (!ask.isEmpty() || released.length > 0 || !noBlacklistChange) {
        try (LocationTable.Batch names = locations.batch()) {
          TidalNative.allocate(
              core.handle(),
              key,
              packAsks(ask, names),
              released,
              names.internAll(blacklistAdditions),
              names.internAll(blacklistRemovals));
        } catch (TidalException e) {
          // Containers already started must still reach the AM, so the call goes on.
          LOG.error("Tidal core rejected allocate of " + attemptId + ": " + e.getMessage(), e);
        }
      }
      // A copy per attempt: Hadoop's attempt records may adjust their headroom in place.
      Resource headroom = Resources.clone(usage.headroom());
      application.setHeadroom(headroom);
      application.setApplicationHeadroomForMetrics(headroom);
      return line.pullAllocation(application, headroom);
    }
  }

  /** Completes released containers; returns the allocation ids this call freed. */
  private long[] release(List<ContainerId> release, FiCaSchedulerApp application) {
    if (release == null || release.isEmpty()) {
      return NO_IDS;
    }
    long[] freed = new long[release.size()];
    int count = 0;
    for (ContainerId containerId : release) {
      RMContainer container = scheduler.getRMContainer(containerId);
      long allocationId = ids.allocationId(containerId);
      if (container == null) {
        // Hadoop's path: remember it across an RM restart or audit-log the bad release.
        scheduler.releaseUnknownContainer(containerId, application);
      } else if (completion.complete(
              container,
              SchedulerUtils.createAbnormalContainerStatus(
                  containerId, SchedulerUtils.RELEASED_CONTAINER),
              RMContainerEventType.RELEASED)
          && allocationId != AllocationIds.NONE) {
        freed[count++] = allocationId;
      }
    }
    return count == freed.length ? freed : Arrays.copyOf(freed, count);
  }

  /**
   * A container killed before its AM pulled it, whose {@code requests} Hadoop has put back: the
   * core gets the restored outstanding counts as fresh asks.
   */
  void restoreAsks(RMContainer container, List<ResourceRequest> requests) {
    FiCaSchedulerApp attempt = scheduler.getCurrentAttemptForContainer(container.getContainerId());
    if (attempt == null || requests == null) {
      return;
    }
    Long key = attempts.key(attempt.getApplicationAttemptId());
    if (key == null) {
      return;
    }
    synchronized (attempt) {
      List<ResourceRequest> restored = new ArrayList<ResourceRequest>(requests.size());
      for (ResourceRequest request : requests) {
        for (ResourceRequest current : attempt.getAppSchedulingInfo().getAllResourceRequests()) {
          if (current.getPriority().equals(request.getPriority())
              && current.getResourceName().equals(request.getResourceName())) {
            restored.add(current);
          }
        }
      }
      try (LocationTable.Batch names = locations.batch()) {
        TidalNative.allocate(core.handle(), key, packAsks(restored, names), NO_IDS, null, null);
      }
    }
  }

  /**
   * Gives a rebuilt core an attempt's outstanding asks and blacklist as Hadoop holds them, which
   * every allocate call has kept up to date.
   */
  void replay(FiCaSchedulerApp attempt, long key) {
    synchronized (attempt) {
      AppSchedulingInfo info = attempt.getAppSchedulingInfo();
      List<ResourceRequest> outstanding = info.getAllResourceRequests();
      List<String> blacklist = new ArrayList<String>(info.getBlackListCopy());
      try (LocationTable.Batch names = locations.batch()) {
        TidalNative.allocate(
            core.handle(),
            key,
            packAsks(outstanding, names),
            NO_IDS,
            names.internAll(blacklist),
            null);
      }
    }
  }

  private long[] packAsks(List<ResourceRequest> asks, LocationTable.Batch names) {
    long[] packed = new long[asks.size() * WireLayout.ASK_STRIDE];
    int offset = 0;
    for (ResourceRequest ask : asks) {
      packed[offset + WireLayout.ASK_PRIORITY] = ask.getPriority().getPriority();
      packed[offset + WireLayout.ASK_LOCATION] = names.intern(ask.getResourceName());
      packed[offset + WireLayout.ASK_NUM_CONTAINERS] = ask.getNumContainers();
      packed[offset + WireLayout.ASK_RELAX_LOCALITY] = ask.getRelaxLocality() ? 1 : 0;
      packed[offset + WireLayout.ASK_MEMORY_MB] = ask.getCapability().getMemory();
      packed[offset + WireLayout.ASK_VCORES] = ask.getCapability().getVirtualCores();
      packed[offset + WireLayout.ASK_GPUS] = line.devices(ask.getCapability(), LineBookkeeping.GPU);
      packed[offset + WireLayout.ASK_FPGAS] =
          line.devices(ask.getCapability(), LineBookkeeping.FPGA);
      offset += WireLayout.ASK_STRIDE;
    }
    return packed;
  }
}
