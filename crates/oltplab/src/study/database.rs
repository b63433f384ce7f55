//! A study's loaded database and the runs on it: one load per engine and workload, a fresh copy
//! for every run, and the run of whichever workload a cell names (TPC-C, brokerage, order entry)
//! with the figures the studies read.

use std::path::{Path, PathBuf};

use oltplab_core::units::format_bytes;
use oltplab_core::{safety, Error, Result};
use oltplab_devmodel::Spec;
use oltplab_metrics::Warning;

use crate::emulate::{BackingChoice, Emulation};
use crate::plugins::tpcc::{self, LoadConfig, RunConfig};
use crate::workload::scaffold::{CaptureConfig, OutputConfig};
use crate::workload::target::{DbSpec, Engine};
use crate::{output, STOP};

use super::file::{load_text, EngineDef};
use super::shipped::S1_POOL_SHARE;
use super::Scale;

/// The study's database: loaded once at `base`, copied for each device's run.
pub(super) struct Database {
    pub(super) engine: String,
    /// SQLite: the file; servers: the managed server's data directory.
    pub(super) base: PathBuf,
    pub(super) data_dir: PathBuf,
    pub(super) buffer_pool_bytes: u64,
    /// Servers: settings of the study file's engine entry (`KEY=VALUE`), for the load and runs.
    pub(super) server_settings: Vec<(String, String)>,
    /// What was loaded and runs: `tpcc`, or [`BROKERAGE`] (a study file's workload).
    pub(super) workload: &'static str,
    /// A Galera cluster's nodes, for the load and runs (None: the engine's default).
    pub(super) nodes: Option<u32>,
}

/// The brokerage workload, in a study file's cells and the storage scenarios.
pub(super) const BROKERAGE: &str = "brokerage";

/// The brokerage workload's database in the studies: one load unit.
pub(super) const BROKERAGE_CUSTOMERS: i64 = 1000;

/// The order-entry workload (S5's), in a study file's cells.
pub(super) const ORDERS: &str = "orders";

/// Order entry in a study: what is loaded, and the fixed work of a cell's run (transactions
/// in all, shared out over its connections, after a warm-up of so many per connection).
pub(super) struct OrdersWork {
    pub(super) load: oltplab_workloads::orders::Scale,
    pub(super) tx_per_point: u64,
    pub(super) warmup_tx_per_connection: u64,
}

/// Order entry's load and work at a study's scale: the work is fixed (its time is what a cell
/// measures), sized to take about the scale's measured window on a fast emulated device.
pub(super) fn orders_work(scale: &Scale) -> OrdersWork {
    let (customers, products, orders, tx, warmup) = match scale.name.as_str() {
        "test" => (1_000, 100, 1_000, 2_000, 10),
        "quick" => (10_000, 1_000, 10_000, 20_000, 10),
        "default" => (10_000, 1_000, 10_000, 100_000, 100),
        _ => (100_000, 10_000, 100_000, 500_000, 100),
    };
    OrdersWork {
        load: oltplab_workloads::orders::Scale {
            customers,
            products,
            orders,
        },
        tx_per_point: tx,
        warmup_tx_per_connection: warmup,
    }
}

/// Trading days of generated history: a few at the test and quick scales, more above.
pub(super) fn brokerage_days(scale: &Scale) -> i64 {
    match scale.name.as_str() {
        "test" => 2,
        "quick" => 10,
        "default" => 50,
        _ => 300,
    }
}

/// The smallest buffer pool a managed server accepts (see `ServerConfig`).
pub(super) const SERVER_POOL_BYTES_MIN: u64 = 8 << 20;

impl Database {
    pub(super) fn new(engine: &str, data_dir: &Path, scale: &Scale) -> Database {
        let (base, buffer_pool_bytes) = match engine {
            "sqlite" => (data_dir.join("base.sqlite"), scale.buffer_pool_bytes),
            _ => (
                data_dir.join(format!("base-{engine}")),
                scale.buffer_pool_bytes.max(SERVER_POOL_BYTES_MIN),
            ),
        };
        Database {
            engine: engine.to_string(),
            base,
            data_dir: data_dir.to_path_buf(),
            buffer_pool_bytes,
            server_settings: Vec::new(),
            workload: "tpcc",
            nodes: None,
        }
    }

    pub(super) fn is_server(&self) -> bool {
        self.engine != "sqlite"
    }

    /// The database at `at`: an SQLite file, or a managed server (O_DIRECT where the engine has
    /// it, as S1 ran) in that data directory.
    pub(super) fn spec(&self, at: &Path) -> Result<DbSpec> {
        if self.is_server() {
            let mut spec = DbSpec::resolve(
                Some(Engine::named(&self.engine)?),
                None,
                at,
                self.buffer_pool_bytes,
                None,
                true,
            )?;
            spec.server_settings = self.server_settings.clone();
            spec.nodes = self.nodes.or(spec.nodes);
            Ok(spec)
        } else {
            DbSpec::resolve(
                Some(Engine::Sqlite),
                Some(&format!("sqlite:{}", at.display())),
                &self.data_dir,
                self.buffer_pool_bytes,
                None,
                false,
            )
        }
    }

    /// Loads TPC-C into the base database and checks its twelve conditions; the engine's version.
    pub(super) fn load_tpcc(&self, warehouses: u32, seed: u64) -> Result<String> {
        let load = tpcc::load_with(
            &LoadConfig {
                db: self.spec(&self.base)?,
                warehouses,
                threads: std::thread::available_parallelism().map_or(1, |n| n.get()) as u32,
                seed,
                check: true,
                force: true,
                emulate: None,
                sqlite_vfs: None,
                quiet: output::quiet(),
            },
            &STOP,
        )?;
        if load.conditions.iter().any(|c| !c.holds()) {
            return Err(Error::failed(
                "the freshly loaded database violates TPC-C consistency conditions: this is a bug in oltplab",
            ));
        }
        Ok(load.engine_version)
    }

    /// Loads the brokerage workload's database ([`BROKERAGE_CUSTOMERS`], [`brokerage_days`]) into
    /// the base database and checks its invariants; the engine's version.
    pub(super) fn load_brokerage(&self, scale: &Scale) -> Result<String> {
        let load = crate::plugins::brokerage::load_with(
            &crate::plugins::brokerage::LoadConfig {
                db: crate::plugins::brokerage::brokerage_spec(self.spec(&self.base)?),
                scale: oltplab_workloads::brokerage::Scale {
                    customers: BROKERAGE_CUSTOMERS,
                    days: brokerage_days(scale),
                },
                threads: std::thread::available_parallelism().map_or(1, |n| n.get()) as u32,
                seed: 1,
                check: true,
                force: true,
                quiet: output::quiet(),
            },
            &STOP,
        )?;
        if load.conditions.iter().any(|c| !c.holds()) {
            return Err(Error::failed(
                "the freshly loaded brokerage database violates its invariants: this is a bug in oltplab",
            ));
        }
        Ok(load.engine_version)
    }

    /// Loads order entry's tables ([`orders_work`], disk tables) into the base database and
    /// checks that every order has its five lines; the engine's version.
    pub(super) fn load_orders(&self, scale: &Scale) -> Result<String> {
        let spec = crate::plugins::orders::orders_spec(self.spec(&self.base)?);
        let load = crate::plugins::orders::load_with(
            &crate::plugins::orders::OrdersLoadConfig {
                db: spec,
                tables: oltplab_workloads::orders::Tables::Disk,
                scale: orders_work(scale).load,
                seed: 1,
                force: true,
                quiet: output::quiet(),
            },
            &STOP,
        )?;
        Ok(load.engine_version)
    }

    /// A fresh copy of the loaded database for device `name`.
    pub(super) fn copy_for(&self, name: &str) -> Result<PathBuf> {
        if self.is_server() {
            let to = self.data_dir.join(format!("run-{name}-{}", self.engine));
            if to.exists() {
                safety::ensure_own_dir(&to, false)?;
                std::fs::remove_dir_all(&to).map_err(|e| safety::io_usage(&to, "remove", &e))?;
            }
            oltplab_dbs::server::copy_cluster(&self.base, &to)?;
            Ok(to)
        } else {
            let to = self.data_dir.join(format!("run-{name}.sqlite"));
            copy_database(&self.base, &to)?;
            Ok(to)
        }
    }

    pub(super) fn remove_copy(&self, copy: &Path) {
        if self.is_server() {
            let _ = std::fs::remove_dir_all(copy);
        } else {
            oltplab_dbs::sqlite::remove_database_files(copy);
        }
    }
}

/// A cell's run, whichever workload: the figures the study reads, in TPC-C's summary where the
/// brokerage's are the same (transactions, I/O, CPU, window, emulation).
pub(super) struct WorkloadRun {
    pub(super) summary: oltplab_schema::TpccSummary,
    pub(super) step: oltplab_schema::RampStep,
    pub(super) tpse_like: Option<f64>,
    pub(super) orders_tps: Option<f64>,
    pub(super) warnings: Vec<Warning>,
    pub(super) engine_version: Option<String>,
}

/// The database's workload at the study's run configuration: TPC-C's run, or the brokerage's
/// with the same database, terminals, window, capture and output.
pub(super) fn study_workload_run(
    database: &Database,
    cfg: &RunConfig,
    scale: &Scale,
) -> Result<WorkloadRun> {
    if database.workload == ORDERS {
        return orders_run(cfg, scale);
    }
    if database.workload != BROKERAGE {
        let o = tpcc::run_with(cfg, &STOP)?;
        return Ok(WorkloadRun {
            step: tpcc::step_of(&o.doc),
            summary: o.doc.summary,
            tpse_like: None,
            orders_tps: None,
            warnings: o.doc.warnings,
            engine_version: o.doc.env.engine_version,
        });
    }
    let b = crate::plugins::brokerage::RunConfig {
        workload: "brokerage",
        db: crate::plugins::brokerage::brokerage_spec(cfg.db.clone()),
        terminals: cfg.terminals.unwrap_or(1),
        ramp: Vec::new(),
        duration_s: cfg.duration_s,
        warmup_s: cfg.warmup_s,
        warmup_auto: cfg.warmup_auto,
        report_interval_s: cfg.report_interval_s,
        max_retries: cfg.max_retries,
        seed: cfg.seed,
        procedures: false,
        capture: cfg.capture.clone(),
        output: cfg.output.clone(),
    };
    let doc = crate::plugins::brokerage::run_with(&b, &STOP)?;
    let s = &doc.summary;
    Ok(WorkloadRun {
        step: crate::plugins::brokerage::brokerage_step_of(&doc),
        summary: oltplab_schema::TpccSummary {
            tx: s.tx.clone(),
            io: s.io.clone(),
            cpu: s.cpu.clone(),
            measured_s: s.measured_s,
            emulation: s.emulation.clone(),
            interrupted: s.interrupted,
            ..Default::default()
        },
        tpse_like: Some(s.tpse_like),
        orders_tps: None,
        warnings: doc.warnings.clone(),
        engine_version: doc.env.engine_version.clone(),
    })
}

/// Order entry's run at a study's configuration: one connection per terminal, insert
/// transactions on disk tables, the fixed work of [`orders_work`], with the same database,
/// capture and output as TPC-C's; its figures where TPC-C's summary has the same.
pub(super) fn orders_run(cfg: &RunConfig, scale: &Scale) -> Result<WorkloadRun> {
    use oltplab_workloads::orders::{Mode, Tables};
    let work = orders_work(scale);
    let connections = cfg.terminals.unwrap_or(1);
    let o = crate::plugins::orders::OrdersRunConfig {
        workload: ORDERS,
        db: crate::plugins::orders::orders_spec(cfg.db.clone()),
        mode: Mode::Insert,
        tables: Some(Tables::Disk),
        connections: vec![connections],
        tx_per_connection: work.tx_per_point.div_ceil(u64::from(connections.max(1))),
        tx_per_point: Some(work.tx_per_point),
        warmup_tx_per_connection: work.warmup_tx_per_connection,
        max_retries: cfg.max_retries,
        seed: cfg.seed,
        report_interval_s: cfg.report_interval_s,
        capture: cfg.capture.clone(),
        output: cfg.output.clone(),
    };
    let doc = crate::plugins::orders::run_with(&o, &STOP)?.doc;
    let s = &doc.summary;
    let io = s.io.clone().unwrap_or_default();
    // One transaction type, named by the mode as the run's I/O per transaction names it.
    let tx = oltplab_schema::TxSummary {
        count: s.transactions,
        errors: s.errors,
        retries: s.retries,
        tps: s.tps,
        lat_ns: s.lat_ns,
        ..Default::default()
    };
    let histogram = format!("tx_c{connections}");
    let step = oltplab_schema::RampStep {
        terminals: connections,
        throughput: s.tps,
        throughput_unit: "tx/s".into(),
        tx_per_s: s.tps,
        ..crate::workload::ramp::common_figures(
            std::iter::once(&histogram),
            &doc.histograms,
            s.cpu.utilisation,
            &io,
            &doc.warnings,
            s.interrupted,
        )
    };
    Ok(WorkloadRun {
        step,
        summary: oltplab_schema::TpccSummary {
            tx: [(s.mode.clone(), tx)].into(),
            io,
            cpu: s.cpu.clone(),
            measured_s: s.elapsed_s,
            emulation: s.emulation.clone(),
            interrupted: s.interrupted,
            ..Default::default()
        },
        tpse_like: None,
        orders_tps: Some(s.tps),
        warnings: doc.warnings.clone(),
        engine_version: doc.env.engine_version.clone(),
    })
}

/// Copies the loaded database for one run; the copy is oltplab's (marked), the base stays as loaded.
/// Bytes in the files under `path` (or of the file `path`).
pub(super) fn tree_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| tree_bytes(&e.path())).sum())
        .unwrap_or(0)
}

pub(super) fn copy_database(base: &Path, to: &Path) -> Result<()> {
    // The last copy's, with any table a layout moved into its own file.
    oltplab_dbs::sqlite::remove_database_files(to);
    std::fs::copy(base, to).map_err(|e| {
        Error::failed(format!(
            "cannot copy {} to {}: {}",
            base.display(),
            to.display(),
            e
        ))
    })?;
    safety::write_file_marker(to, safety::FileMarker { filled_bytes: 0 })
        .map_err(|e| safety::io_usage(to, "mark", &e))?;
    Ok(())
}

/// A TPC-C run at the study's scale on `db` (emulating `emulate`, tracing into `trace`), its
/// result saved into `out`: what every TPC-C study runs per device or configuration.
pub(super) fn study_run(
    scale: &Scale,
    db: DbSpec,
    emulate: Option<&Spec>,
    trace: Option<PathBuf>,
    out: &Path,
) -> RunConfig {
    RunConfig {
        workload: "tpcc",
        db,
        warehouses: Some(scale.warehouses),
        terminals: Some(scale.terminals),
        ramp: Vec::new(),
        duration_s: scale.duration_s,
        warmup_s: scale.warmup_s,
        warmup_auto: false,
        report_interval_s: scale.report_interval_s,
        keying_think: scale.keying_think,
        max_retries: 10,
        seed: 1,
        warehouse_range: None,
        start_at: None,
        procedures: false,
        capture: CaptureConfig {
            emulate: emulate.cloned().map(Emulation::device),
            trace,
            // As the device step: a model's times must not wait for this machine's disk.
            backing: BackingChoice::Ram,
        },
        sqlite_vfs: None,
        output: OutputConfig::saved(None, Some(out.to_path_buf()), false),
    }
}

/// Loads TPC-C once for an engine entry (its settings apply to the load's server too); the
/// buffer pool follows the scale as S1's does.
pub(super) fn load_engine(
    engine: &EngineDef,
    workload: &str,
    scale: &Scale,
    data_dir: &Path,
) -> Result<(Database, String)> {
    let mut database = Database::new(&engine.engine, data_dir, scale);
    // One base per entry: two entries of the same engine differ in their settings; TPC-C's
    // keeps the name it had before workloads were an axis.
    let base = match workload {
        "tpcc" => format!("base-{}", engine.name),
        w => format!("base-{}-{w}", engine.name),
    };
    database.base = if engine.engine == "sqlite" {
        data_dir.join(format!("{base}.sqlite"))
    } else {
        data_dir.join(base)
    };
    database.server_settings = engine.settings.clone();
    output::note!("  load: {} on {}", load_text(workload, scale), engine.name);
    let version = match workload {
        super::database::BROKERAGE => {
            database.workload = super::database::BROKERAGE;
            database.load_brokerage(scale)?
        }
        super::database::ORDERS => {
            database.workload = super::database::ORDERS;
            database.load_orders(scale)?
        }
        _ => database.load_tpcc(scale.warehouses, 1)?,
    };
    if scale.pool_share_of_data.is_some() {
        let data_bytes = tree_bytes(&database.base);
        database.buffer_pool_bytes =
            ((data_bytes as f64 * S1_POOL_SHARE) as u64).max(SERVER_POOL_BYTES_MIN);
        output::note!(
            "  buffer pool {} = {:.1} % of the loaded {}",
            format_bytes(database.buffer_pool_bytes),
            S1_POOL_SHARE * 100.0,
            format_bytes(data_bytes)
        );
    }
    Ok((database, version))
}
