//! `oltplab study --scenario in-memory`: S5 on one engine. For disk and memory tables, and for the
//! update and insert modes, a sweep over the number of connections, each connection running a fixed
//! number of transactions: the elapsed time of that work, the throughput, the engine's waits and
//! the CPU at each connection count. Writes each run's result (`<tables>-<mode>.json`),
//! `results.json` (kind `study`, rewritten after every run) and `report.html`.

use std::path::Path;
use std::sync::atomic::Ordering;

use oltplab_core::safety;
use oltplab_core::units::{format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_metrics::{Warning, WarningKind};
use oltplab_workloads::orders::{Mode, Scale as DataScale, Tables};
use serde::Serialize;

use super::{StudyArgs, DEFAULT_DEVICES, REPORT_FILE, RESULTS_FILE};
use crate::orders::{self, OrdersLoadConfig, OrdersRunConfig};
use crate::output;
use crate::schema::{
    ConnectionsPoint, InMemoryPoint as Point, InMemoryRun as RunFigures,
    InMemorySummary as StudySummary, OrdersSummary,
};
use crate::workload::scaffold::{CaptureConfig, OutputConfig};
use crate::workload::target::DbSpec;
use crate::STOP;

/// What each `--scale` runs.
#[derive(Clone, Debug, Serialize)]
pub struct Scale {
    pub name: String,
    pub connections: Vec<u32>,
    pub tx_per_connection: u64,
    /// quick: each connection count's transactions in all, so that every point runs for
    /// seconds (the fastest, memory tables at 10 connections, would otherwise take 0.01 s).
    pub tx_per_point: Option<u64>,
    pub warmup_tx_per_connection: u64,
    pub data: DataScale,
}

impl Scale {
    pub(super) fn named(name: &str) -> Scale {
        let (connections, tx, warmup, customers): (&[u32], u64, u64, u32) = match name {
            "quick" => (&[10, 50, 100], 20, 2, 2_000),
            // S5: 100 to 2,000 connections, 10,000 transactions each.
            "paper" => (&[100, 500, 1000, 2000], 10_000, 100, 100_000),
            _ => (&[50, 200, 500, 1000], 100, 5, 10_000),
        };
        Scale {
            name: name.into(),
            connections: connections.to_vec(),
            tx_per_connection: tx,
            tx_per_point: (name == "quick").then_some(QUICK_TX_PER_POINT),
            warmup_tx_per_connection: warmup,
            data: DataScale {
                customers,
                products: 1_000,
                orders: customers,
            },
        }
    }
}

/// Transactions of each connection count at the quick scale: about a second of SQLite's memory
/// tables on a small machine (16,000 tps), ten of its disk tables.
const QUICK_TX_PER_POINT: u64 = 20_000;

#[derive(Debug, Serialize)]
struct StudyConfig {
    scenario: String,
    engine: String,
    scale: Scale,
    data_dir: std::path::PathBuf,
    seed: u64,
}

pub fn run(args: &StudyArgs) -> Result<()> {
    if args.devices != DEFAULT_DEVICES {
        return Err(Error::usage(
            "--devices belongs to the s1 scenario: the in-memory scenario runs on the storage under --data-dir (put it on the device to study)",
        ));
    }
    let scale = Scale::named(&args.scale);
    let config = StudyConfig {
        scenario: args.scenario.to_string(),
        engine: args.engine.name().to_string(),
        scale: scale.clone(),
        data_dir: args.data_dir.clone(),
        seed: 1,
    };
    let db = DbSpec::resolve(
        Some(args.engine),
        None,
        &args.data_dir,
        128 << 20,
        None,
        true,
    )?;
    let (started_at, out) = super::prepare(args)?;
    let summary = StudySummary {
        scenario: config.scenario.clone(),
        engine: config.engine.clone(),
        connections: scale.connections.clone(),
        tx_per_connection: scale.tx_per_connection,
        tx_per_point: scale.tx_per_point,
        ..Default::default()
    };
    let mut doc = super::new_study_doc(started_at, &config, &args.data_dir, summary);
    output::note!(
        "oltplab study in-memory — {} with disk and memory tables, update and insert, connections {}, {} after {} warm-up transactions per connection; output {}",
        args.engine,
        scale
            .connections
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        match scale.tx_per_point {
            Some(n) => format!("{} transactions per connection count", format_count(n as f64)),
            None => format!(
                "{} transactions per connection",
                format_count(scale.tx_per_connection as f64)
            ),
        },
        scale.warmup_tx_per_connection,
        out.display()
    );
    output::note!(
        "(S5's sweeps as a study file: studies/s5.toml, printed with this scale and engine by `oltplab study --scenario in-memory --dry-run`)"
    );
    'variants: for tables in [Tables::Disk, Tables::Memory] {
        // Update first: it leaves the row counts as they are, so insert starts from the same data.
        for mode in [Mode::Update, Mode::Insert] {
            if STOP.load(Ordering::Relaxed) {
                break 'variants;
            }
            eprintln!("\n[{} tables, {}]", tables.name(), mode.name());
            if mode == Mode::Update {
                let load_started = std::time::Instant::now();
                let loaded = orders::load_with(
                    &OrdersLoadConfig {
                        db: orders::orders_spec(db.clone()),
                        tables,
                        scale: scale.data,
                        seed: config.seed,
                        force: true,
                        quiet: output::quiet(),
                    },
                    &STOP,
                );
                match loaded {
                    Ok(l) => doc.env.engine_version = Some(l.engine_version),
                    Err(Error::Interrupted) => break 'variants,
                    Err(e) => return Err(e),
                }
                doc.summary.load_s += load_started.elapsed().as_secs_f64();
            }
            let run_cfg = OrdersRunConfig {
                workload: "orders",
                db: orders::orders_spec(db.clone()),
                mode,
                tables: Some(tables),
                connections: scale.connections.clone(),
                tx_per_connection: scale.tx_per_connection,
                tx_per_point: scale.tx_per_point,
                warmup_tx_per_connection: scale.warmup_tx_per_connection,
                max_retries: 10,
                seed: config.seed,
                report_interval_s: 10.0,
                capture: CaptureConfig::none(),
                // The study writes each variant's result itself.
                output: OutputConfig {
                    json: None,
                    out: None,
                    force: false,
                    save: false,
                    quiet: output::quiet(),
                },
            };
            let outcome = match orders::run_with(&run_cfg, &STOP) {
                Ok(o) => o,
                Err(Error::Interrupted) => break 'variants,
                Err(e) => return Err(e),
            };
            let name = format!("{}-{}.json", tables.name(), mode.name());
            let path = out.join(&name);
            outcome
                .doc
                .write_atomic(&path)
                .map_err(|e| safety::io_usage(&path, "write", &e))?;
            for w in &outcome.doc.warnings {
                if !doc.warnings.iter().any(|x| x.kind == w.kind)
                    && w.kind != WarningKind::FewSamples
                {
                    doc.warnings.push(w.clone());
                }
            }
            doc.summary.runs.push(figures(&outcome.doc.summary, &name));
            super::save(&doc, &out, args.json.as_deref())?;
        }
    }
    let stopped = |s: &StudySummary| {
        Warning::new(
            WarningKind::Interrupted,
            format!(
                "Ctrl-C stopped the study after {} of 4 sweeps; results.json holds those",
                s.runs.len()
            ),
        )
    };
    super::finish(doc, &out, args.json.as_deref(), stopped, |s| {
        print_table(s, &out)
    })
}

/// The study's figures of one run's summary.
fn figures(s: &OrdersSummary, file: &str) -> RunFigures {
    let point = |connections: u32, p: &ConnectionsPoint| Point {
        connections,
        tps: p.tps,
        elapsed_s: p.elapsed_s,
        waits_per_s: p.waits_per_s.clone(),
        waiting_sessions: p.waiting_sessions.clone(),
        lat_ns: p.lat_ns,
        cpu_utilisation: p.cpu.utilisation,
        db_cpu_s: p.cpu.db_user_s + p.cpu.db_sys_s,
        driver_cpu_s: p.cpu.driver_user_s + p.cpu.driver_sys_s,
        errors: p.errors,
    };
    // A single connection count has no sweep: the summary is its one point.
    let points = match &s.sweep {
        Some(sweep) => sweep.iter().map(|p| point(p.connections, p)).collect(),
        None => vec![point(
            s.connections.first().copied().unwrap_or_default(),
            &ConnectionsPoint {
                connections: s.connections.first().copied().unwrap_or_default(),
                tps: s.tps,
                elapsed_s: s.elapsed_s,
                waits_per_s: s.waits_per_s.clone(),
                waiting_sessions: s.waiting_sessions.clone(),
                transactions: s.transactions,
                errors: s.errors,
                retries: s.retries,
                lat_ns: s.lat_ns,
                cpu: s.cpu.clone(),
                ..ConnectionsPoint::default()
            },
        )],
    };
    RunFigures {
        tables: s.tables.clone(),
        mode: s.mode.clone(),
        tps: s.tps,
        elapsed_s: s.elapsed_s,
        points,
        waits_unit: s.waits.unit.clone(),
        commit_setting: s.durability.commit_setting.clone(),
        commit_value: s.durability.commit_value.clone(),
        survives_crash: s.durability.survives_crash,
        result: file.into(),
    }
}

fn print_table(summary: &StudySummary, out: &Path) {
    println!();
    println!(
        "{:<8} {:<7} {:>11} {:>10} {:>10} {:>10}  sessions waiting (average)",
        "tables", "mode", "connections", "elapsed", "tps", "p99"
    );
    for r in &summary.runs {
        for p in &r.points {
            let mut waits: Vec<(&String, f64)> =
                p.waiting_sessions.iter().map(|(k, v)| (k, *v)).collect();
            waits.sort_by(|a, b| b.1.total_cmp(&a.1));
            println!(
                "{:<8} {:<7} {:>11} {:>9.2}s {:>10} {:>10}  {}",
                r.tables,
                r.mode,
                p.connections,
                p.elapsed_s,
                format_count(p.tps),
                format_ns(p.lat_ns.p99 as f64),
                waits
                    .iter()
                    .take(3)
                    .map(|(k, v)| format!("{k} {v:.2}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    println!(
        "\nresults: {}  report: {}",
        out.join(RESULTS_FILE).display(),
        out.join(REPORT_FILE).display()
    );
}
