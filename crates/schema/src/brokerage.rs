//! `run` results of the brokerage workload: tpsE-like, each type's figures, the mix as measured
//! against EGen's weights, and the I/O's read/write character.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    CommitSummary, EmulationSummary, HostUse, IoSummary, RampStep, ResultDoc, ServerWaits, TpccCpu,
    TxSummary, WindowFigures,
};

impl WindowFigures for BrokerageSummary {
    fn window_mut(&mut self) -> (&mut IoSummary, &mut Option<EmulationSummary>, &mut TpccCpu) {
        (&mut self.io, &mut self.emulation, &mut self.cpu)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BrokerageSummary {
    /// Trade-Results committed per second of the measured window. Not a TPC-E tpsE: no audit, no
    /// EGen, a simplified schema (docs/brokerage.md).
    pub tpse_like: f64,
    /// Transactions of all types per second.
    pub tps_total: f64,
    pub tx: BTreeMap<String, TxSummary>,
    /// The write transactions' COMMIT round trip (see [`CommitSummary`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<CommitSummary>,
    /// Each type's share of the completed transactions, in percent, against EGen's weight.
    pub mix: BTreeMap<String, MixShare>,
    /// Limit orders Market-Feed triggered over the whole run.
    pub limit_orders_triggered: u64,
    /// Jobs the market emulator still held when the run ended (dropped).
    pub market_backlog_at_end: u64,
    pub io: IoSummary,
    /// Reads per write at the device (or in the trace) in the window; TPC-E ≈ 9.7, TPC-C ≈ 1.9
    /// (Chen et al., SIGMOD Record 2011).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads_per_write: Option<f64>,
    pub cpu: TpccCpu,
    pub measured_s: f64,
    pub warmup_s: f64,
    /// With `--warmup auto`: whether the rate became steady before the warm-up's limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_steady: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_started_at: Option<String>,
    pub customers: i64,
    pub days: i64,
    pub terminals: u32,
    pub market_workers: u32,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub retries_by_kind: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSummary>,
    /// A managed Galera cluster: each node's replication counters over the window
    /// (`wsrep_nodes`, as TPC-C's); absent on other servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_waits: Option<ServerWaits>,
    /// A users ramp (`--terminals 8,32,64`): each step's figures, in the order run; the rest of
    /// the summary is the last step's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ramp: Vec<RampStep>,
    /// Several hosts by `--url`: how many terminals (and market workers) each one served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostUse>,
}

/// `summary.mix.<type>`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MixShare {
    pub measured_pct: f64,
    pub weight_pct: f64,
}

/// `intervals[]` of a brokerage run: one per second of the measured window.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct BrokerageInterval {
    pub t_s: f64,
    pub tpse_like: f64,
    pub tps_total: f64,
    pub errors: u64,
    pub retries: u64,
}

pub type BrokerageResult = ResultDoc<BrokerageSummary, BrokerageInterval>;
