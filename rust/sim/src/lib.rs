//! Trace-driven discrete-event simulator of a YARN cluster around the production scheduling
//! core: the simulator plays NodeManagers and ApplicationMasters and asks the very
//! `tidal_core::Scheduler` the ResourceManager runs for every placement.

pub mod bench;
pub mod experiments;
pub mod fidelity;
pub mod gen;
pub mod hints;
pub mod metrics;
pub mod model;
pub mod report;
pub mod runner;
pub mod sim;
pub mod spec;
pub mod traces;
pub mod workload;
