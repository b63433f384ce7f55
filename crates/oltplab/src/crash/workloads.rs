//! `oltplab crash tpcc|brokerage|orders` on SQLite: one cut for the three (the VFS stops every I/O
//! at the cut, each state the device allows is drawn and recovered by SQLite), with each
//! workload's own record of acknowledged commits and its own checks:
//!
//! - TPC-C: the (warehouse, district, order id) of every New-Order whose COMMIT returned (its
//!   `orders` row), and the twelve consistency conditions;
//! - brokerage: the trade id of every Trade-Order whose COMMIT returned (its `trade` row) and of
//!   every Trade-Result (its `settlement` row), and the workload's six invariants;
//! - order entry: the id of every inserted order whose COMMIT returned (its `oe_orders` row), and
//!   the workload's one condition (every order has five lines and its total is their sum).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use oltplab_core::safety::io_usage;
use oltplab_core::{Error, Result};
use oltplab_dbs::sqlite::SqliteOptions;
use oltplab_dbs::vfs::{CrashCapture, Vfs, VfsOptions};
use oltplab_devmodel::{Emulator, Spec};
use oltplab_metrics::schema::now_rfc3339;
use oltplab_workloads::brokerage::{self, Scale as BrokerageScale};
use oltplab_workloads::orders::driver::PointConfig;
use oltplab_workloads::orders::sqlite::{self as osq, SqliteTarget};
use oltplab_workloads::orders::{self, Mode, Scale as OrdersScale, Tables};
use oltplab_workloads::sql::{Connector, Purpose};
use oltplab_workloads::tpcc::connect::SqliteConnector;
use oltplab_workloads::tpcc::{self, driver::DriverConfig};

use super::{end_cut, materialise, mix, sqlite_files, CrashConfig, CutPlace, Promise};
use crate::output::say;
use crate::STOP;
use oltplab_schema::CrashStateOutcome;

/// Brokerage's load for a cut: one load unit (TPC-E's smallest) with one trading day of history,
/// so that a load takes seconds; the run's trades are what the cut is about.
pub(super) const BROKERAGE_SCALE: BrokerageScale = BrokerageScale {
    customers: brokerage::LOAD_UNIT,
    days: 1,
};

/// Order entry's load for a cut: small, since every run inserts new orders.
pub(super) const ORDERS_SCALE: OrdersScale = OrdersScale {
    customers: 1000,
    products: 1000,
    orders: 10_000,
};

/// Customers in a load of `workload` (both have them; TPC-C: none).
pub(super) fn customers(workload: &str) -> Option<i64> {
    match workload {
        "brokerage" => Some(BROKERAGE_SCALE.customers),
        "orders" => Some(ORDERS_SCALE.customers as i64),
        _ => None,
    }
}

/// A workload's loaded file, which every cut starts from a copy of.
pub(super) enum Loaded {
    Tpcc { db: PathBuf, meta: tpcc::Meta },
    Brokerage { db: PathBuf, meta: brokerage::Meta },
    Orders { db: PathBuf, meta: orders::Meta },
}

impl Loaded {
    fn db(&self) -> &Path {
        match self {
            Loaded::Tpcc { db, .. } | Loaded::Brokerage { db, .. } | Loaded::Orders { db, .. } => {
                db
            }
        }
    }
}

/// What the driver saw committed before the cut.
pub(super) enum Acknowledged {
    /// TPC-C's New-Orders: (warehouse, district, order id), an `orders` row each.
    NewOrders(Vec<(i64, i64, i64)>),
    /// Trade ids: of committed Trade-Orders (a `trade` row each) and Trade-Results (a
    /// `settlement` row each).
    Trades {
        ordered: Vec<i64>,
        completed: Vec<i64>,
    },
    /// Ids of inserted orders.
    Orders(Vec<i64>),
}

impl Acknowledged {
    pub(super) fn len(&self) -> u64 {
        match self {
            Acknowledged::NewOrders(keys) => keys.len() as u64,
            Acknowledged::Trades { ordered, completed } => (ordered.len() + completed.len()) as u64,
            Acknowledged::Orders(ids) => ids.len() as u64,
        }
    }

    /// Brokerage's and order entry's record with nothing in it is an error (TPC-C's driver
    /// says itself when nothing committed).
    pub(super) fn nonempty(self) -> Result<Self> {
        match self.len() {
            0 => Err(Error::failed("no transaction committed")),
            _ => Ok(self),
        }
    }

    /// Order entry's acknowledged orders; none is an error, its first if it had one.
    pub(super) fn orders(ids: Vec<i64>, first_error: Option<String>) -> Result<Self> {
        match (ids.is_empty(), first_error) {
            (true, Some(e)) => Err(Error::failed(e)),
            _ => Acknowledged::Orders(ids).nonempty(),
        }
    }
}

/// TPC-C's driver for a run that only the cut ends (SQLite and servers alike).
pub(super) fn tpcc_driver(cfg: &CrashConfig, seed: u64) -> DriverConfig {
    DriverConfig {
        terminals: cfg.terminals as usize,
        duration: until_cut(cfg),
        warmup: Duration::ZERO,
        warmup_auto: false,
        keying_think: false,
        seed,
        max_retries: 10,
        record_spans: false,
        home_warehouses: None,
        start_at: None,
        record_new_orders: true,
        procedures: false,
    }
}

/// The brokerage's driver for a run that only the cut ends.
pub(super) fn brokerage_driver(cfg: &CrashConfig, seed: u64) -> brokerage::driver::DriverConfig {
    brokerage::driver::DriverConfig {
        terminals: cfg.terminals as usize,
        duration: until_cut(cfg),
        warmup: Duration::ZERO,
        warmup_auto: false,
        seed,
        max_retries: 10,
        record_spans: false,
        record_trades: true,
        procedures: false,
    }
}

/// Order entry's point for work that only the cut ends.
pub(super) fn orders_point(cfg: &CrashConfig, scale: OrdersScale, seed: u64) -> PointConfig {
    PointConfig {
        connections: cfg.terminals,
        // No end of its own: the cut ends it.
        tx_per_connection: None,
        warmup_tx_per_connection: 0,
        mode: Mode::Insert,
        scale,
        max_retries: 10,
        seed,
        record_orders: true,
    }
}

/// A run's length longer than any cut: the cut ends the run.
fn until_cut(cfg: &CrashConfig) -> Duration {
    Duration::from_secs_f64(cfg.duration_s + 3600.0)
}

/// A connector of the workload's SQLite file (the brokerage library speaks through it).
fn connector(db: &Path, opts: SqliteOptions) -> SqliteConnector {
    SqliteConnector {
        path: db.to_path_buf(),
        opts,
        load_cache_bytes: 256 << 20,
        writer_lock: true,
    }
}

/// Every copy starts from one file: nothing left in the WAL.
fn checkpoint(conn: &mut dyn oltplab_workloads::sql::Conn) -> Result<()> {
    conn.batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .map_err(|e| Error::failed(format!("cannot checkpoint the loaded database: {e}")))
}

/// Loads the workload into one SQLite file, checkpointed (every copy starts from one file).
pub(super) fn load(cfg: &CrashConfig, load_dir: &Path) -> Result<Loaded> {
    let file = format!("{}.sqlite", cfg.workload);
    let db = load_dir.join(&file);
    for f in sqlite_files(&db) {
        // A load left by an earlier run into this directory (ours: it is marked).
        let _ = std::fs::remove_file(f);
    }
    let location = db.display().to_string();
    match cfg.workload.as_str() {
        "tpcc" => {
            say!(
                "oltplab crash tpcc: loading {} warehouse(s) into {location}",
                cfg.warehouses
            );
            let c = connector(&db, SqliteOptions::default());
            let opts = tpcc::load::LoadOptions {
                warehouses: cfg.warehouses,
                threads: 2,
                seed: cfg.seed,
                force: false,
                location: location.clone(),
            };
            tpcc::load::load(&c, &opts, &|_, _| {}, &STOP)?;
            let mut conn = c.connect(Purpose::Check)?;
            let meta = tpcc::require_loaded(&tpcc::inspect(conn.as_mut())?, &location)?;
            checkpoint(conn.as_mut())?;
            Ok(Loaded::Tpcc { db, meta })
        }
        "brokerage" => {
            say!(
                "oltplab crash brokerage: loading {} customers, {} trading day of history, into {location}",
                BROKERAGE_SCALE.customers,
                BROKERAGE_SCALE.days
            );
            let c = connector(&db, SqliteOptions::default());
            let opts = brokerage::load::LoadOptions {
                scale: BROKERAGE_SCALE,
                threads: 2,
                seed: cfg.seed,
                force: false,
                location: location.clone(),
            };
            brokerage::load::load(&c, &opts, &|_, _| {}, &STOP)?;
            let mut conn = c.connect(Purpose::Check)?;
            let meta = brokerage::require_loaded(conn.as_mut(), &location)?;
            checkpoint(conn.as_mut())?;
            Ok(Loaded::Brokerage { db, meta })
        }
        _ => {
            say!(
                "oltplab crash orders: loading {} customers, {} products, {} orders into {location}",
                ORDERS_SCALE.customers,
                ORDERS_SCALE.products,
                ORDERS_SCALE.orders
            );
            let meta = orders::Meta {
                tables: Tables::Disk,
                scale: ORDERS_SCALE,
                seed: cfg.seed,
                loaded_at: now_rfc3339(),
            };
            let conn = oltplab_dbs::sqlite::open(
                &db,
                &SqliteOptions {
                    journal_mode: "OFF",
                    synchronous: "OFF",
                    create: true,
                    ..SqliteOptions::default()
                },
            )?;
            osq::load(&conn, &meta, false, &location, &|_| {}, &STOP)?;
            // WAL, as a run uses it; the switch leaves the whole load in the file.
            conn.execute_batch("PRAGMA journal_mode = WAL")
                .map_err(|e| Error::failed(format!("cannot switch the database to WAL: {e}")))?;
            Ok(Loaded::Orders { db, meta })
        }
    }
}

/// One cut: the workload on a copy until the cut, then each state's recovery and checks. None
/// after Ctrl-C.
#[allow(clippy::too_many_arguments)]
pub(super) fn one_cut(
    cfg: &CrashConfig,
    spec: &Spec,
    synchronous: &str,
    loaded: &Loaded,
    row_dir: &Path,
    cut: u32,
    seed: u64,
    promise: Promise,
) -> Result<Option<Vec<CrashStateOutcome>>> {
    let cut_dir = row_dir.join(format!("cut-{cut}"));
    let run_dir = cut_dir.join("run");
    let _ = std::fs::remove_dir_all(&cut_dir);
    std::fs::create_dir_all(&run_dir).map_err(|e| io_usage(&run_dir, "create", &e))?;
    let file = loaded
        .db()
        .file_name()
        .expect("the loaded database has a file name")
        .to_owned();
    let db = run_dir.join(&file);
    std::fs::copy(loaded.db(), &db)
        .map_err(|e| io_usage(&db, "copy the loaded database to", &e))?;

    let emulator = Arc::new(
        Emulator::new(spec, seed)
            .map_err(|e| Error::failed(format!("cannot emulate {}: {e}", spec.name())))?,
    );
    let crash = CrashCapture::new(spec);
    let vfs = Vfs::register(VfsOptions {
        trace: None,
        emulator: Some(emulator),
        placed_files: Vec::new(),
        crash: Some(crash.clone()),
    })?;
    let synchronous: &'static str = match synchronous {
        "OFF" => "OFF",
        "NORMAL" => "NORMAL",
        _ => "FULL",
    };
    // The cut comes at a moment drawn from the seed, between a quarter of --duration and all of
    // it.
    let unit = (mix(seed, 1, 0) >> 11) as f64 / (1u64 << 53) as f64;
    let cut_after = Duration::from_secs_f64(cfg.duration_s * (0.25 + 0.75 * unit));
    let stop = AtomicBool::new(false);
    let interrupted = AtomicBool::new(false);
    let started = Instant::now();
    let (acknowledged, cut_at) = std::thread::scope(|scope| {
        let cutter = scope.spawn(|| {
            let until = Instant::now() + cut_after;
            while Instant::now() < until {
                if STOP.load(Ordering::Relaxed) {
                    interrupted.store(true, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
            }
            crash.cut();
            let at = started.elapsed();
            stop.store(true, Ordering::SeqCst);
            at
        });
        let acknowledged = run_until_cut(cfg, loaded, &db, vfs.name(), synchronous, seed, &stop);
        // The run ends only at the cut (or when it could not run at all).
        stop.store(true, Ordering::SeqCst);
        (
            acknowledged,
            cutter.join().expect("the cut thread does not panic"),
        )
    });
    if interrupted.load(Ordering::SeqCst) {
        drop(vfs);
        let _ = std::fs::remove_dir_all(&cut_dir);
        return Ok(None);
    }
    let acknowledged = acknowledged.map_err(|e| {
        Error::failed(format!(
            "the run on {} committed nothing before the cut at {:.2}s ({e}): give a longer --duration",
            spec.name(),
            cut_at.as_secs_f64()
        ))
    })?;
    let files: Vec<(String, u32)> = vfs
        .files()
        .into_iter()
        .filter(|(p, _)| Path::new(p).is_file())
        .collect();
    let states = crash.states(seed, cfg.states as usize);
    drop(vfs);

    let place = CutPlace {
        cut,
        cut_at,
        into_checkpoint: None,
        keep_states: cfg.keep_states,
        promise,
    };
    let mut outcomes = Vec::new();
    for (k, st) in states.iter().enumerate() {
        let state_dir = cut_dir.join(format!("state-{k}"));
        std::fs::create_dir_all(&state_dir).map_err(|e| io_usage(&state_dir, "create", &e))?;
        // The last state takes the run's files themselves: one copy fewer.
        let last = k + 1 == states.len();
        materialise(&files, st, &state_dir, last)?;
        outcomes.push(place.finish_state(k, st, &state_dir, || {
            check_state(loaded, &state_dir.join(&file), &acknowledged)
        })?);
    }
    Ok(Some(end_cut(&run_dir, &cut_dir, outcomes)))
}

/// Runs the workload on `db` through the crash VFS until `stop`; what it saw committed.
fn run_until_cut(
    cfg: &CrashConfig,
    loaded: &Loaded,
    db: &Path,
    vfs: &str,
    synchronous: &'static str,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Acknowledged> {
    match loaded {
        Loaded::Tpcc { meta, .. } => {
            let c = SqliteConnector {
                path: db.to_path_buf(),
                opts: SqliteOptions {
                    vfs: Some(vfs.to_string()),
                    synchronous,
                    ..SqliteOptions::default()
                },
                load_cache_bytes: 64 << 20,
                writer_lock: true,
            };
            let driver_cfg = tpcc_driver(cfg, seed);
            let out = tpcc::driver::drive(&c, meta, &driver_cfg, stop, &mut |_| {}, &mut |_| {})?;
            Ok(Acknowledged::NewOrders(out.new_orders))
        }
        Loaded::Brokerage { meta, .. } => {
            let c = connector(
                db,
                SqliteOptions {
                    vfs: Some(vfs.to_string()),
                    synchronous,
                    ..SqliteOptions::default()
                },
            );
            let driver_cfg = brokerage_driver(cfg, seed);
            let out =
                brokerage::driver::drive(&c, meta, &driver_cfg, stop, &mut |_| {}, &mut |_| {})?;
            Acknowledged::Trades {
                ordered: out.trades_ordered,
                completed: out.trades_completed,
            }
            .nonempty()
        }
        Loaded::Orders { meta, .. } => {
            let target = SqliteTarget {
                path: db.to_path_buf(),
                tables: Tables::Disk,
                cache_bytes: 64 << 20,
                vfs: Some(vfs.to_string()),
                synchronous,
            };
            let point = orders_point(cfg, meta.scale, seed);
            let out = osq::run_point(&target, meta, &point, stop, &mut |_| {}, &mut |_| {})?;
            Acknowledged::orders(out.acknowledged_orders, out.first_error)
        }
    }
}

/// What SQLite's recovery made of a state: opened and read, its own check, the workload's
/// conditions, and the acknowledged commits that are missing.
fn check_state(loaded: &Loaded, db: &Path, acknowledged: &Acknowledged) -> CrashStateOutcome {
    let mut o = CrashStateOutcome {
        acknowledged_commits: acknowledged.len(),
        pages_repaired: Some(0),
        ..Default::default()
    };
    let started = Instant::now();
    // SQLite's default VFS: the engine as it would start after the power came back. Its first
    // read runs the recovery (the WAL's frames are checked and replayed into the index).
    let probe = match loaded {
        Loaded::Tpcc { .. } => "SELECT count(*) FROM warehouse",
        Loaded::Brokerage { .. } => "SELECT count(*) FROM broker",
        Loaded::Orders { .. } => "SELECT count(*) FROM oe_customers",
    };
    let conn = match oltplab_dbs::sqlite::open(db, &SqliteOptions::default()).and_then(|c| {
        c.query_row(probe, [], |r| r.get::<_, i64>(0))
            .map(|_| c)
            .map_err(|e| Error::failed(e.to_string()))
    }) {
        Ok(c) => c,
        Err(e) => {
            // Nothing of it can be read: every acknowledged commit is lost with it.
            o.error = Some(format!("opening after the cut: {e}"));
            o.commits_lost = acknowledged.len();
            return o;
        }
    };
    o.recovery_ns = started.elapsed().as_nanos() as u64;
    o.recovered = true;
    match conn.prepare("PRAGMA quick_check(100)").and_then(|mut s| {
        s.query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<std::result::Result<Vec<String>, _>>())
    }) {
        Ok(lines) => o.corrupt_reports = lines.iter().filter(|l| *l != "ok").count() as u32,
        Err(e) => {
            o.corrupt_reports = 1;
            o.error = Some(format!("quick_check: {e}"));
        }
    }
    // How many of `keys` `sql` (one `?1`) finds no row for; a failed lookup counts as missing.
    let missing = |sql: &str, what: &str, keys: &[i64], error: &mut Option<String>| -> u64 {
        let mut stmt = match conn.prepare(sql) {
            Ok(s) => s,
            Err(e) => {
                error.get_or_insert(format!("looking up the acknowledged {what}s: {e}"));
                return keys.len() as u64;
            }
        };
        let mut lost = 0;
        for &k in keys {
            match stmt.exists([k]) {
                Ok(true) => {}
                Ok(false) => lost += 1,
                Err(e) => {
                    error.get_or_insert(format!("looking up {what} {k}: {e}"));
                    lost += 1;
                }
            }
        }
        lost
    };
    o.commits_lost = match acknowledged {
        Acknowledged::NewOrders(keys) => {
            match conn
                .prepare("SELECT 1 FROM orders WHERE o_w_id = ?1 AND o_d_id = ?2 AND o_id = ?3")
            {
                Ok(mut stmt) => {
                    let mut lost = 0;
                    for &(w, d, id) in keys {
                        match stmt.exists([w, d, id]) {
                            Ok(true) => {}
                            Ok(false) => lost += 1,
                            Err(e) => {
                                o.error
                                    .get_or_insert(format!("looking up order {w}/{d}/{id}: {e}"));
                                lost += 1;
                            }
                        }
                    }
                    lost
                }
                Err(e) => {
                    o.error.get_or_insert(format!("reading the orders: {e}"));
                    keys.len() as u64
                }
            }
        }
        Acknowledged::Trades { ordered, completed } => {
            missing(
                "SELECT 1 FROM trade WHERE t_id = ?1",
                "trade",
                ordered,
                &mut o.error,
            ) + missing(
                "SELECT 1 FROM settlement WHERE se_t_id = ?1",
                "settlement of trade",
                completed,
                &mut o.error,
            )
        }
        Acknowledged::Orders(ids) => missing(
            "SELECT 1 FROM oe_orders WHERE o_id = ?1",
            "order",
            ids,
            &mut o.error,
        ),
    };
    match loaded {
        Loaded::Tpcc { .. } => {
            drop(conn);
            let c = SqliteConnector {
                path: db.to_path_buf(),
                opts: SqliteOptions::default(),
                load_cache_bytes: 64 << 20,
                writer_lock: false,
            };
            let checked = c
                .connect(Purpose::Check)
                .map_err(|e| e.to_string())
                .and_then(|mut c| {
                    tpcc::check::run_checks(c.as_mut(), |_| {}).map_err(|e| e.to_string())
                });
            broken_or_error(checked, &mut o);
        }
        Loaded::Brokerage { meta, .. } => {
            drop(conn);
            let checked = connector(db, SqliteOptions::default())
                .connect(Purpose::Check)
                .map_err(|e| e.to_string())
                .and_then(|mut c| {
                    brokerage::check::run_checks(c.as_mut(), meta, |_| {})
                        .map_err(|e| e.to_string())
                });
            broken_or_error(checked, &mut o);
        }
        Loaded::Orders { .. } => match osq::inconsistent_orders(&conn) {
            Ok(n) => {
                o.checks_ran = true;
                // Order entry has one condition: five lines per order, the total their sum.
                if n > 0 {
                    o.invariants_broken = vec![1];
                }
            }
            Err(e) => {
                o.error.get_or_insert(format!("the consistency check: {e}"));
            }
        },
    }
    o
}

/// The conditions' outcome into the state's: those broken, or why they could not be checked —
/// not counted as broken: the engine could not answer (a malformed page, most often), which
/// `checks_failed` counts.
fn broken_or_error(
    checked: std::result::Result<Vec<oltplab_workloads::check::Condition>, String>,
    o: &mut CrashStateOutcome,
) {
    match checked {
        Ok(conds) => {
            o.checks_ran = true;
            o.invariants_broken = conds
                .iter()
                .filter(|c| !c.holds())
                .map(|c| c.number)
                .collect();
        }
        Err(e) => {
            o.error
                .get_or_insert(format!("the consistency checks: {e}"));
        }
    }
}
