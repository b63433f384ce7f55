//! Replay: do a trace's I/O again, on copies of its files, as fast as the device allows (or with
//! the trace's timing, scaled), and measure it.
//!
//! - **Order and concurrency.** The trace becomes lanes ([`plan`]): one per traced thread doing
//!   synchronous I/O, more where a thread's I/Os overlapped. A lane's next operation starts when its
//!   previous one has completed, so each thread's order and the trace's concurrency are kept.
//!   `--order btreplay` instead makes a stream of each CPU's I/O and submits it bunch by bunch, as
//!   blktrace's btreplay does, without waiting for completions ([`sim`] describes the orders).
//! - **As fast as possible** drops the time between operations; **time scale X** issues each
//!   operation at X × its traced time (never before its lane's previous one completed).
//! - **Engine.** io_uring: one thread drives all lanes through one ring (more threads for more than
//!   64 lanes); psync: one thread per lane with blocking calls, the fallback.
//! - **Files.** Copies under the target directory ([`target`]), never the traced files.
//! - **O_DIRECT and unaligned I/O.** A direct replay opens each copy twice. Reads and writes whose
//!   offset or length is not a multiple of the file system's direct-I/O alignment (SQLite's
//!   4,120-byte WAL frames) go through the buffered descriptor — widening them would change the
//!   bytes moved — and are counted in `unaligned_ops` with a warning; a file that gets any is
//!   replayed buffered entirely, because direct writes beside buffered ones on one file make the
//!   kernel fail its syncs.
//! - **IOPS** counts reads and writes per second of replay; syncs are reported beside them.
//! - **Bounds.** A trace is untrusted input: a read or write over [`MAX_IO_BYTES`], more lanes than
//!   [`MAX_PSYNC_LANES`] (psync) or [`MAX_URING_LANES`] (io_uring), or lane buffers over
//!   [`MAX_BUFFER_BYTES`] in all are refused before any copy is filled or buffer allocated.

mod acc;
pub mod plan;
mod psync;
pub mod sim;
pub mod target;
mod uring;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use oltplab_core::{Error, Result};
use oltplab_devmodel::{Emulator, Fidelity, IoKind};
use oltplab_io::engine::probe_io_uring;
use oltplab_io::EngineKind;
use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::schema::OpSummary;
use oltplab_metrics::{LatencyHistogram, LatencyNs, Warning, WarningKind};
use serde::{Deserialize, Serialize};

use crate::reader::TraceData;
use crate::stat::OpCounts;
use crate::Op;
use acc::Acc;
use plan::{Bunching, Plan, PlanOp};
use sim::ReplayOrder;

/// The longest read or write a replay does: each lane's buffer is as large as its largest one.
/// Databases move a few MiB per call at most; a longer one comes from a damaged or crafted trace.
pub const MAX_IO_BYTES: u64 = 64 << 20;
/// Lanes a psync replay runs, one thread each.
pub const MAX_PSYNC_LANES: usize = 1024;
/// Lanes an io_uring replay runs: a worker's ring (at most 32,768 entries) holds one I/O per lane.
pub const MAX_URING_LANES: usize = 32_768;
/// The lanes' buffers together (each holds its lane's largest read or write).
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;
/// Streams a real-time btreplay runs, a thread and a ring each.
pub const MAX_BTREPLAY_STREAMS: usize = 1024;
/// io_uring worker threads at most, whatever [`ReplayOptions::workers`] asks.
pub const MAX_WORKERS: usize = 256;

/// How time between operations is treated.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayMode {
    /// Each lane issues its next operation as soon as its previous one completed.
    AsFastAsPossible,
    /// Each operation is issued at X × its traced submit time (2.0 = half speed), or when its
    /// lane's previous one completed if that is later.
    TimeScale(f64),
}

#[derive(Clone, Debug)]
pub struct ReplayOptions {
    pub mode: ReplayMode,
    /// O_DIRECT for aligned I/O (the default): the device, not the page cache, is measured.
    pub direct: bool,
    /// io_uring (default) or psync; io_uring falls back to psync with a warning if unavailable.
    pub engine: EngineKind,
    /// io_uring worker threads; 0 = one per 64 lanes, at most the number of cores; at most
    /// [`MAX_WORKERS`].
    pub workers: usize,
    /// Each replayed read, write and sync also waits for its completion on this modelled device.
    pub emulator: Option<Arc<Emulator>>,
    /// Lanes, or btreplay (io_uring only); causal order is a virtual-time replay ([`sim`]).
    pub order: ReplayOrder,
    /// btreplay's bunches and pool.
    pub bunching: Bunching,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            mode: ReplayMode::AsFastAsPossible,
            direct: true,
            engine: EngineKind::IoUring,
            workers: 0,
            emulator: None,
            order: ReplayOrder::Lanes,
            bunching: Bunching::default(),
        }
    }
}

/// How a btreplay cut the trace (`summary.bunching`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BunchingSummary {
    /// btrecord's `--max-bunch-time`, in ns.
    pub bunch_time_ns: u64,
    /// btrecord's `--max-pkts`.
    pub bunch_size: u32,
    /// btreplay's I/O control blocks per stream.
    pub iocbs: u32,
    /// Streams: each CPU's I/O on each device (btrecord's record files).
    pub streams: usize,
    /// The CPUs the streams came from (records without one are not counted).
    pub cpus: usize,
    pub bunches: usize,
    /// Operations per bunch on average.
    pub ops_per_bunch: f64,
}

impl BunchingSummary {
    pub fn of(plan: &Plan, bunching: &Bunching) -> Self {
        let bunches = plan.bunch_count();
        let cpus: std::collections::BTreeSet<u32> =
            plan.streams.iter().filter_map(|&(cpu, _)| cpu).collect();
        Self {
            bunch_time_ns: bunching.max_time_ns,
            bunch_size: bunching.max_ios,
            iocbs: bunching.iocbs,
            streams: plan.lanes.len(),
            cpus: cpus.len(),
            bunches,
            ops_per_bunch: plan.ops() as f64 / bunches.max(1) as f64,
        }
    }
}

/// What a running replay reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayEvent {
    /// Filling the target copies with data.
    Filling { done_bytes: u64, total_bytes: u64 },
    /// Operations completed so far.
    Replaying { ops_done: u64, ops_total: u64 },
}

/// One second of replay.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct ReplayInterval {
    pub t_s: f64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub sync_ops: u64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    /// Mean latency of the second's reads and writes.
    pub lat_ns_mean: f64,
}

/// What a replay measured.
#[derive(Clone, Debug)]
pub struct ReplayOutcome {
    pub counts: OpCounts,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub read_latency: LatencyHistogram,
    pub write_latency: LatencyHistogram,
    pub sync_latency: LatencyHistogram,
    /// From the first issue to the last completion.
    pub elapsed: Duration,
    /// Reads + writes per second of `elapsed`.
    pub iops: f64,
    pub trace_ops: u64,
    pub trace_duration_ns: u64,
    pub trace_complete: bool,
    pub threads: u64,
    pub lanes: usize,
    pub workers: usize,
    pub engine: EngineKind,
    pub mode: ReplayMode,
    pub direct: bool,
    pub align_bytes: u64,
    pub unaligned_ops: u64,
    pub short_ios: u64,
    pub unsupported_ops: u64,
    pub interrupted: bool,
    pub files: Vec<PathBuf>,
    pub intervals: Vec<ReplayInterval>,
    /// Process CPU time during the replay.
    pub cpu: CpuTime,
    pub warnings: Vec<Warning>,
    /// Emulating: the device spec and how closely the replay followed its model.
    pub emulated_device: Option<String>,
    pub fidelity: Option<Fidelity>,
    pub order: ReplayOrder,
    /// Replayed in virtual time on the model ([`sim`]), not on a device in real time.
    pub virtual_clock: bool,
    /// Operations in flight on average, from first issue to last completion: the queue the
    /// device (or its model) was given.
    pub mean_in_flight: f64,
    /// btreplay: how the trace was cut into streams and bunches.
    pub bunching: Option<BunchingSummary>,
}

/// `summary` of a `replay` result (`summary.iops`, `summary.read|write.{iops, lat_ns}`, `summary.ops`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReplaySummary {
    /// Reads + writes per second.
    pub iops: f64,
    /// Every operation replayed (reads, writes, syncs, others).
    pub ops: u64,
    pub ops_by_kind: serde_json::Value,
    pub read: OpSummary,
    pub write: OpSummary,
    /// This and the three figures after it are always written; they are optional to a reader
    /// because the reports have always drawn a replay without them (DESIGN.md names iops, ops
    /// and read|write as what they rely on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
    /// The traced time the same operations took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_s: Option<f64>,
    /// trace_s / elapsed_s: how much faster than captured the replay ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    pub trace_ops: u64,
    pub trace_complete: bool,
    pub threads: u64,
    pub lanes: usize,
    pub workers: usize,
    pub engine: String,
    pub direct: bool,
    pub direct_align_bytes: u64,
    pub unaligned_ops: u64,
    pub short_ios: u64,
    pub unsupported_ops: u64,
    pub interrupted: bool,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// The emulated device (canonical spec), if each I/O waited for a modelled completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated_device: Option<String>,
    /// Modelled against realised latency (see `oltplab devices`); present when emulating.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<Fidelity>,
    /// lanes | causal | btreplay ([`sim::ReplayOrder`]).
    #[serde(default)]
    pub order: String,
    /// real (on a device, or waiting for an emulated one) | virtual (a simulation of the model).
    #[serde(default)]
    pub clock: String,
    /// Operations in flight on average (their latencies summed over the elapsed time).
    #[serde(default)]
    pub mean_in_flight: f64,
    /// btreplay: bunch time and size, pool, streams, bunches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bunching: Option<BunchingSummary>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SyncSummary {
    pub ops: u64,
    pub iops: f64,
    pub lat_ns: LatencyNs,
}

impl ReplayOutcome {
    pub fn ops(&self) -> u64 {
        self.counts.total()
    }

    pub fn summary(&self) -> ReplaySummary {
        let secs = self.elapsed.as_secs_f64();
        let per_s = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
        let op = |ios: u64, bytes: u64, h: &LatencyHistogram| OpSummary {
            ios,
            bytes,
            iops: per_s(ios),
            bw_bytes: per_s(bytes),
            lat_ns: h.stats(),
        };
        ReplaySummary {
            iops: self.iops,
            ops: self.ops(),
            ops_by_kind: serde_json::to_value(self.counts).expect("counts serialise"),
            read: op(self.counts.read, self.read_bytes, &self.read_latency),
            write: op(self.counts.write, self.written_bytes, &self.write_latency),
            sync: Some(SyncSummary {
                ops: self.counts.syncs(),
                iops: per_s(self.counts.syncs()),
                lat_ns: self.sync_latency.stats(),
            }),
            elapsed_s: Some(secs),
            trace_s: Some(self.trace_duration_ns as f64 / 1e9),
            speedup: Some(if secs > 0.0 {
                self.trace_duration_ns as f64 / 1e9 / secs
            } else {
                0.0
            }),
            trace_ops: self.trace_ops,
            trace_complete: self.trace_complete,
            threads: self.threads,
            lanes: self.lanes,
            workers: self.workers,
            engine: self.engine.name().into(),
            direct: self.direct,
            direct_align_bytes: self.align_bytes,
            unaligned_ops: self.unaligned_ops,
            short_ios: self.short_ios,
            unsupported_ops: self.unsupported_ops,
            interrupted: self.interrupted,
            cpu_user_s: self.cpu.user_s,
            cpu_sys_s: self.cpu.sys_s,
            emulated_device: self.emulated_device.clone(),
            fidelity: self.fidelity.clone(),
            order: self.order.name().into(),
            clock: if self.virtual_clock {
                "virtual"
            } else {
                "real"
            }
            .into(),
            mean_in_flight: self.mean_in_flight,
            bunching: self.bunching.clone(),
        }
    }
}

/// Replays the trace at `path` on copies of its files in `target_dir`. `progress` sees the number
/// of operations completed, a few times a second. `stop` (Ctrl-C) ends it early: what completed is
/// returned with `interrupted` set.
pub fn replay(
    path: &Path,
    target_dir: &Path,
    opts: &ReplayOptions,
    stop: &AtomicBool,
    progress: impl Fn(u64) + Sync,
) -> Result<ReplayOutcome> {
    let trace = TraceData::load(path)?;
    replay_trace(&trace, target_dir, opts, stop, |e| {
        if let ReplayEvent::Replaying { ops_done, .. } = e {
            progress(ops_done)
        }
    })
}

/// [`replay`] of a trace in memory, with fill and replay progress.
pub fn replay_trace(
    trace: &TraceData,
    target_dir: &Path,
    opts: &ReplayOptions,
    stop: &AtomicBool,
    on_event: impl Fn(ReplayEvent) + Sync,
) -> Result<ReplayOutcome> {
    if let ReplayMode::TimeScale(x) = opts.mode {
        if !(x.is_finite() && x > 0.0) {
            return Err(Error::usage(format!(
                "--time-scale {x} is not a positive number: give e.g. 1 (traced timing) or 0.5 (twice as fast)"
            )));
        }
    }
    let btreplay = opts.order == ReplayOrder::Btreplay;
    match opts.order {
        ReplayOrder::Causal => {
            return Err(Error::usage(
                "--order causal is a virtual-time replay for now: add --virtual and --emulate SPEC, or use --order lanes or btreplay on a real device",
            ))
        }
        ReplayOrder::Btreplay => {
            opts.bunching.check()?;
            plan::require_cpus(trace)?;
            if opts.engine == EngineKind::Psync {
                return Err(Error::usage(
                    "--order btreplay submits each bunch asynchronously, which psync cannot: use --engine io_uring, or replay in virtual time (--virtual --emulate SPEC)",
                ));
            }
        }
        ReplayOrder::Lanes => {}
    }
    let plan = if btreplay {
        Plan::build_btreplay(trace, &opts.bunching)
    } else {
        Plan::build(trace)
    };
    if plan.ops() == 0 {
        return Err(Error::usage(
            "the trace holds no operations: there is nothing to replay",
        ));
    }
    let mut warnings = Vec::new();
    let mut engine = opts.engine;
    if engine == EngineKind::Null {
        return Err(Error::usage(
            "the null engine does no I/O and cannot replay a trace: use io_uring or psync",
        ));
    }
    if engine == EngineKind::IoUring {
        if let Err(why) = probe_io_uring() {
            if btreplay {
                return Err(Error::usage(format!(
                    "{why}, and --order btreplay submits its bunches through io_uring: replay it in virtual time (--virtual --emulate SPEC), or in --order lanes with psync"
                )));
            }
            warnings.push(Warning::new(
                WarningKind::IoUringUnavailable,
                format!("{why}: replayed with one thread per lane (psync) instead"),
            ));
            engine = EngineKind::Psync;
        }
    }
    check_bounds(trace, &plan, engine, btreplay.then_some(&opts.bunching))?;
    let mut prepared = target::prepare(
        target_dir,
        &plan.files,
        opts.direct,
        stop,
        &mut |done, total| {
            on_event(ReplayEvent::Filling {
                done_bytes: done,
                total_bytes: total,
            })
        },
    )?;
    // A file that gets unaligned reads or writes is replayed through the page cache entirely:
    // O_DIRECT writes beside buffered ones on one file make the kernel fail its page-cache
    // invalidation and then every sync of the file (EIO) — SQLite's WAL, with its 24-byte frame
    // headers, is such a file.
    let mixed: Vec<String> = files_with_unaligned_io(&plan, opts.direct, prepared.align_bytes)
        .into_iter()
        .map(|i| {
            prepared.files[i].direct = None;
            prepared.files[i].path.display().to_string()
        })
        .collect();
    if !mixed.is_empty() {
        warnings.push(Warning::new(
            WarningKind::PageCache,
            format!(
                "{} got reads or writes not aligned to {} bytes, which O_DIRECT cannot take, and {} replayed through the page cache entirely (direct and buffered writes on one file make its syncs fail)",
                mixed.join(", "),
                prepared.align_bytes,
                if mixed.len() == 1 { "was" } else { "were" }
            ),
        ));
    }

    let ops_total = plan.ops();
    let origin_ns = plan
        .lanes
        .iter()
        .filter_map(|l| l.first().map(|o| o.submit_ns))
        .min()
        .unwrap_or(0);
    let pacing = Pacing {
        mode: opts.mode,
        origin_ns,
        emulator: opts.emulator.clone(),
        device_slots: plan.files.iter().map(|f| f.device_slot).collect(),
    };
    let lanes: Vec<&[PlanOp]> = plan.lanes.iter().map(Vec::as_slice).collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = match engine {
        _ if btreplay => lanes.len(),
        EngineKind::Psync => lanes.len(),
        _ if opts.workers > 0 => opts.workers.min(lanes.len()).min(MAX_WORKERS),
        _ => lanes.len().div_ceil(64).clamp(1, cores),
    };
    let counters: Vec<Padded> = (0..workers).map(|_| Padded(AtomicU64::new(0))).collect();
    let finished = AtomicBool::new(false);
    let cpu_before = CpuTime::process();
    let clock = Clock::start();
    let result: Result<Acc> = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                let done = counters.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
                on_event(ReplayEvent::Replaying {
                    ops_done: done,
                    ops_total,
                });
            }
        });
        let result = match engine {
            _ if btreplay => run_btreplay_streams(
                &plan,
                opts.bunching.iocbs as usize,
                &prepared,
                opts.direct,
                &pacing,
                clock,
                stop,
                &counters,
            ),
            EngineKind::Psync => psync::run_lanes(
                lanes
                    .iter()
                    .zip(&counters)
                    .map(|(ops, counter)| psync::PsyncLane {
                        ops,
                        files: &prepared.files,
                        direct: opts.direct,
                        align_bytes: prepared.align_bytes,
                        pacing: &pacing,
                        clock,
                        stop,
                        done_ops: &counter.0,
                    })
                    .collect(),
            ),
            _ => run_uring_workers(
                &lanes,
                workers,
                &prepared,
                opts.direct,
                &pacing,
                clock,
                stop,
                &counters,
            ),
        };
        finished.store(true, Ordering::Relaxed);
        result
    });
    let acc = result?;
    let cpu = CpuTime::process().since(&cpu_before);
    let elapsed = Duration::from_nanos(acc.last_completion_ns.max(1));
    let interrupted = stop.load(Ordering::Relaxed) && acc.counts.total() < ops_total;
    on_event(ReplayEvent::Replaying {
        ops_done: acc.counts.total(),
        ops_total,
    });

    let data_ios = acc.counts.read + acc.counts.write;
    if opts.direct && acc.unaligned_ops > 0 {
        warnings.push(Warning::new(
            WarningKind::PageCache,
            format!(
                "{} of {} reads and writes ({:.1} %) were not aligned to {} bytes, which O_DIRECT needs, and went through the page cache",
                acc.unaligned_ops,
                data_ios,
                acc.unaligned_ops as f64 * 100.0 / data_ios.max(1) as f64,
                prepared.align_bytes
            ),
        ));
    }
    if !opts.direct {
        warnings.push(Warning::new(
            WarningKind::PageCache,
            "the replay was buffered: reads may be served by the page cache and writes reach the device only when synced; replay without --buffered to measure the device",
        ));
    }
    if interrupted {
        warnings.push(Warning::new(
            WarningKind::Interrupted,
            format!(
                "stopped by Ctrl-C after {} of {} operations; the figures cover only those",
                acc.counts.total(),
                ops_total
            ),
        ));
    }
    if data_ios < 1000 {
        warnings.push(Warning::new(
            WarningKind::FewSamples,
            format!("only {data_ios} reads and writes were replayed: the high percentiles rest on a few samples"),
        ));
    }
    let intervals = intervals_of(&acc, elapsed);
    let secs = elapsed.as_secs_f64();
    let mean_in_flight = acc.mean_in_flight(elapsed.as_nanos() as u64);
    Ok(ReplayOutcome {
        counts: acc.counts,
        read_bytes: acc.read_bytes,
        written_bytes: acc.written_bytes,
        read_latency: acc.read_latency,
        write_latency: acc.write_latency,
        sync_latency: acc.sync_latency,
        elapsed,
        iops: if secs > 0.0 {
            data_ios as f64 / secs
        } else {
            0.0
        },
        trace_ops: ops_total,
        trace_duration_ns: plan.trace_duration_ns,
        trace_complete: trace.complete,
        threads: plan.threads,
        lanes: lanes.len(),
        workers,
        engine,
        mode: opts.mode,
        direct: opts.direct,
        align_bytes: prepared.align_bytes,
        unaligned_ops: acc.unaligned_ops,
        short_ios: acc.short_ios,
        unsupported_ops: acc.unsupported_ops,
        interrupted,
        files: prepared.files.iter().map(|f| f.path.clone()).collect(),
        intervals,
        cpu,
        warnings,
        emulated_device: opts.emulator.as_ref().map(|e| e.spec().name()),
        fidelity: opts.emulator.as_ref().map(|e| e.fidelity()),
        order: opts.order,
        virtual_clock: false,
        mean_in_flight,
        bunching: btreplay.then(|| BunchingSummary::of(&plan, &opts.bunching)),
    })
}

/// Refuses a trace whose real-time replay would take more than the bounds above: an I/O over
/// [`MAX_IO_BYTES`] (named by its record), a byte range past the largest file offset, more lanes
/// than `engine` runs, or lane buffers over [`MAX_BUFFER_BYTES`] together.
fn check_bounds(
    trace: &TraceData,
    plan: &Plan,
    engine: EngineKind,
    btreplay: Option<&Bunching>,
) -> Result<()> {
    const INSTEAD: &str = "or replay it in virtual time (--virtual --emulate SPEC), which allocates no buffers and starts no threads";
    for (i, r) in trace.records.iter().enumerate() {
        let Some(op) = Op::from_u8(r.op) else {
            continue;
        };
        let what = || {
            format!(
                "record {} of the trace (in time order: a {} of {} bytes at offset {} of {}, {:.9} s in)",
                i + 1,
                op.name(),
                r.len,
                r.offset,
                trace
                    .files
                    .get(r.file as usize)
                    .map_or("an unnamed file", String::as_str),
                r.submit_ns as f64 / 1e9
            )
        };
        if op.is_data() && r.len as u64 > MAX_IO_BYTES {
            return Err(Error::usage(format!(
                "{} is larger than the {} MiB a replay buffers for one I/O; cut it out of the trace, {INSTEAD}",
                what(),
                MAX_IO_BYTES >> 20
            )));
        }
        let end = match op {
            Op::Truncate => Some(r.offset),
            _ if op.touches_range() => r.offset.checked_add(r.len as u64),
            _ => Some(0),
        };
        if end.is_none_or(|end| end > i64::MAX as u64) {
            return Err(Error::usage(format!(
                "{} reaches past byte 2^63, the largest file offset Linux has, so its copy cannot be made; cut it out of the trace",
                what()
            )));
        }
    }
    if let Some(bunching) = btreplay {
        return check_stream_bounds(plan, bunching, INSTEAD.trim_start_matches("or "));
    }
    let lanes = plan.lanes.len();
    let max_lanes = match engine {
        EngineKind::Psync => MAX_PSYNC_LANES,
        _ => MAX_URING_LANES,
    };
    if lanes > max_lanes {
        return Err(Error::usage(format!(
            "the trace's I/O overlaps into {lanes} lanes (operations in flight at once), more than the {max_lanes} a {} replay runs ({}); {}",
            engine.name(),
            match engine {
                EngineKind::Psync => format!("one thread each; io_uring runs up to {MAX_URING_LANES}"),
                _ => "one ring slot each".to_string(),
            },
            INSTEAD.trim_start_matches("or ")
        )));
    }
    let buffers = plan
        .lanes
        .iter()
        .map(|ops| lane_buffer_bytes(ops) as u64)
        .fold(0u64, u64::saturating_add);
    if buffers > MAX_BUFFER_BYTES {
        return Err(Error::usage(format!(
            "the trace's {lanes} lanes need {} of I/O buffers together (each lane holds its largest read or write), more than the {} a replay allocates; {}",
            oltplab_core::units::format_bytes(buffers),
            oltplab_core::units::format_bytes(MAX_BUFFER_BYTES),
            INSTEAD.trim_start_matches("or ")
        )));
    }
    Ok(())
}

/// A real-time btreplay runs a thread and a ring per stream, and a buffer per control block that
/// can be in flight (each the stream's largest read or write): both are bounded.
fn check_stream_bounds(plan: &Plan, bunching: &Bunching, instead: &str) -> Result<()> {
    let streams = plan.lanes.len();
    if streams > MAX_BTREPLAY_STREAMS {
        return Err(Error::usage(format!(
            "the trace's I/O comes from {streams} streams (CPU and device), more than the {MAX_BTREPLAY_STREAMS} a real-time btreplay runs (a thread each); {instead}"
        )));
    }
    let buffers = plan
        .lanes
        .iter()
        .map(|ops| {
            let slots = ops.len().min(bunching.iocbs as usize) as u64;
            (lane_buffer_bytes(ops) as u64).saturating_mul(slots)
        })
        .fold(0u64, u64::saturating_add);
    if buffers > MAX_BUFFER_BYTES {
        return Err(Error::usage(format!(
            "the trace's {streams} streams need {} of I/O buffers together (each of a stream's {} control blocks holds its largest read or write), more than the {} a replay allocates; give fewer --iocbs, or {instead}",
            oltplab_core::units::format_bytes(buffers),
            bunching.iocbs,
            oltplab_core::units::format_bytes(MAX_BUFFER_BYTES),
        )));
    }
    Ok(())
}

/// btreplay in real time: a thread and a ring per stream ([`uring::StreamWorker`]).
#[allow(clippy::too_many_arguments)]
fn run_btreplay_streams(
    plan: &Plan,
    iocbs: usize,
    prepared: &target::PreparedFiles,
    direct: bool,
    pacing: &Pacing,
    clock: Clock,
    stop: &AtomicBool,
    counters: &[Padded],
) -> Result<Acc> {
    run_workers(plan.lanes.len(), "btreplay", |s| {
        let worker = uring::StreamWorker {
            ops: &plan.lanes[s],
            bunches: &plan.bunches[s],
            iocbs,
            files: &prepared.files,
            direct,
            align_bytes: prepared.align_bytes,
            pacing,
            clock,
            stop,
            done_ops: &counters[s].0,
        };
        move || worker.run()
    })
}

/// Runs `n` workers, each on a scoped thread `oltplab-{what}{i}` made by `make(i)`, and merges
/// what they counted; a worker that failed or panicked fails the replay.
fn run_workers<'env, F>(n: usize, what: &str, make: impl Fn(usize) -> F) -> Result<Acc>
where
    F: FnOnce() -> Result<Acc> + Send + 'env,
{
    let results: Vec<Result<Acc>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                std::thread::Builder::new()
                    .name(format!("oltplab-{what}{i}"))
                    .spawn_scoped(scope, make(i))
                    .expect("spawning a replay thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::failed(format!("a {what} thread panicked"))))
            })
            .collect()
    });
    let mut total = Acc::default();
    for r in results {
        total.merge(&r?);
    }
    Ok(total)
}

#[allow(clippy::too_many_arguments)]
fn run_uring_workers(
    lanes: &[&[PlanOp]],
    workers: usize,
    prepared: &target::PreparedFiles,
    direct: bool,
    pacing: &Pacing,
    clock: Clock,
    stop: &AtomicBool,
    counters: &[Padded],
) -> Result<Acc> {
    run_workers(workers, "replay", |w| {
        // Lanes dealt round-robin, so each worker gets a similar share of busy lanes.
        let mine: Vec<&[PlanOp]> = lanes.iter().skip(w).step_by(workers).copied().collect();
        let worker = uring::UringWorker {
            lanes: mine,
            files: &prepared.files,
            direct,
            align_bytes: prepared.align_bytes,
            pacing,
            clock,
            stop,
            done_ops: &counters[w].0,
        };
        move || worker.run()
    })
}

#[repr(align(64))]
struct Padded(AtomicU64);

/// The files of `plan` that a direct replay must send some reads or writes of through the page
/// cache ([`needs_buffered`]).
fn files_with_unaligned_io(plan: &Plan, direct: bool, align_bytes: u64) -> Vec<usize> {
    let mut mixed = vec![false; plan.files.len()];
    for op in plan.lanes.iter().flatten() {
        if needs_buffered(op, direct, align_bytes) {
            mixed[op.file as usize] = true;
        }
    }
    (0..mixed.len()).filter(|&i| mixed[i]).collect()
}

/// True if a direct replay must send `op` through the buffered descriptor: O_DIRECT refuses an
/// offset or length that is not a multiple of the alignment.
#[inline]
pub(crate) fn needs_buffered(op: &PlanOp, direct: bool, align_bytes: u64) -> bool {
    direct
        && op.op.is_data()
        && !(op.offset.is_multiple_of(align_bytes) && (op.len as u64).is_multiple_of(align_bytes))
}

/// Nanoseconds since the replay started, on CLOCK_MONOTONIC (the device model's clock).
#[derive(Clone, Copy)]
pub(crate) struct Clock {
    /// CLOCK_MONOTONIC at the start.
    pub t0_ns: u64,
}

impl Clock {
    fn start() -> Self {
        Self {
            t0_ns: crate::monotonic_ns(),
        }
    }

    #[inline]
    pub fn now_ns(&self) -> u64 {
        crate::monotonic_ns().saturating_sub(self.t0_ns)
    }
}

/// When operations may start and, emulating, when they complete.
pub(crate) struct Pacing {
    mode: ReplayMode,
    /// The first operation's traced submit time: the replay starts there, not at capture start.
    origin_ns: u64,
    emulator: Option<Arc<Emulator>>,
    /// Plan file index → its device slot: the file lands at the device offsets the run used.
    device_slots: Vec<u32>,
}

impl Pacing {
    /// Emulating, a sync costs what the model says, not what this machine's disk takes to flush
    /// the backing copy (as in the SQLite VFS and the shim): the replay then skips the real sync.
    #[inline]
    pub fn model_only(&self, op: &PlanOp) -> bool {
        self.emulator.is_some() && op.op.is_sync()
    }

    /// The earliest start of `op`, or `None` for as soon as its lane allows.
    #[inline]
    pub fn due_ns(&self, op: &PlanOp) -> Option<u64> {
        match self.mode {
            ReplayMode::AsFastAsPossible => None,
            ReplayMode::TimeScale(x) => {
                Some((op.submit_ns.saturating_sub(self.origin_ns) as f64 * x) as u64)
            }
        }
    }

    /// Emulating: the modelled completion (replay time) of `op` issued at `issued_ns`. Trims,
    /// truncates and fallocates are not modelled and complete when the real call does.
    #[inline]
    pub fn model_deadline_ns(&self, op: &PlanOp, issued_ns: u64, clock: &Clock) -> Option<u64> {
        let emulator = self.emulator.as_ref()?;
        let done = submit_to_model(
            emulator,
            op,
            self.device_slots[op.file as usize],
            clock.t0_ns + issued_ns,
        )?;
        Some(done.saturating_sub(clock.t0_ns))
    }

    /// A replay's waits do not split out their thread's queue for a core (one wait releases
    /// many I/Os), so its emulated figures equal the realised ones.
    #[inline]
    pub fn record_realised(&self, modelled_ns: u64, realised_ns: u64) {
        if let Some(e) = &self.emulator {
            e.record_realised(modelled_ns, realised_ns, 0);
        }
    }
}

/// One entry per second of the replay, from what `acc` counted per second.
pub(crate) fn intervals_of(acc: &Acc, elapsed: Duration) -> Vec<ReplayInterval> {
    let secs = elapsed.as_secs_f64();
    acc.seconds
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let len_s = if (i + 1) as f64 > secs {
                (secs - i as f64).max(1e-3)
            } else {
                1.0
            };
            let ios = s.reads + s.writes;
            ReplayInterval {
                t_s: (i + 1) as f64,
                iops: ios as f64 / len_s,
                read_iops: s.reads as f64 / len_s,
                write_iops: s.writes as f64 / len_s,
                sync_ops: s.syncs,
                read_bw_bytes: s.read_bytes as f64 / len_s,
                write_bw_bytes: s.written_bytes as f64 / len_s,
                lat_ns_mean: if ios > 0 {
                    s.latency_sum_ns as f64 / ios as f64
                } else {
                    0.0
                },
            }
        })
        .collect()
}

/// The modelled completion of `op` submitted at `t_ns` on `emulator`, its file placed as the capture
/// placed it (by the slot the trace recorded for it); `None` for operations the model does not time (trims,
/// truncates, fallocates). The real-time and the virtual-time replay both go through here, so they
/// cannot place a file differently.
pub(crate) fn submit_to_model(
    emulator: &Emulator,
    op: &PlanOp,
    device_slot: u32,
    t_ns: u64,
) -> Option<u64> {
    let kind = match op.op {
        Op::Read => IoKind::Read,
        Op::Write => IoKind::Write,
        // sync_file_range starts write-back of the page cache and flushes no device cache; on
        // the model every write reached the device when its call returned, so it has nothing
        // to do — as in the run, where the shim and the VFS trace it without a model I/O.
        Op::SyncRange => return None,
        o if o.is_sync() => IoKind::Flush,
        _ => return None,
    };
    let address = emulator.place(device_slot, op.offset);
    Some(emulator.submit(t_ns, kind, address, op.len as u64))
}

/// One buffer per lane, as large as the lane's largest read or write, in one I/O area (aligned for
/// O_DIRECT, on a huge page where the kernel allows it, filled with random bytes so that written
/// data does not compress).
pub(crate) struct LaneBuffers {
    area: oltplab_io::buffers::IoArea,
    offsets: Vec<usize>,
}

const BUFFER_ALIGN: usize = 4096;

/// A lane's buffer: its largest read or write, rounded up to the buffer alignment.
fn lane_buffer_bytes(ops: &[PlanOp]) -> usize {
    let max = ops
        .iter()
        .filter(|o| o.op.is_data())
        .map(|o| o.len as usize)
        .max()
        .unwrap_or(0);
    max.div_ceil(BUFFER_ALIGN) * BUFFER_ALIGN
}

impl LaneBuffers {
    pub fn new(lanes: &[&[PlanOp]]) -> Self {
        let mut offsets = Vec::with_capacity(lanes.len());
        let mut total = 0usize;
        for ops in lanes {
            offsets.push(total);
            total += lane_buffer_bytes(ops);
        }
        Self {
            area: oltplab_io::buffers::IoArea::new(total, 0x0074_7261_6365),
            offsets,
        }
    }

    #[inline]
    pub fn lane_ptr(&self, lane: usize) -> *mut u8 {
        self.area.ptr_at(self.offsets[lane])
    }

    pub fn len_bytes(&self) -> usize {
        self.area.len_bytes()
    }

    pub fn iovec(&self) -> libc::iovec {
        self.area.iovec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;

    /// `n` reads of `len` bytes at `offset`, all in flight at once: one lane each.
    fn overlapping(n: u64, offset: u64, len: u32) -> TraceData {
        TraceData {
            files: vec!["/db".into()],
            records: (0..n)
                .map(|i| Record {
                    submit_ns: i,
                    latency_ns: u32::MAX,
                    offset,
                    len,
                    file: 0,
                    op: Op::Read as u8,
                    tag: 0,
                    tid: 0,
                    cpu: Some(0),
                })
                .collect(),
            ..TraceData::default()
        }
    }

    fn check(trace: &TraceData, engine: EngineKind) -> Result<()> {
        check_bounds(trace, &Plan::build(trace), engine, None)
    }

    #[test]
    fn lanes_are_bounded_by_what_the_engine_runs() {
        check(&overlapping(1024, 0, 4096), EngineKind::Psync).unwrap();
        let e = check(&overlapping(1025, 0, 4096), EngineKind::Psync).unwrap_err();
        assert!(e.to_string().contains("1025 lanes"), "{e}");
        check(&overlapping(1025, 0, 4096), EngineKind::IoUring).unwrap();
        check(&overlapping(32_768, 0, 4096), EngineKind::IoUring).unwrap();
        let e = check(&overlapping(32_769, 0, 4096), EngineKind::IoUring).unwrap_err();
        assert!(e.to_string().contains("32769 lanes"), "{e}");
    }

    #[test]
    fn buffers_and_ranges_are_bounded() {
        // 16 lanes of 64 MiB = 1 GiB: the most allowed.
        check(&overlapping(16, 0, 64 << 20), EngineKind::IoUring).unwrap();
        let e = check(&overlapping(17, 0, 64 << 20), EngineKind::IoUring).unwrap_err();
        assert!(e.to_string().contains("1.1 GiB"), "{e}");
        let e = check(&overlapping(1, 0, (64 << 20) + 1), EngineKind::IoUring).unwrap_err();
        assert!(e.to_string().contains("record 1"), "{e}");
        // A sync's length needs no buffer, however large.
        let mut sync = overlapping(1, 0, u32::MAX);
        sync.records[0].op = Op::SyncRange as u8;
        check(&sync, EngineKind::Psync).unwrap();
        let e = check(&overlapping(1, i64::MAX as u64, 1), EngineKind::Psync).unwrap_err();
        assert!(e.to_string().contains("2^63"), "{e}");
        let e = check(&overlapping(1, u64::MAX, 1), EngineKind::Psync).unwrap_err();
        assert!(e.to_string().contains("2^63"), "{e}");
    }
}
