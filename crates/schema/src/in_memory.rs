//! `study --scenario in-memory` results (S5): disk against memory tables, update and insert, over
//! a sweep of connection counts.

use std::collections::BTreeMap;

use oltplab_metrics::{LatencyNs, Warning};
use serde::{Deserialize, Serialize};

/// A `study --scenario in-memory` result.
pub type InMemoryResult = super::ResultDoc<InMemorySummary, serde_json::Value>;

/// One connection count of one (tables, mode) sweep.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct InMemoryPoint {
    pub connections: u32,
    pub tps: f64,
    pub elapsed_s: f64,
    pub waits_per_s: BTreeMap<String, f64>,
    pub waiting_sessions: BTreeMap<String, f64>,
    pub lat_ns: LatencyNs,
    /// The machine's busy share (database and driver) during the measured work.
    pub cpu_utilisation: f64,
    pub db_cpu_s: f64,
    pub driver_cpu_s: f64,
    pub errors: u64,
}

/// One (tables, mode) sweep: `summary.runs[]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct InMemoryRun {
    pub tables: String,
    pub mode: String,
    /// All points together.
    pub tps: f64,
    pub elapsed_s: f64,
    pub points: Vec<InMemoryPoint>,
    /// `waits_per_s` or `waiting_sessions` (PostgreSQL's samples): what `waits_per_s` holds.
    pub waits_unit: String,
    pub commit_setting: String,
    pub commit_value: String,
    pub survives_crash: bool,
    /// The run's own result, in the output directory.
    pub result: String,
}

/// `summary` of an in-memory study.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct InMemorySummary {
    pub scenario: String,
    pub engine: String,
    pub connections: Vec<u32>,
    pub tx_per_connection: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_per_point: Option<u64>,
    pub runs: Vec<InMemoryRun>,
    pub load_s: f64,
    pub interrupted: bool,
    /// Its finished cells, one per table kind in its study file's order: what each saved as
    /// `cells/<id>-<hash>.json` when it finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<InMemoryCellResult>,
}

/// One finished table kind of an in-memory study (`summary.cells[]`, and
/// `cells/<id>-<hash>.json` on its own): its load, then its update and insert sweeps.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct InMemoryCellResult {
    /// The table kind (`disk`, `memory`): names its result file.
    pub id: String,
    /// A hash of its resolved configuration (engine, table kind, scale).
    pub config_hash: String,
    pub finished_at: String,
    pub tables: String,
    /// The engine's version, as the load reported it.
    pub engine_version: String,
    /// The seconds its load took.
    pub load_s: f64,
    /// Its update, then its insert sweep, as `summary.runs[]` has them.
    pub runs: Vec<InMemoryRun>,
    /// The cell's own warnings (each kind also in the study's `warnings`, once).
    #[serde(default)]
    pub warnings: Vec<Warning>,
}
