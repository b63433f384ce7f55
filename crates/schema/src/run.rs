//! `run` results: a TPC-C run's summary and its per-second intervals; the CPU and I/O figures
//! order entry's runs share.

use std::collections::BTreeMap;

use oltplab_metrics::LatencyNs;
use oltplab_trace::stat::{GroupIo, TagStat};
use serde::{Deserialize, Serialize};

use super::{EmulationSummary, ResultDoc};

/// `summary.tx.<type>`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TxSummary {
    pub count: u64,
    pub errors: u64,
    pub rollbacks: u64,
    pub retries: u64,
    /// Completed per second of the measured window.
    pub tps: f64,
    pub lat_ns: LatencyNs,
    /// SQLite: mean time a transaction of this type waited for the database-wide writer lock
    /// (the in-process queue and `BEGIN IMMEDIATE`), measured; part of `lat_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_lock_wait_ns_mean: Option<f64>,
    /// SQLite: mean CPU time of the terminal's thread inside a transaction of this type — the
    /// engine's own work, which runs on that thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns_mean: Option<f64>,
}

/// `summary.commit`: the COMMIT of the measured write transactions, timed by the driver from
/// sending it to its answer (every kind together, Delivery's deferred executions included; read-only
/// transactions are not timed). On a Galera node that is the writeset's replication, its
/// certification, the wait for its turn to commit and the local commit; on one server the local
/// commit (the log's flush) alone; on SQLite the in-process COMMIT. Where the driver sends the
/// transaction's last statement with the COMMIT (one MariaDB server: `statement; COMMIT` in one
/// query; PostgreSQL's pipeline) that round trip is the one timed, and `with_last_statement`
/// counts them: their time includes the statement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CommitSummary {
    /// Commits timed.
    pub commits: u64,
    /// Of those, round trips that carried the transaction's last statement too.
    pub with_last_statement: u64,
    pub latency_ns: LatencyNs,
    /// A Galera cluster: the part of the mean commit the nodes say was replication — their mean
    /// group-communication latency (`wsrep_nodes[].repl_latency_ns_mean`, weighted by messages)
    /// — and the rest, `latency_ns.mean` less that: certification, the wait for the writeset's
    /// turn to commit (flow control included), the local commit and its log flush, and the
    /// client's round trip. docs/cluster.md says how each is measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_ns_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_ns_mean: Option<f64>,
    /// `replication_ns_mean` over `latency_ns.mean`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication_share: Option<f64>,
}

impl CommitSummary {
    /// Splits the mean commit with the nodes' replication latency, where they measured it.
    pub fn split_with(&mut self, nodes: &[WsrepNode]) {
        let messages: u64 = nodes
            .iter()
            .filter(|n| n.repl_latency_ns_mean.is_some())
            .map(|n| n.repl_messages)
            .sum();
        if messages == 0 || self.latency_ns.mean <= 0.0 {
            return;
        }
        let replication = nodes
            .iter()
            .filter_map(|n| Some(n.repl_latency_ns_mean? * n.repl_messages as f64))
            .sum::<f64>()
            / messages as f64;
        self.replication_ns_mean = Some(replication);
        self.local_ns_mean = Some((self.latency_ns.mean - replication).max(0.0));
        self.replication_share = Some((replication / self.latency_ns.mean).min(1.0));
    }
}

/// `summary.io`: device counters of the measured window, or (filled by the caller) the captured
/// trace's figures; `source` says which.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct IoSummary {
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub iops: f64,
    /// `diskstats:<device>` (the whole device: other processes' I/O counts too), `trace`, or
    /// `none` when the device is unknown.
    pub source: String,
    /// With --trace: the I/O of each transaction type (and `other`), in all and per transaction.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_tx: BTreeMap<String, TxIo>,
    /// From the trace: reads and writes per table (its indexes included) and per kind of other
    /// file (`(wal)`, `(catalog)` …), largest share first — which table to move to faster storage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_table: Vec<GroupIo>,
    /// On a layout: each device's I/O and busy share of the measured window. On a Galera
    /// cluster every node's devices, each named `nodeK:` before its label.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_device: Vec<GroupIo>,
    /// A managed Galera cluster under `--emulate`/`--layout`/`--trace`: each node's own I/O on
    /// its own device, node 1 first (the fields above are their sums).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_node: Vec<NodeIo>,
    /// A server run through the shim without a model (`--emulate host`, the real device): what
    /// the database waited for each kind of I/O, as the shim timed its calls (waits for a core
    /// included) — the same instrument as an emulated run's
    /// `summary.emulation.fidelity.realised_by_kind`, so the two compare like with like.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waited_by_kind: Vec<oltplab_devmodel::KindLatency>,
}

/// `summary.io.by_node[]`: one Galera node's I/O in the measured window, from its own trace, and
/// how closely its I/Os kept its own device model.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeIo {
    /// 1-based.
    pub node: u32,
    /// The node's device (spec or layout), `host` when only traced.
    pub device: String,
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// Reads + writes per measured second.
    pub iops: f64,
    /// Each operation's latency as the node's server saw it (the emulated device's, or the
    /// host's when only traced).
    pub read_lat_ns: LatencyNs,
    pub write_lat_ns: LatencyNs,
    pub sync_lat_ns: LatencyNs,
    /// Its devices' I/O and busy share (as `summary.io.by_device` of a single server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_device: Vec<GroupIo>,
    /// On an emulated device: the node's own fidelity figures (as `summary.emulation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSummary>,
}

/// `summary.cpu`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TpccCpu {
    pub db_user_s: f64,
    pub db_sys_s: f64,
    pub driver_user_s: f64,
    pub driver_sys_s: f64,
    /// CPU the device emulator spent spinning to modelled completions in the database's threads;
    /// taken out of `db_user_s`, and not in `utilisation`.
    pub emulator_spin_s: f64,
    /// (db + driver) CPU seconds per measured second per core: 1.0 = every core busy.
    pub utilisation: f64,
    /// The driver's share of all CPU the run used (db + driver).
    pub driver_share: f64,
}

impl TpccCpu {
    /// Sets `utilisation` and `driver_share` from the seconds: `measured_s` of the window on a
    /// machine of `cores`.
    pub fn set_shares(&mut self, measured_s: f64, cores: usize) {
        let driver_s = self.driver_user_s + self.driver_sys_s;
        let total_s = self.db_user_s + self.db_sys_s + driver_s;
        self.utilisation = total_s / (measured_s.max(1e-9) * cores.max(1) as f64);
        self.driver_share = if total_s > 0.0 {
            driver_s / total_s
        } else {
            0.0
        };
    }

    /// Takes the emulator's spin (CPU its waits spent in the database's threads, measured as
    /// theirs) out of the database's user CPU, and the figures made from it.
    pub fn take_out_spin(&mut self, spin_s: f64) {
        let driver_s = self.driver_user_s + self.driver_sys_s;
        let total_s = self.db_user_s + self.db_sys_s + driver_s;
        let spin_s = spin_s.min(self.db_user_s);
        self.db_user_s -= spin_s;
        self.emulator_spin_s = spin_s;
        let left_s = total_s - spin_s;
        if total_s > 0.0 {
            self.utilisation *= left_s / total_s;
        }
        self.driver_share = if left_s > 0.0 { driver_s / left_s } else { 0.0 };
    }
}

/// The figures a clock-driven run's summary has from its measured window — the I/O (the
/// capture's, else the device's), the emulation's figures and the CPU split — which the run
/// scaffold fills for any workload. Each workload's summary says where they are, beside its type.
pub trait WindowFigures {
    fn window_mut(&mut self) -> (&mut IoSummary, &mut Option<EmulationSummary>, &mut TpccCpu);
}

impl WindowFigures for TpccSummary {
    fn window_mut(&mut self) -> (&mut IoSummary, &mut Option<EmulationSummary>, &mut TpccCpu) {
        (&mut self.io, &mut self.emulation, &mut self.cpu)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TpccSummary {
    /// New-Orders per minute of the measured window — the spec's tpmC only when `paced`.
    pub tpmc: f64,
    /// The same figure under the name HammerDB gives an unpaced run: New-Orders per minute.
    pub nopm: f64,
    /// Transactions of all types per minute.
    pub tpm_total: f64,
    /// Keying and think times were on (spec 5.2.5.7): `tpmc` is a tpmC, `efficiency` and the
    /// response-time limits apply.
    pub paced: bool,
    /// Paced runs: tpmC as a percentage of the spec's ceiling, 12.86 tpmC per warehouse. Absent
    /// when unpaced (it would read 10,000 % and mean nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    pub tx: BTreeMap<String, TxSummary>,
    /// The write transactions' COMMIT round trip (see [`CommitSummary`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<CommitSummary>,
    /// Delivery's deferred executions (`tx.delivery` holds the terminals' queued requests).
    pub delivery_deferred: DeferredDeliverySummary,
    /// Paced runs: each type's 90th-percentile response time against clause 5.2.5.3's limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_time_limits: Vec<ResponseTimeLimit>,
    /// Whether the measured window was in a steady state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
    pub io: IoSummary,
    pub cpu: TpccCpu,
    pub measured_s: f64,
    pub warmup_s: f64,
    /// Wall-clock start of the measured window (RFC 3339, µs): `intervals[].t_s` count from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_started_at: Option<String>,
    /// Warehouses driven: the `--warehouse-range`'s, else all that were loaded.
    pub warehouses: u32,
    pub terminals: u32,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub retries_by_kind: BTreeMap<String, u64>,
    pub load_constants: NurandConstants,
    pub run_constants: NurandConstants,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    pub interrupted: bool,
    /// With --emulate: the device and how closely the engine's I/Os followed its model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationSummary>,
    /// Servers: where their sessions waited in the measured window, as the server tells it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_waits: Option<ServerWaits>,
    /// A managed cluster (`--engine galera`): its nodes' fate in the run and the check that every
    /// acknowledged New-Order is on each node still running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterRun>,
    /// A users ramp (`--terminals 8,32,64`): each step's figures, in the order run; the rest of
    /// the summary is the last step's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ramp: Vec<RampStep>,
    /// Several hosts by `--url`: how many terminals (and Delivery workers) each one served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostUse>,
}

/// `summary.load_constants` / `run_constants`: the NURand constants C of clause 2.1.6 (the run's
/// are drawn against the load's, clause 2.1.6.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NurandConstants {
    pub c_last: i64,
    pub c_id: i64,
    pub ol_i_id: i64,
}

/// `summary.hosts[]`: one host of a `--url` that named several, and the run connections it got
/// (terminal i goes to host i mod N; the workers continue the turn).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostUse {
    /// 1-based, in the order `--url` named them.
    pub host: u32,
    /// The host's URL, password replaced.
    pub url: String,
    pub terminals: u32,
    /// The workers' connections (TPC-C's Delivery, brokerage's market).
    pub workers: u32,
}

/// One step of a users ramp, or one configuration of a storage study: S2's and S3's figures.
/// Read back, every figure but the lists (absent when empty) is required.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RampStep {
    pub terminals: u32,
    /// The workload's headline rate: New-Orders per minute (TPC-C; a tpmC only when paced), or
    /// Trade-Results per second (brokerage, tpsE-like) — `throughput_unit` says which.
    pub throughput: f64,
    pub throughput_unit: String,
    /// Transactions of all types per second.
    pub tx_per_s: f64,
    /// Response time over every transaction type, from their merged histograms.
    pub lat_ns: LatencyNs,
    /// The database's and the driver's CPU per measured second per core (1.0 = every core busy).
    pub cpu_utilisation: f64,
    /// The database's reads + writes per second.
    pub io_iops: f64,
    /// Each emulated device's I/O and busy share (`io.by_device`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<GroupIo>,
    /// The I/O by table (`io.by_table`), when the run was traced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<GroupIo>,
    /// What makes the figures less reliable (the run's warnings say more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<oltplab_metrics::WarningKind>,
    pub interrupted: bool,
}

/// `summary.delivery_deferred`: the executions of the Delivery requests queued in the window
/// (spec 2.7.2), drained after it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DeferredDeliverySummary {
    /// Worker threads, each with its own connection.
    pub workers: u32,
    pub queued: u64,
    pub executed: u64,
    pub errors: u64,
    pub retries: u64,
    /// Districts with no undelivered order, over all executions (ten districts each).
    pub skipped_districts: u64,
    /// `skipped_districts` / (10 × `executed`): at most 1 % (spec 5.4.5); more means the
    /// NEW-ORDER backlog ran out and Deliveries became cheap.
    pub skipped_share: f64,
    /// From queueing to commit (spec 2.7.2.2: 90 % within 80 s).
    pub lat_ns: LatencyNs,
}

/// `summary.response_time_limits[]`: clause 5.2.5.3's limit on a type's 90th percentile.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ResponseTimeLimit {
    /// A transaction type, or `delivery_deferred` (the executions, limit 80 s).
    pub tx: String,
    pub lat_ns_p90: u64,
    pub limit_ns: u64,
    pub met: bool,
}

/// `summary.steady_state`: was the window a steady state, or a transient?
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SteadyState {
    /// New-Orders per minute's change across the window (least-squares slope × window, relative
    /// to the mean); within ±`TREND_STEADY_MAX` counts as steady.
    pub throughput_trend: f64,
    /// Checkpoints (PostgreSQL) that completed in the window; None where the engine does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<u64>,
    /// Pages the engine wrote back from its buffer pool in the window (PostgreSQL buffers written
    /// by checkpoints and the background writer; InnoDB pages flushed); None where unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_written_back: Option<u64>,
    pub steady: bool,
}

/// One second of the measured window.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TpccInterval {
    pub t_s: f64,
    pub tpmc: f64,
    pub tpm_total: f64,
    pub new_order_lat_ns_p99: u64,
    pub new_order_lat_ns_mean: f64,
    pub errors: u64,
    pub retries: u64,
}

pub type TpccResult = ResultDoc<TpccSummary, TpccInterval>;

/// `summary.io.by_tx` key of I/O outside measured transactions: a server's background processes
/// (checkpoints, WAL writer), and terminals between transactions.
pub const OTHER_IO: &str = "other";

/// `summary.io.by_tx.<type>`: the I/O a transaction type did, in all and per transaction.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TxIo {
    /// Measured transactions of the type (0 for `other`).
    pub transactions: u64,
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub reads_per_tx: f64,
    pub writes_per_tx: f64,
    pub syncs_per_tx: f64,
    pub read_bytes_per_tx: f64,
    pub written_bytes_per_tx: f64,
}

/// `summary.server_waits`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerWaits {
    /// `pg_stat_activity` (sampled), `innodb_status` (counters), or `wsrep_status` (a brokerage
    /// run on a Galera cluster: the nodes' counters alone).
    pub source: String,
    /// PostgreSQL: active client backends seen over all samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_samples: Option<u64>,
    /// PostgreSQL: the share of those in each wait event (`type:event`), `CPU` for none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub share_by_event: BTreeMap<String, f64>,
    /// MariaDB: InnoDB row-lock waits in the window and the time they took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_lock_waits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_lock_wait_s: Option<f64>,
    /// Galera: each node's replication counters, node 1 first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wsrep_nodes: Vec<WsrepNode>,
}

/// `summary.cluster`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterRun {
    pub nodes: u32,
    /// 1-based, the nodes still running when the window ended.
    pub nodes_alive_at_end: Vec<u32>,
    /// Connections that lost their node and moved to another, in order.
    pub failovers: Vec<ClusterFailover>,
    /// New-Orders whose commit succeeded, warm-up included.
    pub acknowledged_new_orders: u64,
    /// Of those, the most any running node lacks (0: none was lost).
    pub missing_new_orders: u64,
}

/// `summary.cluster.failovers[]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterFailover {
    /// 1-based.
    pub from_node: u32,
    pub to_node: u32,
    /// RFC 3339, UTC.
    pub at: String,
    /// Seconds since the run started (the cluster was up).
    pub t_s: f64,
}

/// `summary.server_waits.wsrep_nodes[]`: one Galera node's own account of what replication cost
/// it. Counts and pause time are differences over the measured window; the windows are the
/// server's averages since the node started (warm-up included), as `wsrep_*_window` are kept.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WsrepNode {
    /// 1-based.
    pub node: u32,
    /// Local transactions that failed certification (`wsrep_local_cert_failures`).
    pub local_cert_failures: u64,
    /// Local transactions aborted by a replicated one (`wsrep_local_bf_aborts`).
    pub local_bf_aborts: u64,
    /// Time replication was paused by flow control (`wsrep_flow_control_paused_ns`).
    pub flow_control_paused_s: f64,
    /// That time over the measured window.
    pub flow_control_paused_share: f64,
    /// Mean writesets applied in parallel (`wsrep_apply_window`).
    pub apply_window: f64,
    /// Mean writesets committed in parallel (`wsrep_commit_window`).
    pub commit_window: f64,
    /// Local transactions committed in the window (`wsrep_local_commits`).
    #[serde(default)]
    pub local_commits: u64,
    /// Messages this node sent to the group in the window, and their mean latency from sending
    /// to delivery (`wsrep_evs_repl_latency`): the replication round each of its writesets waits
    /// for before certification. None when the node measured no message in the window.
    #[serde(default)]
    pub repl_messages: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repl_latency_ns_mean: Option<f64>,
}

impl ServerWaits {
    /// The share of the server's transaction time spent waiting for locks, where measured:
    /// PostgreSQL's `Lock:*` samples; MariaDB's row-lock time over `in_tx_s`.
    pub fn lock_share(&self, in_tx_s: f64) -> Option<f64> {
        if !self.share_by_event.is_empty() {
            let lock = (self.share_by_event.iter())
                .filter(|(k, _)| k.starts_with("Lock:"))
                .map(|(_, v)| v)
                .sum();
            return Some(lock);
        }
        self.row_lock_wait_s
            .filter(|_| in_tx_s > 0.0)
            .map(|s| (s / in_tx_s).min(1.0))
    }
}

impl TxIo {
    /// A tag's I/O over `transactions` measured transactions.
    pub fn new(t: &TagStat, transactions: u64) -> TxIo {
        let mut io = TxIo {
            transactions,
            ..TxIo::default()
        };
        io.add(t);
        io
    }

    /// All of a window's I/O, per transaction of a workload with one transaction type.
    pub fn of_window(io: &IoSummary, transactions: u64) -> TxIo {
        TxIo::new(
            &TagStat {
                tag: 0,
                name: String::new(),
                reads: io.reads,
                writes: io.writes,
                syncs: io.syncs,
                read_bytes: io.read_bytes,
                written_bytes: io.written_bytes,
            },
            transactions,
        )
    }

    /// Adds another node's I/O of the same transaction type (the count is the run's, once).
    pub fn merge(&mut self, other: &TxIo) {
        self.add(&TagStat {
            tag: 0,
            name: String::new(),
            reads: other.reads,
            writes: other.writes,
            syncs: other.syncs,
            read_bytes: other.read_bytes,
            written_bytes: other.written_bytes,
        });
    }

    /// Adds a tag's I/O (several tags can be one transaction type, or `other`).
    pub fn add(&mut self, t: &TagStat) {
        self.reads += t.reads;
        self.writes += t.writes;
        self.syncs += t.syncs;
        self.read_bytes += t.read_bytes;
        self.written_bytes += t.written_bytes;
        let per = |n: u64| {
            if self.transactions == 0 {
                0.0
            } else {
                n as f64 / self.transactions as f64
            }
        };
        self.reads_per_tx = per(self.reads);
        self.writes_per_tx = per(self.writes);
        self.syncs_per_tx = per(self.syncs);
        self.read_bytes_per_tx = per(self.read_bytes);
        self.written_bytes_per_tx = per(self.written_bytes);
    }
}
