//! The fault matrix, as a user meets it with a managed PostgreSQL server: Ctrl-C (the terminal's
//! SIGINT to oltplab's process group) once or twice, and SIGTERM, during initdb, the load, the
//! warm-up, the measured window and the shutdown, and `kill -9` of the server mid-run. Each ends
//! with the documented exit code (130; 1 with the server's log tail when it died), the partial
//! result saved with an `interrupted` or `server_died` warning, and no server process, socket
//! directory or shared memory of oltplab's left behind.
//!
//! The scenarios share one loaded cluster and run one at a time (their timing is what they test).

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::{oltplab, scratch, stderr};
use oltplab_dbs::server::{self, process};
use serde_json::Value;

/// One scenario at a time; the cluster they share, loaded once.
static SERIAL: Mutex<()> = Mutex::new(());
static LOADED: OnceLock<Option<PathBuf>> = OnceLock::new();

/// The loaded 1-warehouse cluster, or None (and a visible skip) without PostgreSQL.
fn loaded() -> Option<&'static Path> {
    LOADED
        .get_or_init(|| {
            server::find_program(&["initdb"], None)?;
            let data = scratch("faults").join("data");
            let out = oltplab(
                Path::new("/"),
                &[
                    "-q",
                    "load",
                    "tpcc",
                    "--engine",
                    "postgres",
                    "--data-dir",
                    data.to_str().unwrap(),
                    "--no-check",
                ],
            );
            assert!(out.status.success(), "{}", stderr(&out));
            // SAFETY: registers a plain function, run once when the test process exits.
            unsafe { libc::atexit(remove_loaded) };
            Some(data)
        })
        .as_deref()
        .or_else(|| {
            oltplab_core::testing::skip(
                oltplab_core::testing::Need::Server,
                "PostgreSQL is not installed",
            );
            None
        })
}

/// At the test process's exit: the shared cluster's scratch directory (every oltplab command
/// stopped its server when it ended, so nothing runs in it).
extern "C" fn remove_loaded() {
    if let Some(Some(data)) = LOADED.get() {
        let _ = std::fs::remove_dir_all(data.parent().unwrap_or(data));
    }
}

/// oltplab running in its own process group (as in a terminal), its stderr read line by line.
struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn start(args: &[&str]) -> Running {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new(env!("CARGO_BIN_EXE_oltplab"))
            .args(args)
            .current_dir("/")
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for a stderr line containing `text`.
    fn wait_for(&mut self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            match self.lines.recv_timeout(Duration::from_millis(200)) {
                Ok(line) => {
                    let hit = line.contains(text);
                    self.seen.push(line);
                    if hit {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        panic!("no line with '{text}' in:\n{}", self.seen.join("\n"));
    }

    /// Waits until `n` measured seconds have ended (a run with `--report-interval 1s` prints a
    /// line after each: `[    2s] New-Orders/min …`).
    fn wait_for_measured_seconds(&mut self, n: u32) {
        for _ in 0..n {
            self.wait_for("s] New-Orders/min");
        }
    }

    /// The terminal's Ctrl-C (or `kill -TERM`): the signal to oltplab's whole process group.
    fn signal(&self, sig: i32) {
        unsafe { libc::kill(-(self.pid() as i32), sig) };
    }

    /// Exit code and all of stderr, within `limit`.
    fn finish(mut self, limit: Duration) -> (Option<i32>, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!(
                    "oltplab did not end within {limit:?}:\n{}",
                    self.seen.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(line);
        }
        (status.code(), self.seen.join("\n"))
    }
}

/// The postmaster of the cluster in `data`, from its pid file.
fn postmaster(data: &Path) -> Option<u32> {
    std::fs::read_to_string(data.join("postgres/postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// Waits until a descendant of `pid` runs `program` (e.g. initdb).
fn wait_for_descendant(pid: u32, program: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let found = process::process_tree(pid).into_iter().any(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == program)
        });
        if found {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("{program} never ran under oltplab (pid {pid})");
}

/// The POSIX shared-memory segments (`/dev/shm/PostgreSQL.*`) the processes under `roots` have
/// mapped now: this test's servers' own, whatever other PostgreSQL servers on the machine make.
/// (oltplab's servers keep their dynamic shared memory in the cluster, so this is usually empty:
/// it is what a server killed with SIGKILL would leave behind if they did not.)
fn pg_segments(roots: &[u32]) -> Vec<String> {
    let mut found: Vec<String> = roots
        .iter()
        .flat_map(|&r| process::process_tree(r))
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/maps")).ok())
        .flat_map(|maps| {
            maps.lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .filter_map(|path| path.strip_prefix("/dev/shm/"))
                .filter(|name| name.starts_with("PostgreSQL."))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Nothing of oltplab process `pid` is left: no process it started (`started`, recorded while
/// it ran), no socket directory, no emulated device's shared state, none of the PostgreSQL
/// `segments` its servers had mapped ([`pg_segments`]).
fn assert_nothing_left(pid: u32, started: &[u32], segments: &[String], context: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while started.iter().any(|&p| process::alive(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &p in started {
        assert!(!process::alive(p), "process {p} still runs\n{context}");
    }
    let mine = |dir: &str, prefixes: &[String]| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| prefixes.iter().any(|p| n.starts_with(p.as_str())))
            .collect()
    };
    let left = mine("/tmp", &[format!("oltplab-postgres-{pid}-")]);
    assert!(left.is_empty(), "left in /tmp: {left:?}\n{context}");
    let left = mine(
        "/dev/shm",
        &[
            format!("oltplab-emu-{pid}-"),
            format!("oltplab-emulate-{pid}"),
        ],
    );
    assert!(left.is_empty(), "left in /dev/shm: {left:?}\n{context}");
    let left: Vec<&String> = segments
        .iter()
        .filter(|name| Path::new("/dev/shm").join(name).exists())
        .collect();
    assert!(left.is_empty(), "left in /dev/shm: {left:?}\n{context}");
}

fn warning_kinds(result: &Path) -> Vec<String> {
    let doc: Value = serde_json::from_slice(&std::fs::read(result).unwrap()).unwrap();
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap().to_string())
        .collect()
}

/// The saved result carries a warning of `kind`.
fn assert_warning(result: &Path, kind: &str, err: &str) {
    let kinds = warning_kinds(result);
    assert!(kinds.iter().any(|k| k == kind), "{kinds:?}\n{err}");
}

fn tx_count(result: &Path) -> u64 {
    let doc: Value = serde_json::from_slice(&std::fs::read(result).unwrap()).unwrap();
    doc["summary"]["tx"]["new_order"]["count"].as_u64().unwrap()
}

/// A run whose window is long (60 s) and says each measured second as it ends, so that a test
/// signals it after [`Running::wait_for_measured_seconds`], not after a guessed sleep.
const IN_THE_WINDOW: [&str; 6] = [
    "--warmup",
    "1s",
    "--duration",
    "60s",
    "--report-interval",
    "1s",
];

/// `run tpcc` on the shared cluster with `extra` options and its result in `out`.
fn run_tpcc(data: &Path, out: &Path, extra: &[&str]) -> Running {
    let db = ["--engine", "postgres", "--data-dir", data.to_str().unwrap()];
    let out = ["--out", out.to_str().unwrap(), "--force"];
    Running::start(&[&["run", "tpcc"], &db[..], extra, &out[..]].concat())
}

#[test]
fn ctrl_c_during_initdb_stops_it_and_leaves_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    if loaded().is_none() {
        return;
    }
    let data = scratch("faults-initdb").join("data");
    let run = Running::start(&[
        "load",
        "tpcc",
        "--engine",
        "postgres",
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    wait_for_descendant(run.pid(), "initdb");
    let started = process::process_tree(run.pid());
    let segments = pg_segments(&started);
    run.signal(libc::SIGINT);
    let (code, err) = run.finish(Duration::from_secs(30));
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert_nothing_left(started[0], &started[1..], &segments, &err);
    let _ = std::fs::remove_dir_all(data.parent().unwrap());
}

#[test]
fn ctrl_c_during_the_load_stops_the_server_and_leaves_nothing() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    if loaded().is_none() {
        return;
    }
    let data = scratch("faults-load").join("data");
    let mut run = Running::start(&[
        "load",
        "tpcc",
        "--engine",
        "postgres",
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    run.wait_for("oltplab load tpcc");
    let postmaster = postmaster(&data).expect("the server runs");
    let segments = pg_segments(&[postmaster]);
    std::thread::sleep(Duration::from_millis(500));
    run.signal(libc::SIGINT);
    let pid = run.pid();
    let (code, err) = run.finish(Duration::from_secs(60));
    assert_eq!(code, Some(130), "{err}");
    assert_nothing_left(pid, &[postmaster], &segments, &err);
    let _ = std::fs::remove_dir_all(data.parent().unwrap());
}

#[test]
fn ctrl_c_in_the_warm_up_ends_at_once_with_the_result_saved() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(data) = loaded() else {
        return;
    };
    let out = data.with_file_name("result-warmup");
    let mut run = run_tpcc(data, &out, &["--warmup", "60s", "--duration", "60s"]);
    run.wait_for("warming up");
    let postmaster = postmaster(data).expect("the server runs");
    let segments = pg_segments(&[postmaster]);
    std::thread::sleep(Duration::from_secs(1));
    run.signal(libc::SIGINT);
    let pid = run.pid();
    let (code, err) = run.finish(Duration::from_secs(30));
    assert_eq!(code, Some(130), "{err}");
    assert_warning(&out.join("result.json"), "interrupted", &err);
    assert_nothing_left(pid, &[postmaster], &segments, &err);
}

/// SIGINT and SIGTERM alike: the measured window ends early, the result holds what it measured.
#[test]
fn ctrl_c_or_sigterm_in_the_window_saves_the_partial_result() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(data) = loaded() else {
        return;
    };
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let out = data.with_file_name(format!("result-window-{sig}"));
        let mut run = run_tpcc(data, &out, &IN_THE_WINDOW);
        run.wait_for("warming up");
        let postmaster = postmaster(data).expect("the server runs");
        let segments = pg_segments(&[postmaster]);
        run.wait_for_measured_seconds(2);
        run.signal(sig);
        let pid = run.pid();
        let (code, err) = run.finish(Duration::from_secs(30));
        assert_eq!(code, Some(130), "signal {sig}: {err}");
        let result = out.join("result.json");
        assert_warning(&result, "interrupted", &err);
        assert!(tx_count(&result) > 0, "{err}");
        assert_nothing_left(pid, &[postmaster], &segments, &err);
    }
}

/// A second Ctrl-C quits at once — yet stops the server and removes the emulated device's
/// shared state and the socket directory on the way out.
#[test]
fn a_second_ctrl_c_quits_at_once_and_still_cleans_up() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(data) = loaded() else {
        return;
    };
    let out = data.with_file_name("result-twice");
    let mut run = run_tpcc(
        data,
        &out,
        &["--emulate", "pcie-flash-2012", "--backing", "ram"],
    );
    run.wait_for("warming up");
    let postmaster = postmaster(data).expect("the server runs");
    let segments = pg_segments(&[postmaster]);
    let pid = run.pid();
    let shm = format!("oltplab-emu-{pid}-");
    let has_session = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with(&shm));
    assert!(has_session, "the run is on an emulated device");
    run.signal(libc::SIGINT);
    // Two signals pending at once are one: the second is sent once the first was heard.
    run.wait_for("press Ctrl-C again");
    run.signal(libc::SIGINT);
    let (code, err) = run.finish(Duration::from_secs(20));
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("quitting at once"), "{err}");
    assert_nothing_left(pid, &[postmaster], &segments, &err);
}

/// Ctrl-C while the server shuts down after a complete window: the shutdown goes on (it is the
/// clean stop), the result is complete, the command succeeded (exit code 0), nothing is left.
#[test]
fn ctrl_c_during_the_shutdown_keeps_the_complete_result() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(data) = loaded() else {
        return;
    };
    let out = data.with_file_name("result-shutdown");
    // The shutdown lasts a fraction of a second: on a busy machine the poll below may not run
    // while it does. Such an attempt tests nothing (the signal was never sent) and is run again.
    const ATTEMPTS: u32 = 3;
    for attempt in 1..=ATTEMPTS {
        let mut run = run_tpcc(data, &out, &["--warmup", "1s", "--duration", "2s"]);
        run.wait_for("warming up");
        let postmaster = postmaster(data).expect("the server runs");
        let segments = pg_segments(&[postmaster]);
        // PostgreSQL marks its pid file "stopping" when the shutdown begins, and removes it
        // when the shutdown ends.
        let pid_file = data.join("postgres/postmaster.pid");
        let deadline = Instant::now() + Duration::from_secs(30);
        let seen = loop {
            match std::fs::read_to_string(&pid_file) {
                Ok(text) if text.contains("stopping") => break true,
                Err(_) => break false,
                Ok(_) => {}
            }
            assert!(Instant::now() < deadline, "the run did not end");
            std::thread::sleep(Duration::from_millis(1));
        };
        if seen {
            run.signal(libc::SIGINT);
        }
        let pid = run.pid();
        let (code, err) = run.finish(Duration::from_secs(30));
        let result = out.join("result.json");
        let kinds = warning_kinds(&result);
        assert!(
            !kinds.contains(&"interrupted".to_string()),
            "{kinds:?}\n{err}"
        );
        assert!(tx_count(&result) > 0, "{err}");
        assert_eq!(code, Some(0), "{err}");
        assert_nothing_left(pid, &[postmaster], &segments, &err);
        if seen {
            return;
        }
        eprintln!("attempt {attempt}: the shutdown ended before this test saw it; again");
    }
    panic!("in {ATTEMPTS} runs the test never saw the server's shutdown under way");
}

/// `kill -9` of the managed server in the measured window: exit code 1 and a sentence that says
/// so, the result of what was measured before saved with a `server_died` warning — not a clean,
/// shorter run — and none of the killed server's shared memory left behind.
#[test]
fn a_server_killed_mid_run_ends_the_run_with_its_result_saved() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some(data) = loaded() else {
        return;
    };
    let out = data.with_file_name("result-killed");
    let mut run = run_tpcc(data, &out, &IN_THE_WINDOW);
    run.wait_for("warming up");
    run.wait_for_measured_seconds(2);
    let postmaster = postmaster(data).expect("the server runs");
    let segments = pg_segments(&[postmaster]);
    unsafe { libc::kill(postmaster as i32, libc::SIGKILL) };
    let pid = run.pid();
    let (code, err) = run.finish(Duration::from_secs(30));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("died"), "{err}");
    let result = out.join("result.json");
    assert_warning(&result, "server_died", &err);
    assert!(tx_count(&result) > 0, "{err}");
    assert_nothing_left(pid, &[postmaster], &segments, &err);
}

/// The same for order entry: the connection counts measured before the death are kept.
#[test]
fn a_server_killed_during_order_entry_keeps_the_points_before() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    if loaded().is_none() {
        return;
    }
    let dir = scratch("faults-orders");
    let data = dir.join("data");
    let db = ["--engine", "postgres", "--data-dir", data.to_str().unwrap()];
    let out = oltplab(
        Path::new("/"),
        &[&["-q", "load", "orders"], &db[..]].concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let result_dir = dir.join("result");
    let mut run = Running::start(
        &[
            &["run", "orders"],
            &db[..],
            &["--connections", "2,4", "--tx-per-point", "4000"],
            &["--out", result_dir.to_str().unwrap()],
        ]
        .concat(),
    );
    // Killed as the second point connects: the first one's figures stay.
    run.wait_for("4 connections: connecting");
    let postmaster = postmaster(&data).expect("the server runs");
    let segments = pg_segments(&[postmaster]);
    unsafe { libc::kill(postmaster as i32, libc::SIGKILL) };
    let pid = run.pid();
    let (code, err) = run.finish(Duration::from_secs(60));
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("died"), "{err}");
    let result = result_dir.join("result.json");
    assert_warning(&result, "server_died", &err);
    let doc: Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
    let first = &doc["summary"]["sweep"][0];
    assert_eq!(first["connections"].as_u64(), Some(2), "{doc}");
    assert!(first["transactions"].as_u64().unwrap() >= 4000, "{first}");
    assert_nothing_left(pid, &[postmaster], &segments, &err);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The leftovers check itself, broken on purpose (no server needed): each kind of leftover it
/// names — a process still running, a socket directory, an emulated device's shared state, a
/// server's shared-memory segment — makes it fail, and with none of them it passes.
#[test]
fn the_leftovers_check_fails_on_each_kind_of_leftover() {
    // A stand-in for an oltplab process: its pid names the leftovers.
    let mut stand_in = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = stand_in.id();
    let fails = |started: &[u32], segments: &[String]| {
        std::panic::catch_unwind(|| assert_nothing_left(pid, started, segments, "mutation"))
            .is_err()
    };
    assert!(!fails(&[], &[]), "nothing is left, and the check failed");
    // A process it started still runs (the check waits 5 s for it first).
    assert!(fails(&[pid], &[]), "a live process passed");
    stand_in.kill().unwrap();
    stand_in.wait().unwrap();
    assert!(!fails(&[pid], &[]), "a process that ended failed the check");
    let leftovers = [
        PathBuf::from(format!("/tmp/oltplab-postgres-{pid}-mutation")),
        PathBuf::from(format!("/dev/shm/oltplab-emu-{pid}-mutation")),
        PathBuf::from(format!("/dev/shm/oltplab-emulate-{pid}")),
    ];
    for left in &leftovers {
        std::fs::write(left, b"").unwrap();
        let caught = fails(&[], &[]);
        std::fs::remove_file(left).unwrap();
        assert!(caught, "{} passed the check", left.display());
    }
    let segment = format!("PostgreSQL.oltplab-mutation-{pid}");
    let path = Path::new("/dev/shm").join(&segment);
    std::fs::write(&path, b"").unwrap();
    let caught = fails(&[], std::slice::from_ref(&segment));
    // A segment of another server (not in the list) is not this test's business.
    let foreign = fails(&[], &[]);
    std::fs::remove_file(&path).unwrap();
    assert!(caught, "a segment of this test's server passed the check");
    assert!(!foreign, "another server's segment failed the check");
}
