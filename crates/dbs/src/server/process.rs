//! The operating-system side of a managed server: the account it runs as, spawning it so that it
//! cannot outlive oltplab, stopping it, finding its processes, and reading its log.

use std::ffi::CString;
use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use oltplab_core::{interrupt, Error, Result};

/// The unprivileged account a server runs as when oltplab runs as root (PostgreSQL refuses to run
/// as root; mariadbd wants `--user`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl Account {
    /// Looks `name` up in the password database.
    pub fn lookup(name: &str) -> Option<Account> {
        let cname = CString::new(name).ok()?;
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut buf = vec![0 as libc::c_char; 16 * 1024];
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer refers to live, correctly sized memory; getpwnam_r is thread-safe.
        let rc = unsafe {
            libc::getpwnam_r(
                cname.as_ptr(),
                &mut pwd,
                buf.as_mut_ptr(),
                buf.len(),
                &mut result,
            )
        };
        if rc != 0 || result.is_null() {
            return None;
        }
        Some(Account {
            name: name.to_string(),
            uid: pwd.pw_uid,
            gid: pwd.pw_gid,
        })
    }
}

pub fn running_as_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Gives `path` and everything under it to `account` (when oltplab is root).
pub fn chown_tree(path: &Path, account: &Account) -> io::Result<()> {
    std::os::unix::fs::lchown(path, Some(account.uid), Some(account.gid))?;
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() {
        for entry in fs::read_dir(path)? {
            chown_tree(&entry?.path(), account)?;
        }
    }
    Ok(())
}

/// The first ancestor of `path` that `account` cannot enter, if any: a server running as `postgres`
/// cannot use a data directory under root's 0700 home, and says so only obscurely.
pub fn unreachable_ancestor(path: &Path, account: &Account) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut ancestors: Vec<&Path> = path.ancestors().skip(1).collect();
    ancestors.reverse();
    for dir in ancestors {
        let Ok(meta) = fs::metadata(dir) else {
            continue;
        };
        let mode = meta.mode();
        let can_enter = if meta.uid() == account.uid {
            mode & 0o100 != 0
        } else if meta.gid() == account.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !can_enter {
            return Some(dir.to_path_buf());
        }
    }
    None
}

/// A free TCP port on the loopback interface. The port is released before the server binds it, so
/// a race with another program is possible; callers retry on "address in use".
pub fn free_loopback_port() -> Result<u16> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).map_err(|e| {
        Error::usage(format!(
            "cannot find a free loopback port for the server: {e}: check that the loopback interface is up"
        ))
    })?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::failed(format!("cannot read the port the system chose: {e}")))
}

/// A private directory for the server's Unix socket. Socket paths are limited to 107 bytes, so it
/// lives in /tmp rather than under a possibly long data directory.
pub fn private_socket_dir(tag: &str, account: Option<&Account>) -> Result<PathBuf> {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(format!("/tmp/oltplab-{tag}-{}-{n}", std::process::id()));
    if dir.exists() {
        // Left over from an earlier oltplab process that had the same pid: the name is ours.
        let _ = fs::remove_dir_all(&dir);
    }
    let fail = |e: io::Error| {
        Error::usage(format!(
            "cannot create the server's socket directory {}: {e}: make /tmp writable",
            dir.display()
        ))
    };
    fs::create_dir(&dir).map_err(fail)?;
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).map_err(fail)?;
    if let Some(account) = account {
        chown_tree(&dir, account).map_err(fail)?;
    }
    Ok(dir)
}

/// Options for spawning a long-lived server process.
pub struct SpawnOptions {
    pub account: Option<Account>,
    /// Sent to the server by the kernel if oltplab dies without stopping it (a clean shutdown request).
    pub death_signal: i32,
    /// Sent when the user quits at once (a second Ctrl-C): stop now, leave nothing behind.
    pub quit_signal: i32,
}

/// A server process tied to oltplab's life.
///
/// The kernel sends `death_signal` to the server when the thread that forked it ends
/// (`PR_SET_PDEATHSIG`). That thread is a dedicated "anchor" thread living exactly as long as this
/// value, so the server stops whether oltplab returns, panics, calls `exit` or is killed — and a
/// caller that starts a server from a short-lived thread does not lose it early.
pub struct ServerProcess {
    child: Child,
    anchor_quit: Option<mpsc::Sender<()>>,
    anchor: Option<JoinHandle<()>>,
    /// Registered for a quick quit until the server is stopped (dropped after `Drop::drop`).
    _quit: interrupt::Guard,
}

impl ServerProcess {
    pub fn spawn(mut cmd: Command, opts: &SpawnOptions) -> io::Result<ServerProcess> {
        prepare(&mut cmd, opts.account.as_ref());
        die_with_parent(&mut cmd, opts.death_signal);
        // SAFETY: runs in the forked child before exec; getrlimit/setrlimit are async-signal-safe
        // and nothing is allocated.
        unsafe {
            cmd.pre_exec(|| {
                raise_nofile_limit();
                Ok(())
            });
        }
        let (result_tx, result_rx) = mpsc::channel();
        let (quit_tx, quit_rx) = mpsc::channel::<()>();
        let anchor = thread::Builder::new()
            .name("oltplab-server-anchor".into())
            .spawn(move || {
                let spawned = cmd.spawn();
                let ok = spawned.is_ok();
                let _ = result_tx.send(spawned);
                if ok {
                    // Returns when told to, or when the sender is dropped.
                    let _ = quit_rx.recv();
                }
            })?;
        let child = result_rx
            .recv()
            .map_err(|_| io::Error::other("the server's anchor thread ended early"))??;
        let quit = interrupt::guard_process(child.id(), opts.quit_signal);
        Ok(ServerProcess {
            child,
            anchor_quit: Some(quit_tx),
            anchor: Some(anchor),
            _quit: quit,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(description)` if the server has exited.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(format!("cannot be waited for ({e})")),
        }
    }

    /// A power cut: every process of the server (this child and its descendants, nothing else)
    /// is stopped first, so that none is left mid-write while the others die, then killed with
    /// SIGKILL and the child reaped. Returns the pids it killed.
    pub fn kill_tree(&mut self) -> Vec<u32> {
        // Stopped processes fork no more; list again until no new one appeared.
        let mut pids: Vec<u32> = Vec::new();
        loop {
            let now = process_tree(self.child.id());
            let new: Vec<u32> = now.into_iter().filter(|p| !pids.contains(p)).collect();
            if new.is_empty() {
                break;
            }
            for &pid in &new {
                send_signal(pid, libc::SIGSTOP);
            }
            pids.extend(new);
        }
        for &pid in &pids {
            send_signal(pid, libc::SIGKILL);
        }
        let _ = self.child.wait();
        // The forked children are reparented when their parent dies; wait until they are gone.
        let deadline = Instant::now() + Duration::from_secs(10);
        while pids.iter().any(|&p| alive(p)) && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        self.stop(libc::SIGKILL, Duration::ZERO);
        pids
    }

    /// Asks the server to stop with `signal`, escalates to `SIGKILL` after `grace`, and reaps it.
    /// Returns whether it stopped by itself within `grace`.
    pub fn stop(&mut self, signal: i32, grace: Duration) -> bool {
        let mut clean = true;
        if self.exited().is_none() {
            send_signal(self.child.id(), signal);
            clean = wait_child(&mut self.child, grace);
            if !clean {
                send_signal(self.child.id(), libc::SIGKILL);
                let _ = self.child.wait();
            }
        }
        if let Some(quit) = self.anchor_quit.take() {
            let _ = quit.send(());
        }
        if let Some(anchor) = self.anchor.take() {
            let _ = anchor.join();
        }
        clean
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Normally stopped already by the server's own stop(); this is the last line of defence.
        self.stop(libc::SIGKILL, Duration::from_secs(5));
    }
}

/// Settings every server child gets: its own process group (so a Ctrl-C in the terminal reaches
/// oltplab, which then stops the server cleanly, rather than the server directly) and the account.
pub fn prepare(cmd: &mut Command, account: Option<&Account>) {
    cmd.process_group(0);
    if let Some(a) = account {
        cmd.uid(a.uid).gid(a.gid);
        cmd.env("USER", &a.name).env("LOGNAME", &a.name);
    }
}

/// Tells the kernel to send `signal` to the child when the thread that starts it ends (oltplab
/// killed, or quitting at once), for short-lived helpers such as initdb that run in the calling
/// thread.
pub fn die_with_parent(cmd: &mut Command, signal: i32) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec and makes only async-signal-safe
    // system calls.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // oltplab died between fork and prctl: the signal will never come, so give up.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Servers open a file per table and per connection; lift the soft limit to the hard one.
fn raise_nofile_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain system calls on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

fn send_signal(pid: u32, signal: i32) {
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

fn wait_child(child: &mut Child, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if Instant::now() >= deadline => return false,
            Ok(None) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// True if a process with this pid exists and has not exited (a zombie waiting to be reaped by
/// its parent counts as gone).
pub fn alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Stops a server left running by an earlier oltplab process (one that was killed before it could
/// stop it), found through the server's own pid file, before its data directory is reused or
/// replaced. Only a process whose command name matches one of `names` and that serves this very
/// cluster (its working directory or command line is the pid file's directory) is touched: after a
/// crash or a reboot the pid can belong to the machine's own server, or to anything.
pub fn stop_stale(pid_file: &Path, names: &[&str], signal: i32) -> Result<()> {
    let Ok(text) = fs::read_to_string(pid_file) else {
        return Ok(());
    };
    let Some(pid) = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<u32>().ok())
    else {
        return Ok(());
    };
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if !alive(pid) || !names.iter().any(|n| comm.trim() == *n) {
        return Ok(());
    }
    let Some(cluster) = pid_file.parent() else {
        return Ok(());
    };
    if !serves(pid, cluster) {
        return Ok(());
    }
    send_signal(pid, signal);
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(pid) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(50));
    }
    if alive(pid) {
        send_signal(pid, libc::SIGKILL);
        thread::sleep(Duration::from_millis(200));
    }
    if alive(pid) {
        return Err(Error::failed(format!(
            "a server left running by an earlier oltplab run (pid {pid}, from {}) does not stop: stop it with kill -9 {pid}",
            pid_file.display()
        )));
    }
    Ok(())
}

/// Whether process `pid` serves the cluster in `dir`: its working directory is `dir` (PostgreSQL
/// and MariaDB change into their data directory), or its command line names `dir`. A process this
/// user may not inspect is not ours.
fn serves(pid: u32, dir: &Path) -> bool {
    let Ok(dir) = fs::canonicalize(dir) else {
        return false;
    };
    if fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == dir) {
        return true;
    }
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let dir = dir.as_os_str().as_encoded_bytes();
    cmdline.split(|&b| b == 0).any(|arg| {
        // `-D DIR`, `--datadir=DIR`: the argument ends with the directory.
        arg.ends_with(dir)
            && (arg.len() == dir.len() || arg[..arg.len() - dir.len()].ends_with(b"="))
    })
}

/// `root` and every descendant of it that is alive now.
pub fn process_tree(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(entries) = fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(ppid) = read_ppid(pid) {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    tree
}

fn read_ppid(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces; fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The last `n` lines of a log file, for error messages.
pub fn log_tail(path: &Path, n: usize) -> String {
    let Ok(mut file) = fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(16 * 1024);
    let mut text = String::new();
    if file.seek(SeekFrom::Start(start)).is_ok() {
        let mut bytes = Vec::new();
        let _ = file.read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The first line reporting an error (MariaDB's `[ERROR]`, PostgreSQL's `FATAL:`) since the
/// server's last start in its log (which earlier starts appended to): usually the cause, where
/// the log's end is often a stack trace. Only the log's last 64 KiB are read.
pub fn first_error_line(path: &Path) -> Option<String> {
    let mut file = fs::File::open(path).ok()?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    file.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)))
        .ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let started = lines
        .iter()
        .rposition(|l| l.contains("Starting MariaDB") || l.contains("starting PostgreSQL"))
        .unwrap_or(0);
    lines[started..]
        .iter()
        .find(|l| l.contains("[ERROR]") || l.contains("FATAL:"))
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_tree_contains_children() {
        let mut child = Command::new("sleep").arg("5").spawn().unwrap();
        let me = std::process::id();
        let tree = process_tree(me);
        assert_eq!(tree[0], me);
        assert!(tree.contains(&child.id()), "{tree:?}");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn anchored_process_stops_when_asked_and_reports_it() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let mut p = ServerProcess::spawn(
            cmd,
            &SpawnOptions {
                account: None,
                death_signal: libc::SIGTERM,
                quit_signal: libc::SIGKILL,
            },
        )
        .unwrap();
        let pid = p.pid();
        assert!(alive(pid));
        assert!(p.exited().is_none());
        assert!(p.stop(libc::SIGTERM, Duration::from_secs(5)));
        assert!(!alive(pid));
    }

    /// A stale pid file that names a live process of the right name which serves another cluster
    /// (after a reboot, the machine's own server): it is left alone. One that serves this
    /// cluster is stopped.
    #[test]
    fn a_stale_pid_file_signals_only_the_server_of_this_cluster() {
        let base = std::env::temp_dir().join(format!("oltplab-stale-{}", std::process::id()));
        let (ours, theirs) = (base.join("ours"), base.join("theirs"));
        fs::create_dir_all(&ours).unwrap();
        fs::create_dir_all(&theirs).unwrap();
        // A `sleep` working in another directory, and one working in ours.
        let spawn_in = |dir: &Path| {
            Command::new("sleep")
                .arg("30")
                .current_dir(dir)
                .spawn()
                .unwrap()
        };
        let mut foreign = spawn_in(&theirs);
        let pid_file = ours.join("postmaster.pid");
        fs::write(&pid_file, format!("{}\n", foreign.id())).unwrap();
        stop_stale(&pid_file, &["sleep"], libc::SIGTERM).unwrap();
        assert!(
            alive(foreign.id()),
            "a process of another cluster was signalled"
        );
        let mut stale = spawn_in(&ours);
        fs::write(&pid_file, format!("{}\n", stale.id())).unwrap();
        stop_stale(&pid_file, &["sleep"], libc::SIGTERM).unwrap();
        let _ = stale.wait();
        assert!(
            !alive(stale.id()),
            "the stale server of this cluster was not stopped"
        );
        foreign.kill().unwrap();
        foreign.wait().unwrap();
        let _ = fs::remove_dir_all(&base);
    }

    #[test]
    fn log_tail_keeps_the_last_lines() {
        let path = std::env::temp_dir().join(format!("oltplab-logtail-{}", std::process::id()));
        fs::write(&path, "a\nb\n\nc\nd\n").unwrap();
        assert_eq!(log_tail(&path, 2), "c\nd");
        assert_eq!(log_tail(&path.with_extension("missing"), 2), "");
        assert_eq!(first_error_line(&path), None);
        // As a Galera node's provider failed under `nice -n 19` (2026-11-26), before its backtrace.
        fs::write(
            &path,
            "0 [ERROR] an earlier start's\n0 [Note] Starting MariaDB 10.11.19 as process 1\n0 [Note] WSREP: Passing config\n0 [ERROR] WSREP: failed to open gcomm backend connection: 1: Failed to set thread schedparams other:0\n0 [ERROR] Aborting\n/usr/sbin/mariadbd(handle_fatal_signal+0x269)\n",
        )
        .unwrap();
        assert_eq!(
            first_error_line(&path).as_deref(),
            Some("0 [ERROR] WSREP: failed to open gcomm backend connection: 1: Failed to set thread schedparams other:0")
        );
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn root_accounts_are_found() {
        let root = Account::lookup("root").unwrap();
        assert_eq!(root.uid, 0);
        assert!(Account::lookup("no-such-user-oltplab").is_none());
    }
}
