//! Tidal's scheduling engine.
//!
//! The core holds the cluster state a YARN ResourceManager's scheduler needs (nodes, queues,
//! applications, their outstanding asks and live allocations), applies YARN's request semantics
//! (priorities, locality, normalisation) and delegates every ordering decision to a
//! [`policy::Policy`]. It knows nothing of JNI or Java: the RM shim and the simulator both drive
//! it through [`scheduler::Scheduler`].

pub mod acl;
pub mod allocation_table;
pub mod bopf;
pub mod config;
pub mod container_reservation;
pub mod dag;
pub mod error;
pub mod hints;
pub mod history;
pub mod holds;
pub mod ids;
pub mod limits;
pub mod pending_apps;
pub mod placement;
pub mod policy;
mod queue_order;
pub mod request;
pub mod reservation;
pub mod resource;
pub mod scheduler;
pub mod snapshot;
pub mod state;
pub mod status;
pub mod uwfq;
mod xml_source;

pub use error::{CoreError, Result};
pub use resource::{ResourceKind, Resources, DIMS};
pub use scheduler::{Decision, DecisionKind, Locality, Scheduler};
