//! Errors the core reports to its callers. Every variant names what was wrong, so the RM shim
//! can pass the message straight to the operator or the application.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum CoreError {
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("unknown node {0}")]
    UnknownNode(u32),
    #[error("node {0} is already registered")]
    DuplicateNode(u32),
    #[error("unknown application {0}")]
    UnknownApp(u64),
    #[error("application {0} is already registered")]
    DuplicateApp(u64),
    #[error("unknown queue '{0}'")]
    UnknownQueue(String),
    #[error("invalid resource request from application {app}: {reason}")]
    InvalidRequest { app: u64, reason: String },
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A field of an application's DAG hints document (`field` names it, as a path such as
    /// `stages[1].tasks`, or `(document)` for the whole) holds a value the core refuses.
    #[error("hints for application {app}: field {field}: {reason}")]
    InvalidHints { app: u64, field: String, reason: String },
    /// The request is valid but clashes with what exists (a queue of that name, say).
    #[error("conflict: {0}")]
    Conflict(String),
    /// The caller may not do this (a run-time queue owned by someone else).
    #[error("not permitted: {0}")]
    Forbidden(String),
}

/// What kind of failure an error is, for hosts that map errors onto their own types (Java
/// exception classes, HTTP statuses) without reading messages.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Malformed or out-of-range input or configuration.
    Invalid,
    /// A node, application or queue that does not exist.
    NotFound,
    /// Clashes with existing state.
    Conflict,
    /// The caller lacks the right.
    Forbidden,
}

impl CoreError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            CoreError::Config(_)
            | CoreError::InvalidRequest { .. }
            | CoreError::InvalidInput(_)
            | CoreError::InvalidHints { .. } => ErrorKind::Invalid,
            CoreError::UnknownNode(_) | CoreError::UnknownApp(_) | CoreError::UnknownQueue(_) => ErrorKind::NotFound,
            CoreError::DuplicateNode(_) | CoreError::DuplicateApp(_) | CoreError::Conflict(_) => ErrorKind::Conflict,
            CoreError::Forbidden(_) => ErrorKind::Forbidden,
        }
    }
}

pub type Result<T> = std::result::Result<T, CoreError>;
