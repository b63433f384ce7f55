//! S2's and S3's measurement (`measure = "storage"` in a study file): each cell one run of its
//! workload on a fresh copy of the loaded database, on its storage — a device spec or a layout
//! (docs/layouts.md) — with the figures S2 and S3 tabulate per configuration: throughput, IOPS,
//! mean and 90th-percentile response time, CPU utilisation, and each device's busy (100 − idle)
//! share and read-cache hit ratio. `--scenario cache-tiers` (S2) and `--scenario placement` (S3)
//! are the shipped studies/s2.toml and s3.toml with the command's options applied
//! (`scenario_file`), run here cell by cell, resumable; their result keeps `summary.configs[]`.
//!
//! What the scenarios took from their run and not from their options is written in the file and
//! resolved when a cell runs: a size as a share of the loaded database (`size=50%db`, S2's read
//! cache) and the hottest table of an earlier cell's I/O (`table:hottest=…`, S3).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec};
use oltplab_metrics::schema::{now_rfc3339, ResultDoc};
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;
use serde_json::Value;

use super::cells;
use super::database::{self, tree_bytes, Database, BROKERAGE, BROKERAGE_CUSTOMERS};
use super::file::{self, CellPlan, FileStudy};
use super::shipped::{
    apply_to_shipped, command_file, split_devices, toml_list, toml_string, ScenarioFile, Shipped,
    SHIPPED_FILES,
};
use super::{new_study_doc, secs, Pacing, Scale, Scenario, State, StudyArgs, DEFAULT_DEVICES};
use crate::output;
use crate::STOP;
use oltplab_schema::{
    ConfigFigures, RampStep, StepRepeats, StorageCellResult, StorageStudySummary,
};

/// `table:hottest=DEV` in a layout: the table with the largest share of the I/O of the study's
/// first cell of the same engine, workload, terminals and pacing (S3's "hottest table").
pub(super) const HOTTEST: &str = "hottest";
/// `size=P%db`: P % of the bytes the cell's engine loaded (S2's read cache held half of it).
const DB_SHARE: &str = "%db";
/// A size stood for by a share of the database is at least this (S2's scenario's floor).
const DB_SHARE_MIB_MIN: f64 = 16.0;
/// The stand-in sizes a spec with shares is checked with before the database exists, one per
/// share (`16383k`, `16382k`, …): odd sizes that no written spec is expected to hold.
const NOMINAL_KIB: u64 = 16383;
/// The `scenario` of a study file's storage result (`--file` of `measure = "storage"`).
const STORAGE_SCENARIO: &str = "storage";

/// Whose result a storage study writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Named {
    /// `--file F`: `summary.scenario` `storage`; each cell's files named by its id.
    File,
    /// `--scenario cache-tiers|placement`: the scenario's result as it always was, each
    /// configuration's files named `config<N>`.
    Scenario(Scenario),
}

impl Named {
    /// The kind of storage study a `summary.scenario` names (None: not a storage study).
    pub(super) fn of_scenario(scenario: &str) -> Option<Named> {
        match scenario {
            "cache-tiers" => Some(Named::Scenario(Scenario::CacheTiers)),
            "placement" => Some(Named::Scenario(Scenario::Placement)),
            STORAGE_SCENARIO => Some(Named::File),
            _ => None,
        }
    }

    fn scenario(self) -> &'static str {
        match self {
            Named::File => STORAGE_SCENARIO,
            Named::Scenario(s) => s.name(),
        }
    }

    /// What a sentence calls the study in a directory.
    pub(super) fn describe(self) -> String {
        match self {
            Named::File => "a study of S2's and S3's measurement (measure = \"storage\")".into(),
            Named::Scenario(s) => format!("an `oltplab study --scenario {s}` run"),
        }
    }
}

/// `text` with each `size=P%db` replaced by `size=` and what `size` gives for (its index, P as
/// written, P); None: the text has none.
fn replace_db_shares(
    text: &str,
    mut size: impl FnMut(usize, &str, f64) -> String,
) -> std::result::Result<Option<String>, String> {
    if !text.contains(DB_SHARE) {
        return Ok(None);
    }
    let (mut out, mut rest, mut i) = (String::new(), text, 0);
    while let Some(at) = rest.find(DB_SHARE) {
        let head = &rest[..at];
        let Some(eq) = head.rfind("size=") else {
            return Err(format!(
                "`{DB_SHARE}` belongs right after size= and a share, as in size=50%db"
            ));
        };
        let written = &head[eq + "size=".len()..];
        let share = written
            .parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && *p > 0.0 && *p <= 100.0)
            .ok_or_else(|| {
                format!("size={written}{DB_SHARE}: give a share of the loaded database above 0 and up to 100 %, as in size=50%db")
            })?;
        out.push_str(&head[..eq + "size=".len()]);
        out.push_str(&size(i, written, share));
        rest = &rest[at + DB_SHARE.len()..];
        i += 1;
    }
    out.push_str(rest);
    Ok(Some(out))
}

/// A storage study's spec as written: parsed (with a stand-in size for each share of the
/// database), and, when it has shares, its canonical name with the shares kept (`size=50%db`),
/// which is the cell's `device`.
pub(super) fn parse_written(text: &str) -> std::result::Result<(Spec, Option<String>), String> {
    let mut stand_ins: Vec<(String, String)> = Vec::new();
    let nominal = replace_db_shares(text, |i, written, _| {
        let size = format!("{}k", NOMINAL_KIB - i as u64);
        stand_ins.push((size.clone(), written.to_string()));
        size
    })?;
    let Some(nominal) = nominal else {
        return parse_spec(text)
            .map(|s| (s, None))
            .map_err(|e| e.to_string());
    };
    if let Some((size, _)) = stand_ins.iter().find(|(s, _)| text.contains(s.as_str())) {
        return Err(format!(
            "size={size} beside a share of the database: oltplab checks shares with that size; write it as {}m or in bytes",
            (NOMINAL_KIB as f64 / 1024.0)
        ));
    }
    let spec = parse_spec(&nominal).map_err(|e| e.to_string())?;
    let mut written = spec.name();
    for (size, share) in &stand_ins {
        written = written.replacen(
            &format!("size={size}"),
            &format!("size={share}{DB_SHARE}"),
            1,
        );
    }
    Ok((spec, Some(written)))
}

/// A spec's canonical name as a storage study writes it (None: it does not parse).
pub(super) fn canonical(text: &str) -> Option<String> {
    parse_written(text)
        .ok()
        .map(|(spec, written)| written.unwrap_or_else(|| spec.name()))
}

fn has_hottest(cell: &CellPlan) -> bool {
    cell.axes.device.contains(&format!("table:{HOTTEST}="))
}

/// The cell a `table:hottest` cell finds its table from: the study's first cell of the same
/// engine, workload, terminals and pacing, which does not place the hottest table itself.
fn hottest_source(cells: &[CellPlan], i: usize) -> Option<usize> {
    let c = &cells[i];
    cells[..i].iter().position(|o| {
        o.engine_index == c.engine_index
            && o.axes.workload == c.axes.workload
            && o.axes.terminals == c.axes.terminals
            && o.axes.pacing == c.axes.pacing
            && !has_hottest(o)
    })
}

/// Every `table:hottest` cell has an earlier cell to find the table from.
pub(super) fn check_hottest(path: &Path, cells: &[CellPlan]) -> Result<()> {
    for (i, c) in cells.iter().enumerate() {
        if has_hottest(c) && hottest_source(cells, i).is_none() {
            return Err(Error::usage(format!(
                "{}: the cell {} places table:{HOTTEST}, the hottest table of an earlier cell of its engine, workload, terminals and pacing, and has none before it: list a device or layout without table:{HOTTEST} first",
                path.display(),
                c.id
            )));
        }
    }
    Ok(())
}

/// The table with the largest share of a finished cell's reads and writes.
fn hottest_table(source: &StorageCellResult) -> Result<(String, f64)> {
    source
        .figures
        .figures
        .tables
        .iter()
        .find(|t| oltplab_trace::format::names_a_table(&t.name) && !t.name.starts_with("sqlite_"))
        .map(|t| (t.name.clone(), t.share_pct))
        .ok_or_else(|| {
            Error::failed(format!(
                "the cell {}'s run attributed no I/O to a table, so the hottest table is unknown: check its warnings",
                source.id
            ))
        })
}

/// The spec a cell runs: its shares of the database sized from `database_bytes` (in whole MiB,
/// rounded up, at least 16 MiB) and `table:hottest` made the table found.
fn resolve(cell: &CellPlan, database_bytes: u64, hot: Option<&str>) -> Result<Spec> {
    let written = &cell.axes.device;
    let sized = replace_db_shares(written, |_, _, share| {
        let mib = (database_bytes as f64 * share / 100.0 / (1u64 << 20) as f64)
            .ceil()
            .max(DB_SHARE_MIB_MIN);
        format!("{mib:.0}m")
    })
    .map_err(Error::usage)?
    .unwrap_or_else(|| written.clone());
    let text = match hot {
        Some(t) => sized.replace(&format!("table:{HOTTEST}="), &format!("table:{t}=")),
        None => sized,
    };
    parse_spec(&text).map_err(|e| {
        Error::usage(format!(
            "the cell {} as sized for the loaded {}: `{text}`: {e}; give the share (size=…%db) a value that fits the devices",
            cell.id,
            format_bytes(database_bytes)
        ))
    })
}

/// What the configuration is called in `summary.configs[]`: the file's title (`{hottest}`
/// replaced by the table), else its short name, else the spec it ran.
fn config_name(cell: &CellPlan, spec: &Spec, hot: Option<&str>) -> String {
    match (&cell.axes.title, &cell.axes.label) {
        (Some(t), _) => t.replace("{hottest}", hot.unwrap_or(HOTTEST)),
        (None, Some(l)) => l.clone(),
        (None, None) => spec.name(),
    }
}

/// What names a cell's trace, run and database copy.
fn files_of(named: Named, index: usize, cell: &CellPlan) -> String {
    match named {
        Named::File => cell.id.clone(),
        // As the scenarios always named them.
        Named::Scenario(_) => format!("config{}", index + 1),
    }
}

/// `--scenario cache-tiers|placement`: the shipped file with the options given, run here.
pub(super) fn run_scenario(args: &StudyArgs, settings: &[(String, String)]) -> Result<()> {
    let built = scenario_file(args, settings)?;
    let study = built.parse()?;
    run(&study, args, Named::Scenario(args.scenario), Some(&built))
}

/// A loaded engine and workload: its database, the engine's version and the bytes loaded.
type Loaded = ((usize, String), (Database, String, u64));

/// Runs a storage study: its cells not finished in `--resume DIR`, each saved when it finishes,
/// then the result `named` says. `built` is the file a scenario built (None: given or resumed).
pub(super) fn run(
    study: &FileStudy,
    args: &StudyArgs,
    named: Named,
    built: Option<&ScenarioFile>,
) -> Result<()> {
    let kept = cells::kept::<Configs>(study, args);
    let settings_checked = file::check_settings(study)?;
    if args.dry_run {
        let done: Vec<bool> = kept.iter().map(Option::is_some).collect();
        let estimates: Vec<f64> = study
            .cells
            .iter()
            .zip(&done)
            .map(|(c, d)| match d {
                true => 0.0,
                false => study.repeat as f64 * (c.scale.warmup_s + c.scale.duration_s),
            })
            .collect();
        file::print_plan(study, &done, &estimates);
        if !settings_checked {
            output::say!("(server settings not checked: the server is not installed)");
        }
        return Ok(());
    }
    let resumed;
    let begun = match (named, built) {
        (Named::Scenario(_), Some(file)) => file::Begun::Built(file),
        (Named::Scenario(s), None) => {
            resumed = format!("the `oltplab study --scenario {s}`");
            file::Begun::Resumed(&resumed)
        }
        (Named::File, _) => file::Begun::File(Some("S2's and S3's measurement")),
    };
    let mut configs = Configs {
        study,
        args,
        named,
        loaded: Vec::new(),
        load_s: 0.0,
    };
    cells::run(study, args, begun, kept, &mut configs)
}

/// S2's and S3's measurement of a study's configurations, cell by cell, each engine and
/// workload loaded when its first cell runs.
struct Configs<'a> {
    study: &'a FileStudy,
    args: &'a StudyArgs,
    named: Named,
    loaded: Vec<Loaded>,
    load_s: f64,
}

impl cells::Measurement for Configs<'_> {
    type Cell = StorageCellResult;
    type Summary = StorageStudySummary;
    const CELLS: &'static str = "configurations";

    fn kept_name(&self, _: &CellPlan, r: &StorageCellResult) -> String {
        r.figures.name.clone()
    }

    fn intro(&self, out: &Path) {
        let (study, first) = (self.study, &self.study.cells[0]);
        // e.g. `TPC-C on sqlite: 1 warehouse`.
        let load = file::load_text(&first.axes.workload, &study.scale);
        let (workload, size) = load.split_once(", ").unwrap_or((&load, ""));
        output::note!(
            "oltplab study {} — {workload} on {}: {size}, {} terminals, {} warm-up + {} measured per configuration; output {}",
            self.named.scenario(),
            file::unique(study.engines.iter().map(|e| e.name.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
            first.scale.terminals,
            secs(first.scale.warmup_s),
            secs(first.scale.duration_s),
            out.display()
        );
    }

    fn doc(
        &self,
        started_at: &str,
        results: &[Option<StorageCellResult>],
        state: State,
        ran: usize,
    ) -> ResultDoc<StorageStudySummary, Value> {
        combined(
            self.study,
            self.named,
            started_at,
            &self.args.data_dir,
            results,
            &self.loaded,
            self.load_s,
            state,
            ran,
        )
    }

    fn measure(
        &mut self,
        i: usize,
        cell: &CellPlan,
        results: &[Option<StorageCellResult>],
        out: &Path,
    ) -> Result<Option<StorageCellResult>> {
        let study = self.study;
        let count = study.cells.len();
        let files = files_of(self.named, i, cell);
        let key = (cell.engine_index, cell.axes.workload.clone());
        if !self.loaded.iter().any(|(k, _)| *k == key) {
            let started = std::time::Instant::now();
            let engine = &study.engines[cell.engine_index];
            let data_dir = &self.args.data_dir;
            match database::load_engine(engine, &cell.axes.workload, &study.scale, data_dir) {
                Ok((db, version)) => {
                    let bytes = tree_bytes(&db.base);
                    self.loaded.push((key.clone(), (db, version, bytes)));
                }
                Err(Error::Interrupted) => return Ok(None),
                Err(e) => return Err(e),
            }
            self.load_s += started.elapsed().as_secs_f64();
        }
        let Some((_, (database, engine_version, database_bytes))) =
            self.loaded.iter().find(|(k, _)| *k == key)
        else {
            unreachable!("loaded above")
        };
        // S3: the hottest table of the first configuration's run.
        let hot = match has_hottest(cell) {
            false => None,
            true => {
                let source = hottest_source(&study.cells, i)
                    .and_then(|j| results[j].as_ref())
                    .ok_or_else(|| {
                        Error::failed(format!(
                            "the cell {} needs the hottest table of an earlier cell, which has no result: this is a bug in oltplab",
                            cell.id
                        ))
                    })?;
                let (table, share) = hottest_table(source)?;
                output::note!(
                    "the hottest table is {table}: {share:.1} % of the reads and writes of {}",
                    source.figures.name
                );
                Some((table, share))
            }
        };
        let hot_name = hot.as_ref().map(|(t, _)| t.as_str());
        let spec = resolve(cell, *database_bytes, hot_name)?;
        let name = config_name(cell, &spec, hot_name);
        output::note!("\n[{}/{count}] {name} ({})", i + 1, spec.name());
        file::remove_stopped_traces(out, &files, study.repeat)?;
        // A configuration stopped by Ctrl-C is not finished: it reruns, every repetition.
        let Some((figures, repeats, warnings)) = measure_repeats(
            &name,
            &spec,
            &files,
            study.repeat,
            &cell.scale,
            database,
            out,
        )?
        else {
            return Ok(None);
        };
        Ok(Some(StorageCellResult {
            id: cell.id.clone(),
            config_hash: cell.hash.clone(),
            axes: cell.axes.clone(),
            finished_at: now_rfc3339(),
            engine_version: engine_version.clone(),
            buffer_pool_bytes: database.buffer_pool_bytes,
            database_bytes: *database_bytes,
            figures: ConfigFigures {
                name,
                spec: spec.name(),
                figures,
                throughput_vs_first: None,
                repeats,
            },
            hot_table: hot.as_ref().map(|(t, _)| t.clone()),
            hot_table_share_pct: hot.as_ref().map(|(_, s)| *s),
            warnings,
        }))
    }

    fn table(&self, summary: &StorageStudySummary, out: &Path) {
        print_table(summary);
        output::say!("results: {}", out.display());
    }
}

/// One configuration: the workload on a fresh copy of the database, on `spec`, traced on SQLite
/// (which attributes I/O to tables only from a trace; a server's shim always traces); its
/// figures and the warnings that make them less reliable, named by the configuration.
/// A configuration's figures, their intervals when repeated, and its runs' warnings.
type Measured = (RampStep, Option<StepRepeats>, Vec<Warning>);

/// A configuration's `repeat` runs, each on a fresh copy (the first keeps the plain file names,
/// the others end in `-r<N>`): its figures (with 2 or more runs the means, and their intervals)
/// and the runs' warnings; None when Ctrl-C stopped it.
fn measure_repeats(
    name: &str,
    spec: &Spec,
    files: &str,
    repeat: u32,
    scale: &Scale,
    database: &Database,
    out: &Path,
) -> Result<Option<Measured>> {
    let mut runs = Vec::new();
    let mut warnings = Vec::new();
    for r in 1..=repeat {
        let (tag, label) = match (r, repeat) {
            (_, 1) => (files.to_string(), name.to_string()),
            (1, _) => (files.to_string(), format!("{name}, run 1")),
            _ => (format!("{files}-r{r}"), format!("{name}, run {r}")),
        };
        if repeat > 1 {
            output::note!("  repetition {r} of {repeat}");
        }
        match measure(&label, spec, &tag, scale, database, out) {
            Ok(_) | Err(Error::Interrupted) if STOP.load(Ordering::Relaxed) => return Ok(None),
            Ok((step, w)) => {
                runs.push(step);
                warnings.extend(w);
            }
            Err(e) => return Err(e),
        }
    }
    if runs.len() == 1 {
        return Ok(Some((runs.remove(0), None, warnings)));
    }
    let (mean, rep) = StepRepeats::of(&runs);
    output::note!(
        "  over {} runs: {} {:.0} ± {:.0}, IOPS {:.0} ± {:.0} (95 %)",
        rep.runs,
        mean.throughput_unit,
        rep.throughput.mean,
        rep.throughput.ci95,
        rep.io_iops.mean,
        rep.io_iops.ci95
    );
    Ok(Some((mean, Some(rep), warnings)))
}

fn measure(
    name: &str,
    spec: &Spec,
    files: &str,
    scale: &Scale,
    database: &Database,
    out: &Path,
) -> Result<(RampStep, Vec<Warning>)> {
    let db_path = database.copy_for(files)?;
    let trace = (database.engine == "sqlite").then(|| out.join(format!("{files}.trace")));
    let run = database.spec(&db_path).and_then(|db| {
        let cfg = super::database::study_run(
            scale,
            db,
            Some(spec),
            trace,
            &out.join(format!("run-{files}")),
        );
        super::database::study_workload_run(database, &cfg, scale)
    });
    database.remove_copy(&db_path);
    let run = run?;
    let warnings = run
        .warnings
        .iter()
        .filter(|w| {
            matches!(
                w.kind,
                WarningKind::EmulationOffTarget | WarningKind::NotSteady | WarningKind::FewSamples
            )
        })
        .map(|w| Warning::new(w.kind, format!("{name}: {}", w.message)))
        .collect();
    Ok((run.step, warnings))
}

#[derive(Debug, Serialize)]
struct StorageConfig {
    scenario: String,
    engine: String,
    workload: String,
    /// Each configuration's spec: as run where it ran, else as written.
    devices: Vec<String>,
    /// The first cell's scale (with its pacing and terminals).
    scale: Scale,
    seed: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    server_settings: Vec<String>,
    /// The study file it ran, and every cell of it, in order.
    file: PathBuf,
    cells: Vec<String>,
}

/// The study's result from the finished cells: `summary.configs[]` (each throughput against the
/// baseline cell of its engine, workload, terminals and pacing: the first configuration in the
/// scenarios) and `summary.cells[]`.
#[allow(clippy::too_many_arguments)]
fn combined(
    study: &FileStudy,
    named: Named,
    started_at: &str,
    data_dir: &Path,
    results: &[Option<StorageCellResult>],
    loaded: &[Loaded],
    load_s: f64,
    state: State,
    ran: usize,
) -> ResultDoc<StorageStudySummary, Value> {
    let mut cells: Vec<StorageCellResult> = results.iter().flatten().cloned().collect();
    let bases: Vec<Option<f64>> = cells
        .iter()
        .map(|c| {
            cells
                .iter()
                .find(|b| {
                    Some(&b.axes.device_name) == study.baseline.as_ref()
                        && b.axes.engine_name == c.axes.engine_name
                        && b.axes.workload == c.axes.workload
                        && b.axes.terminals == c.axes.terminals
                        && b.axes.pacing == c.axes.pacing
                })
                .map(|b| b.figures.figures.throughput)
        })
        .collect();
    for (c, base) in cells.iter_mut().zip(bases) {
        c.figures.throughput_vs_first = base
            .filter(|b| *b > 0.0)
            .map(|b| c.figures.figures.throughput / b);
    }
    let first = &study.cells[0];
    let workload = file::unique(study.cells.iter().map(|c| c.axes.workload.as_str()))
        .collect::<Vec<_>>()
        .join(",");
    let engine = file::unique(study.engines.iter().map(|e| e.engine.as_str()))
        .collect::<Vec<_>>()
        .join(",");
    let loaded_first = loaded.first().map(|(_, l)| l);
    let hot = cells.iter().find(|c| c.hot_table.is_some());
    let config = StorageConfig {
        scenario: named.scenario().into(),
        engine: engine.clone(),
        workload: workload.clone(),
        devices: study
            .cells
            .iter()
            .zip(results)
            .map(|(c, r)| match r {
                Some(r) => r.figures.spec.clone(),
                None => c.axes.device.clone(),
            })
            .collect(),
        scale: first.scale.clone(),
        seed: 1,
        server_settings: first.axes.server_settings.clone(),
        file: study.path.clone(),
        cells: study.cells.iter().map(|c| c.id.clone()).collect(),
    };
    let summary = StorageStudySummary {
        scenario: named.scenario().into(),
        engine,
        workload: workload.clone(),
        warehouses: (workload == "tpcc").then_some(first.scale.warehouses),
        customers: (workload == BROKERAGE).then_some(BROKERAGE_CUSTOMERS),
        terminals: first.scale.terminals,
        load_s,
        database_bytes: cells
            .first()
            .map(|c| c.database_bytes)
            .or(loaded_first.map(|l| l.2))
            .unwrap_or(0),
        buffer_pool_bytes: cells
            .first()
            .map(|c| c.buffer_pool_bytes)
            .or(loaded_first.map(|l| l.0.buffer_pool_bytes))
            .unwrap_or(0),
        hot_table: hot.and_then(|c| c.hot_table.clone()),
        hot_table_share_pct: hot.and_then(|c| c.hot_table_share_pct),
        configs: cells.iter().map(|c| c.figures.clone()).collect(),
        interrupted: state != State::Finished,
        cells,
    };
    let mut doc = new_study_doc(started_at.to_string(), &config, data_dir, summary);
    doc.env.engine_version = doc
        .summary
        .cells
        .first()
        .map(|c| c.engine_version.clone())
        .or(loaded_first.map(|l| l.1.clone()));
    for c in &doc.summary.cells {
        doc.warnings.extend(c.warnings.iter().cloned());
    }
    let (finished, total) = (doc.summary.cells.len(), study.cells.len());
    doc.warnings
        .extend(state.unfinished_warning(finished, total, "configurations", ran));
    doc
}

fn print_table(s: &StorageStudySummary) {
    output::say!("");
    let unit = s
        .configs
        .first()
        .map_or("throughput", |c| c.figures.throughput_unit.as_str());
    output::say!(
        "{:<32} {:>15} {:>7} {:>9} {:>9} {:>9} {:>9}  device busy (read-cache hits)",
        "configuration",
        unit,
        "vs 1st",
        "IOPS",
        "mean rt",
        "p90 rt",
        "CPU busy"
    );
    for c in &s.configs {
        let f = &c.figures;
        let devices: Vec<String> = f
            .devices
            .iter()
            .map(|d| {
                // One device: the configuration names it; a layout's: by their roles.
                let name = if f.devices.len() == 1 {
                    "device".to_string()
                } else {
                    short(&d.name)
                };
                match d.read_cache_hit_pct {
                    Some(h) => format!("{name} {:.0} % ({h:.0} %)", d.busy_pct),
                    None => format!("{name} {:.0} %", d.busy_pct),
                }
            })
            .collect();
        output::say!(
            "{:<32} {:>15} {:>7} {:>9} {:>9} {:>9} {:>7.0} %  {}",
            if c.figures.warnings.is_empty() {
                c.name.clone()
            } else {
                format!("{} *", c.name)
            },
            // With `repeat`, the mean and its 95 % interval.
            match &c.repeats {
                Some(r) => format!(
                    "{} ± {}",
                    format_count(f.throughput),
                    format_count(r.throughput.ci95)
                ),
                None => format_count(f.throughput),
            },
            c.throughput_vs_first
                .map_or("—".to_string(), |r| format!("{r:.2}×")),
            format_count(f.io_iops),
            format_ns(f.lat_ns.mean),
            format_ns(f.lat_ns.p90 as f64),
            100.0 * f.cpu_utilisation,
            devices.join(", ")
        );
    }
    if s.configs.iter().any(|c| !c.figures.warnings.is_empty()) {
        output::say!("* less reliable: see the warnings above and in results.json");
    }
    if let Some(t) = &s.hot_table {
        output::say!(
            "hottest table: {t} ({:.1} % of the first configuration's I/O)",
            s.hot_table_share_pct.unwrap_or(0.0)
        );
    }
    output::say!(
        "database {} loaded in {:.0} s",
        format_bytes(s.database_bytes),
        s.load_s
    );
}

/// A device name without a long spec's details: its roles, or the spec's head.
fn short(name: &str) -> String {
    match name.split_once('=') {
        Some((roles, _)) if !roles.contains('(') => roles.to_string(),
        _ if name.chars().count() > 40 => name.chars().take(39).collect::<String>() + "…",
        _ => name.to_string(),
    }
}

/// `--scenario cache-tiers|placement` as the study file it runs: studies/s2.toml or s3.toml
/// with `--scale`, `--engine` (and `--server-setting`s), `--workload`, `--pacing` and
/// `--devices` applied.
pub(super) fn scenario_file(
    args: &StudyArgs,
    settings: &[(String, String)],
) -> Result<ScenarioFile> {
    let Some((_, label, shipped)) = SHIPPED_FILES.iter().find(|(s, ..)| *s == args.scenario) else {
        unreachable!("the storage scenarios' files are shipped")
    };
    let layouts = given_layouts(args)?;
    let mut values: Vec<(&str, Option<String>)> = vec![
        ("scale", Some(toml_string(&args.scale))),
        ("repeat", Some(args.repeat.to_string())),
        ("workloads", Some(toml_list(&[&args.workload]))),
        ("pacing", Some(toml_list(&[args.pacing.name()]))),
        ("engine", Some(toml_string(args.engine.name()))),
    ];
    if let Some((_, baseline)) = &layouts {
        values.push(("baseline", baseline.clone()));
    }
    let (body, applied) = apply_to_shipped(
        label,
        shipped,
        &values,
        settings,
        &Shipped {
            quiet: &["baseline"],
            block: layouts.as_ref().map(|(block, _)| {
                (
                    "layouts = [",
                    block.as_str(),
                    format!("layouts from --devices {}", args.devices),
                )
            }),
            ..Shipped::default()
        },
    )?;
    let mut command = format!(
        "oltplab study --scenario {} --engine {} --scale {}",
        args.scenario, args.engine, args.scale
    );
    if args.workload != "tpcc" {
        command.push_str(&format!(" --workload {}", args.workload));
    }
    if args.pacing != Pacing::None {
        command.push_str(&format!(" --pacing {}", args.pacing.name()));
    }
    if args.devices != DEFAULT_DEVICES {
        command.push_str(&format!(" --devices {}", args.devices));
    }
    if args.repeat != 1 {
        command.push_str(&format!(" --repeat {}", args.repeat));
    }
    for s in &args.server_setting {
        command.push_str(&format!(" --server-setting {s}"));
    }
    command_file(label, &command, &body, applied)
}

/// `--devices` as the scenario's `layouts` list (and its baseline line: the first): S2's
/// systems as given; S3's four placements of the slow device and the flash one. None: the
/// shipped list.
fn given_layouts(args: &StudyArgs) -> Result<Option<(String, Option<String>)>> {
    let placement = args.scenario == Scenario::Placement;
    if args.devices == DEFAULT_DEVICES {
        return Ok(None);
    }
    let given = split_devices(&args.devices)?;
    // Every device is checked before anything is made or loaded.
    let parse = |t: &str| parse_spec(t).map_err(|e| Error::usage(format!("--devices: `{t}`: {e}")));
    if placement {
        let [slow, fast] = given.as_slice() else {
            return Err(Error::usage(
                "--devices for placement: two devices, the slow one and the flash, e.g. raid10(8,hdd-15k),pcie-flash-2012",
            ));
        };
        let (slow, fast) = (parse(slow)?, parse(fast)?);
        if slow.is_host() || fast.is_host() || slow.is_layout() || fast.is_layout() {
            return Err(Error::usage(
                "--devices for placement: two emulated devices (not host, not layouts); the scenario makes the layouts",
            ));
        }
        return Ok(Some((placement_layouts(&slow.name(), &fast.name()), None)));
    }
    // Sizes may be shares of the loaded database here too (size=50%db).
    let specs = given
        .iter()
        .map(|t| {
            parse_written(t)
                .map(|(spec, written)| (written.unwrap_or_else(|| spec.name()), spec))
                .map_err(|e| Error::usage(format!("--devices: `{t}`: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    if specs.len() < 2 || specs.iter().any(|(_, s)| s.is_host()) {
        return Err(Error::usage(
            "--devices for cache-tiers: two or more emulated storage configurations (host is not one)",
        ));
    }
    let mut block = String::from("layouts = [\n");
    for (name, _) in &specs {
        block.push_str(&format!("  {},\n", toml_string(name)));
    }
    block.push_str("]\n");
    Ok(Some((block, Some(toml_string(&specs[0].0)))))
}

/// S3's four placements of `slow` and `fast`, in S3's order, as the `layouts` list.
fn placement_layouts(slow: &str, fast: &str) -> String {
    let entries = [
        ("nothing-on-flash", "nothing on flash", slow.to_string()),
        (
            "log-temp-on-flash",
            "log and temp on flash",
            format!("data={slow},log={fast},temp={fast}"),
        ),
        (
            "hottest-on-flash",
            "{hottest} on flash",
            format!("data={slow},table:{HOTTEST}={fast}"),
        ),
        ("all-on-flash", "everything on flash", fast.to_string()),
    ];
    let mut block = String::from("layouts = [\n");
    for (name, title, spec) in entries {
        block.push_str(&format!(
            "  {{ name = {}, title = {}, spec = {} }},\n",
            toml_string(name),
            toml_string(title),
            toml_string(&spec)
        ));
    }
    block.push_str("]\n");
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::tests::study_args;

    fn cells(text: &str) -> Vec<(String, Option<String>)> {
        file::parse(Path::new("t.toml"), text)
            .unwrap()
            .cells
            .iter()
            .map(|c| (c.axes.device.clone(), c.axes.title.clone()))
            .collect()
    }

    /// `--scenario placement --devices SLOW,FAST` builds S3's four placements as the shipped
    /// studies/s3.toml has them for S3's defaults (the server's disks, the PCIe flash card).
    #[test]
    fn placement_devices_build_the_shipped_placements() {
        let args = study_args(&[
            "--scenario",
            "placement",
            "--devices",
            "wbcache(raid10(8,hdd-15k),size=1g),pcie-flash-2012",
        ]);
        let built = scenario_file(&args, &[]).unwrap();
        let shipped = include_str!("../../../../studies/s3.toml");
        assert_eq!(cells(&built.text), cells(shipped));
        let titles: Vec<Option<String>> = cells(shipped).into_iter().map(|c| c.1).collect();
        assert_eq!(
            titles,
            [
                "nothing on flash",
                "log and temp on flash",
                "{hottest} on flash",
                "everything on flash"
            ]
            .map(|t| Some(t.to_string()))
        );
    }

    /// Every option the scenario takes lands in its file.
    #[test]
    fn cache_tiers_applies_its_options_to_its_file() {
        let args = study_args(&[
            "--scenario",
            "cache-tiers",
            "--scale",
            "test",
            "--workload",
            "brokerage",
            "--engine",
            "postgres",
            "--devices",
            "raid10(4,hdd-15k),nvme-gen4",
            "--repeat",
            "3",
        ]);
        let settings = [("synchronous_commit".to_string(), "off".to_string())];
        let built = scenario_file(&args, &settings).unwrap();
        let study = built.parse().unwrap();
        assert_eq!(study.measure, file::Measure::Storage);
        assert_eq!(study.scale.name, "test");
        assert_eq!(study.repeat, 3);
        let devices: Vec<&str> = study.cells.iter().map(|c| c.axes.device.as_str()).collect();
        assert_eq!(devices, ["raid10(4,hdd-15k,stripe=64k)", "nvme-gen4"]);
        for c in &study.cells {
            assert_eq!(c.axes.workload, "brokerage");
            assert_eq!(c.axes.engine, "postgres");
            assert_eq!(c.axes.server_settings, ["synchronous_commit=off"]);
        }
        assert_eq!(
            study.baseline.as_deref(),
            Some("raid10_4_hdd-15k_stripe_64k")
        );
        assert!(built
            .text
            .starts_with("# oltplab study --scenario cache-tiers --engine postgres --scale test"));
        assert!(built.text.contains(" --repeat 3"), "{}", built.text);
    }

    /// Each refused before anything runs: one sentence naming the file (and line), exit code 2.
    #[test]
    fn storage_files_refuse_what_they_cannot_run() {
        for (text, says) in [
            (
                "measure = \"storage\"\nrepeat = 21\ndevices = [\"hdd-15k\"]",
                "line 2: repeat = 21 is out of range",
            ),
            (
                "measure = \"storage\"\ndevices = [\"host\", \"hdd-15k\"]",
                "host is this machine's own storage",
            ),
            (
                "measure = \"storage\"\nlayouts = [\"data=hdd-15k,table:hottest=nvme-gen4\", \"hdd-15k\"]",
                "has none before it",
            ),
            (
                "measure = \"storage\"\ndevices = [\"readcache(hdd-15k,sas-ssd-2012,size=0%db)\"]",
                "size=0%db: give a share",
            ),
            (
                "devices = [\"readcache(hdd-15k,sas-ssd-2012,size=50%db)\"]",
                "add measure = \"storage\"",
            ),
            (
                "layouts = [\"data=hdd-15k,table:hottest=nvme-gen4\"]",
                "add measure = \"storage\"",
            ),
        ] {
            let e = file::parse(Path::new("bad.toml"), text).err().unwrap();
            assert_eq!(e.exit_code(), 2, "{text}");
            let m = e.to_string();
            assert!(m.starts_with("bad.toml") && m.contains(says), "{text}: {m}");
            assert_eq!(m.lines().count(), 1, "{m}");
        }
    }

    #[test]
    fn shares_of_the_database_keep_their_place_and_resolve_to_whole_mib() {
        let text = "data=wbcache(readcache(raid10(16,hdd-15k),sas-ssd-2012,size=50%db),size=1g,readahead=on),log=hdd-15k";
        let (_, written) = parse_written(text).unwrap();
        let written = written.unwrap();
        assert!(written.contains(",size=50%db)"), "{written}");
        assert!(!written.contains("16383k"), "{written}");
        // The quick SQLite load: 78.4 MiB → 40 MiB, as the scenario sized it.
        let sized = replace_db_shares(&written, |_, _, p| {
            let mib = (82_208_768.0 * p / 100.0 / (1u64 << 20) as f64)
                .ceil()
                .max(DB_SHARE_MIB_MIN);
            format!("{mib:.0}m")
        })
        .unwrap()
        .unwrap();
        assert!(sized.contains(",size=40m)"), "{sized}");
        for bad in ["size=0%db", "size=150%db", "size=x%db", "hdd-15k%db"] {
            let e = parse_written(&format!("readcache(hdd-15k,sas-ssd-2012,{bad})")).unwrap_err();
            assert!(e.contains("%db"), "{bad}: {e}");
        }
        assert_eq!(
            parse_written("hdd-15k").unwrap().1,
            None,
            "a spec without shares is its own name"
        );
    }
}
