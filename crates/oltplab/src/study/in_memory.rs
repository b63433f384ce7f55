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
use oltplab_metrics::{LatencyNs, Warning, WarningKind};
use oltplab_workloads::orders::{Mode, Scale as DataScale, Tables};
use serde::Serialize;
use serde_json::Value;

use super::{StudyArgs, DEFAULT_DEVICES, REPORT_FILE, RESULTS_FILE};
use crate::orders::{self, OrdersLoadConfig, OrdersRunConfig};
use crate::output;
use crate::workload::target::DbSpec;
use crate::STOP;

/// What each `--scale` runs.
#[derive(Clone, Debug, Serialize)]
pub struct Scale {
    pub name: String,
    pub connections: Vec<u32>,
    pub tx_per_connection: u64,
    pub warmup_tx_per_connection: u64,
    pub data: DataScale,
}

impl Scale {
    fn named(name: &str) -> Scale {
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
            warmup_tx_per_connection: warmup,
            data: DataScale {
                customers,
                products: 1_000,
                orders: customers,
            },
        }
    }
}

/// One connection count of one (tables, mode) sweep.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Point {
    pub connections: u32,
    pub tps: f64,
    pub elapsed_s: f64,
    pub waits_per_s: serde_json::Map<String, Value>,
    pub waiting_sessions: serde_json::Map<String, Value>,
    pub lat_ns: LatencyNs,
    /// The machine's busy share (database and driver) during the measured work.
    pub cpu_utilisation: f64,
    pub db_cpu_s: f64,
    pub driver_cpu_s: f64,
    pub errors: u64,
}

/// One (tables, mode) sweep: `summary.runs[]`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunFigures {
    pub tables: String,
    pub mode: String,
    /// All points together.
    pub tps: f64,
    pub elapsed_s: f64,
    pub points: Vec<Point>,
    /// `waits_per_s` or `waiting_sessions` (PostgreSQL's samples): what `waits_per_s` holds.
    pub waits_unit: String,
    pub commit_setting: String,
    pub commit_value: String,
    pub survives_crash: bool,
    /// The run's own result, in the output directory.
    pub result: String,
}

#[derive(Debug, Default, Serialize)]
struct StudySummary {
    scenario: String,
    engine: String,
    connections: Vec<u32>,
    tx_per_connection: u64,
    runs: Vec<RunFigures>,
    load_s: f64,
    interrupted: bool,
}

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
        scenario: args.scenario.clone(),
        engine: args.engine.clone(),
        scale: scale.clone(),
        data_dir: args.data_dir.clone(),
        seed: 1,
    };
    let db = DbSpec::resolve(
        Some(&args.engine),
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
        ..Default::default()
    };
    let mut doc = super::new_study_doc(started_at, &config, &args.data_dir, summary);
    eprintln!(
        "oltplab study in-memory — {} with disk and memory tables, update and insert, connections {}, {} transactions per connection after {} warm-up; output {}",
        args.engine,
        scale
            .connections
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        format_count(scale.tx_per_connection as f64),
        scale.warmup_tx_per_connection,
        out.display()
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
                warmup_tx_per_connection: scale.warmup_tx_per_connection,
                max_retries: 10,
                seed: config.seed,
                report_interval_s: 10.0,
                emulate: None,
                trace: None,
                backing: "auto".into(),
                json: None,
                out: None,
                force: false,
                save: false,
                quiet: output::quiet(),
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
            let run = serde_json::to_value(&outcome.doc).expect("serialises");
            for w in &outcome.doc.warnings {
                if !doc.warnings.iter().any(|x| x.kind == w.kind)
                    && w.kind != WarningKind::FewSamples
                {
                    doc.warnings.push(w.clone());
                }
            }
            doc.summary.runs.push(figures(&run, &name));
            super::save(&doc, &out, args.json.as_deref())?;
        }
    }
    doc.summary.interrupted = STOP.load(Ordering::Relaxed);
    if doc.summary.interrupted {
        doc.warnings.push(Warning::new(
            WarningKind::Interrupted,
            format!(
                "Ctrl-C stopped the study after {} of 4 sweeps; results.json holds those",
                doc.summary.runs.len()
            ),
        ));
    }
    super::save(&doc, &out, args.json.as_deref())?;
    let report = oltplab_report::html(&[serde_json::to_value(&doc).expect("serialises")])
        .map_err(|e| Error::failed(format!("writing the report failed: {e}")))?;
    let report_path = out.join(REPORT_FILE);
    std::fs::write(&report_path, report)
        .map_err(|e| safety::io_usage(&report_path, "write", &e))?;
    print_table(&doc.summary, &out);
    if doc.summary.interrupted {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// The study's figures of one run result.
fn figures(run: &Value, file: &str) -> RunFigures {
    let s = &run["summary"];
    let f = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_f64).unwrap_or(0.0);
    let text = |p: &str| {
        s.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    // A single connection count has no sweep: the summary is its one point.
    let points: Vec<&Value> = match s["sweep"].as_array() {
        Some(sweep) => sweep.iter().collect(),
        None => vec![s],
    };
    let connections = s["connections"].as_array().cloned().unwrap_or_default();
    RunFigures {
        tables: text("/tables"),
        mode: text("/mode"),
        tps: f(s, "/tps"),
        elapsed_s: f(s, "/elapsed_s"),
        points: points
            .iter()
            .enumerate()
            .map(|(i, p)| Point {
                connections: p["connections"]
                    .as_u64()
                    .or_else(|| connections.get(i).and_then(Value::as_u64))
                    .unwrap_or(0) as u32,
                tps: f(p, "/tps"),
                elapsed_s: f(p, "/elapsed_s"),
                waits_per_s: p["waits_per_s"].as_object().cloned().unwrap_or_default(),
                waiting_sessions: p["waiting_sessions"]
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                lat_ns: serde_json::from_value(p["lat_ns"].clone()).unwrap_or_default(),
                cpu_utilisation: f(p, "/cpu/utilisation"),
                db_cpu_s: f(p, "/cpu/db_user_s") + f(p, "/cpu/db_sys_s"),
                driver_cpu_s: f(p, "/cpu/driver_user_s") + f(p, "/cpu/driver_sys_s"),
                errors: p["errors"].as_u64().unwrap_or(0),
            })
            .collect(),
        waits_unit: text("/waits/unit"),
        commit_setting: text("/durability/commit_setting"),
        commit_value: text("/durability/commit_value"),
        survives_crash: s
            .pointer("/durability/survives_crash")
            .and_then(Value::as_bool)
            .unwrap_or(false),
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
            let mut waits: Vec<(&String, f64)> = p
                .waiting_sessions
                .iter()
                .filter_map(|(k, v)| Some((k, v.as_f64()?)))
                .collect();
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
