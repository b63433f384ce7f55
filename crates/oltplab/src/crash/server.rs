//! Power cuts on a managed PostgreSQL or MariaDB server (docs/crash.md, "How a cut is made
//! (servers)").
//!
//! Each cut starts the server on a copy of the loaded data directory under the emulating shim,
//! which keeps the undo log (`oltplab_devmodel::undo`) in the cut's directory. At the cut every
//! process of the server is killed (SIGSTOP, then SIGKILL: none is left halfway through an
//! append), the log is replayed into the device model's [`CrashLog`], and each state it draws is
//! made from a copy of the files as the processes left them. The server then starts on the state,
//! without emulation, and runs its own crash recovery (PostgreSQL's WAL replay from the last
//! checkpoint, InnoDB's redo log applied to its pages).
//!
//! [`CrashLog`]: oltplab_devmodel::durability::CrashLog

use std::collections::BTreeMap;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use oltplab_core::safety::io_usage;
use oltplab_core::{Error, Result};
use oltplab_dbs::server::{self, DataInit, ManagedServer, ServerConfig, ServerKind};
use oltplab_devmodel::durability::CrashState;
use oltplab_devmodel::{undo, Spec};
use oltplab_workloads::sql::Isolation;
use oltplab_workloads::tpcc::connect::{MyConnector, PgConnector};
use oltplab_workloads::tpcc::{Connector, Purpose};

use super::workloads::Acknowledged;
use super::{end_cut, mix, CrashConfig, CutPlace, Promise};

/// What differs between TPC-C, brokerage and order entry in a server's cut.
#[path = "server_workloads.rs"]
mod workloads;
pub(super) use workloads::load;
use workloads::{conditions, lost, read_meta, run_until_cut, spec_of, Meta};

use crate::emulate::{Backing, EmulationSession, SessionConfig};
use crate::workload::target::{DbSpec, Engine};
use crate::STOP;
use oltplab_schema::{CrashStateOutcome, UndoLogSize};

/// shared_buffers / innodb_buffer_pool_size: small, so that the run writes data pages as well as
/// its log before the cut.
const BUFFER_POOL_BYTES: u64 = 64 << 20;

fn kind_of(cfg: &CrashConfig) -> ServerKind {
    match cfg.engine {
        Engine::Mariadb => ServerKind::Mariadb,
        _ => ServerKind::Postgres,
    }
}

fn db_spec(kind: ServerKind, data_dir: &Path) -> Result<DbSpec> {
    DbSpec::resolve(
        Some(kind.into()),
        None,
        data_dir,
        BUFFER_POOL_BYTES,
        None,
        false,
    )
}

fn connector(kind: ServerKind, url: String, isolation: Isolation) -> Box<dyn Connector> {
    match kind {
        ServerKind::Postgres => Box::new(PgConnector { url, isolation }),
        ServerKind::Mariadb => Box::new(MyConnector { url, isolation }),
    }
}

/// One cut: the server on a copy until the cut, kill -9, then each state's recovery and checks.
/// None after Ctrl-C.
#[allow(clippy::too_many_arguments)]
pub(super) fn one_cut(
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
        // The crash state comes from the files and the undo log, not from the host's disk: the
        // page cache is the medium, and only the model's time is spent.
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
    let connector = connector(kind, url.clone(), spec_of(cfg, kind, &run_dir)?.isolation());
    let meta = {
        let mut conn = connector.connect(Purpose::Check)?;
        read_meta(cfg, kind, conn.as_mut(), &url)?
    };

    // The cut comes at a moment drawn from the seed, between a quarter of --duration and all of it;
    // with --cut-during checkpoint that moment asks for the checkpoint, and the cut comes a
    // second draw into its page writes (TPC-C only: the other workloads refuse the option).
    let unit = (mix(seed, 1, 0) >> 11) as f64 / (1u64 << 53) as f64;
    let cut_after = Duration::from_secs_f64(cfg.duration_s * (0.25 + 0.75 * unit));
    let into_checkpoint = (cfg.cut_during == "checkpoint").then(|| {
        let unit = (mix(seed, 2, 0) >> 11) as f64 / (1u64 << 53) as f64;
        Duration::from_secs_f64(INTO_PAGE_WRITES_S * unit)
    });
    // Its own connection, opened before the run so that the request is not late.
    let mut checkpoint_conn = match into_checkpoint {
        Some(_) => Some(connector.connect(Purpose::Check)?),
        None => None,
    };
    let stop = AtomicBool::new(false);
    let interrupted = AtomicBool::new(false);
    let cut_done = AtomicBool::new(false);
    // Page writes the drive's cache holds now, as the undo log's follower counts them.
    let pending = AtomicU64::new(0);
    let running = Mutex::new(Some(running));
    let log = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&undo_log)
        .map_err(|e| io_usage(&undo_log, "open", &e))?;
    let started = Instant::now();
    let (acknowledged, (cut_at, into_checkpoint), follower) = std::thread::scope(|scope| {
        // Follows the undo log through the run, giving back what no cut can need, so that the
        // log stays about as large as the drives' caches however long the run.
        let follower = scope.spawn(|| {
            let mut follow = undo::Follower::new(spec, PAGE_BYTES_MIN);
            while !cut_done.load(Ordering::SeqCst) {
                pending.store(follow.advance(&log), Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
            }
            // What the processes appended up to the kill.
            follow.advance(&log);
            follow
        });
        let cutter = scope.spawn(|| {
            let wait = |until: Instant| {
                while Instant::now() < until {
                    if STOP.load(Ordering::Relaxed) {
                        interrupted.store(true, Ordering::SeqCst);
                        return false;
                    }
                    std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
                }
                true
            };
            let mut asked = None;
            if wait(started + cut_after) {
                if let (Some(into), Some(mut conn)) = (into_checkpoint, checkpoint_conn.take()) {
                    asked = Some(Instant::now());
                    // PostgreSQL's CHECKPOINT returns when it is done (or the kill ends it):
                    // asked from a thread of its own, so that the cut can come inside it.
                    scope.spawn(move || {
                        for sql in checkpoint_sql(kind) {
                            if conn.batch(sql).is_err() {
                                break;
                            }
                        }
                    });
                    // After the drawn time, the cut waits for page writes the drive holds
                    // unflushed (the undo log says so), so that on a slow or busy machine it does
                    // not fall between the commits' flushes with none in the cache; a checkpoint
                    // that leaves none pending is cut at the window's end.
                    let end = Instant::now() + Duration::from_secs_f64(CHECKPOINT_WINDOW_S);
                    wait(Instant::now() + into);
                    while Instant::now() < end
                        && pending.load(Ordering::SeqCst) < PAGES_PENDING
                        && wait(Instant::now() + Duration::from_millis(1))
                    {}
                }
            }
            // The driver stops first, so that no terminal retries against the dead server; a
            // COMMIT answered before the kill is acknowledged all the same.
            stop.store(true, Ordering::SeqCst);
            if let Some(s) = running.lock().unwrap_or_else(|p| p.into_inner()).take() {
                s.power_cut();
            }
            cut_done.store(true, Ordering::SeqCst);
            (started.elapsed(), asked.map(|a| a.elapsed()))
        });
        let acknowledged = run_until_cut(cfg, &meta, connector.as_ref(), seed, &stop);
        stop.store(true, Ordering::SeqCst);
        let cut = cutter.join().expect("the cut thread does not panic");
        let follower = follower.join().expect("the log's follower does not panic");
        (acknowledged, cut, follower)
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
    let acknowledged = acknowledged.map_err(|e| {
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
    // Which file each slot is now: files are found by inode, so a WAL segment PostgreSQL
    // renamed for reuse is still found; one it removed is gone, and its writes with it.
    let by_inode = files_by_inode(&cluster);
    let open = |dev: u64, ino: u64| {
        let rel = by_inode.get(&(dev, ino))?;
        std::fs::File::open(cluster.join(rel)).ok()
    };
    let undo_log_size = UndoLogSize {
        appended_bytes: follower.read_bytes(),
        given_back_bytes: follower.punched_bytes,
        held_bytes: log.metadata().map_or(0, |m| m.blocks() * 512),
        follower_cpu_ns: follower.cpu_ns,
    };
    drop(log);
    let replayed = undo::replay(&undo_log, spec, &follower.start(), &open)
        .map_err(|e| io_usage(&undo_log, "read the undo log", &e))?;
    let _ = std::fs::remove_file(&undo_log);
    let paths: BTreeMap<u32, PathBuf> = replayed
        .files
        .iter()
        .filter_map(|(slot, id)| by_inode.get(id).map(|p| (*slot, p.clone())))
        .collect();
    let states = replayed.log.states(seed, cfg.states as usize);
    drop(replayed);

    let place = CutPlace {
        cut,
        cut_at,
        into_checkpoint,
        keep_states: cfg.keep_states,
        promise,
    };
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
        outcomes.push(place.finish_state(k, st, &state_dir, || {
            let mut o = check_state(cfg, kind, &state_dir, &meta, &acknowledged);
            o.undo_log = Some(undo_log_size);
            o
        })?);
    }
    Ok(Some(end_cut(&run_dir, &cut_dir, outcomes)))
}

/// How far into a checkpoint a cut may come (--cut-during checkpoint): long enough to reach its
/// end on the emulated devices at 1 warehouse and a 64 MiB buffer pool, so that cuts fall
/// across it.
const CHECKPOINT_WINDOW_S: f64 = 1.0;

/// A cut inside a checkpoint waits for this many writes of a page or more (8 KiB: PostgreSQL's
/// page, InnoDB's 16 KiB) pending in the drive's cache.
const PAGE_BYTES_MIN: u32 = 8 << 10;
const PAGES_PENDING: u64 = 4;

/// How far into a checkpoint a cut comes at the least (drawn from the seed), before it waits
/// for pending page writes.
const INTO_PAGE_WRITES_S: f64 = 0.25;

/// What asks the engine to write its dirty pages now. InnoDB has no CHECKPOINT statement outside
/// debug builds; with no dirty pages allowed (both marks at 0, as MariaDB's own tests do it) its
/// page cleaner flushes the buffer pool at once.
fn checkpoint_sql(kind: ServerKind) -> &'static [&'static str] {
    match kind {
        ServerKind::Postgres => &["CHECKPOINT"],
        ServerKind::Mariadb => &[
            "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0",
            "SET GLOBAL innodb_max_dirty_pages_pct = 0",
        ],
    }
}

/// Every regular file under `dir` by (device, inode), relative to `dir`.
fn files_by_inode(dir: &Path) -> BTreeMap<(u64, u64), PathBuf> {
    let mut out = BTreeMap::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            let path = rel.join(entry.file_name());
            if meta.is_dir() {
                todo.push(path);
            } else if meta.is_file() {
                out.insert((meta.dev(), meta.ino()), path);
            }
        }
    }
    out
}

/// Applies a state's patches to the copy in `cluster`. File sizes are metadata, which the model
/// leaves alone: a patch past a file's end now (it was truncated) is cut to that end.
fn apply(st: &CrashState, paths: &BTreeMap<u32, PathBuf>, cluster: &Path) -> Result<()> {
    let mut open: BTreeMap<u32, (std::fs::File, u64)> = BTreeMap::new();
    for p in &st.patches {
        let Some(rel) = paths.get(&p.file) else {
            continue;
        };
        let (f, len) = &*match open.entry(p.file) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let path = cluster.join(rel);
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| io_usage(&path, "open", &e))?;
                let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                e.insert((f, len))
            }
        };
        if p.offset >= *len {
            continue;
        }
        let n = (p.data.len() as u64).min(len - p.offset) as usize;
        f.write_all_at(&p.data[..n], p.offset)
            .map_err(|e| io_usage(&cluster.join(rel), "write the crash state into", &e))?;
    }
    Ok(())
}

/// Server log lines by which PostgreSQL reports a damaged data page. (A WAL record that fails
/// its checksum is how recovery finds the end of the WAL, not damage: it is not counted.)
const POSTGRES_CORRUPT: [&str; 4] = [
    "invalid page in block",
    "page verification failed",
    "could not read block",
    "unexpected zero page",
];

/// Error log lines by which InnoDB reports a damaged page, or a page newer than the redo log
/// that should describe it (its changes' log was lost). Matched without regard to case.
const INNODB_CORRUPT: [&str; 7] = [
    "database page corruption",
    "data structure corruption",
    "is corrupted",
    "corrupted page",
    "corrupted file",
    "checksum mismatch",
    "is in the future",
];

fn corrupt_markers(kind: ServerKind) -> &'static [&'static str] {
    match kind {
        ServerKind::Postgres => &POSTGRES_CORRUPT,
        ServerKind::Mariadb => &INNODB_CORRUPT,
    }
}

/// What the server's recovery made of a state: started (its crash recovery runs before it accepts
/// connections), the acknowledged commits present, the workload's conditions, corruption it
/// logged.
fn check_state(
    cfg: &CrashConfig,
    kind: ServerKind,
    data_dir: &Path,
    meta: &Meta,
    acknowledged: &Acknowledged,
) -> CrashStateOutcome {
    let mut o = CrashStateOutcome {
        acknowledged_commits: acknowledged.len(),
        pages_repaired: Some(0),
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
    let connector = match spec_of(cfg, kind, data_dir) {
        Ok(spec) => connector(kind, running.url(), spec.isolation()),
        Err(e) => {
            o.error = Some(e.to_string());
            return o;
        }
    };
    match connector.connect(Purpose::Check) {
        Ok(mut conn) => {
            o.commits_lost = match lost(conn.as_mut(), acknowledged) {
                Ok(n) => n,
                Err(e) => {
                    o.error = Some(e);
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

/// How many of a state's corruption lines its outcome keeps (the count has them all).
const CORRUPT_LINES_KEPT: usize = 8;

/// InnoDB's line for a torn page it restored from the doublewrite buffer.
const INNODB_REPAIRED: &str = "from the doublewrite buffer";

/// Reads the server log after byte `from` into the outcome: the lines that report corruption
/// (counted, the first few kept) and the pages the engine restored.
pub(super) fn read_log(kind: ServerKind, log: &Path, from: u64, o: &mut CrashStateOutcome) {
    let Ok(text) = std::fs::read(log) else {
        return;
    };
    let text = String::from_utf8_lossy(&text[(from as usize).min(text.len())..]).into_owned();
    let mut count = 0u32;
    for line in text.lines() {
        let lower = line.to_lowercase();
        if corrupt_markers(kind).iter().any(|m| lower.contains(m)) {
            count += 1;
            if o.corrupt_lines.len() < CORRUPT_LINES_KEPT {
                o.corrupt_lines.push(line.trim().to_string());
            }
        }
        if kind == ServerKind::Mariadb
            && lower.contains("recovered page")
            && lower.contains(INNODB_REPAIRED)
        {
            o.pages_repaired = Some(o.pages_repaired.unwrap_or(0) + 1);
        }
    }
    o.corrupt_reports = count;
}
