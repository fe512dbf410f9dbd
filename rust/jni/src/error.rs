//! Failures reported to Java: the exception class of each, its message and the fields that say
//! what it is about, and how they are raised so that a failed call always leaves a Java exception
//! pending. Java must never take a call's placeholder return value (a handle of 0, a null
//! string) for an answer.
//!
//! Raising can itself fail: the class may be missing from the class path, its constructor may not
//! match, the JVM may be out of memory. [`raise`] then falls back, in order, to the same class
//! without the fields, to the plain `TidalException` with the same message and to
//! `java.lang.IllegalStateException`, which every JVM has, naming the class that could not be
//! raised.

use crate::wire::WireError;
use jni::objects::{JObject, JThrowable, JValue};
use jni::JNIEnv;
use tidal_core::error::ErrorKind;
use tidal_core::ids::{AppKey, NodeId};
use tidal_core::CoreError;

/// The Java exception classes the bridge raises, one per kind of failure; all extend
/// `TidalException`, so callers that do not care about the kind catch that.
pub mod exceptions {
    pub const INVALID: &str = "org/tidal/yarn/bridge/TidalInvalidInputException";
    pub const NOT_FOUND: &str = "org/tidal/yarn/bridge/TidalNotFoundException";
    pub const CONFLICT: &str = "org/tidal/yarn/bridge/TidalConflictException";
    pub const FORBIDDEN: &str = "org/tidal/yarn/bridge/TidalForbiddenException";
    /// A failure of the JNI machinery itself, or a scheduler handle already destroyed; also the
    /// fallback when the class of a failure cannot be raised.
    pub const BRIDGE: &str = "org/tidal/yarn/bridge/TidalException";
    pub const PANIC: &str = "org/tidal/yarn/bridge/TidalPanicException";
    pub const ALL: [&str; 6] = [INVALID, NOT_FOUND, CONFLICT, FORBIDDEN, BRIDGE, PANIC];
    /// The classes raised with a [`Subject`](super::Subject): they declare
    /// [`SUBJECT_CONSTRUCTOR`](super::SUBJECT_CONSTRUCTOR).
    pub const WITH_SUBJECT: [&str; 3] = [INVALID, NOT_FOUND, CONFLICT];
    /// The last resort, a class every JVM has.
    pub const LAST_RESORT: &str = "java/lang/IllegalStateException";
}

/// `(String message, long appKey, int nodeId, String queue, String field)`: the constructor of
/// the classes in [`exceptions::WITH_SUBJECT`], where -1 and null stand for "not about one".
pub const SUBJECT_CONSTRUCTOR: &str = "(Ljava/lang/String;JILjava/lang/String;Ljava/lang/String;)V";

/// What a failure is about, carried by its exception as fields that Java reads without parsing
/// the message (`TidalException.appKey()` and the like).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subject {
    pub app: Option<AppKey>,
    pub node: Option<NodeId>,
    pub queue: Option<String>,
    /// The input field refused, as a path into the document (`stages[1].tasks`).
    pub field: Option<String>,
}

impl Subject {
    fn is_empty(&self) -> bool {
        *self == Subject::default()
    }
}

/// A failure to report to Java: the exception class to raise, its message and its subject.
#[derive(Debug)]
pub struct BridgeError {
    pub class: &'static str,
    pub message: String,
    pub subject: Subject,
}

impl BridgeError {
    pub fn new(class: &'static str, message: String) -> Self {
        BridgeError { class, message, subject: Subject::default() }
    }

    pub fn invalid(message: String) -> Self {
        BridgeError::new(exceptions::INVALID, message)
    }
}

impl From<CoreError> for BridgeError {
    fn from(e: CoreError) -> Self {
        let class = match e.kind() {
            ErrorKind::Invalid => exceptions::INVALID,
            ErrorKind::NotFound => exceptions::NOT_FOUND,
            ErrorKind::Conflict => exceptions::CONFLICT,
            ErrorKind::Forbidden => exceptions::FORBIDDEN,
        };
        // Exhaustive, so that a new variant decides what its exception carries.
        let subject = match &e {
            CoreError::UnknownApp(app) | CoreError::DuplicateApp(app) | CoreError::InvalidRequest { app, .. } => {
                Subject { app: Some(*app), ..Subject::default() }
            }
            CoreError::UnknownNode(node) | CoreError::DuplicateNode(node) => {
                Subject { node: Some(*node), ..Subject::default() }
            }
            CoreError::UnknownQueue(queue) => Subject { queue: Some(queue.clone()), ..Subject::default() },
            CoreError::InvalidHints { app, field, .. } => {
                Subject { app: Some(*app), field: Some(field.clone()), ..Subject::default() }
            }
            CoreError::Config(_) | CoreError::InvalidInput(_) | CoreError::Conflict(_) | CoreError::Forbidden(_) => {
                Subject::default()
            }
        };
        BridgeError { class, message: e.to_string(), subject }
    }
}

impl From<jni::errors::Error> for BridgeError {
    fn from(e: jni::errors::Error) -> Self {
        BridgeError::new(exceptions::BRIDGE, format!("JNI call failed: {e}"))
    }
}

impl From<WireError> for BridgeError {
    fn from(e: WireError) -> Self {
        BridgeError::invalid(e.0)
    }
}

pub type BridgeResult<T> = Result<T, BridgeError>;

/// One way to raise a failure, tried in the order of [`attempts`].
#[derive(Debug, PartialEq)]
enum Attempt<'a> {
    /// The failure's class through [`SUBJECT_CONSTRUCTOR`].
    WithSubject { class: &'static str, message: &'a str, subject: &'a Subject },
    /// A class through its `(String)` constructor.
    Plain { class: &'static str, message: String },
}

/// How `e` is raised: its own class with its subject, if any, else without (a jar older than the
/// subject constructor keeps the kind), else the plain `TidalException` with the same message,
/// else the last resort naming the class that could not be raised.
fn attempts(e: &BridgeError) -> Vec<Attempt<'_>> {
    let mut out = Vec::with_capacity(4);
    if !e.subject.is_empty() {
        out.push(Attempt::WithSubject { class: e.class, message: &e.message, subject: &e.subject });
    }
    out.push(Attempt::Plain { class: e.class, message: e.message.clone() });
    if e.class != exceptions::BRIDGE {
        out.push(Attempt::Plain { class: exceptions::BRIDGE, message: e.message.clone() });
    }
    out.push(Attempt::Plain {
        class: exceptions::LAST_RESORT,
        message: format!("Tidal native call failed and {} could not be raised: {}", e.class, e.message),
    });
    out
}

/// Raises `e` in Java, falling back as [`attempts`] says until one is raised.
pub fn raise(env: &mut JNIEnv, e: &BridgeError) {
    let attempts = attempts(e);
    let last = attempts.len() - 1;
    for (i, attempt) in attempts.iter().enumerate() {
        let Err(failure) = throw(env, attempt) else { return };
        tracing::warn!(?attempt, %failure, "could not raise a Java exception");
        // What the failed attempt left pending (a NoClassDefFoundError, say) would hide the
        // failure being reported; the next attempt replaces it. The last one's stays: Java then
        // still sees an exception.
        if i < last {
            let _ = env.exception_clear();
        }
    }
    tracing::error!(class = e.class, message = %e.message, "no Java exception could be raised");
}

fn throw(env: &mut JNIEnv, attempt: &Attempt) -> jni::errors::Result<()> {
    match attempt {
        Attempt::Plain { class, message } => env.throw_new(*class, message),
        Attempt::WithSubject { class, message, subject } => {
            let message = env.new_string(message)?;
            let queue = optional_string(env, subject.queue.as_deref())?;
            let field = optional_string(env, subject.field.as_deref())?;
            // Keys and ids came from Java as non-negative longs and ints; -1 means none.
            let app = subject.app.and_then(|k| i64::try_from(k).ok()).unwrap_or(-1);
            let node = subject.node.and_then(|n| i32::try_from(n).ok()).unwrap_or(-1);
            let args = [
                JValue::Object(&message),
                JValue::Long(app),
                JValue::Int(node),
                JValue::Object(&queue),
                JValue::Object(&field),
            ];
            let exception = env.new_object(*class, SUBJECT_CONSTRUCTOR, &args)?;
            env.throw(JThrowable::from(exception))
        }
    }
}

fn optional_string<'l>(env: &mut JNIEnv<'l>, s: Option<&str>) -> jni::errors::Result<JObject<'l>> {
    Ok(match s {
        Some(s) => env.new_string(s)?.into(),
        None => JObject::null(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject_of(e: CoreError) -> (&'static str, Subject) {
        let b = BridgeError::from(e);
        (b.class, b.subject)
    }

    #[test]
    fn core_errors_carry_what_they_are_about() {
        let app = |app| Subject { app: Some(app), ..Subject::default() };
        let node = |node| Subject { node: Some(node), ..Subject::default() };
        assert_eq!(subject_of(CoreError::UnknownApp(42)), (exceptions::NOT_FOUND, app(42)));
        assert_eq!(subject_of(CoreError::DuplicateApp(42)), (exceptions::CONFLICT, app(42)));
        let request = CoreError::InvalidRequest { app: 3, reason: "negative".into() };
        assert_eq!(subject_of(request), (exceptions::INVALID, app(3)));
        assert_eq!(subject_of(CoreError::UnknownNode(7)), (exceptions::NOT_FOUND, node(7)));
        assert_eq!(subject_of(CoreError::DuplicateNode(7)), (exceptions::CONFLICT, node(7)));
        let queue = Subject { queue: Some("root.x".into()), ..Subject::default() };
        assert_eq!(subject_of(CoreError::UnknownQueue("root.x".into())), (exceptions::NOT_FOUND, queue));
        let hints = CoreError::InvalidHints { app: 5, field: "stages[0].tasks".into(), reason: "-1".into() };
        let field = Subject { app: Some(5), field: Some("stages[0].tasks".into()), ..Subject::default() };
        assert_eq!(subject_of(hints), (exceptions::INVALID, field));
        for text in
            [CoreError::Config("c".into()), CoreError::InvalidInput("i".into()), CoreError::Forbidden("f".into())]
        {
            assert!(BridgeError::from(text).subject.is_empty());
        }
        // The message is the core's, whatever the subject.
        assert_eq!(BridgeError::from(CoreError::UnknownApp(42)).message, "unknown application 42");
    }

    #[test]
    fn only_classes_with_the_subject_constructor_get_a_subject() {
        let errors = [
            CoreError::UnknownApp(1),
            CoreError::DuplicateNode(2),
            CoreError::UnknownQueue("q".into()),
            CoreError::InvalidRequest { app: 1, reason: "r".into() },
            CoreError::InvalidHints { app: 1, field: "f".into(), reason: "r".into() },
        ];
        for e in errors {
            let b = BridgeError::from(e);
            assert!(exceptions::WITH_SUBJECT.contains(&b.class), "{b:?}");
        }
    }

    #[test]
    fn raising_falls_back_to_the_kind_then_the_plain_tidal_exception_then_a_jvm_class() {
        let e = BridgeError::from(CoreError::UnknownApp(42));
        assert_eq!(
            attempts(&e),
            [
                Attempt::WithSubject {
                    class: exceptions::NOT_FOUND,
                    message: "unknown application 42",
                    subject: &e.subject
                },
                Attempt::Plain { class: exceptions::NOT_FOUND, message: "unknown application 42".into() },
                Attempt::Plain { class: exceptions::BRIDGE, message: "unknown application 42".into() },
                Attempt::Plain {
                    class: exceptions::LAST_RESORT,
                    message: "Tidal native call failed and org/tidal/yarn/bridge/TidalNotFoundException could not be raised: \
                              unknown application 42"
                        .into()
                },
            ]
        );
        // Without a subject the class's own (String) constructor; the plain TidalException is
        // not tried twice.
        let panic = BridgeError::new(exceptions::PANIC, "boom".into());
        let classes = |e: &BridgeError| {
            attempts(e)
                .iter()
                .map(|a| match a {
                    Attempt::Plain { class, .. } | Attempt::WithSubject { class, .. } => *class,
                })
                .collect::<Vec<_>>()
        };
        assert!(matches!(attempts(&panic)[0], Attempt::Plain { class: exceptions::PANIC, .. }));
        assert_eq!(classes(&panic), [exceptions::PANIC, exceptions::BRIDGE, exceptions::LAST_RESORT]);
        let bridge = BridgeError::new(exceptions::BRIDGE, "unknown handle".into());
        assert_eq!(classes(&bridge), [exceptions::BRIDGE, exceptions::LAST_RESORT]);
    }
}
