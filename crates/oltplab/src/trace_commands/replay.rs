//! `oltplab trace replay`: replay a trace on copies of its files and save a `replay` result.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use clap::Args;
use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{Emulator, Spec};
use oltplab_io::EngineKind;
use oltplab_metrics::env::Env;
use oltplab_metrics::schema::{now_rfc3339, ResultDoc};
use oltplab_metrics::LatencyNs;
use oltplab_trace::convert::{self, Format};
use oltplab_trace::replay::plan::{require_cpus, Bunching};
use oltplab_trace::replay::sim::{replay_virtual_with, ReplayOrder};
use oltplab_trace::replay::{replay_trace, ReplayEvent, ReplayMode, ReplayOptions, ReplayOutcome};
use serde_json::json;

use super::format_arg;
use crate::output::{self, note, say};
use crate::progress::Progress;
use crate::STOP;
use oltplab_schema::ReplayResult;

const AFTER_REPLAY_HELP: &str = "\
Each traced thread becomes a lane whose I/Os run strictly one after another; lanes run side by side,
so the trace's per-thread order and its concurrency are kept. --as-fast-as-possible (the default)
drops the time between I/Os; --time-scale X issues each I/O at X times its traced time (2 = half
speed). The replay works on its own copies of the traced files under --target (created, marked and
filled with random data up to the highest byte the trace touches; reused by later replays) and never
opens the traced files. Reads and writes that O_DIRECT cannot take (not aligned to the file system's
block) go through the page cache and are counted as unaligned_ops. IOPS counts reads and writes.
A trace is untrusted input: a read or write over 64 MiB, more lanes than the engine runs (1024 with
psync, one thread each; 32768 with io_uring) or over 1 GiB of lane buffers is refused before any
copy is filled, naming the record or the count.

--virtual (with --emulate) replays in virtual time on the device model instead: no copies, no I/O,
no waiting — a trace-driven simulation that takes the emulator's timing error out of the bound.
--order causal (with --virtual) starts an I/O only after every I/O that had completed before it
started in the trace, so I/O the database serialised stays serial; lanes (the default) keeps each
thread's order and lets threads run free. --order btreplay replays as blktrace's btrecord and
btreplay -N do: each CPU's I/O (the CPU each call was issued on, which traces of format
version 1 and fio or MSR imports lack) is cut into bunches of at most --bunch-size I/Os within
--bunch-time, and each CPU's stream submits its bunches back to back with one asynchronous
submit each, waiting only when all its --iocbs control blocks are in flight (io_uring in real
time, or --virtual).";

#[derive(Args, Debug)]
#[command(after_help = AFTER_REPLAY_HELP)]
pub struct ReplayArgs {
    /// Trace file (oltplab's, or any format --from names)
    pub file: PathBuf,

    /// Directory for the replay's copies of the traced files (new, empty, or made by oltplab); not
    /// needed with --virtual
    #[arg(long, value_name = "DIR", required_unless_present = "virtual_time")]
    pub target: Option<PathBuf>,

    /// Replay in virtual time on the --emulate device's model: no real I/O and no waiting
    #[arg(long = "virtual", conflicts_with_all = ["time_scale", "target", "buffered", "workers"])]
    pub virtual_time: bool,

    /// lanes: each traced thread in order, threads free of each other; causal: an I/O waits for
    /// every I/O that had completed before it started in the trace (with --virtual); btreplay:
    /// each CPU's bunches submitted back to back, as btreplay -N does
    #[arg(long, default_value = "lanes", value_parser = ReplayOrder::NAMES)]
    pub order: String,

    /// btreplay: an I/O issued more than this after its bunch's first starts a new bunch
    /// (btrecord's --max-bunch-time) [default: 10ms]
    #[arg(long, value_name = "DURATION", value_parser = parse_bunch_time)]
    pub bunch_time: Option<u64>,

    /// btreplay: I/Os per bunch at most, 1 to 512 (btrecord's --max-pkts) [default: 8]
    #[arg(long, value_name = "N")]
    pub bunch_size: Option<u32>,

    /// btreplay: I/Os in flight per CPU stream at most (btreplay's pool of I/O control blocks)
    /// [default: 512]
    #[arg(long, value_name = "N")]
    pub iocbs: Option<u32>,

    /// Drop the time between I/Os: each lane issues its next I/O when the previous one completed (default)
    #[arg(long, conflicts_with = "time_scale")]
    pub as_fast_as_possible: bool,

    /// Keep the trace's timing, scaled: I/Os start at X × their traced time (1 = as captured, 0.5 = twice as fast)
    #[arg(long, value_name = "X")]
    pub time_scale: Option<f64>,

    /// Replay through an emulated device: each I/O also waits for its modelled completion (see
    /// `oltplab devices`); a layout (--layout 'data=…,log=…') puts each file on the device the run
    /// put it on
    #[arg(long, value_name = "SPEC", visible_alias = "layout", value_parser = crate::emulate::spec_arg)]
    pub emulate: Option<Spec>,

    /// Format of FILE [default: detected from its first bytes]
    #[arg(long, value_name = "FORMAT", value_parser = oltplab_trace::convert::Format::NAMES)]
    pub from: Option<String>,

    /// How I/O is issued: io_uring (lanes multiplexed on few threads) or psync (one thread per lane)
    #[arg(long, default_value = "io_uring", value_parser = ["io_uring", "psync"])]
    pub engine: String,

    /// io_uring threads [default: one per 64 lanes, at most one per core]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub workers: Option<u32>,

    /// Go through the page cache instead of O_DIRECT
    #[arg(long)]
    pub buffered: bool,

    /// Seed of the emulated device's model
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Also write the JSON result to FILE; - for standard output (human output then goes to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Directory for this run's result.json [default: ./oltplab-results/replay-<time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

fn parse_bunch_time(text: &str) -> std::result::Result<u64, String> {
    oltplab_core::units::parse_duration(text).map(|d| d.as_nanos() as u64)
}

/// A validated replay: what `oltplab trace replay` and `oltplab study` ask for.
#[derive(Clone, Debug)]
pub struct ReplayConfig {
    pub file: PathBuf,
    /// Format of `file`; None: detected from its first bytes.
    pub from: Option<Format>,
    /// Where the copies of the traced files go; None for a virtual-time replay.
    pub target: Option<PathBuf>,
    pub clock: ReplayClock,
    /// lanes or btreplay in real time; any order in virtual time.
    pub order: ReplayOrder,
    /// btreplay's bunches and pool.
    pub bunching: Bunching,
    /// The device emulated (None: the real device under `target`).
    pub emulate: Option<Spec>,
    pub engine: EngineKind,
    /// io_uring threads; None: one per 64 lanes, at most one per core.
    pub workers: Option<u32>,
    pub direct: bool,
    /// Seed of the emulated device's model.
    pub seed: u64,
    pub json: Option<PathBuf>,
    pub out: Option<PathBuf>,
}

/// Real I/O on copies of the traced files, or virtual time on a device model.
#[derive(Clone, Copy, Debug)]
pub enum ReplayClock {
    Real(ReplayMode),
    Virtual,
}

impl ReplayConfig {
    /// Stage two of `oltplab trace replay`: the cross-option rules.
    pub fn from_args(a: ReplayArgs) -> Result<ReplayConfig> {
        let order = ReplayOrder::parse(&a.order).expect("clap checked --order");
        let defaults = Bunching::default();
        let bunching = Bunching {
            max_time_ns: a.bunch_time.unwrap_or(defaults.max_time_ns),
            max_ios: a.bunch_size.unwrap_or(defaults.max_ios),
            iocbs: a.iocbs.unwrap_or(defaults.iocbs),
        };
        if order != ReplayOrder::Btreplay
            && (a.bunch_time.is_some() || a.bunch_size.is_some() || a.iocbs.is_some())
        {
            return Err(Error::usage(
                "--bunch-time, --bunch-size and --iocbs shape a btreplay: add --order btreplay, or drop them",
            ));
        }
        bunching.check()?;
        let emulate = a.emulate.clone();
        let clock = if a.virtual_time {
            if emulate.is_none() {
                return Err(Error::usage(
                    "--virtual replays on a device model, so it needs --emulate SPEC (e.g. --emulate hdd-10k); drop --virtual to replay on a real device",
                ));
            }
            ReplayClock::Virtual
        } else {
            if order == ReplayOrder::Causal {
                return Err(Error::usage(
                    "--order causal is a virtual-time replay for now: add --virtual and --emulate SPEC, or use --order lanes or btreplay on a real device",
                ));
            }
            ReplayClock::Real(match a.time_scale {
                None => ReplayMode::AsFastAsPossible,
                Some(x) if x.is_finite() && x > 0.0 => ReplayMode::TimeScale(x),
                Some(x) => {
                    return Err(Error::usage(format!(
                        "--time-scale {x} is not a positive number: give e.g. 1 (traced timing) or 0.5 (twice as fast)"
                    )))
                }
            })
        };
        Ok(ReplayConfig {
            file: a.file,
            from: format_arg(a.from.as_deref()),
            target: a.target,
            clock,
            order,
            bunching,
            emulate,
            engine: EngineKind::parse(&a.engine).expect("clap checked --engine"),
            workers: a.workers,
            direct: !a.buffered,
            seed: a.seed,
            json: a.json,
            out: a.out,
        })
    }

    /// As fast as the device allows, on copies under `target`, through `emulate`'s model if given.
    pub fn as_fast_as_possible(file: &Path, target: &Path, emulate: Option<&Spec>) -> ReplayConfig {
        ReplayConfig {
            file: file.to_path_buf(),
            from: None,
            target: Some(target.to_path_buf()),
            clock: ReplayClock::Real(ReplayMode::AsFastAsPossible),
            order: ReplayOrder::Lanes,
            bunching: Bunching::default(),
            emulate: emulate.cloned(),
            engine: EngineKind::IoUring,
            workers: None,
            direct: true,
            seed: 1,
            json: None,
            out: None,
        }
    }
}

/// A replay's result, and where it was saved.
pub struct ReplayRun {
    pub doc: ReplayResult,
    pub out_dir: PathBuf,
    pub interrupted: bool,
}

pub fn run(a: ReplayArgs) -> Result<()> {
    let cfg = ReplayConfig::from_args(a)?;
    let run = replay(&cfg)?;
    print_summary(&run.doc, &run.out_dir.join(output::RESULT_FILE));
    if run.interrupted {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// Replays the trace as `cfg` says, showing progress, and saves and returns its result.
pub fn replay(cfg: &ReplayConfig) -> Result<ReplayRun> {
    if let Some(json) = &cfg.json {
        output::check_json_path(json, false)?;
    }
    let mode = match cfg.clock {
        ReplayClock::Virtual => return replay_in_virtual_time(cfg),
        ReplayClock::Real(mode) => mode,
    };
    let target = cfg.target.clone().ok_or_else(|| {
        Error::usage(
            "a replay on a real device needs --target DIR for the copies of the traced files",
        )
    })?;
    // `host` models nothing: the replay then measures the real device, as without --emulate.
    let emulator = match cfg.emulate.as_ref().filter(|s| !s.is_host()) {
        Some(spec) => Some(Arc::new(Emulator::new(spec, cfg.seed)?)),
        None => None,
    };
    let opts = ReplayOptions {
        mode,
        direct: cfg.direct,
        engine: cfg.engine,
        workers: cfg.workers.unwrap_or(0) as usize,
        emulator,
        order: cfg.order,
        bunching: cfg.bunching,
    };
    let started_at = now_rfc3339();
    let (format, trace, _) = convert::import(&cfg.file, cfg.from)?;
    if cfg.order == ReplayOrder::Btreplay {
        require_cpus(&trace)?;
    }
    let out_dir = output::prepare_out_dir(cfg.out.as_deref(), "replay", &started_at, false)?;
    if !trace.complete {
        output::note!(
            "note: {} is the prefix of a capture that did not finish; replaying what it holds",
            cfg.file.display()
        );
    }
    output::note!(
        "oltplab trace replay — {} operations of {} ({}), {} order, {} {}, {}{}",
        format_count(trace.records.len() as f64),
        cfg.file.display(),
        format.name(),
        cfg.order.name(),
        opts.engine.name(),
        if opts.direct { "direct" } else { "buffered" },
        match mode {
            ReplayMode::AsFastAsPossible => "as fast as possible".to_string(),
            ReplayMode::TimeScale(x) => format!("time scale {x}"),
        },
        opts.emulator
            .as_ref()
            .map(|e| format!(", emulating {}", e.spec().name()))
            .unwrap_or_default()
    );

    let fill: Mutex<Option<Progress>> = Mutex::new(None);
    let replaying: Mutex<Option<Progress>> = Mutex::new(None);
    let outcome = replay_trace(&trace, &target, &opts, &STOP, |event| match event {
        ReplayEvent::Filling {
            done_bytes,
            total_bytes,
        } => {
            let mut bar = fill.lock().unwrap_or_else(|e| e.into_inner());
            let bar = bar.get_or_insert_with(|| {
                Progress::new(
                    total_bytes,
                    "filling copies [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
                )
            });
            bar.set(done_bytes, String::new());
        }
        ReplayEvent::Replaying {
            ops_done,
            ops_total,
        } => {
            if let Some(bar) = fill.lock().unwrap_or_else(|e| e.into_inner()).take() {
                bar.finish();
            }
            let mut bar = replaying.lock().unwrap_or_else(|e| e.into_inner());
            let bar = bar.get_or_insert_with(|| {
                Progress::new(ops_total, "replaying [{bar:30}] {pos}/{len} ops {msg}")
            });
            bar.set(ops_done, String::new());
        }
    });
    for bar in [&fill, &replaying] {
        if let Some(bar) = bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish();
        }
    }
    let outcome = outcome?;

    let doc = result_doc(cfg, &opts, format.name(), started_at, &outcome);
    output::save(&doc, &out_dir, cfg.json.as_deref())?;
    Ok(ReplayRun {
        doc,
        out_dir,
        interrupted: outcome.interrupted,
    })
}

/// `--virtual`: the trace through the device model in virtual time.
fn replay_in_virtual_time(cfg: &ReplayConfig) -> Result<ReplayRun> {
    let order = cfg.order;
    let spec = cfg.emulate.as_ref().ok_or_else(|| {
        Error::usage("a virtual-time replay needs a device model: add --emulate SPEC")
    })?;
    let started_at = now_rfc3339();
    let (format, trace, _) = convert::import(&cfg.file, cfg.from)?;
    if cfg.order == ReplayOrder::Btreplay {
        require_cpus(&trace)?;
    }
    let out_dir = output::prepare_out_dir(cfg.out.as_deref(), "replay", &started_at, false)?;
    output::note!(
        "oltplab trace replay — {} operations of {} ({}), virtual time on {}, {} order",
        format_count(trace.records.len() as f64),
        cfg.file.display(),
        format.name(),
        spec.name(),
        order.name()
    );
    let outcome = replay_virtual_with(&trace, spec, cfg.seed, order, &cfg.bunching)?;
    let opts = ReplayOptions {
        direct: false,
        engine: EngineKind::Null,
        ..ReplayOptions::default()
    };
    let doc = result_doc(cfg, &opts, format.name(), started_at, &outcome);
    output::save(&doc, &out_dir, cfg.json.as_deref())?;
    Ok(ReplayRun {
        doc,
        out_dir,
        interrupted: false,
    })
}

fn result_doc(
    cfg: &ReplayConfig,
    opts: &ReplayOptions,
    format: &str,
    started_at: String,
    o: &ReplayOutcome,
) -> ReplayResult {
    let config = json!({
        "trace": cfg.file,
        "trace_format": format,
        "target": cfg.target,
        "mode": match opts.mode { ReplayMode::AsFastAsPossible => "as_fast_as_possible", ReplayMode::TimeScale(_) => "time_scale" },
        "time_scale": match opts.mode { ReplayMode::TimeScale(x) => Some(x), _ => None },
        "emulate": cfg.emulate.as_ref().map(Spec::name),
        "seed": cfg.seed,
        "order": o.order.name(),
        "bunching": (o.order == ReplayOrder::Btreplay).then_some(cfg.bunching),
        "virtual": o.virtual_clock,
        "engine": o.engine.name(),
        "workers": o.workers,
        "direct": opts.direct,
        "files": o.files,
    });
    let mut histograms = BTreeMap::new();
    histograms.insert("read".to_string(), o.read_latency.to_base64());
    histograms.insert("write".to_string(), o.write_latency.to_base64());
    histograms.insert("sync".to_string(), o.sync_latency.to_base64());
    let env = Env::collect(o.files.first().map(PathBuf::as_path));
    ResultDoc {
        intervals: o.intervals.clone(),
        histograms,
        warnings: o.warnings.clone(),
        ..output::new_doc("replay", started_at, config, env, o.summary())
    }
}

fn lat_line(l: &LatencyNs) -> String {
    format!(
        "mean {:>8} p50 {:>8} p99 {:>8} p99.9 {:>8} max {:>8}",
        format_ns(l.mean),
        format_ns(l.p50 as f64),
        format_ns(l.p99 as f64),
        format_ns(l.p999 as f64),
        format_ns(l.max as f64)
    )
}

fn print_summary(doc: &ReplayResult, result: &Path) {
    let s = &doc.summary;
    note!(
        "replayed {} operations ({} lanes from {} threads, {} order) in {:.3} s{}; traced time {:.3} s ({:.2}× the traced speed)",
        format_count(s.ops as f64),
        s.lanes,
        s.threads,
        s.order,
        s.elapsed_s.unwrap_or_default(),
        if s.clock == "virtual" { " of virtual time" } else { "" },
        s.trace_s.unwrap_or_default(),
        s.speedup.unwrap_or_default()
    );
    say!(
        "IOPS {} (reads + writes); {:.1} I/Os in flight on average",
        format_count(s.iops),
        s.mean_in_flight
    );
    if let Some(b) = &s.bunching {
        note!(
            "btreplay: {} bunches of {:.1} I/Os on average (at most {} within {}) from {} streams ({} CPUs), at most {} in flight per stream",
            format_count(b.bunches as f64),
            b.ops_per_bunch,
            b.bunch_size,
            format_ns(b.bunch_time_ns as f64),
            b.streams,
            b.cpus,
            b.iocbs
        );
    }
    for (name, op) in [("read ", &s.read), ("write", &s.write)] {
        if op.ios > 0 {
            say!(
                "  {name} {:>10} IOPS {:>10}/s  {}",
                format_count(op.iops),
                format_bytes(op.bw_bytes as u64),
                lat_line(&op.lat_ns)
            );
        }
    }
    if let Some(sync) = s.sync.as_ref().filter(|y| y.ops > 0) {
        say!(
            "  sync  {:>10} ops/s {:>9}   {}",
            format_count(sync.iops),
            "",
            lat_line(&sync.lat_ns)
        );
    }
    if s.unaligned_ops > 0 || s.short_ios > 0 || s.unsupported_ops > 0 {
        note!(
            "unaligned (buffered) {} · short reads/writes {} · unsupported by the file system {}",
            s.unaligned_ops,
            s.short_ios,
            s.unsupported_ops
        );
    }
    if let Some(f) = &s.fidelity {
        note!("emulation fidelity: {f}");
    }
    output::print_warnings(&doc.warnings);
    note!("result: {}", result.display());
}

#[cfg(test)]
mod tests {
    use oltplab_trace::replay::{MAX_BUFFER_BYTES, MAX_IO_BYTES, MAX_PSYNC_LANES, MAX_URING_LANES};

    use super::AFTER_REPLAY_HELP;

    /// The help states the bounds the replay enforces.
    #[test]
    fn the_help_states_the_replay_bounds() {
        let help = AFTER_REPLAY_HELP.replace('\n', " ");
        for text in [
            format!("over {} MiB", MAX_IO_BYTES >> 20),
            format!("{MAX_PSYNC_LANES} with psync"),
            format!("{MAX_URING_LANES} with io_uring"),
            format!("over {} GiB of lane buffers", MAX_BUFFER_BYTES >> 30),
        ] {
            assert!(help.contains(&text), "{text}");
        }
    }
}
