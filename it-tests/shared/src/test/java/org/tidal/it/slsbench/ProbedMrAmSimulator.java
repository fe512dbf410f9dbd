package org.tidal.it.slsbench;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateRequest;
import org.apache.hadoop.yarn.api.protocolrecords.AllocateResponse;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.sls.appmaster.MRAMSimulator;

/**
 * SLS's MapReduce AM, timing each task container from the allocate call that asked for it to the
 * allocate response that carried it, as the AM sees it (so at least one AM heartbeat). An ask's
 * count at a priority is the outstanding total, as the scheduler takes it: a higher count adds asks
 * stamped now, a lower one drops the newest. Containers match the oldest ask of their priority. The
 * AM's own container is not asked for through allocate and is not counted.
 */
public class ProbedMrAmSimulator extends MRAMSimulator {
  /** Per priority, when each outstanding container was asked for (ms, {@link SlsProbe#nowMs}). */
  private final Map<Integer, Deque<Long>> outstanding = new HashMap<>();

  @Override
  protected AllocateRequest createAllocateRequest(List<ResourceRequest> ask) {
    long now = SlsProbe.nowMs();
    for (ResourceRequest r : ask) {
      if (ResourceRequest.ANY.equals(r.getResourceName())) {
        Deque<Long> asks =
            outstanding.computeIfAbsent(r.getPriority().getPriority(), p -> new ArrayDeque<>());
        while (asks.size() < r.getNumContainers()) {
          asks.addLast(now);
        }
        while (asks.size() > r.getNumContainers()) {
          asks.removeLast();
        }
      }
    }
    return super.createAllocateRequest(ask);
  }

  /** Both lines' MRAMSimulator put the response of the allocate call they send on the queue. */
  @Override
  protected void sendContainerRequest() throws YarnException, IOException, InterruptedException {
    int earlier = responseQueue.size();
    super.sendContainerRequest();
    long now = SlsProbe.nowMs();
    Iterator<AllocateResponse> responses = responseQueue.iterator();
    for (int i = 0; i < earlier && responses.hasNext(); i++) {
      responses.next();
    }
    while (responses.hasNext()) {
      for (Container c : responses.next().getAllocatedContainers()) {
        Deque<Long> asks = outstanding.get(c.getPriority().getPriority());
        Long asked = asks == null ? null : asks.pollFirst();
        SlsProbe.allocated(queue, asked == null ? -1 : now - asked);
      }
    }
  }
}
