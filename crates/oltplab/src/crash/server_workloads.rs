//! `oltplab crash brokerage|orders --engine postgres|mariadb`: the server's cut as TPC-C's (the
//! shim keeps the undo log, kill -9 at the cut, each state restarted with the engine's own crash
//! recovery), with the workload's record of acknowledged commits and its own checks (the
//! SQLite side, `crash/workloads.rs`, says which).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use oltplab_core::safety::io_usage;
use oltplab_core::{Error, Result};
use oltplab_dbs::server::{self, DataInit, ManagedServer, ServerConfig, ServerKind};
use oltplab_devmodel::{undo, Spec};
use oltplab_workloads::brokerage;
use oltplab_workloads::orders::driver::PointConfig;
use oltplab_workloads::orders::server::{self as osrv, ServerTarget};
use oltplab_workloads::orders::{Dialect, Mode, Tables};
use oltplab_workloads::sql::{Conn, Connector, Purpose};

use super::super::workloads::{Acknowledged, BROKERAGE_SCALE, ORDERS_SCALE};
use super::super::{end_cut, finish_state, mix, CrashConfig, Loaded, Promise, StatePlace};
use super::{apply, connector, db_spec, files_by_inode, kind_of, read_log, BUFFER_POOL_BYTES};
use crate::emulate::{Backing, EmulationSession, SessionConfig};
use crate::output::say;
use crate::schema::CrashStateOutcome;
use crate::workload::target::DbSpec;
use crate::STOP;

/// The workload's database spec on a server in `data_dir`.
fn spec_of(cfg: &CrashConfig, kind: ServerKind, data_dir: &Path) -> Result<DbSpec> {
    let spec = db_spec(kind, data_dir)?;
    Ok(match cfg.workload.as_str() {
        "brokerage" => crate::brokerage::brokerage_spec(spec),
        _ => spec,
    })
}

/// Loads the brokerage or order entry into a managed server in `load_dir`, which stops cleanly:
/// every cut starts from a copy of it.
pub(in crate::crash) fn load(cfg: &CrashConfig, load_dir: &Path) -> Result<Loaded> {
    let kind = kind_of(cfg);
    say!(
        "oltplab crash {}: loading into a {} server in {}",
        cfg.workload,
        kind.product(),
        load_dir.display()
    );
    let db = spec_of(cfg, kind, load_dir)?;
    match cfg.workload.as_str() {
        "brokerage" => {
            crate::brokerage::load_with(
                &crate::brokerage::LoadConfig {
                    db,
                    scale: BROKERAGE_SCALE,
                    threads: 2,
                    seed: cfg.seed,
                    check: false,
                    force: true,
                    quiet: true,
                },
                &STOP,
            )?;
        }
        _ => {
            crate::orders::load_with(
                &crate::orders::OrdersLoadConfig {
                    db,
                    tables: Tables::Disk,
                    scale: ORDERS_SCALE,
                    seed: cfg.seed,
                    force: true,
                    quiet: true,
                },
                &STOP,
            )?;
        }
    }
    Ok(Loaded::Server {
        data_dir: load_dir.to_path_buf(),
    })
}

/// What a run needs of the load, read from the running server.
enum Meta {
    Brokerage(brokerage::Meta),
    Orders(ServerTarget, oltplab_workloads::orders::Meta),
}

fn read_meta(cfg: &CrashConfig, kind: ServerKind, conn: &mut dyn Conn, url: &str) -> Result<Meta> {
    if cfg.workload == "brokerage" {
        return Ok(Meta::Brokerage(brokerage::require_loaded(conn, url)?));
    }
    let target = ServerTarget {
        dialect: match kind {
            ServerKind::Postgres => Dialect::Postgres,
            ServerKind::Mariadb => Dialect::Mysql,
        },
        url: url.to_string(),
    };
    let meta = osrv::read_meta(&target)?.ok_or_else(|| {
        Error::failed("the order-entry load has no oe_meta record: a bug in oltplab crash")
    })?;
    Ok(Meta::Orders(target, meta))
}

/// Runs the workload against the server until `stop`; what it saw committed.
fn run_until_cut(
    cfg: &CrashConfig,
    meta: &Meta,
    c: &dyn Connector,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Acknowledged> {
    match meta {
        Meta::Brokerage(meta) => {
            let driver_cfg = brokerage::driver::DriverConfig {
                terminals: cfg.terminals as usize,
                // Longer than any cut: the cut ends the run.
                duration: Duration::from_secs_f64(cfg.duration_s + 3600.0),
                warmup: Duration::ZERO,
                seed,
                max_retries: 10,
                record_spans: false,
                record_trades: true,
            };
            let out =
                brokerage::driver::drive(c, meta, &driver_cfg, stop, &mut |_| {}, &mut |_| {})?;
            Ok(Acknowledged::Trades {
                ordered: out.trades_ordered,
                completed: out.trades_completed,
            })
        }
        Meta::Orders(target, meta) => {
            let point = PointConfig {
                connections: cfg.terminals,
                // More than any cut lets it run: the cut ends the work.
                tx_per_connection: u64::MAX,
                warmup_tx_per_connection: 0,
                mode: Mode::Insert,
                scale: meta.scale,
                max_retries: 10,
                seed,
                record_orders: true,
            };
            let out = osrv::run_point(target, &point, stop, &mut |_| {}, &mut |_| {})?;
            if out.acknowledged_orders.is_empty() {
                if let Some(e) = out.first_error {
                    return Err(Error::failed(e));
                }
            }
            Ok(Acknowledged::Orders(out.acknowledged_orders))
        }
    }
}

/// One cut: the server on a copy until the cut, kill -9, then each state's recovery and checks.
/// None after Ctrl-C.
#[allow(clippy::too_many_arguments)]
pub(in crate::crash) fn one_cut(
    cfg: &CrashConfig,
    spec: &Spec,
    settings: &[(String, String)],
    loaded: &Path,
    row_dir: &Path,
    cut: u32,
    seed: u64,
    promise: Promise,
) -> Result<Option<Vec<CrashStateOutcome>>> {
    let kind = kind_of(cfg);
    let cut_dir = row_dir.join(format!("cut-{cut}"));
    let run_dir = cut_dir.join("run");
    let _ = std::fs::remove_dir_all(&cut_dir);
    std::fs::create_dir_all(&cut_dir).map_err(|e| io_usage(&cut_dir, "create", &e))?;
    server::copy_cluster(loaded, &run_dir)?;
    let cluster = run_dir.join(kind.name());
    let undo_log = cut_dir.join("undo.log");
    let session = EmulationSession::start(&SessionConfig {
        spec: spec.clone(),
        dir: cluster.clone(),
        // The crash state comes from the files and the undo log, not from the host's disk.
        backing: Backing::Ram,
        trace: None,
        seed,
        account: server::server_account(kind)?,
        places: Vec::new(),
        undo: Some(undo_log.clone()),
    })?;
    let mut server_cfg = ServerConfig::new(kind, &run_dir);
    server_cfg.init = DataInit::Reuse;
    server_cfg.buffer_pool_bytes = BUFFER_POOL_BYTES;
    server_cfg.max_connections = (cfg.terminals + 10).max(100);
    server_cfg.extra_env = session.env();
    server_cfg.extra_settings = settings.to_vec();
    let running = ManagedServer::start(&server_cfg)?;
    let url = running.url();
    let conn_of = connector(kind, url.clone(), spec_of(cfg, kind, &run_dir)?.isolation());
    let meta = {
        let mut conn = conn_of.connect(Purpose::Check)?;
        read_meta(cfg, kind, conn.as_mut(), &url)?
    };

    // The cut comes at a moment drawn from the seed, between a quarter of --duration and all of it.
    let unit = (mix(seed, 1, 0) >> 11) as f64 / (1u64 << 53) as f64;
    let cut_after = Duration::from_secs_f64(cfg.duration_s * (0.25 + 0.75 * unit));
    let stop = AtomicBool::new(false);
    let interrupted = AtomicBool::new(false);
    let running = Mutex::new(Some(running));
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
            // The driver stops first, so that no terminal retries against the dead server; a
            // COMMIT answered before the kill is acknowledged all the same.
            stop.store(true, Ordering::SeqCst);
            if let Some(s) = running.lock().unwrap_or_else(|p| p.into_inner()).take() {
                s.power_cut();
            }
            started.elapsed()
        });
        let acknowledged = run_until_cut(cfg, &meta, conn_of.as_ref(), seed, &stop);
        stop.store(true, Ordering::SeqCst);
        (
            acknowledged,
            cutter.join().expect("the cut thread does not panic"),
        )
    });
    let processes = session.processes();
    drop(session);
    if interrupted.load(Ordering::SeqCst) {
        let _ = std::fs::remove_dir_all(&cut_dir);
        return Ok(None);
    }
    if processes == 0 {
        return Err(Error::failed(format!(
            "{} never loaded oltplab's shim, so nothing ran on the emulated {}: check the server log {} for a failed LD_PRELOAD",
            kind.product(),
            spec.name(),
            run_dir.join(format!("{}.log", kind.name())).display()
        )));
    }
    let acknowledged = acknowledged
        .and_then(|a| match a.len() {
            0 => Err(Error::failed("no transaction committed")),
            _ => Ok(a),
        })
        .map_err(|e| {
            Error::failed(format!(
                "the run on {} committed nothing before the cut at {:.2}s ({e}): give a longer --duration",
                spec.name(),
                cut_at.as_secs_f64()
            ))
        })?;
    // A process that could not keep its undo would make the states wrong, not just fewer.
    let run_log = run_dir.join(format!("{}.log", kind.name()));
    if std::fs::read_to_string(&run_log)
        .is_ok_and(|t| t.contains("the crash states of this run are incomplete"))
    {
        return Err(Error::failed(format!(
            "a server process could not write the undo log {} (see {}): check the free space there",
            undo_log.display(),
            run_log.display()
        )));
    }
    let replayed =
        undo::replay(&undo_log, spec).map_err(|e| io_usage(&undo_log, "read the undo log", &e))?;
    let _ = std::fs::remove_file(&undo_log);
    // Files by inode, as TPC-C's cut finds them.
    let by_inode = files_by_inode(&cluster);
    let paths: BTreeMap<u32, PathBuf> = replayed
        .files
        .iter()
        .filter_map(|(slot, id)| by_inode.get(id).map(|p| (*slot, p.clone())))
        .collect();
    let states = replayed.log.states(seed, cfg.states as usize);
    drop(replayed);

    let mut outcomes = Vec::new();
    for (k, st) in states.iter().enumerate() {
        let state_dir = cut_dir.join(format!("state-{k}"));
        // The last state takes the run's files themselves: one copy fewer.
        if k + 1 == states.len() {
            std::fs::rename(&run_dir, &state_dir)
                .map_err(|e| io_usage(&state_dir, "move the cut's files to", &e))?;
        } else {
            server::copy_cluster(&run_dir, &state_dir)?;
        }
        apply(st, &paths, &state_dir.join(kind.name()))?;
        let checked = Instant::now();
        let mut o = check_state(cfg, kind, &state_dir, &meta, &acknowledged);
        o.check_s = checked.elapsed().as_secs_f64();
        let place = StatePlace {
            cut,
            state: k as u32,
            cut_at,
            dir: &state_dir,
        };
        outcomes.push(finish_state(o, st, &place, cfg.keep_states, promise)?);
    }
    Ok(Some(end_cut(&run_dir, &cut_dir, outcomes)))
}

/// What the server's recovery made of a state: started, the acknowledged commits present, the
/// workload's conditions, corruption it logged.
fn check_state(
    cfg: &CrashConfig,
    kind: ServerKind,
    data_dir: &Path,
    meta: &Meta,
    acknowledged: &Acknowledged,
) -> CrashStateOutcome {
    let mut o = CrashStateOutcome {
        acknowledged_commits: acknowledged.len(),
        ..Default::default()
    };
    let log = data_dir.join(format!("{}.log", kind.name()));
    let log_from = std::fs::metadata(&log).map_or(0, |m| m.len());
    let mut server_cfg = ServerConfig::new(kind, data_dir);
    server_cfg.init = DataInit::Reuse;
    server_cfg.buffer_pool_bytes = BUFFER_POOL_BYTES;
    server_cfg.max_connections = (cfg.terminals + 10).max(100);
    let started = Instant::now();
    let running = match ManagedServer::start(&server_cfg) {
        Ok(s) => s,
        Err(e) => {
            o.error = Some(format!("starting after the cut: {e}"));
            o.commits_lost = acknowledged.len();
            read_log(kind, &log, log_from, &mut o);
            return o;
        }
    };
    o.recovery_ns = started.elapsed().as_nanos() as u64;
    o.recovered = true;
    let c = match spec_of(cfg, kind, data_dir) {
        Ok(spec) => connector(kind, running.url(), spec.isolation()),
        Err(e) => {
            o.error = Some(e.to_string());
            return o;
        }
    };
    match c.connect(Purpose::Check) {
        Ok(mut conn) => {
            o.commits_lost = match lost(conn.as_mut(), acknowledged) {
                Ok(n) => n,
                Err(e) => {
                    o.error = Some(format!("reading the acknowledged commits: {e}"));
                    acknowledged.len()
                }
            };
            match conditions(conn.as_mut(), meta) {
                Ok(broken) => {
                    o.checks_ran = true;
                    o.invariants_broken = broken;
                }
                Err(e) => {
                    o.error
                        .get_or_insert(format!("the consistency checks: {e}"));
                }
            }
        }
        Err(e) => {
            o.error = Some(format!("connecting after recovery: {e}"));
            o.commits_lost = acknowledged.len();
        }
    }
    if let Err(e) = running.stop() {
        o.error.get_or_insert(e.to_string());
    }
    read_log(kind, &log, log_from, &mut o);
    o
}

/// The acknowledged commits that are not in the database.
fn lost(conn: &mut dyn Conn, acknowledged: &Acknowledged) -> std::result::Result<u64, String> {
    // The ids present from the first acknowledged one on: one query per kind of key.
    let mut missing = |sql: &str, keys: &[i64]| -> std::result::Result<u64, String> {
        let Some(first) = keys.iter().min() else {
            return Ok(0);
        };
        let rows = conn
            .query(&format!("{sql} >= {first}"))
            .map_err(|e| e.to_string())?;
        let found: HashSet<i64> = (0..rows.len()).map(|r| rows.get(r, 0).i64()).collect();
        Ok(keys.iter().filter(|k| !found.contains(k)).count() as u64)
    };
    match acknowledged {
        Acknowledged::Trades { ordered, completed } => {
            Ok(missing("SELECT t_id FROM trade WHERE t_id", ordered)?
                + missing("SELECT se_t_id FROM settlement WHERE se_t_id", completed)?)
        }
        Acknowledged::Orders(ids) => missing("SELECT o_id FROM oe_orders WHERE o_id", ids),
    }
}

/// The workload's conditions that do not hold, by number.
fn conditions(conn: &mut dyn Conn, meta: &Meta) -> std::result::Result<Vec<u8>, String> {
    match meta {
        Meta::Brokerage(meta) => brokerage::check::run_checks(conn, meta, |_| {})
            .map(|conds| {
                conds
                    .iter()
                    .filter(|c| !c.holds())
                    .map(|c| c.number)
                    .collect()
            })
            .map_err(|e| e.to_string()),
        // Order entry's one condition: five lines per order, the total their sum.
        Meta::Orders(..) => {
            let rows = conn
                .query(oltplab_workloads::orders::CHECK_SQL)
                .map_err(|e| e.to_string())?;
            Ok(if rows.get(0, 0).i64() > 0 {
                vec![1]
            } else {
                Vec::new()
            })
        }
    }
}
