//! Runs a closed-loop workload against a model in virtual time — no waiting, no real I/O — to get
//! what the model itself predicts: IOPS and mean latency at a queue depth. Calibration tests and the
//! "model bound" of emulated benchmarks use it; it is exact and deterministic for a seed.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use oltplab_core::Result;
use serde::Serialize;

use crate::{Emulator, IoKind, Spec};

/// A closed loop: `queue_depth` I/Os always in flight, each new one issued when one completes.
#[derive(Clone, Copy, Debug)]
pub struct ClosedLoop {
    pub block_size_bytes: u64,
    /// Share of reads, 0–100.
    pub read_pct: u8,
    /// Share of random offsets, 0–100; the others continue from the previous I/O.
    pub random_pct: u8,
    pub queue_depth: u32,
    /// I/Os to complete (the first tenth warms up and is not counted).
    pub ios: u64,
    /// Offsets fall in [0, region_bytes).
    pub region_bytes: u64,
    /// The span that stands for the whole stroke, as a benchmark file stands for the whole disk:
    /// `region_bytes` (the default) for a benchmark over the whole drive, more for a short-stroked
    /// region, such as a database that fills a small part of a large disk.
    pub stroke_bytes: u64,
    pub seed: u64,
    /// Virtual time of the first submission; `now_ns()` when running on a snapshot of a live device.
    pub start_ns: u64,
    /// Flush after every N writes, as `device --fsync N` does (0: never). The flush waits for the
    /// writes in flight, and nothing is issued until it completes.
    pub flush_every: u32,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SimResult {
    pub iops: f64,
    pub lat_ns_mean: f64,
}

impl ClosedLoop {
    pub fn random_reads(block_size_bytes: u64, queue_depth: u32) -> Self {
        ClosedLoop {
            block_size_bytes,
            read_pct: 100,
            random_pct: 100,
            queue_depth,
            ios: 20_000,
            region_bytes: 1 << 30,
            stroke_bytes: 1 << 30,
            seed: 1,
            start_ns: 1_000_000_000,
            flush_every: 0,
        }
    }

    /// A database's commit, one at a time: append `block_size_bytes` to a log and flush it, then
    /// the next — the loop of pg_test_fsync and of a single-client log. Its IOPS are commits/s.
    pub fn commits(block_size_bytes: u64) -> Self {
        ClosedLoop {
            read_pct: 0,
            random_pct: 0,
            flush_every: 1,
            ios: 2_000,
            ..ClosedLoop::random_reads(block_size_bytes, 1)
        }
    }

    /// Runs the loop on a fresh in-process emulator of `spec`.
    pub fn run(&self, spec: &Spec) -> Result<SimResult> {
        let e = Emulator::new(spec, self.seed)?;
        e.set_span_bytes(self.stroke_bytes.max(self.region_bytes));
        Ok(self.run_on(&e))
    }

    pub fn run_on(&self, e: &Emulator) -> SimResult {
        let blocks = (self.region_bytes / self.block_size_bytes).max(1);
        let mut x = self.seed | 1;
        let mut rand = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut next_block = 0u64;
        let mut pending: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
        // With flush_every: writes since the last flush; when it is due, nothing new is issued
        // until the writes in flight are done, then the flush, then the queue is filled again.
        let mut unflushed = 0u32;
        let flush_every = self.flush_every;
        // Issues one I/O at `t`; true when it makes a flush due.
        let mut submit =
            |t: u64, pending: &mut BinaryHeap<Reverse<(u64, u64)>>, unflushed: &mut u32| {
                let read = rand() % 100 < self.read_pct as u64;
                let random = rand() % 100 < self.random_pct as u64;
                let block = if random {
                    rand() % blocks
                } else {
                    next_block % blocks
                };
                next_block = block + 1;
                let kind = if read { IoKind::Read } else { IoKind::Write };
                let done = e.submit(
                    t,
                    kind,
                    block * self.block_size_bytes,
                    self.block_size_bytes,
                );
                pending.push(Reverse((done, t)));
                if !read && flush_every > 0 {
                    *unflushed += 1;
                }
                flush_every > 0 && *unflushed >= flush_every
            };
        let mut flush_due = false;
        for _ in 0..self.queue_depth {
            if !flush_due {
                flush_due = submit(self.start_ns, &mut pending, &mut unflushed);
            }
        }
        let warm = self.ios / 10;
        let (mut counted, mut lat_sum, mut t_first, mut t_last) = (0u64, 0u128, 0u64, 0u64);
        for i in 0..self.ios {
            let Reverse((done, submitted)) = pending.pop().expect("an I/O in flight");
            if i == warm {
                t_first = done;
            } else if i > warm {
                counted += 1;
                lat_sum += (done - submitted) as u128;
                t_last = done;
            }
            if !flush_due {
                flush_due = submit(done, &mut pending, &mut unflushed);
            } else if pending.is_empty() {
                let flushed = e.submit(done, IoKind::Flush, 0, 0);
                unflushed = 0;
                flush_due = false;
                for _ in 0..self.queue_depth {
                    if !flush_due {
                        flush_due = submit(flushed, &mut pending, &mut unflushed);
                    }
                }
            }
        }
        let span_ns = t_last.saturating_sub(t_first).max(1);
        SimResult {
            iops: counted as f64 / (span_ns as f64 / 1e9),
            lat_ns_mean: if counted == 0 {
                0.0
            } else {
                lat_sum as f64 / counted as f64
            },
        }
    }
}
