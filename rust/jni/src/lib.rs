//! The JNI bridge between the Java shim (`org.tidal.yarn.bridge.TidalNative`) and `tidal-core`.
//!
//! This crate knows JNI and nothing of policy: every entry point decodes primitive arrays (the
//! node heartbeat, the hot path, a direct buffer that it reads and writes in place), calls one
//! method of [`tidal_core::Scheduler`], encodes the answer, and maps failures to Java
//! exceptions. The wire layout is declared once, in [`layout`], which generates the Java side's
//! `WireLayout.java`; [`wire`] encodes and decodes it.
//!
//! Safety net: every entry point runs inside [`guard`], which catches Rust panics and raises
//! `TidalPanicException`, and turns `Err` into the `TidalException` subclass of its kind, with
//! fields saying what the failure is about (see [`error`]). A panic never unwinds into the JVM,
//! which would abort it, and a failed call always leaves an exception pending: when its class
//! cannot be raised, a plainer one is.
//!
//! Poisoning: a panic caught while a call was using a scheduler instance may have left that
//! instance half updated, so the instance is marked poisoned with the panic's message and every
//! later call on its handle but `destroy` raises `TidalPanicException`. The shim then builds a
//! new instance (from a snapshot, adopting the running containers). The instance lock does not
//! poison itself, hence the explicit flag.
//!
//! Fault injection, for tests of that recovery: an instance created with the fault-injection
//! flag of the settings array may be armed to panic in its next heartbeat after the core booked
//! its decisions and before they reach Java: a core that started containers the RM never
//! learns of, the worst case.

pub mod error;
pub mod layout;
mod log_buffer;
pub mod wire;

pub use error::exceptions;
pub use layout::BRIDGE_VERSION;

use jni::objects::{JByteBuffer, JClass, JIntArray, JLongArray, JObjectArray, JString};
use jni::sys::{jboolean, jint, jintArray, jlong, jstring};
use jni::JNIEnv;
use once_cell::sync::Lazy;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use tidal_core::request::Ask;
use tidal_core::scheduler::Caller;
use tidal_core::status::SchedulerStatus;
use tidal_core::{Decision, Scheduler};

use error::{BridgeError, BridgeResult};

/// A scheduler plus scratch buffers reused across calls so the heartbeat does not allocate.
struct Instance {
    scheduler: Scheduler,
    decisions: Vec<Decision>,
    longs: Vec<i64>,
    ids: Vec<u64>,
    asks: Vec<Ask>,
    /// Created with fault injection allowed.
    fault_injection: bool,
    /// The next heartbeat panics after the core decided.
    heartbeat_panic_armed: bool,
    /// The message of the panic that poisoned the instance.
    poisoned: Option<String>,
}

impl Instance {
    fn new(scheduler: Scheduler, fault_injection: bool) -> Instance {
        Instance {
            scheduler,
            decisions: Vec::new(),
            longs: Vec::new(),
            ids: Vec::new(),
            asks: Vec::new(),
            fault_injection,
            heartbeat_panic_armed: false,
            poisoned: None,
        }
    }
}

/// The refusal of `armHeartbeatPanic` on an instance created without fault injection.
pub const FAULT_INJECTION_DISABLED: &str =
    "fault injection is disabled; the shim enables it only when tidal.test.fault-injection is true";

/// The prefix of the error every call on a poisoned instance raises.
pub const POISONED: &str = "scheduler instance poisoned by an earlier panic";

/// Live instances by handle. Several may coexist (tests run more than one RM in a JVM).
static INSTANCES: Lazy<RwLock<HashMap<jlong, Arc<Mutex<Instance>>>>> = Lazy::new(Default::default);
static NEXT_HANDLE: AtomicI64 = AtomicI64::new(1);

/// Runs an entry point's body, converting errors and panics into Java exceptions. Returns
/// `R::default()` when an exception was raised (Java ignores the value then).
fn guard<'local, R: Default>(env: &mut JNIEnv<'local>, body: impl FnOnce(&mut JNIEnv<'local>) -> BridgeResult<R>) -> R {
    log_buffer::install();
    let error = match catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(Ok(value)) => return value,
        Ok(Err(error)) => error,
        Err(payload) => {
            BridgeError::new(exceptions::PANIC, format!("panic in Tidal native code: {}", panic_message(&*payload)))
        }
    };
    // A JNI failure may already have left a Java exception pending; that one wins.
    if !env.exception_check().unwrap_or(true) {
        error::raise(env, &error);
    }
    R::default()
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

fn instance(handle: jlong) -> BridgeResult<Arc<Mutex<Instance>>> {
    INSTANCES
        .read()
        .get(&handle)
        .cloned()
        .ok_or_else(|| BridgeError::new(exceptions::BRIDGE, format!("unknown or destroyed scheduler handle {handle}")))
}

/// Runs `body` on the instance behind `handle`, holding its lock (see [`unpoisoned`]).
fn with_instance<R>(handle: jlong, body: impl FnOnce(&mut Instance) -> BridgeResult<R>) -> BridgeResult<R> {
    let entry = instance(handle)?;
    let mut inst = entry.lock();
    unpoisoned(&mut inst, body)
}

/// Runs `body` on an instance that is not poisoned, and poisons it when `body` panics; the
/// panic then goes on to [`guard`]. Allocates nothing unless it fails.
fn unpoisoned<R>(inst: &mut Instance, body: impl FnOnce(&mut Instance) -> BridgeResult<R>) -> BridgeResult<R> {
    if let Some(message) = &inst.poisoned {
        return Err(BridgeError::new(exceptions::PANIC, format!("{POISONED}: {message}")));
    }
    match catch_unwind(AssertUnwindSafe(|| body(inst))) {
        Ok(result) => result,
        Err(payload) => {
            let message = panic_message(&*payload);
            tracing::error!(%message, "scheduler instance poisoned by a panic");
            inst.poisoned = Some(message);
            resume_unwind(payload)
        }
    }
}

/// Arms the heartbeat fault, if the instance allows fault injection.
fn arm_heartbeat_panic(inst: &mut Instance) -> BridgeResult<()> {
    if !inst.fault_injection {
        return Err(BridgeError::new(exceptions::FORBIDDEN, FAULT_INJECTION_DISABLED.to_string()));
    }
    inst.heartbeat_panic_armed = true;
    Ok(())
}

/// The heartbeat on an instance whose `ids` hold the completed allocations: decides into
/// `decisions` and encodes them into `longs`. An armed fault panics (and disarms) after the core
/// decided and before the decisions are encoded.
fn heartbeat(inst: &mut Instance, node: u32, now_ms: i64, max_decisions: usize) -> BridgeResult<usize> {
    let Instance { scheduler, decisions, longs, ids, heartbeat_panic_armed, .. } = inst;
    decisions.clear();
    let made = scheduler.node_heartbeat(node, now_ms, ids, decisions, max_decisions)?;
    if std::mem::take(heartbeat_panic_armed) {
        panic!("injected fault: heartbeat panic after the core booked {made} containers");
    }
    wire::encode_decisions(decisions, longs);
    Ok(made)
}

fn string(env: &mut JNIEnv, s: &JString, what: &str) -> BridgeResult<String> {
    if s.is_null() {
        return Err(BridgeError::invalid(format!("{what} must not be null")));
    }
    Ok(env.get_string(s)?.into())
}

/// Copies a Java long[] into `buf` (cleared first). A null array reads as empty.
fn read_longs(env: &mut JNIEnv, array: &JLongArray, buf: &mut Vec<i64>) -> BridgeResult<()> {
    buf.clear();
    if array.is_null() {
        return Ok(());
    }
    let len = env.get_array_length(array)? as usize;
    buf.resize(len, 0);
    env.get_long_array_region(array, 0, buf)?;
    Ok(())
}

/// A direct `ByteBuffer`'s memory seen as longs in native byte order, for one call: the Java
/// caller owns the buffer and does not touch it during the call. Elements are read and written
/// one at a time (unaligned), so no Rust reference into Java memory is ever made.
struct DirectLongs {
    ptr: *mut i64,
    len: usize,
}

impl DirectLongs {
    fn of(env: &mut JNIEnv, buffer: &JByteBuffer, what: &str) -> BridgeResult<DirectLongs> {
        if buffer.is_null() {
            return Err(BridgeError::invalid(format!("{what} must not be null")));
        }
        let ptr = env
            .get_direct_buffer_address(buffer)
            .map_err(|_| BridgeError::invalid(format!("{what} must be a direct ByteBuffer")))?;
        let len = env.get_direct_buffer_capacity(buffer)? / std::mem::size_of::<i64>();
        Ok(DirectLongs { ptr: ptr.cast(), len })
    }

    fn get(&self, i: usize) -> i64 {
        assert!(i < self.len, "direct buffer read past its capacity");
        // SAFETY: `i` is within the buffer's capacity, which the JVM keeps mapped while the
        // caller holds the buffer (it does, for the whole call).
        unsafe { self.ptr.add(i).read_unaligned() }
    }

    fn set(&self, i: usize, v: i64) {
        assert!(i < self.len, "direct buffer write past its capacity");
        // SAFETY: as in `get`.
        unsafe { self.ptr.add(i).write_unaligned(v) }
    }
}

fn read_locations(env: &mut JNIEnv, array: &JIntArray, what: &str) -> BridgeResult<Vec<u32>> {
    if array.is_null() {
        return Ok(Vec::new());
    }
    let len = env.get_array_length(array)? as usize;
    let mut ints = vec![0i32; len];
    env.get_int_array_region(array, 0, &mut ints)?;
    Ok(wire::locations(&ints, what)?)
}

/// Reads a Java String[] with no null entries; a null array reads as empty.
fn strings(env: &mut JNIEnv, array: &JObjectArray, what: &str) -> BridgeResult<Vec<String>> {
    if array.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(array)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        let item = JString::from(env.get_object_array_element(array, i)?);
        out.push(string(env, &item, what)?);
    }
    Ok(out)
}

/// A submission's requested queue, user and the user's groups.
fn submission(
    env: &mut JNIEnv,
    queue: &JString,
    user: &JString,
    groups: &JObjectArray,
) -> BridgeResult<(String, String, Vec<String>)> {
    Ok((string(env, queue, "queue name")?, string(env, user, "user name")?, strings(env, groups, "group name")?))
}

fn jstring_of(env: &mut JNIEnv, s: &str) -> BridgeResult<jstring> {
    Ok(env.new_string(s)?.into_raw())
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_create<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    xml: JString<'l>,
    settings: JLongArray<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let xml = string(env, &xml, "allocation XML")?;
        let mut raw = Vec::new();
        read_longs(env, &settings, &mut raw)?;
        let fault_injection = wire::fault_injection(&raw)?;
        let scheduler = Scheduler::from_xml(&xml, wire::settings(&raw)?)?;
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        INSTANCES.write().insert(handle, Arc::new(Mutex::new(Instance::new(scheduler, fault_injection))));
        Ok(handle)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_destroy<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    // Poisoned instances too: destroying one is how the shim gets rid of it.
    guard(&mut env, |_| {
        INSTANCES.write().remove(&handle);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_reconfigure<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    xml: JString<'l>,
    settings: JLongArray<'l>,
) {
    guard(&mut env, |env| {
        let xml = string(env, &xml, "allocation XML")?;
        let mut raw = Vec::new();
        read_longs(env, &settings, &mut raw)?;
        // The fault-injection flag is fixed when the instance is created.
        let settings = wire::settings(&raw)?;
        let file = tidal_core::config::parse_queue_file(&xml)?;
        with_instance(handle, |inst| Ok(inst.scheduler.reconfigure(file, settings)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_addNode<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    node: jint,
    host: jint,
    rack: jint,
    memory_mb: jlong,
    vcores: jlong,
    gpus: jlong,
    fpgas: jlong,
) {
    guard(&mut env, |_| {
        let (node, host, rack) =
            (wire::node_id(node)?, wire::location(host, "host location")?, wire::location(rack, "rack location")?);
        let capacity = wire::yarn_resources(memory_mb, vcores, gpus, fpgas);
        with_instance(handle, |inst| Ok(inst.scheduler.add_node(node, host, rack, capacity)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_removeNode<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    node: jint,
) {
    guard(&mut env, |_| {
        let node = wire::node_id(node)?;
        with_instance(handle, |inst| {
            inst.scheduler.remove_node(node)?;
            Ok(())
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_updateNodeResource<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    node: jint,
    memory_mb: jlong,
    vcores: jlong,
    gpus: jlong,
    fpgas: jlong,
) {
    guard(&mut env, |_| {
        let (node, capacity) = (wire::node_id(node)?, wire::yarn_resources(memory_mb, vcores, gpus, fpgas));
        with_instance(handle, |inst| Ok(inst.scheduler.update_node_resource(node, capacity)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_addApp<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
    queue: JString<'l>,
    user: JString<'l>,
) -> jstring {
    guard(&mut env, |env| {
        let queue = string(env, &queue, "queue name")?;
        let user = string(env, &user, "user name")?;
        let key = wire::app_key(app)?;
        let full = with_instance(handle, |inst| Ok(inst.scheduler.add_app(key, &queue, &user)?.to_string()))?;
        jstring_of(env, &full)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_placeApp<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    queue: JString<'l>,
    user: JString<'l>,
    groups: JObjectArray<'l>,
) -> jstring {
    guard(&mut env, |env| {
        let (queue, user, groups) = submission(env, &queue, &user, &groups)?;
        let placed = with_instance(handle, |inst| Ok(inst.scheduler.place_app(&queue, &user, &groups)?))?;
        jstring_of(env, &placed)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_placementUsesGroups<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jboolean {
    guard(&mut env, |_| {
        let uses = with_instance(handle, |inst| Ok(inst.scheduler.placement_uses_groups()))?;
        Ok(jboolean::from(uses))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_submitApp<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
    queue: JString<'l>,
    user: JString<'l>,
    groups: JObjectArray<'l>,
) -> jstring {
    guard(&mut env, |env| {
        let (queue, user, groups) = submission(env, &queue, &user, &groups)?;
        let key = wire::app_key(app)?;
        let full =
            with_instance(handle, |inst| Ok(inst.scheduler.submit_app(key, &queue, &user, &groups)?.to_string()))?;
        jstring_of(env, &full)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_removeApp<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
) {
    guard(&mut env, |_| {
        let key = wire::app_key(app)?;
        with_instance(handle, |inst| Ok(inst.scheduler.remove_app(key)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_allocate<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
    asks: JLongArray<'l>,
    releases: JLongArray<'l>,
    blacklist_additions: JIntArray<'l>,
    blacklist_removals: JIntArray<'l>,
) {
    guard(&mut env, |env| {
        let key = wire::app_key(app)?;
        let additions = read_locations(env, &blacklist_additions, "blacklist addition")?;
        let removals = read_locations(env, &blacklist_removals, "blacklist removal")?;
        with_instance(handle, |inst| {
            let Instance { scheduler, longs, ids, asks: ask_buf, .. } = inst;
            read_longs(env, &asks, longs)?;
            wire::decode_asks(longs, ask_buf)?;
            read_longs(env, &releases, longs)?;
            wire::allocation_ids(longs, "release", ids)?;
            // Releases are facts about containers the app gave up: once the whole list is valid
            // they apply even when the core then refuses the asks.
            scheduler.release_for_app(key, ids)?;
            scheduler.update_asks(key, ask_buf, &additions, &removals)?;
            Ok(())
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_nodeHeartbeat<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    node: jint,
    now_ms: jlong,
    exchange: JByteBuffer<'l>,
    completed: jint,
    max_decisions: jint,
) -> jint {
    guard(&mut env, |env| {
        let node = wire::node_id(node)?;
        let buffer = DirectLongs::of(env, &exchange, "heartbeat buffer")?;
        let (completed, max_decisions) = wire::heartbeat_exchange(buffer.len, completed, max_decisions)?;
        with_instance(handle, |inst| {
            inst.ids.clear();
            for i in 0..completed {
                inst.ids.push(wire::allocation_id(buffer.get(i))?);
            }
            let made = heartbeat(inst, node, now_ms, max_decisions)?;
            for (i, &v) in inst.longs.iter().enumerate() {
                buffer.set(i, v);
            }
            Ok(made as jint)
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_locationsInUse<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jintArray {
    guard(&mut env, |env| {
        let ids = with_instance(handle, |inst| Ok(inst.scheduler.locations_in_use()))?;
        let ints = wire::location_ints(&ids)?;
        let array = env.new_int_array(ints.len() as jint)?;
        env.set_int_array_region(&array, 0, &ints)?;
        Ok(array.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_releaseAllocation<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    allocation: jlong,
) {
    guard(&mut env, |_| {
        let id = wire::allocation_id(allocation)?;
        with_instance(handle, |inst| {
            inst.scheduler.release(id);
            Ok(())
        })
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_adoptAllocation<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
    node: jint,
    priority: jint,
    memory_mb: jlong,
    vcores: jlong,
    gpus: jlong,
    fpgas: jlong,
) -> jlong {
    guard(&mut env, |_| {
        let (key, node) = (wire::app_key(app)?, wire::node_id(node)?);
        let resources = wire::yarn_resources(memory_mb, vcores, gpus, fpgas);
        let id = with_instance(handle, |inst| Ok(inst.scheduler.adopt(key, node, priority, resources)?))?;
        Ok(id as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_setAppPriority<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
    priority: jint,
) {
    guard(&mut env, |_| {
        let key = wire::app_key(app)?;
        with_instance(handle, |inst| Ok(inst.scheduler.set_app_priority(key, priority)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_placeOnNode<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
    node: jint,
    priority: jint,
    memory_mb: jlong,
    vcores: jlong,
    gpus: jlong,
    fpgas: jlong,
) -> jlong {
    guard(&mut env, |_| {
        let (key, node) = (wire::app_key(app)?, wire::node_id(node)?);
        let resources = wire::yarn_resources(memory_mb, vcores, gpus, fpgas);
        let id = with_instance(handle, |inst| Ok(inst.scheduler.place(key, node, priority, resources)?))?;
        // Ids stay below 2^40, so -1 cannot be one.
        Ok(id.map_or(-1, |id| id as jlong))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_snapshotState<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        // Only taking the snapshot needs the instance; heartbeats wait for that, not for the JSON.
        let snapshot = with_instance(handle, |inst| Ok(inst.scheduler.snapshot()))?;
        jstring_of(env, &snapshot.to_json())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_restoreState<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    snapshot: JString<'l>,
) -> jstring {
    guard(&mut env, |env| {
        let json = string(env, &snapshot, "snapshot JSON")?;
        let summary = with_instance(handle, |inst| Ok(inst.scheduler.restore_json(&json)?))?;
        jstring_of(env, &summary.to_json())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_armHeartbeatPanic<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    guard(&mut env, |_| with_instance(handle, arm_heartbeat_panic))
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_registerQueue<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    queue_xml: JString<'l>,
    user: JString<'l>,
    admin: jboolean,
) -> jstring {
    guard(&mut env, |env| {
        let xml = string(env, &queue_xml, "queue definition")?;
        let user = string(env, &user, "user name")?;
        let caller = Caller { user: &user, admin: admin != 0 };
        let (name, verdict) = with_instance(handle, |inst| Ok(inst.scheduler.register_queue_xml(&xml, caller)?))?;
        let json = serde_json::json!({ "queue": name, "admitted": verdict.admitted, "class": verdict.class, "reason": verdict.reason });
        jstring_of(env, &json.to_string())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_unregisterQueue<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    queue: JString<'l>,
    user: JString<'l>,
    admin: jboolean,
) {
    guard(&mut env, |env| {
        let queue = string(env, &queue, "queue name")?;
        let user = string(env, &user, "user name")?;
        let caller = Caller { user: &user, admin: admin != 0 };
        with_instance(handle, |inst| Ok(inst.scheduler.unregister_queue(&queue, caller)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_setHints<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
    json: JString<'l>,
) -> jstring {
    guard(&mut env, |env| {
        let json = string(env, &json, "hints JSON")?;
        let key = wire::app_key(app)?;
        let reply = with_instance(handle, |inst| Ok(inst.scheduler.set_hints(key, &json)?))?;
        jstring_of(env, &reply.to_json())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_queueStatusJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = with_instance(handle, |inst| Ok(SchedulerStatus::of(&inst.scheduler).to_json()))?;
        jstring_of(env, &json)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_historyJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    since_ms: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = with_instance(handle, |inst| Ok(inst.scheduler.history_json(since_ms)))?;
        jstring_of(env, &json)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_fullQueueName<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    name: JString<'l>,
) -> jstring {
    guard(&mut env, |env| {
        let name = if name.is_null() { String::new() } else { string(env, &name, "queue name")? };
        jstring_of(env, &tidal_core::config::full_queue_name(&name))
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_drainLogs<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    guard(&mut env, |env| jstring_of(env, &log_buffer::drain()))
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_TidalNative_diagnosticPanic<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    message: JString<'l>,
) {
    guard(&mut env, |env| -> BridgeResult<()> {
        let message = string(env, &message, "panic message")?;
        panic!("{message}");
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_bridge_NativeLoader_bridgeVersion<'l>(
    _env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jint {
    BRIDGE_VERSION
}

#[cfg(test)]
mod tests {
    use super::*;
    use tidal_core::config::Settings;
    use tidal_core::ids::ANY;
    use tidal_core::Resources;

    /// An instance with one 8-vcore node and an app asking for four containers.
    fn busy(fault_injection: bool) -> Instance {
        let mut s = Scheduler::from_xml("<tidal><queue name=\"a\"/></tidal>", Settings::default()).unwrap();
        s.add_node(0, 1, 2, Resources::new(8192, 8)).unwrap();
        s.add_app(7, "a", "u").unwrap();
        let ask = Ask {
            priority: 1,
            location: ANY,
            num_containers: 4,
            relax_locality: true,
            capability: Resources::new(1024, 1),
        };
        s.update_asks(7, &[ask], &[], &[]).unwrap();
        Instance::new(s, fault_injection)
    }

    fn panics<R>(f: impl FnOnce() -> R) -> String {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(_) => panic!("expected a panic"),
            Err(payload) => panic_message(&*payload),
        }
    }

    #[test]
    fn a_panic_poisons_the_instance_and_later_calls_are_refused() {
        let mut inst = busy(false);
        assert_eq!(unpoisoned(&mut inst, |_| Ok(3)).unwrap(), 3);
        let message = panics(|| unpoisoned(&mut inst, |_| -> BridgeResult<()> { panic!("bad state") }));
        assert_eq!(message, "bad state");
        assert_eq!(inst.poisoned.as_deref(), Some("bad state"));
        let refused = unpoisoned(&mut inst, |_| Ok(())).unwrap_err();
        assert_eq!(refused.class, exceptions::PANIC);
        assert_eq!(refused.message, format!("{POISONED}: bad state"));
        // Errors that are not panics do not poison.
        let mut other = busy(false);
        let e = unpoisoned(&mut other, |_| -> BridgeResult<()> { Err(BridgeError::invalid("no".into())) });
        assert_eq!(e.unwrap_err().class, exceptions::INVALID);
        assert!(other.poisoned.is_none());
    }

    #[test]
    fn poisoning_goes_through_the_handle_and_destroy_still_works() {
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        INSTANCES.write().insert(handle, Arc::new(Mutex::new(busy(false))));
        panics(|| with_instance(handle, |_| -> BridgeResult<()> { panic!("in the core") }));
        // The lock was released while unwinding; the instance refuses every call.
        let e = with_instance(handle, |inst| Ok(inst.scheduler.snapshot_json())).unwrap_err();
        assert!(e.class == exceptions::PANIC && e.message.ends_with("in the core"), "{e:?}");
        assert!(INSTANCES.write().remove(&handle).is_some());
        assert_eq!(with_instance(handle, |_| Ok(())).unwrap_err().class, exceptions::BRIDGE);
    }

    #[test]
    fn fault_injection_must_be_enabled_at_creation() {
        let mut inst = busy(false);
        let e = arm_heartbeat_panic(&mut inst).unwrap_err();
        assert_eq!((e.class, e.message.as_str()), (exceptions::FORBIDDEN, FAULT_INJECTION_DISABLED));
        assert!(!inst.heartbeat_panic_armed);
    }

    #[test]
    fn an_armed_heartbeat_books_its_containers_then_panics_once() {
        let mut inst = busy(true);
        arm_heartbeat_panic(&mut inst).unwrap();
        let message = panics(|| unpoisoned(&mut inst, |i| heartbeat(i, 0, 1_000, 10)));
        assert!(message.contains("injected fault") && message.contains("4 containers"), "{message}");
        // The core booked the containers; nothing was encoded for Java; the fault disarmed.
        assert_eq!(inst.scheduler.state().allocations.len(), 4);
        assert_eq!(inst.decisions.len(), 4);
        assert!(inst.longs.is_empty());
        assert!(!inst.heartbeat_panic_armed);
        assert!(inst.poisoned.as_deref().is_some_and(|m| m.contains("injected fault")));
        assert_eq!(unpoisoned(&mut inst, |i| heartbeat(i, 0, 2_000, 10)).unwrap_err().class, exceptions::PANIC);

        // Unarmed, the same heartbeat encodes its decisions.
        let mut calm = busy(true);
        assert_eq!(unpoisoned(&mut calm, |i| heartbeat(i, 0, 1_000, 10)).unwrap(), 4);
        assert_eq!(calm.longs.len(), 4 * layout::DECISION_STRIDE);
    }
}
