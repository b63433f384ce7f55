//! Runs one measurement point: `jobs` threads, each with its own engine, buffers and pattern, keep
//! `queue_depth` I/Os in flight (or issue them at `rate_iops`) for ramp + runtime, and measure every
//! I/O. Only I/Os that complete after the ramp and before the end count, as in fio.
//!
//! Latency runs from an I/O's start to the moment its completion is reaped. One clock read per reap
//! serves as the completion time of the whole batch and the start time of the I/Os issued right
//! after, which keeps the tool's cost per I/O far below the device's. With `rate_iops`, the start is
//! the I/O's *intended* time, so a device that falls behind shows its queueing in the latency
//! (no coordinated omission).

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use oltplab_core::error::strerror;
use oltplab_core::units::format_bytes;
use oltplab_core::{Error, Result};
use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::LatencyHistogram;

use crate::buffers::IoBuffers;
use crate::engine::{AnyEngine, Completion, EmulatedEngine, IoEngine, Op};
use crate::job::JobSpec;
use crate::pattern::PatternGen;

/// Entries of the raw latency log per job before it stops recording (24 bytes each).
pub const LATENCY_LOG_MAX_PER_JOB: usize = 10_000_000;

/// Counters the progress display reads while the jobs run.
pub struct LiveCounters {
    completed: Vec<Padded>,
}

#[repr(align(64))]
struct Padded(AtomicU64);

impl LiveCounters {
    pub fn new(jobs: u32) -> Self {
        Self {
            completed: (0..jobs).map(|_| Padded(AtomicU64::new(0))).collect(),
        }
    }

    /// I/Os completed so far by all jobs, ramp included.
    pub fn completed_ios(&self) -> u64 {
        self.completed
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum()
    }
}

/// Reads or writes of a point.
#[derive(Clone, Default)]
pub struct OpTotals {
    pub ios: u64,
    pub bytes: u64,
    pub latency: LatencyHistogram,
}

impl OpTotals {
    fn add(&mut self, other: &OpTotals) {
        self.ios += other.ios;
        self.bytes += other.bytes;
        self.latency.add(&other.latency);
    }
}

/// One second (the last may be shorter) of the measured time.
#[derive(Clone, Debug, Default)]
pub struct IntervalTotals {
    pub duration_ns: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub latency_sum_ns: u64,
    pub latency_max_ns: u64,
    /// With several jobs: the highest job p99 (an upper bound of the true p99).
    pub latency_p99_ns: u64,
}

/// One measured I/O of the raw latency log.
#[derive(Clone, Copy, Debug)]
pub struct LatencyRecord {
    pub job: u32,
    /// Completion time since the end of the ramp.
    pub completed_ns: u64,
    pub op: Op,
    pub latency_ns: u64,
}

/// What a point measured.
#[derive(Default)]
pub struct PointOutcome {
    pub read: OpTotals,
    pub write: OpTotals,
    /// fsync/fdatasync calls (`Mix::flush`); their bytes are 0.
    pub flush: OpTotals,
    pub measured: Duration,
    /// CPU time of the job threads during the measured time.
    pub jobs_cpu: CpuTime,
    /// CPU time of the whole process during the measured time (adds io_uring's worker threads).
    pub process_cpu: CpuTime,
    pub intervals: Vec<IntervalTotals>,
    pub latency_log: Vec<LatencyRecord>,
    pub latency_log_truncated: bool,
    /// Ctrl-C ended the point before its runtime.
    pub interrupted: bool,
    /// Some job's I/O buffers were on 4 KiB pages, not on a huge page (see `buffers.rs`).
    pub buffers_small_pages: bool,
}

impl PointOutcome {
    pub fn ios(&self) -> u64 {
        self.read.ios + self.write.ios
    }
}

/// Runs `spec` against the open file `fd`. `stop` ends the point early (Ctrl-C); what was measured
/// until then is returned with `interrupted` set.
pub fn run_point(
    spec: &JobSpec,
    fd: RawFd,
    stop: &AtomicBool,
    live: &LiveCounters,
) -> Result<PointOutcome> {
    assert!(spec.blocks() > 0 && spec.queue_depth > 0 && spec.jobs > 0);
    let barrier = Barrier::new(spec.jobs as usize);
    let outcomes: Vec<Result<(JobOutcome, bool)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.jobs)
            .map(|job| {
                let barrier = &barrier;
                let counter = &live.completed[job as usize].0;
                std::thread::Builder::new()
                    .name(format!("oltplab-job{job}"))
                    .spawn_scoped(scope, move || {
                        let seed = spec.seed.wrapping_add(job as u64 * 0x9E37_79B9_7F4A_7C15);
                        let buffers = IoBuffers::with_pages(
                            spec.mix.block_size_bytes as usize,
                            spec.queue_depth as usize,
                            seed,
                            spec.huge_pages,
                        );
                        let huge_pages = buffers.huge_pages();
                        let engine = open_engine(spec, fd, &buffers);
                        // Every job waits here even if its engine failed, so no job waits forever.
                        barrier.wait();
                        let job_ctx = JobContext {
                            spec,
                            job,
                            seed,
                            stop,
                            counter,
                        };
                        match engine? {
                            AnyEngine::IoUring(mut e) => job_ctx.run(&mut *e),
                            AnyEngine::Psync(mut e) => job_ctx.run(&mut e),
                            AnyEngine::Null(mut e) => job_ctx.run(&mut e),
                            AnyEngine::Emulated(mut e) => job_ctx.run(&mut *e),
                        }
                        .map(|outcome| (outcome, huge_pages))
                        // The engine is dropped before the buffers it uses.
                    })
                    .expect("spawning a job thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::failed("a job thread panicked")))
            })
            .collect()
    });

    let mut point = PointOutcome::default();
    let mut measured_ns = 0u64;
    for outcome in outcomes {
        let (job, huge_pages) = outcome?;
        point.buffers_small_pages |= !huge_pages;
        point.read.add(&job.read);
        point.write.add(&job.write);
        point.flush.add(&job.flush);
        point.jobs_cpu = point.jobs_cpu.plus(&job.cpu);
        point.process_cpu = point.process_cpu.plus(&job.process_cpu);
        measured_ns = measured_ns.max(job.measured_ns);
        point.interrupted |= job.interrupted;
        point.latency_log_truncated |= job.latency_log_truncated;
        point.latency_log.extend(job.latency_log);
        merge_intervals(&mut point.intervals, &job.intervals);
    }
    point.measured = Duration::from_nanos(measured_ns);
    point.latency_log.sort_by_key(|r| r.completed_ns);
    Ok(point)
}

fn merge_intervals(into: &mut Vec<IntervalTotals>, from: &[IntervalTotals]) {
    if into.len() < from.len() {
        into.resize(from.len(), IntervalTotals::default());
    }
    for (a, b) in into.iter_mut().zip(from) {
        a.duration_ns = a.duration_ns.max(b.duration_ns);
        a.read_ios += b.read_ios;
        a.write_ios += b.write_ios;
        a.read_bytes += b.read_bytes;
        a.write_bytes += b.write_bytes;
        a.latency_sum_ns += b.latency_sum_ns;
        a.latency_max_ns = a.latency_max_ns.max(b.latency_max_ns);
        a.latency_p99_ns = a.latency_p99_ns.max(b.latency_p99_ns);
    }
}

struct JobOutcome {
    read: OpTotals,
    write: OpTotals,
    flush: OpTotals,
    cpu: CpuTime,
    /// Measured by job 0 only, so that adding the jobs' outcomes counts it once.
    process_cpu: CpuTime,
    measured_ns: u64,
    intervals: Vec<IntervalTotals>,
    latency_log: Vec<LatencyRecord>,
    latency_log_truncated: bool,
    interrupted: bool,
}

struct JobContext<'a> {
    spec: &'a JobSpec,
    job: u32,
    seed: u64,
    stop: &'a AtomicBool,
    counter: &'a AtomicU64,
}

/// The per-second series of one job.
struct IntervalSeries {
    done: Vec<IntervalTotals>,
    current: IntervalTotals,
    latency: LatencyHistogram,
}

impl IntervalSeries {
    const NS: u64 = 1_000_000_000;

    /// Closes every second that ended before `t_ns` (time since the ramp's end).
    #[inline]
    fn roll_to(&mut self, t_ns: u64) {
        while t_ns >= (self.done.len() as u64 + 1) * Self::NS {
            self.close(Self::NS);
        }
    }

    fn close(&mut self, duration_ns: u64) {
        let mut finished = std::mem::take(&mut self.current);
        finished.duration_ns = duration_ns;
        finished.latency_p99_ns = if self.latency.count() > 0 {
            self.latency.value_at_quantile(0.99)
        } else {
            0
        };
        self.latency.reset();
        self.done.push(finished);
    }

    /// Ends the series at `end_ns`; a last partial second is kept if it holds any time.
    fn finish(mut self, end_ns: u64) -> Vec<IntervalTotals> {
        self.roll_to(end_ns);
        let rest = end_ns.saturating_sub(self.done.len() as u64 * Self::NS);
        if rest > 0 {
            self.close(rest);
        }
        self.done
    }
}

impl JobContext<'_> {
    fn run<E: IoEngine>(&self, engine: &mut E) -> Result<JobOutcome> {
        let spec = self.spec;
        let qd = spec.queue_depth as usize;
        let block_size = spec.mix.block_size_bytes;
        let blocks = spec.blocks();
        // Sequential streams of different jobs start spread over the region, not on the same blocks.
        let start_block = blocks / spec.jobs as u64 * self.job as u64;
        let mut pattern = PatternGen::new(&spec.mix, blocks, self.seed, start_block);

        let ramp_end_ns = spec.ramp.as_nanos() as u64;
        let mut end_ns = ramp_end_ns + spec.runtime.as_nanos() as u64;
        let intended_ns = |k: u64| {
            spec.rate_iops
                .map(|rate| (k as u128 * 1_000_000_000 / rate as u128) as u64)
        };

        let mut free: Vec<u32> = (0..qd as u32).rev().collect();
        let mut start_ns = vec![0u64; qd];
        let mut op_of = vec![Op::Read; qd];
        let mut offset_of = vec![0u64; qd];
        let mut completions: Vec<Completion> = Vec::with_capacity(qd);
        let mut in_flight = 0usize;
        // With `Mix::flush`: writes since the last flush, and whether a flush is due (waiting for
        // the writes in flight to drain) or in flight. Nothing else is issued meanwhile.
        let mut unflushed_writes = 0u32;
        let mut flush_due = false;
        let mut flush_in_flight = false;
        let mut issued = 0u64;
        let mut completed = 0u64;
        let mut failure: Option<Error> = None;
        let mut interrupted = false;

        let mut read = OpTotals::default();
        let mut write = OpTotals::default();
        let mut flush = OpTotals::default();
        let mut series = IntervalSeries {
            done: Vec::with_capacity(spec.runtime.as_secs() as usize + 2),
            current: IntervalTotals::default(),
            latency: LatencyHistogram::new(),
        };
        let mut latency_log = Vec::new();
        let mut latency_log_truncated = false;
        let mut cpu_at_measure_start: Option<(CpuTime, CpuTime)> = None;
        let mut cpu_at_measure_end: Option<(CpuTime, CpuTime)> = None;
        let cpu_now = || {
            let process = if self.job == 0 {
                CpuTime::process()
            } else {
                CpuTime::default()
            };
            (CpuTime::thread(), process)
        };
        let mut engine_errors = 0u32;

        let t0 = Instant::now();
        let clock = || t0.elapsed().as_nanos() as u64;
        let mut now = 0u64;
        if ramp_end_ns == 0 {
            cpu_at_measure_start = Some(cpu_now());
        }
        loop {
            if now < end_ns && self.stop.load(Ordering::Relaxed) {
                end_ns = now;
                interrupted = true;
            }
            // Fill the free slots, at the intended times if rate-limited.
            while now < end_ns && failure.is_none() && !flush_due && !flush_in_flight {
                let Some(&slot) = free.last() else { break };
                let start = match intended_ns(issued) {
                    Some(t) if t > now => break,
                    Some(t) => t,
                    None => now,
                };
                free.pop();
                let (op, offset) = pattern.next_io();
                start_ns[slot as usize] = start;
                op_of[slot as usize] = op;
                offset_of[slot as usize] = offset;
                if let Err(e) = engine.queue(slot, op, offset) {
                    free.push(slot);
                    failure = Some(e);
                    end_ns = now;
                    break;
                }
                in_flight += 1;
                issued += 1;
                if let (Op::Write, Some(f)) = (op, spec.mix.flush) {
                    unflushed_writes += 1;
                    flush_due = unflushed_writes >= f.every_writes;
                }
            }
            // The writes before a flush have completed: flush, as a database commits.
            if flush_due && in_flight == 0 && failure.is_none() {
                let slot = free.pop().expect("all slots are free once drained");
                let op = Op::from(spec.mix.flush.expect("flush_due needs a flush").kind);
                start_ns[slot as usize] = now;
                op_of[slot as usize] = op;
                offset_of[slot as usize] = 0;
                if let Err(e) = engine.queue(slot, op, 0) {
                    free.push(slot);
                    failure = Some(e);
                    end_ns = now;
                } else {
                    in_flight += 1;
                    flush_due = false;
                    flush_in_flight = true;
                    unflushed_writes = 0;
                }
            }
            if in_flight == 0 {
                if now >= end_ns || failure.is_some() {
                    break;
                }
                // Rate-limited and ahead of schedule: sleep until the next I/O is due.
                let due = intended_ns(issued).unwrap_or(now).min(end_ns);
                sleep_until(t0, due);
                now = clock();
                continue;
            }
            let timeout = match intended_ns(issued) {
                Some(t) if !free.is_empty() && t > now && now < end_ns => {
                    Some(Duration::from_nanos(t - now))
                }
                _ => None,
            };
            if let Err(e) = engine.submit_and_wait(1, timeout, &mut completions) {
                // Stop issuing but keep reaping: buffers must not be freed under in-flight I/O.
                // An engine that cannot even reap is left to its Drop, which waits as well.
                engine_errors += 1;
                failure.get_or_insert(e);
                end_ns = end_ns.min(now);
                if engine_errors > 100 {
                    break;
                }
                continue;
            }
            now = clock();
            if cpu_at_measure_start.is_none() && now >= ramp_end_ns {
                cpu_at_measure_start = Some(cpu_now());
            }
            let counts = now > ramp_end_ns && now <= end_ns;
            if counts {
                series.roll_to(now - ramp_end_ns);
            }
            for c in completions.drain(..) {
                let slot = c.slot as usize;
                in_flight -= 1;
                free.push(c.slot);
                completed += 1;
                let op = op_of[slot];
                if op.is_flush() {
                    flush_in_flight = false;
                    if c.result < 0 {
                        if failure.is_none() {
                            failure = Some(io_failure(c.result, op, 0, 0));
                            end_ns = now;
                        }
                    } else if counts {
                        flush.ios += 1;
                        flush.latency.record(now.saturating_sub(start_ns[slot]));
                    }
                    continue;
                }
                if c.result != block_size as i32 {
                    if failure.is_none() {
                        failure = Some(io_failure(
                            c.result,
                            op_of[slot],
                            offset_of[slot],
                            block_size,
                        ));
                        end_ns = now; // stop issuing; drain what is in flight before returning
                    }
                    continue;
                }
                if !counts {
                    continue;
                }
                let latency_ns = now.saturating_sub(start_ns[slot]);
                let totals = match op_of[slot] {
                    Op::Read => {
                        series.current.read_ios += 1;
                        series.current.read_bytes += block_size as u64;
                        &mut read
                    }
                    Op::Write => {
                        series.current.write_ios += 1;
                        series.current.write_bytes += block_size as u64;
                        &mut write
                    }
                    Op::Fsync | Op::Fdatasync => unreachable!("flushes are counted above"),
                };
                totals.ios += 1;
                totals.bytes += block_size as u64;
                totals.latency.record(latency_ns);
                series.latency.record(latency_ns);
                series.current.latency_sum_ns += latency_ns;
                series.current.latency_max_ns = series.current.latency_max_ns.max(latency_ns);
                if spec.keep_latency_log {
                    if latency_log.len() < LATENCY_LOG_MAX_PER_JOB {
                        latency_log.push(LatencyRecord {
                            job: self.job,
                            completed_ns: now - ramp_end_ns,
                            op: op_of[slot],
                            latency_ns,
                        });
                    } else {
                        latency_log_truncated = true;
                    }
                }
            }
            self.counter.store(completed, Ordering::Relaxed);
            if now >= end_ns && cpu_at_measure_end.is_none() {
                cpu_at_measure_end = Some(cpu_now());
            }
            if now >= end_ns && in_flight == 0 {
                break;
            }
        }
        if let Some(failure) = failure {
            return Err(failure);
        }
        let measured_ns = end_ns.saturating_sub(ramp_end_ns);
        let (thread_end, process_end) = cpu_at_measure_end.unwrap_or_else(cpu_now);
        let (cpu, process_cpu) = cpu_at_measure_start
            .map(|(thread, process)| (thread_end.since(&thread), process_end.since(&process)))
            .unwrap_or_default();
        Ok(JobOutcome {
            read,
            write,
            flush,
            process_cpu,
            cpu,
            measured_ns,
            intervals: series.finish(measured_ns),
            latency_log,
            latency_log_truncated,
            interrupted,
        })
    }
}

/// Sleeps until `t0 + due_ns`, spinning for the last stretch because sleep overshoots by ~50–100 µs.
fn sleep_until(t0: Instant, due_ns: u64) {
    const SPIN_NS: u64 = 150_000;
    let now = t0.elapsed().as_nanos() as u64;
    if due_ns > now + SPIN_NS {
        std::thread::sleep(Duration::from_nanos(due_ns - now - SPIN_NS));
    }
    while (t0.elapsed().as_nanos() as u64) < due_ns {
        std::hint::spin_loop();
    }
}

/// The error for an I/O that failed or came back short.
fn io_failure(result: i32, op: Op, offset: u64, block_size: u32) -> Error {
    let what = if op.is_flush() {
        format!("an {} of the target", op.name())
    } else {
        format!(
            "a {} {} at offset {offset}",
            format_bytes(block_size as u64),
            op.name()
        )
    };
    match -result {
        libc::EINVAL => Error::usage(format!(
            "the kernel rejected {what} as invalid: direct I/O needs the block size and offsets aligned to the device's logical block size; use a multiple of 4k for --bs, or --buffered"
        )),
        libc::ENOSPC => Error::usage(format!("no space left on the device for {what}: free some space or use a smaller --size")),
        errno if errno > 0 => Error::failed(format!("the device failed {what}: {}", strerror(errno))),
        _ => Error::failed(format!(
            "{what} transferred only {result} bytes: the target is shorter than expected; recreate it or lower --size"
        )),
    }
}

/// The engine for one job of `spec`: its engine kind, wrapped in an [`EmulatedEngine`] when the
/// job runs on an emulated device. Here, above both, so that the engine does not import the job.
fn open_engine(spec: &JobSpec, fd: RawFd, buffers: &IoBuffers) -> Result<AnyEngine> {
    let engine = AnyEngine::open(spec.engine, fd, buffers, spec.direct)?;
    Ok(match &spec.emulator {
        Some(emulator) if !emulator.spec().is_host() => {
            AnyEngine::Emulated(Box::new(EmulatedEngine::new(
                engine,
                emulator.clone(),
                buffers.block_size_bytes() as u64,
                buffers.slots(),
                0,
                spec.dsync,
            )))
        }
        _ => engine,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineKind;
    use crate::job::{Flush, FlushKind, Mix};
    use crate::target::{prepare, TargetRequest};
    use std::os::fd::AsRawFd;

    fn spec(engine: EngineKind, qd: u32, runtime_ms: u64, ramp_ms: u64) -> JobSpec {
        JobSpec {
            mix: Mix {
                block_size_bytes: 4096,
                read_pct: 70,
                random_pct: 100,
                flush: None,
            },
            queue_depth: qd,
            jobs: 1,
            region_bytes: 8 << 20,
            runtime: Duration::from_millis(runtime_ms),
            ramp: Duration::from_millis(ramp_ms),
            rate_iops: None,
            engine,
            direct: false,
            dsync: false,
            seed: 1,
            keep_latency_log: false,
            huge_pages: true,
            emulator: None,
        }
    }

    #[test]
    fn writes_are_flushed_every_n_and_flushes_are_timed_apart() {
        let (dir, target) = scratch_target("flush");
        let fd = target.file.as_raw_fd();
        for (engine, qd, every, kind) in [
            (EngineKind::Null, 4, 1, FlushKind::Fdatasync),
            (EngineKind::Null, 4, 4, FlushKind::Fsync),
            (EngineKind::Psync, 1, 1, FlushKind::Fdatasync),
            (EngineKind::IoUring, 8, 2, FlushKind::Fdatasync),
        ] {
            let mut s = spec(engine, qd, 150, 0);
            s.mix.read_pct = 0;
            s.mix.random_pct = 0;
            s.mix.flush = Some(Flush {
                every_writes: every,
                kind,
            });
            let p = run(&s, fd);
            let (writes, flushes) = (p.write.ios, p.flush.ios);
            assert!(writes > 10 && flushes > 0, "{engine:?}: {writes} {flushes}");
            // Every flush follows `every` writes; the window may cut a group at either end.
            let expected = writes as f64 / every as f64;
            assert!(
                (flushes as f64 - expected).abs() <= 2.0 + 0.02 * expected,
                "{engine:?} every {every}: {writes} writes, {flushes} flushes"
            );
            assert_eq!(p.flush.bytes, 0);
            assert_eq!(p.flush.latency.count(), flushes);
            assert_eq!(p.read.ios, 0, "flushes are not counted as reads");
        }
        drop(target);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// An 8 MiB target file of oltplab's in a fresh directory of its own (the caller removes it).
    fn scratch_target(name: &str) -> (std::path::PathBuf, crate::target::PreparedTarget) {
        let dir =
            std::env::temp_dir().join(format!("oltplab-runner-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let req = TargetRequest {
            path: dir.join("t.dat"),
            size_bytes: 8 << 20,
            writes: true,
            direct: false,
            dsync: false,
            force: false,
        };
        let target = prepare(&req, &AtomicBool::new(false), &mut |_, _| {}).unwrap();
        (dir, target)
    }

    fn run(spec: &JobSpec, fd: RawFd) -> PointOutcome {
        run_point(
            spec,
            fd,
            &AtomicBool::new(false),
            &LiveCounters::new(spec.jobs),
        )
        .unwrap()
    }

    #[test]
    fn null_engine_measures_only_the_runtime_after_the_ramp() {
        let mut s = spec(EngineKind::Null, 8, 300, 200);
        s.jobs = 2;
        let p = run(&s, -1);
        assert!(
            (p.measured.as_secs_f64() - 0.3).abs() < 0.01,
            "{:?}",
            p.measured
        );
        assert!(p.ios() > 10_000, "{}", p.ios());
        let read_share = p.read.ios as f64 / p.ios() as f64;
        assert!((read_share - 0.7).abs() < 0.01, "{read_share}");
        assert_eq!(p.read.latency.count() + p.write.latency.count(), p.ios());
        let interval_ios: u64 = p.intervals.iter().map(|i| i.read_ios + i.write_ios).sum();
        assert_eq!(
            interval_ios,
            p.ios(),
            "every measured I/O is in exactly one interval"
        );
        // Two busy job threads for 0.3 s use CPU, but on a loaded machine (CI, parallel tests)
        // they share the cores: check it is counted and bounded by their wall time, not a share.
        let cpu_s = p.jobs_cpu.total_s();
        assert!(
            cpu_s > 0.03 && cpu_s < 2.0 * 0.3 + 0.1,
            "two busy job threads for 0.3 s: {:?}",
            p.jobs_cpu
        );
    }

    #[test]
    fn rate_limit_holds_and_latency_counts_from_the_intended_start() {
        let mut s = spec(EngineKind::Null, 4, 1000, 0);
        s.rate_iops = Some(2000);
        let p = run(&s, -1);
        let iops = p.ios() as f64 / p.measured.as_secs_f64();
        assert!((iops - 2000.0).abs() < 40.0, "{iops}");
        // The null engine completes at once, so latency is only the lateness of the issuing loop.
        assert!(
            p.read.latency.stats().p50 < 200_000,
            "{:?}",
            p.read.latency.stats()
        );
    }

    #[test]
    fn an_io_issued_late_counts_its_latency_from_its_intended_start() {
        // A rate no loop can keep (1 per ns) at QD 1: every I/O is issued late, more so as time
        // passes. Counting from the actual start would report ~100 ns; from the intended start, the
        // median lateness is a good part of the runtime.
        let mut s = spec(EngineKind::Null, 1, 300, 0);
        s.rate_iops = Some(1_000_000_000);
        let p = run(&s, -1);
        let p50 = p.read.latency.stats().p50.max(p.write.latency.stats().p50);
        assert!(p50 > 50_000_000, "p50 {p50} ns");
    }

    #[test]
    fn real_io_through_io_uring_and_psync() {
        let (dir, target) = scratch_target("real");
        for engine in [EngineKind::IoUring, EngineKind::Psync] {
            let qd = if engine == EngineKind::Psync { 1 } else { 8 };
            let mut s = spec(engine, qd, 300, 50);
            s.keep_latency_log = true;
            let p = run(&s, target.file.as_raw_fd());
            assert!(p.ios() > 100, "{engine:?}: {}", p.ios());
            assert!(p.read.ios > 0 && p.write.ios > 0);
            assert_eq!(p.latency_log.len() as u64, p.ios());
            // Only I/Os completing after the ramp and within the runtime are measured.
            let runtime_ns = s.runtime.as_nanos() as u64;
            assert!(p
                .latency_log
                .iter()
                .all(|r| r.completed_ns > 0 && r.completed_ns <= runtime_ns));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failing_io_is_reported_not_hidden() {
        // Reads beyond the end of an empty file come back short.
        let dir = std::env::temp_dir().join(format!("oltplab-runner-short-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("empty"), b"").unwrap();
        let file = std::fs::File::open(dir.join("empty")).unwrap();
        let mut s = spec(EngineKind::Psync, 1, 200, 0);
        s.mix.read_pct = 100;
        let err = run_point(
            &s,
            file.as_raw_fd(),
            &AtomicBool::new(false),
            &LiveCounters::new(1),
        )
        .err()
        .unwrap();
        assert_eq!(err.exit_code(), 1);
        assert!(err.to_string().contains("shorter than expected"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
