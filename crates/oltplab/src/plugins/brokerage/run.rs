//! `oltplab run brokerage`: open the loaded database, drive it, sample CPU and device counters at
//! the edges of the measured window, print a line per report interval and the summary, and return
//! (and save) the result document.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use oltplab_core::units::{format_count, format_ns};
use oltplab_core::Result;
use oltplab_metrics::schema::{now_rfc3339, rfc3339_micros};
use oltplab_metrics::{Warning, WarningKind};
use oltplab_workloads::brokerage::driver::{drive, market_workers, DriverConfig};
use oltplab_workloads::brokerage::tx::TxType;
use oltplab_workloads::driver::Event;
use oltplab_workloads::driver::Second;

use super::{meta_of, RunConfig};
use crate::driver_stats::{commit_summary, counts_by_kind, kind_figures, mix_shares};
use crate::output;
use crate::workload::capture::Capture;
use crate::workload::cluster::WsrepSampler;
use crate::workload::scaffold::{
    driver_cpu_warning, interrupted_warning, open_for_run, per_second, print_cpu,
    unsteady_warmup_warning, warmup_said, EdgeSamples, IntervalLines,
};
use crate::workload::target::Engine;
use oltplab_schema::ServerWaits;
use oltplab_schema::{BrokerageInterval, BrokerageResult, BrokerageSummary};

/// Runs the brokerage workload as `cfg` says; `stop` (Ctrl-C) ends the measured window early.
pub fn run_with(cfg: &RunConfig, stop: &AtomicBool) -> Result<BrokerageResult> {
    let capture = cfg.capture.start(&cfg.db, cfg.seed, cfg.output.force)?;
    let started_at = now_rfc3339();
    let terminals = cfg.terminals as usize;
    let connections = terminals + market_workers(terminals) + 1;
    let db = open_for_run(&cfg.db, connections, capture.as_ref(), None)?;
    let meta = meta_of(&db, &cfg.db)?;
    db.check_connections(connections as u32)?;
    let out_dir = cfg.output.out_dir("brokerage", &started_at)?;
    let env = db.env(&cfg.db);
    let device = env.target_device.as_ref().map(|d| d.name.clone());
    if !cfg.output.quiet {
        eprintln!(
            "oltplab run brokerage — {} on {}, {} customers with {} days of history, {terminals} terminal{} and {} market workers, {:.0} s measured after {}",
            db.version,
            cfg.db.location(),
            format_count(meta.scale.customers as f64),
            meta.scale.days,
            if terminals == 1 { "" } else { "s" },
            market_workers(terminals),
            cfg.duration_s,
            warmup_said(cfg.warmup_auto, cfg.warmup_s, "Trade-Result's rate")
        );
    }

    let driver_cfg = DriverConfig {
        terminals,
        duration: Duration::from_secs_f64(cfg.duration_s),
        warmup: Duration::from_secs_f64(cfg.warmup_s),
        warmup_auto: cfg.warmup_auto,
        seed: cfg.seed,
        max_retries: cfg.max_retries,
        record_spans: capture.as_ref().is_some_and(Capture::wants_spans),
        record_trades: false,
        procedures: cfg.procedures,
    };
    let mut samples = EdgeSamples::new(&db, device.as_deref(), capture.as_ref());
    let mut lines = IntervalLines::new(cfg.report_interval_s, cfg.output.quiet, interval_line);
    if !cfg.output.quiet && cfg.warmup_s > 0.0 && !cfg.warmup_auto {
        eprintln!("warming up for {:.0} s …", cfg.warmup_s);
    }
    // A Galera cluster's replication counters over the window, as for TPC-C (one query per node
    // at each edge).
    let mut wsrep: Option<WsrepSampler> = None;
    let mut server_waits: Option<ServerWaits> = None;
    let outcome = drive(
        db.connector.as_ref(),
        &meta,
        &driver_cfg,
        stop,
        &mut |s| lines.second(s),
        &mut |e| {
            match e {
                Event::MeasureStart if !db.node_urls.is_empty() => {
                    wsrep = WsrepSampler::start(&db.node_urls);
                }
                Event::MeasureEnd => server_waits = wsrep.take().map(wsrep_waits),
                _ => {}
            }
            samples.take(e == Event::MeasureStart)
        },
    )?;
    lines.finish();
    if let Some(w) = wsrep.take() {
        server_waits = Some(wsrep_waits(w)); // stopped before the window's end
    }
    let edges = samples.done();
    let mut db = db;
    let (server_warnings, died) = db.stop_server();

    let measured_s = outcome.run.measured_s.max(1e-9);
    let mut summary = BrokerageSummary {
        measured_s: outcome.run.measured_s,
        warmup_s: outcome.run.warmup_s,
        warmup_steady: outcome.run.warmup_steady,
        measure_started_at: outcome.run.measure_started_at.map(rfc3339_micros),
        customers: meta.scale.customers,
        days: meta.scale.days,
        terminals: cfg.terminals,
        market_workers: outcome.run.workers as u32,
        limit_orders_triggered: outcome.triggered_all,
        market_backlog_at_end: outcome.run.backlog_at_end as u64,
        first_error: outcome.run.first_error.clone(),
        interrupted: outcome.run.interrupted,
        hosts: db.hosts_used(&cfg.db, terminals),
        ..Default::default()
    };
    let all: u64 = outcome.run.tx.iter().map(|t| t.count).sum();
    let by_kind = || TxType::ALL.map(|t| (t, &outcome.run.tx[t.index()]));
    let (tx, mut histograms) = kind_figures(
        by_kind().map(|(t, s)| (t.name(), s)),
        measured_s,
        cfg.db.engine == Engine::Sqlite,
    );
    summary.tx = tx;
    summary.mix =
        mix_shares(by_kind().map(|(t, s)| (t.name(), s, t.weight_per_mille() as f64 / 10.0)));
    if let Some((mut commit, h)) = commit_summary(&outcome.run.tx) {
        if let Some(w) = &server_waits {
            commit.split_with(&w.wsrep_nodes);
        }
        summary.commit = Some(commit);
        histograms.insert("commit".to_string(), h.to_base64());
    }
    summary.server_waits = server_waits;
    summary.tpse_like = outcome.run.tx[TxType::TradeResult.index()].count as f64 / measured_s;
    summary.tps_total = all as f64 / measured_s;
    summary.errors_by_kind = counts_by_kind(&outcome.run.errors_by_kind);
    summary.retries_by_kind = counts_by_kind(&outcome.run.retries_by_kind);
    let kinds = TxType::ALL.map(|t| (t.tag(), t.name()));
    let mut warnings = edges.figures(capture, &outcome.run, &kinds, env.cores, &mut summary)?;
    summary.reads_per_write =
        (summary.io.writes > 0).then(|| summary.io.reads as f64 / summary.io.writes as f64);
    warnings.extend(run_warnings(cfg, &summary, outcome.run.interrupted));
    warnings.extend(server_warnings);
    let intervals = per_second(&outcome.run.seconds, |s, dt| BrokerageInterval {
        t_s: s.t_s,
        tpse_like: s.counts[TxType::TradeResult.index()] as f64 / dt,
        tps_total: s.counts.iter().sum::<u64>() as f64 / dt,
        errors: s.errors,
        retries: s.retries,
    });
    let mut config_json = serde_json::to_value(cfg).expect("config serialises");
    config_json["workload"] = serde_json::json!("brokerage");
    let doc = BrokerageResult {
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
fn run_warnings(cfg: &RunConfig, s: &BrokerageSummary, interrupted: bool) -> Vec<Warning> {
    let mut warnings = Vec::new();
    warnings.extend(interrupted_warning(
        interrupted,
        s.measured_s,
        cfg.duration_s,
    ));
    warnings.extend(unsteady_warmup_warning(s.warmup_steady, s.warmup_s));
    let results = s.tx.get(TxType::TradeResult.name()).map_or(0, |t| t.count);
    if results < 1000 {
        warnings.push(Warning::new(
            WarningKind::FewSamples,
            format!("only {results} Trade-Results completed: tpsE-like and the percentiles rest on few samples; use a longer --duration"),
        ));
    }
    warnings.extend(driver_cpu_warning(&s.cpu, s.measured_s, ""));
    warnings
}

fn interval_line(seconds: &[Second]) -> String {
    let last = seconds.last().map_or(0.0, |s| s.t_s);
    let first = seconds.first().map_or(0.0, |s| s.t_s) - 1.0;
    let span = (last - first).max(1e-9);
    let sum = |i: usize| seconds.iter().map(|s| s.counts[i]).sum::<u64>() as f64;
    let all: f64 = TxType::ALL.iter().map(|t| sum(t.index())).sum();
    format!(
        "[{last:>5.0} s] tpsE-like {:>8.1}  tps {:>8.1}  orders/s {:>7.1}  errors {}  retries {}",
        sum(TxType::TradeResult.index()) / span,
        all / span,
        sum(TxType::TradeOrder.index()) / span,
        seconds.iter().map(|s| s.errors).sum::<u64>(),
        seconds.iter().map(|s| s.retries).sum::<u64>()
    )
}

/// The nodes' counters as `summary.server_waits` (brokerage samples no other server wait).
fn wsrep_waits(w: WsrepSampler) -> ServerWaits {
    ServerWaits {
        source: "wsrep_status".into(),
        wsrep_nodes: w.finish(),
        ..ServerWaits::default()
    }
}

fn print_summary(doc: &BrokerageResult, out_dir: Option<&std::path::Path>) {
    let s = &doc.summary;
    eprintln!();
    eprintln!(
        "{:<18}{:>9}{:>8}{:>8}{:>6}{:>8}{:>10}{:>10}{:>10}{:>10}",
        "transaction", "count", "mix %", "weight", "rbk", "retries", "mean", "p50", "p90", "p99"
    );
    for t in TxType::ALL {
        if let (Some(x), Some(m)) = (s.tx.get(t.name()), s.mix.get(t.name())) {
            eprintln!(
                "{:<18}{:>9}{:>8.1}{:>8.1}{:>6}{:>8}{:>10}{:>10}{:>10}{:>10}",
                t.name(),
                x.count,
                m.measured_pct,
                m.weight_pct,
                x.rollbacks,
                x.retries,
                format_ns(x.lat_ns.mean),
                format_ns(x.lat_ns.p50 as f64),
                format_ns(x.lat_ns.p90 as f64),
                format_ns(x.lat_ns.p99 as f64)
            );
        }
    }
    eprintln!(
        "tpsE-like {:.1}  (Trade-Results per second; not comparable with audited TPC-E)  all transactions/s {:.1}  ({:.1} s measured)",
        s.tpse_like, s.tps_total, s.measured_s
    );
    output::print_commit(s.commit.as_ref());
    output::print_hosts(&s.hosts);
    print_cpu(&s.cpu);
    let per_write = s
        .reads_per_write
        .map_or("no".to_string(), |r| format!("{r:.2}"));
    output::print_io(&s.io, &format!(", {per_write} reads per write"));
    output::print_io_groups(&s.io);
    output::print_warnings(&doc.warnings);
    if let Some(dir) = out_dir {
        eprintln!("result: {}", dir.join(output::RESULT_FILE).display());
    }
}
