//! Measurement primitives shared by every command: latency histograms, CPU accounting, the
//! environment of a run, and the versioned result document (`oltplab.result/1`).

pub mod cpu;
pub mod env;
pub mod latency;
pub mod schema;

pub use latency::{LatencyHistogram, LatencyNs};
pub use schema::{ResultDoc, Warning, WarningKind};
