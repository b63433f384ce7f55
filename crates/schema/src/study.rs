//! `study` results: S1's figures per device with what limited each run, and the intervals of
//! repeated runs (docs/studies.md).

use std::collections::BTreeMap;

use oltplab_devmodel::Fidelity;
use oltplab_trace::replay::sim::ReplayOrder;
use serde::{Deserialize, Serialize};

use oltplab_metrics::Warning;

use super::{ServerWaits, TxIo};

/// One device's figures: `summary.devices[]` of an S1 study (docs/studies.md).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceFigures {
    pub name: String,
    pub spec: String,
    /// 16 KiB random reads at QD 32.
    pub randread16k_iops: f64,
    /// Mean latency of 16 KiB random reads at QD 1.
    pub randread16k_lat_ns: f64,
    /// TPC-C's New-Orders per minute; absent in a study file's brokerage or order-entry cell,
    /// whose throughput is `tpse_like` or `orders_tps`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tpmc: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tpm_total: f64,
    /// The brokerage workload's Trade-Results per second (a study file's brokerage cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpse_like: Option<f64>,
    /// The order-entry workload's transactions per second over its fixed work (a study file's
    /// order-entry cell; the run's `summary.tps`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orders_tps: Option<f64>,
    /// Reads + writes per second the database did in the measured window (from its trace).
    pub run_iops: f64,
    /// Reads + writes per second of that trace replayed as fast as the device allows: the bound
    /// α uses. On the host, each traced thread in order and the threads free (lanes), in
    /// real time; on an emulated device's model, in virtual time, the best of the lanes, causal
    /// and btreplay orders (`bound_order`).
    pub replay_iops: f64,
    /// `run_iops / replay_iops`; None when the replay did no I/O (no bound). Written as 0.0
    /// then, as results always have been, and read back as None.
    #[serde(default, with = "zero_is_none")]
    pub alpha: Option<f64>,
    /// The replay order `replay_iops` comes from (always written; absent in S1 results of
    /// versions that replayed in one order only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_order: Option<ReplayOrder>,
    /// Emulated devices: the replay with each traced thread in order and the threads free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_lanes_iops: Option<f64>,
    /// Emulated devices: the replay in causal order (an I/O waits for every I/O that had completed
    /// before it started in the trace), so what the database serialised stays serial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_causal_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_causal: Option<f64>,
    /// Emulated devices: the replay as blktrace's btreplay -N does it, S1's era's block-level
    /// replay (each CPU's I/O in bunches of at most 8 within 10 ms, submitted back to back, up to
    /// 512 in flight per CPU); absent when the trace carries no CPU ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_btreplay_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_btreplay: Option<f64>,
    /// Emulated devices: the real-time replay through the live emulator, as a cross-check of the
    /// virtual one (it also carries the emulator's timing error: `replay_fidelity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_realtime_iops: Option<f64>,
    pub run_ios: u64,
    pub run_syncs: u64,
    /// Where the terminals' time went and what limited the run.
    pub breakdown: Breakdown,
    pub explanation: String,
    /// Ratios against the baseline device (the first emulated one).
    #[serde(default)]
    pub vs_baseline: Option<Ratios>,
    /// Emulated devices: how closely the run followed the model.
    #[serde(default)]
    pub run_fidelity: Option<Fidelity>,
    /// Emulated devices: how closely the replay followed the model.
    #[serde(default)]
    pub replay_fidelity: Option<Fidelity>,
    /// The run's I/O per transaction type (`summary.io.by_tx` of its result).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub io_by_tx: BTreeMap<String, TxIo>,
    pub trace: String,
    /// With `--repeat N` (N > 1): every repetition's figures. The rates and α above are then the
    /// repetitions' means; the breakdown, explanation, fidelity, I/O per transaction and trace are
    /// the first repetition's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// The first run's S2/S3 figures, handed to a study file's cell (`CellResult::run`); not part
    /// of S1's result.
    #[serde(skip)]
    pub run: Option<super::RampStep>,
}

/// The figures of a device's repeated runs, each with its mean and 95 % confidence interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Repeats {
    pub runs: u32,
    /// Absent for a study file's brokerage or order-entry cell, which has its own throughput.
    #[serde(skip_serializing_if = "Interval::is_zero")]
    pub tpmc: Interval,
    /// A brokerage cell's Trade-Results per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpse_like: Option<Interval>,
    /// An order-entry cell's transactions per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orders_tps: Option<Interval>,
    pub run_iops: Interval,
    pub replay_iops: Interval,
    pub alpha: Interval,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alpha_causal: Option<Interval>,
}

/// A sample's mean and the half-width of its two-sided 95 % confidence interval (Student's t with
/// n − 1 degrees of freedom): the mean lies in `mean ± ci95` with 95 % confidence.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Interval {
    pub mean: f64,
    pub ci95: f64,
    pub values: Vec<f64>,
}

impl Interval {
    pub fn of(values: Vec<f64>) -> Interval {
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n.max(1) as f64;
        let ci95 = if n < 2 {
            0.0
        } else {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            t95(n - 1) * (var / n as f64).sqrt()
        };
        Interval { mean, ci95, values }
    }

    /// Every value 0: a figure the runs did not have (TPC-C's tpmC in a brokerage cell).
    fn is_zero(&self) -> bool {
        self.values.iter().all(|v| *v == 0.0)
    }
}

/// Student's t, two-sided 95 %, for `df` degrees of freedom (`--repeat` allows at most 19).
fn t95(df: usize) -> f64 {
    const T: [f64; 19] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093,
    ];
    T.get(df.saturating_sub(1)).copied().unwrap_or(1.96)
}

impl Repeats {
    pub fn of(runs: &[DeviceFigures]) -> Repeats {
        let take = |f: fn(&DeviceFigures) -> f64| Interval::of(runs.iter().map(f).collect());
        let causal: Option<Vec<f64>> = runs.iter().map(|r| r.alpha_causal).collect();
        Repeats {
            runs: runs.len() as u32,
            tpmc: take(|r| r.tpmc),
            tpse_like: runs
                .iter()
                .map(|r| r.tpse_like)
                .collect::<Option<Vec<f64>>>()
                .map(Interval::of),
            orders_tps: runs
                .iter()
                .map(|r| r.orders_tps)
                .collect::<Option<Vec<f64>>>()
                .map(Interval::of),
            run_iops: take(|r| r.run_iops),
            replay_iops: take(|r| r.replay_iops),
            // A run without a bound counts as 0, as results have always written it.
            alpha: take(|r| r.alpha.unwrap_or(0.0)),
            alpha_causal: causal.map(Interval::of),
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Ratios {
    pub randread16k_iops: f64,
    pub randread16k_lat_ns: f64,
    #[serde(skip_serializing_if = "is_zero")]
    pub tpmc: f64,
    /// A brokerage cell's Trade-Results per second against its baseline cell's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpse_like: Option<f64>,
    /// An order-entry cell's transactions per second against its baseline cell's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orders_tps: Option<f64>,
    pub run_iops: f64,
    pub alpha: f64,
}

/// A TPC-C figure a brokerage cell has not (a TPC-C run that measured one is never exactly 0:
/// a run in which every transaction failed is an error).
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// `Option<f64>` stored as a number where 0.0 stands for None: α's encoding, kept so that the
/// JSON of every result stays as it was while the type says "no figure".
mod zero_is_none {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(v.unwrap_or(0.0))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        Ok(Some(f64::deserialize(d)?).filter(|a| *a != 0.0))
    }
}

/// `Option<u32>` stored as a number where 0 stands for None: a count the workload has not.
mod zero_count_is_none {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<u32>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(v.unwrap_or(0))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
        Ok(Some(u32::deserialize(d)?).filter(|n| *n != 0))
    }
}

fn tpcc() -> String {
    "tpcc".into()
}

fn is_tpcc(w: &str) -> bool {
    w == "tpcc"
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct StudySummary {
    pub scenario: String,
    pub engine: String,
    pub baseline: Option<String>,
    /// The runs' buffer pool (SQLite: page cache), as set from the scale or from the data.
    pub buffer_pool_bytes: u64,
    pub devices: Vec<DeviceFigures>,
    pub load_s: f64,
    pub interrupted: bool,
    /// A study file's (`study --file`, scenario `file`): its finished cells, in the file's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<CellResult>,
}

/// What a cell of a study file varies (docs/studies.md, "Your own study: --file").
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CellAxes {
    /// sqlite, postgres or mariadb.
    pub engine: String,
    /// The `[[engines]]` entry's name (the engine's, unless the file names it).
    pub engine_name: String,
    /// `KEY=VALUE`, as given to the managed server.
    pub server_settings: Vec<String>,
    /// The device spec, as resolved.
    pub device: String,
    /// The spec as a file name, or the short name the file gave it: what `summary.baseline`
    /// names.
    pub device_name: String,
    /// The short name the study file gave the device or layout (`{ name = "…", spec = "…" }`):
    /// the report's label for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The title the study file gave the device or layout (`title = "…"`, any text): what a
    /// storage study calls its configuration (`summary.configs[].name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `tpcc` (absent: the cells before workloads were an axis), `brokerage` or `orders`.
    #[serde(default = "tpcc", skip_serializing_if = "is_tpcc")]
    pub workload: String,
    pub terminals: u32,
    /// none or spec.
    pub pacing: String,
}

/// One finished cell of a study file: `summary.cells[]`, and `cells/<id>-<hash>.json` on its own.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CellResult {
    /// The slug of its axes, e.g. `sqlite_hdd-10k_t4`: names its traces and runs.
    pub id: String,
    /// A hash of its resolved configuration (axes, scale, repeats).
    pub config_hash: String,
    #[serde(flatten)]
    pub axes: CellAxes,
    pub finished_at: String,
    pub engine_version: String,
    pub buffer_pool_bytes: u64,
    /// The device whose 16 KiB random reads are the cell's `randread16k_*` figures: the cell's
    /// device, or its layout's data device.
    pub randread16k_device: String,
    /// The cell's (first) TPC-C run as S2 and S3 report a configuration: throughput, transactions
    /// per second, response time over every type, CPU, IOPS, each emulated device's I/O and busy
    /// share (a layout's by role, with read-cache hits) and the I/O by table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<super::RampStep>,
    /// S1's figures for the cell, under S1's names; `vs_baseline` against the baseline device's
    /// cell of the same engine, terminals and pacing.
    pub figures: DeviceFigures,
    /// The cell's own warnings (also in the study's `warnings`).
    pub warnings: Vec<Warning>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Breakdown {
    /// The terminals' seconds inside transactions (terminals × the window if not known).
    #[serde(default)]
    pub terminal_s: f64,
    /// Share of the terminals' time spent inside reads, writes and syncs.
    pub io_wait_share: f64,
    /// CPU seconds of the database engine and the driver, as a share of the terminals' time.
    pub cpu_share: f64,
    /// CPU utilisation of the whole machine's cores by the database and the driver.
    #[serde(default)]
    pub cpu_utilisation: f64,
    /// The rest: waiting for locks, for a connection, or for the other terminals.
    pub other_share: f64,
    #[serde(default)]
    pub alpha: f64,
    /// Required: a missing limit is never read as the default's.
    pub limit: Limit,
    /// Emulated devices: the share of the machine's cores the emulator's waits spun on in the
    /// window — cores the database and the driver did not have. Counted with `cpu_utilisation`
    /// when deciding whether the CPU limited the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulator_spin_utilisation: Option<f64>,
    /// Emulated devices: the busiest device's share of the window with an I/O in flight on the
    /// model (`summary.io.by_device[].busy_pct` / 100), measured by the emulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_busy_share: Option<f64>,
    /// Emulated devices: the time the server's (or SQLite's) threads queued for a free core after
    /// their I/Os had completed on the model (the emulator's `cpu_queue_ns_mean` × I/Os), as a
    /// share of the terminals' time — an upper bound of what it cost them, since background
    /// threads' I/O counts too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_queue_share: Option<f64>,
    /// Emulated devices: realised against modelled mean latency of the run and of the replay, %.
    #[serde(default)]
    pub run_fidelity_off_pct: Option<f64>,
    #[serde(default)]
    pub replay_fidelity_off_pct: Option<f64>,
    /// Run IOPS over the causal replay's: the database's own ordering kept.
    #[serde(default)]
    pub alpha_causal: Option<f64>,
    /// Emulated devices: run IOPS over the lanes replay's (each thread in order, threads free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_lanes: Option<f64>,
    /// The replay `alpha` is against: the better of the two orders on an emulated device.
    #[serde(default)]
    pub bound_order: ReplayOrder,
    /// SQLite: the share of the terminals' time spent waiting for the writer lock, measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_lock_wait_share: Option<f64>,
    /// SQLite: the mean measured writer-lock wait per transaction type (types that waited).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub writer_lock_wait_ns_by_tx: BTreeMap<String, f64>,
    /// SQLite: of the writer-lock holder's time (write transactions, from the lock's grant to
    /// their end), the shares in I/O calls (from the trace) and on the CPU (its thread's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_io_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_cpu_share: Option<f64>,
    /// Servers: their own account of where their sessions waited (`summary.server_waits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_waits: Option<ServerWaits>,
    /// Servers: the share of transaction time spent waiting for locks, from `server_waits`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_lock_wait_share: Option<f64>,
    /// `--pacing spec`: tpmC as a share of the spec's ceiling for the warehouses (12.86 each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced_efficiency: Option<f64>,
}

/// What limited a run (`breakdown.limit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// α above 1.05 (`ALPHA_VALID_MAX`): the replay was no bound, so nothing is said.
    InvalidBound,
    /// A paced run got most of what its terminals asked for.
    OfferedLoad,
    /// The model had the device busy for most of the window (`DEVICE_BUSY_SHARE`) and the run got
    /// most of the replay's IOPS (α ≥ `DEVICE_BOUND_ALPHA`); on the host, whose busy time no model
    /// measures, α alone.
    #[default]
    Device,
    /// The cores were busy.
    Cpu,
    /// Most of the terminals' time was in synchronous I/O.
    IoLatency,
    /// Lock waits: measured (SQLite's writer lock, a server's count) or the unexplained rest.
    Locks,
    /// A server counted its lock waits, and they are not most of the unexplained rest.
    UnmeasuredWaits,
}

/// One storage configuration's figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ConfigFigures {
    /// What S2/S3 call it, e.g. `log+temp on flash`.
    pub name: String,
    /// The device spec or layout it ran on.
    pub spec: String,
    #[serde(flatten)]
    pub figures: super::RampStep,
    /// Its throughput against the first configuration's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_vs_first: Option<f64>,
    /// With `repeat` above 1: the runs' headline figures, each with its mean and 95 % interval.
    /// `figures` then holds these means, and the first run's lists (devices, tables).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<StepRepeats>,
}

/// A storage configuration's repeated runs: S2's and S3's headline figures, each with its mean
/// and 95 % confidence interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StepRepeats {
    pub runs: u32,
    pub throughput: Interval,
    pub tx_per_s: Interval,
    pub io_iops: Interval,
    pub lat_ns_mean: Interval,
    pub lat_ns_p90: Interval,
    pub cpu_utilisation: Interval,
}

impl StepRepeats {
    /// The runs' intervals, and their first run with its headline figures replaced by the means
    /// (its warnings: every run's, once each).
    pub fn of(runs: &[super::RampStep]) -> (super::RampStep, StepRepeats) {
        let take = |f: fn(&super::RampStep) -> f64| Interval::of(runs.iter().map(f).collect());
        let rep = StepRepeats {
            runs: runs.len() as u32,
            throughput: take(|r| r.throughput),
            tx_per_s: take(|r| r.tx_per_s),
            io_iops: take(|r| r.io_iops),
            lat_ns_mean: take(|r| r.lat_ns.mean),
            lat_ns_p90: take(|r| r.lat_ns.p90 as f64),
            cpu_utilisation: take(|r| r.cpu_utilisation),
        };
        let mut mean = runs[0].clone();
        mean.throughput = rep.throughput.mean;
        mean.tx_per_s = rep.tx_per_s.mean;
        mean.io_iops = rep.io_iops.mean;
        mean.lat_ns.mean = rep.lat_ns_mean.mean;
        mean.lat_ns.p90 = rep.lat_ns_p90.mean.round() as u64;
        mean.cpu_utilisation = rep.cpu_utilisation.mean;
        for w in runs[1..].iter().flat_map(|r| &r.warnings) {
            if !mean.warnings.contains(w) {
                mean.warnings.push(*w);
            }
        }
        (mean, rep)
    }
}

/// `summary` of a cache-tiers or placement study. Every figure it always has is required when
/// read back; the optional ones are `Option`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StorageStudySummary {
    pub scenario: String,
    pub engine: String,
    /// tpcc or brokerage.
    pub workload: String,
    /// TPC-C's warehouses; None for the brokerage workload (written as 0 there, as results
    /// always have been, and read back as None; absent too).
    #[serde(default, with = "zero_count_is_none")]
    pub warehouses: Option<u32>,
    /// The brokerage database's customers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customers: Option<i64>,
    pub terminals: u32,
    pub load_s: f64,
    pub database_bytes: u64,
    pub buffer_pool_bytes: u64,
    /// placement: the table the first configuration's I/O named hottest (its share of the I/O).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_table: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_table_share_pct: Option<f64>,
    pub configs: Vec<ConfigFigures>,
    pub interrupted: bool,
    /// Its finished cells, in its study file's order (`measure = "storage"`): each
    /// configuration's figures as saved in `cells/<id>-<hash>.json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<StorageCellResult>,
}

/// A study cell's saved result (`cells/<id>-<hash>.json`): the cell's id and the hash of its
/// resolved configuration, which `oltplab study --resume` matches against the file's cells.
pub trait SavedCell {
    fn cell_key(&self) -> (&str, &str);
}

macro_rules! saved_cell {
    ($($t:ty),*) => {$(
        impl SavedCell for $t {
            fn cell_key(&self) -> (&str, &str) {
                (&self.id, &self.config_hash)
            }
        }
    )*};
}

saved_cell!(
    CellResult,
    StorageCellResult,
    super::ProfilesCellResult,
    super::InMemoryCellResult,
    ClusterCellResult
);

/// One finished cell of a study file of S2's and S3's measurement (`measure = "storage"`):
/// `summary.cells[]` of a storage study, and `cells/<id>-<hash>.json` on its own.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct StorageCellResult {
    /// The slug of its axes: names its result file (and a study file's traces and runs).
    pub id: String,
    /// A hash of its resolved configuration (axes, scale).
    pub config_hash: String,
    #[serde(flatten)]
    pub axes: CellAxes,
    pub finished_at: String,
    pub engine_version: String,
    pub buffer_pool_bytes: u64,
    /// The bytes of the database its engine loaded, which a size written as a share of it
    /// (`size=50%db`) was taken from.
    pub database_bytes: u64,
    /// The configuration's figures as `summary.configs[]` has them; `spec` is the spec it ran
    /// (sizes and the hottest table resolved).
    pub figures: ConfigFigures,
    /// The table a `table:hottest` in its layout stood for, and that table's share of the I/O
    /// of the cell it was found from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_table: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_table_share_pct: Option<f64>,
    /// The cell's own warnings (also in the study's `warnings`).
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

/// `summary` of a cluster study (`oltplab study --scenario cluster`): one MariaDB server against
/// a Galera cluster of `nodes`, each on every listed emulated device (each node its own instance).
/// Read back, every field is required.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClusterStudySummary {
    pub scenario: String,
    /// The cluster's nodes (the single server is one MariaDB without Galera).
    pub nodes: u32,
    pub warehouses: u32,
    pub terminals: u32,
    /// Every server's and node's buffer pool: S1's share of the loaded data.
    pub buffer_pool_bytes: u64,
    /// The single server's loaded data directory.
    pub database_bytes: u64,
    /// Loading the single server, and the cluster (node 1, then its copy to the others).
    pub load_s: f64,
    pub cluster_load_s: f64,
    /// Per device: the single server's row, then the cluster's.
    pub rows: Vec<ClusterStudyRow>,
    pub interrupted: bool,
    /// Its finished cells, one per device and system in its study file's order: what each saved
    /// as `cells/<id>-<hash>.json` when it finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<ClusterCellResult>,
}

/// One finished run of a cluster study (`summary.cells[]`, and `cells/<id>-<hash>.json` on its
/// own): a system on a device, on a fresh copy of that system's loaded database.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClusterCellResult {
    /// `mariadb_<device>` or `galera<nodes>_<device>`: names its result file.
    pub id: String,
    /// A hash of its resolved configuration (device spec, system, nodes, scale).
    pub config_hash: String,
    pub finished_at: String,
    /// The server's version, as the system's load reported it.
    pub engine_version: String,
    /// The single server's loaded data directory, and the buffer pool (S1's share of it) the
    /// run had.
    pub database_bytes: u64,
    pub buffer_pool_bytes: u64,
    /// Its row, without `tpmc_vs_single` (the study adds it against the single server's row).
    pub row: ClusterStudyRow,
    /// The run's warnings that make its row less reliable, as the study's `warnings` has them.
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

/// One run of a cluster study: a system (`mariadb` or `galera`) on a device. Read back, the
/// figures it may lack are `Option` or lists (absent when empty); the rest is required.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClusterStudyRow {
    /// The device spec every server or node ran on.
    pub device: String,
    /// `mariadb` (one server) or `galera` (the cluster).
    pub system: String,
    pub nodes: u32,
    /// New-Orders per minute of the window (a tpmC when paced).
    pub tpmc: f64,
    /// Its tpmC against the single server's on the same device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpmc_vs_single: Option<f64>,
    /// New-Order's response time, which ends with its COMMIT (replication and certification
    /// included on the cluster).
    pub new_order_lat_ns_p50: u64,
    pub new_order_lat_ns_p99: u64,
    /// The COMMIT round trip of every write transaction (`summary.commit` of the run): on the
    /// single server it carries the transaction's last statement too
    /// (`commits_with_last_statement`), on the cluster the COMMIT alone.
    pub commit_latency_ns_p50: u64,
    pub commit_latency_ns_p99: u64,
    pub commits_with_last_statement: u64,
    /// The cluster: the share of the mean commit the nodes measured as replication (their group
    /// communication, `summary.commit.replication_share` of the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_replication_share: Option<f64>,
    /// Measured transactions of every type.
    pub transactions: u64,
    /// Certification conflicts (a COMMIT refused with a deadlock), retried or failed.
    pub certification_conflicts: u64,
    pub conflicts_per_1000_tx: f64,
    /// The nodes' mean share of the window replication was paused by flow control
    /// (`wsrep_flow_control_paused_ns`); None for the single server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_control_paused_share: Option<f64>,
    /// Reads + writes per second of every server or node together (each node's own in `io_by_node`).
    pub io_iops: f64,
    pub io_syncs_per_s: f64,
    pub cpu_utilisation: f64,
    /// The cluster's nodes: each one's I/O on its own device and its wsrep counters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_by_node: Vec<super::NodeIo>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wsrep_nodes: Vec<super::WsrepNode>,
    /// Kinds of the run's warnings that make the row less reliable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The run's own result, relative to the study's output directory.
    pub result: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Repeated brokerage runs: their Trade-Results per second get the mean and interval, and
    /// the tpmC they have not is absent rather than 0 ± 0; TPC-C's repeats keep their tpmC.
    #[test]
    fn repeats_carry_the_workloads_own_throughput() {
        let run = |tpse: f64| DeviceFigures {
            tpse_like: Some(tpse),
            alpha: Some(0.5),
            ..DeviceFigures::default()
        };
        let rep = Repeats::of(&[run(40.0), run(44.0)]);
        let v = serde_json::to_value(&rep).unwrap();
        assert!(v.get("tpmc").is_none(), "{v}");
        assert!(v.get("orders_tps").is_none(), "{v}");
        assert_eq!(v["tpse_like"]["mean"], 42.0);
        // t(1) × s/√n = 12.706 × 2.83 / 1.41
        assert!((v["tpse_like"]["ci95"].as_f64().unwrap() - 25.412).abs() < 1e-3);
        let tpcc = |tpmc: f64| DeviceFigures {
            tpmc,
            ..DeviceFigures::default()
        };
        let v = serde_json::to_value(Repeats::of(&[tpcc(900.0), tpcc(1100.0)])).unwrap();
        assert_eq!(v["tpmc"]["mean"], 1000.0);
        assert!(v.get("tpse_like").is_none(), "{v}");
    }
}
