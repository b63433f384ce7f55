//! What every integration test needs: the binary run in a scratch directory, its JSON, and the
//! checks that a command succeeded or refused bad input properly (exit code 2, one sentence that
//! names the cause, never a panic).
#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// `oltplab ARGS…` run in `dir`.
pub fn oltplab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oltplab"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run oltplab")
}

/// A fresh, empty directory for one test. Under /tmp, not $TMPDIR: a database server running as
/// its own account must be able to enter it. Numbered, because the tests of many files share one
/// binary (tests/e2e) and some give the same name.
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = PathBuf::from(format!(
        "/tmp/oltplab-it-{}-{name}-{}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The driver's CPU-seconds per transaction of a run's `summary` (every kind counted).
fn driver_s_per_tx(s: &Value) -> f64 {
    let cpu = &s["cpu"];
    let tx: u64 = s["tx"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| t["count"].as_u64().unwrap())
        .sum();
    (cpu["driver_user_s"].as_f64().unwrap() + cpu["driver_sys_s"].as_f64().unwrap()) / tx as f64
}

/// A `--procedures` run's driver spent less CPU per transaction than the statements' run did
/// (by a fifth at least): one round trip per transaction instead of several.
pub fn assert_procedures_cost_the_driver_less(statements: &Value, procedures: &Value) {
    let (statements, calls) = (
        driver_s_per_tx(&statements["summary"]),
        driver_s_per_tx(&procedures["summary"]),
    );
    assert!(
        calls < 0.8 * statements,
        "driver CPU per transaction: {:.0} µs with --procedures, {:.0} µs without",
        calls * 1e6,
        statements * 1e6
    );
}

pub fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

pub fn assert_ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        stderr(out)
    );
}

/// Exit code 2, no panic, and a message that names `expected`.
pub fn assert_usage_error(out: &Output, expected: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(expected), "expected '{expected}' in: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

/// [`assert_usage_error`] for oltplab's own checks (not clap's): the whole message is one line.
pub fn assert_one_line_usage_error(out: &Output, expected: &str) {
    assert_usage_error(out, expected);
    let err = stderr(out);
    assert_eq!(err.trim_end().lines().count(), 1, "one sentence: {err}");
}

/// Whether a server program (initdb, mariadbd) is installed where Debian's packages and
/// scripts/test.sh put it; if not, the test reports itself skipped (and fails under CI and
/// scripts/test.sh: `oltplab_core::testing::skip`).
pub fn server_installed(program: &str) -> bool {
    let found = [
        "/usr/sbin",
        "/usr/bin",
        "/usr/local/bin",
        "/usr/lib/postgresql",
    ]
    .iter()
    .any(|d| find(Path::new(d), program, 3));
    if !found {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            &format!("{program} is not installed (scripts/test.sh installs it)"),
        );
    }
    found
}

/// Whether `program` (fio, losetup) runs, from Debian's `package`; if not, the test reports
/// itself skipped (and fails under CI and scripts/test.sh, which install it).
pub fn program_installed(program: &str, package: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Package,
            &format!("{program} is not installed (apt-get install {package}; scripts/test.sh installs it)"),
        );
    }
    found
}

/// Whether a managed Galera cluster can run here; if not, the test reports itself skipped
/// (scripts/test.sh installs MariaDB, Galera and openssl).
pub fn galera_installed() -> bool {
    let missing = oltplab_dbs::server::galera::missing();
    if let Some(why) = &missing {
        oltplab_core::testing::skip(oltplab_core::testing::Need::Server, why);
    }
    missing.is_none()
}

/// mariadbd processes whose command line names a path under `dir` (a test's servers that
/// outlived oltplab).
pub fn mariadbd_under(dir: &Path) -> Vec<u32> {
    let needle = dir.as_os_str().as_encoded_bytes().to_vec();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmd.windows(needle.len()).any(|w| w == needle.as_slice())
            && std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "mariadbd")
        {
            found.push(pid);
        }
    }
    found
}

fn find(dir: &Path, name: &str, depth: u32) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let p = e.path();
        p.file_name().is_some_and(|n| n == name)
            || (depth > 0 && p.is_dir() && find(&p, name, depth - 1))
    })
}

/// `oltplab ARGS` in `dir`, stopped by Ctrl-C 1.5 s after `finished()` first holds — once its
/// first `what` is saved, so that the signal lands in the next one — and its output. Fails if
/// that takes over 2 minutes or the command ends before.
pub fn interrupt_after_first(
    dir: &Path,
    args: &[&str],
    finished: impl Fn() -> bool,
    what: &str,
) -> Output {
    signal_after_first(dir, args, finished, what, libc::SIGINT)
}

/// As [`interrupt_after_first`], with `signal` (SIGKILL: a crash, no handler runs).
pub fn signal_after_first(
    dir: &Path,
    args: &[&str],
    finished: impl Fn() -> bool,
    what: &str,
    signal: i32,
) -> Output {
    signal_after_first_with_pid(dir, args, finished, what, signal).1
}

/// As [`signal_after_first`], with the process id it ran under (what its servers' socket
/// directories are named by).
pub fn signal_after_first_with_pid(
    dir: &Path,
    args: &[&str],
    finished: impl Fn() -> bool,
    what: &str,
    signal: i32,
) -> (u32, Output) {
    let mut child: Child = Command::new(env!("CARGO_BIN_EXE_oltplab"))
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !finished() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no {what} finished in 2 minutes"
        );
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!("the study ended before its first {what}: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, signal) };
    (child.id(), child.wait_with_output().unwrap())
}

/// The ids of the cells (an S1 study's: its devices) a study measured and of those it kept, from
/// its progress lines (`[2/4] id (…)` and `[1/4] id: finished earlier, kept`).
pub fn cells_in(err: &str) -> (Vec<String>, Vec<String>) {
    let (mut ran, mut kept) = (Vec::new(), Vec::new());
    for line in err.lines().filter(|l| l.starts_with('[')) {
        let Some((_, rest)) = line.split_once("] ") else {
            continue;
        };
        if let Some(id) = rest.strip_suffix(": finished earlier, kept") {
            kept.push(id.to_string());
        } else if let Some((id, _)) = rest.split_once(" (") {
            ran.push(id.to_string());
        }
    }
    (ran, kept)
}

/// The result files a study saved under `out/cells/`, sorted (none when the directory is missing).
pub fn cell_files(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("cells"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
