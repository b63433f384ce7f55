//! `oltplab device`: prepare the target, run every (profile, queue depth) point, save the result after
//! each point, and print a summary.

mod args;
pub mod config;
mod emulation;
mod print;
mod summary;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use oltplab_core::safety::io_usage;
use oltplab_core::units::{format_bytes, format_count};
use oltplab_core::{Error, Result};
use oltplab_io::engine::probe_io_uring;
use oltplab_io::job::Mix;
use oltplab_io::runner::{run_point, LiveCounters, PointOutcome, LATENCY_LOG_MAX_PER_JOB};
use oltplab_io::target::{self, TargetRequest};
use oltplab_io::{EngineKind, JobSpec};
use oltplab_metrics::env::{available_memory_bytes, Env};
use oltplab_metrics::schema::{now_rfc3339, DeviceInterval};
use oltplab_metrics::{Warning, WarningKind};

use crate::output;
use crate::progress::Progress;
use crate::STOP;
pub use args::{defaults, DeviceArgs, AFTER_DEVICE_HELP};
pub use config::DeviceConfig;
use emulation::{EmulatedDevice, RamDir};
use oltplab_schema::{Backing, DeviceResult, DeviceRunSummary};
use summary::{MeasuredPoint, Totals};

/// Points with fewer I/Os than this get a warning: their p99.9 rests on a handful of samples.
const FEW_SAMPLES: u64 = 1000;
/// Job threads busier than this share of their time are likely limiting the figure themselves.
const CPU_BOUND_UTILISATION: f64 = 0.9;
const LAT_LOG_HEADER: &str = "# oltplab latency log: one measured I/O per line";

pub fn run(args: DeviceArgs) -> Result<()> {
    let config = config::resolve(args)?;
    let outcome = measure(&config)?;
    if let Some(e) = &outcome.doc.summary.emulation {
        output::note!("{}", emulation::summary_line(e));
    }
    print::summary(
        &outcome.doc,
        &outcome.config,
        &outcome.out_dir.join(output::RESULT_FILE),
    );
    output::print_warnings(&outcome.doc.warnings);
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// What [`measure`] measured.
pub struct DeviceOutcome {
    pub doc: DeviceResult,
    /// The configuration as it ran (an unavailable io_uring becomes psync; a RAM backing names
    /// its directory).
    pub config: DeviceConfig,
    /// Where result.json is.
    pub out_dir: PathBuf,
    /// Ctrl-C ended the run early; `doc` holds the points measured before.
    pub interrupted: bool,
}

/// Prepares the target and measures every (workload, queue depth) point of `config`, showing
/// progress; the result is saved after every point and returned.
pub fn measure(config: &DeviceConfig) -> Result<DeviceOutcome> {
    let mut config = config.clone();
    let started_at = now_rfc3339();
    let mut warnings = std::mem::take(&mut config.warnings);

    if config.engine == EngineKind::IoUring {
        if let Err(why) = probe_io_uring() {
            warnings.push(Warning::new(
                WarningKind::IoUringUnavailable,
                format!("{why}: ran with --engine psync instead, one I/O in flight per job"),
            ));
            config.engine = EngineKind::Psync;
            config.queue_depths = vec![1];
        }
    }
    if let Some(json) = &config.json {
        output::check_json_path(json, config.force)?;
    }
    let mut emulation = EmulatedDevice::new(&config)?;
    // Dropped at the end of the run, also on errors: the RAM backing leaves nothing behind.
    let _ram_dir = if config.backing == Some(Backing::Ram) {
        let dir = RamDir::create()?;
        config.target = Some(dir.path().to_path_buf());
        Some(dir)
    } else {
        None
    };
    if let Some(log) = &config.lat_log {
        output::check_writable(log, config.force, is_latency_log)?;
    }

    let target = match config.engine {
        EngineKind::Null => None,
        _ => Some(prepare_target(&config)?),
    };
    let target_path = target.as_ref().map(|t| t.path.clone());
    if let Some(t) = &target {
        warnings.extend(t.warnings.iter().cloned());
    }
    warnings.extend(page_cache_warning(&config));
    let out_dir =
        output::prepare_out_dir(config.out.as_deref(), "device", &started_at, config.force)?;
    let env = Env::collect(target_path.as_deref());

    let mut config_json = serde_json::to_value(&config).expect("config serialises");
    config_json["target"] = serde_json::json!(target_path);
    let mut doc: DeviceResult = output::new_doc(
        "device",
        started_at,
        config_json,
        env,
        DeviceRunSummary::default(),
    );

    let plan: Vec<(usize, u32)> = (0..config.workloads.len())
        .flat_map(|w| config.queue_depths.iter().map(move |&qd| (w, qd)))
        .collect();
    print::header(&config, target_path.as_deref(), &doc.env, plan.len());

    let fd: RawFd = target.as_ref().map_or(-1, |t| t.file.as_raw_fd());
    let mut lat_log = match &config.lat_log {
        Some(path) => Some(open_latency_log(path)?),
        None => None,
    };
    if let Some(at) = &config.start_at {
        wait_until(at)?;
        doc.summary.measure_started_at = Some(now_rfc3339());
    }
    let mut points: Vec<MeasuredPoint> = Vec::new();
    let mut interrupted = false;
    let mut measured_before_s = 0.0;
    for (index, &(workload, qd)) in plan.iter().enumerate() {
        let w = &config.workloads[workload];
        let spec = job_spec(&config, &w.mix, qd, lat_log.is_some(), emulation.as_ref());
        if let Some(e) = emulation.as_mut() {
            e.start_point();
        }
        let label = format!("[{}/{}] {} QD {qd}", index + 1, plan.len(), w.label());
        let outcome = match run_with_progress(&spec, fd, &label) {
            Ok(o) => o,
            Err(e) => {
                // Keep what the earlier points measured, then report the failure.
                finish_doc(&mut doc, &config, &points, &warnings, emulation.as_ref());
                output::save(&doc, &out_dir, config.json.as_deref())?;
                return Err(e);
            }
        };
        // Ctrl-C during the ramp leaves a point with no measured time: it is not a point.
        if !outcome.measured.is_zero() {
            let totals = Totals::from_point(&outcome);
            output::note!("{}", print::point_line(&label, &totals));
            point_warnings(&mut warnings, &config, &w.label(), qd, &totals);
            // A block of one 4 KiB page is one segment whatever the pages.
            if outcome.buffers_small_pages
                && config.huge_pages
                && spec.direct
                && spec.engine != EngineKind::Null
                && w.mix.block_size_bytes > 4096
            {
                add_once(&mut warnings, WarningKind::SmallPageBuffers, format!("the I/O buffers are on 4 KiB pages, not on a 2 MiB huge page (transparent huge pages off, or none free): each {} I/O reaches the device in several memory segments, which virtual disks serve more slowly; allow huge pages with `echo madvise > /sys/kernel/mm/transparent_hugepage/enabled`", format_bytes(u64::from(w.mix.block_size_bytes))));
            }
            if outcome.latency_log_truncated {
                add_once(&mut warnings, WarningKind::LatencyLogTruncated, format!("the latency log reached its limit of {LATENCY_LOG_MAX_PER_JOB} I/Os per job and stopped recording; use a shorter --runtime"));
            }
            let name = w.name.clone();
            if let Some(e) = emulation.as_mut() {
                e.finish_point(name.clone(), qd, config.jobs, &w.mix, totals.iops())?;
            }
            let prefix = format!("{}/qd{qd}", name.as_deref().unwrap_or("job"));
            doc.histograms
                .insert(format!("{prefix}/read"), outcome.read.latency.to_base64());
            doc.histograms
                .insert(format!("{prefix}/write"), outcome.write.latency.to_base64());
            if outcome.flush.ios > 0 {
                doc.histograms
                    .insert(format!("{prefix}/flush"), outcome.flush.latency.to_base64());
            }
            append_intervals(
                &mut doc.intervals,
                &outcome,
                name.as_deref(),
                qd,
                measured_before_s,
            );
            measured_before_s += totals.measured_s;
            if let Some(log) = lat_log.as_mut() {
                write_latency_log(log, &config, index, name.as_deref(), qd, &outcome)?;
            }
            points.push(MeasuredPoint {
                workload,
                qd,
                totals,
            });
        }
        interrupted = outcome.interrupted || STOP.load(Ordering::Relaxed);
        if interrupted {
            warnings.push(Warning::new(
                WarningKind::Interrupted,
                format!(
                    "stopped by Ctrl-C after {} of {} points were measured; the figures cover only those",
                    points.len(),
                    plan.len()
                ),
            ));
        }
        finish_doc(&mut doc, &config, &points, &warnings, emulation.as_ref());
        output::save(&doc, &out_dir, config.json.as_deref())?;
        if interrupted {
            break;
        }
    }
    if let Some(log) = lat_log.as_mut() {
        log.flush().map_err(|e| {
            io_usage(
                config.lat_log.as_deref().unwrap_or(Path::new("")),
                "write",
                &e,
            )
        })?;
    }
    Ok(DeviceOutcome {
        doc,
        config,
        out_dir,
        interrupted,
    })
}

/// Buffered I/O on a region that fits in memory, or buffered writes: the figures may be the
/// page cache's. (A RAM backing is memory on purpose: the emulator, not the cache, sets the pace.)
fn page_cache_warning(config: &DeviceConfig) -> Option<Warning> {
    if config.direct || config.backing == Some(Backing::Ram) {
        return None;
    }
    let reads_may_hit_cache = config.workloads.iter().any(|w| w.mix.read_pct > 0)
        && config.size_bytes < available_memory_bytes();
    let writes = config.workloads.iter().any(|w| w.writes());
    let what = match (reads_may_hit_cache, writes) {
        (true, true) => "buffered reads of a region that fits in memory may be served by the page cache, and buffered writes land in it and reach the device later",
        (true, false) => "buffered reads of a region that fits in memory may be served by the page cache",
        (false, true) => "buffered writes land in the page cache and reach the device later",
        (false, false) => "",
    };
    (!what.is_empty()).then(|| {
        Warning::new(
            WarningKind::PageCache,
            format!(
                "{what} ({} region): the figures may describe memory, not the device; use --direct",
                format_bytes(config.size_bytes)
            ),
        )
    })
}

/// One point's job: `mix` at queue depth `qd` on the run's target.
fn job_spec(
    config: &DeviceConfig,
    mix: &Mix,
    qd: u32,
    keep_latency_log: bool,
    emulation: Option<&EmulatedDevice>,
) -> JobSpec {
    JobSpec {
        mix: *mix,
        queue_depth: qd,
        jobs: config.jobs,
        region_bytes: config.size_bytes,
        runtime: config.runtime,
        ramp: config.ramp,
        rate_iops: config.rate_iops,
        // With a RAM backing the data is copied by pread in the job thread at any queue depth:
        // io_uring would hand tmpfs reads to kernel worker threads, and their scheduling delays
        // are not the device's. The model, not the engine, keeps the I/Os in flight.
        engine: if config.backing == Some(Backing::Ram) {
            EngineKind::Psync
        } else {
            config.engine
        },
        direct: config.direct,
        dsync: config.dsync,
        seed: config.seed,
        keep_latency_log,
        huge_pages: config.huge_pages,
        emulator: emulation.map(|e| e.emulator.clone()),
    }
}

fn prepare_target(config: &DeviceConfig) -> Result<target::PreparedTarget> {
    let path: PathBuf = target::resolve_path(config.target.as_deref(), config.force)?;
    let request = TargetRequest {
        path,
        size_bytes: config.size_bytes,
        writes: config.workloads.iter().any(|w| w.writes()),
        direct: config.direct,
        dsync: config.dsync,
        force: config.force,
    };
    let progress = Progress::new(
        config.size_bytes,
        "filling {prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
    );
    let started = Instant::now();
    let mut filled = 0;
    let prepared = target::prepare(&request, &STOP, &mut |done, total| {
        filled = total;
        progress.set(done, String::new());
    });
    progress.finish();
    if filled > 0 && prepared.is_ok() {
        output::note!(
            "filled {} of {} with random data in {:.1} s",
            format_bytes(filled),
            request.path.display(),
            started.elapsed().as_secs_f64()
        );
    }
    prepared
}

/// Runs one point while a progress line shows its phase and current IOPS.
fn run_with_progress(spec: &JobSpec, fd: RawFd, label: &str) -> Result<PointOutcome> {
    let total_ms = (spec.ramp + spec.runtime).as_millis() as u64;
    let progress = Progress::new(total_ms, "{prefix} [{bar:30}] {msg}");
    progress.set(0, "starting".into());
    let live = LiveCounters::new(spec.jobs);
    let done = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            let start = Instant::now();
            let (mut last_ios, mut last_t) = (0u64, start);
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                let now = Instant::now();
                let ios = live.completed_ios();
                let iops =
                    (ios - last_ios) as f64 / now.duration_since(last_t).as_secs_f64().max(1e-3);
                let elapsed = now.duration_since(start);
                let phase = if elapsed < spec.ramp {
                    "ramp (not measured)"
                } else {
                    "measuring"
                };
                progress.set(
                    elapsed.as_millis() as u64,
                    format!("{label}  {phase}  {} IOPS", format_count(iops)),
                );
                (last_ios, last_t) = (ios, now);
            }
        });
        let outcome = run_point(spec, fd, &STOP, &live);
        done.store(true, Ordering::Relaxed);
        outcome
    });
    progress.finish();
    outcome
}

/// `--start-at`: waits until `at` (a time `config::resolve` checked is ahead); Ctrl-C ends the
/// wait and the command, with nothing measured.
fn wait_until(at: &str) -> Result<()> {
    let t = oltplab_metrics::schema::parse_time(at).expect("--start-at was parsed");
    output::note!("waiting to start measuring at {at} …");
    while let Ok(left) = t.duration_since(std::time::SystemTime::now()) {
        if STOP.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    Ok(())
}

fn finish_doc(
    doc: &mut DeviceResult,
    config: &DeviceConfig,
    points: &[MeasuredPoint],
    warnings: &[Warning],
    emulation: Option<&EmulatedDevice>,
) {
    doc.summary = DeviceRunSummary {
        measure_started_at: doc.summary.measure_started_at.take(),
        measured: summary::build(config, config.ramp_s, points),
        emulation: emulation.map(|e| e.summary.clone()),
    };
    let mut all_read = oltplab_metrics::LatencyHistogram::new();
    let mut all_write = oltplab_metrics::LatencyHistogram::new();
    let mut all_flush = oltplab_metrics::LatencyHistogram::new();
    for p in points {
        all_read.add(&p.totals.read.latency);
        all_write.add(&p.totals.write.latency);
        all_flush.add(&p.totals.flush.latency);
    }
    doc.histograms.insert("read".into(), all_read.to_base64());
    doc.histograms.insert("write".into(), all_write.to_base64());
    if all_flush.count() > 0 {
        doc.histograms.insert("flush".into(), all_flush.to_base64());
    }
    doc.warnings = warnings.to_vec();
    if let Some(e) = emulation {
        doc.warnings.extend(e.warnings());
    }
}

fn add_once(warnings: &mut Vec<Warning>, kind: WarningKind, message: String) {
    if !warnings.iter().any(|w| w.kind == kind) {
        warnings.push(Warning::new(kind, message));
    }
}

fn point_warnings(
    warnings: &mut Vec<Warning>,
    config: &DeviceConfig,
    label: &str,
    qd: u32,
    t: &Totals,
) {
    if t.ios() < FEW_SAMPLES {
        add_once(
            warnings,
            WarningKind::FewSamples,
            format!("{label} QD {qd} completed only {} I/Os: its high percentiles rest on a few samples; use a longer --runtime", t.ios()),
        );
    }
    let cpu = t.cpu_summary(config.jobs);
    // A rate-limited job spins while it waits for the next due time, and so does an emulated
    // device's job while it waits for the modelled completion: they look busy, so no warning then.
    if config.engine != EngineKind::Null
        && config.rate_iops.is_none()
        && config.emulate.is_none()
        && cpu.jobs_utilisation > CPU_BOUND_UTILISATION
    {
        add_once(
            warnings,
            WarningKind::CpuBound,
            format!(
                "at {label} QD {qd} the I/O threads were busy {:.0} % of the time: the figure may be limited by the CPU, not the device; add --jobs",
                cpu.jobs_utilisation * 100.0
            ),
        );
    }
    if let Some(rate) = config.rate_iops {
        let wanted = rate.saturating_mul(config.jobs as u64) as f64;
        if t.iops() < wanted * 0.97 {
            add_once(
                warnings,
                WarningKind::RateNotMet,
                format!(
                    "{label} QD {qd} reached {} IOPS of the {} asked for: the device (or the queue depth) cannot sustain the rate, and the latencies include the wait",
                    format_count(t.iops()),
                    format_count(wanted)
                ),
            );
        }
    }
}

fn append_intervals(
    into: &mut Vec<DeviceInterval>,
    p: &PointOutcome,
    profile: Option<&str>,
    qd: u32,
    offset_s: f64,
) {
    let mut t_s = offset_s;
    for i in &p.intervals {
        let secs = i.duration_ns as f64 / 1e9;
        if secs <= 0.0 {
            continue;
        }
        t_s += secs;
        let ios = i.read_ios + i.write_ios;
        into.push(DeviceInterval {
            t_s: (t_s * 1000.0).round() / 1000.0,
            profile: profile.map(String::from),
            qd,
            iops: ios as f64 / secs,
            read_iops: i.read_ios as f64 / secs,
            write_iops: i.write_ios as f64 / secs,
            read_bw_bytes: i.read_bytes as f64 / secs,
            write_bw_bytes: i.write_bytes as f64 / secs,
            lat_ns_mean: if ios > 0 {
                i.latency_sum_ns as f64 / ios as f64
            } else {
                0.0
            },
            lat_ns_p99: i.latency_p99_ns,
            lat_ns_max: i.latency_max_ns,
        });
    }
}

fn is_latency_log(path: &Path) -> bool {
    std::fs::read(path)
        .map(|bytes| bytes.starts_with(LAT_LOG_HEADER.as_bytes()))
        .unwrap_or(false)
}

fn open_latency_log(path: &Path) -> Result<BufWriter<File>> {
    let file = File::create(path).map_err(|e| io_usage(path, "create", &e))?;
    let mut log = BufWriter::with_capacity(1 << 20, file);
    writeln!(
        log,
        "{LAT_LOG_HEADER}\npoint,profile,qd,job,completed_ns,op,latency_ns"
    )
    .map_err(|e| io_usage(path, "write", &e))?;
    Ok(log)
}

fn write_latency_log(
    log: &mut BufWriter<File>,
    config: &DeviceConfig,
    index: usize,
    profile: Option<&str>,
    qd: u32,
    p: &PointOutcome,
) -> Result<()> {
    let path = config.lat_log.as_deref().unwrap_or(Path::new(""));
    let profile = profile.unwrap_or("");
    for r in &p.latency_log {
        writeln!(
            log,
            "{index},{profile},{qd},{},{},{},{}",
            r.job,
            r.completed_ns,
            r.op.name(),
            r.latency_ns
        )
        .map_err(|e| io_usage(path, "write", &e))?;
    }
    Ok(())
}
