//! One emulated device shared by every process of a command (or of a managed server): its state in
//! shared memory, the shim, the trace parts, and their cleanup.
//!
//! ```text
//! /dev/shm/oltplab-emu-<pid>-<n>/     mode 0755, removed at the end (also on a quick quit, or by
//!                                     the next emulate if oltplab was killed)
//!   device.state                      the model's shared state (0600, its user's)
//!   files.table                       the shim's shared file table (0600)
//!   liboltplab_shim.so                a copy, readable by a server's own account
//!   parts/                            per-process trace parts (0700), merged into --trace
//! ```
//!
//! `oltplab run --engine postgres --emulate SPEC` uses it like `oltplab emulate` does: start a
//! session on the data directory, pass [`EmulationSession::env`] to the server as
//! `ServerConfig::extra_env`, and [`EmulationSession::finish`] after the server stopped.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::{interrupt, safety, Error, Result};
use oltplab_dbs::server::process::Account;
use oltplab_devmodel::{Emulator, Fidelity, Spec};
use oltplab_metrics::{Warning, WarningKind};
use oltplab_trace::TraceSummary;
use serde::Serialize;

use super::shim;

/// Environment variables the shim reads (crates/shim/src/lib.rs has the same names).
const ENV_STATE: &str = "OLTPLAB_SHIM_STATE";
const ENV_FILES: &str = "OLTPLAB_SHIM_FILES";
const ENV_DIR: &str = "OLTPLAB_SHIM_DIR";
const ENV_BACKING: &str = "OLTPLAB_SHIM_BACKING";
const ENV_TRACE_DIR: &str = "OLTPLAB_SHIM_TRACE_DIR";
const ENV_PLACES: &str = "OLTPLAB_SHIM_PLACES";
const ENV_UNDO: &str = "OLTPLAB_SHIM_UNDO";
/// Word 2 of the file table counts the processes that loaded the shim (crates/shim/src/files.rs).
const FILES_ATTACHED_WORD: usize = 2;
const SESSION_PREFIX: &str = "oltplab-emu-";

/// Where the emulated directory's data really lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    /// The files under the directory, with their real I/O; the real disk must be faster than the
    /// emulated device.
    Disk,
    /// The page cache: O_DIRECT is dropped, syncs are not passed on, and existing files are read
    /// into memory first, so only the model's time is spent. For devices faster than the real disk.
    Ram,
}

impl Backing {
    pub fn name(self) -> &'static str {
        match self {
            Backing::Disk => "disk",
            Backing::Ram => "ram",
        }
    }
}

/// What a session needs.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    pub spec: Spec,
    /// The directory whose I/O is emulated; it must exist (the caller makes it with
    /// `safety::ensure_own_dir`).
    pub dir: PathBuf,
    pub backing: Backing,
    /// Merge every process's trace into this file at the end.
    pub trace: Option<PathBuf>,
    pub seed: u64,
    /// The account the processes on the device run as, when not oltplab's own (a managed server
    /// started by root runs as postgres or mysql): the shared state is handed to it. Nobody else
    /// may open it.
    pub account: Option<Account>,
    /// For a layout: which files under `dir` are on which of its devices (the rest on the first).
    pub places: Vec<PlaceRule>,
    /// The undo log of a run that may be cut (`oltplab crash`): created empty here and handed to
    /// the account; every process appends to it (crates/shim/src/undo.rs).
    pub undo: Option<PathBuf>,
}

/// Files under the emulated directory that a layout puts on one of its devices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlaceRule {
    /// The device's index in the layout (`Spec::devices`).
    pub device: u8,
    /// Relative to the emulated directory.
    pub path: String,
    /// Every path that begins with `path` (a name prefix such as MariaDB's `#sql`), not only
    /// `path` itself and what is under it.
    pub prefix: bool,
}

/// A live emulated device. Dropping it removes its shared state and temporary files.
pub struct EmulationSession {
    config: SessionConfig,
    target: PathBuf,
    session_dir: PathBuf,
    emulator: Emulator,
    shim: PathBuf,
    files: PathBuf,
    parts: Option<PathBuf>,
    /// The session directory, registered for a quick quit (a second Ctrl-C).
    _quit: interrupt::Guard,
}

/// What an emulation did, for the terminal and for results (`summary.emulation`).
#[derive(Clone, Debug, Serialize)]
pub struct EmulationReport {
    pub spec: String,
    pub backing: Backing,
    pub dir: PathBuf,
    pub fidelity: Fidelity,
    /// Processes that loaded the shim.
    pub processes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSummary>,
    pub warnings: Vec<Warning>,
}

impl EmulationSession {
    pub fn start(config: &SessionConfig) -> Result<EmulationSession> {
        sweep_stale_sessions();
        let target = config
            .dir
            .canonicalize()
            .map_err(|e| safety::io_usage(&config.dir, "resolve", &e))?;
        let shim_src = shim::find()?;
        let session_dir = new_session_dir()?;
        let quit = interrupt::guard_path(&session_dir);
        // From here on, Drop cleans up whatever was made.
        let build = || -> Result<(Emulator, PathBuf, PathBuf, Option<PathBuf>)> {
            let fail = |what: &Path, e: std::io::Error| safety::io_usage(what, "create", &e);
            let shim = session_dir.join(shim::SHIM_FILE);
            fs::copy(&shim_src, &shim).map_err(|e| fail(&shim, e))?;
            fs::set_permissions(&shim, fs::Permissions::from_mode(0o755))
                .map_err(|e| fail(&shim, e))?;
            // The shared state is its owner's alone (0600, the trace parts' directory 0700): anyone
            // who could write it could stall or crash every process on the device, or slip trace
            // parts into the run. A server of another account gets it handed over. (The shim grows
            // the file table to its size.)
            let files = session_dir.join("files.table");
            fs::File::create(&files).map_err(|e| fail(&files, e))?;
            fs::set_permissions(&files, fs::Permissions::from_mode(0o600))
                .map_err(|e| fail(&files, e))?;
            let parts = match &config.trace {
                Some(_) => {
                    let parts = session_dir.join("parts");
                    fs::create_dir(&parts).map_err(|e| fail(&parts, e))?;
                    fs::set_permissions(&parts, fs::Permissions::from_mode(0o700))
                        .map_err(|e| fail(&parts, e))?;
                    Some(parts)
                }
                None => None,
            };
            let state = session_dir.join("device.state");
            let emulator = Emulator::create_shared(&config.spec, config.seed, &state)?;
            if let Some(undo) = &config.undo {
                fs::File::create(undo).map_err(|e| fail(undo, e))?;
                fs::set_permissions(undo, fs::Permissions::from_mode(0o600))
                    .map_err(|e| fail(undo, e))?;
            }
            if let Some(a) = &config.account {
                for path in [
                    Some(&files),
                    Some(&state),
                    parts.as_ref(),
                    config.undo.as_ref(),
                ]
                .into_iter()
                .flatten()
                {
                    std::os::unix::fs::chown(path, Some(a.uid), Some(a.gid))
                        .map_err(|e| safety::io_usage(path, "hand over", &e))?;
                }
            }
            Ok((emulator, shim, files, parts))
        };
        let (emulator, shim, files, parts) = match build() {
            Ok(parts) => parts,
            Err(e) => {
                let _ = fs::remove_dir_all(&session_dir);
                return Err(e);
            }
        };
        let session = EmulationSession {
            config: config.clone(),
            target,
            session_dir,
            emulator,
            shim,
            files,
            parts,
            _quit: quit,
        };
        if config.backing == Backing::Ram {
            session.warm_page_cache()?;
        }
        Ok(session)
    }

    /// The environment a process needs to run on the emulated device: `LD_PRELOAD` (ahead of any
    /// preload already set) and the shim's variables.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut preload = self.shim.display().to_string();
        if let Some(existing) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
            preload.push(':');
            preload.push_str(&existing.to_string_lossy());
        }
        let mut env = vec![
            ("LD_PRELOAD".to_string(), preload),
            (
                ENV_STATE.to_string(),
                self.session_dir.join("device.state").display().to_string(),
            ),
            (ENV_FILES.to_string(), self.files.display().to_string()),
            (ENV_DIR.to_string(), self.target.display().to_string()),
            (
                ENV_BACKING.to_string(),
                self.config.backing.name().to_string(),
            ),
        ];
        if let Some(parts) = &self.parts {
            env.push((ENV_TRACE_DIR.to_string(), parts.display().to_string()));
        }
        if let Some(undo) = &self.config.undo {
            // The server runs in another directory (PostgreSQL in its data directory).
            let undo = std::path::absolute(undo).unwrap_or_else(|_| undo.clone());
            env.push((ENV_UNDO.to_string(), undo.display().to_string()));
        }
        if !self.config.places.is_empty() {
            let lines: Vec<String> = self
                .config
                .places
                .iter()
                .map(|p| {
                    format!(
                        "{}\t{}\t{}",
                        p.device,
                        if p.prefix { '*' } else { '=' },
                        self.target.join(&p.path).display()
                    )
                })
                .collect();
            env.push((ENV_PLACES.to_string(), lines.join("\n")));
        }
        env
    }

    /// What each device of the emulated spec did so far (a layout's in its order).
    pub fn device_counts(&self) -> Vec<oltplab_devmodel::DeviceCounts> {
        self.emulator.device_counts(oltplab_devmodel::now_ns())
    }

    /// Modelled against realised latency so far, over every process.
    pub fn fidelity(&self) -> Fidelity {
        self.emulator.fidelity()
    }

    /// Starts the fidelity figures afresh (after a warm-up).
    pub fn reset_fidelity(&self) {
        self.emulator.reset_fidelity()
    }

    /// How many processes loaded the shim so far.
    pub fn processes(&self) -> u64 {
        let Ok(mut f) = fs::File::open(&self.files) else {
            return 0;
        };
        let mut words = [0u8; 8 * (FILES_ATTACHED_WORD + 1)];
        if f.read_exact(&mut words).is_err() {
            return 0;
        }
        let at = FILES_ATTACHED_WORD * 8;
        u64::from_le_bytes(words[at..at + 8].try_into().expect("8 bytes"))
    }

    /// Call after every process of the command has ended: merges the trace parts into the trace
    /// file, and reports fidelity with its warnings. The shared state is removed on drop.
    pub fn finish(self) -> Result<EmulationReport> {
        self.finish_filtered(0, |_, _| true)
    }

    /// [`EmulationSession::finish`] with the trace cut and tagged as
    /// [`oltplab_trace::merge_filtered`] does (`oltplab run` keeps only its measured window).
    pub fn finish_filtered(
        self,
        from_ns: u64,
        keep: impl FnMut(&mut oltplab_trace::Record, u64) -> bool,
    ) -> Result<EmulationReport> {
        let fidelity = self.fidelity();
        let processes = self.processes();
        let mut warnings = Vec::new();
        let dir = self.config.dir.display();
        if processes == 0 {
            warnings.push(Warning::new(
                WarningKind::EmulationOffTarget,
                "the command never loaded the emulation library, so nothing was emulated: static binaries, setuid programs and programs that clear LD_PRELOAD cannot be emulated; run the program itself under oltplab emulate",
            ));
        } else if fidelity.ios == 0 {
            warnings.push(Warning::new(
                WarningKind::EmulationOffTarget,
                format!("no reads, writes or syncs under {dir} were seen: check that --path is where the command keeps its files (io_uring and Linux native AIO bypass the emulation; for MariaDB set innodb_use_native_aio=0)"),
            ));
        } else if let Some(problem) = fidelity.problem() {
            // Late wake-ups explain the gap when they are most of it; otherwise the real I/O took
            // longer than the model allowed.
            let gap_ns = fidelity.emulated_lat_ns_mean - fidelity.modelled_lat_ns_mean;
            let busy = fidelity.wake_late_ns_mean >= 0.5 * gap_ns.abs();
            let fix = match (busy, self.config.backing) {
                (true, _) | (false, Backing::Ram) => format!(
                    "waits woke {} late on average, so the machine is too busy to keep the modelled times: run fewer processes or use a quieter machine",
                    format_ns(fidelity.wake_late_ns_mean)
                ),
                (false, Backing::Disk) => {
                    "the real disk is slower than the emulated device: use --backing ram".to_string()
                }
            };
            warnings.push(Warning::new(
                WarningKind::EmulationOffTarget,
                format!("the emulation did not keep the model's latencies: {problem}; {fix}"),
            ));
        }
        if let Some(queued) = fidelity.cpu_queue_problem() {
            warnings.push(Warning::new(
                WarningKind::CpuBound,
                format!("the cores were short: {queued}; a real device's completions would wait for a core the same way: run fewer processes to see the device alone"),
            ));
        }
        let trace = match (&self.config.trace, &self.parts) {
            (Some(out), Some(parts)) => {
                let mut files: Vec<PathBuf> = fs::read_dir(parts)
                    .map_err(|e| safety::io_usage(parts, "read", &e))?
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "trace"))
                    .collect();
                files.sort();
                if files.is_empty() {
                    None
                } else {
                    Some(oltplab_trace::merge_filtered(&files, out, from_ns, keep)?)
                }
            }
            _ => None,
        };
        Ok(EmulationReport {
            spec: self.config.spec.name(),
            backing: self.config.backing,
            dir: self.target.clone(),
            fidelity,
            processes,
            trace,
            warnings,
        })
    }

    /// RAM backing: read the files already under the directory once, so that reads do not wait for
    /// the real disk.
    fn warm_page_cache(&self) -> Result<()> {
        let (files, total) = files_under(&self.target);
        let memory = oltplab_metrics::env::available_memory_bytes();
        if memory > 0 && total > memory / 2 {
            return Err(Error::usage(format!(
                "--backing ram keeps {} of files under {} in memory, more than half the available {}: use --backing disk or a machine with more memory",
                format_bytes(total),
                self.config.dir.display(),
                format_bytes(memory)
            )));
        }
        let mut buf = vec![0u8; 1 << 20];
        for path in files {
            if let Ok(mut f) = fs::File::open(&path) {
                while matches!(f.read(&mut buf), Ok(n) if n > 0) {}
            }
        }
        Ok(())
    }
}

/// The regular files under `dir` (recursively) and their total size.
pub fn files_under(dir: &Path) -> (Vec<PathBuf>, u64) {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.is_file() {
                total += meta.len();
                files.push(entry.path());
            }
        }
    }
    (files, total)
}

impl Drop for EmulationSession {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.session_dir);
    }
}

impl EmulationReport {
    /// A few lines for the terminal (stderr, so that the command's own output stays clean).
    pub fn print(&self) {
        let f = &self.fidelity;
        crate::output::note!(
            "oltplab emulate: {} ({} backing) under {}: {} I/Os from {} processes",
            self.spec,
            self.backing.name(),
            self.dir.display(),
            format_count(f.ios as f64),
            self.processes
        );
        if f.ios > 0 {
            crate::output::note!("  {f}");
            crate::output::note!(
                "  waits woke {} late at most (spin margin {})",
                format_ns(f.wake_late_ns_max as f64),
                format_ns(f.wake_early_ns as f64)
            );
        }
        if let Some(t) = &self.trace {
            crate::output::note!(
                "  trace {}: {} records, {} files{}",
                t.path.display(),
                format_count(t.records as f64),
                t.files,
                if t.dropped_records > 0 {
                    format!(", {} dropped", format_count(t.dropped_records as f64))
                } else {
                    String::new()
                }
            );
        }
        crate::output::print_warnings(&self.warnings);
    }
}

/// The base for session directories: tmpfs if there is one, so the shared state is memory.
fn session_base() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

fn new_session_dir() -> Result<PathBuf> {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = session_base().join(format!("{SESSION_PREFIX}{}-{n}", std::process::id()));
    // A leftover of an earlier oltplab that had our pid: the name is ours.
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir(&dir).map_err(|e| safety::io_usage(&dir, "create", &e))?;
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755))
        .map_err(|e| safety::io_usage(&dir, "set permissions of", &e))?;
    Ok(dir)
}

/// Removes session directories of oltplab processes that no longer run (killed before cleanup).
fn sweep_stale_sessions() {
    let Ok(entries) = fs::read_dir(session_base()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(SESSION_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_dbs::server::{self, ManagedServer, ServerConfig, ServerKind};

    fn build_shim() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "oltplab-shim"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build");
        assert!(status.success());
    }

    /// The shared state is its owner's alone: other users of the machine can neither stall nor
    /// crash the processes on the device through it, nor slip trace parts into the run.
    #[test]
    fn the_shared_state_is_not_open_to_other_users() {
        let dir = PathBuf::from(format!("/tmp/oltplab-emu-modes-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        safety::ensure_own_dir(&dir, false).unwrap();
        let session = EmulationSession::start(&SessionConfig {
            spec: oltplab_devmodel::parse_spec("hdd-10k").unwrap(),
            places: Vec::new(),
            undo: None,
            dir: dir.clone(),
            backing: Backing::Disk,
            trace: Some(dir.join("t.trace")),
            seed: 1,
            account: None,
        })
        .unwrap();
        let mode = |p: PathBuf| fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(session.session_dir.join("device.state")), 0o600);
        assert_eq!(mode(session.files.clone()), 0o600);
        assert_eq!(mode(session.parts.clone().unwrap()), 0o700);
        drop(session);
        let _ = fs::remove_dir_all(&dir);
    }

    /// A managed MariaDB on an emulated SATA SSD, the way `oltplab run --engine mariadb --emulate`
    /// runs it: native AIO off (it would bypass the shim), its I/O through the shared device.
    #[test]
    fn a_managed_mariadb_runs_on_an_emulated_device() {
        if server::find_program(&["mariadbd", "mysqld"], None).is_none() {
            oltplab_core::testing::skip(
                oltplab_core::testing::Need::Server,
                "MariaDB is not installed",
            );
            return;
        }
        build_shim();
        let dir = PathBuf::from(format!("/tmp/oltplab-emu-maria-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        safety::ensure_own_dir(&dir, false).unwrap();
        let session = EmulationSession::start(&SessionConfig {
            spec: oltplab_devmodel::parse_spec("sata-ssd-2010").unwrap(),
            places: Vec::new(),
            undo: None,
            dir: dir.clone(),
            backing: Backing::Disk,
            trace: None,
            seed: 1,
            account: server::server_account(ServerKind::Mariadb).unwrap(),
        })
        .unwrap();
        let mut cfg = ServerConfig::new(ServerKind::Mariadb, &dir);
        cfg.buffer_pool_bytes = 32 << 20;
        cfg.extra_env = session.env();
        let server = ManagedServer::start(&cfg).unwrap();
        assert_eq!(server.settings()["innodb_use_native_aio"], "OFF");
        // The mariadb client (from mariadb-server's dependencies) over the private socket.
        let sql = |q: &str| {
            let out = std::process::Command::new("mariadb")
                .arg("-uroot")
                .arg(format!(
                    "--socket={}",
                    server.socket_dir().join("mysqld.sock").display()
                ))
                .args(["-N", "-B", "oltplab", "-e", q])
                .output()
                .expect("run the mariadb client");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        let mut script =
            String::from("CREATE TABLE t (k INT PRIMARY KEY, v VARCHAR(100)) ENGINE=InnoDB;");
        for i in 0..20 {
            script.push_str(&format!("INSERT INTO t VALUES ({i}, REPEAT('x', 100));"));
        }
        sql(&script);
        assert_eq!(sql("SELECT COUNT(*) FROM t"), "20");
        server.stop().unwrap();
        let processes = session.processes();
        let report = session.finish().unwrap();
        assert!(processes >= 1, "mariadbd did not load the shim");
        // Each autocommit INSERT syncs the redo log: at least 20 flushes, plus the page writes.
        assert!(report.fidelity.ios >= 20, "{:?}", report.fidelity);
        assert!(report.fidelity.modelled_lat_ns_mean > 0.0);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A managed PostgreSQL on an emulated HDD: every backend loads the shim and shares the device.
    #[test]
    fn a_managed_postgres_runs_on_an_emulated_device() {
        let Some(psql) = server::find_program(&["psql"], None) else {
            oltplab_core::testing::skip(
                oltplab_core::testing::Need::Server,
                "PostgreSQL is not installed",
            );
            return;
        };
        build_shim();
        let dir = PathBuf::from(format!("/tmp/oltplab-emu-pg-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        safety::ensure_own_dir(&dir, false).unwrap();
        let session = EmulationSession::start(&SessionConfig {
            spec: oltplab_devmodel::parse_spec("hdd-10k").unwrap(),
            places: Vec::new(),
            undo: None,
            dir: dir.clone(),
            backing: Backing::Disk,
            trace: Some(
                std::env::temp_dir().join(format!("oltplab-emu-pg-{}.trace", std::process::id())),
            ),
            seed: 1,
            account: server::server_account(ServerKind::Postgres).unwrap(),
        })
        .unwrap();
        let mut cfg = ServerConfig::new(ServerKind::Postgres, &dir);
        cfg.extra_env = session.env();
        let server = ManagedServer::start(&cfg).unwrap();
        let out = std::process::Command::new(psql)
            .arg(server.url())
            .args(["-X", "-q", "-t", "-c"])
            .arg("CREATE TABLE t AS SELECT g AS k FROM generate_series(1, 1000) g; CHECKPOINT; SELECT count(*) FROM t")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1000");
        server.stop().unwrap();
        let report = session.finish().unwrap();
        // postmaster, checkpointer, WAL writer, background writer, the client's backend …
        assert!(report.processes >= 4, "{report:?}");
        // The checkpoint wrote and synced the new table on the emulated disk.
        assert!(report.fidelity.ios > 10, "{:?}", report.fidelity);
        assert!(
            report.fidelity.modelled_lat_ns_mean > 100_000.0,
            "{:?}",
            report.fidelity
        );
        let trace = report.trace.expect("a trace");
        assert!(trace.records >= report.fidelity.ios, "{trace:?}");
        let merged = oltplab_trace::TraceReader::open(&trace.path).unwrap();
        let parts: u32 = merged.meta().extra["merged_parts"].parse().unwrap();
        assert!(
            parts >= 3,
            "one trace part per process that did I/O: {parts}"
        );
        fs::remove_file(&trace.path).unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}
