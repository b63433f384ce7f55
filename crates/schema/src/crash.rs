//! `crash` results: power cuts on an emulated device during a workload, and what the engine's
//! recovery made of each state the device could have left.

use serde::{Deserialize, Serialize};

use super::ResultDoc;

/// A `crash` result.
/// No intervals: a crash result's records are its states (`summary.states`).
pub type CrashResult = ResultDoc<CrashSummary, serde_json::Value>;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CrashSummary {
    pub workload: String,
    pub engine: String,
    /// TPC-C's warehouses (absent for the other workloads).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warehouses: i64,
    /// The brokerage's or order entry's customers (absent for TPC-C).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customers: Option<i64>,
    /// Loading the database every cut starts from a copy of.
    pub load_s: f64,
    /// One row per device × engine setting.
    pub rows: Vec<CrashRow>,
    /// Every state of every cut, in order.
    pub states: Vec<CrashStateOutcome>,
    /// True when Ctrl-C ended the command early; the rows hold the finished cuts.
    pub interrupted: bool,
}

/// One device × engine setting: every state of every cut, summed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CrashRow {
    /// The device spec, canonical.
    pub spec: String,
    /// Its (data device's) cache as a cut sees it: off, volatile, lying, battery.
    pub cache: String,
    pub cache_bytes: u64,
    pub sector_bytes: u64,
    /// The engine setting that trades durability: SQLite's `synchronous`, a server setting's name
    /// (`synchronous_commit`, `innodb_flush_log_at_trx_commit` …), or `default`.
    pub setting: String,
    pub value: String,
    /// What the engine's documentation promises for this device and setting.
    pub expected: String,
    pub cuts: u32,
    /// On-disk states checked (cuts × states per cut).
    pub states: u32,
    /// States the engine opened and read after its own recovery.
    pub recoveries_ok: u32,
    pub recovery_ns_mean: f64,
    pub recovery_ns_max: u64,
    /// Transactions whose COMMIT returned before the cut, over all states: TPC-C's New-Orders,
    /// the brokerage's Trade-Orders and Trade-Results, order entry's inserted orders.
    pub acknowledged_commits: u64,
    /// Of those, missing after recovery (all of a state the engine could not open or start on).
    pub commits_lost: u64,
    /// States that lost at least one acknowledged commit.
    pub states_losing_commits: u32,
    /// The workload's consistency conditions violated (TPC-C's twelve, the brokerage's six
    /// invariants, order entry's one), summed over states whose checks ran.
    pub invariants_broken: u32,
    /// States SQLite opened but could not run the consistency checks on (it reported the
    /// database malformed, most often).
    pub checks_failed: u32,
    /// Problems the engine reported (SQLite `PRAGMA quick_check`; a server's log lines about
    /// damaged pages), summed.
    pub corrupt_reports: u32,
    /// Pages the engine restored at recovery (InnoDB: from its doublewrite buffer), summed;
    /// always written (0 for none), absent in results from before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_repaired: Option<u32>,
    /// Writes not yet durable at the cut, mean over cuts.
    pub pending_writes_mean: f64,
    /// Of the pending writes, lost and torn, summed over states.
    pub lost_writes: u64,
    pub torn_writes: u64,
    /// One cut, recovery and check, mean (the run before the cut included).
    pub cycle_s_mean: f64,
    /// States whose outcome the documentation does not allow, kept for replay.
    pub unexpected_states: u32,
}

/// `summary.states[]`: one state of one cut.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CrashStateOutcome {
    /// Index of the row in `summary.rows`.
    pub row: usize,
    pub cut: u32,
    pub state: u32,
    /// The draw that chose the lost writes (with the cut's log, it gives the state again).
    pub seed: u64,
    /// When the power went, from the start of the run.
    pub cut_at_s: f64,
    pub pending_writes: u64,
    pub lost_writes: u64,
    pub torn_writes: u64,
    pub recovered: bool,
    pub recovery_ns: u64,
    /// Recovery and every check of this state.
    pub check_s: f64,
    pub acknowledged_commits: u64,
    pub commits_lost: u64,
    /// The workload's consistency checks ran to the end.
    pub checks_ran: bool,
    /// Conditions violated, by number (TPC-C's 3.3.2.N, the brokerage's invariants 1–6, order
    /// entry's 1).
    pub invariants_broken: Vec<u8>,
    pub corrupt_reports: u32,
    /// The engine's lines that `corrupt_reports` counted (a server's log; the first few).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corrupt_lines: Vec<String>,
    /// Pages the engine restored at recovery (InnoDB: "Recovered page … from the doublewrite
    /// buffer"); always written, absent in results from before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_repaired: Option<u32>,
    /// A server's undo log at the cut (written to, given back, still held on disk): what
    /// keeping the crash states cost in space.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo_log: Option<UndoLogSize>,
    /// With `--cut-during checkpoint`: from asking for the checkpoint to the cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_into_checkpoint_s: Option<f64>,
    /// What the engine said when recovery or a check failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Where the state was kept (unexpected, or `--keep-states`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
}

/// `summary.states[].undo_log`: a server run's undo log (crates/devmodel/src/undo.rs).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct UndoLogSize {
    /// Everything the server's processes appended.
    pub appended_bytes: u64,
    /// Records of writes their device had made durable, punched out while the server ran.
    pub given_back_bytes: u64,
    /// The log's blocks on disk at the cut.
    pub held_bytes: u64,
    /// CPU time oltplab's thread spent following the log and giving it back.
    pub follower_cpu_ns: u64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}
