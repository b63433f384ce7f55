//! `run` results of order entry (S5): fixed work per connection, a sweep over connection counts,
//! the engine's waits and what its tables give up.

use std::collections::BTreeMap;

use oltplab_metrics::LatencyNs;
use serde::{Deserialize, Serialize};

use super::{EmulationSummary, IoSummary, ResultDoc};

/// `summary.cpu`: the same fields as a TPC-C run's.
pub type OrdersCpu = super::TpccCpu;

/// What the engine's waits figures mean and the busiest single events.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WaitsInfo {
    /// `waits_per_s`: waits counted and divided by the elapsed time; `waiting_sessions`: sampled,
    /// the average number of sessions seen waiting (PostgreSQL).
    pub unit: String,
    pub source: String,
    /// The busiest individual wait events of the last point, highest first.
    pub top: Vec<(String, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// What the tables give up.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Durability {
    /// `disk` or `memory`.
    pub tables: String,
    /// False for memory tables: a crash loses them.
    pub survives_crash: bool,
    /// The commit setting that decides whether a commit waits for the log: PostgreSQL's
    /// synchronous_commit, InnoDB's innodb_flush_log_at_trx_commit, SQLite's synchronous.
    pub commit_setting: String,
    pub commit_value: String,
    pub note: String,
}

/// `summary.sweep[]`: one connection count.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ConnectionsPoint {
    pub connections: u32,
    pub tps: f64,
    pub elapsed_s: f64,
    pub waits_per_s: BTreeMap<String, f64>,
    pub waiting_sessions: BTreeMap<String, f64>,
    pub transactions: u64,
    /// Transactions each connection ran.
    pub tx_per_connection: u64,
    pub errors: u64,
    pub retries: u64,
    pub lat_ns: LatencyNs,
    pub cpu: OrdersCpu,
    /// Opening the connections and the warm-up: not measured.
    pub connect_s: f64,
    pub warmup_s: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OrdersSummary {
    /// Transactions per second of the measured work (all points together with a sweep).
    pub tps: f64,
    /// From the start of the fixed work until the last connection finished it (summed over the
    /// points of a sweep).
    pub elapsed_s: f64,
    pub transactions: u64,
    pub errors: u64,
    pub retries: u64,
    /// Per kind; `waits.unit` says whether these are waits per second or sampled waiting sessions.
    pub waits_per_s: BTreeMap<String, f64>,
    /// Per kind: the average number of sessions waiting (wait time over elapsed time, or sampled).
    pub waiting_sessions: BTreeMap<String, f64>,
    pub waits: WaitsInfo,
    pub cpu: OrdersCpu,
    pub lat_ns: LatencyNs,
    pub mode: String,
    pub tables: String,
    pub connections: Vec<u32>,
    pub tx_per_connection: u64,
    /// With `--tx-per-point`: each connection count's transactions in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_per_point: Option<u64>,
    pub warmup_tx_per_connection: u64,
    pub durability: Durability,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Vec<ConnectionsPoint>>,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub retries_by_kind: BTreeMap<String, u64>,
    /// SQLite: the OS threads that take turns over the connections (at most this many
    /// transactions in flight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_threads: Option<u32>,
    /// Rows put back into memory tables that had lost them (MariaDB restart), before the run.
    pub refilled_rows: u64,
    /// With --emulate or --trace: the database's own I/O of the measured work, captured (all
    /// of it per transaction in `by_tx`: order entry has one transaction type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoSummary>,
    /// With --emulate: the device and how closely the database's I/Os followed its model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    pub interrupted: bool,
}

/// One second of the measured work.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OrdersInterval {
    /// Seconds since the first point's measured work started (points follow each other).
    pub t_s: f64,
    pub connections: u32,
    pub tps: f64,
    pub lat_ns_mean: f64,
    pub lat_ns_p99: u64,
    /// Connections still working: the tail of a fixed-work run.
    pub active_connections: u32,
    pub errors: u64,
    pub retries: u64,
}

pub type OrdersResult = ResultDoc<OrdersSummary, OrdersInterval>;
