//! `oltplab run tatp`: open the loaded database, drive it, sample CPU and device counters at the
//! edges of the measured window, print a line per report interval and the summary, and return
//! (and save) the result document.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use oltplab_core::units::{format_count, format_ns};
use oltplab_core::Result;
use oltplab_metrics::schema::{now_rfc3339, rfc3339_micros};
use oltplab_metrics::{Warning, WarningKind};
use oltplab_workloads::driver::{DriverConfig, Event, Second};
use oltplab_workloads::tatp::driver::drive;
use oltplab_workloads::tatp::tx::TxType;

use super::{meta_of, RunConfig};
use crate::driver_stats::{counts_by_kind, kind_figures, mix_shares};
use crate::output;
use crate::workload::capture::Capture;
use crate::workload::ramp::{common_figures, RampSummary};
use crate::workload::scaffold::{
    driver_cpu_warning, interrupted_warning, open_for_run, per_second, print_cpu,
    unsteady_warmup_warning, warmup_said, EdgeSamples, IntervalLines,
};
use crate::workload::target::Engine;
use oltplab_schema::{RampStep, TatpInterval, TatpResult, TatpSummary};

/// Runs TATP as `cfg` says; `stop` (Ctrl-C) ends the measured window early.
pub fn run_with(cfg: &RunConfig, stop: &AtomicBool) -> Result<TatpResult> {
    let capture = cfg.capture.start(&cfg.db, cfg.seed, cfg.output.force)?;
    let started_at = now_rfc3339();
    let connections = cfg.terminals as usize + 1;
    let db = open_for_run(&cfg.db, connections, capture.as_ref(), None)?;
    let meta = meta_of(&db, &cfg.db)?;
    db.check_connections(connections as u32)?;
    let out_dir = cfg.output.out_dir("tatp", &started_at)?;
    let env = db.env(&cfg.db);
    let device = env.target_device.as_ref().map(|d| d.name.clone());
    if !cfg.output.quiet {
        eprintln!(
            "oltplab run tatp — {} on {}, {} subscribers, {} terminal{}, {:.0} s measured after {}",
            db.version,
            cfg.db.location(),
            format_count(meta.subscribers as f64),
            cfg.terminals,
            if cfg.terminals == 1 { "" } else { "s" },
            cfg.duration_s,
            warmup_said(cfg.warmup_auto, cfg.warmup_s, "the rate")
        );
    }
    let driver_cfg = DriverConfig {
        terminals: cfg.terminals as usize,
        duration: Duration::from_secs_f64(cfg.duration_s),
        warmup: Duration::from_secs_f64(cfg.warmup_s),
        warmup_auto: cfg.warmup_auto,
        seed: cfg.seed,
        max_retries: cfg.max_retries,
        record_spans: capture.as_ref().is_some_and(Capture::wants_spans),
        start_at: None,
        work: None,
        threads: None,
    };
    let mut samples = EdgeSamples::new(&db, device.as_deref(), capture.as_ref());
    let mut lines = IntervalLines::new(cfg.report_interval_s, cfg.output.quiet, interval_line);
    let outcome = drive(
        db.connector.as_ref(),
        &meta,
        &driver_cfg,
        stop,
        &mut |s| lines.second(s),
        &mut |e| samples.take(e == Event::MeasureStart),
    )?;
    lines.finish();
    let edges = samples.done();
    let mut db = db;
    let (server_warnings, died) = db.stop_server();

    let measured_s = outcome.measured_s.max(1e-9);
    let mut summary = TatpSummary {
        measured_s: outcome.measured_s,
        warmup_s: outcome.warmup_s,
        warmup_steady: outcome.warmup_steady,
        measure_started_at: outcome.measure_started_at.map(rfc3339_micros),
        subscribers: meta.subscribers,
        terminals: cfg.terminals,
        first_error: outcome.first_error.clone(),
        interrupted: outcome.interrupted,
        ..Default::default()
    };
    let all: u64 = outcome.tx.iter().map(|t| t.count).sum();
    let by_kind = || TxType::ALL.map(|t| (t, &outcome.tx[t.index()]));
    let (tx, histograms) = kind_figures(
        by_kind().map(|(t, s)| (t.name(), s)),
        measured_s,
        cfg.db.engine == Engine::Sqlite,
    );
    summary.tx = tx;
    summary.mix = mix_shares(by_kind().map(|(t, s)| (t.name(), s, t.mix_pct() as f64)));
    let mut successful = 0;
    for (t, s) in by_kind() {
        if s.count > 0 {
            summary.success_pct.insert(
                t.name().into(),
                100.0 * (s.count - s.rollbacks) as f64 / s.count as f64,
            );
        }
        successful += s.count - s.rollbacks;
    }
    summary.mqth = successful as f64 / measured_s;
    summary.tps_total = all as f64 / measured_s;
    summary.errors_by_kind = counts_by_kind(&outcome.errors_by_kind);
    summary.retries_by_kind = counts_by_kind(&outcome.retries_by_kind);
    let kinds = TxType::ALL.map(|t| (t.tag(), t.name()));
    let mut warnings = edges.figures(capture, &outcome, &kinds, env.cores, &mut summary)?;
    summary.reads_per_write =
        (summary.io.writes > 0).then(|| summary.io.reads as f64 / summary.io.writes as f64);
    warnings.extend(run_warnings(cfg, &summary));
    warnings.extend(server_warnings);
    let intervals = per_second(&outcome.seconds, |s, dt| TatpInterval {
        t_s: s.t_s,
        tps_total: s.counts.iter().sum::<u64>() as f64 / dt,
        errors: s.errors,
        retries: s.retries,
    });
    let mut config_json = serde_json::to_value(cfg).expect("config serialises");
    config_json["workload"] = serde_json::json!("tatp");
    let doc = TatpResult {
        intervals,
        histograms,
        warnings,
        ..output::new_doc("run", started_at, config_json, env, summary)
    };
    cfg.output
        .publish(&doc, out_dir.as_deref(), print_summary, died)?;
    Ok(doc)
}

/// What the figures should be read with.
fn run_warnings(cfg: &RunConfig, s: &TatpSummary) -> Vec<Warning> {
    let mut warnings = Vec::new();
    warnings.extend(interrupted_warning(
        s.interrupted,
        s.measured_s,
        cfg.duration_s,
    ));
    warnings.extend(unsteady_warmup_warning(s.warmup_steady, s.warmup_s));
    let completed: u64 = s.tx.values().map(|t| t.count).sum();
    if completed < 10_000 {
        warnings.push(Warning::new(
            WarningKind::FewSamples,
            format!("only {completed} transactions completed: the percentiles of the rarer types rest on few samples; use a longer --duration"),
        ));
    }
    warnings.extend(driver_cpu_warning(&s.cpu, s.measured_s, ""));
    warnings
}

fn interval_line(seconds: &[Second]) -> String {
    let last = seconds.last().map_or(0.0, |s| s.t_s);
    let first = seconds.first().map_or(0.0, |s| s.t_s) - 1.0;
    let span = (last - first).max(1e-9);
    let all: u64 = seconds.iter().flat_map(|s| s.counts.iter()).sum();
    format!(
        "[{last:>5.0} s] tps {:>9.1}  errors {}  retries {}",
        all as f64 / span,
        seconds.iter().map(|s| s.errors).sum::<u64>(),
        seconds.iter().map(|s| s.retries).sum::<u64>()
    )
}

fn print_summary(doc: &TatpResult, out_dir: Option<&std::path::Path>) {
    let s = &doc.summary;
    eprintln!();
    eprintln!(
        "{:<24}{:>9}{:>8}{:>8}{:>10}{:>8}{:>10}{:>10}{:>10}{:>10}",
        "transaction",
        "count",
        "mix %",
        "weight",
        "success %",
        "retries",
        "mean",
        "p50",
        "p90",
        "p99"
    );
    for t in TxType::ALL {
        if let (Some(x), Some(m)) = (s.tx.get(t.name()), s.mix.get(t.name())) {
            eprintln!(
                "{:<24}{:>9}{:>8.1}{:>8.1}{:>10}{:>8}{:>10}{:>10}{:>10}{:>10}",
                t.name(),
                x.count,
                m.measured_pct,
                m.weight_pct,
                s.success_pct
                    .get(t.name())
                    .map_or("—".to_string(), |p| format!("{p:.1}")),
                x.retries,
                format_ns(x.lat_ns.mean),
                format_ns(x.lat_ns.p50 as f64),
                format_ns(x.lat_ns.p90 as f64),
                format_ns(x.lat_ns.p99 as f64)
            );
        }
    }
    eprintln!(
        "MQTh {:.1}  (successful transactions per second)  all transactions/s {:.1}  ({:.1} s measured)",
        s.mqth, s.tps_total, s.measured_s
    );
    print_cpu(&s.cpu);
    output::print_io(&s.io, "");
    output::print_io_groups(&s.io);
    output::print_warnings(&doc.warnings);
    if let Some(dir) = out_dir {
        eprintln!("result: {}", dir.join(output::RESULT_FILE).display());
    }
}

impl RampSummary for TatpSummary {
    type Interval = TatpInterval;
    fn step(doc: &TatpResult) -> RampStep {
        let s = &doc.summary;
        RampStep {
            terminals: s.terminals,
            throughput: s.mqth,
            throughput_unit: MQTH.into(),
            tx_per_s: s.tps_total,
            ..common_figures(
                s.tx.keys(),
                &doc.histograms,
                s.cpu.utilisation,
                &s.io,
                &doc.warnings,
                s.interrupted,
            )
        }
    }
    fn set_ramp(&mut self, steps: Vec<RampStep>) {
        self.ramp = steps;
    }
    fn interrupted(&self) -> bool {
        self.interrupted
    }
}

/// What a TATP run reports as its throughput: Mean Qualified Throughput, successful
/// transactions per second.
const MQTH: &str = "MQTh (successful tx/s)";
