//! The replay as a trace-driven simulation of a device model in virtual time, as DiskSim runs
//! traces: no real I/O and no waiting, so the emulator's timing error (late wake-ups on a busy
//! machine) cannot leak into the bound, and a trace of a few hundred thousand I/Os takes well
//! under a second. Each operation goes to a fresh model of the device at its virtual start time,
//! in nondecreasing start order, through the same placement as the real-time replay.
//!
//! Three orders ([`ReplayOrder`]):
//! - **lanes** — each traced thread's operations in order, one at a time, threads free of each
//!   other: concurrency the database never had can appear, e.g. SQLite's writers, which take
//!   turns in the run, each get a lane.
//! - **causal** — an operation starts only after every operation that had *completed before it
//!   started* in the trace has completed here, so what the database serialised stays serial and
//!   what overlapped may overlap.
//! - **btreplay** — what blktrace's btrecord/btreplay `-N` (no stalls) does, the block-level
//!   replay of S1's era: each CPU's operations on each device are one stream cut into bunches
//!   ([`Bunching`]); a stream submits its bunches back to back, each as one asynchronous submit,
//!   and waits only when its pool of I/O control blocks (512) is all in flight; completions free
//!   them independently. Nothing waits for an earlier operation to complete, so the device gets
//!   a far deeper queue than in lanes order.
//!
//! The gap between lanes and causal is the device's gain from concurrency that the database did
//! not use; btreplay's is what the device does with the whole trace queued up front.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::time::Duration;

use oltplab_core::{Error, Result};
use oltplab_devmodel::{Emulator, Spec};
use oltplab_io::EngineKind;
use serde::{Deserialize, Serialize};

use super::acc::Acc;
use super::plan::{require_cpus, Bunching, Plan, PlanOp};
use super::{intervals_of, submit_to_model, BunchingSummary, ReplayMode, ReplayOutcome};
use crate::reader::TraceData;

/// How a replay orders the trace's operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayOrder {
    /// Each traced thread in order, threads free of each other.
    #[default]
    Lanes,
    /// An operation waits for every operation that had completed before it started in the trace.
    Causal,
    /// btrecord's bunches per CPU, replayed as btreplay -N does: bunches back to back, bounded
    /// only by each stream's pool of I/O control blocks.
    Btreplay,
}

impl ReplayOrder {
    pub const NAMES: [&'static str; 3] = ["lanes", "causal", "btreplay"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "lanes" => Some(Self::Lanes),
            "causal" => Some(Self::Causal),
            "btreplay" => Some(Self::Btreplay),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Lanes => "lanes",
            Self::Causal => "causal",
            Self::Btreplay => "btreplay",
        }
    }
}

/// Virtual time of the replay's start: any fixed point works; this keeps clear of zero.
const T0_NS: u64 = 1_000_000_000;

/// Replays `trace` on a fresh model of `spec` in virtual time, in `order` (btreplay with btrecord's
/// default bunches and btreplay's pool, [`Bunching::default`]). The outcome is a replay's like any
/// other (elapsed time and intervals in virtual time), with `virtual_clock` set. A btreplay of a
/// trace whose records carry no CPU is a usage error ([`require_cpus`]).
pub fn replay_virtual(
    trace: &TraceData,
    spec: &Spec,
    seed: u64,
    order: ReplayOrder,
) -> Result<ReplayOutcome> {
    replay_virtual_with(trace, spec, seed, order, &Bunching::default())
}

/// [`replay_virtual`] with btreplay's bunches and pool as `bunching` says (other orders ignore it).
pub fn replay_virtual_with(
    trace: &TraceData,
    spec: &Spec,
    seed: u64,
    order: ReplayOrder,
    bunching: &Bunching,
) -> Result<ReplayOutcome> {
    if order == ReplayOrder::Btreplay {
        bunching.check()?;
        require_cpus(trace)?;
    }
    if spec.is_host() {
        return Err(Error::usage(
            "a virtual-time replay needs a device model, and host is the real device: give --emulate SPEC (e.g. hdd-10k), or drop --virtual to replay on the real device",
        ));
    }
    let plan = match order {
        ReplayOrder::Btreplay => Plan::build_btreplay(trace, bunching),
        _ => Plan::build(trace),
    };
    if plan.ops() == 0 {
        return Err(Error::usage(
            "the trace holds no operations: there is nothing to replay",
        ));
    }
    let emulator = Emulator::new(spec, seed)?;
    let slots: Vec<u32> = plan.files.iter().map(|f| f.device_slot).collect();
    let mut acc = Acc::default();
    let issue = |op: &PlanOp, start: u64, acc: &mut Acc| -> u64 {
        let done = submit_to_model(&emulator, op, slots[op.file as usize], start)
            .unwrap_or(start)
            .max(start);
        acc.complete(op, done - T0_NS, done - start, op.len as u64);
        done
    };
    match order {
        ReplayOrder::Lanes => {
            // The lane whose next operation can start first goes next: starts never go back in time.
            let mut ready: BinaryHeap<Reverse<(u64, usize, usize)>> = (0..plan.lanes.len())
                .filter(|&l| !plan.lanes[l].is_empty())
                .map(|l| Reverse((T0_NS, l, 0)))
                .collect();
            while let Some(Reverse((start, lane, i))) = ready.pop() {
                let done = issue(&plan.lanes[lane][i], start, &mut acc);
                if i + 1 < plan.lanes[lane].len() {
                    ready.push(Reverse((done, lane, i + 1)));
                }
            }
        }
        ReplayOrder::Causal => {
            let mut ops: Vec<&PlanOp> = plan.lanes.iter().flatten().collect();
            ops.sort_by_key(|o| (o.submit_ns, o.end_ns));
            // The operations by traced completion; those that ended before an operation started
            // are a prefix of this list, and a prefix that only grows as the start moves on.
            let mut by_end: Vec<usize> = (0..ops.len()).collect();
            by_end.sort_by_key(|&i| (ops[i].end_ns, i));
            let mut done: Vec<Option<u64>> = vec![None; ops.len()];
            let (mut ended, mut waits_for) = (0usize, T0_NS);
            for j in 0..ops.len() {
                while ended < by_end.len() && ops[by_end[ended]].end_ns <= ops[j].submit_ns {
                    // Zero-length operations at the same instant may end "before" each other;
                    // only those already issued can be waited for.
                    if let Some(d) = done[by_end[ended]] {
                        waits_for = waits_for.max(d);
                    }
                    ended += 1;
                }
                done[j] = Some(issue(ops[j], waits_for, &mut acc));
            }
        }
        ReplayOrder::Btreplay => {
            let pool = bunching.iocbs as usize;
            // Per stream: the next operation, its bunch, and the completions of its I/Os in flight.
            struct Stream {
                next: usize,
                bunch: usize,
                in_flight: BinaryHeap<Reverse<u64>>,
            }
            let mut streams: Vec<Stream> = (0..plan.lanes.len())
                .map(|_| Stream {
                    next: 0,
                    bunch: 0,
                    in_flight: BinaryHeap::new(),
                })
                .collect();
            // (when the stream can submit, sequence, stream): streams due at the same instant take
            // turns bunch by bunch, as threads running side by side would.
            let mut due: BinaryHeap<Reverse<(u64, u64, usize)>> = BinaryHeap::new();
            let mut seq = 0u64;
            for s in 0..plan.lanes.len() {
                if !plan.lanes[s].is_empty() {
                    due.push(Reverse((T0_NS, seq, s)));
                    seq += 1;
                }
            }
            while let Some(Reverse((t, _, s))) = due.pop() {
                let st = &mut streams[s];
                // The reaper has freed every control block whose I/O completed by now.
                while st.in_flight.peek().is_some_and(|&Reverse(d)| d <= t) {
                    st.in_flight.pop();
                }
                let free = pool - st.in_flight.len();
                if free == 0 {
                    let Reverse(first) = *st.in_flight.peek().expect("a full pool is in flight");
                    due.push(Reverse((first, seq, s)));
                    seq += 1;
                    continue;
                }
                // One submit: the rest of the bunch, as far as free control blocks go.
                let bunch = plan.bunch(s, st.bunch);
                let n = free.min(bunch.end - st.next);
                for op in &plan.lanes[s][st.next..st.next + n] {
                    st.in_flight.push(Reverse(issue(op, t, &mut acc)));
                }
                st.next += n;
                if st.next == bunch.end {
                    st.bunch += 1;
                }
                if st.next < plan.lanes[s].len() {
                    // -N: the next bunch goes at once.
                    due.push(Reverse((t, seq, s)));
                    seq += 1;
                }
            }
        }
    }
    let elapsed = Duration::from_nanos(acc.last_completion_ns.max(1));
    let data_ios = acc.counts.read + acc.counts.write;
    Ok(ReplayOutcome {
        mean_in_flight: acc.mean_in_flight(elapsed.as_nanos() as u64),
        bunching: (order == ReplayOrder::Btreplay).then(|| BunchingSummary::of(&plan, bunching)),
        intervals: intervals_of(&acc, elapsed),
        iops: data_ios as f64 / elapsed.as_secs_f64(),
        elapsed,
        counts: acc.counts,
        read_bytes: acc.read_bytes,
        written_bytes: acc.written_bytes,
        read_latency: acc.read_latency,
        write_latency: acc.write_latency,
        sync_latency: acc.sync_latency,
        trace_ops: plan.ops(),
        trace_duration_ns: plan.trace_duration_ns,
        trace_complete: trace.complete,
        threads: plan.threads,
        lanes: plan.lanes.len(),
        // No engine, files, alignment or CPU to speak of: nothing was done but the model's sums.
        workers: 0,
        engine: EngineKind::Null,
        mode: ReplayMode::AsFastAsPossible,
        direct: false,
        align_bytes: 0,
        unaligned_ops: 0,
        short_ios: 0,
        unsupported_ops: 0,
        interrupted: false,
        files: Vec::new(),
        cpu: Default::default(),
        warnings: Vec::new(),
        emulated_device: Some(spec.name()),
        fidelity: None,
        order,
        virtual_clock: true,
    })
}
