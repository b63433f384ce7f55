//! `--trace` and `--emulate`: the engine's own I/O of the measured window, recorded and (on an
//! emulated device) held until the device model would have completed it.
//!
//! - Embedded SQLite: the run's connections go through oltplab's VFS, which tags each I/O with the
//!   transaction type of the terminal thread doing it.
//! - Managed servers: the server runs under an emulation session (the LD_PRELOAD shim; `host` when
//!   only tracing). Its trace is cut to the measured window when merged, and each record is tied
//!   to a transaction by the server thread it came from and the driver's [`TxSpan`]s. Without
//!   `--trace` a temporary trace still gives `summary.io` exactly, then is removed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use oltplab_core::{Error, Result};
use oltplab_dbs::vfs::{TraceWindow, Vfs, VfsCounts, VfsOptions};
use oltplab_devmodel::{now_ns, DeviceCounts, Emulator, Fidelity, Spec};
use oltplab_metrics::{LatencyNs, Warning, WarningKind};
use oltplab_trace::stat::{io_by_table, GroupIo, TraceStat};
use oltplab_trace::{TraceData, TraceMeta, TraceWriter};
use oltplab_workloads::driver::TxSpan;

use crate::emulate::session::files_under;
use crate::emulate::{
    self, Backing, BackingChoice, Emulation, EmulationSession, SessionConfig, Target, SHARED,
};
use crate::workload::layout;
use crate::workload::target::{DbSpec, Engine};
use oltplab_schema::{EmulationSummary, IoSummary, NodeIo, TxIo};

/// The capture of a run, if it asked for one.
pub enum Capture {
    Sqlite(Box<SqliteCapture>),
    Server(Box<ServerCapture>),
    /// A managed Galera cluster: one session per node, each its own device model and trace.
    Cluster(Box<ClusterCapture>),
}

pub struct SqliteCapture {
    vfs: Vfs,
    /// The database file, for I/O per table.
    db_path: Option<PathBuf>,
    trace: Option<Arc<TraceWriter>>,
    emulator: Option<Arc<Emulator>>,
    window_start_ns: AtomicU64,
    counts_at_start: Mutex<VfsCounts>,
    counts_at_end: Mutex<Option<VfsCounts>>,
    devices: DeviceWindow,
}

/// What a run asks to capture: its `--emulate`, `--trace` and `--backing`, and where its
/// database is.
pub struct CaptureRequest<'a> {
    pub db: &'a DbSpec,
    pub emulate: Option<&'a Emulation>,
    pub trace: Option<&'a Path>,
    /// Managed servers under `--emulate`: auto, ram or disk.
    pub backing: BackingChoice,
    pub seed: u64,
    /// `--force`: the trace file may replace one oltplab did not write.
    pub force: bool,
}

/// What the capture needs from the run once it is over.
pub struct RunEnd<'a> {
    /// The measured window's length.
    pub measured_s: f64,
    /// Which transaction each server thread ran when (TPC-C's driver records them).
    pub spans: &'a [TxSpan],
    /// The transaction type and its measured count for a record's tag; `other` for the rest.
    pub tx_of_tag: &'a dyn Fn(u8) -> (String, u64),
    /// Terminals whose server thread is unknown (their I/O counts as `other`).
    pub terminals_without_backend: usize,
}

impl Capture {
    /// The capture `req` asks for, if any: SQLite (through oltplab's VFS), or a managed server
    /// whose cluster exists (a missing one is reported by `target::open`).
    pub fn new(req: &CaptureRequest) -> Result<Option<Capture>> {
        if req.trace.is_none() && req.emulate.is_none() {
            return Ok(None);
        }
        Ok(match req.db.engine {
            Engine::Galera => ClusterCapture::new(req)?.map(|c| Capture::Cluster(Box::new(c))),
            Engine::Sqlite => {
                if req
                    .emulate
                    .is_some_and(|e| !matches!(e.target, Target::Device(_)))
                {
                    return Err(Error::usage(
                        "a per-node or shared --emulate/--layout (`node1:…;node2:…`, `shared:…`) is for a Galera cluster's nodes: add --engine galera, or give one spec",
                    ));
                }
                SqliteCapture::new(req)?.map(|c| Capture::Sqlite(Box::new(c)))
            }
            _ => ServerCapture::new(req)?.map(|c| Capture::Server(Box::new(c))),
        })
    }

    /// The VFS every SQLite connection must open through.
    pub fn sqlite_vfs(&self) -> Option<String> {
        match self {
            Capture::Sqlite(c) => Some(c.vfs.name().to_string()),
            Capture::Server(_) | Capture::Cluster(_) => None,
        }
    }

    /// The managed server's environment (the shim).
    pub fn server_env(&self) -> Vec<(String, String)> {
        match self {
            Capture::Sqlite(_) | Capture::Cluster(_) => Vec::new(),
            Capture::Server(c) => c.session.env(),
        }
    }

    /// Each node's environment of a cluster (its own shim session), node 1 first.
    pub fn node_envs(&self) -> Vec<Vec<(String, String)>> {
        match self {
            Capture::Cluster(c) => c.envs(),
            _ => Vec::new(),
        }
    }

    /// Ties server I/O to transactions (the driver then records spans).
    pub fn wants_spans(&self) -> bool {
        match self {
            Capture::Sqlite(_) => false,
            Capture::Server(c) => c.trace_path.is_some(),
            Capture::Cluster(c) => c.nodes.iter().any(|n| n.trace_path.is_some()),
        }
    }

    pub fn measure_start(&self) {
        match self {
            Capture::Sqlite(c) => c.measure_start(),
            Capture::Server(c) => c.measure_start(),
            Capture::Cluster(c) => c.nodes.iter().for_each(ServerCapture::measure_start),
        }
    }

    pub fn measure_end(&self) {
        match self {
            Capture::Sqlite(c) => c.measure_end(),
            Capture::Server(c) => c.measure_end(),
            Capture::Cluster(c) => c.nodes.iter().for_each(ServerCapture::measure_end),
        }
    }

    /// Closes the trace and returns the engine's own I/O of the measured window (`summary.io`,
    /// with I/O per transaction type when traced), warnings, and the emulation's fidelity. Call
    /// after the connections closed and a managed server stopped.
    pub fn finish(
        self,
        outcome: &RunEnd,
    ) -> Result<(IoSummary, Vec<Warning>, Option<EmulationSummary>)> {
        match self {
            Capture::Sqlite(c) => (*c).finish(outcome),
            Capture::Server(c) => (*c).finish(outcome),
            Capture::Cluster(c) => (*c).finish(outcome),
        }
    }
}

impl SqliteCapture {
    fn new(cfg: &CaptureRequest) -> Result<Option<SqliteCapture>> {
        if cfg.trace.is_none() && cfg.emulate.is_none() {
            return Ok(None);
        }
        let mut placed_files = Vec::new();
        let emulator = match cfg.emulate {
            None => None,
            Some(emulation) => {
                let spec = emulation.single()?;
                if let Some(db) = &cfg.db.sqlite_path {
                    placed_files = layout::prepare_sqlite_layout(spec, db)?;
                }
                let emulator = Emulator::new(spec, cfg.seed)
                    .map_err(|e| Error::usage(format!("--emulate `{emulation}`: {e}")))?;
                Some(Arc::new(emulator))
            }
        };
        let trace = match cfg.trace {
            None => None,
            Some(path) => {
                let mut meta = TraceMeta::new("sqlite-vfs");
                meta.device = emulator.as_ref().map(|e| e.spec().name());
                Some(Arc::new(TraceWriter::create(path, meta)?))
            }
        };
        let vfs = Vfs::register(VfsOptions {
            trace: trace.clone(),
            emulator: emulator.clone(),
            placed_files,
            crash: None,
        })?;
        // Nothing is traced until the measured window starts.
        vfs.trace_window(None);
        Ok(Some(SqliteCapture {
            vfs,
            trace,
            emulator,
            db_path: cfg.db.sqlite_path.clone(),
            window_start_ns: AtomicU64::new(0),
            counts_at_start: Mutex::new(VfsCounts::default()),
            counts_at_end: Mutex::new(None),
            devices: DeviceWindow::default(),
        }))
    }

    fn measure_start(&self) {
        let now = now_ns();
        self.window_start_ns.store(now, Ordering::Relaxed);
        self.vfs.trace_window(Some(TraceWindow {
            from_ns: now,
            until_ns: None,
        }));
        *self
            .counts_at_start
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = self.vfs.counts();
        if let Some(e) = &self.emulator {
            e.reset_fidelity();
            self.devices.start(e.device_counts(now));
        }
    }

    fn measure_end(&self) {
        let start = self.window_start_ns.load(Ordering::Relaxed);
        self.vfs.trace_window(Some(TraceWindow {
            from_ns: start,
            until_ns: Some(now_ns()),
        }));
        *self.counts_at_end.lock().unwrap_or_else(|p| p.into_inner()) = Some(self.vfs.counts());
        if let Some(e) = &self.emulator {
            self.devices.end(e.device_counts(now_ns()));
        }
    }

    fn finish(
        self,
        outcome: &RunEnd,
    ) -> Result<(IoSummary, Vec<Warning>, Option<EmulationSummary>)> {
        let measured_s = outcome.measured_s;
        let start = *self
            .counts_at_start
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let end = self
            .counts_at_end
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(|| self.vfs.counts());
        let mut warnings = Vec::new();
        let failed = self.vfs.failed_ios();
        if failed > 0 {
            warnings.push(Warning::new(
                WarningKind::ForeignData,
                format!("{failed} of the engine's I/Os failed in the file system: check free space and the log above"),
            ));
        }
        drop(self.vfs);
        let mut by_tx = BTreeMap::new();
        let mut by_table = Vec::new();
        let window_ns = (measured_s * 1e9) as u64;
        let by_device = match &self.emulator {
            Some(e) if !e.spec().is_host() => self.devices.io(e.spec(), window_ns),
            _ => Vec::new(),
        };
        let source = match &self.trace {
            Some(trace) => {
                let summary = trace.close()?;
                warnings.extend(lost_records_warning(summary.dropped_records));
                let mut data = TraceData::load(trace.path())?;
                by_tx = io_by_tx(&data, outcome);
                if let Some(db) = &self.db_path {
                    // The table map goes into the trace, so that `trace stat` shows it too.
                    data.tables = layout::sqlite_table_map(&data.files, db)?;
                    data.save(trace.path())?;
                    by_table = io_by_table(&data, window_ns);
                }
                "trace"
            }
            None => "vfs",
        };
        let io = IoSummary {
            reads: end.reads - start.reads,
            writes: end.writes - start.writes,
            syncs: end.syncs - start.syncs,
            read_bytes: end.read_bytes - start.read_bytes,
            written_bytes: end.written_bytes - start.written_bytes,
            iops: (end.reads - start.reads + end.writes - start.writes) as f64
                / measured_s.max(1e-9),
            source: source.into(),
            by_tx,
            by_table,
            by_device,
            ..IoSummary::default()
        };
        let emulation = self
            .emulator
            .as_ref()
            .map(|e| emulation_summary(e.spec().name(), e.fidelity(), &mut warnings));
        Ok((io, warnings, emulation))
    }
}

/// A managed server under an emulation session for the run.
pub struct ServerCapture {
    session: EmulationSession,
    device: Option<String>,
    /// The user's `--trace`, or None when the trace is only for `summary.io`.
    trace_path: Option<PathBuf>,
    /// Where the session merges the trace (the user's file, or a temporary one).
    merged_path: PathBuf,
    /// A temporary merged trace, registered for a quick quit.
    _temp_trace: Option<oltplab_core::interrupt::Guard>,
    /// The measured window: its start, and its end once it closed.
    window: Mutex<TraceWindow>,
    fidelity_at_end: Mutex<Option<Fidelity>>,
    /// Which files hold which table, for I/O per table.
    tables: layout::TableFiles,
    spec: Spec,
    devices: DeviceWindow,
}

impl ServerCapture {
    fn new(cfg: &CaptureRequest) -> Result<Option<ServerCapture>> {
        refuse_unmanaged(cfg)?;
        let cluster = cfg.db.data_dir.join(cfg.db.engine.name());
        if !cluster.is_dir() {
            return Ok(None);
        }
        refuse_mapped_redo_log(cfg, &cluster)?;
        let spec = match cfg.emulate {
            Some(emulation) => emulation.single()?.clone(),
            None => emulate::host_spec(),
        };
        let backing = resolve_backing(cfg.backing, &spec, std::slice::from_ref(&cluster));
        // Which files are whose: for the layout's places, and for I/O per table.
        let tables = layout::server_table_files(cfg.db, &cluster)?;
        let places = layout::server_places(cfg.db.engine, &spec, &cluster, &tables)?;
        let on = OnDir {
            dir: cluster,
            spec,
            tables,
            places,
        };
        ServerCapture::on(cfg, on, cfg.trace, backing, cfg.seed).map(Some)
    }

    /// A session on the server whose cluster (data directory) is `cluster`, on `spec`, with the
    /// trace merged into `trace` (else a temporary file).
    fn on(
        cfg: &CaptureRequest,
        on: OnDir,
        trace: Option<&Path>,
        backing: Backing,
        seed: u64,
    ) -> Result<ServerCapture> {
        let OnDir {
            dir: cluster,
            spec,
            tables,
            places,
        } = on;
        if let Some(trace) = trace {
            crate::emulate::check_trace_path(trace, &cluster, cfg.force)?;
        }
        let merged_path = match trace {
            Some(path) => path.to_path_buf(),
            None => std::env::temp_dir().join(format!(
                "oltplab-run-{}-{}.trace",
                std::process::id(),
                now_ns()
            )),
        };
        let device = (!spec.is_host()).then(|| spec.name());
        let spec_copy = spec.clone();
        let session = EmulationSession::start(&SessionConfig {
            spec,
            dir: cluster,
            backing,
            trace: Some(merged_path.clone()),
            seed,
            // A server started by root runs as its own account, which gets the shared state.
            account: oltplab_dbs::server::server_account(cfg.db.server_kind())?,
            places,
            undo: None,
        })?;
        Ok(ServerCapture {
            session,
            device,
            trace_path: trace.map(Path::to_path_buf),
            _temp_trace: trace
                .is_none()
                .then(|| oltplab_core::interrupt::guard_path(&merged_path)),
            merged_path,
            window: Mutex::new(TraceWindow::ALL),
            fidelity_at_end: Mutex::new(None),
            tables,
            spec: spec_copy,
            devices: DeviceWindow::default(),
        })
    }

    fn measure_start(&self) {
        self.window
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .from_ns = now_ns();
        self.session.reset_fidelity();
        self.devices.start(self.session.device_counts());
    }

    fn measure_end(&self) {
        self.window
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .until_ns = Some(now_ns());
        // The shutdown checkpoint that follows is not the run's.
        self.devices.end(self.session.device_counts());
        *self
            .fidelity_at_end
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(self.session.fidelity());
    }

    fn finish(
        self,
        outcome: &RunEnd,
    ) -> Result<(IoSummary, Vec<Warning>, Option<EmulationSummary>)> {
        self.finish_node(outcome)
            .map(|n| (n.io, n.warnings, n.emulation))
    }

    /// [`ServerCapture::finish`] with the latencies of the trace, for a cluster's node.
    fn finish_node(self, outcome: &RunEnd) -> Result<NodeFigures> {
        let window = *self.window.lock().unwrap_or_else(|p| p.into_inner());
        let fidelity = self
            .fidelity_at_end
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_else(|| self.session.fidelity());
        let processes = self.session.processes();
        let spans = SpanIndex::new(outcome.spans);
        let report = self.session.finish_filtered(window.from_ns, |r, at_ns| {
            // The session starts at `from_ns`; an I/O at or after the end is not the run's.
            if window.until_ns.is_some_and(|u| at_ns >= u) {
                return false;
            }
            r.tag = spans.tag_of(r.tid, at_ns);
            true
        })?;
        let mut warnings = Vec::new();
        if processes == 0 {
            // On an emulated device the run's figures would be this machine's, labelled as the
            // device's: that is no result.
            if let Some(device) = &self.device {
                return Err(Error::failed(format!(
                    "the server never loaded oltplab's shim, so nothing ran on the emulated {device}: check the server log for a failed LD_PRELOAD (a static or setuid server binary ignores it)"
                )));
            }
            warnings.push(Warning::new(
                WarningKind::TraceIncomplete,
                "the server never loaded oltplab's shim, so its I/O was neither traced nor emulated: check the server log for a failed LD_PRELOAD",
            ));
        }
        let trace = match &report.trace {
            Some(summary) => {
                warnings.extend(lost_records_warning(summary.dropped_records));
                let mut trace = TraceData::load(&summary.path)?;
                trace.tables = layout::server_table_map(&trace.files, &self.tables);
                if self.trace_path.is_some() {
                    // The table map goes into the user's trace, so that `trace stat` shows it.
                    trace.save(&summary.path)?;
                }
                trace
            }
            None => TraceData::default(),
        };
        if trace.meta.extra.contains_key("incomplete_parts") {
            warnings.push(Warning::new(
                WarningKind::TraceIncomplete,
                "a server process ended without closing its trace part (killed?): its last I/Os are missing",
            ));
        }
        if self.trace_path.is_some() && outcome.terminals_without_backend > 0 {
            warnings.push(Warning::new(
                WarningKind::TraceIncomplete,
                format!(
                    "the server did not tell which thread serves {} of the terminals, so their I/O counts as `other` in summary.io.by_tx (MariaDB: information_schema.PROCESSLIST has no TID column and performance_schema is off)",
                    outcome.terminals_without_backend
                ),
            ));
        }
        let stat = TraceStat::compute(&trace);
        let io = IoSummary {
            reads: stat.ops.read,
            writes: stat.ops.write,
            syncs: stat.ops.syncs(),
            read_bytes: stat.read_bytes,
            written_bytes: stat.written_bytes,
            iops: (stat.ops.read + stat.ops.write) as f64 / outcome.measured_s.max(1e-9),
            source: "trace".into(),
            by_tx: if self.trace_path.is_some() {
                by_tx_from_stat(&stat, outcome)
            } else {
                BTreeMap::new()
            },
            by_table: io_by_table(&trace, (outcome.measured_s * 1e9) as u64),
            by_device: if self.device.is_some() {
                self.devices
                    .io(&self.spec, (outcome.measured_s * 1e9) as u64)
            } else {
                Vec::new()
            },
            by_node: Vec::new(),
            // The real device: no model to compare with, only what the calls took.
            waited_by_kind: match self.device {
                None => fidelity.realised_by_kind.clone(),
                Some(_) => Vec::new(),
            },
        };
        if self.trace_path.is_none() {
            let _ = std::fs::remove_file(&self.merged_path);
        }
        let emulation = self
            .device
            .map(|device| emulation_summary(device, fidelity, &mut warnings));
        Ok(NodeFigures {
            io,
            warnings,
            emulation,
            lat_ns: [stat.read_lat_ns, stat.write_lat_ns, stat.sync_lat_ns],
            device: self.spec.name(),
            trace,
        })
    }
}

/// What an emulation session covers: the directory, its device, and which of its files are
/// which table and on which of a layout's devices (paths relative to the directory).
struct OnDir {
    dir: PathBuf,
    spec: Spec,
    tables: layout::TableFiles,
    places: Vec<crate::emulate::PlaceRule>,
}

/// What one server's capture gives: its I/O, warnings and emulation figures, and its trace's
/// read, write and sync latencies.
struct NodeFigures {
    io: IoSummary,
    warnings: Vec<Warning>,
    emulation: Option<EmulationSummary>,
    lat_ns: [LatencyNs; 3],
    device: String,
    /// The window's trace (a shared device's is split by node).
    trace: TraceData,
}

/// `--trace` and `--emulate` need a server oltplab starts.
fn refuse_unmanaged(cfg: &CaptureRequest) -> Result<()> {
    if cfg.db.managed {
        return Ok(());
    }
    if cfg
        .emulate
        .is_some_and(|e| matches!(&e.target, Target::Device(s) if s.is_layout()))
    {
        return Err(Error::usage(
            "--layout needs a server oltplab starts, whose files it can place on the layout's devices: drop --url and let oltplab manage the server",
        ));
    }
    Err(Error::usage(
        "--trace and --emulate need a server oltplab starts (the shim is loaded into it): drop --url, or run your server under `oltplab emulate`",
    ))
}

/// A MariaDB whose files are in /dev/shm memory-maps its redo log there: its commits would
/// write and sync nothing the shim sees.
fn refuse_mapped_redo_log(cfg: &CaptureRequest, dir: &Path) -> Result<()> {
    if matches!(
        cfg.db.server_kind(),
        oltplab_dbs::server::ServerKind::Mariadb
    ) && oltplab_dbs::server::maps_redo_log_in(dir)
    {
        return Err(Error::usage(format!(
            "{} is in /dev/shm, where MariaDB memory-maps its redo log (it takes /dev/shm for persistent memory), so the log's writes and syncs would reach neither the trace nor the emulated device: put --data-dir on another file system (--backing ram still serves the data from memory)",
            dir.display()
        )));
    }
    Ok(())
}

/// Where the emulated files' data lives: the real device runs with real I/O; a model is best
/// served from memory when all the directories' files fit in half of it.
fn resolve_backing(choice: BackingChoice, spec: &Spec, dirs: &[PathBuf]) -> Backing {
    match choice {
        _ if spec.is_host() => Backing::Disk,
        BackingChoice::Ram => Backing::Ram,
        BackingChoice::Disk => Backing::Disk,
        BackingChoice::Auto => {
            let bytes: u64 = dirs.iter().map(|d| files_under(d).1).sum();
            let memory = oltplab_metrics::env::available_memory_bytes();
            if bytes < memory / 2 {
                Backing::Ram
            } else {
                Backing::Disk
            }
        }
    }
}

/// Node `k`'s trace file of a cluster's `--trace FILE`: `run.trace` → `run-node2.trace`.
pub fn node_trace_path(path: &Path, k: u32) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-node{k}.{}", ext.to_string_lossy()),
        None => format!("{stem}-node{k}"),
    };
    path.with_file_name(name)
}

/// A managed Galera cluster's capture: every node on its own emulated device (its own model
/// state, so nodes never queue behind each other's I/O) and with its own trace.
pub struct ClusterCapture {
    /// Node 1 first; with a shared device one session for them all.
    nodes: Vec<ServerCapture>,
    /// `shared:SPEC`: how many nodes share the one session's device.
    shared_by: Option<u32>,
}

impl ClusterCapture {
    fn new(cfg: &CaptureRequest) -> Result<Option<ClusterCapture>> {
        refuse_unmanaged(cfg)?;
        // A missing cluster is reported by `target::open`, which knows the command to load one.
        let Some(loaded) = oltplab_dbs::server::galera::loaded_nodes(&cfg.db.data_dir) else {
            return Ok(None);
        };
        // The loaded size: a different --nodes is refused by the cluster's start, with its fix.
        let nodes = loaded;
        let specs = match cfg.emulate {
            None => vec![emulate::host_spec(); nodes as usize],
            Some(Emulation {
                target: Target::Shared(spec),
                ..
            }) => return ClusterCapture::shared(cfg, spec.clone(), nodes).map(Some),
            Some(e) => e.node_specs(nodes)?,
        };
        let dirs: Vec<PathBuf> = (1..=nodes)
            .map(|k| oltplab_dbs::server::galera::node_cluster_dir(&cfg.db.data_dir, k))
            .collect();
        if let Some(missing) = dirs.iter().position(|d| !d.is_dir()) {
            return Err(Error::usage(format!(
                "node {} of the cluster in {} has no data directory: load the cluster again (oltplab load {} --engine galera --force)",
                missing + 1,
                cfg.db.data_dir.display(),
                cfg.db.workload
            )));
        }
        for dir in &dirs {
            refuse_mapped_redo_log(cfg, dir)?;
        }
        let any_model = specs.iter().find(|s| !s.is_host()).unwrap_or(&specs[0]);
        let backing = resolve_backing(cfg.backing, any_model, &dirs);
        let traces: Vec<Option<PathBuf>> = (1..=nodes)
            .map(|k| cfg.trace.map(|t| node_trace_path(t, k)))
            .collect();
        let mut captures = Vec::new();
        for (i, (spec, dir)) in specs.into_iter().zip(dirs).enumerate() {
            let backing = if spec.is_host() {
                Backing::Disk
            } else {
                backing
            };
            // Each node's model draws its own numbers: identical devices, not one device.
            let seed = cfg.seed.wrapping_add(i as u64);
            let tables = layout::server_table_files(cfg.db, &dir)?;
            let places = layout::server_places(cfg.db.engine, &spec, &dir, &tables)?;
            let on = OnDir {
                dir,
                spec,
                tables,
                places,
            };
            captures.push(ServerCapture::on(
                cfg,
                on,
                traces[i].as_deref(),
                backing,
                seed,
            )?);
        }
        Ok(Some(ClusterCapture {
            nodes: captures,
            shared_by: None,
        }))
    }

    /// `shared:SPEC`: every node on one device (one model, one queue), as when the nodes of this
    /// machine share its disk: one session over the cluster's directory, each node's files placed
    /// and mapped to tables under `nodeK/`, one trace split by node at the end.
    fn shared(cfg: &CaptureRequest, spec: Spec, nodes: u32) -> Result<ClusterCapture> {
        let root = cfg.db.data_dir.join(oltplab_dbs::server::galera::DIR);
        refuse_mapped_redo_log(cfg, &root)?;
        let mut tables = layout::TableFiles::default();
        let mut places = Vec::new();
        let mut dirs = Vec::new();
        for k in 1..=nodes {
            let dir = oltplab_dbs::server::galera::node_cluster_dir(&cfg.db.data_dir, k);
            let t = layout::server_table_files(cfg.db, &dir)?;
            let under = format!(
                "node{k}/{}/",
                oltplab_dbs::server::ServerKind::Mariadb.name()
            );
            for mut p in layout::server_places(cfg.db.engine, &spec, &dir, &t)? {
                p.path = format!("{under}{}", p.path);
                places.push(p);
            }
            for (path, table) in t.files {
                tables.files.insert(format!("{under}{path}"), table);
            }
            dirs.push(dir);
        }
        let backing = resolve_backing(cfg.backing, &spec, &dirs);
        let on = OnDir {
            dir: root,
            spec,
            tables,
            places,
        };
        Ok(ClusterCapture {
            nodes: vec![ServerCapture::on(cfg, on, cfg.trace, backing, cfg.seed)?],
            shared_by: Some(nodes),
        })
    }

    /// Each node's environment, node 1 first (the one session's for every node when shared).
    fn envs(&self) -> Vec<Vec<(String, String)>> {
        match self.shared_by {
            Some(n) => vec![self.nodes[0].session.env(); n as usize],
            None => self.nodes.iter().map(|c| c.session.env()).collect(),
        }
    }

    /// One shared device: the run's figures as one server's, and each node's I/O from its part
    /// of the trace (its files are under `nodeK/`); the device's counts and fidelity are the one
    /// device's, so no node has its own.
    fn finish_shared(
        mut self,
        nodes: u32,
        outcome: &RunEnd,
    ) -> Result<(IoSummary, Vec<Warning>, Option<EmulationSummary>)> {
        let capture = self.nodes.remove(0);
        let n = capture.finish_node(outcome)?;
        let mut io = n.io;
        for k in 1..=nodes {
            let under = format!("node{k}/");
            let mine: Vec<bool> = n
                .trace
                .files
                .iter()
                .map(|f| f.starts_with(&under))
                .collect();
            let part = TraceData {
                records: n
                    .trace
                    .records
                    .iter()
                    .filter(|r| mine.get(r.file as usize).copied().unwrap_or(false))
                    .cloned()
                    .collect(),
                ..n.trace.clone()
            };
            let stat = TraceStat::compute(&part);
            io.by_node.push(NodeIo {
                node: k,
                device: format!("{SHARED}{}", n.device),
                reads: stat.ops.read,
                writes: stat.ops.write,
                syncs: stat.ops.syncs(),
                read_bytes: stat.read_bytes,
                written_bytes: stat.written_bytes,
                iops: (stat.ops.read + stat.ops.write) as f64 / outcome.measured_s.max(1e-9),
                read_lat_ns: stat.read_lat_ns,
                write_lat_ns: stat.write_lat_ns,
                sync_lat_ns: stat.sync_lat_ns,
                by_device: Vec::new(),
                emulation: None,
            });
        }
        Ok((io, n.warnings, n.emulation))
    }

    /// Every node's figures (`summary.io.by_node`), their sums as the run's `summary.io`, and
    /// node 1's emulation figures as `summary.emulation`; warnings name their node.
    fn finish(
        self,
        outcome: &RunEnd,
    ) -> Result<(IoSummary, Vec<Warning>, Option<EmulationSummary>)> {
        if let Some(nodes) = self.shared_by {
            return self.finish_shared(nodes, outcome);
        }
        let mut io = IoSummary {
            source: "trace".into(),
            ..IoSummary::default()
        };
        let mut warnings = Vec::new();
        let mut emulation = None;
        let mut tables: BTreeMap<String, GroupIo> = BTreeMap::new();
        for (i, node) in self.nodes.into_iter().enumerate() {
            let k = i as u32 + 1;
            let n = node.finish_node(outcome)?;
            io.reads += n.io.reads;
            io.writes += n.io.writes;
            io.syncs += n.io.syncs;
            io.read_bytes += n.io.read_bytes;
            io.written_bytes += n.io.written_bytes;
            io.iops += n.io.iops;
            for (tx, t) in &n.io.by_tx {
                io.by_tx
                    .entry(tx.clone())
                    .and_modify(|sum| sum.merge(t))
                    .or_insert_with(|| t.clone());
            }
            for t in &n.io.by_table {
                let sum = tables.entry(t.name.clone()).or_insert_with(|| GroupIo {
                    name: t.name.clone(),
                    ..GroupIo::default()
                });
                sum.reads += t.reads;
                sum.writes += t.writes;
                sum.syncs += t.syncs;
                sum.read_bytes += t.read_bytes;
                sum.written_bytes += t.written_bytes;
                sum.busy_pct = sum.busy_pct.max(t.busy_pct);
            }
            io.by_device.extend(n.io.by_device.iter().map(|d| GroupIo {
                name: format!("node{k}:{}", d.name),
                ..d.clone()
            }));
            warnings.extend(n.warnings.into_iter().map(|mut w| {
                w.message = format!("node {k}: {}", w.message);
                w
            }));
            if i == 0 {
                emulation = n.emulation.clone();
            }
            io.by_node.push(NodeIo {
                node: k,
                device: n.device,
                reads: n.io.reads,
                writes: n.io.writes,
                syncs: n.io.syncs,
                read_bytes: n.io.read_bytes,
                written_bytes: n.io.written_bytes,
                iops: n.io.iops,
                read_lat_ns: n.lat_ns[0],
                write_lat_ns: n.lat_ns[1],
                sync_lat_ns: n.lat_ns[2],
                by_device: n.io.by_device,
                emulation: n.emulation,
            });
        }
        // Shares against the whole cluster's reads and writes, largest first, as one server's.
        let total = (io.reads + io.writes).max(1) as f64;
        let mut by_table: Vec<GroupIo> = tables.into_values().collect();
        for t in &mut by_table {
            t.share_pct = (t.reads + t.writes) as f64 * 100.0 / total;
        }
        by_table.sort_by(|a, b| b.share_pct.total_cmp(&a.share_pct));
        io.by_table = by_table;
        // A device's share is of every node's I/O together.
        for d in &mut io.by_device {
            d.share_pct = (d.reads + d.writes) as f64 * 100.0 / total;
        }
        Ok((io, warnings, emulation))
    }
}

/// Each server thread's transactions, sorted by start, for tagging its trace records.
struct SpanIndex(HashMap<u32, Vec<(u64, u64, u8)>>);

impl SpanIndex {
    fn new(spans: &[TxSpan]) -> SpanIndex {
        let mut by_tid: HashMap<u32, Vec<(u64, u64, u8)>> = HashMap::new();
        for s in spans {
            by_tid
                .entry(s.backend_tid)
                .or_default()
                .push((s.start_ns, s.end_ns, s.tag));
        }
        for v in by_tid.values_mut() {
            v.sort_unstable();
        }
        SpanIndex(by_tid)
    }

    /// The transaction type `tid` was running at `at_ns`, or 0.
    fn tag_of(&self, tid: u32, at_ns: u64) -> u8 {
        let Some(spans) = self.0.get(&tid) else {
            return 0;
        };
        let after = spans.partition_point(|&(start, _, _)| start <= at_ns);
        match after.checked_sub(1).map(|i| spans[i]) {
            Some((_, end, tag)) if at_ns < end => tag,
            _ => 0,
        }
    }
}

/// `summary.io.by_tx` from a trace whose records carry transaction tags.
fn io_by_tx(trace: &TraceData, outcome: &RunEnd) -> BTreeMap<String, TxIo> {
    by_tx_from_stat(&TraceStat::compute(trace), outcome)
}

fn by_tx_from_stat(stat: &TraceStat, outcome: &RunEnd) -> BTreeMap<String, TxIo> {
    let mut by_tx: BTreeMap<String, TxIo> = BTreeMap::new();
    for t in &stat.per_tag {
        let (name, transactions) = (outcome.tx_of_tag)(t.tag);
        by_tx
            .entry(name)
            .and_modify(|io| io.add(t))
            .or_insert_with(|| TxIo::new(t, transactions));
    }
    by_tx
}

fn lost_records_warning(dropped: u64) -> Option<Warning> {
    (dropped > 0).then(|| {
        Warning::new(
            WarningKind::TraceIncomplete,
            format!(
                "the trace lost {dropped} records: it and the I/O counts from it are incomplete"
            ),
        )
    })
}

fn emulation_summary(
    device: String,
    fidelity: Fidelity,
    warnings: &mut Vec<Warning>,
) -> EmulationSummary {
    if let Some(problem) = fidelity.problem() {
        warnings.push(Warning::new(
            WarningKind::EmulationOffTarget,
            format!(
                "the engine's I/Os did not keep the model's latencies on the emulated {device}: {problem}; the machine could not wait exactly (busy CPU?), so the figures are less reliable"
            ),
        ));
    }
    if let Some(queued) = fidelity.cpu_queue_problem() {
        warnings.push(Warning::new(
            WarningKind::CpuBound,
            format!(
                "on the emulated {device} the cores were short: {queued}; a real device's completions would wait for a core the same way, so this is the machine's load, not the emulator's error"
            ),
        ));
    }
    EmulationSummary::new(device, fidelity)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_workloads::tpcc::tx::TxType;

    /// A trace that lost records says so (`trace_incomplete`); one that lost none says nothing.
    #[test]
    fn a_trace_that_lost_records_is_incomplete() {
        assert!(lost_records_warning(0).is_none());
        let w = lost_records_warning(17).unwrap();
        assert_eq!(w.kind, WarningKind::TraceIncomplete);
        assert!(w.message.contains("lost 17 records"), "{}", w.message);
    }

    #[test]
    fn a_cluster_node_traces_beside_the_file_given() {
        assert_eq!(
            node_trace_path(Path::new("/t/run.trace"), 2),
            Path::new("/t/run-node2.trace")
        );
        assert_eq!(node_trace_path(Path::new("run"), 1), Path::new("run-node1"));
    }

    fn span(tid: u32, start_ns: u64, end_ns: u64, tx: TxType) -> TxSpan {
        TxSpan {
            backend_tid: tid,
            start_ns,
            end_ns,
            tag: tx.tag(),
        }
    }

    #[test]
    fn records_are_tied_to_the_transaction_their_thread_was_running() {
        let spans = SpanIndex::new(&[
            span(7, 300, 400, TxType::Payment),
            span(7, 100, 200, TxType::NewOrder),
            span(8, 150, 250, TxType::Delivery),
        ]);
        assert_eq!(spans.tag_of(7, 100), TxType::NewOrder.tag());
        assert_eq!(spans.tag_of(7, 199), TxType::NewOrder.tag());
        assert_eq!(spans.tag_of(7, 200), 0, "between transactions");
        assert_eq!(spans.tag_of(7, 350), TxType::Payment.tag());
        assert_eq!(spans.tag_of(7, 50), 0, "before the first");
        assert_eq!(spans.tag_of(8, 200), TxType::Delivery.tag());
        assert_eq!(spans.tag_of(9, 200), 0, "a background process");
    }
}

/// The emulated devices' counts at the measured window's edges.
#[derive(Default)]
struct DeviceWindow(Mutex<(Vec<DeviceCounts>, Option<Vec<DeviceCounts>>)>);

impl DeviceWindow {
    fn start(&self, counts: Vec<DeviceCounts>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = (counts, None);
    }

    fn end(&self, counts: Vec<DeviceCounts>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).1 = Some(counts);
    }

    /// Each device's I/O in the window and its busy share (`summary.io.by_device`), from the
    /// model; empty without both readings.
    fn io(&self, spec: &Spec, window_ns: u64) -> Vec<GroupIo> {
        let guard = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (start, Some(end)) = &*guard else {
            return Vec::new();
        };
        let counts: Vec<DeviceCounts> = end.iter().zip(start).map(|(e, s)| e.since(s)).collect();
        let total: u64 = counts.iter().map(|c| c.reads + c.writes).sum();
        counts
            .iter()
            .enumerate()
            .map(|(i, c)| GroupIo {
                name: spec.device_label(i as u8),
                reads: c.reads,
                writes: c.writes,
                syncs: c.flushes,
                read_bytes: c.read_bytes,
                written_bytes: c.written_bytes,
                share_pct: if total == 0 {
                    0.0
                } else {
                    (c.reads + c.writes) as f64 * 100.0 / total as f64
                },
                busy_pct: if window_ns == 0 {
                    0.0
                } else {
                    (c.busy_ns as f64 * 100.0 / window_ns as f64).min(100.0)
                },
                read_cache_hit_pct: (c.cache_reads > 0)
                    .then(|| c.cache_hits as f64 * 100.0 / c.cache_reads as f64),
            })
            .collect()
    }
}
