//! The JNI bridge between the Java shim (`org.tidal.yarn.TidalNative`) and `tidal-core`.
//!
//! This crate knows JNI and nothing of policy: every entry point decodes primitive arrays,
//! calls one method of [`tidal_core::Scheduler`], encodes the answer, and maps failures to Java
//! exceptions. The wire layout of the arrays is defined in `TidalNative.java` and mirrored in
//! [`wire`].
//!
//! Safety net: every entry point runs inside [`guard`], which catches Rust panics and raises
//! `TidalPanicException`, and turns `Err` into the `TidalException` subclass of its kind (see
//! [`BridgeError`]). A panic never unwinds into the JVM, which would abort it.

mod log_buffer;
pub mod wire;

use jni::objects::{JClass, JIntArray, JLongArray, JString};
use jni::sys::{jboolean, jint, jlong, jstring};
use jni::JNIEnv;
use once_cell::sync::Lazy;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use tidal_core::error::ErrorKind;
use tidal_core::request::Ask;
use tidal_core::scheduler::Caller;
use tidal_core::status::SchedulerStatus;
use tidal_core::{Decision, Scheduler};

/// The Java exception classes the bridge raises, one per kind of failure; all extend
/// `TidalException`, so callers that do not care about the kind catch that.
pub mod exceptions {
    pub const INVALID: &str = "org/tidal/yarn/TidalInvalidInputException";
    pub const NOT_FOUND: &str = "org/tidal/yarn/TidalNotFoundException";
    pub const CONFLICT: &str = "org/tidal/yarn/TidalConflictException";
    pub const FORBIDDEN: &str = "org/tidal/yarn/TidalForbiddenException";
    /// A failure of the JNI machinery itself, or a scheduler handle already destroyed.
    pub const BRIDGE: &str = "org/tidal/yarn/TidalException";
    pub const PANIC: &str = "org/tidal/yarn/TidalPanicException";
    pub const ALL: [&str; 6] = [INVALID, NOT_FOUND, CONFLICT, FORBIDDEN, BRIDGE, PANIC];
}

/// A scheduler plus scratch buffers reused across calls so the heartbeat does not allocate.
struct Instance {
    scheduler: Scheduler,
    decisions: Vec<Decision>,
    longs: Vec<i64>,
    ids: Vec<u64>,
    asks: Vec<Ask>,
}

/// Live instances by handle. Several may coexist (tests run more than one RM in a JVM).
static INSTANCES: Lazy<RwLock<HashMap<jlong, Arc<Mutex<Instance>>>>> = Lazy::new(Default::default);
static NEXT_HANDLE: AtomicI64 = AtomicI64::new(1);

/// A failure to report to Java: the exception class to raise and its message.
#[derive(Debug)]
struct BridgeError {
    class: &'static str,
    message: String,
}

impl BridgeError {
    fn invalid(message: String) -> Self {
        BridgeError { class: exceptions::INVALID, message }
    }
}

impl From<tidal_core::CoreError> for BridgeError {
    fn from(e: tidal_core::CoreError) -> Self {
        let class = match e.kind() {
            ErrorKind::Invalid => exceptions::INVALID,
            ErrorKind::NotFound => exceptions::NOT_FOUND,
            ErrorKind::Conflict => exceptions::CONFLICT,
            ErrorKind::Forbidden => exceptions::FORBIDDEN,
        };
        BridgeError { class, message: e.to_string() }
    }
}

impl From<jni::errors::Error> for BridgeError {
    fn from(e: jni::errors::Error) -> Self {
        BridgeError { class: exceptions::BRIDGE, message: format!("JNI call failed: {e}") }
    }
}

impl From<wire::WireError> for BridgeError {
    fn from(e: wire::WireError) -> Self {
        BridgeError::invalid(e.0)
    }
}

type BridgeResult<T> = Result<T, BridgeError>;

/// Runs an entry point's body, converting errors and panics into Java exceptions. Returns
/// `R::default()` when an exception was raised (Java ignores the value then).
fn guard<'local, R: Default>(env: &mut JNIEnv<'local>, body: impl FnOnce(&mut JNIEnv<'local>) -> BridgeResult<R>) -> R {
    log_buffer::install();
    let outcome = catch_unwind(AssertUnwindSafe(|| body(env)));
    let (class, message) = match outcome {
        Ok(Ok(value)) => return value,
        Ok(Err(BridgeError { class, message })) => (class, message),
        Err(payload) => (exceptions::PANIC, format!("panic in Tidal native code: {}", panic_message(&*payload))),
    };
    // A JNI failure may already have left a Java exception pending; that one wins.
    if !env.exception_check().unwrap_or(true) && env.throw_new(class, &message).is_err() {
        tracing::error!(%message, "could not raise a Java exception");
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
    INSTANCES.read().get(&handle).cloned().ok_or_else(|| BridgeError {
        class: exceptions::BRIDGE,
        message: format!("unknown or destroyed scheduler handle {handle}"),
    })
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

fn read_locations(env: &mut JNIEnv, array: &JIntArray, what: &str) -> BridgeResult<Vec<u32>> {
    if array.is_null() {
        return Ok(Vec::new());
    }
    let len = env.get_array_length(array)? as usize;
    let mut ints = vec![0i32; len];
    env.get_int_array_region(array, 0, &mut ints)?;
    Ok(wire::locations(&ints, what)?)
}

fn jstring_of(env: &mut JNIEnv, s: &str) -> BridgeResult<jstring> {
    Ok(env.new_string(s)?.into_raw())
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_create<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    xml: JString<'l>,
    settings: JLongArray<'l>,
) -> jlong {
    guard(&mut env, |env| {
        let xml = string(env, &xml, "allocation XML")?;
        let mut raw = Vec::new();
        read_longs(env, &settings, &mut raw)?;
        let scheduler = Scheduler::from_xml(&xml, wire::settings(&raw)?)?;
        let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
        let inst = Instance { scheduler, decisions: Vec::new(), longs: Vec::new(), ids: Vec::new(), asks: Vec::new() };
        INSTANCES.write().insert(handle, Arc::new(Mutex::new(inst)));
        Ok(handle)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_destroy<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    guard(&mut env, |_| {
        INSTANCES.write().remove(&handle);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_reconfigure<'l>(
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
        let settings = wire::settings(&raw)?;
        let file = tidal_core::config::parse_queue_file(&xml)?;
        instance(handle)?.lock().scheduler.reconfigure(file, settings)?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_addNode<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    node: jint,
    host: jint,
    rack: jint,
    memory_mb: jlong,
    vcores: jlong,
) {
    guard(&mut env, |_| {
        let (node, host, rack) =
            (wire::node_id(node)?, wire::location(host, "host location")?, wire::location(rack, "rack location")?);
        let capacity = tidal_core::Resources::new(memory_mb, vcores);
        instance(handle)?.lock().scheduler.add_node(node, host, rack, capacity)?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_removeNode<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    node: jint,
) {
    guard(&mut env, |_| {
        instance(handle)?.lock().scheduler.remove_node(wire::node_id(node)?)?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_updateNodeResource<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    node: jint,
    memory_mb: jlong,
    vcores: jlong,
) {
    guard(&mut env, |_| {
        let capacity = tidal_core::Resources::new(memory_mb, vcores);
        instance(handle)?.lock().scheduler.update_node_resource(wire::node_id(node)?, capacity)?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_addApp<'l>(
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
        let inst = instance(handle)?;
        let full = inst.lock().scheduler.add_app(wire::app_key(app)?, &queue, &user)?.to_string();
        jstring_of(env, &full)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_removeApp<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
) {
    guard(&mut env, |_| {
        instance(handle)?.lock().scheduler.remove_app(wire::app_key(app)?)?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_allocate<'l>(
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
        let inst = instance(handle)?;
        let mut guard = inst.lock();
        let Instance { scheduler, longs, asks: ask_buf, .. } = &mut *guard;
        read_longs(env, &asks, longs)?;
        wire::decode_asks(longs, ask_buf)?;
        // Releases are facts about containers the app gave up; apply them even when the asks
        // turn out to be invalid.
        read_longs(env, &releases, longs)?;
        for &id in longs.iter() {
            scheduler.release(wire::allocation_id(id)?);
        }
        scheduler.update_asks(key, ask_buf, &additions, &removals)?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_nodeHeartbeat<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    node: jint,
    now_ms: jlong,
    completed: JLongArray<'l>,
    out: JLongArray<'l>,
) -> jint {
    guard(&mut env, |env| {
        let node = wire::node_id(node)?;
        if out.is_null() {
            return Err(BridgeError::invalid("heartbeat output array must not be null".into()));
        }
        let capacity = env.get_array_length(&out)? as usize / wire::DECISION_STRIDE;
        let inst = instance(handle)?;
        let mut guard = inst.lock();
        let Instance { scheduler, decisions, longs, ids, .. } = &mut *guard;
        read_longs(env, &completed, longs)?;
        ids.clear();
        for &id in longs.iter() {
            ids.push(wire::allocation_id(id)?);
        }
        decisions.clear();
        let made = scheduler.node_heartbeat(node, now_ms, ids, decisions, capacity)?;
        wire::encode_decisions(decisions, longs);
        env.set_long_array_region(&out, 0, longs)?;
        Ok(made as jint)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_releaseAllocation<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    allocation: jlong,
) {
    guard(&mut env, |_| {
        instance(handle)?.lock().scheduler.release(wire::allocation_id(allocation)?);
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_registerQueue<'l>(
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
        let config = tidal_core::config::parse_queue_element(&xml)?;
        let name = config.name.clone();
        let caller = Caller { user: &user, admin: admin != 0 };
        let verdict = instance(handle)?.lock().scheduler.register_queue(config, caller)?;
        let json = serde_json::json!({ "queue": name, "admitted": verdict.admitted, "class": verdict.class, "reason": verdict.reason });
        jstring_of(env, &json.to_string())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_unregisterQueue<'l>(
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
        instance(handle)?.lock().scheduler.unregister_queue(&queue, caller)?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_setHints<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    app: jlong,
    json: JString<'l>,
) -> jstring {
    guard(&mut env, |env| {
        let json = string(env, &json, "hints JSON")?;
        let reply = instance(handle)?.lock().scheduler.set_hints(wire::app_key(app)?, &json)?;
        jstring_of(env, &reply.to_json())
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_queueStatusJson<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) -> jstring {
    guard(&mut env, |env| {
        let json = SchedulerStatus::of(&instance(handle)?.lock().scheduler).to_json();
        jstring_of(env, &json)
    })
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_fullQueueName<'l>(
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
pub extern "system" fn Java_org_tidal_yarn_TidalNative_drainLogs<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
) -> jstring {
    guard(&mut env, |env| jstring_of(env, &log_buffer::drain()))
}

#[no_mangle]
pub extern "system" fn Java_org_tidal_yarn_TidalNative_diagnosticPanic<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    message: JString<'l>,
) {
    guard(&mut env, |env| -> BridgeResult<()> {
        let message = string(env, &message, "panic message")?;
        panic!("{message}");
    })
}
