//! The shared state's lock across processes: a holder that died (a database backend killed while
//! it held the lock) is taken over, so one crash does not hang every other process — and a holder
//! that lives is waited for, never robbed.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use oltplab_devmodel::{now_ns, parse_spec, Emulator, IoKind};

/// The lock is the region's fifth word (state.rs: `H_LOCK = 4`), holding its holder's pid.
const LOCK_OFFSET: u64 = 4 * 8;

struct Region {
    path: PathBuf,
    file: std::fs::File,
}

impl Region {
    fn holder(&self) -> u64 {
        let mut b = [0u8; 8];
        self.file.read_exact_at(&mut b, LOCK_OFFSET).unwrap();
        u64::from_ne_bytes(b)
    }

    fn set_holder(&self, pid: u32) {
        self.file
            .write_all_at(&u64::from(pid).to_ne_bytes(), LOCK_OFFSET)
            .unwrap();
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// An I/O submitted on another thread (it takes the lock); its completion is sent on the channel.
fn submit_in_background(e: &std::sync::Arc<Emulator>) -> mpsc::Receiver<u64> {
    let (tx, rx) = mpsc::channel();
    let e = e.clone();
    std::thread::spawn(move || {
        let done = e.submit(now_ns(), IoKind::Read, 0, 4096);
        let _ = tx.send(done);
    });
    rx
}

fn sleeper() -> Child {
    Command::new("sleep").arg("30").spawn().unwrap()
}

#[test]
fn a_dead_holder_is_taken_over_and_a_live_one_waited_for() {
    let path = PathBuf::from(format!("/dev/shm/oltplab-test-lock-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let spec = parse_spec("sata-ssd-2010").unwrap();
    let e = std::sync::Arc::new(Emulator::create_shared(&spec, 1, &path).unwrap());
    let region = Region {
        file: std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap(),
        path: path.clone(),
    };
    assert_eq!(region.holder(), 0, "nobody holds the lock");

    // A live holder: the I/O waits for it (well past the 50 ms after which the lock checks
    // whether its holder still exists), and goes on once the holder is gone.
    let mut live = sleeper();
    region.set_holder(live.id());
    let waiting = submit_in_background(&e);
    assert!(
        waiting.recv_timeout(Duration::from_millis(500)).is_err(),
        "the I/O took the lock from a live holder"
    );
    live.kill().unwrap();
    live.wait().unwrap(); // reaped: its pid no longer exists
    let started = Instant::now();
    waiting
        .recv_timeout(Duration::from_secs(10))
        .expect("the I/O still waits for a holder that died");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(region.holder(), 0, "released after the I/O");

    // A holder that is already dead when the I/O arrives: taken over within a moment.
    let mut dead = sleeper();
    let pid = dead.id();
    dead.kill().unwrap();
    dead.wait().unwrap();
    region.set_holder(pid);
    let started = Instant::now();
    submit_in_background(&e)
        .recv_timeout(Duration::from_secs(10))
        .expect("a dead holder's lock was never taken over");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(region.holder(), 0);
}
