//! The one skip helper for tests that need something the machine may lack: root, a kernel
//! feature, a package (fio, losetup), a database server or a browser.
//!
//! A skip is never silent. [`skip`] writes `SKIPPED` straight to the process's stderr (the test
//! harness captures `eprintln!` of a passing test, not a direct write) and, when `OLTPLAB_SKIP_LOG`
//! names a file, appends one line to it — `binary::test<TAB>need<TAB>reason` — which
//! `scripts/test.sh` counts, names in its summary and, under CI, fails on unless the test is on its
//! allow-list.
//!
//! Where a skip fails the test instead (a panic with the reason):
//! - a package, server or browser is missing under CI (`CI` set) or `scripts/test.sh`
//!   (`OLTPLAB_REQUIRE_ALL=1`): both install everything the tests need, so missing means broken;
//! - root or a kernel feature is missing under CI when no skip log is kept (not run by
//!   `scripts/test.sh`, whose allow-list is then the judge): CI runs as root.

use std::io::Write;

/// What a test needs that this machine may lack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Root: a loop device, a mount, a machine-wide sysctl, a second user.
    Root,
    /// A kernel feature even root may not have (the loop driver in a container, a sysctl older
    /// kernels lack).
    Kernel,
    /// A program from a Debian package `scripts/test.sh` installs (fio, losetup).
    Package,
    /// A database server `scripts/test.sh` installs (PostgreSQL, MariaDB).
    Server,
    /// A browser `scripts/test.sh` installs (chromium).
    Browser,
}

impl Need {
    /// The word in the skip log and in `scripts/test.sh`'s allow-list.
    pub fn label(self) -> &'static str {
        match self {
            Need::Root => "root",
            Need::Kernel => "kernel",
            Need::Package => "package",
            Need::Server => "server",
            Need::Browser => "browser",
        }
    }

    /// Whether `scripts/test.sh` installs it (so that CI and the script cannot lack it).
    fn installable(self) -> bool {
        matches!(self, Need::Package | Need::Server | Need::Browser)
    }
}

/// What [`skip`] does with a missing `need`, given the environment.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Fail the test with the reason.
    Fail,
    /// Skip it, visibly, and record the skip where one is kept.
    Skip,
}

fn on(v: Option<&str>) -> bool {
    v.is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

fn verdict(need: Need, ci: Option<&str>, require_all: Option<&str>, log: Option<&str>) -> Verdict {
    let kept = log.is_some_and(|l| !l.is_empty());
    let fails = if need.installable() {
        // CI and scripts/test.sh install it.
        on(ci) || on(require_all)
    } else {
        // CI runs as root; with a log, scripts/test.sh's allow-list judges instead.
        on(ci) && !kept
    };
    if fails {
        Verdict::Fail
    } else {
        Verdict::Skip
    }
}

/// This test's name as the skip log and `scripts/test.sh`'s allow-list spell it: the test binary
/// (its file name without Cargo's hash) and the test (the harness names each test's thread
/// after it), e.g. `device::a_block_device_is_read_but_never_written_without_force`.
pub fn test_id() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "unknown".into());
    let binary = match exe.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name.to_string()
        }
        _ => exe,
    };
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("unknown");
    format!("{binary}::{test}")
}

/// Says, visibly, that this test is skipped because of `missing` (e.g. "MariaDB is not
/// installed"), a lack of `need` — and records it for `scripts/test.sh`; or fails the test where
/// that need may not be missing (see the module's comment). The caller returns after it.
pub fn skip(need: Need, missing: &str) {
    let var = |k: &str| std::env::var(k).ok();
    let log = var("OLTPLAB_SKIP_LOG");
    let id = test_id();
    if verdict(
        need,
        var("CI").as_deref(),
        var("OLTPLAB_REQUIRE_ALL").as_deref(),
        log.as_deref(),
    ) == Verdict::Fail
    {
        panic!(
            "{missing} ({} missing), and this run requires it (CI or scripts/test.sh)",
            need.label()
        );
    }
    let reason = missing.replace(['\t', '\n'], " ");
    if let Some(path) = log.filter(|l| !l.is_empty()) {
        record(&path, &format!("{id}\t{}\t{reason}\n", need.label()));
    }
    // Straight to the file descriptor: the harness would swallow an eprintln! of a passing test.
    let _ = std::io::stderr().write_all(format!("\n!!! SKIPPED {id}: {reason}\n\n").as_bytes());
}

/// Appends one line in one write (O_APPEND: test processes running side by side do not interleave
/// their lines). A log that cannot be written fails the test: a skip nobody can count is the
/// thing this module exists to prevent.
fn record(path: &str, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("cannot open the skip log {path}: {e}"));
    f.write_all(line.as_bytes())
        .unwrap_or_else(|e| panic!("cannot write the skip log {path}: {e}"));
}

/// Pins the calling thread to CPU 0, for live tests that make a core busy.
pub fn pin_to_cpu0() {
    // SAFETY: a zeroed cpu_set_t with one bit set, for this thread (pid 0).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    assert_eq!(
        rc,
        0,
        "sched_setaffinity: {}",
        std::io::Error::last_os_error()
    );
}

/// `n` threads spinning on CPU 0 while it lives, so that a thread pinned there queues for the
/// core after it wakes; stopped and joined when dropped.
pub struct BusyCore {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyCore {
    pub fn new(n: usize) -> BusyCore {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    pin_to_cpu0();
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        BusyCore { stop, threads }
    }
}

impl Drop for BusyCore {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `true` if this process runs as root; otherwise skips the test (see [`skip`]) because it needs
/// root to `what` (e.g. "mount a ramfs") and returns `false`.
pub fn root_or_skip(what: &str) -> bool {
    let root = is_root();
    if !root {
        skip(Need::Root, &format!("needs root to {what}"));
    }
    root
}

#[cfg(test)]
mod tests {
    use super::{skip, test_id, verdict, Need, Verdict};

    #[test]
    fn ci_or_the_test_script_require_every_installable_dependency() {
        for need in [Need::Package, Need::Server, Need::Browser] {
            assert_eq!(verdict(need, None, None, None), Verdict::Skip);
            assert_eq!(verdict(need, Some(""), Some("0"), None), Verdict::Skip);
            assert_eq!(verdict(need, Some("false"), None, None), Verdict::Skip);
            assert_eq!(verdict(need, Some("true"), None, None), Verdict::Fail);
            assert_eq!(verdict(need, None, Some("1"), Some("/l")), Verdict::Fail);
            assert_eq!(
                verdict(need, Some("1"), Some("1"), Some("/l")),
                Verdict::Fail
            );
        }
    }

    #[test]
    fn root_and_kernel_skips_are_judged_by_the_test_script_where_it_keeps_a_log() {
        for need in [Need::Root, Need::Kernel] {
            // A plain `cargo test`, and scripts/test.sh as a non-root user: skipped, counted.
            assert_eq!(verdict(need, None, None, None), Verdict::Skip);
            assert_eq!(verdict(need, None, Some("1"), Some("/l")), Verdict::Skip);
            // CI through scripts/test.sh: recorded, and the script's allow-list decides.
            assert_eq!(
                verdict(need, Some("1"), Some("1"), Some("/l")),
                Verdict::Skip
            );
            // CI without the script: nobody would see it, so it fails.
            assert_eq!(verdict(need, Some("1"), None, None), Verdict::Fail);
            assert_eq!(verdict(need, Some("1"), None, Some("")), Verdict::Fail);
        }
    }

    #[test]
    fn the_test_id_names_the_binary_and_the_test() {
        let id = test_id();
        assert!(
            id.ends_with("::testing::tests::the_test_id_names_the_binary_and_the_test"),
            "{id}"
        );
        assert!(id.starts_with("oltplab_core::"), "{id}");
    }

    /// The skip line reaches the file scripts/test.sh counts. In a child process of this test
    /// binary, so that the environment it needs is its own.
    #[test]
    fn a_skip_is_recorded_in_the_log() {
        if let Ok(log) = std::env::var("OLTPLAB_TEST_SKIP_CHILD_LOG") {
            std::env::set_var("OLTPLAB_SKIP_LOG", log);
            skip(Need::Kernel, "no\tloop driver");
            return;
        }
        let log = std::env::temp_dir().join(format!("oltplab-skiplog-{}", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "testing::tests::a_skip_is_recorded_in_the_log",
                "--test-threads=1",
            ])
            .env("OLTPLAB_TEST_SKIP_CHILD_LOG", &log)
            .env_remove("CI")
            .env("OLTPLAB_REQUIRE_ALL", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_file(&log).unwrap();
        assert_eq!(
            text,
            "oltplab_core::testing::tests::a_skip_is_recorded_in_the_log\tkernel\tno loop driver\n"
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("SKIPPED"));
    }
}
