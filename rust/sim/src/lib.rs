//! Trace-driven discrete-event simulator of a YARN cluster around Tidal's scheduling core.
//!
//! The simulator plays NodeManagers and ApplicationMasters and asks the very
//! `tidal_core::Scheduler` the ResourceManager runs for every placement.

pub mod bench;
pub mod bench_docs;
pub mod dashboard;
pub mod experiments;
pub mod export;
pub mod fidelity;
pub mod fidelity_docs;
pub mod gen;
pub mod hints;
pub mod marked_blocks;
pub mod metrics;
pub mod model;
pub mod policies;
pub mod queue_file;
pub mod report;
pub mod runner;
pub mod sim;
pub mod spec;
pub mod sweep;
pub mod traces;
pub mod vs_real;
pub mod workload;
