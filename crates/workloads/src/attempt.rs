//! One transaction run to its end, as every driver runs it: tagged for the trace, retried after
//! retryable errors (bounded, with a random pause), timed, its thread's CPU measured less the
//! device emulator's spin, and its span kept for tying a server's trace to it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use oltplab_metrics::cpu::CpuTime;

use crate::random::Rng;
use crate::sql::{CommitTime, Conn, DbResult, ErrorKind};

/// When one measured transaction ran, on which server process or thread: a server's I/O trace
/// records the caller's thread id, so its records inside a span belong to that transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxSpan {
    /// The server's thread (MariaDB) or process (PostgreSQL) serving the terminal's connection.
    pub backend_tid: u32,
    /// CLOCK_MONOTONIC ([`oltplab_trace::monotonic_ns`]), retries included.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The transaction type's trace tag (the workload's `TxType::tag`).
    pub tag: u8,
}

/// A transaction's end: its result, the retries it took, and what it cost.
pub struct Attempt<O> {
    pub result: DbResult<O>,
    pub retries: Vec<ErrorKind>,
    pub latency_ns: u64,
    /// The thread's CPU time in it, less the emulator's spin in this thread.
    pub cpu_ns: u64,
    pub cpu: CpuTime,
    /// Time spent waiting for the database-wide writer lock (SQLite).
    pub lock_wait_ns: u64,
    /// The successful try's COMMIT round trip, when it wrote.
    pub commit: Option<CommitTime>,
    span: Option<(u64, u64, u8)>,
}

impl<O> Attempt<O> {
    /// An attempt that ran nothing in the database (a request queued for later): `result` after
    /// `latency_ns`.
    pub fn done(result: DbResult<O>, latency_ns: u64) -> Attempt<O> {
        Attempt {
            result,
            retries: Vec::new(),
            latency_ns,
            cpu_ns: 0,
            cpu: CpuTime::default(),
            lock_wait_ns: 0,
            commit: None,
            span: None,
        }
    }

    /// Its span on the server thread `tid`, if both are known.
    pub fn tx_span(&self, tid: Option<u32>) -> Option<TxSpan> {
        let (start_ns, end_ns, tag) = self.span?;
        Some(TxSpan {
            backend_tid: tid?,
            start_ns,
            end_ns,
            tag,
        })
    }
}

/// How a driver retries.
#[derive(Clone, Copy)]
pub struct Retry<'a> {
    /// Attempts after the first for a retryable error.
    pub max: u32,
    /// No more retries once set (the run ended).
    pub give_up: &'a AtomicBool,
}

/// Runs `tx` (which begins and ends its transaction) on `conn` until it succeeds, fails for good,
/// or runs out of retries; `tag` marks its I/O in the trace. Without `with_cpu` its CPU is not
/// measured (two system calls: a cost for transactions of a few microseconds).
pub fn attempt<O>(
    conn: &mut dyn Conn,
    tag: u8,
    retry: Retry,
    rng: &mut Rng,
    (with_span, with_cpu): (bool, bool),
    mut tx: impl FnMut(&mut dyn Conn) -> DbResult<O>,
) -> Attempt<O> {
    let cpu_before = with_cpu.then(CpuTime::thread);
    let spin_before = oltplab_dbs::vfs::thread_spin_ns();
    let lock_wait_before = conn.writer_lock_wait_ns();
    let started = Instant::now();
    let started_ns = with_span.then(oltplab_trace::monotonic_ns);
    oltplab_dbs::vfs::set_thread_tag(tag);
    let mut retries: Vec<ErrorKind> = Vec::new();
    let mut commit = None;
    let result = loop {
        // A time left by work outside this transaction is not its commit's.
        conn.take_commit_time();
        match tx(conn) {
            Ok(o) => {
                commit = conn.take_commit_time();
                break Ok(o);
            }
            Err(e) => {
                let _ = conn.rollback();
                if e.kind.retryable()
                    && (retries.len() as u32) < retry.max
                    && !retry.give_up.load(Ordering::Relaxed)
                {
                    retries.push(e.kind);
                    // A random pause, doubling in range with each attempt ("full jitter"),
                    // lets the winner of the conflict finish and the losers spread out.
                    std::thread::sleep(retry_pause(retries.len() as u32, rng));
                    continue;
                }
                break Err(e);
            }
        }
    };
    oltplab_dbs::vfs::set_thread_tag(0);
    let cpu = cpu_before.map_or_else(CpuTime::default, |b| CpuTime::thread().since(&b));
    let spin_ns = oltplab_dbs::vfs::thread_spin_ns() - spin_before;
    Attempt {
        result,
        retries,
        latency_ns: started.elapsed().as_nanos() as u64,
        cpu_ns: ((cpu.total_s() * 1e9) as u64).saturating_sub(spin_ns),
        cpu,
        lock_wait_ns: conn.writer_lock_wait_ns() - lock_wait_before,
        commit,
        span: started_ns.map(|s| (s, oltplab_trace::monotonic_ns(), tag)),
    }
}

/// The pause before retry `n` (1-based): uniform in 0 … 200 µs × 2^(n-1), at most 25.6 ms.
pub fn retry_pause(n: u32, rng: &mut Rng) -> Duration {
    let range_us = 200u64 << (n.clamp(1, 8) - 1);
    Duration::from_micros(rng.uniform(0, range_us as i64) as u64)
}
