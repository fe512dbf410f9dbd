package org.tidal.yarn;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.yarn.api.records.ResourceRequest;

/**
 * Interns host and rack names to the int location ids of the native interface. Ids are never reused
 * or removed, so an id handed to the core stays valid for the life of the scheduler.
 */
final class LocationTable {
  private static final int[] EMPTY = new int[0];

  private final ConcurrentMap<String, Integer> ids = new ConcurrentHashMap<String, Integer>();
  private final AtomicInteger next = new AtomicInteger(TidalNative.ANY_LOCATION + 1);

  int intern(String name) {
    if (ResourceRequest.ANY.equals(name)) {
      return TidalNative.ANY_LOCATION;
    }
    Integer id = ids.get(name);
    if (id != null) {
      return id;
    }
    Integer fresh = next.getAndIncrement();
    Integer raced = ids.putIfAbsent(name, fresh);
    return raced != null ? raced : fresh;
  }

  int[] internAll(List<String> names) {
    if (names == null || names.isEmpty()) {
      return EMPTY;
    }
    int[] out = new int[names.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = intern(names.get(i));
    }
    return out;
  }
}
