package org.tidal.yarn.bridge;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The JNI boundary to the Rust scheduling core ({@code libtidal_jni.so}).
 *
 * <p>Everything here is a thin, allocation-light call; all policy lives in Rust. Conventions:
 *
 * <ul>
 *   <li>{@code handle}: a scheduler instance returned by {@link #create}; several may coexist.
 *   <li>Node ids are small dense ints chosen by the caller. Location ids are ints the caller
 *       interns for host and rack names; {@link WireLayout#ANY_LOCATION} (0) is the YARN "*" name.
 *   <li>App keys are longs chosen by the caller (one per application attempt).
 *   <li>Allocation ids are assigned by Rust, unique per instance and below 2^40; the shim numbers
 *       containers from each attempt's own sequence, as Hadoop does, and maps between the two.
 *   <li>Every error (bad input, unknown node/app, a Rust panic) surfaces as a {@link
 *       TidalException}, carrying the app key, node id, queue or input field it is about; a panic
 *       as its subclass {@link TidalPanicException}. Nothing here aborts the JVM. Should the
 *       exception's class fail to load, a plain {@link TidalException} with its message is raised
 *       instead, or else an {@link IllegalStateException} naming it.
 *   <li>A panic while a call used an instance poisons that instance: every later call on its handle
 *       except {@link #destroy} throws {@link TidalPanicException} ("scheduler instance poisoned by
 *       an earlier panic: ..."). Rebuild it with {@link #create}, {@link #restoreState} and {@link
 *       #adoptAllocation}.
 * </ul>
 *
 * <p>The records passed in long arrays and in the heartbeat buffer (asks, decisions, settings) are
 * laid out as {@link WireLayout} says; that class is generated from the Rust bridge's declaration
 * of the layout.
 */
public final class TidalNative {
  static {
    NativeLoader.load();
  }

  private TidalNative() {}

  /**
   * Creates a scheduler instance from the queue allocation file's XML text and the settings array;
   * the handle is never 0. Throws {@link TidalException} naming the queue and field when the XML is
   * invalid.
   */
  public static native long create(String allocationXml, long[] settings);

  /** Frees an instance, poisoned or not. Unknown handles are ignored. */
  public static native void destroy(long handle);

  /**
   * Replaces the queue configuration (used by {@code yarn rmadmin -refreshQueues}). On any error
   * the running configuration stays exactly as it was and a {@link TidalException} is thrown. Apps
   * in a queue that the new file drops keep running in it until they finish.
   */
  public static native void reconfigure(long handle, String allocationXml, long[] settings);

  public static native void addNode(
      long handle,
      int nodeId,
      int hostLocation,
      int rackLocation,
      long memoryMb,
      long vcores,
      long gpus,
      long fpgas);

  /**
   * Every location id the core refers to (node hosts and racks, ask entries, blacklists), sorted;
   * any other id may name a new location.
   */
  public static native int[] locationsInUse(long handle);

  /** Removes a node and forgets every allocation still on it. */
  public static native void removeNode(long handle, int nodeId);

  public static native void updateNodeResource(
      long handle, int nodeId, long memoryMb, long vcores, long gpus, long fpgas);

  /**
   * Registers an application attempt in a queue. The queue name may be short ("a") or full
   * ("root.a"). Throws {@link TidalException} if the queue does not exist; returns the full name.
   */
  public static native String addApp(long handle, long appKey, String queue, String user);

  /**
   * The full name of the queue the allocation file's queue placement policy gives an application
   * submitted to {@code queue} by {@code user} in {@code groups} (primary first); it may not exist
   * yet. Changes nothing. Throws {@link TidalException} with the reason when the policy rejects.
   */
  public static native String placeApp(long handle, String queue, String user, String[] groups);

  /**
   * Whether the queue placement policy reads users' groups; when it does not, {@link #placeApp} and
   * {@link #submitApp} may be given none.
   */
  public static native boolean placementUsesGroups(long handle);

  /**
   * Places an application as {@link #placeApp} does, creates its queue where the placement rule
   * allows, and registers it there; returns the queue's full name. Over a running-apps limit the
   * application is accepted and waits, without containers, until it may run.
   */
  public static native String submitApp(
      long handle, long appKey, String queue, String user, String[] groups);

  /** Removes an application attempt with its asks and allocations. */
  public static native void removeApp(long handle, long appKey);

  /**
   * The body of {@code allocate()}: ask records (each replaces the outstanding count for its
   * priority and location, as in YARN), released allocation ids, and blacklist changes as location
   * ids. Called from RPC handler threads concurrently with heartbeats.
   *
   * <p>The releases are checked whole before any is applied: an id outside [0, 2^40) or one of
   * another application's live allocation refuses the call ({@link TidalInvalidInputException}
   * naming it) with nothing released and the asks unchanged. An id of no live allocation (its
   * container ended already) is skipped, as {@link #releaseAllocation} skips it. Valid releases
   * stand even when the core then refuses the asks.
   */
  public static native void allocate(
      long handle,
      long appKey,
      long[] asks,
      long[] releases,
      int[] blacklistAdditions,
      int[] blacklistRemovals);

  /**
   * One node heartbeat through {@code exchange}, a buffer from {@link #heartbeatBuffer} that
   * carries both ways with nothing copied across the boundary: the caller puts the {@code
   * completedCount} completed allocation ids as longs at its start; the call frees them, decides
   * what to start on the node, writes up to {@code maxDecisions} decision records ({@link
   * WireLayout#DECISION_STRIDE} longs each) from the start and returns how many. The buffer must
   * hold {@code max(completedCount, maxDecisions * DECISION_STRIDE)} longs.
   */
  public static native int nodeHeartbeat(
      long handle,
      int nodeId,
      long nowMs,
      ByteBuffer exchange,
      int completedCount,
      int maxDecisions);

  /** A buffer of {@code longs} longs for {@link #nodeHeartbeat}: direct, in native byte order. */
  public static ByteBuffer heartbeatBuffer(int longs) {
    return ByteBuffer.allocateDirect(longs * Long.BYTES).order(ByteOrder.nativeOrder());
  }

  /**
   * Frees one allocation outside a heartbeat (killed, expired, preempted, or a decision the shim
   * could not turn into a container). Unknown ids are a logged no-op, so the call is idempotent.
   */
  public static native void releaseAllocation(long handle, long allocationId);

  /**
   * Books a container that already runs (reported by a NodeManager after an RM restart, or fed
   * again after the instance was rebuilt) as a heartbeat books a new one, and returns its new
   * allocation id (below 2^40). It takes nothing from the app's asks: the AM sends its outstanding
   * asks again. A container that overcommits its node is adopted all the same. Throws {@link
   * TidalNotFoundException} for an unknown app or node and {@link TidalInvalidInputException} for
   * negative or oversized resources.
   */
  public static native long adoptAllocation(
      long handle,
      long appKey,
      int nodeId,
      int priority,
      long memoryMb,
      long vcores,
      long gpus,
      long fpgas);

  /**
   * Sets an app's application priority: its queue's apps are tried highest priority first, then in
   * submission order. Throws {@link TidalNotFoundException} for an unknown app.
   */
  public static native void setAppPriority(long handle, long appKey, int priority);

  /**
   * Books a container that Hadoop's placement-constraint processor placed on a node, when the
   * node's free space and the queue's limits have room for it, and returns its allocation id (below
   * 2^40); -1 when they have not. It takes nothing from the app's asks. Throws {@link
   * TidalNotFoundException} for an unknown app or node and {@link TidalInvalidInputException} for
   * negative or oversized resources.
   */
  public static native long placeOnNode(
      long handle,
      long appKey,
      int nodeId,
      int priority,
      long memoryMb,
      long vcores,
      long gpus,
      long fpgas);

  /**
   * Tidal's own durable state as JSON (version 2): the clock, the queues registered at run time
   * with their owners, each queue's usage history, the queue policy's state and the recent end of
   * {@link #historyJson} (under 300 KB). Store it and give it to {@link #restoreState} of a new
   * instance after an RM restart or a poisoned instance.
   */
  public static native String snapshotState(long handle);

  /**
   * Restores a {@link #snapshotState} document into an instance created from the allocation file
   * that has no applications yet (else {@link TidalConflictException}); nodes may already be there.
   * Returns a summary as JSON: {@code {"policy_restored":..,"queues":[{"name":..,
   * "runtime":..,"admitted":..,"class":..}],"warnings":[..]}}. Throws {@link
   * TidalInvalidInputException} naming the field for a malformed document or a version this build
   * does not read (it reads 1 and 2); the instance is then unchanged.
   */
  public static native String restoreState(long handle, String snapshotJson);

  /**
   * Test only: the next {@link #nodeHeartbeat} lets the core decide (and book) its containers, then
   * panics before writing the decisions out, which poisons the instance. Throws {@link
   * TidalForbiddenException} unless the instance was created with {@link
   * WireLayout#SET_FAULT_INJECTION} set to 1.
   */
  public static native void armHeartbeatPanic(long handle);

  /**
   * Registers a queue at run time from a {@code <queue>} element of the allocation-file format and
   * returns the admission verdict as JSON: {@code {"queue":..,"class":"hard|soft|elastic|
   * rejected","reason":..}}. The caller becomes the owner. A rejected queue is not kept. Throws
   * {@link TidalException} for invalid XML or an existing queue name.
   */
  public static native String registerQueue(
      long handle, String queueXml, String user, boolean admin);

  /**
   * Removes a queue registered at run time; only its owner or an administrator may. Queues from the
   * allocation file are refused. Running applications finish.
   */
  public static native void unregisterQueue(long handle, String queue, String user, boolean admin);

  /**
   * Stores what an application's AM says about its job: a hints JSON document (schema version 1)
   * with its DAG (stages, per-task demand and duration, parents, the request priorities of each
   * stage), its progress, or both; a progress-only document updates the stored DAG. Returns the
   * reply as JSON: {@code {"version":1,"app":..,"revision":..,"stages":..,
   * "pending_tasks":..,"advisories":[..]}}. Throws {@link TidalException} naming the field for
   * malformed or oversized (over 1 MiB) documents, cycles, unknown stages, non-positive durations
   * or priorities that match none of the app's requests; the app then keeps its previous hints, or
   * none. The caller must have checked that the AM owns {@code appKey}.
   */
  public static native String setHints(long handle, long appKey, String hintsJson);

  /**
   * The full name of a queue: "a" and "root.a" name the same queue; null, "" and "root" name the
   * root. Queue names are built by the core alone.
   */
  public static native String fullQueueName(String queueName);

  /** Queue state as JSON for {@code yarn queue -status}, REST and the web UI. */
  public static native String queueStatusJson(long handle);

  /**
   * What the core recorded over time, as JSON: per-queue share samples taken after {@code sinceMs}
   * (oldest first), and every latency-sensitive burst and admission decision it still keeps
   * (bounded; the oldest are dropped first). Times are the core's clock, the {@code nowMs} of
   * {@link #nodeHeartbeat}; samples are taken by heartbeats once that clock has advanced by the
   * sample interval (1 s).
   */
  public static native String historyJson(long handle, long sinceMs);

  /**
   * Takes the buffered log records of the Rust core, one per line as {@code
   * LEVEL<TAB>target<TAB>message}; empty when there are none.
   */
  public static native String drainLogs();

  /** Panics inside Rust on purpose; tests use it to prove a panic becomes an exception. */
  public static native void diagnosticPanic(String message);
}
