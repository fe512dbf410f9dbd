//! Bounded priority fairness (BoPF): queue model and admission control.

pub mod admission;
pub mod alpha;
pub mod profile;
pub mod spec;
