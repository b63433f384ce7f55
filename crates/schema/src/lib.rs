//! The result schema `oltplab.result/1` of every kind oltplab writes, in one place: each command's
//! typed summary (`run.rs`: TPC-C; `orders.rs`: order entry; `study.rs`: studies; `profiles.rs`:
//! the profiles study; here: device and replay), and the parts they share. oltplab writes its
//! results through these types and the reports and `oltplab merge` read them back through them
//! (`read`), so a renamed field is a compile error or a one-sentence refusal, never a silent "—".
//! The envelope (`ResultDoc`), typed warnings and the device measurements come from
//! `oltplab-metrics`, a replay's summary from `oltplab-trace` (both below this crate, which they
//! need); they are re-exported here so that a reader finds every result type through this crate.
//! What a result describes rather than measures — the few `config` fields the reports' headings
//! use, and a study's scenario — is read through the views of `view.rs`.
//!
//! Field names are a contract with readers outside this repository: rename nothing.

pub use oltplab_devmodel::Fidelity;
pub use oltplab_metrics::schema::{
    DeviceInterval, DeviceSummary, ResultDoc, SweepPoint, Warning, WarningKind,
};
pub use oltplab_trace::replay::sim::ReplayOrder;
pub use oltplab_trace::replay::{ReplayInterval, ReplaySummary};

mod brokerage;
mod cell_figures;
mod crash;
mod in_memory;
mod orders;
mod profiles;
mod read;
mod run;
mod run_figures;
mod study;
mod tatp;
mod view;

pub use brokerage::*;
pub use cell_figures::*;
pub use crash::*;
pub use in_memory::*;
pub use orders::*;
pub use profiles::*;
pub use read::{read_at, read_str, read_value, ReadError};
pub use run::*;
pub use run_figures::*;
pub use study::*;
pub use tatp::*;
pub use view::{ConfigView, DbView, StudyHead, WorkloadView};

use serde::{Deserialize, Serialize};

/// A `device` result: the measurements, and with `--emulate` the emulated device's figures in
/// `summary.emulation`.
pub type DeviceResult = ResultDoc<DeviceRunSummary, DeviceInterval>;

/// A `replay` result.
pub type ReplayResult = ResultDoc<ReplaySummary, ReplayInterval>;

/// A `study` result of S1 (`--scenario s1`) or of a study file (`--file`).
pub type StudyResult = ResultDoc<StudySummary, serde_json::Value>;

/// A `study --scenario profiles` result.
pub type ProfilesResult = ResultDoc<ProfilesSummary, serde_json::Value>;

/// A `run` result of any workload.
pub enum RunResult {
    Tpcc(Box<TpccResult>),
    Orders(Box<OrdersResult>),
    Brokerage(Box<BrokerageResult>),
    Tatp(Box<TatpResult>),
}

impl RunResult {
    /// Ctrl-C ended the run before its end; the result holds what was measured.
    pub fn interrupted(&self) -> bool {
        match self {
            RunResult::Tpcc(r) => r.summary.interrupted,
            RunResult::Orders(r) => r.summary.interrupted,
            RunResult::Brokerage(r) => r.summary.interrupted,
            RunResult::Tatp(r) => r.summary.interrupted,
        }
    }
}

/// `summary` of a `device` result.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceRunSummary {
    /// With `--start-at`: when the first point started, the window `oltplab merge` aligns on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_started_at: Option<String>,
    #[serde(flatten)]
    pub measured: DeviceSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSummary>,
}

/// `summary.emulation` of any result that ran on an emulated device: which device, and how
/// closely the realised latencies followed its model.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmulationSummary {
    /// The device's spec in canonical form (see `oltplab devices`).
    pub spec: String,
    /// The same spec, under the name `run` results gave it; kept for their readers.
    pub device: String,
    /// `device` results: where the emulated device's data lived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backing: Option<Backing>,
    /// Over every measured I/O (a `device` result: every point, each point's ramp included).
    pub fidelity: Fidelity,
    /// `device` results: each (profile, queue depth) point with the model's own figures for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<EmulationPoint>,
}

impl EmulationSummary {
    pub fn new(spec: String, fidelity: Fidelity) -> EmulationSummary {
        EmulationSummary {
            device: spec.clone(),
            spec,
            backing: None,
            fidelity,
            points: Vec::new(),
        }
    }
}

/// One measured point of an emulated `device` run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmulationPoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub qd: u32,
    /// What the run realised.
    pub iops: f64,
    /// What the model alone gives for this point in virtual time: the device's bound.
    pub model_iops: f64,
    pub model_lat_ns_mean: f64,
    pub fidelity: Fidelity,
}

/// Where an emulated device's data lives in a `device` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backing {
    /// A file in /dev/shm, buffered: memory is faster than any modelled device, so the model alone
    /// sets the pace. Removed at the end.
    Ram,
    /// The target file on the real disk: real data sizes, but the disk must keep up with the model.
    Disk,
    /// `--engine null`: no I/O at all, only the model's timing.
    None,
}

/// What every result has, whatever its kind: read first, so that a file that is no result of this
/// schema is refused naming the field before any kind's figures are read. `summary` and
/// `intervals` must be there; their kind's own type reads them.
#[derive(Clone, Debug, Deserialize)]
pub struct Envelope {
    pub schema: String,
    pub kind: String,
    pub tool: oltplab_metrics::schema::Tool,
    pub started_at: String,
    pub config: serde_json::Value,
    pub env: oltplab_metrics::env::Env,
    #[allow(dead_code)]
    summary: serde::de::IgnoredAny,
    #[allow(dead_code)]
    intervals: serde::de::IgnoredAny,
    /// HdrHistogram V2, base64, by name.
    pub histograms: std::collections::BTreeMap<String, String>,
    pub warnings: Vec<Warning>,
}
