//! S1's measurement: for each cell, the device's 16 KiB random-read figures (once per device),
//! its workload on a fresh copy of the loaded database with the I/O traced, the trace's replays,
//! α and the sentence on what limited the run — and the result it makes: S1's (`oltplab study`,
//! a row per device) or a study file's (`summary.cells[]` with ratios against the baseline).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{Fidelity, Spec, OFF_TARGET_PCT, P99_OFF_TARGET_PCT};
use oltplab_metrics::schema::{now_rfc3339, ResultDoc};
use oltplab_metrics::{Warning, WarningKind};
use oltplab_trace::replay::sim::{replay_virtual, ReplayOrder};
use oltplab_trace::{Op, TraceData, TraceReader};
use oltplab_workloads::tpcc::tx::TxType;
use serde::Serialize;
use serde_json::Value;

use crate::device_command::config::{DeviceRequest, Pattern, QueueDepths};
use crate::emulate::BackingChoice;
use crate::trace_commands::replay::{replay, ReplayConfig};
use crate::workload::target::Engine;
use crate::{device_command, output, STOP};
use oltplab_schema::{
    Breakdown, CellResult, DeviceFigures, DeviceSummary, Interval, Ratios, Repeats, ReplayResult,
    StudySummary,
};

use super::database::{
    load_engine, orders_work, study_run, study_workload_run, Database, BROKERAGE, ORDERS,
};
use super::explain::{self, explain, Explain as _};
use super::file::{
    check_settings, describe_engine, duration, print_plan, remove_stopped_traces, scenario_of_dir,
    unique, Begun, CellPlan, FileStudy, CELLS_DIR, SCENARIO,
};
use super::{cells, new_study_doc, secs, Scale, State, StudyArgs, REPORT_FILE, RESULTS_FILE};

/// Steps 2–4 of a device's measurement — TPC-C with its trace, the replays, α and what limited
/// the run, `repeat` times — given its device figures (QD 1 mean latency ns, QD 32 IOPS, from
/// `device_figures` or an earlier cell of the same device): what each cell of a study runs.
#[allow(clippy::too_many_arguments)]
pub(super) fn study_runs(
    spec: &Spec,
    name: &str,
    device: (f64, f64),
    scale: &Scale,
    repeat: u32,
    database: &Database,
    data_dir: &Path,
    out: &Path,
    warnings: &mut Vec<Warning>,
) -> Result<DeviceFigures> {
    // 2–4, once per repetition, each on a fresh copy: the first keeps the plain file names.
    let mut runs = Vec::new();
    for r in 1..=repeat {
        let tag = match r {
            1 => name.to_string(),
            _ => format!("{name}-r{r}"),
        };
        if repeat > 1 {
            output::note!("  repetition {r} of {repeat}");
        }
        match run_and_replay(spec, name, &tag, scale, database, data_dir, out, warnings) {
            Ok(f) => runs.push(f),
            Err(Error::Interrupted) if !runs.is_empty() => break,
            Err(e) => return Err(e),
        }
    }
    let mut figures = runs[0].clone();
    figures.randread16k_lat_ns = device.0;
    figures.randread16k_iops = device.1;
    if runs.len() > 1 {
        let rep = Repeats::of(&runs);
        let mean = |i: &Interval| i.mean;
        figures.tpmc = mean(&rep.tpmc);
        figures.tpm_total = runs.iter().map(|r| r.tpm_total).sum::<f64>() / runs.len() as f64;
        figures.run_iops = mean(&rep.run_iops);
        figures.replay_iops = mean(&rep.replay_iops);
        figures.alpha = Some(mean(&rep.alpha));
        figures.alpha_causal = rep.alpha_causal.as_ref().map(mean);
        figures.tpse_like = rep.tpse_like.as_ref().map(mean);
        figures.orders_tps = rep.orders_tps.as_ref().map(mean);
        let mean_of = |f: fn(&DeviceFigures) -> Option<f64>| {
            let v: Vec<f64> = runs.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        figures.replay_causal_iops = mean_of(|r| r.replay_causal_iops);
        figures.replay_btreplay_iops = mean_of(|r| r.replay_btreplay_iops);
        figures.alpha_btreplay = mean_of(|r| r.alpha_btreplay);
        // The cell's own throughput: tpmC, Trade-Results/s or order-entry tx/s.
        let (name, t) = match (&rep.tpse_like, &rep.orders_tps) {
            (Some(t), _) => ("Trade-Results/s", t),
            (_, Some(t)) => ("order-entry tx/s", t),
            _ => ("tpmC", &rep.tpmc),
        };
        output::note!(
            "  over {} runs: {name} {:.0} ± {:.0}, α {:.2} ± {:.2} (95 %)",
            rep.runs,
            t.mean,
            t.ci95,
            rep.alpha.mean,
            rep.alpha.ci95
        );
        figures.repeats = Some(rep);
    }
    Ok(figures)
}

/// One TPC-C run of the device on a fresh copy, its replays and its explanation; `tag` names its
/// files (the device's name, with the repetition's number after the first).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_and_replay(
    spec: &Spec,
    name: &str,
    tag: &str,
    scale: &Scale,
    database: &Database,
    data_dir: &Path,
    out: &Path,
    warnings: &mut Vec<Warning>,
) -> Result<DeviceFigures> {
    let mut figures = DeviceFigures {
        name: name.to_string(),
        spec: spec.name(),
        ..DeviceFigures::default()
    };

    // 2. TPC-C on a fresh copy of the loaded database, through the VFS (SQLite) or the shim
    //    (servers) that traces and emulates.
    let db_path = database.copy_for(tag)?;
    let trace_path = out.join(format!("{tag}.trace"));
    if database.workload == ORDERS {
        let work = orders_work(scale);
        output::note!(
            "  order entry: {} connections, {} insert transactions in all after {} warm-up each",
            scale.terminals,
            format_count(work.tx_per_point as f64),
            work.warmup_tx_per_connection
        );
    } else {
        output::note!(
            "  {}: {} terminals, {} warm-up + {} measured",
            if database.workload == BROKERAGE {
                "brokerage"
            } else {
                "TPC-C"
            },
            scale.terminals,
            secs(scale.warmup_s),
            secs(scale.duration_s)
        );
    }
    let mut db = database.spec(&db_path)?;
    let user_set = |key: &str| db.server_settings.iter().any(|(k, _)| k == key);
    if db.engine == Engine::Postgres && scale.name != "quick" && !user_set("checkpoint_timeout") {
        // A checkpoint inside the measured window, so that the trace and α include the
        // engine's write-back (PostgreSQL's default, 5 min, may fall outside a short window).
        let timeout_s = (scale.duration_s / 2.0).clamp(30.0, 300.0).round();
        db.server_settings
            .push(("checkpoint_timeout".into(), format!("{timeout_s}s")));
    }
    let run_cfg = study_run(
        scale,
        db,
        (!spec.is_host()).then_some(spec),
        Some(trace_path.clone()),
        &out.join(format!("run-{tag}")),
    );
    let outcome = study_workload_run(database, &run_cfg, scale)?;
    figures.run = Some(outcome.step);
    let run = &outcome.summary;
    figures.tpmc = run.tpmc;
    figures.tpm_total = run.tpm_total;
    figures.tpse_like = outcome.tpse_like;
    figures.orders_tps = outcome.orders_tps;
    figures.trace = format!("{tag}.trace");
    figures.run_fidelity = run.emulation.as_ref().map(|e| e.fidelity.clone());
    for w in &outcome.warnings {
        if matches!(
            w.kind,
            WarningKind::EmulationOffTarget | WarningKind::ForeignData | WarningKind::NotSteady
        ) {
            warnings.push(Warning::new(w.kind, format!("{tag} run: {}", w.message)));
        }
    }
    let io = trace_totals(&trace_path)?;
    let measured_s = match run.measured_s {
        s if s > 0.0 => s,
        _ => scale.duration_s,
    };
    figures.run_ios = io.reads + io.writes;
    figures.run_syncs = io.syncs;
    figures.run_iops = figures.run_ios as f64 / measured_s;
    interrupted()?;

    // 3. The replay: the same I/Os, same order per thread and same concurrency, no time between.
    output::note!(
        "  replay: {} I/Os and {} syncs as fast as the device allows",
        format_count(figures.run_ios as f64),
        format_count(io.syncs as f64)
    );
    let replay_dir = data_dir.join(format!("replay-{tag}"));
    // As the run: SQLite and PostgreSQL go through the page cache, InnoDB uses O_DIRECT; on an
    // emulated device the time comes from its model either way.
    let direct = database.engine == "mariadb" && spec.is_host();
    let replayed = replay_figures(
        &trace_path,
        spec,
        &replay_dir,
        direct,
        &out.join(format!("replay-{tag}")),
    )?;
    let _ = std::fs::remove_dir_all(&replay_dir);
    database.remove_copy(&db_path);
    figures.replay_iops = replayed.summary.iops;
    figures.replay_fidelity = replayed.summary.fidelity.clone();
    // On the host the real-time replay is the lanes one.
    let mut bound_order = ReplayOrder::Lanes;
    if !spec.is_host() {
        // On a model the bound needs no waiting: the same trace through the same model in virtual
        // time, in both orders. The real-time replay stays as the cross-check.
        let trace = TraceData::load(&trace_path)?;
        let lanes = replay_virtual(&trace, spec, 1, ReplayOrder::Lanes)?;
        let causal = replay_virtual(&trace, spec, 1, ReplayOrder::Causal)?;
        // S1's era replayed with btreplay; it needs the CPU of each I/O, which every capture of
        // this version records.
        let btreplay = (trace.records_with_cpu() > 0)
            .then(|| replay_virtual(&trace, spec, 1, ReplayOrder::Btreplay))
            .transpose()?;
        let realtime = figures.replay_iops;
        if realtime > 0.0 && (realtime / lanes.iops - 1.0).abs() > REALTIME_AGREES_PCT / 100.0 {
            warn(warnings, Warning::new(
                WarningKind::EmulationOffTarget,
                format!("{tag}: the real-time replay through the emulator did {realtime:.0} IOPS, {:+.0} % off the model's {:.0} in virtual time; α uses the model's (the emulator's own timing error: {})", (realtime / lanes.iops - 1.0) * 100.0, lanes.iops, figures.replay_fidelity.as_ref().map(|f| f.off_pct).map_or("not measured".into(), |p| format!("{p:+.1} % latency"))),
            ));
        }
        figures.replay_realtime_iops = Some(realtime);
        figures.replay_lanes_iops = Some(lanes.iops);
        figures.replay_causal_iops = Some(causal.iops);
        figures.alpha_causal = (causal.iops > 0.0).then(|| figures.run_iops / causal.iops);
        figures.replay_btreplay_iops = btreplay.as_ref().map(|b| b.iops);
        figures.alpha_btreplay = btreplay
            .as_ref()
            .filter(|b| b.iops > 0.0)
            .map(|b| figures.run_iops / b.iops);
        // Every order is a schedule of the same I/O that the device can do, so the bound is the
        // one that got the most from it. btreplay's deep queue usually does; but run flat out,
        // a thread's I/O lands beside the others' as it never did in the run (a background
        // writer beside the readers), which can cost a device more than the run's own timing.
        (figures.replay_iops, bound_order) = [
            (lanes.iops, ReplayOrder::Lanes),
            (causal.iops, ReplayOrder::Causal),
            (
                figures.replay_btreplay_iops.unwrap_or(0.0),
                ReplayOrder::Btreplay,
            ),
        ]
        .into_iter()
        .fold((0.0, ReplayOrder::Lanes), |best, o| {
            if o.0 > best.0 {
                o
            } else {
                best
            }
        });
    }
    figures.alpha = (figures.replay_iops > 0.0).then(|| figures.run_iops / figures.replay_iops);
    interrupted()?;

    // 4. What limited the run.
    // The transactions that take SQLite's writer lock; their I/O is the holder's.
    let write_txs = [TxType::NewOrder, TxType::Payment, TxType::Delivery];
    let holder_io_ns = write_txs
        .iter()
        .map(|t| io.wait_ns_by_tag[t.tag() as usize])
        .sum();
    let write_names = write_txs.map(|t| t.name());
    // The breakdown's rules read a missing bound as no sign of a device limit (α 0).
    let alpha = figures.alpha.unwrap_or(0.0);
    figures.breakdown = Breakdown::from_run(run, io.wait_ns, scale, alpha);
    if database.workload == "tpcc" {
        // The other workloads' writers and their tags are their own; their lock waits stay
        // unsplit.
        figures.breakdown = figures
            .breakdown
            .with_writer_lock(run, &write_names, holder_io_ns);
    }
    figures.breakdown.alpha_causal = figures.alpha_causal;
    figures.bound_order = Some(bound_order);
    figures.breakdown.bound_order = bound_order;
    figures.breakdown.alpha_lanes = figures
        .replay_lanes_iops
        .filter(|&v| v > 0.0)
        .map(|v| figures.run_iops / v);
    let off_pct = |f: &Option<Fidelity>| f.as_ref().map(|f| f.off_pct);
    figures.breakdown.run_fidelity_off_pct = off_pct(&figures.run_fidelity);
    figures.breakdown.replay_fidelity_off_pct = off_pct(&figures.replay_fidelity);
    figures.explanation = explain(&figures.breakdown, spec.is_host(), &database.engine);
    figures.io_by_tx = run.io.by_tx.clone();
    // Said once per device, not once per repetition.
    if tag == name && spec.is_host() && io.reads > 0 && database.engine != "mariadb" {
        warn(warnings, Warning::new(
            WarningKind::PageCache,
            format!("{name}: {} reads through the page cache, so the host's run and replay figures include memory hits; the emulated devices see every read", outcome.engine_version.as_deref().unwrap_or(&database.engine)),
        ));
    }
    output::note!(
        "  {}, run {:.0} IOPS, replay {:.0} IOPS, α {}: {}",
        match (figures.tpse_like, figures.orders_tps) {
            (Some(t), _) => format!("{t:.1} Trade-Results/s"),
            (_, Some(t)) => format!("{t:.0} order-entry tx/s"),
            _ => format!("tpmC {:.0}", figures.tpmc),
        },
        figures.run_iops,
        figures.replay_iops,
        figures.alpha.map_or("—".into(), |a| format!("{a:.2}")),
        figures.explanation
    );
    Ok(figures)
}

/// A warning of the study itself (the runs print their own): printed now, kept in the result.
pub(super) fn warn(warnings: &mut Vec<Warning>, w: Warning) {
    output::print_warnings(std::slice::from_ref(&w));
    warnings.push(w);
}

/// The real-time replay through the emulator and the virtual one may differ by this much before a
/// warning: the emulator's timing error on a busy machine.
pub(super) const REALTIME_AGREES_PCT: f64 = 5.0;

pub(super) fn interrupted() -> Result<()> {
    if STOP.load(Ordering::Relaxed) {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

/// The device's own figures: `oltplab device --profile db-16k-randread --sweep-qd 1,32` on it
/// (emulated devices on a RAM backing, so that the model, not this machine's disk, sets every
/// time), measured in-process; returns (QD 1 mean latency ns, QD 32 IOPS).
pub(super) fn device_figures(
    spec: &Spec,
    name: &str,
    scale: &Scale,
    data_dir: &Path,
    out: &Path,
) -> Result<(f64, f64)> {
    let request = DeviceRequest {
        target: spec.is_host().then(|| data_dir.join("device.dat")),
        emulate: (!spec.is_host()).then(|| spec.clone()),
        backing: if spec.is_host() {
            BackingChoice::Auto
        } else {
            BackingChoice::Ram
        },
        pattern: Pattern::profiles(&[DEVICE_PROFILE]),
        queue_depths: QueueDepths::Sweep(vec![DEVICE_QD_LATENCY, DEVICE_QD_IOPS]),
        runtime: Duration::from_secs_f64(scale.device_runtime_s),
        ramp: Duration::from_secs_f64(scale.device_ramp_s),
        size: scale.device_size_bytes,
        out: Some(out.join(format!("device-{name}"))),
        ..DeviceRequest::default()
    };
    let outcome = device_command::measure(&request.check()?)?;
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    sweep_figures(&outcome.doc.summary.measured)
}

/// The study's device profile and its two queue depths: latency at 1, IOPS at 32 (S1's figures).
pub(super) const DEVICE_PROFILE: &str = "db-16k-randread";

pub(super) const DEVICE_QD_LATENCY: u32 = 1;

pub(super) const DEVICE_QD_IOPS: u32 = 32;

/// (QD 1 mean latency ns, QD 32 IOPS) of a device result; a point it lacks is an error, not a 0.
pub(super) fn sweep_figures(summary: &DeviceSummary) -> Result<(f64, f64)> {
    let sweep = summary
        .profiles
        .as_ref()
        .and_then(|p| p.iter().find(|p| p.name == DEVICE_PROFILE))
        .map(|p| p.sweep.as_slice())
        .unwrap_or_default();
    let at = |qd: u32| {
        sweep.iter().find(|p| p.qd == qd).ok_or_else(|| {
            Error::failed(format!(
                "the device run measured no {DEVICE_PROFILE} point at QD {qd}, so the study has no device figure: this is a bug in oltplab"
            ))
        })
    };
    Ok((at(DEVICE_QD_LATENCY)?.lat_ns.mean, at(DEVICE_QD_IOPS)?.iops))
}

/// Replays the run's trace as fast as the device allows (`oltplab trace replay
/// --as-fast-as-possible`, in-process); its result is kept in `result_dir`.
pub(super) fn replay_figures(
    trace: &Path,
    spec: &Spec,
    target: &Path,
    direct: bool,
    result_dir: &Path,
) -> Result<ReplayResult> {
    let cfg = ReplayConfig {
        direct,
        out: Some(result_dir.to_path_buf()),
        ..ReplayConfig::as_fast_as_possible(trace, target, (!spec.is_host()).then_some(spec))
    };
    let run = replay(&cfg)?;
    if run.interrupted {
        return Err(Error::Interrupted);
    }
    Ok(run.doc)
}

pub(super) struct TraceTotals {
    pub(super) reads: u64,
    pub(super) writes: u64,
    pub(super) syncs: u64,
    /// Time the terminals spent in I/O calls (reads, writes and syncs): the records tied to a
    /// transaction, or every record of an untagged trace.
    pub(super) wait_ns: u64,
    /// The same per transaction tag.
    pub(super) wait_ns_by_tag: [u64; 256],
}

pub(super) fn trace_totals(path: &Path) -> Result<TraceTotals> {
    let reader = TraceReader::open(path)?;
    let mut t = TraceTotals {
        reads: 0,
        writes: 0,
        syncs: 0,
        wait_ns: 0,
        wait_ns_by_tag: [0; 256],
    };
    let (mut all_ns, mut tagged_ns) = (0u64, 0u64);
    reader.for_each(|r| {
        match r.kind() {
            Op::Read => t.reads += 1,
            Op::Write => t.writes += 1,
            op if op.is_sync() => t.syncs += 1,
            _ => {}
        }
        all_ns += r.latency_ns as u64;
        if r.tag != 0 {
            tagged_ns += r.latency_ns as u64;
            t.wait_ns_by_tag[r.tag as usize] += r.latency_ns as u64;
        }
    })?;
    // A server's background processes (checkpointer, WAL writer) do I/O no terminal waits for.
    t.wait_ns = if tagged_ns > 0 { tagged_ns } else { all_ns };
    Ok(t)
}

pub(super) fn print_table(summary: &StudySummary, out: &Path) {
    output::say!("");
    output::say!(
        "{:<18} {:>11} {:>11} {:>9} {:>10} {:>10} {:>10} {:>10} {:>7} {:>8} {:>8} {:>9} {:>8} {:>6}  vs baseline (IOPS, lat, tpmC)",
        "device",
        "16k IOPS",
        "16k lat",
        "tpmC",
        "run IOPS",
        "lanes",
        "causal",
        "btreplay",
        "α",
        "α causal",
        "α btrep.",
        "run fid.",
        "run p99",
        "cpu q"
    );
    for d in &summary.devices {
        let vs = d.vs_baseline.as_ref().map_or(String::new(), |r| {
            format!(
                "{:.1}×, {:.3}×, {:.2}×",
                r.randread16k_iops, r.randread16k_lat_ns, r.tpmc
            )
        });
        // An α above 1.05 is no bound: it is marked where it stands, not only in the sentence.
        let alpha = |a: f64| {
            if a > explain::ALPHA_VALID_MAX {
                format!("{a:.2}!")
            } else {
                format!("{a:.2}")
            }
        };
        // The run's realised latency against its model: a figure off by more than 5 % is marked.
        let fidelity =
            d.run_fidelity
                .as_ref()
                .map(|f| f.emulated_off_pct)
                .map_or("—".into(), |p| {
                    let mark = if p.abs() > OFF_TARGET_PCT { "!" } else { "" };
                    format!("{p:+.1}%{mark}")
                });
        // Its emulated p99 against the model's: where the emulator's error shows first; and the
        // share of I/Os its threads' queueing for a core made late (the machine's load).
        let (p99, cpu_queue) = d.run_fidelity.as_ref().filter(|f| f.ios > 0).map_or(
            ("—".into(), "—".into()),
            |f| {
                let mark = if f.emulated_p99_off_pct.abs() > P99_OFF_TARGET_PCT {
                    "!"
                } else {
                    ""
                };
                (
                    format!("{:+.0}%{mark}", f.emulated_p99_off_pct),
                    format!("{:.0}%", f.cpu_queue_late_pct),
                )
            },
        );
        // With --repeat: the mean and its 95 % interval.
        let rep = d.repeats.as_ref();
        let tpmc = rep.map_or(format!("{:.0}", d.tpmc), |r| {
            format!("{:.0}±{:.0}", r.tpmc.mean, r.tpmc.ci95)
        });
        let alpha_shown = match rep {
            Some(r) => format!("{}±{:.2}", alpha(r.alpha.mean), r.alpha.ci95),
            None => d.alpha.map_or("—".into(), alpha),
        };
        // The replay α is against is marked.
        let replay = |v: Option<f64>, order: ReplayOrder| {
            v.map_or("—".into(), |v| {
                let mark = if Some(order) == d.bound_order {
                    "*"
                } else {
                    ""
                };
                format!("{v:.0}{mark}")
            })
        };
        output::say!(
            "{:<18} {:>11} {:>11} {:>9} {:>10.0} {:>10} {:>10} {:>10} {:>7} {:>8} {:>8} {:>9} {:>8} {:>6}  {}",
            d.name,
            format_count(d.randread16k_iops),
            format_ns(d.randread16k_lat_ns),
            tpmc,
            d.run_iops,
            replay(
                d.replay_lanes_iops.or(Some(d.replay_iops)),
                ReplayOrder::Lanes
            ),
            replay(d.replay_causal_iops, ReplayOrder::Causal),
            replay(d.replay_btreplay_iops, ReplayOrder::Btreplay),
            alpha_shown,
            d.alpha_causal.map_or("—".into(), alpha),
            d.alpha_btreplay.map_or("—".into(), alpha),
            fidelity,
            p99,
            cpu_queue,
            vs
        );
    }
    output::say!(
        "(replays, IOPS — lanes: each traced thread one synchronous I/O at a time, threads free; causal: an I/O waits for every I/O that had completed before it started in the run; btreplay: blktrace's btreplay -N, each CPU's I/O in bunches submitted back to back; on emulated devices all three in virtual time on the model, and α = run IOPS over the best of them, marked *; ! marks an α above {} — no bound; run fid. and run p99: the mean and p99 latency the emulated device gave in the run against the model's, ! beyond ±{OFF_TARGET_PCT} % and ±{P99_OFF_TARGET_PCT} %; cpu q: the share of I/Os late because their thread then queued for a free core, as it would after a real device's completion — the machine's load, not the emulator's error)",
        explain::ALPHA_VALID_MAX
    );
    if let Some(r) = summary.devices.iter().find_map(|d| d.repeats.as_ref()) {
        output::say!(
            "(tpmC and α: the mean of {} runs ± the half-width of its 95 % confidence interval; the sentences below are the first run's)",
            r.runs
        );
    }
    output::say!("");
    for d in &summary.devices {
        output::say!("{}: {}", d.name, d.explanation);
    }
    output::say!(
        "\nresults: {}  report: {}  traces: {}",
        out.join(RESULTS_FILE).display(),
        out.join(REPORT_FILE).display(),
        format_bytes(
            summary
                .devices
                .iter()
                .filter_map(|d| std::fs::metadata(out.join(&d.trace)).ok())
                .map(|m| m.len())
                .sum()
        )
    );
}

/// The seconds a cell takes at its scale: the device step (two queue depths), then per
/// repetition the run and its replay (at most as long as the run when α ≤ 1).
pub(super) fn estimate_s(cell: &CellPlan, repeat: u32, device_step: bool) -> f64 {
    let s = &cell.scale;
    let device_s = if device_step {
        2.0 * (s.device_ramp_s + s.device_runtime_s)
    } else {
        0.0
    };
    device_s + repeat as f64 * (s.warmup_s + s.duration_s + s.duration_s)
}

/// Each cell's estimate, with its device step counted for the first cell of the device that no
/// finished cell measured; 0 for the finished cells.
pub(super) fn estimates_s(study: &FileStudy, done: &[Option<CellResult>]) -> Vec<f64> {
    let mut measured: Vec<String> = done
        .iter()
        .flatten()
        .map(|r| match r.randread16k_device.as_str() {
            "" => r.axes.device.clone(),
            d => d.to_string(),
        })
        .collect();
    study
        .cells
        .iter()
        .zip(done)
        .map(|(c, d)| {
            if d.is_some() {
                return 0.0;
            }
            let probe = probed_device(&c.spec).name();
            let first = !measured.contains(&probe);
            measured.push(probe);
            estimate_s(c, study.repeat, first)
        })
        .collect()
}

/// Whose result a run of S1's measurement writes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    /// `--file F`: a study file's (`summary.scenario` file, `summary.cells[]`); each cell's
    /// traces, runs and replays are named by its id.
    File,
    /// `oltplab study` (S1): the scenario's result as it always was (`summary.devices[]`, one
    /// per device, beside `summary.cells[]`), each device's files named by the device, as
    /// docs/studies.md and the checks outside this repository read them.
    S1,
}

impl Kind {
    /// The kind of study in `dir` that `--resume` continues: S1's if its `results.json` says so
    /// (written before any cell runs), else a study file's.
    pub(super) fn of_dir(dir: &Path) -> Kind {
        match scenario_of_dir(dir).as_deref() {
            Some(S1_SCENARIO) => Kind::S1,
            _ => Kind::File,
        }
    }
}

/// The `scenario` of an `oltplab study` (S1) result.
pub(super) const S1_SCENARIO: &str = "s1";

/// `oltplab study` (S1): the shipped studies/s1.toml with the command's options applied, run by
/// the same engine as `--file`, its result S1's.
pub(super) fn run_s1(args: &StudyArgs, file: &super::shipped::ScenarioFile) -> Result<()> {
    let study = file.parse()?;
    run_study(&study, args, Kind::S1, Some(file))
}

/// S1's result has a row per device: its cells must differ in the device alone.
pub(super) fn check_s1_shape(study: &FileStudy, dir: &Path) -> Result<()> {
    let first = &study.cells[0];
    let other = study.cells.iter().find_map(|c| {
        if c.engine_index != first.engine_index {
            Some("engines")
        } else if c.axes.workload != "tpcc" {
            Some("workloads")
        } else if c.axes.terminals != first.axes.terminals {
            Some("terminal counts")
        } else if c.axes.pacing != first.axes.pacing {
            Some("pacings")
        } else {
            None
        }
    });
    match other {
        Some(what) => Err(Error::usage(format!(
            "--resume {}: that directory holds an `oltplab study` (S1) run, one row per device, and {} has cells of more than one TPC-C engine, workload, terminal count or pacing ({what}): run it with its own --out DIR",
            dir.display(),
            study.path.display()
        ))),
        None => Ok(()),
    }
}

/// What a cell's traces, runs, replays and device step are named by in the output directory.
pub(super) fn files_of(kind: &Kind, cell: &CellPlan) -> String {
    match kind {
        Kind::File => cell.id.clone(),
        Kind::S1 => cell.axes.device_name.clone(),
    }
}

/// Runs a study of S1's measurement: its cells not finished in `--resume DIR`, each saved when
/// it finishes, then the result of `kind`. `s1` is the file `oltplab study` built (None: a file
/// given or resumed).
pub(super) fn run_study(
    study: &FileStudy,
    args: &StudyArgs,
    kind: Kind,
    s1: Option<&super::shipped::ScenarioFile>,
) -> Result<()> {
    if let (Kind::S1, Some(dir)) = (&kind, &args.resume) {
        check_s1_shape(study, dir)?;
    }
    let kept = cells::kept::<S1Cells>(study, args);
    let settings_checked = check_settings(study)?;
    if args.dry_run {
        let done: Vec<bool> = kept.iter().map(Option::is_some).collect();
        print_plan(study, &done, &estimates_s(study, &kept));
        if !settings_checked {
            output::say!("(server settings not checked: the server is not installed)");
        }
        return Ok(());
    }
    let begun = match (&kind, s1) {
        (Kind::S1, Some(file)) => Begun::Built(file),
        (Kind::S1, None) => Begun::Resumed("the `oltplab study`"),
        (Kind::File, _) => Begun::File(None),
    };
    let mut s1_cells = S1Cells {
        study,
        args,
        config: study_config(study, &kind, &args.data_dir),
        kind,
        kept: kept.iter().flatten().count(),
        estimate: duration(estimates_s(study, &kept).iter().sum()),
        loaded: Vec::new(),
        load_s: 0.0,
    };
    cells::run(study, args, begun, kept, &mut s1_cells)
}

/// S1's measurement of a study's cells: each engine and workload loaded when its first cell
/// runs, each device measured once.
pub(super) struct S1Cells<'a> {
    pub(super) study: &'a FileStudy,
    pub(super) args: &'a StudyArgs,
    pub(super) kind: Kind,
    pub(super) config: FileStudyConfig,
    /// The cells finished in an earlier run, and the time the others take.
    pub(super) kept: usize,
    pub(super) estimate: String,
    /// One load per engine entry and workload.
    pub(super) loaded: Vec<((usize, String), (Database, String))>,
    pub(super) load_s: f64,
}

impl cells::Measurement for S1Cells<'_> {
    type Cell = CellResult;
    type Summary = StudySummary;
    const CELLS: &'static str = "devices";

    fn kept_name(&self, cell: &CellPlan, _: &CellResult) -> String {
        files_of(&self.kind, cell)
    }

    fn intro(&self, out: &Path) {
        let (study, estimate) = (self.study, &self.estimate);
        match self.kind {
            Kind::S1 => {
                let c = &study.cells[0];
                output::note!(
                    "oltplab study s1 — {} on {}: {} warehouse{}, {} terminals, {} warm-up + {} measured per device, about {estimate} to run; output {}",
                    describe_engine(&c.axes),
                    study
                        .cells
                        .iter()
                        .map(|c| c.axes.device_name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    c.scale.warehouses,
                    if c.scale.warehouses == 1 { "" } else { "s" },
                    c.scale.terminals,
                    secs(c.scale.warmup_s),
                    secs(c.scale.duration_s),
                    out.display()
                );
            }
            Kind::File => output::note!(
                "oltplab study --file {}: {} cells ({} finished earlier, {} to run), scale {} ({} warehouse{}), about {estimate} to run; output {}",
                study.path.display(),
                study.cells.len(),
                self.kept,
                study.cells.len() - self.kept,
                study.scale.name,
                study.scale.warehouses,
                if study.scale.warehouses == 1 { "" } else { "s" },
                out.display()
            ),
        }
    }

    fn doc(
        &self,
        started_at: &str,
        results: &[Option<CellResult>],
        state: State,
        ran: usize,
    ) -> ResultDoc<StudySummary, Value> {
        combined(
            self.study,
            &self.kind,
            &self.config,
            started_at,
            &self.args.data_dir,
            results,
            self.load_s,
            state,
            ran,
        )
    }

    fn measure(
        &mut self,
        i: usize,
        cell: &CellPlan,
        results: &[Option<CellResult>],
        out: &Path,
    ) -> Result<Option<CellResult>> {
        let (study, data_dir) = (self.study, &self.args.data_dir);
        let files = files_of(&self.kind, cell);
        output::note!(
            "\n[{}/{}] {files} ({} on {}, {} terminals, pacing {})",
            i + 1,
            study.cells.len(),
            describe_engine(&cell.axes),
            cell.axes.device,
            cell.axes.terminals,
            cell.axes.pacing
        );
        let engine = &study.engines[cell.engine_index];
        let key = (cell.engine_index, cell.axes.workload.clone());
        if !self.loaded.iter().any(|(k, _)| *k == key) {
            let started = std::time::Instant::now();
            match load_engine(engine, &cell.axes.workload, &study.scale, data_dir) {
                Ok(db) => self.loaded.push((key.clone(), db)),
                Err(Error::Interrupted) => return Ok(None),
                Err(e) => return Err(e),
            }
            self.load_s += started.elapsed().as_secs_f64();
        }
        let Some((_, (database, engine_version))) = self.loaded.iter().find(|(k, _)| *k == key)
        else {
            unreachable!("loaded above")
        };
        remove_stopped_traces(out, &files, study.repeat)?;
        let mut warnings = Vec::new();
        // A device is measured once: its figures do not depend on the engine or the load. A
        // layout's are its data device's (`oltplab device` has no log or tables to place).
        let probe = probed_device(&cell.spec);
        let device = match device_known(results, &probe.name()) {
            Some(device) => {
                output::note!(
                    "  device: {} measured for an earlier cell ({} IOPS at QD 32)",
                    cell.axes.device,
                    format_count(device.1)
                );
                Ok(device)
            }
            None => {
                output::note!(
                    "  device: 16 KiB random reads at QD 1 and 32{}",
                    if cell.spec.is_layout() {
                        format!(" on the layout's data device, {}", probe.name())
                    } else {
                        String::new()
                    }
                );
                device_figures(&probe, &files, &cell.scale, data_dir, out)
                    .and_then(|device| super::s1::interrupted().map(|()| device))
            }
        };
        let measured = device.and_then(|device| {
            study_runs(
                &cell.spec,
                &files,
                device,
                &cell.scale,
                study.repeat,
                database,
                data_dir,
                out,
                &mut warnings,
            )
        });
        // A cell stopped by Ctrl-C is not finished, even if some repetitions were: it reruns.
        let mut figures = match measured {
            Ok(_) | Err(Error::Interrupted) if STOP.load(Ordering::Relaxed) => return Ok(None),
            Ok(f) => f,
            Err(e) => return Err(e),
        };
        let run = figures.run.take();
        Ok(Some(CellResult {
            id: cell.id.clone(),
            config_hash: cell.hash.clone(),
            axes: cell.axes.clone(),
            finished_at: now_rfc3339(),
            engine_version: engine_version.clone(),
            buffer_pool_bytes: database.buffer_pool_bytes,
            randread16k_device: probe.name(),
            run,
            figures: DeviceFigures {
                name: cell.axes.device_name.clone(),
                ..figures
            },
            warnings,
        }))
    }

    fn table(&self, summary: &StudySummary, out: &Path) {
        match self.kind {
            Kind::S1 => super::s1::print_table(summary, out),
            Kind::File => print_cells(summary, out),
        }
    }
}

/// The device figures (QD 1 mean latency ns, QD 32 IOPS) a finished cell measured for `device`
/// (a spec's canonical name).
pub(super) fn device_known(results: &[Option<CellResult>], device: &str) -> Option<(f64, f64)> {
    results
        .iter()
        .flatten()
        .find(|r| {
            // Cells saved before layouts named no probed device: theirs was their own.
            let probed = match r.randread16k_device.as_str() {
                "" => r.axes.device.as_str(),
                d => d,
            };
            probed == device && r.figures.randread16k_iops > 0.0
        })
        .map(|r| (r.figures.randread16k_lat_ns, r.figures.randread16k_iops))
}

/// The device whose 16 KiB random reads stand for a cell's storage: the device itself, or a
/// layout's data device (the first of its devices).
pub(super) fn probed_device(spec: &Spec) -> Spec {
    spec.devices()[0].clone()
}

#[derive(Debug, Serialize)]
pub(super) struct FileStudyConfig {
    pub(super) scenario: String,
    /// S1's own keys (`oltplab study`), as its results always had them.
    #[serde(flatten)]
    pub(super) s1: Option<S1Config>,
    pub(super) file: PathBuf,
    /// The file's scale (S1: with its pacing, as every cell runs it); each cell's terminals and
    /// pacing are in its axes.
    pub(super) scale: Scale,
    pub(super) repeat: u32,
    pub(super) data_dir: PathBuf,
    pub(super) seed: u64,
    /// Every cell of the file, in order, finished or not.
    pub(super) cells: Vec<String>,
}

/// The configuration keys of an S1 result beside a study file's.
#[derive(Debug, Serialize)]
pub(super) struct S1Config {
    pub(super) engine: String,
    /// Each device's spec, as resolved.
    pub(super) devices: Vec<String>,
    /// The managed server's settings, for the load and every run (`--server-setting`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) server_settings: Vec<String>,
}

pub(super) fn study_config(study: &FileStudy, kind: &Kind, data_dir: &Path) -> FileStudyConfig {
    let (scenario, s1, scale) = match kind {
        Kind::File => (SCENARIO, None, study.scale.clone()),
        Kind::S1 => {
            let first = &study.cells[0];
            let s1 = S1Config {
                engine: first.axes.engine.clone(),
                devices: study.cells.iter().map(|c| c.axes.device.clone()).collect(),
                server_settings: first.axes.server_settings.clone(),
            };
            (S1_SCENARIO, Some(s1), first.scale.clone())
        }
    };
    FileStudyConfig {
        scenario: scenario.into(),
        s1,
        file: study.path.clone(),
        scale,
        repeat: study.repeat,
        data_dir: data_dir.to_path_buf(),
        seed: 1,
        cells: study.cells.iter().map(|c| c.id.clone()).collect(),
    }
}

/// The study's result from the finished cells, with ratios against the baseline device's cell of
/// the same engine, terminals and pacing; S1's has each cell's figures as its device's too.
#[allow(clippy::too_many_arguments)]
pub(super) fn combined(
    study: &FileStudy,
    kind: &Kind,
    config: &FileStudyConfig,
    started_at: &str,
    data_dir: &Path,
    results: &[Option<CellResult>],
    load_s: f64,
    state: State,
    ran: usize,
) -> ResultDoc<StudySummary, Value> {
    let mut cells: Vec<CellResult> = results.iter().flatten().cloned().collect();
    add_cell_ratios(&mut cells, study.baseline.as_deref());
    let devices = match kind {
        Kind::S1 => cells.iter().map(|c| c.figures.clone()).collect(),
        Kind::File => Vec::new(),
    };
    let summary = StudySummary {
        scenario: config.scenario.clone(),
        engine: unique(study.engines.iter().map(|e| e.engine.as_str()))
            .collect::<Vec<_>>()
            .join(","),
        baseline: study.baseline.clone(),
        buffer_pool_bytes: cells.first().map_or(0, |c| c.buffer_pool_bytes),
        devices,
        load_s,
        interrupted: state != State::Finished,
        cells,
    };
    let mut doc = new_study_doc(started_at.to_string(), config, data_dir, summary);
    doc.env.engine_version = doc.summary.cells.first().map(|c| c.engine_version.clone());
    for c in &doc.summary.cells {
        doc.warnings.extend(c.warnings.iter().cloned());
    }
    let what = match kind {
        Kind::S1 => "devices",
        Kind::File => "cells",
    };
    let (finished, total) = (doc.summary.cells.len(), study.cells.len());
    if let Some(w) = state.unfinished_warning(finished, total, what, ran) {
        // Printed when Ctrl-C stopped it; not while it runs, as far as it knows.
        if state == State::Stopped {
            warn(&mut doc.warnings, w);
        } else {
            doc.warnings.push(w);
        }
    }
    doc
}

pub(super) fn add_cell_ratios(cells: &mut [CellResult], baseline: Option<&str>) {
    let Some(baseline) = baseline else { return };
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let bases: Vec<Option<DeviceFigures>> = cells
        .iter()
        .map(|c| {
            cells
                .iter()
                .find(|b| {
                    b.axes.device_name == baseline
                        && b.axes.engine_name == c.axes.engine_name
                        && b.axes.workload == c.axes.workload
                        && b.axes.terminals == c.axes.terminals
                        && b.axes.pacing == c.axes.pacing
                })
                .map(|b| b.figures.clone())
        })
        .collect();
    for (c, base) in cells.iter_mut().zip(bases) {
        c.figures.vs_baseline = base.map(|b| Ratios {
            randread16k_iops: ratio(c.figures.randread16k_iops, b.randread16k_iops),
            randread16k_lat_ns: ratio(c.figures.randread16k_lat_ns, b.randread16k_lat_ns),
            tpmc: ratio(c.figures.tpmc, b.tpmc),
            tpse_like: c
                .figures
                .tpse_like
                .zip(b.tpse_like)
                .map(|(c, b)| ratio(c, b)),
            orders_tps: c
                .figures
                .orders_tps
                .zip(b.orders_tps)
                .map(|(c, b)| ratio(c, b)),
            run_iops: ratio(c.figures.run_iops, b.run_iops),
            alpha: ratio(c.figures.alpha.unwrap_or(0.0), b.alpha.unwrap_or(0.0)),
        });
    }
}

pub(super) fn print_cells(summary: &StudySummary, out: &Path) {
    // A layout's id is long: the column fits the longest.
    let w = summary
        .cells
        .iter()
        .map(|c| c.id.chars().count())
        .max()
        .unwrap_or(0)
        .max(4);
    let brokerage = summary.cells.iter().any(|c| c.figures.tpse_like.is_some());
    let orders = summary.cells.iter().any(|c| c.figures.orders_tps.is_some());
    let unit = match (brokerage, orders) {
        (false, false) => "tpmC",
        (true, false) => "tpmC|TR/s",
        (false, true) => "tpmC|tx/s",
        (true, true) => "tpmC|TR/s|tx/s",
    };
    output::say!("");
    output::say!(
        "{:<w$} {:>11} {:>9} {:>10} {:>10} {:>7}  vs baseline ({unit}, α)",
        "cell",
        "16k IOPS",
        unit,
        "run IOPS",
        "replay",
        "α"
    );
    for c in &summary.cells {
        let f = &c.figures;
        // A brokerage cell's throughput is Trade-Results per second (TR/s), an order-entry
        // cell's its transactions per second, not tpmC.
        let vs = f.vs_baseline.as_ref().map_or(String::new(), |r| {
            let throughput = r.tpse_like.or(r.orders_tps).unwrap_or(r.tpmc);
            format!("{throughput:.2}×, {:.2}×", r.alpha)
        });
        let throughput = match (f.tpse_like, f.orders_tps) {
            (Some(t), _) => format!("{t:.1} TR/s"),
            (_, Some(t)) => format!("{t:.0} tx/s"),
            _ => format!("{:.0}", f.tpmc),
        };
        output::say!(
            "{:<w$} {:>11} {:>9} {:>10.0} {:>10.0} {:>7}  {}",
            c.id,
            format_count(f.randread16k_iops),
            throughput,
            f.run_iops,
            f.replay_iops,
            f.alpha.map_or("—".into(), |a| format!("{a:.2}")),
            vs
        );
    }
    output::say!("");
    for c in &summary.cells {
        output::say!("{}: {}", c.id, c.figures.explanation);
    }
    output::say!(
        "\nresults: {}  report: {}  cells: {}",
        out.join(RESULTS_FILE).display(),
        out.join(REPORT_FILE).display(),
        out.join(CELLS_DIR).display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_devmodel::parse_spec;
    use oltplab_metrics::schema::{ProfileResult, SweepPoint};

    fn profile(points: &[(u32, f64, f64)]) -> DeviceSummary {
        let sweep = points
            .iter()
            .map(|&(qd, iops, lat)| {
                let mut p = SweepPoint {
                    qd,
                    iops,
                    ..SweepPoint::default()
                };
                p.lat_ns.mean = lat;
                p
            })
            .collect();
        DeviceSummary {
            profiles: Some(vec![ProfileResult {
                name: DEVICE_PROFILE.into(),
                sweep,
                ..ProfileResult::default()
            }]),
            ..DeviceSummary::default()
        }
    }

    #[test]
    fn a_missing_device_figure_is_an_error_not_a_zero() {
        let both = profile(&[(1, 150.0, 6.6e6), (32, 420.0, 7.6e7)]);
        assert_eq!(sweep_figures(&both).unwrap(), (6.6e6, 420.0));
        for partial in [
            profile(&[(1, 150.0, 6.6e6)]),
            profile(&[(32, 420.0, 7.6e7)]),
            DeviceSummary::default(),
        ] {
            let err = sweep_figures(&partial).unwrap_err();
            assert_eq!(err.exit_code(), 1);
            assert!(err.to_string().contains("no device figure"), "{err}");
        }
    }

    /// The device step, in-process on an emulated device: the typed result gives the model's
    /// figures (a 10k rpm disk: milliseconds at QD 1, more IOPS at QD 32 by reordering).
    #[test]
    fn the_device_step_measures_an_emulated_device_in_process() {
        let dir = std::env::temp_dir().join(format!("oltplab-study-unit-{}", std::process::id()));
        let scale = Scale {
            device_runtime_s: 0.4,
            device_ramp_s: 0.1,
            device_size_bytes: 64 << 20,
            ..Scale::named("quick")
        };
        let spec = parse_spec("hdd-10k").unwrap();
        let (lat_ns, iops) = device_figures(&spec, "hdd-10k", &scale, &dir, &dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!((1e6..2e7).contains(&lat_ns), "QD 1 latency {lat_ns} ns");
        assert!(iops > 1e9 / lat_ns, "QD 32 {iops} IOPS vs QD 1 {lat_ns} ns");
    }
}
