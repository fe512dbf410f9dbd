// Generated from rust/jni/src/layout.rs by
//   cargo run -p tidal-jni --bin java-layout -- --write
// Do not edit it by hand: change the table there and regenerate; a test of tidal-jni fails
// while this file differs from what the table generates.
package org.tidal.yarn.bridge;

/**
 * The layout of the records {@link TidalNative} passes across JNI in long arrays and in the
 * heartbeat exchange buffer: ask records, decision records and the settings array, the values their
 * fields take, and the version of the contract between the jar and the native library. The Rust
 * bridge reads and writes the same records by the same names.
 */
public final class WireLayout {
  /**
   * The version of the contract between the native library and the Java shim: the native methods of
   * {@link TidalNative} and this layout. {@link NativeLoader} refuses a library whose number
   * differs from the jar's, because a jar and a library from different builds would pass arguments
   * the other side reads as other types and crash the JVM. Bump it in the Rust table whenever a
   * native method or a layout value changes (a test holds it to a fingerprint of both).
   */
  public static final int BRIDGE_VERSION = 7;

  /** Location id of the YARN "any" resource name ({@code ResourceRequest.ANY}). */
  public static final int ANY_LOCATION = 0;

  /** Longs per ask record passed to {@link TidalNative#allocate}. */
  public static final int ASK_STRIDE = 8;

  /** Ask record field: the priority of the request. */
  public static final int ASK_PRIORITY = 0;

  /**
   * Ask record field: the location id of the request's resource name (a host, a rack or {@link
   * #ANY_LOCATION}).
   */
  public static final int ASK_LOCATION = 1;

  /**
   * Ask record field: how many containers are outstanding at the priority and location; it replaces
   * the earlier count, as in YARN.
   */
  public static final int ASK_NUM_CONTAINERS = 2;

  /** Ask record field: whether the containers may be placed away from the location: 1 yes, 0 no. */
  public static final int ASK_RELAX_LOCALITY = 3;

  /** Ask record field: the memory of each container in MB. */
  public static final int ASK_MEMORY_MB = 4;

  /** Ask record field: the virtual cores of each container. */
  public static final int ASK_VCORES = 5;

  /** Ask record field: the GPUs ({@code yarn.io/gpu}) of each container. */
  public static final int ASK_GPUS = 6;

  /** Ask record field: the FPGAs ({@code yarn.io/fpga}) of each container. */
  public static final int ASK_FPGAS = 7;

  /** Longs per decision record written by {@link TidalNative#nodeHeartbeat}. */
  public static final int DECISION_STRIDE = 9;

  /**
   * Decision record field: the allocation id of the container to start (0 for a reservation made or
   * ended).
   */
  public static final int DEC_ALLOCATION_ID = 0;

  /** Decision record field: the key of the application attempt. */
  public static final int DEC_APP_KEY = 1;

  /** Decision record field: the priority of the ask it serves. */
  public static final int DEC_PRIORITY = 2;

  /**
   * Decision record field: how close to its data the container is placed, a {@code LOCALITY_}
   * value.
   */
  public static final int DEC_LOCALITY = 3;

  /** Decision record field: the memory of the container in MB. */
  public static final int DEC_MEMORY_MB = 4;

  /** Decision record field: the virtual cores of the container. */
  public static final int DEC_VCORES = 5;

  /** Decision record field: what to do, a {@code KIND_} value. */
  public static final int DEC_KIND = 6;

  /** Decision record field: the GPUs of the container. */
  public static final int DEC_GPUS = 7;

  /** Decision record field: the FPGAs of the container. */
  public static final int DEC_FPGAS = 8;

  /** Value of the {@link #DEC_KIND} field: start a container. */
  public static final int KIND_START = 0;

  /** Value of the {@link #DEC_KIND} field: reserve the node for the ask (no allocation id). */
  public static final int KIND_RESERVE = 1;

  /**
   * Value of the {@link #DEC_KIND} field: end the app's reservation on the node without a
   * container.
   */
  public static final int KIND_UNRESERVE = 2;

  /** Value of the {@link #DEC_LOCALITY} field: on a host the ask named. */
  public static final int LOCALITY_NODE = 0;

  /** Value of the {@link #DEC_LOCALITY} field: on a rack the ask named. */
  public static final int LOCALITY_RACK = 1;

  /** Value of the {@link #DEC_LOCALITY} field: anywhere else. */
  public static final int LOCALITY_OFF_SWITCH = 2;

  /**
   * Longs in the settings array passed to {@link TidalNative#create} and {@link
   * TidalNative#reconfigure}.
   */
  public static final int SETTINGS_LEN = 8;

  /** Settings field: the memory of YARN's minimum allocation in MB. */
  public static final int SET_MIN_MEMORY_MB = 0;

  /** Settings field: the virtual cores of YARN's minimum allocation. */
  public static final int SET_MIN_VCORES = 1;

  /** Settings field: the memory of YARN's maximum allocation in MB. */
  public static final int SET_MAX_MEMORY_MB = 2;

  /** Settings field: the virtual cores of YARN's maximum allocation. */
  public static final int SET_MAX_VCORES = 3;

  /** Settings field: the most containers one heartbeat assigns. */
  public static final int SET_MAX_ASSIGN_PER_HEARTBEAT = 4;

  /**
   * Settings field, the bridge's own (not a core setting): whether the instance allows fault
   * injection ({@link TidalNative#armHeartbeatPanic}): 1 on, 0 off. Read by {@link
   * TidalNative#create} only; {@link TidalNative#reconfigure} ignores it.
   */
  public static final int SET_FAULT_INJECTION = 5;

  /**
   * Settings field: whether nodes are reserved for asks larger than their free space: 1 on, 0 off.
   */
  public static final int SET_RESERVE_CONTAINERS = 6;

  /**
   * Settings field: the AM share of the queues the queue file gives none, in parts per million (-1:
   * none).
   */
  public static final int SET_DEFAULT_MAX_AM_SHARE_PPM = 7;

  private WireLayout() {}
}
