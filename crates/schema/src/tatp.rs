//! `run` results of TATP: MQTh, each type's figures with its success rate against the one TATP
//! expects, the mix as measured against its weights.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    EmulationSummary, IoSummary, MixShare, RampStep, ResultDoc, TpccCpu, TxSummary, WindowFigures,
};

impl WindowFigures for TatpSummary {
    fn window_mut(&mut self) -> (&mut IoSummary, &mut Option<EmulationSummary>, &mut TpccCpu) {
        (&mut self.io, &mut self.emulation, &mut self.cpu)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TatpSummary {
    /// Mean Qualified Throughput: successful transactions per second of the measured window
    /// (TATP's figure of merit; an unsuccessful one, which found nothing, does not count).
    pub mqth: f64,
    /// Transactions of all types per second, unsuccessful ones included.
    pub tps_total: f64,
    /// Per type; `rollbacks` are the unsuccessful ones (found nothing, rolled back).
    pub tx: BTreeMap<String, TxSummary>,
    pub mix: BTreeMap<String, MixShare>,
    /// Per type: successful in percent of completed, measured.
    pub success_pct: BTreeMap<String, f64>,
    pub io: IoSummary,
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
    pub subscribers: i64,
    pub terminals: u32,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub retries_by_kind: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    pub interrupted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSummary>,
    /// A users ramp (`--terminals 8,32,64`): each step's figures, in the order run; the rest of
    /// the summary is the last step's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ramp: Vec<RampStep>,
}

/// `intervals[]` of a TATP run: one per second of the measured window.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TatpInterval {
    pub t_s: f64,
    /// Completed transactions per second, unsuccessful ones included.
    pub tps_total: f64,
    pub errors: u64,
    pub retries: u64,
}

pub type TatpResult = ResultDoc<TatpSummary, TatpInterval>;
