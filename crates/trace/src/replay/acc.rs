//! What one replay worker measured; workers' accumulators are merged at the end.

use oltplab_metrics::LatencyHistogram;

use super::plan::PlanOp;
use crate::stat::OpCounts;
use crate::Op;

#[derive(Clone, Copy, Debug, Default)]
pub struct SecondAcc {
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub latency_sum_ns: u64,
}

#[derive(Clone, Default)]
pub struct Acc {
    pub counts: OpCounts,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub read_latency: LatencyHistogram,
    pub write_latency: LatencyHistogram,
    pub sync_latency: LatencyHistogram,
    /// Reads or writes that moved fewer bytes than asked (reads past a truncated end).
    pub short_ios: u64,
    /// Trims, fallocates or sync_file_ranges the file system refused as unsupported.
    pub unsupported_ops: u64,
    /// Direct replays: I/Os whose offset or length O_DIRECT cannot take, done buffered instead.
    pub unaligned_ops: u64,
    /// Completion of the last operation, since the replay's start.
    pub last_completion_ns: u64,
    /// The latencies of every operation summed: over the elapsed time, the mean number in flight
    /// (Little's law).
    pub in_flight_ns: u64,
    pub seconds: Vec<SecondAcc>,
}

impl Acc {
    /// Accounts one finished operation; `moved` is the byte count a read or write returned.
    #[inline]
    pub fn complete(&mut self, op: &PlanOp, now_ns: u64, latency_ns: u64, moved: u64) {
        self.counts.add(op.op);
        self.last_completion_ns = self.last_completion_ns.max(now_ns);
        self.in_flight_ns = self.in_flight_ns.saturating_add(latency_ns);
        let s = (now_ns / 1_000_000_000) as usize;
        if self.seconds.len() <= s {
            self.seconds.resize(s + 1, SecondAcc::default());
        }
        let sec = &mut self.seconds[s];
        match op.op {
            Op::Read => {
                self.read_latency.record(latency_ns);
                self.read_bytes += moved;
                sec.reads += 1;
                sec.read_bytes += moved;
                sec.latency_sum_ns += latency_ns;
            }
            Op::Write => {
                self.write_latency.record(latency_ns);
                self.written_bytes += moved;
                sec.writes += 1;
                sec.written_bytes += moved;
                sec.latency_sum_ns += latency_ns;
            }
            o if o.is_sync() => {
                self.sync_latency.record(latency_ns);
                sec.syncs += 1;
            }
            _ => {}
        }
        if op.op.is_data() && moved < op.len as u64 {
            self.short_ios += 1;
        }
    }

    /// Operations in flight on average over `elapsed_ns`: the queue the device was given.
    pub fn mean_in_flight(&self, elapsed_ns: u64) -> f64 {
        if elapsed_ns == 0 {
            0.0
        } else {
            self.in_flight_ns as f64 / elapsed_ns as f64
        }
    }

    pub fn merge(&mut self, other: &Acc) {
        self.counts.add_all(&other.counts);
        self.read_bytes += other.read_bytes;
        self.written_bytes += other.written_bytes;
        self.read_latency.add(&other.read_latency);
        self.write_latency.add(&other.write_latency);
        self.sync_latency.add(&other.sync_latency);
        self.short_ios += other.short_ios;
        self.unsupported_ops += other.unsupported_ops;
        self.unaligned_ops += other.unaligned_ops;
        self.last_completion_ns = self.last_completion_ns.max(other.last_completion_ns);
        self.in_flight_ns = self.in_flight_ns.saturating_add(other.in_flight_ns);
        if self.seconds.len() < other.seconds.len() {
            self.seconds
                .resize(other.seconds.len(), SecondAcc::default());
        }
        for (a, b) in self.seconds.iter_mut().zip(&other.seconds) {
            a.reads += b.reads;
            a.writes += b.writes;
            a.syncs += b.syncs;
            a.read_bytes += b.read_bytes;
            a.written_bytes += b.written_bytes;
            a.latency_sum_ns += b.latency_sum_ns;
        }
    }
}
