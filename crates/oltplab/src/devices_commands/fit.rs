//! `oltplab devices fit TARGET`: measure a real (or emulated) device the way the flash model is
//! parameterised — random reads and writes at a few block sizes over a queue-depth sweep, and the
//! commit loop (8 KiB append + fdatasync, QD 1) — then fit the flash model's parameters so that the
//! model, run in virtual time at every measured point, reproduces the measured IOPS and mean
//! latency. The result is a spec in the spec language (a catalogue flash device with overrides)
//! that `--emulate` accepts, with the fit error printed beside it.
//!
//! The measuring is `oltplab device`'s ([`crate::device_command::measure`]); the fit is a
//! deterministic pattern search (coordinate steps in log-parameter space, halved when no step
//! improves) over the model itself ([`oltplab_devmodel::Emulator`] in virtual time: no waiting).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use oltplab_core::units::{format_count, format_ns, format_size_short};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{
    catalogue, parse_spec, CatalogueEntry, DeviceKind, DeviceParams, Emulator, IoKind, Spec,
};
use oltplab_io::job::{Mix, Rw};
use oltplab_metrics::schema::{now_rfc3339, ProfileResult, Warning};
use serde::Serialize;

use crate::device_command;
use crate::device_command::config::{
    self as device_config, DeviceRequest, Pattern, QueueDepths, Workload,
};
use crate::output;

use super::trace_fit::{self, TraceFitSummary, TraceReplay, TraceTarget};

#[derive(Args, Debug)]
#[command(after_help = FIT_AFTER_HELP)]
pub struct FitArgs {
    /// File or directory (uses DIR/device.dat) to measure, as `oltplab device TARGET` [default:
    /// ./oltplab-data/device.dat]
    pub target: Option<PathBuf>,

    /// Measure an emulated device instead (RAM-backed, as `oltplab device --emulate`): fitting it
    /// should give back its curves
    #[arg(long, value_name = "SPEC", value_parser = crate::emulate::spec_arg)]
    pub emulate: Option<Spec>,

    /// Start the search from this flash spec (e.g. an earlier fit) instead of from the curves;
    /// its catalogue device is the base
    #[arg(long, value_name = "SPEC", value_parser = crate::emulate::spec_arg)]
    pub start: Option<Spec>,

    /// Hold the --start spec's device and fit only its pauses (pause_pct, pause_us,
    /// pause_speed_pct) to the --trace: how often and how far the device slows, not how fast it is
    #[arg(long)]
    pub pauses_only: bool,

    /// Access patterns to measure, comma-separated: randread, randwrite, randrw (70 % reads: a
    /// database's reads behind its writes)
    #[arg(long, value_name = "LIST", default_value = "randread,randwrite,randrw")]
    pub rw: String,

    /// Block sizes to measure, comma-separated
    #[arg(long, value_name = "LIST", default_value = "4k,16k,64k")]
    pub bs: String,

    /// Queue depths: A:B (powers of two from A to B) or a list such as 1,8,32
    #[arg(long, value_name = "A:B", default_value = "1:64")]
    pub sweep_qd: String,

    /// Measured time of each point
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = oltplab_core::units::parse_duration)]
    pub runtime: Duration,

    /// Warm-up before each point's measured time
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = oltplab_core::units::parse_duration)]
    pub ramp: Duration,

    /// Size of the region the I/O covers (and of the target file oltplab creates)
    #[arg(long, value_name = "SIZE", default_value = "1g", value_parser = oltplab_core::units::parse_size)]
    pub size: u64,

    /// The catalogue flash device whose parameters the fit starts from and keeps where it does
    /// not fit them (capacity) [default: the emulated device if it is a catalogue flash device,
    /// else nvme-gen4]
    #[arg(long, value_name = "NAME")]
    pub base: Option<String>,

    /// I/Os the model simulates per point and per candidate (after a warm-up of up to as many);
    /// fewer is faster and coarser
    #[arg(long, value_name = "N", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    pub sim_ios: u64,

    /// Most candidate parameter sets the search evaluates
    #[arg(long, value_name = "N", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_evals: u64,

    /// Fit again to the measurements of an earlier fit (its --results DIR) instead of measuring
    #[arg(long, value_name = "DIR", conflicts_with_all = ["target", "emulate", "rw", "bs", "sweep_qd", "runtime", "ramp", "size"])]
    pub refit: Option<PathBuf>,

    /// Also fit to a window of a database's own I/O: a trace of a run on the device measured
    /// (`oltplab run … --emulate host --trace FILE`), replayed on each candidate
    /// (--trace-replay); its read, write and sync latency quantiles join the curves in the
    /// objective
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// How candidates replay the trace: causal (each thread's I/O after the one it waited for,
    /// with its think time, as a database sends it) or open (at the recorded times, whatever the
    /// model did)
    #[arg(long, value_name = "HOW", value_enum, default_value_t = TraceReplay::Causal)]
    pub trace_replay: TraceReplay,

    /// Compare the fitted spec with this trace too (a second run's, not fitted to): the check of
    /// the fit on I/O it was not tuned to
    #[arg(long, value_name = "FILE")]
    pub validate_trace: Option<PathBuf>,

    /// Length of the trace window fitted to (and of the validation trace's window)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = trace_fit::window_arg)]
    pub trace_window: f64,

    /// Where the window starts, from the trace's first I/O [default: the trace's middle]
    #[arg(long, value_name = "DURATION", value_parser = trace_fit::window_arg)]
    pub trace_start: Option<f64>,

    /// How much the trace counts against the curves: 1 weighs its quantiles as much as all the
    /// curves' figures together
    #[arg(long, value_name = "W", default_value_t = 1.0)]
    pub trace_weight: f64,

    /// Also write the fitted spec (one line) to FILE
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Also write the JSON result to FILE; - for standard output
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Directory for this fit's result.json and the two device results it rests on [default:
    /// ./oltplab-results/devices-fit-<time>]
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,

    /// Allow writing to a file or directory oltplab did not create
    #[arg(long)]
    pub force: bool,
}

const FIT_AFTER_HELP: &str = "\
Measures random reads, writes and a 70/30 mix at each block size and queue depth (O_DIRECT,
io_uring), and the commit loop (an 8 KiB and a 128 KiB append + fdatasync at QD 1); fits the flash
model to the IOPS and mean latency (a mix's: its reads') of every point, in virtual time; prints measured against fitted per point, the fit error, and the spec
(on standard output, the only line there). Example:
  oltplab devices fit /mnt/ssd --out ssd.spec
  oltplab device --emulate \"$(cat ssd.spec)\" --rw randread --bs 16k --qd 8";

/// One point of the fit: a measured (or to be simulated) closed loop.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PointDef {
    /// `randread`, `randwrite`, `randrw` ([`MIXED_READ_PCT`] reads) or `commit` (append +
    /// fdatasync after each write).
    pub op: Op,
    pub block_size_bytes: u64,
    pub qd: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Randread,
    Randwrite,
    Randrw,
    Commit,
}

/// The share of reads of a `randrw` point: TPC-C's read share of its I/O on a small buffer pool,
/// roughly; what matters is that reads meet writes in progress.
pub const MIXED_READ_PCT: u8 = 70;

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Randread => "randread",
            Op::Randwrite => "randwrite",
            Op::Randrw => "randrw",
            Op::Commit => "commit",
        }
    }

    fn read_pct(self) -> u8 {
        match self {
            Op::Randread => 100,
            Op::Randrw => MIXED_READ_PCT,
            Op::Randwrite | Op::Commit => 0,
        }
    }
}

impl PointDef {
    fn label(&self) -> String {
        format!(
            "{} {} QD {}",
            self.op.name(),
            format_size_short(self.block_size_bytes),
            self.qd
        )
    }
}

/// A point's two figures: IOPS (commits/s for a commit point) and mean latency (the flush's for a
/// commit point, the reads' for a mixed one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    pub iops: f64,
    pub lat_ns: f64,
}

/// One row of the result's table.
#[derive(Clone, Debug, Serialize)]
pub struct FitPoint {
    #[serde(flatten)]
    pub point: PointDef,
    pub measured: Figures,
    pub fitted: Figures,
    /// Fitted ÷ measured − 1, in percent.
    pub iops_error_pct: f64,
    pub lat_error_pct: f64,
}

/// How far the fitted model is from the measurements.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct FitError {
    /// Root mean square of ln(fitted ÷ measured) over every figure (IOPS and latency of each point).
    pub rms_log: f64,
    /// The same as a percentage: (e^rms − 1) × 100.
    pub rms_pct: f64,
    /// Mean |fitted ÷ measured − 1| of the IOPS, in percent.
    pub iops_mean_abs_pct: f64,
    /// Mean |fitted ÷ measured − 1| of the mean latencies, in percent.
    pub lat_mean_abs_pct: f64,
    /// The largest |ln(fitted ÷ measured)| of any figure, as a percentage.
    pub worst_pct: f64,
}

/// `summary` of a `devices-fit` result.
#[derive(Clone, Debug, Serialize)]
pub struct FitSummary {
    /// The fitted device, in the spec language: `--emulate` takes it as it is.
    pub spec: String,
    /// The catalogue flash device whose parameters were fitted.
    pub base: String,
    /// The spec measured with `--emulate`, if it was an emulated device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulated: Option<String>,
    pub fit_error: FitError,
    pub points: Vec<FitPoint>,
    /// The fitted parameters, in the base device's order.
    pub params: Vec<FittedParam>,
    /// Candidate parameter sets the search evaluated.
    pub evaluations: u64,
    pub fit_s: f64,
    /// The `device` results the fit rests on, relative to this result's directory.
    pub measurements: Vec<String>,
    /// The trace window fitted to (`--trace`): recorded against fitted latency quantiles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceFitSummary>,
    /// The fitted spec against a trace it was not fitted to (`--validate-trace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<TraceFitSummary>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FittedParam {
    pub key: String,
    pub value: f64,
}

pub type FitResult = oltplab_metrics::schema::ResultDoc<FitSummary, serde_json::Value>;

/// The resolved options of a fit, stored as the result's `config`.
#[derive(Clone, Debug, Serialize)]
struct FitConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    refit: Option<PathBuf>,
    target: Option<PathBuf>,
    emulate: Option<String>,
    rw: Vec<Op>,
    block_sizes: Vec<u64>,
    queue_depths: Vec<u32>,
    runtime_s: f64,
    ramp_s: f64,
    size_bytes: u64,
    base: String,
    sim_ios: u64,
    max_evals: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    validate_trace: Option<PathBuf>,
    trace_window_s: f64,
    trace_weight: f64,
    trace_replay: TraceReplay,
    #[serde(skip_serializing_if = "Option::is_none")]
    start: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pauses_only: bool,
}

pub fn run(args: FitArgs) -> Result<()> {
    let started_at = now_rfc3339();
    let ops = parse_ops(&args.rw)?;
    let block_sizes = parse_sizes(&args.bs)?;
    let queue_depths = device_config::parse_sweep(&args.sweep_qd)?;
    if queue_depths.iter().any(|&q| q > 1024) {
        return Err(Error::usage(format!(
            "--sweep-qd '{}' goes beyond queue depth 1024: a fit needs no deeper queue; choose e.g. 1:64",
            args.sweep_qd
        )));
    }
    let emulated = args.emulate.clone();
    if emulated.as_ref().is_some_and(Spec::is_host) {
        return Err(Error::usage(
            "--emulate host is the real device: give its TARGET without --emulate",
        ));
    }
    if emulated.is_some() && args.target.is_some() {
        return Err(Error::usage("--emulate keeps the emulated device's data in RAM, so it takes no TARGET: drop the TARGET or --emulate"));
    }
    let base = match &args.start {
        Some(start) => start_base(start, args.base.as_deref())?,
        None => resolve_base(args.base.as_deref(), emulated.as_ref())?,
    };
    if let Some(out) = &args.out {
        output::check_writable(out, args.force, is_spec_file)?;
    }
    if let Some(json) = &args.json {
        output::check_json_path(json, args.force)?;
    }
    let mut config = FitConfig {
        refit: args.refit.clone(),
        target: args.target.clone(),
        emulate: emulated.as_ref().map(Spec::name),
        rw: ops.clone(),
        block_sizes: block_sizes.clone(),
        queue_depths: queue_depths.clone(),
        runtime_s: args.runtime.as_secs_f64(),
        ramp_s: args.ramp.as_secs_f64(),
        size_bytes: args.size,
        base: base.name.to_string(),
        sim_ios: args.sim_ios,
        max_evals: args.max_evals,
        trace: args.trace.clone(),
        validate_trace: args.validate_trace.clone(),
        trace_window_s: args.trace_window,
        trace_weight: args.trace_weight,
        trace_replay: args.trace_replay,
        start: args.start.as_ref().map(Spec::name),
        pauses_only: args.pauses_only,
    };
    if !(args.trace_weight.is_finite() && args.trace_weight > 0.0) {
        return Err(Error::usage(format!(
            "--trace-weight {} is not a positive number: give e.g. 1 (the trace counts as much as the curves)",
            args.trace_weight
        )));
    }
    // The traces are read before anything is measured, so that a bad one costs nothing.
    let load_trace = |path: &Option<PathBuf>| {
        path.as_deref()
            .map(|p| {
                TraceTarget::load(p, args.trace_start, args.trace_window).map(|mut t| {
                    t.replay = args.trace_replay;
                    t
                })
            })
            .transpose()
    };
    let trace = load_trace(&args.trace)?;
    let validation = load_trace(&args.validate_trace)?;
    let start = match (&args.start, args.pauses_only) {
        (None, false) => Start::Curves,
        (Some(spec), false) => Start::From(spec),
        (Some(spec), true) if trace.as_ref().is_some_and(TraceTarget::tells_bunching) => {
            Start::PausesOf(spec)
        }
        (None, true) => {
            return Err(Error::usage(
                "--pauses-only holds a device the fit does not have: give it with --start SPEC (e.g. an earlier fit's)",
            ))
        }
        (Some(_), true) => {
            return Err(Error::usage(
                "--pauses-only fits pauses to how a trace's slow I/Os bunch, and no --trace with enough slow moments was given: give --trace FILE of a longer or busier run",
            ))
        }
    };

    // Stage two of `oltplab device` checks the shared options (size, direct I/O, buffers, spec).
    let request = |pattern: Pattern, queue_depths: QueueDepths| DeviceRequest {
        target: args.target.clone(),
        size: args.size,
        runtime: args.runtime,
        ramp: args.ramp,
        emulate: args.emulate.clone(),
        pattern,
        queue_depths,
        force: args.force,
        ..DeviceRequest::default()
    };
    let largest_block = *block_sizes.iter().max().unwrap_or(&4096);
    let mut random = request(
        Pattern::rw(Rw::RandRead, largest_block),
        QueueDepths::Sweep(queue_depths.clone()),
    )
    .check()?;
    random.workloads = ops
        .iter()
        .flat_map(|&op| {
            block_sizes.iter().map(move |&bs| Workload {
                name: Some(format!("{}-{}", op.name(), format_size_short(bs))),
                rw: None,
                mix: Mix {
                    block_size_bytes: bs as u32,
                    read_pct: op.read_pct(),
                    random_pct: 100,
                    flush: None,
                },
            })
        })
        .collect();
    // Commits after small and after large appends: what a flush costs of itself and what it
    // costs to drain the writes before it.
    let mut commit = request(Pattern::profiles(&["commit-8k"]), QueueDepths::One(1)).check()?;
    let commit_mix = commit.workloads[0].mix;
    commit.workloads = COMMIT_SIZES
        .iter()
        .map(|&bs| Workload {
            name: Some(format!("commit-{}", format_size_short(bs))),
            rw: None,
            mix: Mix {
                block_size_bytes: bs as u32,
                ..commit_mix
            },
        })
        .collect();

    let out_dir = output::prepare_out_dir(
        args.results.as_deref(),
        "devices-fit",
        &started_at,
        args.force,
    )?;
    let mut warnings: Vec<Warning> = Vec::new();
    let mut points: Vec<(PointDef, Figures)> = Vec::new();
    let mut env = None;
    let mut measurements = Vec::new();
    for (name, mut cfg) in [("random", random), ("commit", commit)] {
        if let Some(dir) = &args.refit {
            // The measurements of an earlier fit, as they were.
            let path = dir.join(name).join(output::RESULT_FILE);
            let doc = read_device_result(&path)?;
            points.extend(measured_points(Some(&doc.profiles), doc.runtime_s)?);
            env.get_or_insert(doc.env);
            measurements.push(path.display().to_string());
            if name == "random" {
                config.runtime_s = doc.runtime_s;
                config.ramp_s = doc.ramp_s;
                config.size_bytes = doc.size_bytes;
            }
            continue;
        }
        if cfg.workloads.is_empty() {
            continue;
        }
        cfg.out = Some(out_dir.join(name));
        output::note!("measuring: {name}");
        let outcome = device_command::measure(&cfg)?;
        warnings.extend(outcome.doc.warnings.iter().cloned());
        if outcome.interrupted {
            return Err(Error::Interrupted);
        }
        points.extend(measured_points(
            outcome.doc.summary.measured.profiles.as_deref(),
            cfg.runtime_s,
        )?);
        env.get_or_insert(outcome.doc.env.clone());
        measurements.push(format!("{name}/{}", output::RESULT_FILE));
    }
    let env = env.expect("something was measured");

    output::note!(
        "fitting the flash model ({} as the base) to {} points",
        base.name,
        points.len()
    );
    let t0 = Instant::now();
    let fit = fit(
        base,
        &points,
        &config_sim(&config),
        config.max_evals,
        trace.as_ref().map(|t| (t, config.trace_weight)),
        start,
    )?;
    let fit_s = t0.elapsed().as_secs_f64();
    let mut summary = summarise(&fit, &points, base, emulated.as_ref(), fit_s, measurements);
    print_table(&summary);
    if let Some(t) = &trace {
        let s = t.summary(&t.simulate(&fit.spec)?);
        trace_fit::print("fitted to the trace", &s);
        summary.trace = Some(s);
    }
    if let Some(t) = &validation {
        let s = t.summary(&t.simulate(&fit.spec)?);
        trace_fit::print("validated on a trace not fitted to", &s);
        summary.validation = Some(s);
    }

    let mut doc: FitResult = output::new_doc(
        "devices-fit",
        started_at,
        serde_json::to_value(&config).expect("config serialises"),
        env,
        summary,
    );
    doc.warnings = warnings;
    output::save(&doc, &out_dir, args.json.as_deref())?;
    if let Some(out) = &args.out {
        output::write_atomic(out, &format!("{}\n", doc.summary.spec))?;
    }
    output::print_warnings(&doc.warnings);
    // The spec alone on standard output, for scripts — unless the JSON goes there.
    if args.json.as_deref().is_some_and(output::is_stdout) {
        eprintln!("{}", doc.summary.spec);
    } else {
        println!("{}", doc.summary.spec);
    }
    Ok(())
}

/// A spec file `--out` may overwrite: one line that parses as a spec.
fn is_spec_file(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .is_some_and(|t| t.lines().count() == 1 && parse_spec(t.trim()).is_ok())
}

fn parse_ops(text: &str) -> Result<Vec<Op>> {
    let mut ops = Vec::new();
    for part in text.split(',') {
        let op = match part.trim() {
            "randread" => Op::Randread,
            "randwrite" => Op::Randwrite,
            "randrw" => Op::Randrw,
            other => {
                return Err(Error::usage(format!(
                    "--rw '{other}' is not an access pattern a fit measures: use randread, randwrite, randrw or a list (randread,randwrite,randrw)"
                )))
            }
        };
        if !ops.contains(&op) {
            ops.push(op);
        }
    }
    Ok(ops)
}

fn parse_sizes(text: &str) -> Result<Vec<u64>> {
    let mut sizes = Vec::new();
    for part in text.split(',') {
        let size = oltplab_core::units::parse_size(part.trim())
            .ok()
            .filter(|s| (512..=(16 << 20)).contains(s) && s % 512 == 0)
            .ok_or_else(|| {
                Error::usage(format!(
                    "--bs '{}' is not a block size a fit measures: give multiples of 512 bytes up to 16m, e.g. 4k,16k,64k",
                    part.trim()
                ))
            })?;
        if !sizes.contains(&size) {
            sizes.push(size);
        }
    }
    sizes.sort_unstable();
    Ok(sizes)
}

/// The base of a fit that starts from `start`: its catalogue flash device, which `--base`, if
/// given, must name.
fn start_base(start: &Spec, base: Option<&str>) -> Result<&'static CatalogueEntry> {
    match start {
        Spec::Device { entry, .. } if entry.kind == DeviceKind::Flash => match base {
            Some(b) if b != entry.name => Err(Error::usage(format!(
                "--start is a {} spec but --base is {b}: drop --base (the start's device is the base) or start from a {b} spec",
                entry.name
            ))),
            _ => Ok(entry),
        },
        _ => Err(Error::usage(format!(
            "--start {} is not a flash device: give a spec of a catalogue flash device, e.g. an earlier fit's",
            start.name()
        ))),
    }
}

/// The catalogue flash device the fit overrides.
fn resolve_base(name: Option<&str>, emulated: Option<&Spec>) -> Result<&'static CatalogueEntry> {
    let flash_names = || {
        catalogue()
            .iter()
            .filter(|e| e.kind == DeviceKind::Flash)
            .map(|e| e.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        Some(n) => catalogue()
            .iter()
            .find(|e| e.name == n && e.kind == DeviceKind::Flash)
            .ok_or_else(|| {
                Error::usage(format!(
                    "--base {n} is not a flash device of the catalogue: choose one of {}",
                    flash_names()
                ))
            }),
        None => Ok(match emulated {
            Some(Spec::Device { entry, .. }) if entry.kind == DeviceKind::Flash => entry,
            _ => catalogue::lookup("nvme-gen4").expect("nvme-gen4 is in the catalogue"),
        }),
    }
}

/// What a fit needs of a saved `device` result.
struct SavedDevice {
    profiles: Vec<ProfileResult>,
    runtime_s: f64,
    ramp_s: f64,
    size_bytes: u64,
    env: oltplab_metrics::env::Env,
}

fn read_device_result(path: &std::path::Path) -> Result<SavedDevice> {
    let bad = |why: String| {
        Error::usage(format!(
            "{} is not the result of a fit's measurement ({why}): give --refit the --results directory of an earlier `oltplab devices fit`",
            path.display()
        ))
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    if v["kind"] != "device" {
        return Err(bad("not a device result".into()));
    }
    let num = |key: &str| {
        v["config"][key]
            .as_f64()
            .ok_or_else(|| bad(format!("config.{key} is missing")))
    };
    Ok(SavedDevice {
        profiles: serde_json::from_value(v["summary"]["profiles"].clone())
            .map_err(|e| bad(format!("summary.profiles: {e}")))?,
        runtime_s: num("runtime_s")?,
        ramp_s: num("ramp_s")?,
        size_bytes: num("size_bytes")? as u64,
        env: serde_json::from_value(v["env"].clone()).map_err(|e| bad(format!("env: {e}")))?,
    })
}

/// The points of one measurement: every profile's sweep.
fn measured_points(
    profiles: Option<&[ProfileResult]>,
    runtime_s: f64,
) -> Result<Vec<(PointDef, Figures)>> {
    let missing = || {
        Error::failed("the measurement gave no figures for a point of the fit; run it again (was it interrupted?)")
    };
    let profiles = profiles.ok_or_else(missing)?;
    let mut out = Vec::new();
    for p in profiles {
        let op = match (p.flush.is_some(), p.read_pct) {
            (true, _) => Op::Commit,
            (false, 100) => Op::Randread,
            (false, 0) => Op::Randwrite,
            (false, _) => Op::Randrw,
        };
        for s in &p.sweep {
            let figures = match op {
                Op::Randread => Figures {
                    iops: s.read.iops,
                    lat_ns: s.read.lat_ns.mean,
                },
                Op::Randrw => Figures {
                    iops: s.read.iops + s.write.iops,
                    lat_ns: s.read.lat_ns.mean,
                },
                Op::Randwrite => Figures {
                    iops: s.write.iops,
                    lat_ns: s.write.lat_ns.mean,
                },
                Op::Commit => {
                    let f = s.flush.as_ref().ok_or_else(missing)?;
                    Figures {
                        iops: f.per_s,
                        lat_ns: f.lat_ns.mean,
                    }
                }
            };
            if !(figures.iops > 0.0 && figures.lat_ns > 0.0) {
                return Err(Error::failed(format!(
                    "{} {} QD {} completed no I/O: the device did not answer in {:.1} s; check it and run the fit again",
                    op.name(),
                    format_size_short(p.block_size_bytes),
                    s.qd,
                    runtime_s
                )));
            }
            out.push((
                PointDef {
                    op,
                    block_size_bytes: p.block_size_bytes,
                    qd: s.qd,
                },
                figures,
            ));
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The model in virtual time

/// How each point is simulated.
#[derive(Clone, Copy, Debug)]
pub struct SimConfig {
    /// Counted I/Os per point, at most.
    pub ios: u64,
    /// Virtual time of the warm-up (the measurement's ramp), at most `ios` I/Os of it.
    pub warm_ns: u64,
    /// Virtual time of the counted part (the measurement's runtime), at most `ios` I/Os of it.
    pub run_ns: u64,
    pub region_bytes: u64,
    pub seed: u64,
}

fn config_sim(c: &FitConfig) -> SimConfig {
    SimConfig {
        ios: c.sim_ios,
        warm_ns: (c.ramp_s * 1e9) as u64,
        run_ns: (c.runtime_s * 1e9) as u64,
        region_bytes: c.size_bytes,
        seed: 1,
    }
}

/// What the model gives for `p`: a closed loop of `p.qd` I/Os on a fresh device, warmed up as the
/// measurement's ramp warmed the real one (at most `ios` I/Os of it), then counted.
pub fn simulate(spec: &Spec, p: &PointDef, c: &SimConfig) -> Result<Figures> {
    let e = Emulator::new(spec, c.seed)?;
    e.set_span_bytes(c.region_bytes);
    let bs = p.block_size_bytes;
    let blocks = (c.region_bytes / bs).max(1);
    let mut x = c.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let t0: u64 = 1_000_000_000;
    // A write point warms up until the write buffer could have filled twice over, so that a
    // candidate cannot hide a slow program rate behind a buffer that the measured device (which
    // had written in the points before, and would go on writing in a database) had long filled.
    let min_warm = if p.op == Op::Randread {
        0
    } else {
        (2.0 * write_buffer_mib(spec)? * 1024.0 * 1024.0 / bs as f64).ceil() as u64
    };
    if p.op == Op::Commit {
        // One append and its flush at a time.
        let (mut t, mut next) = (t0, 0u64);
        let (mut n, mut flush_sum, mut t_first) = (0u64, 0u128, 0u64);
        let mut warm = true;
        let mut i = 0u64;
        loop {
            let written = e.submit(t, IoKind::Write, (next % blocks) * bs, bs);
            next += 1;
            let flushed = e.submit(written, IoKind::Flush, 0, 0);
            if warm && (flushed - t0 >= c.warm_ns || i >= c.ios) && i >= min_warm {
                warm = false;
                t_first = flushed;
            } else if !warm {
                n += 1;
                flush_sum += (flushed - written) as u128;
                if n >= c.ios || flushed - t_first >= c.run_ns {
                    return Ok(Figures {
                        iops: n as f64 / ((flushed - t_first).max(1) as f64 / 1e9),
                        lat_ns: flush_sum as f64 / n as f64,
                    });
                }
            }
            t = flushed;
            i += 1;
        }
    }
    let read_pct = u64::from(p.op.read_pct());
    // Each I/O a read or a write as the point's share says (a read: 1 in the heap's last field).
    let mut issue = |t: u64| {
        let r = rand();
        let read = (r >> 32) % 100 < read_pct;
        let kind = if read { IoKind::Read } else { IoKind::Write };
        Reverse((e.submit(t, kind, (r % blocks) * bs, bs), t, u8::from(read)))
    };
    let mut pending: BinaryHeap<Reverse<(u64, u64, u8)>> = BinaryHeap::new();
    for _ in 0..p.qd {
        pending.push(issue(t0));
    }
    // A mixed point's latency is its reads' (what a database waits for); IOPS count every I/O.
    let (mut n, mut lat_n, mut lat_sum, mut t_first) = (0u64, 0u64, 0u128, 0u64);
    let mut warm = true;
    let mut i = 0u64;
    loop {
        let Reverse((done, submitted, read)) = pending.pop().expect("I/Os in flight");
        if warm {
            if (done - t0 >= c.warm_ns || i >= c.ios) && i >= min_warm {
                warm = false;
                t_first = done;
            }
        } else {
            n += 1;
            if p.op != Op::Randrw || read == 1 {
                lat_n += 1;
                lat_sum += (done - submitted) as u128;
            }
            if n >= c.ios || done - t_first >= c.run_ns {
                return Ok(Figures {
                    iops: n as f64 / ((done - t_first).max(1) as f64 / 1e9),
                    lat_ns: lat_sum as f64 / lat_n.max(1) as f64,
                });
            }
        }
        pending.push(issue(done));
        i += 1;
    }
}

/// The write buffer a candidate's writes may hide behind: a flash device's (after its
/// overrides); the other kinds and compositions have none the fit models.
fn write_buffer_mib(spec: &Spec) -> Result<f64> {
    let Spec::Device { entry, overrides } = spec else {
        return Ok(0.0);
    };
    match DeviceParams::of(entry, overrides).map_err(|e| Error::usage(e.to_string()))? {
        DeviceParams::Flash(p) => Ok(p.write_buffer_mib),
        DeviceParams::Hdd(_) | DeviceParams::Ram(_) | DeviceParams::Host => Ok(0.0),
    }
}

/// Every point, spread over the machine's cores.
pub fn simulate_all(spec: &Spec, points: &[PointDef], c: &SimConfig) -> Result<Vec<Figures>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
        .min(points.len().max(1));
    if threads <= 1 {
        return points.iter().map(|p| simulate(spec, p, c)).collect();
    }
    let mut results: Vec<Result<Figures>> = Vec::with_capacity(points.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || {
                    points
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % threads == k)
                        .map(|(i, p)| (i, simulate(spec, p, c)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(usize, Result<Figures>)> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("a simulation thread"))
            .collect();
        all.sort_by_key(|(i, _)| *i);
        results = all.into_iter().map(|(_, r)| r).collect();
    });
    results.into_iter().collect()
}

// ---------------------------------------------------------------------------------------------
// The search

/// A fitted parameter: its key in the flash catalogue entries, its range, and whether the model
/// rounds it to a whole number.
struct Dim {
    key: &'static str,
    lo: f64,
    hi: f64,
    integer: bool,
}

const DIMS: &[Dim] = &[
    Dim {
        key: "channels",
        lo: 1.0,
        hi: 64.0,
        integer: true,
    },
    Dim {
        key: "dies_per_channel",
        lo: 1.0,
        hi: 16.0,
        integer: true,
    },
    Dim {
        key: "read_us",
        lo: 0.1,
        hi: 20_000.0,
        integer: false,
    },
    Dim {
        key: "program_us",
        lo: 1.0,
        hi: 200_000.0,
        integer: false,
    },
    Dim {
        key: "waf_random",
        lo: 1.0,
        hi: 200.0,
        integer: false,
    },
    Dim {
        key: "channel_mb_s",
        lo: 5.0,
        hi: 100_000.0,
        integer: false,
    },
    Dim {
        key: "link_mb_s",
        lo: 5.0,
        hi: 100_000.0,
        integer: false,
    },
    Dim {
        key: "read_overhead_us",
        lo: 0.1,
        hi: 50_000.0,
        integer: false,
    },
    Dim {
        key: "cmd_occupancy_us",
        lo: 0.05,
        hi: 50_000.0,
        integer: false,
    },
    Dim {
        key: "write_occupancy_us",
        lo: 0.05,
        hi: 50_000.0,
        integer: false,
    },
    Dim {
        key: "controllers",
        lo: 1.0,
        hi: 64.0,
        integer: true,
    },
    Dim {
        key: "write_buffer_mib",
        lo: 0.01,
        // Short points cannot tell a larger buffer's size; each write point's warm-up fills it.
        hi: 16.0,
        integer: false,
    },
    Dim {
        key: "write_ack_us",
        lo: 0.1,
        hi: 50_000.0,
        integer: false,
    },
    Dim {
        key: "flush_us",
        lo: 0.1,
        hi: 50_000.0,
        integer: false,
    },
    // The last five only when fitting to a trace ([`TRACE_ONLY`]), pauses only to one that
    // shows how its slow I/Os bunch ([`Candidate::pauses`]).
    Dim {
        key: "stall_us",
        lo: 10.0,
        hi: 20_000.0,
        integer: false,
    },
    Dim {
        key: "stall_pct",
        // Stalls this rare reach no quantile a trace fit compares.
        lo: 0.05,
        hi: 20.0,
        integer: false,
    },
    Dim {
        key: "pause_us",
        lo: 10.0,
        hi: 20_000.0,
        integer: false,
    },
    Dim {
        key: "pause_pct",
        // Pauses this rare bunch too few slow I/Os to tell.
        lo: 0.05,
        hi: 20.0,
        integer: false,
    },
    Dim {
        key: "pause_speed_pct",
        // Under 1 % a pause is as good as stopped; the model keeps at most 95 %.
        lo: 1.0,
        hi: 95.0,
        integer: false,
    },
];

/// Stalls — a few commands held far longer than the rest, a tail no spread around the mean
/// makes — are fitted only to a trace's quantiles: the curves' means cannot tell them from a
/// slower device. Pauses, which slow every command in the device at once, only to a trace that
/// also shows how its slow I/Os bunch: the quantiles alone cannot tell them from stalls (with
/// both in the search and no bunching to compare, fits of devices given a spread or stalls
/// explained them with pauses; docs/devices.md).
const TRACE_ONLY: &[&str] = &[
    "stall_us",
    "stall_pct",
    "pause_us",
    "pause_pct",
    "pause_speed_pct",
];

/// The [`TRACE_ONLY`] dimensions only a trace that tells bunching fits.
const PAUSES: &[&str] = &["pause_us", "pause_pct", "pause_speed_pct"];

/// The appends the commit points make before each fdatasync: a flush's own cost and what
/// draining a larger write costs are told apart by the two.
const COMMIT_SIZES: &[u64] = &[8 << 10, 128 << 10];

/// Choices tried as a whole at every pass: the flash page (KiB) and power-loss protection.
const PAGES_KIB: &[f64] = &[4.0, 8.0, 16.0];

/// The spreads of each command's own time (`service_cv`) tried as a whole when fitting to a
/// trace: the curves' means cannot tell them apart, a trace's quantiles can.
const SERVICE_CVS: &[f64] = &[0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0];

/// A candidate: log values of [`DIMS`], the page, power-loss protection and the spread.
#[derive(Clone, Debug, PartialEq)]
struct Candidate {
    x: Vec<f64>,
    page_kib: f64,
    protected: bool,
    service_cv: f64,
    /// Fitting to a trace: the [`TRACE_ONLY`] dimensions count.
    trace: bool,
    /// Fitting to a trace that shows how its slow I/Os bunch: [`PAUSES`] count too.
    pauses: bool,
    /// The device is held (`--pauses-only`): the search moves only [`PAUSES`].
    held: bool,
}

impl Candidate {
    /// The parameter values as the spec will hold them: 3 significant digits, whole numbers where
    /// the model rounds.
    fn values(&self) -> Vec<(&'static str, f64)> {
        let mut v: Vec<(&'static str, f64)> = DIMS
            .iter()
            .zip(&self.x)
            .map(|(d, &lx)| {
                let raw = lx.exp().clamp(d.lo, d.hi);
                (
                    d.key,
                    if d.integer {
                        raw.round().max(1.0)
                    } else {
                        significant(raw, 3)
                    },
                )
            })
            .collect();
        v.push(("page_kib", self.page_kib));
        v.push((
            "power_loss_protected",
            if self.protected { 1.0 } else { 0.0 },
        ));
        // Only a trace fit sets these; a curve fit's spec and table stay as they were.
        if self.service_cv > 0.0 {
            v.push(("service_cv", self.service_cv));
        }
        v.retain(|&(k, _)| self.carries(k));
        v
    }

    /// Whether the search moves dimension `d`: one the candidate carries, and only a pause's
    /// when the device is held.
    fn searches(&self, d: &Dim) -> bool {
        self.carries(d.key) && (!self.held || PAUSES.contains(&d.key))
    }

    /// Whether the spec holds `key`: a [`TRACE_ONLY`] one only when fitting to a trace,
    /// [`PAUSES`] only to one that tells bunching.
    fn carries(&self, key: &str) -> bool {
        if PAUSES.contains(&key) {
            self.pauses
        } else {
            self.trace || !TRACE_ONLY.contains(&key)
        }
    }

    fn spec(&self, base: &'static CatalogueEntry) -> Result<Spec> {
        let mut values = self.values();
        // At most 1024 dies are modelled.
        let chans = values[0].1;
        if chans * values[1].1 > 1024.0 {
            values[1].1 = (1024.0 / chans).floor().max(1.0);
        }
        let mut overrides: Vec<(&'static str, f64)> = base
            .params
            .iter()
            .chain(oltplab_devmodel::params::optional_params(base.kind))
            .filter_map(|p| {
                values
                    .iter()
                    .find(|(k, _)| *k == p.key)
                    .map(|(_, v)| (p.key, *v))
            })
            .collect();
        overrides.retain(|(k, v)| {
            base.param(k).or_else(|| {
                oltplab_devmodel::params::optional_params(base.kind)
                    .iter()
                    .find(|p| p.key == *k)
                    .map(|p| p.value)
            }) != Some(*v)
        });
        let text = Spec::Device {
            entry: base,
            overrides,
        }
        .name();
        parse_spec(&text).map_err(|e| Error::failed(format!("the fit made a spec the model refuses ({e}); this is a bug in oltplab, please report it")))
    }
}

fn significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// What the search found.
pub struct Fit {
    pub spec: Spec,
    pub fitted: Vec<Figures>,
    pub evaluations: u64,
    pub params: Vec<(&'static str, f64)>,
}

/// The commit point counts this many times in the objective: it is one point against a sweep's
/// many, and a database's commits wait for it.
const COMMIT_WEIGHT: f64 = 3.0;

fn objective(points: &[(PointDef, Figures)], fitted: &[Figures]) -> f64 {
    points
        .iter()
        .zip(fitted)
        .map(|((p, m), f)| {
            let w = if p.op == Op::Commit {
                COMMIT_WEIGHT
            } else {
                1.0
            };
            let li = (f.iops.max(1e-9) / m.iops).ln();
            let ll = (f.lat_ns.max(1e-9) / m.lat_ns).ln();
            w * (li * li + ll * ll)
        })
        .sum()
}

/// A starting point from the measurements themselves (not from the base device, so that fitting
/// an emulated catalogue device does not start at its answer).
fn initial(points: &[(PointDef, Figures)]) -> Candidate {
    let of = |op: Op| points.iter().filter(move |(p, _)| p.op == op);
    let shallowest = |op: Op| {
        of(op)
            .min_by_key(|(p, _)| (p.qd, p.block_size_bytes))
            .map(|(_, f)| *f)
    };
    let read1 = shallowest(Op::Randread).map_or(100e3, |f| f.lat_ns);
    let write1 = shallowest(Op::Randwrite).map_or(50e3, |f| f.lat_ns);
    // A commit is an append then its flush: what is left of a commit's period after the flush is
    // the append, which a write buffer acknowledges — a better guess of the ack than a random
    // write's latency, which garbage collection can hold back on a device with a buffer.
    let append = of(Op::Commit)
        .map(|(_, f)| 1e9 / f.iops.max(1e-9) - f.lat_ns)
        .filter(|ns| *ns > 0.0)
        .fold(write1, f64::min);
    let max_read_iops = of(Op::Randread).map(|(_, f)| f.iops).fold(0.0, f64::max);
    let max_bw = points
        .iter()
        .filter(|(p, _)| p.op != Op::Commit)
        .map(|(p, f)| f.iops * p.block_size_bytes as f64)
        .fold(0.0, f64::max);
    let max_write_bw = of(Op::Randwrite)
        .map(|(p, f)| f.iops * p.block_size_bytes as f64)
        .fold(0.0, f64::max);
    let flush = of(Op::Commit).map(|(_, f)| f.lat_ns).next();
    let (channels, dies) = (8.0, 4.0);
    let page_kib = 8.0;
    let program_us = flush.map_or(200.0, |ns| (ns / 1e3).max(2.0));
    let program_bps = channels * dies * page_kib * 1024.0 / (program_us * 1e-6);
    let waf = if max_write_bw > 0.0 {
        (program_bps / max_write_bw).clamp(1.0, 100.0)
    } else {
        2.0
    };
    let link = if max_bw > 0.0 {
        max_bw / 1e6 * 1.2
    } else {
        1000.0
    };
    let occupancy = if max_read_iops > 0.0 {
        0.9e6 / max_read_iops
    } else {
        10.0
    };
    let max_write_iops = of(Op::Randwrite).map(|(_, f)| f.iops).fold(0.0, f64::max);
    let write_occupancy = if max_write_iops > 0.0 {
        0.9e6 / max_write_iops
    } else {
        occupancy
    };
    let values = [
        channels,
        dies,
        read1 / 1e3 * 0.3,
        program_us,
        waf,
        link / 2.0,
        link,
        read1 / 1e3 * 0.5,
        occupancy,
        write_occupancy,
        1.0,
        16.0,
        append / 1e3 * 0.7,
        flush.map_or(1.0, |ns| ns / 1e3 * 0.5),
        // 1 % of commands stalled for ten reads' time.
        read1 / 1e3 * 10.0,
        1.0,
        // The device paused 0.5 % of its time, for as long, keeping a third of its speed.
        read1 / 1e3 * 10.0,
        0.5,
        30.0,
    ];
    debug_assert_eq!(values.len(), DIMS.len());
    let x = DIMS
        .iter()
        .zip(values)
        .map(|(d, v)| v.clamp(d.lo, d.hi).ln())
        .collect();
    Candidate {
        x,
        page_kib,
        protected: flush.is_some_and(|ns| ns < 5e3),
        service_cv: 0.0,
        trace: false,
        pauses: false,
        held: false,
    }
}

/// Where a fit's search starts.
#[derive(Clone, Copy, Debug)]
pub enum Start<'a> {
    /// From guesses read off the measured curves.
    Curves,
    /// From a flash spec, such as an earlier fit.
    From(&'a Spec),
    /// From a flash spec whose device is held: only its pauses move.
    PausesOf(&'a Spec),
}

/// Fits the flash model, starting from `base`'s catalogue entry, to `points`, evaluating at most
/// `max_evals` candidates: a pattern search from each of a few starting points (their budgets
/// shared out), the best kept.
pub fn fit(
    base: &'static CatalogueEntry,
    points: &[(PointDef, Figures)],
    c: &SimConfig,
    max_evals: u64,
    trace: Option<(&TraceTarget, f64)>,
    start: Start,
) -> Result<Fit> {
    // The trace's quantiles weigh `weight` times as much, all together, as the curves' figures.
    let curve_terms: f64 = points
        .iter()
        .map(|(p, _)| {
            2.0 * if p.op == Op::Commit {
                COMMIT_WEIGHT
            } else {
                1.0
            }
        })
        .sum();
    let mut ev = Evaluator {
        base,
        points,
        defs: points.iter().map(|(p, _)| *p).collect(),
        c,
        trace: trace.map(|(t, w)| (t, w * curve_terms / t.terms().max(1) as f64)),
        seen: Vec::new(),
        evaluations: 0,
    };
    let mut starts = match start {
        Start::From(spec) | Start::PausesOf(spec) => vec![from_spec(spec, &initial(points))],
        Start::Curves => starts(points),
    };
    for cand in &mut starts {
        cand.held = matches!(start, Start::PausesOf(_));
        cand.trace = trace.is_some();
        cand.pauses = trace.is_some_and(|(t, _)| t.tells_bunching());
        // The pauses start where the trace's slow moments point (their share of the moments,
        // their length, how much they slow their I/Os), not at a guess the search must leave.
        if let Some(guess) = trace.and_then(|(t, _)| t.pause_guess()) {
            for (key, value) in guess {
                let i = DIMS
                    .iter()
                    .position(|d| d.key == key)
                    .expect("a pause dimension");
                cand.x[i] = value.clamp(DIMS[i].lo, DIMS[i].hi).ln();
            }
        }
    }
    let mut best: Option<(Candidate, f64)> = None;
    for (i, start) in starts.iter().enumerate() {
        let budget = max_evals * (i as u64 + 1) / starts.len() as u64;
        let found = search(&mut ev, start.clone(), budget.max(1))?;
        if best.as_ref().is_none_or(|(_, f)| found.1 < *f) {
            best = Some(found);
        }
    }
    let (best, _) = best.expect("at least one start");
    let spec = best.spec(base)?;
    let fitted = simulate_all(&spec, &ev.defs, c)?;
    Ok(Fit {
        params: best.values(),
        spec,
        fitted,
        evaluations: ev.evaluations,
    })
}

/// Evaluates candidates (each distinct parameter set once).
struct Evaluator<'a> {
    base: &'static CatalogueEntry,
    points: &'a [(PointDef, Figures)],
    defs: Vec<PointDef>,
    c: &'a SimConfig,
    /// The trace window and the weight of each of its terms.
    trace: Option<(&'a TraceTarget, f64)>,
    seen: Vec<(Vec<(&'static str, f64)>, f64)>,
    evaluations: u64,
}

impl Evaluator<'_> {
    fn eval(&mut self, cand: &Candidate) -> Result<f64> {
        let key = cand.values();
        if let Some((_, f)) = self.seen.iter().find(|(k, _)| *k == key) {
            return Ok(*f);
        }
        self.evaluations += 1;
        let spec = cand.spec(self.base)?;
        let fitted = simulate_all(&spec, &self.defs, self.c)?;
        let mut f = objective(self.points, &fitted);
        if let Some((t, w)) = self.trace {
            f += w * t.objective(&t.simulate(&spec)?);
        }
        if self.seen.len() > 4096 {
            self.seen.clear();
        }
        self.seen.push((key, f));
        Ok(f)
    }
}

/// Where the searches start: the estimate from the measurements, and two other shapes of device
/// (a few wide controllers and large pages; many small dies) that a search from the first would
/// have to cross a ridge to reach.
fn starts(points: &[(PointDef, Figures)]) -> Vec<Candidate> {
    let first = initial(points);
    let at = |key: &str| {
        DIMS.iter()
            .position(|d| d.key == key)
            .expect("a fitted key")
    };
    let mut wide = first.clone();
    wide.x[at("controllers")] = 4f64.ln();
    wide.x[at("cmd_occupancy_us")] += 4f64.ln();
    wide.page_kib = 16.0;
    let mut many = first.clone();
    many.x[at("channels")] = 16f64.ln();
    many.x[at("dies_per_channel")] = 8f64.ln();
    many.x[at("controllers")] = 2f64.ln();
    many.x[at("cmd_occupancy_us")] += 2f64.ln();
    many.page_kib = 4.0;
    vec![first, wide, many]
}

/// A candidate holding `spec`'s values (a flash spec of the base's device), `default`'s where
/// it has none.
fn from_spec(spec: &Spec, default: &Candidate) -> Candidate {
    let Spec::Device { entry, overrides } = spec else {
        return default.clone();
    };
    let value = |key: &str| oltplab_devmodel::params::param_value(entry, overrides, key);
    let mut c = default.clone();
    for (i, d) in DIMS.iter().enumerate() {
        let v = match (d.key, value(d.key)) {
            // 0: a write occupies the controller as long as a read.
            ("write_occupancy_us", Some(v)) if v <= 0.0 => value("cmd_occupancy_us"),
            (_, v) => v,
        };
        if let Some(v) = v {
            c.x[i] = v.clamp(d.lo, d.hi).ln();
        }
    }
    c.page_kib = value("page_kib").unwrap_or(c.page_kib);
    c.protected = value("power_loss_protected").is_some_and(|v| v > 0.0);
    c.service_cv = value("service_cv").unwrap_or(0.0);
    c
}

/// A discrete choice of [`search`]: the flash page (KiB) with power-loss protection, or the
/// spread of each command's time.
#[derive(Clone, Copy)]
enum Choice {
    Page((f64, bool)),
    Spread(f64),
}

/// A pattern search from `start` until the evaluator has done `budget` evaluations in all:
/// coordinate steps in log space (continued while they help), the discrete choices, and steps
/// along a fixed sequence of random directions; the step halves when nothing helps.
fn search(ev: &mut Evaluator, start: Candidate, budget: u64) -> Result<(Candidate, f64)> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut best_f = ev.eval(&start)?;
    let mut best = start;
    let mut step = 4f64.ln();
    let min_step = 1.01f64.ln();
    'search: while step >= min_step {
        let mut improved = false;
        for (i, d) in DIMS.iter().enumerate() {
            if !best.searches(d) {
                continue;
            }
            for dir in [1.0, -1.0] {
                if ev.evaluations >= budget {
                    break 'search;
                }
                let mut cand = best.clone();
                cand.x[i] = (cand.x[i] + dir * step).clamp(d.lo.ln(), d.hi.ln());
                if cand.values() == best.values() {
                    continue;
                }
                let f = ev.eval(&cand)?;
                if f < best_f {
                    best = cand;
                    best_f = f;
                    improved = true;
                    // Keep going the same way while it helps.
                    loop {
                        if ev.evaluations >= budget {
                            break 'search;
                        }
                        let mut further = best.clone();
                        further.x[i] = (further.x[i] + dir * step).clamp(d.lo.ln(), d.hi.ln());
                        if further.values() == best.values() {
                            break;
                        }
                        let f = ev.eval(&further)?;
                        if f < best_f {
                            best = further;
                            best_f = f;
                        } else {
                            break;
                        }
                    }
                    break;
                }
            }
        }
        // The choices tried as a whole: the page with protection, and (to a trace) the spread;
        // none when the device is held.
        let (pages, spreads): (&[f64], &[f64]) = match (best.held, ev.trace.is_some()) {
            (true, _) => (&[], &[]),
            (false, true) => (PAGES_KIB, SERVICE_CVS),
            (false, false) => (PAGES_KIB, &[]),
        };
        let pages = pages
            .iter()
            .flat_map(|&page| [(page, false), (page, true)].map(Choice::Page));
        for choice in pages.chain(spreads.iter().map(|&cv| Choice::Spread(cv))) {
            if ev.evaluations >= budget {
                break 'search;
            }
            let mut cand = best.clone();
            match choice {
                Choice::Page((page, protected)) => {
                    cand.page_kib = page;
                    cand.protected = protected;
                }
                Choice::Spread(cv) => cand.service_cv = cv,
            }
            if cand == best {
                continue;
            }
            let f = ev.eval(&cand)?;
            if f < best_f {
                best = cand;
                best_f = f;
                improved = true;
            }
        }
        // Parameters that trade against each other, such as a read's fixed overhead and its
        // array time, move together along these.
        for _ in 0..DIMS.len() {
            if ev.evaluations >= budget {
                break 'search;
            }
            let mut cand = best.clone();
            for (i, d) in DIMS.iter().enumerate() {
                let u = (rand() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
                if !cand.searches(d) {
                    continue;
                }
                cand.x[i] = (cand.x[i] + u * step).clamp(d.lo.ln(), d.hi.ln());
            }
            if cand.values() == best.values() {
                continue;
            }
            let f = ev.eval(&cand)?;
            if f < best_f {
                best = cand;
                best_f = f;
                improved = true;
            }
        }
        if !improved {
            step /= 2.0;
        }
    }
    Ok((best, best_f))
}

fn summarise(
    fit: &Fit,
    points: &[(PointDef, Figures)],
    base: &'static CatalogueEntry,
    emulated: Option<&Spec>,
    fit_s: f64,
    measurements: Vec<String>,
) -> FitSummary {
    let rows: Vec<FitPoint> = points
        .iter()
        .zip(&fit.fitted)
        .map(|((p, m), f)| FitPoint {
            point: *p,
            measured: *m,
            fitted: *f,
            iops_error_pct: (f.iops / m.iops - 1.0) * 100.0,
            lat_error_pct: (f.lat_ns / m.lat_ns - 1.0) * 100.0,
        })
        .collect();
    FitSummary {
        spec: fit.spec.name(),
        base: base.name.to_string(),
        emulated: emulated.map(Spec::name),
        fit_error: fit_error(points, &fit.fitted),
        points: rows,
        params: fit
            .params
            .iter()
            .map(|(k, v)| FittedParam {
                key: k.to_string(),
                value: *v,
            })
            .collect(),
        evaluations: fit.evaluations,
        fit_s,
        measurements,
        trace: None,
        validation: None,
    }
}

/// The fit error of `fitted` against `measured` (unweighted: every figure counts once).
pub fn fit_error(points: &[(PointDef, Figures)], fitted: &[Figures]) -> FitError {
    let mut logs = Vec::new();
    let (mut iops_abs, mut lat_abs) = (0.0, 0.0);
    for ((_, m), f) in points.iter().zip(fitted) {
        logs.push((f.iops / m.iops).ln());
        logs.push((f.lat_ns / m.lat_ns).ln());
        iops_abs += (f.iops / m.iops - 1.0).abs();
        lat_abs += (f.lat_ns / m.lat_ns - 1.0).abs();
    }
    let n = points.len().max(1) as f64;
    let rms = (logs.iter().map(|l| l * l).sum::<f64>() / logs.len().max(1) as f64).sqrt();
    FitError {
        rms_log: rms,
        rms_pct: (rms.exp() - 1.0) * 100.0,
        iops_mean_abs_pct: iops_abs / n * 100.0,
        lat_mean_abs_pct: lat_abs / n * 100.0,
        worst_pct: (logs.iter().fold(0.0f64, |a, l| a.max(l.abs())).exp() - 1.0) * 100.0,
    }
}

fn print_table(s: &FitSummary) {
    output::note!(
        "{:<22} {:>10} {:>10}   {:>10} {:>10}   {:>8} {:>8}",
        "point",
        "IOPS",
        "latency",
        "fit IOPS",
        "fit lat",
        "IOPS err",
        "lat err"
    );
    for r in &s.points {
        output::note!(
            "{:<22} {:>10} {:>10}   {:>10} {:>10}   {:>+7.1}% {:>+7.1}%",
            r.point.label(),
            format_count(r.measured.iops),
            format_ns(r.measured.lat_ns),
            format_count(r.fitted.iops),
            format_ns(r.fitted.lat_ns),
            r.iops_error_pct,
            r.lat_error_pct
        );
    }
    let e = &s.fit_error;
    output::note!(
        "(a commit point's IOPS are commits/s and its latency the fdatasync's; a randrw point's latency is its reads')\nfit error: {:.1} % RMS over {} figures (IOPS mean |error| {:.1} %, latency {:.1} %, worst {:.1} %), {} candidates in {:.1} s",
        e.rms_pct,
        2 * s.points.len(),
        e.iops_mean_abs_pct,
        e.lat_mean_abs_pct,
        e.worst_pct,
        s.evaluations,
        s.fit_s
    );
    output::note!("fitted spec:");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sim_config() -> SimConfig {
        SimConfig {
            ios: 1000,
            warm_ns: 50_000_000,
            run_ns: 200_000_000,
            region_bytes: 256 << 20,
            seed: 1,
        }
    }

    /// Fitting the model's own curves of a catalogue device gives back those curves.
    #[test]
    fn the_model_recovers_its_own_curves() {
        let truth = parse_spec("sata-ssd-2010").unwrap();
        let c = sim_config();
        let defs: Vec<PointDef> = [
            (Op::Randread, 16 << 10, 1),
            (Op::Randread, 16 << 10, 16),
            (Op::Randwrite, 4 << 10, 1),
            (Op::Randwrite, 4 << 10, 16),
            (Op::Commit, 8 << 10, 1),
        ]
        .iter()
        .map(|&(op, bs, qd)| PointDef {
            op,
            block_size_bytes: bs,
            qd,
        })
        .collect();
        let figures = simulate_all(&truth, &defs, &c).unwrap();
        let points: Vec<(PointDef, Figures)> = defs.iter().copied().zip(figures).collect();
        let base = catalogue::lookup("sata-ssd-2010").unwrap();
        let start = initial(&points);
        let start_error = fit_error(
            &points,
            &simulate_all(&start.spec(base).unwrap(), &defs, &c).unwrap(),
        );
        let budget = std::env::var("FIT_BUDGET")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(400);
        let fit = fit(base, &points, &c, budget, None, Start::Curves).unwrap();
        let e = fit_error(&points, &fit.fitted);
        for ((p, m), f) in points.iter().zip(&fit.fitted) {
            eprintln!("{} {:?} {:?} evals {}", p.label(), m, f, fit.evaluations);
        }
        assert!(
            e.rms_pct < 6.0 && e.rms_pct < start_error.rms_pct / 2.0,
            "fit error {:.1} % from {:.1} % at the start: {}",
            e.rms_pct,
            start_error.rms_pct,
            fit.spec
        );
        // The spec printed is the spec fitted.
        assert_eq!(parse_spec(&fit.spec.name()).unwrap(), fit.spec);
        // Started from a spec (`--start`), the search begins at its values: from the truth,
        // in 5 candidates, the curves exactly.
        let started = super::fit(base, &points, &c, 5, None, Start::From(&truth)).unwrap();
        let e = fit_error(&points, &started.fitted).rms_pct;
        assert!(
            e < 0.5,
            "started from the truth: {e:.1} %, {}",
            started.spec
        );
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(123456.0, 3), 123000.0);
        assert_eq!(significant(0.012345, 3), 0.0123);
        assert_eq!(significant(7.0, 3), 7.0);
    }
}
