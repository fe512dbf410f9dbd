//! Failures reported to Java: the exception class of each and its message, and how they are
//! raised so that a failed call always leaves a Java exception pending. Java must never take a
//! call's placeholder return value (a handle of 0, a null string) for an answer.
//!
//! Raising can itself fail: the class may be missing from the class path, its constructor may not
//! match, the JVM may be out of memory. [`raise`] then falls back, in order, to the plain
//! `TidalException` with the same message and to `java.lang.IllegalStateException`, which every
//! JVM has, naming the class that could not be raised.

use crate::wire::WireError;
use jni::JNIEnv;
use tidal_core::error::ErrorKind;
use tidal_core::CoreError;

/// The Java exception classes the bridge raises, one per kind of failure; all extend
/// `TidalException`, so callers that do not care about the kind catch that.
pub mod exceptions {
    pub const INVALID: &str = "org/tidal/yarn/TidalInvalidInputException";
    pub const NOT_FOUND: &str = "org/tidal/yarn/TidalNotFoundException";
    pub const CONFLICT: &str = "org/tidal/yarn/TidalConflictException";
    pub const FORBIDDEN: &str = "org/tidal/yarn/TidalForbiddenException";
    /// A failure of the JNI machinery itself, or a scheduler handle already destroyed; also the
    /// fallback when the class of a failure cannot be raised.
    pub const BRIDGE: &str = "org/tidal/yarn/TidalException";
    pub const PANIC: &str = "org/tidal/yarn/TidalPanicException";
    pub const ALL: [&str; 6] = [INVALID, NOT_FOUND, CONFLICT, FORBIDDEN, BRIDGE, PANIC];
    /// The last resort, a class every JVM has.
    pub const LAST_RESORT: &str = "java/lang/IllegalStateException";
}

/// A failure to report to Java: the exception class to raise and its message.
#[derive(Debug)]
pub struct BridgeError {
    pub class: &'static str,
    pub message: String,
}

impl BridgeError {
    pub fn new(class: &'static str, message: String) -> Self {
        BridgeError { class, message }
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
        BridgeError::new(class, e.to_string())
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

/// One way to raise a failure, tried in the order of [`attempts`]: a class through its
/// `(String)` constructor.
#[derive(Debug, PartialEq)]
struct Attempt {
    class: &'static str,
    message: String,
}

/// How `e` is raised: its own class, else the plain `TidalException` with the same message, else
/// the last resort naming the class that could not be raised.
fn attempts(e: &BridgeError) -> Vec<Attempt> {
    let mut out = Vec::with_capacity(3);
    out.push(Attempt { class: e.class, message: e.message.clone() });
    if e.class != exceptions::BRIDGE {
        out.push(Attempt { class: exceptions::BRIDGE, message: e.message.clone() });
    }
    out.push(Attempt {
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
        let Err(failure) = env.throw_new(attempt.class, &attempt.message) else { return };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_falls_back_to_the_plain_tidal_exception_then_to_a_jvm_class() {
        let e = BridgeError::from(CoreError::UnknownApp(42));
        assert_eq!(
            attempts(&e),
            [
                Attempt { class: exceptions::NOT_FOUND, message: "unknown application 42".into() },
                Attempt { class: exceptions::BRIDGE, message: "unknown application 42".into() },
                Attempt {
                    class: exceptions::LAST_RESORT,
                    message: "Tidal native call failed and org/tidal/yarn/TidalNotFoundException could not be raised: \
                              unknown application 42"
                        .into()
                },
            ]
        );
        // The plain TidalException is not tried twice.
        let classes = |e: &BridgeError| attempts(e).into_iter().map(|a| a.class).collect::<Vec<_>>();
        let panic = BridgeError::new(exceptions::PANIC, "boom".into());
        assert_eq!(classes(&panic), [exceptions::PANIC, exceptions::BRIDGE, exceptions::LAST_RESORT]);
        let bridge = BridgeError::new(exceptions::BRIDGE, "unknown handle".into());
        assert_eq!(classes(&bridge), [exceptions::BRIDGE, exceptions::LAST_RESORT]);
    }
}
