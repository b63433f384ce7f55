//! A `run` result as the reports read it, whatever its workload (TPC-C, order entry, brokerage,
//! TATP) and also a merge of runs: the figures the run section shows, typed. The writers' types
//! (`TpccSummary`, `OrdersSummary` …) fill a missing number with 0, which a report must not show;
//! so this read-side twin holds every figure a workload may lack as `Option` (shown as "—" or left
//! out, as always), and refuses a figure of another type, or a transaction type, ramp step or
//! group without what identifies it, naming the field.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

use oltplab_metrics::LatencyNs;
use oltplab_trace::stat::GroupIo;

/// A figure as written: absent (None), or present as a number or as `null` (serde_json writes a
/// NaN or infinite figure so). The summary table lists a present figure even when it is null.
pub type Written = Option<Option<f64>>;

/// For `Written` fields: present (even if null) is `Some`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Written, D::Error> {
    Option::<f64>::deserialize(d).map(Some)
}

/// A `run` result: its summary. (Its `config`, whose `workload` tells the workloads apart, is read
/// through `ConfigView`, as every kind's.)
#[derive(Clone, Debug, Deserialize)]
pub struct RunDocument {
    pub summary: RunFigures,
}

/// `summary` of a run of any workload.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct RunFigures {
    /// What some writers name in the summary rather than the config.
    #[serde(default)]
    pub workload: Option<String>,
    // Headlines: TPC-C's, brokerage's, order entry's, TATP's.
    #[serde(default, deserialize_with = "present")]
    pub tpmc: Written,
    #[serde(default, deserialize_with = "present")]
    pub tpm_total: Written,
    #[serde(default, deserialize_with = "present")]
    pub tpse_like: Written,
    #[serde(default, deserialize_with = "present")]
    pub tps_total: Written,
    #[serde(default, deserialize_with = "present")]
    pub tps: Written,
    #[serde(default, deserialize_with = "present")]
    pub reads_per_write: Written,
    #[serde(default, deserialize_with = "present")]
    pub efficiency: Written,
    #[serde(default, deserialize_with = "present")]
    pub elapsed_s: Written,
    /// TPC-C: false when keying and think times were off (`tpmc` is then no tpmC).
    #[serde(default)]
    pub paced: Option<bool>,
    /// Per transaction type (TPC-C, brokerage, TATP).
    #[serde(default)]
    pub tx: Option<BTreeMap<String, TxFigures>>,
    #[serde(default)]
    pub io: Option<IoFigures>,
    #[serde(default)]
    pub cpu: Option<CpuFigures>,
    // Order entry's own.
    #[serde(default, deserialize_with = "present")]
    pub transactions: Written,
    #[serde(default, deserialize_with = "present")]
    pub errors: Written,
    #[serde(default, deserialize_with = "present")]
    pub retries: Written,
    #[serde(default)]
    pub lat_ns: Option<LatencyFigures>,
    #[serde(default)]
    pub waits_per_s: Option<BTreeMap<String, Option<f64>>>,
    #[serde(default)]
    pub waiting_sessions: Option<BTreeMap<String, Option<f64>>>,
    #[serde(default)]
    pub waits: Option<WaitsFigures>,
    #[serde(default)]
    pub tables: Option<String>,
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub connections: Vec<u32>,
    #[serde(default)]
    pub tx_per_connection: Option<f64>,
    #[serde(default)]
    pub warmup_tx_per_connection: Option<f64>,
    #[serde(default)]
    pub durability: Option<DurabilityFigures>,
    #[serde(default)]
    pub sweep: Option<Vec<SweepFigures>>,
    /// A users ramp: each step as written.
    #[serde(default)]
    pub ramp: Vec<RampFigures>,
}

/// `summary.ramp[]`: a step of a users ramp, as `RampStep` writes it (every figure required), its
/// warnings as the names written — a newer oltplab's kind is shown, not refused.
#[derive(Clone, Debug, Deserialize)]
pub struct RampFigures {
    pub terminals: u32,
    pub throughput: f64,
    pub throughput_unit: String,
    pub tx_per_s: f64,
    pub lat_ns: LatencyNs,
    pub cpu_utilisation: f64,
    pub io_iops: f64,
    #[serde(default)]
    pub devices: Vec<GroupIo>,
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// `summary.tx.<type>`: the count is what makes it an entry; the rest may be missing.
#[derive(Clone, Debug, Deserialize)]
pub struct TxFigures {
    pub count: u64,
    #[serde(default)]
    pub errors: Option<f64>,
    #[serde(default)]
    pub rollbacks: Option<f64>,
    #[serde(default)]
    pub retries: Option<f64>,
    #[serde(default)]
    pub lat_ns: Option<LatencyFigures>,
}

/// A `lat_ns` object, each figure where written.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
pub struct LatencyFigures {
    #[serde(default)]
    pub mean: Option<f64>,
    #[serde(default)]
    pub p50: Option<f64>,
    #[serde(default)]
    pub p90: Option<f64>,
    #[serde(default)]
    pub p99: Option<f64>,
    #[serde(default)]
    pub p999: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

impl LatencyFigures {
    /// A figure by its field name (`mean`, `p50`, `p90`, `p99`, `p999`, `max`).
    pub fn get(&self, field: &str) -> Option<f64> {
        match field {
            "mean" => self.mean,
            "p50" => self.p50,
            "p90" => self.p90,
            "p99" => self.p99,
            "p999" => self.p999,
            "max" => self.max,
            _ => None,
        }
    }
}

/// `summary.io`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct IoFigures {
    #[serde(default, deserialize_with = "present")]
    pub iops: Written,
    #[serde(default, deserialize_with = "present")]
    pub reads: Written,
    #[serde(default, deserialize_with = "present")]
    pub writes: Written,
    #[serde(default, deserialize_with = "present")]
    pub syncs: Written,
    #[serde(default, deserialize_with = "present")]
    pub read_bytes: Written,
    #[serde(default, deserialize_with = "present")]
    pub written_bytes: Written,
    #[serde(default)]
    pub by_tx: BTreeMap<String, TxIoFigures>,
    #[serde(default)]
    pub by_device: Vec<GroupFigures>,
    #[serde(default)]
    pub by_table: Vec<GroupFigures>,
    #[serde(default)]
    pub by_node: Vec<NodeFigures>,
}

/// `summary.io.by_tx.<type>`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct TxIoFigures {
    #[serde(default)]
    pub transactions: Option<f64>,
    #[serde(default)]
    pub reads_per_tx: Option<f64>,
    #[serde(default)]
    pub writes_per_tx: Option<f64>,
    #[serde(default)]
    pub syncs_per_tx: Option<f64>,
    #[serde(default)]
    pub read_bytes_per_tx: Option<f64>,
    #[serde(default)]
    pub written_bytes_per_tx: Option<f64>,
    #[serde(default)]
    pub reads: Option<f64>,
    #[serde(default)]
    pub writes: Option<f64>,
    #[serde(default)]
    pub syncs: Option<f64>,
}

/// `summary.io.by_device[]` or `by_table[]`: a group is named by its name.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct GroupFigures {
    pub name: String,
    #[serde(default)]
    pub reads: Option<f64>,
    #[serde(default)]
    pub writes: Option<f64>,
    #[serde(default)]
    pub syncs: Option<f64>,
    #[serde(default)]
    pub read_bytes: Option<f64>,
    #[serde(default)]
    pub written_bytes: Option<f64>,
    #[serde(default)]
    pub share_pct: Option<f64>,
    #[serde(default)]
    pub busy_pct: Option<f64>,
    #[serde(default)]
    pub read_cache_hit_pct: Option<f64>,
}

/// `summary.io.by_node[]`: a Galera node's I/O, named by its number.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct NodeFigures {
    pub node: u32,
    #[serde(default)]
    pub device: Option<String>,
    #[serde(default)]
    pub iops: Option<f64>,
    #[serde(default)]
    pub reads: Option<f64>,
    #[serde(default)]
    pub writes: Option<f64>,
    #[serde(default)]
    pub syncs: Option<f64>,
    #[serde(default)]
    pub read_lat_ns: Option<LatencyFigures>,
    #[serde(default)]
    pub write_lat_ns: Option<LatencyFigures>,
    #[serde(default)]
    pub sync_lat_ns: Option<LatencyFigures>,
    #[serde(default)]
    pub emulation: Option<NodeEmulationFigures>,
}

/// `summary.io.by_node[].emulation`, as far as the report shows it.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct NodeEmulationFigures {
    #[serde(default)]
    pub fidelity: Option<FidelityFigures>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct FidelityFigures {
    #[serde(default)]
    pub emulated_off_pct: Option<f64>,
}

/// `summary.cpu` (and a sweep point's).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CpuFigures {
    #[serde(default, deserialize_with = "present")]
    pub db_user_s: Written,
    #[serde(default, deserialize_with = "present")]
    pub db_sys_s: Written,
    #[serde(default, deserialize_with = "present")]
    pub driver_user_s: Written,
    #[serde(default, deserialize_with = "present")]
    pub driver_sys_s: Written,
    #[serde(default, deserialize_with = "present")]
    pub utilisation: Written,
}

/// `summary.waits` of an order-entry run.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct WaitsFigures {
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
}

/// `summary.durability` of an order-entry run.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct DurabilityFigures {
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub commit_setting: Option<String>,
    #[serde(default)]
    pub commit_value: Option<String>,
}

/// `summary.sweep[]`: one connection count of an order-entry sweep.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct SweepFigures {
    #[serde(default)]
    pub connections: Option<f64>,
    #[serde(default)]
    pub tps: Option<f64>,
    #[serde(default)]
    pub elapsed_s: Option<f64>,
    #[serde(default)]
    pub lat_ns: Option<LatencyFigures>,
    #[serde(default)]
    pub cpu: Option<CpuFigures>,
    #[serde(default)]
    pub waits_per_s: BTreeMap<String, Option<f64>>,
    #[serde(default)]
    pub waiting_sessions: BTreeMap<String, Option<f64>>,
}

impl SweepFigures {
    /// `waits_per_s` or `waiting_sessions` by the field's name.
    pub fn waits(&self, field: &str) -> &BTreeMap<String, Option<f64>> {
        if field == "waiting_sessions" {
            &self.waiting_sessions
        } else {
            &self.waits_per_s
        }
    }
}

impl RunFigures {
    /// `waits_per_s` or `waiting_sessions` by the field's name, where written.
    pub fn waits_of(&self, field: &str) -> Option<&BTreeMap<String, Option<f64>>> {
        if field == "waiting_sessions" {
            self.waiting_sessions.as_ref()
        } else {
            self.waits_per_s.as_ref()
        }
    }
}
