package org.tidal.yarn;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.tidal.yarn.bridge.TidalException;
import org.tidal.yarn.bridge.TidalNative;
import org.tidal.yarn.bridge.WireLayout;

/**
 * Interns host and rack names to the int location ids of the native interface, and forgets the
 * names the core no longer refers to, so the table holds about the names in use rather than every
 * name ever seen. The core is the one that knows which ids it refers to (nodes, ask entries,
 * blacklists: {@link TidalNative#locationsInUse}); an id it does not refer to is freed and may name
 * a new location. Between interning a name and handing its id to the core a caller holds the id in
 * a {@link Batch}, which keeps it from being freed until the batch is closed, after the native
 * call. Ids are not cached anywhere else: every call interns its names again.
 */
final class LocationTable {
  private static final Log LOG = LogFactory.getLog(LocationTable.class);
  private static final int[] EMPTY = new int[0];

  /** Below this many names the table is never swept. */
  static final int MIN_SWEEP_SIZE = 4096;

  /** The ids the core refers to now. */
  interface InUse {
    int[] ids();
  }

  /** A name's id and how many open batches hold it. */
  private static final class Entry {
    final int id;

    /** Batches holding the id and not closed yet. */
    int pins;

    Entry(int id) {
      this.id = id;
    }
  }

  private final InUse inUse;
  private final Map<String, Entry> byName = new HashMap<String, Entry>();
  private final List<Integer> freeIds = new ArrayList<Integer>();
  private int nextId = WireLayout.ANY_LOCATION + 1;

  /** Sweeps once the table has grown to this size: twice what the last sweep kept. */
  private int sweepAt = MIN_SWEEP_SIZE;

  LocationTable(InUse inUse) {
    this.inUse = inUse;
  }

  /** A batch of names resolved for one call to the core. */
  Batch batch() {
    return new Batch();
  }

  /** Names in the table. */
  synchronized int size() {
    return byName.size();
  }

  /**
   * The ids interned for one native call; they keep their names until {@link #close}, which the
   * caller does once the call returned (the core then refers to the ids it keeps).
   */
  final class Batch implements AutoCloseable {
    private final List<Entry> pinned = new ArrayList<Entry>();

    int intern(String name) {
      if (ResourceRequest.ANY.equals(name)) {
        return WireLayout.ANY_LOCATION;
      }
      synchronized (LocationTable.this) {
        Entry entry = byName.get(name);
        if (entry == null) {
          entry = new Entry(freeIds.isEmpty() ? nextId++ : freeIds.remove(freeIds.size() - 1));
          byName.put(name, entry);
        }
        entry.pins++;
        pinned.add(entry);
        return entry.id;
      }
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

    @Override
    public void close() {
      synchronized (LocationTable.this) {
        for (Entry entry : pinned) {
          entry.pins--;
        }
        pinned.clear();
        if (byName.size() >= sweepAt) {
          sweep();
        }
      }
    }
  }

  /**
   * Frees every name whose id the core does not refer to and no open batch holds. Runs under the
   * table's monitor, so no name is interned meanwhile. A core that cannot answer (a panic being
   * recovered from) frees nothing this time.
   */
  private void sweep() {
    BitSet live = new BitSet(nextId);
    try {
      for (int id : inUse.ids()) {
        live.set(id);
      }
    } catch (TidalException e) {
      LOG.warn("Location names not swept: " + e.getMessage());
      sweepAt = 2 * byName.size();
      return;
    }
    int before = byName.size();
    for (Iterator<Entry> it = byName.values().iterator(); it.hasNext(); ) {
      Entry entry = it.next();
      if (entry.pins == 0 && !live.get(entry.id)) {
        it.remove();
        freeIds.add(entry.id);
      }
    }
    sweepAt = Math.max(MIN_SWEEP_SIZE, 2 * byName.size());
    LOG.debug("Location names swept: " + before + " -> " + byName.size());
  }
}
