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
}

pub type Result<T> = std::result::Result<T, CoreError>;
