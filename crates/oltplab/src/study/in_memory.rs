//! `oltplab study --scenario in-memory`: S5 on one engine. For disk and memory tables, and for the
//! update and insert modes, a sweep over the number of connections, each connection running a fixed
//! number of transactions: the elapsed time of that work, the throughput, the engine's waits and
//! the CPU at each connection count. The scenario is studies/s5.toml with its options applied
//! (`scenario_file`), each table kind a cell of the study-file engine (its load, then its update
//! and insert sweeps), saved when it finishes and resumable (`run`). Writes each run's result
//! (`<tables>-<mode>.json`), each kind's cell, `results.json` (kind `study`, rewritten after
//! every kind) and `report.html`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use oltplab_core::safety;
use oltplab_core::units::{format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec};
use oltplab_metrics::schema::{now_rfc3339, ResultDoc};
use oltplab_metrics::{Warning, WarningKind};
use oltplab_workloads::orders::{Mode, Scale as DataScale, Tables};
use serde::Serialize;
use serde_json::Value;

use super::cells;
use super::file::{self, CellPlan, FileStudy, Measure};
use super::shipped::{
    apply_to_shipped, command_file, toml_string, ScenarioFile, Shipped, SHIPPED_FILES,
};
use super::{State, StudyArgs, DEFAULT_DEVICES, REPORT_FILE, RESULTS_FILE};
use crate::output;
use crate::plugins::orders::{self, OrdersLoadConfig, OrdersRunConfig};
use crate::workload::scaffold::{CaptureConfig, OutputConfig};
use crate::workload::target::{DbSpec, Engine};
use crate::STOP;
use oltplab_schema::{
    CellAxes, ConnectionsPoint, InMemoryCellResult as CellResult, InMemoryPoint as Point,
    InMemoryRun as RunFigures, InMemorySummary as StudySummary, OrdersSummary,
};

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
    data_dir: PathBuf,
    seed: u64,
    /// The study file it ran, and its cells (the table kinds) in order.
    file: PathBuf,
    cells: Vec<String>,
}

/// The seed of every load and run: S5's figures are comparable across its cells and runs.
const SEED: u64 = 1;

/// S5's table kinds, its cells in order: each loaded once, then run in update and insert mode.
const KINDS: [Tables; 2] = [Tables::Disk, Tables::Memory];

/// `--scenario in-memory` as the study file it runs: studies/s5.toml with `--scale` and
/// `--engine` applied, after the options the scenario does not take are refused.
pub(super) fn scenario_file(args: &StudyArgs) -> Result<ScenarioFile> {
    if args.devices != DEFAULT_DEVICES {
        return Err(Error::usage(
            "--devices belongs to the s1 scenario: the in-memory scenario runs on the storage under --data-dir (put it on the device to study)",
        ));
    }
    if args.workload != "tpcc" {
        return Err(Error::usage(
            "--workload belongs to the cache-tiers and placement scenarios; the in-memory scenario runs its own workload",
        ));
    }
    if args.pacing != super::Pacing::None || args.repeat != 1 {
        return Err(Error::usage(
            "--pacing and --repeat belong to the TPC-C scenarios; the in-memory scenario runs a fixed amount of work per connection count: drop them",
        ));
    }
    super::shipped::s1_server_settings(args)?;
    let Some((_, label, shipped)) = SHIPPED_FILES
        .iter()
        .find(|(s, ..)| *s == super::Scenario::InMemory)
    else {
        unreachable!("studies/s5.toml is shipped")
    };
    let (body, applied) = apply_to_shipped(
        label,
        shipped,
        &[
            ("scale", Some(toml_string(&args.scale))),
            ("engine", Some(toml_string(args.engine.name()))),
        ],
        &[],
        &Shipped::default(),
    )?;
    let command = format!(
        "oltplab study --scenario in-memory --engine {} --scale {}",
        args.engine, args.scale
    );
    command_file(label, &command, &body, applied)
}

/// `oltplab study --scenario in-memory`: the shipped file with the options given, run here.
pub(super) fn run_scenario(args: &StudyArgs) -> Result<()> {
    let built = scenario_file(args)?;
    let study = built.parse()?;
    run(&study, args, Some(&built))
}

/// S5's cells: one per table kind, named by it and a hash of the engine, the kind and the scale.
pub(super) fn plan_cells(engine: &str, scale: &super::Scale) -> Vec<CellPlan> {
    let work = Scale::named(&scale.name);
    let host: Spec = parse_spec("host").expect("host is in the catalogue");
    KINDS
        .iter()
        .map(|tables| {
            #[derive(Serialize)]
            struct Key<'a> {
                engine: &'a str,
                tables: &'a str,
                scale: &'a Scale,
                seed: u64,
            }
            let key = serde_json::to_string(&Key {
                engine,
                tables: tables.name(),
                scale: &work,
                seed: SEED,
            })
            .expect("serialises");
            CellPlan {
                id: tables.name().to_string(),
                hash: format!("{:08x}", file::fnv1a(key.as_bytes()) as u32),
                axes: CellAxes {
                    engine: engine.to_string(),
                    engine_name: engine.to_string(),
                    device: "host".into(),
                    device_name: "host".into(),
                    workload: "orders".into(),
                    pacing: super::Pacing::None.name().into(),
                    ..CellAxes::default()
                },
                // S5 runs on the storage under --data-dir, not on a device model.
                spec: host.clone(),
                scale: scale.clone(),
                engine_index: 0,
            }
        })
        .collect()
}

/// Runs S5's measurement: the table kinds not finished in `--resume DIR`, each saved when its
/// two sweeps finish, then the in-memory result. `built` is the file the scenario built (None:
/// given or resumed).
pub(super) fn run(study: &FileStudy, args: &StudyArgs, built: Option<&ScenarioFile>) -> Result<()> {
    let Measure::InMemory { engine } = &study.measure else {
        unreachable!("in_memory::run runs measure = \"in-memory\"")
    };
    let kept = cells::kept::<Kinds>(study, args);
    if args.dry_run {
        let done: Vec<bool> = kept.iter().map(Option::is_some).collect();
        file::print_scenario_plan(study, &done);
        return Ok(());
    }
    let scale = Scale::named(&study.scale.name);
    let engine_kind = Engine::named(engine)?;
    let db = DbSpec::resolve(
        Some(engine_kind),
        None,
        &args.data_dir,
        128 << 20,
        None,
        true,
    )?;
    let begun = match (built, &args.resume) {
        (Some(file), _) => file::Begun::Built(file),
        (None, Some(_)) => file::Begun::Resumed("the S5 study"),
        (None, None) => file::Begun::File(Some("S5's measurement")),
    };
    let mut kinds = Kinds {
        study,
        args,
        engine,
        scale,
        db,
        kept_before: kept.iter().flatten().count(),
        stopped_load_s: 0.0,
    };
    cells::run(study, args, begun, kept, &mut kinds)
}

/// S5's measurement of the table kinds, cell by cell.
struct Kinds<'a> {
    study: &'a FileStudy,
    args: &'a StudyArgs,
    engine: &'a str,
    scale: Scale,
    db: DbSpec,
    /// The cells finished in an earlier run.
    kept_before: usize,
    /// A cell stopped by Ctrl-C leaves its load's seconds in this run's figure only.
    stopped_load_s: f64,
}

impl cells::Measurement for Kinds<'_> {
    type Cell = CellResult;
    type Summary = StudySummary;
    const CELLS: &'static str = "table kinds";

    fn intro(&self, out: &Path) {
        let scale = &self.scale;
        output::note!(
            "oltplab study in-memory — {} with disk and memory tables, update and insert, connections {}, {} after {} warm-up transactions per connection; output {}",
            self.engine,
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
    }

    fn doc(
        &self,
        started_at: &str,
        results: &[Option<CellResult>],
        state: State,
        _ran: usize,
    ) -> ResultDoc<StudySummary, Value> {
        combined(
            self.study,
            self.engine,
            &self.scale,
            started_at,
            self.args,
            results,
            (state, self.kept_before),
            self.stopped_load_s,
        )
    }

    fn measure(
        &mut self,
        i: usize,
        cell: &CellPlan,
        _: &[Option<CellResult>],
        out: &Path,
    ) -> Result<Option<CellResult>> {
        let tables = KINDS[i];
        output::note!(
            "\n[{}/{}] {} ({} tables: load, update, insert)",
            i + 1,
            self.study.cells.len(),
            cell.id,
            tables.name()
        );
        match measure_kind(cell, tables, &self.db, &self.scale, out)? {
            Ok(result) => Ok(Some(result)),
            // A kind stopped by Ctrl-C is not finished: it reruns, load and both sweeps.
            Err(load_s) => {
                self.stopped_load_s += load_s;
                Ok(None)
            }
        }
    }

    fn table(&self, summary: &StudySummary, out: &Path) {
        print_table(summary, out);
    }
}

/// One table kind: loaded, then the update sweep (which leaves the row counts as they are, so
/// insert starts from the same data), then the insert sweep, each run's result written beside
/// the study's. Err inside: Ctrl-C stopped it, after a load of so many seconds.
fn measure_kind(
    cell: &CellPlan,
    tables: Tables,
    db: &DbSpec,
    scale: &Scale,
    out: &Path,
) -> Result<std::result::Result<CellResult, f64>> {
    let load_started = std::time::Instant::now();
    let loaded = orders::load_with(
        &OrdersLoadConfig {
            db: orders::orders_spec(db.clone()),
            tables,
            scale: scale.data,
            seed: SEED,
            force: true,
            quiet: output::quiet(),
        },
        &STOP,
    );
    let engine_version = match loaded {
        Ok(l) => l.engine_version,
        Err(Error::Interrupted) => return Ok(Err(0.0)),
        Err(e) => return Err(e),
    };
    let load_s = load_started.elapsed().as_secs_f64();
    let mut runs = Vec::new();
    let mut warnings: Vec<Warning> = Vec::new();
    for mode in [Mode::Update, Mode::Insert] {
        if STOP.load(Ordering::Relaxed) {
            return Ok(Err(load_s));
        }
        eprintln!("\n[{} tables, {}]", tables.name(), mode.name());
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
            seed: SEED,
            report_interval_s: 10.0,
            capture: CaptureConfig::none(),
            // The study writes each sweep's result itself.
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
            Err(Error::Interrupted) => return Ok(Err(load_s)),
            Err(e) => return Err(e),
        };
        if STOP.load(Ordering::Relaxed) {
            return Ok(Err(load_s));
        }
        let name = format!("{}-{}.json", tables.name(), mode.name());
        let path = out.join(&name);
        outcome
            .doc
            .write_atomic(&path)
            .map_err(|e| safety::io_usage(&path, "write", &e))?;
        for w in &outcome.doc.warnings {
            if !warnings.iter().any(|x| x.kind == w.kind) && w.kind != WarningKind::FewSamples {
                warnings.push(w.clone());
            }
        }
        runs.push(figures(&outcome.doc.summary, &name));
    }
    Ok(Ok(CellResult {
        id: cell.id.clone(),
        config_hash: cell.hash.clone(),
        finished_at: now_rfc3339(),
        tables: tables.name().to_string(),
        engine_version,
        load_s,
        runs,
        warnings,
    }))
}

/// The study's result from its finished table kinds, in the file's order: S5's summary with the
/// cells beside it, unfinished unless `state` says so. `stopped_load_s`: the load of a kind
/// Ctrl-C stopped in this run, counted in `load_s` as the scenario always counted it.
#[allow(clippy::too_many_arguments)]
fn combined(
    study: &FileStudy,
    engine: &str,
    scale: &Scale,
    started_at: &str,
    args: &StudyArgs,
    results: &[Option<CellResult>],
    (state, kept_before): (State, usize),
    stopped_load_s: f64,
) -> ResultDoc<StudySummary, Value> {
    let cells: Vec<CellResult> = results.iter().flatten().cloned().collect();
    let config = StudyConfig {
        scenario: super::Scenario::InMemory.name().into(),
        engine: engine.to_string(),
        scale: scale.clone(),
        data_dir: args.data_dir.clone(),
        seed: SEED,
        file: study.path.clone(),
        cells: study.cells.iter().map(|c| c.id.clone()).collect(),
    };
    let summary = StudySummary {
        scenario: config.scenario.clone(),
        engine: config.engine.clone(),
        connections: scale.connections.clone(),
        tx_per_connection: scale.tx_per_connection,
        tx_per_point: scale.tx_per_point,
        runs: cells.iter().flat_map(|c| c.runs.clone()).collect(),
        load_s: cells.iter().map(|c| c.load_s).sum::<f64>() + stopped_load_s,
        interrupted: state != State::Finished,
        cells,
    };
    let mut doc = super::new_study_doc(started_at.to_string(), &config, &args.data_dir, summary);
    doc.env.engine_version = doc.summary.cells.first().map(|c| c.engine_version.clone());
    // Each kind of warning once, as the scenario always gave them.
    for w in doc.summary.cells.iter().flat_map(|c| &c.warnings) {
        if !doc.warnings.iter().any(|x| x.kind == w.kind) {
            doc.warnings.push(w.clone());
        }
    }
    let (finished, total) = (doc.summary.cells.len(), study.cells.len());
    doc.warnings.extend(state.unfinished_warning(
        finished,
        total,
        "table kinds",
        finished - kept_before,
    ));
    doc
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_table_kind_is_a_cell_whose_hash_follows_engine_and_scale() {
        let quick = super::super::Scale::named("quick");
        let cells = plan_cells("sqlite", &quick);
        let ids: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["disk", "memory"]);
        assert_ne!(cells[0].hash, cells[1].hash);
        // The same file plans the same cells; another engine or scale is another cell.
        assert_eq!(plan_cells("sqlite", &quick)[1].hash, cells[1].hash);
        assert_ne!(plan_cells("postgres", &quick)[0].hash, cells[0].hash);
        let paper = super::super::Scale::named("paper");
        assert_ne!(plan_cells("sqlite", &paper)[0].hash, cells[0].hash);
    }
}
