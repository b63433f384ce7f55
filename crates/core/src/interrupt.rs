//! Ctrl-C and SIGTERM. The first asks every long wait to stop and save what it has ([`STOP`]); the
//! second quits at once — but only after stopping the processes oltplab started and removing the
//! temporary directories it made, which are registered here while they exist ([`guard_process`],
//! [`guard_path`]). Everything else (results, data directories) is left as it is.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Set by the first Ctrl-C / SIGTERM; long-running work polls it, stops, and saves what it has.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Whether the user asked oltplab to stop.
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Set while a quick quit cleans up: the process ends with its exit code, not the work's.
static QUITTING: AtomicBool = AtomicBool::new(false);

/// Called by the main thread before it ends the process: while a quick quit is cleaning up, the
/// work's own end (often an error, because the quit removed what it was using) must not end the
/// process first — this waits for the quit's exit instead.
pub fn wait_if_quitting() {
    while QUITTING.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How long a quick quit waits for the registered processes before it kills them.
const QUIT_GRACE: Duration = Duration::from_secs(10);

enum Item {
    /// A process oltplab started, and the signal that stops it at once but cleanly enough
    /// (PostgreSQL's immediate shutdown removes its shared memory and socket).
    Process { pid: u32, quit_signal: i32 },
    /// A temporary file or directory oltplab made and removes when done (a socket directory,
    /// shared state, a trace being merged).
    Path(PathBuf),
}

static REGISTRY: Mutex<Vec<(u64, Item)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Keeps an item registered while it lives; dropping it means the owner cleaned up by itself.
#[must_use = "the item is unregistered when the guard is dropped"]
#[derive(Debug)]
pub struct Guard(u64);

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(mut items) = REGISTRY.lock() {
            items.retain(|(id, _)| *id != self.0);
        }
    }
}

fn register(item: Item) -> Guard {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut items) = REGISTRY.lock() {
        items.push((id, item));
    }
    Guard(id)
}

/// Registers a process oltplab started (a child of this process) with the signal a quick quit sends.
pub fn guard_process(pid: u32, quit_signal: i32) -> Guard {
    register(Item::Process { pid, quit_signal })
}

/// Registers a temporary file or directory a quick quit removes.
pub fn guard_path(path: impl Into<PathBuf>) -> Guard {
    register(Item::Path(path.into()))
}

/// Installs the Ctrl-C / SIGTERM handler: the first signal sets [`STOP`], the second calls
/// [`quit_now`].
pub fn install_handler() {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            eprintln!("oltplab: quitting at once: stopping the servers it started, without saving");
            quit_now(130);
        }
        eprintln!("oltplab: stopping; press Ctrl-C again to quit at once");
    });
}

/// Stops every registered process (its quit signal, then SIGKILL after [`QUIT_GRACE`]), removes every
/// registered directory, and exits with `code`.
pub fn quit_now(code: i32) -> ! {
    QUITTING.store(true, Ordering::SeqCst);
    // The main thread may hold the lock only for a push or a retain; a poisoned lock still holds
    // the items.
    let items = match REGISTRY.lock() {
        Ok(mut items) => std::mem::take(&mut *items),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    let pids: Vec<u32> = items
        .iter()
        .filter_map(|(_, item)| match item {
            Item::Process { pid, quit_signal } => {
                signal(*pid, *quit_signal);
                Some(*pid)
            }
            Item::Path(_) => None,
        })
        .collect();
    let deadline = Instant::now() + QUIT_GRACE;
    while pids.iter().any(|&pid| !reaped(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pid in &pids {
        if !reaped(pid) {
            signal(pid, libc::SIGKILL);
            while !reaped(pid) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    for (_, item) in &items {
        if let Item::Path(path) = item {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
                let _ = std::fs::remove_dir_all(path);
            } else {
                let _ = std::fs::remove_file(path);
            }
        }
    }
    std::process::exit(code)
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill has no memory-safety preconditions; the pid is a child this process has not
    // reaped, so it cannot have been reused.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// Reaps `pid` if it exited; true once it is gone (or was never our child).
fn reaped(pid: u32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid writes only to `status`.
    let rc = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WNOHANG) };
    rc != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_unregister_on_drop() {
        let count = || REGISTRY.lock().unwrap().len();
        let before = count();
        let a = guard_path("/nonexistent/oltplab-a");
        let b = guard_process(u32::MAX, libc::SIGTERM);
        assert_eq!(count(), before + 2);
        drop(a);
        assert_eq!(count(), before + 1);
        drop(b);
        assert_eq!(count(), before);
    }

    #[test]
    fn reaped_child_and_stranger() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(!reaped(child.id()));
        signal(child.id(), libc::SIGKILL);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !reaped(child.id()) {
            assert!(Instant::now() < deadline, "killed child not reaped");
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.try_wait();
        // pid 1 is not our child: waitpid says ECHILD, which counts as gone.
        assert!(reaped(1));
    }
}
