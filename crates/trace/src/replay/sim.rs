//! The replay as a trace-driven simulation of a device model in virtual time, as DiskSim runs
//! traces: no real I/O and no waiting, so the emulator's timing error (late wake-ups on a busy
//! machine) cannot leak into the bound, and a trace of a few hundred thousand I/Os takes well
//! under a second. Each operation goes to a fresh model of the device at its virtual start time,
//! in nondecreasing start order, through the same placement as the real-time replay.
//!
//! Two orders ([`ReplayOrder`]):
//! - **lanes** — each traced thread's operations in order, threads free of each other (S1's and
//!   btreplay's method): concurrency the database never had can appear, e.g. SQLite's writers,
//!   which take turns in the run, each get a lane.
//! - **causal** — an operation starts only after every operation that had *completed before it
//!   started* in the trace has completed here, so what the database serialised stays serial and
//!   what overlapped may overlap.
//!
//! The gap between the two is the device's gain from concurrency that the database did not use.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use std::time::Duration;

use oltplab_core::{Error, Result};
use oltplab_devmodel::{Emulator, Spec};
use oltplab_io::EngineKind;
use serde::{Deserialize, Serialize};

use super::acc::Acc;
use super::plan::{Plan, PlanOp};
use super::{intervals_of, submit_to_model, ReplayMode, ReplayOutcome};
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
}

impl ReplayOrder {
    pub const NAMES: [&'static str; 2] = ["lanes", "causal"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "lanes" => Some(Self::Lanes),
            "causal" => Some(Self::Causal),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Lanes => "lanes",
            Self::Causal => "causal",
        }
    }
}

/// Virtual time of the replay's start: any fixed point works; this keeps clear of zero.
const T0_NS: u64 = 1_000_000_000;

/// Replays `trace` on a fresh model of `spec` in virtual time, in `order`. The outcome is a
/// replay's like any other (elapsed time and intervals in virtual time), with `virtual_clock` set.
pub fn replay_virtual(
    trace: &TraceData,
    spec: &Spec,
    seed: u64,
    order: ReplayOrder,
) -> Result<ReplayOutcome> {
    if spec.is_host() {
        return Err(Error::usage(
            "a virtual-time replay needs a device model, and host is the real device: give --emulate SPEC (e.g. hdd-10k), or drop --virtual to replay on the real device",
        ));
    }
    let plan = Plan::build(trace);
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
    }
    let elapsed = Duration::from_nanos(acc.last_completion_ns.max(1));
    let data_ios = acc.counts.read + acc.counts.write;
    Ok(ReplayOutcome {
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
