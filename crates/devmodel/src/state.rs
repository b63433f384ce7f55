//! The emulator's mutable state: one fixed-size array of 64-bit words, either in this process's heap
//! or in a shared-memory file that every process of an emulated command maps. The layout depends
//! only on the spec, so a process that opens the file rebuilds the same model over the same words.
//!
//! The model's words change only under a tiny spinlock in the region (a few hundred nanoseconds per
//! I/O); the fidelity counters outside it are plain atomic adds.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub const MAGIC: u64 = u64::from_le_bytes(*b"OLTPEMU1");
pub const VERSION: u64 = 6;

// Header words.
pub const H_MAGIC: usize = 0;
pub const H_VERSION: usize = 1;
pub const H_WORDS: usize = 2;
pub const H_SEED: usize = 3;
pub const H_LOCK: usize = 4;
/// f64 bits: the share of each device's capacity that its seek curve's full stroke stands for.
pub const H_USAGE: usize = 5;
pub const H_SPEC_LEN: usize = 6;
pub const H_SPEC: usize = 8;
pub const SPEC_BYTES_MAX: usize = 2048;
const SPEC_WORDS: usize = SPEC_BYTES_MAX / 8;
// Fidelity counters.
pub const F_IOS: usize = H_SPEC + SPEC_WORDS;
pub const F_MODELLED_SUM: usize = F_IOS + 1;
pub const F_REALISED_SUM: usize = F_IOS + 2;
pub const F_WAKES: usize = F_IOS + 3;
pub const F_WAKE_LATE_SUM: usize = F_IOS + 4;
pub const F_WAKE_LATE_MAX: usize = F_IOS + 5;
/// Nanoseconds spent spinning to a deadline: CPU the emulator, not the database, used.
pub const F_SPIN_SUM: usize = F_IOS + 6;
/// Σ |realised − modelled| over the I/Os, in nanoseconds.
pub const F_ABS_ERROR_SUM: usize = F_IOS + 7;
/// Submissions that reached the model stamped earlier than one it had already taken, and by how
/// much in all (each is taken at the later arrival).
pub const F_INVERSIONS: usize = F_IOS + 8;
pub const F_INVERSION_SUM: usize = F_IOS + 9;
/// I/Os that ended later, or earlier, than the model by more than the tolerance.
pub const F_LATE: usize = F_IOS + 10;
pub const F_EARLY: usize = F_IOS + 11;
/// When the counters were last reset (CLOCK_MONOTONIC ns): the start of the window they cover.
pub const F_RESET_AT: usize = F_IOS + 12;
/// The spin margin of the process that waited last (each process adapts its own).
pub const F_MARGIN: usize = F_IOS + 13;
/// Σ over the I/Os of the part of their lateness their thread spent queued for a free core
/// (ns), and how many I/Os were late only by it.
pub const F_CPU_QUEUE_SUM: usize = F_IOS + 14;
pub const F_CPU_QUEUE_LATE: usize = F_IOS + 15;
/// I/Os late by more than the tolerance once the CPU queue is taken out: the emulator's own.
pub const F_EMULATED_LATE: usize = F_IOS + 16;
pub const F_EMULATED_SUM: usize = F_IOS + 17;
pub const F_HIST_MODELLED: usize = F_IOS + 18;
pub const HIST_BUCKETS: usize = 2048;
pub const F_HIST_REALISED: usize = F_HIST_MODELLED + HIST_BUCKETS;
/// Realised latencies less their CPU queue: what the emulated device itself gave.
pub const F_HIST_EMULATED: usize = F_HIST_REALISED + HIST_BUCKETS;
/// Realised latencies by the I/O's kind (read, write, flush: [`kind_hist`]), to set beside a real
/// device's per-operation latencies.
pub const F_HIST_REALISED_BY_KIND: usize = F_HIST_EMULATED + HIST_BUCKETS;
/// First word of the model's own state.
pub const MODEL_BASE: usize = F_HIST_REALISED_BY_KIND + 3 * HIST_BUCKETS;

/// The first word of `kind`'s realised-latency histogram.
pub fn kind_hist(kind: crate::IoKind) -> usize {
    F_HIST_REALISED_BY_KIND + kind as usize * HIST_BUCKETS
}

/// The words, wherever they live.
pub struct Region {
    ptr: *const AtomicU64,
    words: usize,
    backing: Backing,
}

enum Backing {
    Heap(#[allow(dead_code)] Box<[AtomicU64]>),
    Mapped { len_bytes: usize },
}

// SAFETY: the region is only accessed through atomics; the mapping lives as long as the Region.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

impl Region {
    pub fn heap(words: usize) -> Region {
        let mut v: Vec<AtomicU64> = Vec::with_capacity(words);
        v.resize_with(words, || AtomicU64::new(0));
        let b = v.into_boxed_slice();
        Region {
            ptr: b.as_ptr(),
            words,
            backing: Backing::Heap(b),
        }
    }

    /// Creates `path` (which must not exist) with room for `words` and maps it shared.
    pub fn create_file(path: &Path, words: usize) -> io::Result<Region> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?;
        // Only its owner may attach: anyone who can write it can stall or crash every process
        // on the device (a server of another account gets it handed over by the session).
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
        let len = (words * 8) as u64;
        file.set_len(len)?;
        Self::map(&file, words)
    }

    /// Maps an existing region file; the caller checks the header.
    pub fn open_file(path: &Path) -> io::Result<Region> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let len = file.metadata()?.len();
        if len < (MODEL_BASE * 8) as u64 || len % 8 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "too short to be an emulated device's state",
            ));
        }
        Self::map(&file, (len / 8) as usize)
    }

    fn map(file: &File, words: usize) -> io::Result<Region> {
        let len_bytes = words * 8;
        // SAFETY: a fresh shared mapping of a file we hold open; checked for MAP_FAILED below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len_bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Region {
            ptr: ptr as *const AtomicU64,
            words,
            backing: Backing::Mapped { len_bytes },
        })
    }

    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: ptr points to `words` initialised atomics for the Region's life.
        unsafe { std::slice::from_raw_parts(self.ptr, self.words) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if let Backing::Mapped { len_bytes } = self.backing {
            // SAFETY: unmapping exactly what map() mapped; nothing borrows the words past Drop.
            unsafe {
                libc::munmap(self.ptr as *mut libc::c_void, len_bytes);
            }
        }
    }
}

/// Model state access; only used while holding the region's lock, so relaxed order suffices
/// (the lock's acquire/release orders it).
#[derive(Clone, Copy)]
pub struct St<'a> {
    w: &'a [AtomicU64],
}

impl<'a> St<'a> {
    pub fn new(w: &'a [AtomicU64]) -> Self {
        Self { w }
    }
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        self.w[i].load(Ordering::Relaxed)
    }
    #[inline]
    pub fn set(&self, i: usize, v: u64) {
        self.w[i].store(v, Ordering::Relaxed)
    }
}

/// Takes the region's spinlock. A holder that died (a killed database backend) is detected by its
/// pid and the lock is taken over, so one crash does not hang every other process.
pub fn lock(words: &[AtomicU64]) -> LockGuard<'_> {
    let me = pid();
    let word = &words[H_LOCK];
    let mut spins = 0u32;
    let mut since: Option<Instant> = None;
    loop {
        let cur = word.load(Ordering::Relaxed);
        if cur == 0
            && word
                .compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return LockGuard { word };
        }
        spins += 1;
        if spins < 200 {
            std::hint::spin_loop();
            continue;
        }
        std::thread::yield_now();
        let started = *since.get_or_insert_with(Instant::now);
        if cur != 0 && cur != me && started.elapsed() > Duration::from_millis(50) {
            // SAFETY: kill with signal 0 only checks whether the process exists.
            let gone = unsafe { libc::kill(cur as libc::pid_t, 0) } != 0
                && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            if gone
                && word
                    .compare_exchange(cur, me, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return LockGuard { word };
            }
            since = Some(Instant::now());
        }
    }
}

/// This process's id without a system call per I/O; a forked child (a database backend) resets it.
fn pid() -> u64 {
    static PID: AtomicU64 = AtomicU64::new(0);
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    extern "C" fn forget_in_child() {
        PID.store(0, Ordering::Relaxed);
    }
    REGISTERED.call_once(|| {
        // SAFETY: registers a handler that only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::pthread_atfork(None, None, Some(forget_in_child));
        }
    });
    let mut p = PID.load(Ordering::Relaxed);
    if p == 0 {
        p = std::process::id() as u64;
        PID.store(p, Ordering::Relaxed);
    }
    p
}

pub struct LockGuard<'a> {
    word: &'a AtomicU64,
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        self.word.store(0, Ordering::Release);
    }
}

/// Log-linear bucket of a nanosecond value: 32 sub-buckets per power of two (≤ 3 % error).
pub fn bucket(v: u64) -> usize {
    if v < 32 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as usize; // ≥ 5
    let sub = ((v >> (e - 5)) & 31) as usize;
    ((e - 4) * 32 + sub).min(HIST_BUCKETS - 1)
}

/// The middle of a bucket's value range.
pub fn bucket_value(b: usize) -> u64 {
    if b < 32 {
        return b as u64;
    }
    let e = b / 32 + 4;
    let sub = (b % 32) as u64;
    let lo = (32 + sub) << (e - 5);
    lo + (1u64 << (e - 5)) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_close() {
        let mut last = 0;
        for v in [0u64, 1, 31, 32, 33, 100, 1000, 47_000, 7_000_000, 1 << 40] {
            let b = bucket(v);
            assert!(b >= last);
            last = b;
            let mid = bucket_value(b) as f64;
            assert!(
                (mid - v as f64).abs() <= v as f64 * 0.03 + 1.0,
                "{v} → {mid}"
            );
        }
    }
}
