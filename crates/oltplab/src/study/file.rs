//! `oltplab study --file F`: the study file — its format, checked and planned into cells — and
//! the dispatch of a file (or `--resume DIR`) to its measurement. A TOML file names the axes —
//! devices or layouts, engines with their server settings, workloads, terminal counts, pacing —
//! and the scale, repeats and baseline, or an explicit `[[cell]]` list; `measure` says what each
//! cell gets: S1's (`s1.rs`, the default), S2's and S3's (`storage.rs`), S4's (`profiles.rs`) or
//! S5's (`in_memory.rs`). Every finished cell is saved on its own under a name derived from its
//! resolved configuration (`cells.rs`), so `--resume DIR` runs only the cells that are not there
//! yet (docs/studies.md, "Your own study: --file").

use std::ops::Range;
use std::path::{Path, PathBuf};

use oltplab_core::units::format_count;
use oltplab_core::{safety, Error, Result};
use oltplab_devmodel::{parse_spec, Role, Spec};
use oltplab_metrics::schema::now_rfc3339;
use oltplab_workloads::tpcc::schema::TABLES as TPCC_TABLES;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::output;
use oltplab_schema::{CellAxes, StudyHead};

use super::s1::{run_study, Kind};
use super::shipped::{file_name, split_devices};
use super::{secs, Scale, StudyArgs, RESULTS_FILE};

/// The copy of the study file kept in the output directory: `--resume DIR` alone reads it.
pub const STUDY_FILE_COPY: &str = "study.toml";
/// Where each finished cell's result is saved, one JSON file per cell.
pub const CELLS_DIR: &str = "cells";
/// The `scenario` of a study-file study's result.
pub const SCENARIO: &str = "file";

const SCALES: [&str; 5] = ["quick", "default", "s1", "paper", "test"];
const ENGINES: [&str; 3] = ["sqlite", "postgres", "mariadb"];
const PACINGS: [&str; 2] = ["none", "spec"];
const MEASURES: [&str; 5] = ["s1", "storage", "profiles", "in-memory", "cluster"];
/// The workloads a cell runs under S1's measurement.
const WORKLOADS: [&str; 3] = ["tpcc", "brokerage", "orders"];
const REPEAT_MAX: u32 = 20;
const TERMINALS_MAX: u32 = 1000;
const DOCS: &str = "see docs/studies.md, \"Your own study: --file\"";

/// The study file as written. Unknown keys are refused by the parser with their line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StudyFile {
    measure: Option<Spanned<String>>,
    scale: Option<Spanned<String>>,
    repeat: Option<Spanned<u32>>,
    baseline: Option<Spanned<String>>,
    devices: Option<Spanned<Vec<Spanned<Entry>>>>,
    layouts: Option<Spanned<Vec<Spanned<Entry>>>>,
    terminals: Option<Spanned<Vec<Spanned<u32>>>>,
    pacing: Option<Spanned<Vec<Spanned<String>>>>,
    workloads: Option<Spanned<Vec<Spanned<String>>>>,
    nodes: Option<Spanned<u32>>,
    #[serde(default)]
    engines: Vec<Spanned<EngineEntry>>,
    #[serde(default)]
    cell: Vec<Spanned<CellEntry>>,
}

/// `[[engines]]`: an engine and its server settings, named when one engine appears twice.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EngineEntry {
    engine: Spanned<String>,
    name: Option<Spanned<String>>,
    #[serde(default)]
    server_settings: Vec<Spanned<String>>,
}

/// A `devices` or `layouts` entry: a spec, or `{ name = "…", spec = "…" }`, whose short name
/// then stands for the spec in the cell's id, the baseline and the report's labels.
struct Entry {
    name: Option<String>,
    /// Any text: what a storage study calls the configuration.
    title: Option<String>,
    spec: String,
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Entry;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a spec, or a table { name = \"…\", spec = \"…\" }")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Entry, E> {
                Ok(Entry {
                    name: None,
                    title: None,
                    spec: v.to_string(),
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<Entry, A::Error> {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Named {
                    name: String,
                    title: Option<String>,
                    spec: String,
                }
                let n = Named::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Entry {
                    name: Some(n.name),
                    title: n.title,
                    spec: n.spec,
                })
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// A cell's storage as resolved: its spec, and the short name and title the file gave it.
#[derive(Clone)]
struct Storage {
    spec: Spec,
    name: Option<String>,
    title: Option<String>,
    /// The spec's canonical name as written, where it holds what only a storage study's run
    /// resolves (`size=50%db`): the cell's `device`; None: the spec's own name.
    written: Option<String>,
}

/// `[[cell]]`: one cell of an explicit list.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CellEntry {
    device: Option<Spanned<String>>,
    layout: Option<Spanned<String>>,
    /// A short name for its device or layout.
    name: Option<Spanned<String>>,
    /// What a storage study calls it (any text).
    title: Option<Spanned<String>>,
    engine: Option<Spanned<String>>,
    terminals: Option<Spanned<u32>>,
    pacing: Option<Spanned<String>>,
    workload: Option<Spanned<String>>,
}

/// The file's text and path, to name the line of anything wrong in it.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        let at = span.start.min(self.text.len());
        self.text[..at].matches('\n').count() + 1
    }

    /// One sentence: the file, the line, what is wrong there and how to fix it.
    fn error(&self, span: Range<usize>, what: impl std::fmt::Display) -> Error {
        Error::usage(format!(
            "{} line {}: {what}",
            self.path.display(),
            self.line(&span)
        ))
    }

    /// The parser's own error (unknown key, wrong type, bad syntax) with its line and the line's
    /// text, which names the key.
    fn parse_error(&self, e: &toml::de::Error) -> Error {
        let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        let message = message.trim_end_matches('.');
        match e.span() {
            Some(span) => {
                let n = self.line(&span);
                let text = self.text.lines().nth(n - 1).unwrap_or("").trim();
                Error::usage(format!(
                    "{} line {n} (`{text}`): {message}; {DOCS}",
                    self.path.display()
                ))
            }
            None => Error::usage(format!("{}: {message}; {DOCS}", self.path.display())),
        }
    }
}

/// An engine of the study, its database loaded once for all its cells.
#[derive(Clone, Debug)]
pub(super) struct EngineDef {
    pub(super) name: String,
    pub(super) engine: String,
    pub(super) settings: Vec<(String, String)>,
    /// Where each setting stands in the file.
    setting_spans: Vec<Range<usize>>,
}

/// One cell, resolved: its axes, the scale it runs at, and the names of its files.
#[derive(Clone, Debug)]
pub struct CellPlan {
    /// The slug of its axes: names its traces, runs and replays in the output directory.
    pub id: String,
    /// A short hash of its whole resolved configuration (axes, scale, repeats): its result file is
    /// `cells/<id>-<hash>.json`, so a changed scale or setting is a new cell.
    pub hash: String,
    pub axes: CellAxes,
    pub(super) spec: Spec,
    pub(super) scale: Scale,
    pub(super) engine_index: usize,
}

impl CellPlan {
    pub(super) fn result_file(&self) -> String {
        format!("{}-{}.json", self.id, self.hash)
    }
}

/// What a study file measures, each per cell and resumable: S1's and S2/S3's cells are their
/// matrix's, S4's its device sets, S5's its table kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum Measure {
    /// Each cell: device figures, a traced TPC-C run, its replays, α.
    S1,
    /// S2's and S3's: each cell one run of its workload on its storage, the figures those
    /// studies tabulate per configuration (`study/storage.rs`).
    Storage,
    /// S4: the twelve server access profiles over queue depths, random I/O at QD 4 and one
    /// drive's sequential I/O, on each device set; ratios against the first.
    Profiles { sets: Vec<Spec> },
    /// S5: disk and memory tables, update and insert, over the scale's connection counts, on
    /// one engine, on the storage under `--data-dir`.
    InMemory { engine: String },
    /// The cluster study: one MariaDB server, then a Galera cluster of `nodes`, on each device
    /// (`study/cluster.rs`).
    Cluster { devices: Vec<Spec>, nodes: u32 },
}

impl Measure {
    fn name(&self) -> &'static str {
        match self {
            Measure::S1 => "s1",
            Measure::Storage => "storage",
            Measure::Profiles { .. } => "profiles",
            Measure::InMemory { .. } => "in-memory",
            Measure::Cluster { .. } => "cluster",
        }
    }
}

/// A study file, checked and resolved into its cells; nothing has run.
pub struct FileStudy {
    pub path: PathBuf,
    pub measure: Measure,
    pub(super) text: String,
    pub scale: Scale,
    pub repeat: u32,
    /// The baseline device's name (`file_name` of its spec).
    pub baseline: Option<String>,
    pub(super) engines: Vec<EngineDef>,
    pub cells: Vec<CellPlan>,
}

/// Reads and checks a study file: anything unknown or out of range is an error naming its line.
pub fn load(path: &Path) -> Result<FileStudy> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!(
            "cannot read the study file {}: {e}; give an existing TOML file (e.g. studies/s1.toml)",
            path.display()
        ))
    })?;
    parse(path, &text)
}

pub(super) fn parse(path: &Path, text: &str) -> Result<FileStudy> {
    let src = Source { path, text };
    let file: StudyFile = toml::from_str(text).map_err(|e| src.parse_error(&e))?;
    // S1's measurement, or S2's and S3's (`storage`): cells of the same axes.
    let mut storage = false;
    let cluster = file
        .measure
        .as_ref()
        .is_some_and(|m| m.get_ref() == "cluster");
    if let (Some(n), false) = (&file.nodes, cluster) {
        return Err(src.error(
            n.span(),
            "nodes belongs to measure = \"cluster\" (its Galera cluster's size): drop it, or add measure = \"cluster\"",
        ));
    }
    if let Some(m) = &file.measure {
        let measure = one_of(&src, "measure", m, &MEASURES)?;
        storage = measure == "storage";
        if measure == "cluster" {
            return cluster_file(&src, &file);
        }
        if measure != "s1" && !storage {
            return scenario_file(&src, &file, &measure);
        }
    }

    let scale_name = match &file.scale {
        Some(s) => one_of(&src, "scale", s, &SCALES)?,
        None => "default".to_string(),
    };
    let base_scale = Scale::named(&scale_name);
    let repeat = match &file.repeat {
        Some(r) if !(1..=REPEAT_MAX).contains(r.get_ref()) => {
            return Err(src.error(
                r.span(),
                format!(
                    "repeat = {} is out of range: give 1 to {REPEAT_MAX}",
                    r.get_ref()
                ),
            ))
        }
        Some(r) => *r.get_ref(),
        None => 1,
    };

    let engines = engines(&src, &file.engines)?;
    let mut cells = Vec::new();
    if !file.cell.is_empty() {
        // An explicit list: the matrix's axes would be ignored, so they are refused.
        for (key, span) in [
            ("devices", file.devices.as_ref().map(Spanned::span)),
            ("layouts", file.layouts.as_ref().map(Spanned::span)),
            ("terminals", file.terminals.as_ref().map(Spanned::span)),
            ("pacing", file.pacing.as_ref().map(Spanned::span)),
            ("workloads", file.workloads.as_ref().map(Spanned::span)),
        ] {
            if let Some(span) = span {
                return Err(src.error(
                    span,
                    format!("`{key}` is a matrix axis and the file lists its cells with [[cell]]: give {} in each [[cell]] or drop the [[cell]] tables", cell_key(key)),
                ));
            }
        }
        let mut labels = Labels::default();
        for entry in &file.cell {
            let c = entry.get_ref();
            let workload = match &c.workload {
                Some(w) => one_of(&src, "workload", w, &WORKLOADS)?,
                None => "tpcc".to_string(),
            };
            let one = std::slice::from_ref(&workload);
            let (spec, written) = match (&c.device, &c.layout) {
                (Some(d), None) => device(&src, "device", d, one, storage)?,
                (None, Some(l)) => layout(&src, "layout", l, one, storage)?,
                (Some(_), Some(l)) => {
                    return Err(src.error(
                        l.span(),
                        "a [[cell]] gives both device and layout: give one (a layout names its devices itself)",
                    ))
                }
                (None, None) => {
                    return Err(src.error(
                        entry.span(),
                        "a [[cell]] gives neither device nor layout: add device = \"…\" or layout = \"data=…,log=…\"",
                    ))
                }
            };
            let engine_index = match &c.engine {
                None => 0,
                Some(e) => engines
                    .iter()
                    .position(|d| &d.name == e.get_ref())
                    .ok_or_else(|| {
                        src.error(
                            e.span(),
                            format!(
                                "engine = \"{}\" names no [[engines]] entry: give one of {}",
                                e.get_ref(),
                                names(engines.iter().map(|d| d.name.as_str()))
                            ),
                        )
                    })?,
            };
            let pacing = match &c.pacing {
                Some(p) => {
                    let v = one_of(&src, "pacing", p, &PACINGS)?;
                    paced_workload(&src, p.span(), &v, one)?;
                    v
                }
                None => "none".to_string(),
            };
            let terminals = c
                .terminals
                .as_ref()
                .map(|t| terminals(&src, t))
                .transpose()?;
            let name = c
                .name
                .as_ref()
                .map(|n| plain_name(&src, n.get_ref(), n.span()))
                .transpose()?;
            let title = c.title.as_ref().map(|t| t.get_ref().clone());
            let at = Storage {
                spec,
                name,
                title,
                written,
            };
            labels.check(&src, &at, entry.span())?;
            cells.push(plan(
                &engines,
                engine_index,
                &workload,
                at,
                terminals,
                &pacing,
                &base_scale,
                repeat,
            ));
        }
    } else {
        if file.devices.is_none() && file.layouts.is_none() {
            return Err(Error::usage(format!(
                "{} names no devices or layouts: add e.g. devices = [\"hdd-10k\", \"nvme-gen4\"], layouts = [\"data=hdd-10k,log=nvme-gen4\"] or [[cell]] tables; {DOCS}",
                path.display()
            )));
        }
        let workloads = axis(
            &src,
            &file.workloads,
            vec!["tpcc".to_string()],
            "workloads = [] is empty: give some of [\"tpcc\", \"brokerage\", \"orders\"], or drop the key for TPC-C",
            |v| one_of(&src, "workloads", v, &WORKLOADS),
        )?;
        // The storage axis: the devices, then the layouts (each a spec of several devices).
        let mut specs = Vec::new();
        let mut labels = Labels::default();
        if let Some(devices) = &file.devices {
            if devices.get_ref().is_empty() {
                return Err(src.error(
                    devices.span(),
                    "devices = [] is empty: give at least one device spec (see `oltplab devices`), or drop the key",
                ));
            }
            for d in devices.get_ref() {
                let spec = device(&src, "devices", &entry_spec(d), &workloads, storage)?;
                specs.push(entry_storage(&src, &mut labels, spec, d)?);
            }
        }
        if let Some(layouts) = &file.layouts {
            if layouts.get_ref().is_empty() {
                return Err(src.error(
                    layouts.span(),
                    "layouts = [] is empty: give at least one layout, e.g. [\"data=hdd-10k,log=nvme-gen4\"], or drop the key",
                ));
            }
            for l in layouts.get_ref() {
                let spec = layout(&src, "layouts", &entry_spec(l), &workloads, storage)?;
                specs.push(entry_storage(&src, &mut labels, spec, l)?);
            }
        }
        let terminal_counts = axis(
            &src,
            &file.terminals,
            vec![None],
            "terminals = [] is empty: give terminal counts, e.g. [4, 16], or drop the key for the scale's",
            |n| terminals(&src, n).map(Some),
        )?;
        let pacings = axis(
            &src,
            &file.pacing,
            vec!["none".to_string()],
            "pacing = [] is empty: give [\"none\"], [\"spec\"] or both",
            |v| {
                let pacing = one_of(&src, "pacing", v, &PACINGS)?;
                paced_workload(&src, v.span(), &pacing, &workloads).map(|()| pacing)
            },
        )?;
        // Devices innermost: the cells compared against the baseline sit side by side.
        for engine_index in 0..engines.len() {
            for workload in &workloads {
                for pacing in &pacings {
                    for &t in &terminal_counts {
                        for spec in &specs {
                            cells.push(plan(
                                &engines,
                                engine_index,
                                workload,
                                spec.clone(),
                                t,
                                pacing,
                                &base_scale,
                                repeat,
                            ));
                        }
                    }
                }
            }
        }
    }
    for (i, c) in cells.iter().enumerate() {
        if cells[..i].iter().any(|o| o.id == c.id) {
            return Err(Error::usage(format!(
                "{} lists the cell {} twice (same engine, device or layout, terminals and pacing): give each cell once",
                path.display(),
                c.id
            )));
        }
    }
    let baseline = match &file.baseline {
        Some(b) => {
            // As written, or as resolved (`raid10(4,hdd-15k)` is `raid10(4,hdd-15k,stripe=64k)`).
            let name = super::storage::canonical(b.get_ref())
                .map(|s| file_name(&s))
                .unwrap_or_else(|| file_name(b.get_ref()));
            if !cells.iter().any(|c| c.axes.device_name == name) {
                return Err(src.error(
                    b.span(),
                    format!(
                        "baseline = \"{}\" is none of the study's devices or layouts: give one of {}",
                        b.get_ref(),
                        names(unique(cells.iter().map(|c| c.axes.device.as_str())))
                    ),
                ));
            }
            Some(name)
        }
        // As S1: the first emulated device.
        None => cells
            .iter()
            .find(|c| !c.spec.is_host())
            .map(|c| c.axes.device_name.clone()),
    };
    if storage {
        super::storage::check_hottest(path, &cells)?;
    }
    Ok(FileStudy {
        path: path.to_path_buf(),
        measure: if storage {
            Measure::Storage
        } else {
            Measure::S1
        },
        text: text.to_string(),
        scale: base_scale,
        repeat,
        baseline,
        engines,
        cells,
    })
}

/// A file of S4's or S5's measurement (`measure = "profiles"` or `"in-memory"`): the keys that
/// measurement takes, checked as S1's are; every other key is refused, naming its line.
fn scenario_file(src: &Source, file: &StudyFile, measure: &str) -> Result<FileStudy> {
    let profiles = measure == "profiles";
    let mut unused = vec![
        ("layouts", file.layouts.as_ref().map(Spanned::span)),
        ("terminals", file.terminals.as_ref().map(Spanned::span)),
        ("pacing", file.pacing.as_ref().map(Spanned::span)),
        ("repeat", file.repeat.as_ref().map(Spanned::span)),
        ("workloads", file.workloads.as_ref().map(Spanned::span)),
        ("[[cell]]", file.cell.first().map(Spanned::span)),
    ];
    if profiles {
        unused.push(("[[engines]]", file.engines.first().map(Spanned::span)));
    } else {
        unused.push(("devices", file.devices.as_ref().map(Spanned::span)));
        unused.push(("baseline", file.baseline.as_ref().map(Spanned::span)));
    }
    for (key, at) in unused {
        if let Some(at) = at {
            let why = if profiles {
                "S4's measurement takes devices (two or more sets), scale and baseline"
            } else {
                "S5's measurement takes one [[engines]] entry and scale, and runs on the storage under --data-dir"
            };
            return Err(src.error(
                at,
                format!("{key} does not belong to measure = \"{measure}\": {why}; drop it"),
            ));
        }
    }
    let scales: &[&str] = if profiles {
        &["quick", "default", "paper", "test"]
    } else {
        &["quick", "default", "paper"]
    };
    let scale = match &file.scale {
        Some(s) => one_of(src, "scale", s, scales)?,
        None => "default".to_string(),
    };
    let (measure, engines, baseline) = if profiles {
        let Some(devices) = &file.devices else {
            return Err(Error::usage(format!(
                "{} measures S4's profiles but names no devices: add devices = [\"raid5(4,hdd-15k)\", \"raid5(4,sas-ssd-2012)\"]; {DOCS}",
                src.path.display()
            )));
        };
        let mut sets: Vec<Spec> = Vec::new();
        for d in devices.get_ref() {
            if d.get_ref().name.is_some() {
                return Err(src.error(
                    d.span(),
                    "devices: S4's sets are named by their specs (the scenario's result names them so): give the spec alone",
                ));
            }
            let d = &entry_spec(d);
            let (spec, _) = device(src, "devices", d, &[], false)?;
            if spec.is_layout() || spec.is_host() {
                return Err(src.error(
                    d.span(),
                    format!("devices: \"{}\" is not an emulated device set: S4's measurement runs the profiles on one emulated device spec each, e.g. raid5(4,hdd-15k)", d.get_ref()),
                ));
            }
            if sets.iter().any(|s| s.name() == spec.name()) {
                return Err(src.error(
                    d.span(),
                    format!(
                        "devices: \"{}\" is listed twice: give each device set once",
                        d.get_ref()
                    ),
                ));
            }
            sets.push(spec);
        }
        if sets.len() < 2 {
            return Err(src.error(
                devices.span(),
                "devices: S4's measurement compares two or more device sets: add a second, e.g. \"raid5(4,sas-ssd-2012)\"",
            ));
        }
        // The profiles' ratios are against the first set.
        let first = file_name(&sets[0].name());
        if let Some(b) = &file.baseline {
            let named = parse_spec(b.get_ref())
                .map(|s| file_name(&s.name()))
                .unwrap_or_else(|_| file_name(b.get_ref()));
            if named != first {
                return Err(src.error(
                    b.span(),
                    format!("baseline = \"{}\": S4's ratios are against the first device set ({first}): list the baseline first, or drop the key", b.get_ref()),
                ));
            }
        }
        (Measure::Profiles { sets }, Vec::new(), Some(first))
    } else {
        let engines = engines(src, &file.engines)?;
        if file.engines.len() > 1 {
            return Err(src.error(
                file.engines[1].span(),
                "S5's measurement runs on one engine: give one [[engines]] entry (a study file per engine)",
            ));
        }
        // The table kinds differ in what a commit waits for; the engine's own settings are
        // what S5 compares, reported with each run (docs/orders.md).
        if let Some(s) = engines[0].setting_spans.first() {
            return Err(src.error(
                s.clone(),
                "server_settings: S5's measurement runs its engine as shipped and reports its commit setting: drop them",
            ));
        }
        let engine = engines[0].engine.clone();
        (Measure::InMemory { engine }, engines, None)
    };
    let scale = Scale::named(&scale);
    // S4's device sets and S5's table kinds are their cells, each measured and kept on its own.
    let cells = match &measure {
        Measure::Profiles { sets } => super::profiles::plan_cells(sets, &scale)?,
        Measure::InMemory { engine } => super::in_memory::plan_cells(engine, &scale),
        _ => Vec::new(),
    };
    Ok(FileStudy {
        path: src.path.to_path_buf(),
        measure,
        text: src.text.to_string(),
        scale,
        repeat: 1,
        baseline,
        engines,
        cells,
    })
}

/// A file of the cluster study's measurement (`measure = "cluster"`): its devices, the cluster's
/// nodes, the scale and the pacing, checked as S1's are; every other key is refused, naming its
/// line. Its cells are each device's single server, then its cluster.
fn cluster_file(src: &Source, file: &StudyFile) -> Result<FileStudy> {
    for (key, at) in [
        ("layouts", file.layouts.as_ref().map(Spanned::span)),
        ("terminals", file.terminals.as_ref().map(Spanned::span)),
        ("repeat", file.repeat.as_ref().map(Spanned::span)),
        ("workloads", file.workloads.as_ref().map(Spanned::span)),
        ("baseline", file.baseline.as_ref().map(Spanned::span)),
        ("[[engines]]", file.engines.first().map(Spanned::span)),
        ("[[cell]]", file.cell.first().map(Spanned::span)),
    ] {
        if let Some(at) = at {
            return Err(src.error(
                at,
                format!("{key} does not belong to measure = \"cluster\": the cluster study takes devices, nodes, scale and pacing, and runs MariaDB and Galera; drop it"),
            ));
        }
    }
    let scale = match &file.scale {
        Some(s) => one_of(src, "scale", s, &SCALES)?,
        None => "default".to_string(),
    };
    let pacing = match &file.pacing {
        None => super::Pacing::None,
        Some(p) => {
            let [one] = p.get_ref().as_slice() else {
                return Err(src.error(
                    p.span(),
                    "pacing: the cluster study runs one pacing: give one, e.g. pacing = [\"none\"]",
                ));
            };
            let name = one_of(src, "pacing", one, &PACINGS)?;
            super::Pacing::from_name(&name).expect("one of PACINGS")
        }
    };
    let nodes = match &file.nodes {
        Some(n) if !(2..=9).contains(n.get_ref()) => {
            return Err(src.error(
                n.span(),
                format!("nodes = {} is out of range: give 2 to 9", n.get_ref()),
            ))
        }
        Some(n) => *n.get_ref(),
        None => super::cluster::NODES,
    };
    let Some(devices) = &file.devices else {
        return Err(Error::usage(format!(
            "{} measures the cluster study but names no devices: add devices = [\"hdd-10k\", \"sata-ssd-2010\", \"pcie-flash-2012\"]; {DOCS}",
            src.path.display()
        )));
    };
    let mut specs: Vec<Spec> = Vec::new();
    for d in devices.get_ref() {
        if d.get_ref().name.is_some() {
            return Err(src.error(
                d.span(),
                "devices: the cluster study's rows are named by their specs: give the spec alone",
            ));
        }
        let d = &entry_spec(d);
        let (spec, _) = device(src, "devices", d, &[], false)?;
        if spec.is_layout() {
            return Err(src.error(
                d.span(),
                format!("devices: \"{}\" is a layout: the cluster study runs each server and node on one device spec, e.g. hdd-10k", d.get_ref()),
            ));
        }
        if specs
            .iter()
            .any(|s| file_name(&s.name()) == file_name(&spec.name()))
        {
            return Err(src.error(
                d.span(),
                format!(
                    "devices: \"{}\" is listed twice: give each device once",
                    d.get_ref()
                ),
            ));
        }
        specs.push(spec);
    }
    if specs.is_empty() {
        return Err(src.error(
            devices.span(),
            "devices: the cluster study runs on one device at least, e.g. \"hdd-10k\"",
        ));
    }
    let scale = super::cluster::cluster_scale(&scale, pacing, nodes);
    let cells = super::cluster::plan_cells(&specs, nodes, &scale);
    Ok(FileStudy {
        path: src.path.to_path_buf(),
        measure: Measure::Cluster {
            devices: specs,
            nodes,
        },
        text: src.text.to_string(),
        scale,
        repeat: 1,
        baseline: None,
        engines: Vec::new(),
        cells,
    })
}

fn engines(src: &Source, entries: &[Spanned<EngineEntry>]) -> Result<Vec<EngineDef>> {
    if entries.is_empty() {
        return Ok(vec![EngineDef {
            name: "sqlite".into(),
            engine: "sqlite".into(),
            settings: Vec::new(),
            setting_spans: Vec::new(),
        }]);
    }
    let mut out: Vec<EngineDef> = Vec::new();
    for entry in entries {
        let e = entry.get_ref();
        let engine = one_of(src, "engine", &e.engine, &ENGINES)?;
        let name = match &e.name {
            Some(n) => {
                let slug = file_name(n.get_ref());
                if slug.is_empty() || &slug != n.get_ref() {
                    return Err(src.error(
                        n.span(),
                        format!("name = \"{}\" is not a plain name: use letters, digits, '-' and '.', e.g. \"{}\"", n.get_ref(), if slug.is_empty() { "pg-async" } else { &slug }),
                    ));
                }
                slug
            }
            None => engine.clone(),
        };
        if out.iter().any(|o| o.name == name) {
            return Err(src.error(
                entry.span(),
                format!("a second [[engines]] entry is called {name}: give each entry its own name = \"…\""),
            ));
        }
        let mut settings = Vec::new();
        for s in &e.server_settings {
            if engine == "sqlite" {
                return Err(src.error(
                    s.span(),
                    "server_settings belong to postgres and mariadb: SQLite has no server, drop them",
                ));
            }
            settings.push(setting(src, s)?);
        }
        out.push(EngineDef {
            name,
            engine,
            settings,
            setting_spans: e.server_settings.iter().map(Spanned::span).collect(),
        });
    }
    Ok(out)
}

/// Refuses, before anything starts, a server setting the installed server does not know (its own
/// list: `postgres --describe-config`, `mariadbd --verbose --help`), naming its line. `Ok(false)`: a server is not
/// installed, so the settings could not be checked (the run would then stop at its load).
pub(super) fn check_settings(study: &FileStudy) -> Result<bool> {
    let src = Source {
        path: &study.path,
        text: &study.text,
    };
    let mut checked = true;
    for kind in ["postgres", "mariadb"] {
        let entries: Vec<&EngineDef> = study
            .engines
            .iter()
            .filter(|e| e.engine == kind && !e.settings.is_empty())
            .collect();
        if entries.is_empty() {
            continue;
        }
        let known = match oltplab_dbs::server::setting_names(kind) {
            Ok(k) => k,
            Err(Error::Usage(_)) => {
                checked = false;
                continue;
            }
            Err(e) => return Err(e),
        };
        for e in entries {
            for ((key, _), span) in e.settings.iter().zip(&e.setting_spans) {
                if !oltplab_dbs::server::knows_setting(kind, &known, key) {
                    return Err(src.error(
                        span.clone(),
                        format!("server_settings: the installed {kind} has no setting `{key}`: check its spelling against its documentation"),
                    ));
                }
            }
        }
    }
    Ok(checked)
}

/// `KEY=VALUE`, as `--server-setting` takes it.
fn setting(src: &Source, s: &Spanned<String>) -> Result<(String, String)> {
    oltplab_dbs::server::parse_setting(s.get_ref())
        .map_err(|why| src.error(s.span(), format!("server setting {why}")))
}

/// An entry's spec with the entry's place in the file.
fn entry_spec(e: &Spanned<Entry>) -> Spanned<String> {
    Spanned::new(e.span(), e.get_ref().spec.clone())
}

/// A matrix entry's storage: its spec and its checked name.
fn entry_storage(
    src: &Source,
    labels: &mut Labels,
    (spec, written): (Spec, Option<String>),
    e: &Spanned<Entry>,
) -> Result<Storage> {
    let name = e
        .get_ref()
        .name
        .as_deref()
        .map(|n| plain_name(src, n, e.span()))
        .transpose()?;
    let storage = Storage {
        spec,
        name,
        title: e.get_ref().title.clone(),
        written,
    };
    labels.check(src, &storage, e.span())?;
    Ok(storage)
}

/// A name that is also a file name: letters, digits, '-' and '.'.
fn plain_name(src: &Source, name: &str, span: Range<usize>) -> Result<String> {
    let slug = file_name(name);
    if slug.is_empty() || slug != name {
        return Err(src.error(
            span,
            format!(
                "name = \"{name}\" is not a plain name: use letters, digits, '-', '_' and '.', e.g. \"{}\"",
                if slug.is_empty() { "log-on-flash" } else { &slug }
            ),
        ));
    }
    Ok(slug)
}

/// The storage names seen so far, each with its spec: one name stands for one spec.
#[derive(Default)]
struct Labels(Vec<(String, String)>);

impl Labels {
    fn check(&mut self, src: &Source, s: &Storage, span: Range<usize>) -> Result<()> {
        let spec = s.written.clone().unwrap_or_else(|| s.spec.name());
        let name = s.name.clone().unwrap_or_else(|| file_name(&spec));
        match self.0.iter().find(|(n, _)| *n == name) {
            Some((_, other)) if *other != spec => Err(src.error(
                span,
                format!("name \"{name}\" stands for two specs ({other} and {spec}): give each its own name"),
            )),
            Some(_) => Ok(()),
            None => {
                self.0.push((name, spec));
                Ok(())
            }
        }
    }
}

/// A matrix axis's values, each checked by `each`; `default` without the key, and an empty list
/// refused with `empty`.
fn axis<V, T>(
    src: &Source,
    list: &Option<Spanned<Vec<Spanned<V>>>>,
    default: Vec<T>,
    empty: &str,
    each: impl Fn(&Spanned<V>) -> Result<T>,
) -> Result<Vec<T>> {
    match list {
        None => Ok(default),
        Some(l) if l.get_ref().is_empty() => Err(src.error(l.span(), empty)),
        Some(l) => l.get_ref().iter().map(each).collect(),
    }
}

/// What a workload is called in a sentence.
fn workload_text(workload: &str) -> &'static str {
    match workload {
        super::database::BROKERAGE => "the brokerage workload",
        super::database::ORDERS => "the order-entry workload",
        _ => "TPC-C",
    }
}

/// TPC-C's keying and think times belong to TPC-C: the other workloads have none.
fn paced_workload(
    src: &Source,
    span: Range<usize>,
    pacing: &str,
    workloads: &[String],
) -> Result<()> {
    if let Some(w) = workloads.iter().find(|w| *w != "tpcc") {
        if pacing != "none" {
            return Err(src.error(
                span,
                format!("pacing \"{pacing}\" is TPC-C's keying and think times, which {} has not: drop it, or give the TPC-C cells their own [[cell]] tables", workload_text(w)),
            ));
        }
    }
    Ok(())
}

/// The tables of a workload's schema, which a layout may place.
fn workload_tables(workload: &str) -> &'static [&'static str] {
    match workload {
        super::database::BROKERAGE => &oltplab_workloads::brokerage::schema::TABLES,
        super::database::ORDERS => &oltplab_workloads::orders::TABLES,
        _ => &TPCC_TABLES,
    }
}

/// A device spec; with `storage` (S2's and S3's measurement), sizes written as a share of the
/// loaded database too (`size=50%db`: the spec's canonical name as written comes beside it),
/// and never the host.
fn device(
    src: &Source,
    key: &str,
    d: &Spanned<String>,
    workloads: &[String],
    storage: bool,
) -> Result<(Spec, Option<String>)> {
    let text = d.get_ref().trim();
    // `ROLE=SPEC` before any bracket: a layout, whose commas separate its roles.
    if text
        .split(['(', '{'])
        .next()
        .is_some_and(|head| head.contains('='))
    {
        return layout(src, key, d, workloads, storage);
    }
    // One spec per entry: a comma at the top level is two devices in one string.
    if split_devices(text).map(|v| v.len()).unwrap_or(0) != 1 {
        return Err(src.error(
            d.span(),
            format!("{key}: \"{text}\" is not one device spec: give each device as its own string"),
        ));
    }
    if !storage {
        not_storage(src, key, d)?;
        return parse_spec(text)
            .map(|s| (s, None))
            .map_err(|e| src.error(d.span(), format!("{key}: {e}")));
    }
    let parsed = super::storage::parse_written(text)
        .map_err(|e| src.error(d.span(), format!("{key}: {e}")))?;
    if parsed.0.is_host() {
        return Err(src.error(
            d.span(),
            format!("{key}: host is this machine's own storage, which S2's and S3's measurement (measure = \"storage\") does not run on: give emulated devices or layouts"),
        ));
    }
    Ok(parsed)
}

/// A layout: roles on devices (`data=…,log=…,temp=…,table:NAME=…`, docs/layouts.md), or a plain
/// emulated device (the layout of one device, so a file can list "all on one device" beside
/// placements). A placed table must be one of the cells' workloads' (with `storage`, also
/// `table:hottest`, which the run resolves; sizes may be shares of the loaded database).
fn layout(
    src: &Source,
    key: &str,
    l: &Spanned<String>,
    workloads: &[String],
    storage: bool,
) -> Result<(Spec, Option<String>)> {
    let text = l.get_ref().trim();
    if !storage {
        not_storage(src, key, l)?;
    }
    let (spec, written) = if storage {
        super::storage::parse_written(text)
    } else {
        parse_spec(text)
            .map(|s| (s, None))
            .map_err(|e| e.to_string())
    }
    .map_err(|e| src.error(l.span(), format!("{key}: {e}")))?;
    if spec.is_host() {
        return Err(src.error(
            l.span(),
            format!("{key}: \"{text}\" is this machine's own storage, which cannot be placed by role: put host in devices, or give a layout of emulated devices such as \"data=hdd-10k,log=nvme-gen4\""),
        ));
    }
    for (role, _) in spec.roles() {
        let Role::Table(t) = role else { continue };
        if storage && t == super::storage::HOTTEST {
            continue;
        }
        for w in workloads {
            let tables = workload_tables(w);
            if !tables.contains(&t.as_str()) {
                return Err(src.error(
                    l.span(),
                    format!(
                        "{key}: \"{text}\" places table:{t}, which {} has not: give one of {}",
                        workload_text(w),
                        names(tables.iter().copied())
                    ),
                ));
            }
        }
    }
    Ok((spec, written))
}

/// What only a storage study resolves (a share of the database, the hottest table) refused
/// elsewhere with the reason.
fn not_storage(src: &Source, key: &str, d: &Spanned<String>) -> Result<()> {
    let text = d.get_ref();
    let what = if text.contains("%db") {
        "a size as a share of the loaded database (size=…%db)"
    } else if text
        .to_ascii_lowercase()
        .contains(&format!("table:{}=", super::storage::HOTTEST))
    {
        "table:hottest"
    } else {
        return Ok(());
    };
    Err(src.error(
        d.span(),
        format!("{key}: \"{text}\" has {what}, which only S2's and S3's measurement resolves: add measure = \"storage\", or give a size or a table"),
    ))
}

/// The `[[cell]]` key of a matrix axis.
fn cell_key(axis: &str) -> &str {
    match axis {
        "devices" => "device",
        "layouts" => "layout",
        other => other,
    }
}

fn terminals(src: &Source, t: &Spanned<u32>) -> Result<u32> {
    let n = *t.get_ref();
    if !(1..=TERMINALS_MAX).contains(&n) {
        return Err(src.error(
            t.span(),
            format!("terminals {n} is out of range: give 1 to {TERMINALS_MAX}"),
        ));
    }
    Ok(n)
}

fn one_of(src: &Source, key: &str, v: &Spanned<String>, allowed: &[&str]) -> Result<String> {
    let value = v.get_ref();
    // `test` is the hidden scale of oltplab's own tests: accepted, not offered.
    let shown: Vec<&str> = allowed.iter().copied().filter(|a| *a != "test").collect();
    if allowed.contains(&value.as_str()) {
        Ok(value.clone())
    } else {
        Err(src.error(
            v.span(),
            format!(
                "{key} = \"{value}\" is not known: give one of {}",
                names(shown.into_iter())
            ),
        ))
    }
}

fn names<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn unique<'a>(items: impl Iterator<Item = &'a str>) -> impl Iterator<Item = &'a str> {
    let mut seen: Vec<&str> = Vec::new();
    items.filter(move |i| {
        let new = !seen.contains(i);
        seen.push(i);
        new
    })
}

/// A cell's scale: the file's, paced, with its terminal count.
#[allow(clippy::too_many_arguments)]
fn plan(
    engines: &[EngineDef],
    engine_index: usize,
    workload: &str,
    storage: Storage,
    terminals: Option<u32>,
    pacing: &str,
    base: &Scale,
    repeat: u32,
) -> CellPlan {
    let engine = &engines[engine_index];
    let device = storage
        .written
        .clone()
        .unwrap_or_else(|| storage.spec.name());
    // The file's pacings were checked against PACINGS when it was read.
    let mut scale = base
        .clone()
        .paced(super::Pacing::from_name(pacing).unwrap_or(super::Pacing::None));
    if let Some(t) = terminals {
        scale.terminals = t;
    }
    let axes = CellAxes {
        engine: engine.engine.clone(),
        engine_name: engine.name.clone(),
        server_settings: engine
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect(),
        device: device.clone(),
        device_name: storage.name.clone().unwrap_or_else(|| file_name(&device)),
        label: storage.name,
        title: storage.title,
        workload: workload.to_string(),
        terminals: scale.terminals,
        pacing: pacing.to_string(),
    };
    // TPC-C's cells keep the ids they had before workloads were an axis.
    let workload_part = match workload {
        "tpcc" => String::new(),
        w => format!("_{w}"),
    };
    let mut id = format!(
        "{}{workload_part}_{}_t{}",
        axes.engine_name, axes.device_name, axes.terminals
    );
    if pacing != "none" {
        id.push_str(&format!("_{pacing}"));
    }
    #[derive(Serialize)]
    struct Key<'a> {
        axes: &'a CellAxes,
        scale: &'a Scale,
        repeat: u32,
    }
    let key = serde_json::to_string(&Key {
        axes: &axes,
        scale: &scale,
        repeat,
    })
    .expect("serialises");
    CellPlan {
        id,
        hash: format!("{:08x}", fnv1a(key.as_bytes()) as u32),
        axes,
        spec: storage.spec,
        scale,
        engine_index,
    }
}

/// FNV-1a, 64 bits: stable across builds and platforms, unlike the standard library's hasher.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(super) fn duration(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.0} s"),
        s if s < 7200.0 => format!("{:.0} min", s / 60.0),
        s => format!("{:.1} h", s / 3600.0),
    }
}

/// The `summary.scenario` of the study in `dir` (its `results.json`, written before any cell
/// runs).
pub(super) fn scenario_of_dir(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(RESULTS_FILE))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| StudyHead::of(&v["summary"]).scenario)
}

pub fn run(args: &StudyArgs) -> Result<()> {
    let path = match (&args.file, &args.resume) {
        (Some(f), _) => f.clone(),
        (None, Some(dir)) => dir.join(STUDY_FILE_COPY),
        (None, None) => unreachable!("study::run dispatches here only with --file or --resume"),
    };
    let kind = match &args.resume {
        Some(dir) => {
            if !dir.join(RESULTS_FILE).is_file() && !dir.join(STUDY_FILE_COPY).is_file() {
                return Err(Error::usage(format!(
                    "--resume {} holds no study-file study (no {RESULTS_FILE} or {STUDY_FILE_COPY}): give the output directory of an `oltplab study` or `oltplab study --file` run",
                    dir.display()
                )));
            }
            Kind::of_dir(dir)
        }
        None => Kind::File,
    };
    let study = load(&path)?;
    // A directory's result is continued by a file of the same measurement only.
    let dir_scenario = args.resume.as_deref().and_then(scenario_of_dir);
    let storage_dir = dir_scenario
        .as_deref()
        .and_then(super::storage::Named::of_scenario);
    let mismatch = match (&study.measure, &storage_dir, &kind) {
        (Measure::S1, Some(named), _) => Some((named.describe(), "S1's (measure = \"s1\")")),
        (Measure::Storage, None, Kind::S1) => Some((
            "an `oltplab study` (S1) run".to_string(),
            "S2's and S3's (measure = \"storage\")",
        )),
        (Measure::Storage, None, Kind::File) if dir_scenario.as_deref() == Some(SCENARIO) => {
            Some((
                "a study of S1's measurement".to_string(),
                "S2's and S3's (measure = \"storage\")",
            ))
        }
        _ => None,
    };
    if let (Some((theirs, yours)), Some(dir)) = (mismatch, &args.resume) {
        return Err(Error::usage(format!(
            "--resume {}: that directory holds {theirs} and {} measures {yours}: resume it with the file it ran (drop --file), or give this file its own --out DIR",
            dir.display(),
            study.path.display()
        )));
    }
    // S4's and S5's directories are resumed by files of their measurement only, and those
    // files resume no other directory.
    let own = |scenario: &str| match scenario {
        "profiles" | "in-memory" | "cluster" => Some(scenario.to_string()),
        _ => None,
    };
    let mine = own(study.measure.name());
    let theirs = dir_scenario.as_deref().and_then(own);
    let mismatch = dir_scenario.is_some() && (mine.is_some() || theirs.is_some()) && mine != theirs;
    if let (true, Some(dir)) = (mismatch, &args.resume) {
        let theirs = match theirs {
            Some(m) => format!("a study of measure = \"{m}\""),
            None => "a study of another measurement".to_string(),
        };
        return Err(Error::usage(format!(
            "--resume {}: that directory holds {theirs} and {} is a file of measure = \"{}\": resume it with the file it ran (drop --file), or give this file its own --out DIR",
            dir.display(),
            study.path.display(),
            study.measure.name()
        )));
    }
    match &study.measure {
        Measure::Storage => {
            let named = storage_dir.unwrap_or(super::storage::Named::File);
            return super::storage::run(&study, args, named, None);
        }
        Measure::Profiles { .. } => return super::profiles::run(&study, args, None),
        Measure::InMemory { .. } => return super::in_memory::run(&study, args, None),
        Measure::Cluster { .. } => return super::cluster::run(&study, args, None),
        Measure::S1 => {}
    }
    run_study(&study, args, kind, None)
}

/// `--dry-run` of S4's, S5's or the cluster study's measurement: what runs, in order, and an
/// estimate where the scale sets the time; `done` marks the cells a `--resume DIR` keeps.
pub(super) fn print_scenario_plan(study: &FileStudy, done: &[bool]) {
    match &study.measure {
        Measure::Profiles { sets } => {
            let scale = super::profiles::Scale::named(&study.scale.name)
                .expect("the file's scale was checked against the profiles' scales");
            let qds =
                crate::device_command::config::parse_sweep(scale.qd_sweep).unwrap_or_default();
            // Each point also spends up to a quarter of a second beyond its ramp and runtime
            // (docs/studies.md, S4).
            let point_s = scale.ramp_s + scale.runtime_s + 0.25;
            output::say!(
                "{}: S4's measurement (measure = \"profiles\") on {} device sets at scale {} ({} profiles at QD {}, {} s + {} s warm-up per point), baseline {}",
                study.path.display(),
                sets.len(),
                scale.name,
                super::profiles::S4_PROFILES.len(),
                qds.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
                scale.runtime_s,
                scale.ramp_s,
                study.baseline.as_deref().unwrap_or("none")
            );
            let mut drives: Vec<String> = Vec::new();
            let mut total_s = 0.0;
            for (i, set) in sets.iter().enumerate() {
                let drive = super::profiles::drive_of(set).name();
                // A drive is measured once, for the first set that has it.
                let drive_points = if drives.contains(&drive) { 0 } else { 4 };
                drives.push(drive.clone());
                let points = super::profiles::S4_PROFILES.len() * qds.len() + 4 + drive_points;
                let finished = done.get(i).copied().unwrap_or(false);
                let est = if finished {
                    0.0
                } else {
                    points as f64 * point_s
                };
                total_s += est;
                output::say!(
                    "{:>3}. {}  {} points (profiles, random at QD 4{}{})  {}",
                    i + 1,
                    file_name(&set.name()),
                    points,
                    if drive_points > 0 { ", drive " } else { "" },
                    if drive_points > 0 { drive.as_str() } else { "" },
                    if finished {
                        "finished earlier, kept".to_string()
                    } else {
                        format!("~{}", duration(est))
                    }
                );
            }
            output::say!(
                "estimate: ~{} for the {} sets; nothing was run",
                duration(total_s),
                sets.len()
            );
        }
        Measure::InMemory { engine } => {
            let scale = super::in_memory::Scale::named(&study.scale.name);
            let connections = scale
                .connections
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let work = match scale.tx_per_point {
                Some(n) => format!(
                    "{} transactions per connection count",
                    format_count(n as f64)
                ),
                None => format!(
                    "{} transactions per connection",
                    format_count(scale.tx_per_connection as f64)
                ),
            };
            output::say!(
                "{}: S5's measurement (measure = \"in-memory\") on {engine} at scale {}: connections {connections}, {work}",
                study.path.display(),
                scale.name
            );
            let mut i = 0;
            // Each table kind is a cell: its load and both its sweeps, kept or run together.
            for (cell, tables) in ["disk", "memory"].into_iter().enumerate() {
                let finished = done.get(cell).copied().unwrap_or(false);
                for mode in ["update", "insert"] {
                    i += 1;
                    output::say!(
                        "{i:>3}. {tables}-{mode}  {tables} tables, {mode}, {} connection counts{}{}",
                        scale.connections.len(),
                        if mode == "update" {
                            ", after its load"
                        } else {
                            ""
                        },
                        if finished {
                            "  finished earlier, kept"
                        } else {
                            ""
                        }
                    );
                }
            }
            output::say!(
                "estimate: none from the scale: each point is a fixed amount of work, and its time is what S5 measures; nothing was run"
            );
        }
        Measure::Cluster { devices, nodes } => {
            let scale = &study.scale;
            let run_s = scale.warmup_s + scale.duration_s;
            output::say!(
                "{}: the cluster study (measure = \"cluster\") on {} device{} at scale {}: one MariaDB server, then {nodes} Galera nodes, on each; {} warehouse{}, {} terminals, {} warm-up + {} measured per run",
                study.path.display(),
                devices.len(),
                if devices.len() == 1 { "" } else { "s" },
                scale.name,
                scale.warehouses,
                if scale.warehouses == 1 { "" } else { "s" },
                scale.terminals,
                secs(scale.warmup_s),
                secs(scale.duration_s)
            );
            let mut total_s = 0.0;
            for (i, cell) in study.cells.iter().enumerate() {
                let finished = done.get(i).copied().unwrap_or(false);
                if !finished {
                    total_s += run_s;
                }
                output::say!(
                    "{:>3}. {}  {}  {}",
                    i + 1,
                    cell.id,
                    if i % 2 == 0 {
                        "one MariaDB server".to_string()
                    } else {
                        format!("{nodes} Galera nodes, each")
                    },
                    if finished {
                        "finished earlier, kept".to_string()
                    } else {
                        format!("~{}", duration(run_s))
                    }
                );
            }
            output::say!(
                "estimate: ~{} of runs, plus each system's load and each run's start; nothing was run",
                duration(total_s)
            );
        }
        Measure::S1 | Measure::Storage => unreachable!("S1's and storage plans are print_plan"),
    }
}

/// A cell stopped by Ctrl-C left its partial traces (`<id>.trace`, `<id>-r<n>.trace`); its rerun
/// writes them anew, and a trace is never overwritten, so they go first — only oltplab's traces.
pub(super) fn remove_stopped_traces(out: &Path, id: &str, repeat: u32) -> Result<()> {
    let names = std::iter::once(format!("{id}.trace"))
        .chain((2..=repeat).map(|r| format!("{id}-r{r}.trace")));
    for name in names {
        let path = out.join(name);
        if path.is_file() {
            oltplab_trace::writer::refuse_foreign(&path)?;
            output::note!("  removing {}, left by the stopped run", path.display());
            std::fs::remove_file(&path).map_err(|e| safety::io_usage(&path, "remove", &e))?;
        }
    }
    Ok(())
}

pub(super) fn describe_engine(axes: &CellAxes) -> String {
    let mut text = axes.engine_name.clone();
    if !axes.server_settings.is_empty() {
        text.push_str(&format!(" [{}]", axes.server_settings.join(" ")));
    }
    if axes.workload != "tpcc" {
        text.push_str(&format!(", {}", axes.workload));
    }
    text
}

/// What a workload's load holds at a scale, e.g. `TPC-C, 1 warehouse`.
pub(super) fn load_text(workload: &str, scale: &Scale) -> String {
    match workload {
        super::database::BROKERAGE => format!(
            "brokerage, {} customers and {} trading days",
            format_count(super::database::BROKERAGE_CUSTOMERS as f64),
            super::database::brokerage_days(scale)
        ),
        super::database::ORDERS => {
            let w = super::database::orders_work(scale).load;
            format!(
                "order entry, {} customers, {} products and {} orders",
                format_count(w.customers as f64),
                format_count(w.products as f64),
                format_count(w.orders as f64)
            )
        }
        _ => format!(
            "TPC-C, {} warehouse{}",
            scale.warehouses,
            if scale.warehouses == 1 { "" } else { "s" }
        ),
    }
}

/// `--dry-run`: the cells in order, each with its estimate, and the total.
/// `done`: each cell finished (and kept) or not; `estimates`: each cell's seconds.
pub(super) fn print_plan(study: &FileStudy, done: &[bool], estimates: &[f64]) {
    output::say!(
        "{}: {} cells at scale {} ({} warehouse{}, {} warm-up + {} measured per run, {} repetition{}), baseline {}",
        study.path.display(),
        study.cells.len(),
        study.scale.name,
        study.scale.warehouses,
        if study.scale.warehouses == 1 { "" } else { "s" },
        secs(study.scale.warmup_s),
        secs(study.scale.duration_s),
        study.repeat,
        if study.repeat == 1 { "" } else { "s" },
        study.baseline.as_deref().unwrap_or("none")
    );
    let width = |f: &dyn Fn(&CellPlan) -> String| {
        study
            .cells
            .iter()
            .map(|c| f(c).chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w_id, w_engine, w_device) = (
        width(&|c| c.id.clone()),
        width(&|c| describe_engine(&c.axes)),
        width(&|c| c.axes.device.clone()),
    );
    for (i, ((c, d), est)) in study.cells.iter().zip(done).zip(estimates).enumerate() {
        let state = if *d {
            "finished, kept".to_string()
        } else {
            format!("~{}", duration(*est))
        };
        output::say!(
            "{:>3}. {:<w_id$}  {:<w_engine$}  {:<w_device$}  {:>4} terminals  pacing {:<5} {}",
            i + 1,
            c.id,
            describe_engine(&c.axes),
            c.axes.device,
            c.axes.terminals,
            c.axes.pacing,
            state
        );
    }
    // Each engine with a cell to run loads each of its cells' workloads once.
    let mut loads = String::new();
    for workload in WORKLOADS {
        let to_load: Vec<&str> = study
            .engines
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                study
                    .cells
                    .iter()
                    .zip(done)
                    .any(|(c, d)| c.engine_index == *i && c.axes.workload == workload && !*d)
            })
            .map(|(_, e)| e.name.as_str())
            .collect();
        if !to_load.is_empty() {
            // TPC-C's reads as it did before workloads were an axis.
            loads.push_str(&match workload {
                "tpcc" => format!(
                    ", plus a TPC-C load of {} warehouse{} for {}",
                    study.scale.warehouses,
                    if study.scale.warehouses == 1 { "" } else { "s" },
                    to_load.join(", ")
                ),
                w => format!(
                    ", plus a load ({}) for {}",
                    load_text(w, &study.scale),
                    to_load.join(", ")
                ),
            });
        }
    }
    output::say!(
        "estimate: ~{} for the {} cells to run{loads}; nothing was run",
        duration(estimates.iter().sum()),
        done.iter().filter(|d| !**d).count()
    );
}

/// Where a study run writes: its output directory (new, or the one resumed), the cells' files
/// in it and the copy of the study file, with the `--json` file and the data directory checked
/// as oltplab's to write.
pub(super) struct RunDirs {
    pub started_at: String,
    pub out: PathBuf,
    pub cells_dir: PathBuf,
    pub copy: PathBuf,
}

/// Keeps the file as run at `copy`, so that `--resume DIR` alone runs the same study; not over
/// itself when resumed from it (`oltplab study` names a file it has in memory only).
pub(super) fn keep_study_file(copy: &Path, study: &FileStudy) -> Result<()> {
    let same = matches!(
        (std::fs::canonicalize(copy), std::fs::canonicalize(&study.path)),
        (Ok(a), Ok(b)) if a == b
    );
    if !same {
        std::fs::write(copy, &study.text).map_err(|e| safety::io_usage(copy, "write", &e))?;
    }
    Ok(())
}

/// How a study run began, for the line that says what runs and where.
pub(super) enum Begun<'a> {
    /// A scenario's shipped file with the options applied.
    Built(&'a super::shipped::ScenarioFile),
    /// A scenario's output directory resumed: how the scenario is named ("the S4 study").
    Resumed(&'a str),
    /// The user's study file, of this measurement ("S4's measurement"); None: the caller says
    /// it in its own words.
    File(Option<&'a str>),
}

impl RunDirs {
    /// Says once what runs and where: `kept` of the study's `count` cells (named `cells`,
    /// e.g. "device sets") finished in an earlier run.
    pub fn announce(&self, begun: Begun, study: &Path, kept: usize, count: usize, cells: &str) {
        let out = self.out.display();
        match begun {
            Begun::Built(file) => file.announce(&self.copy, &self.out),
            Begun::Resumed(name) => output::note!(
                "(resuming {name} in {out}: {}, the file it ran; {kept} of {count} {cells} finished earlier)",
                study.display()
            ),
            Begun::File(Some(measurement)) => output::note!(
                "oltplab study --file {}: {count} {cells} of {measurement} ({kept} finished earlier, {} to run); output {out}",
                study.display(),
                count - kept
            ),
            Begun::File(None) => {}
        }
    }

    pub fn prepare(args: &StudyArgs) -> Result<RunDirs> {
        if let Some(json) = &args.json {
            output::check_json_path(json, args.force)?;
        }
        let started_at = now_rfc3339();
        let out = match &args.resume {
            Some(dir) => {
                safety::ensure_own_dir(dir, args.force)?;
                dir.clone()
            }
            None => output::prepare_out_dir(args.out.as_deref(), "study", &started_at, args.force)?,
        };
        safety::ensure_own_dir(&args.data_dir, args.force)?;
        let cells_dir = out.join(CELLS_DIR);
        safety::ensure_own_dir(&cells_dir, args.force)?;
        let copy = out.join(STUDY_FILE_COPY);
        Ok(RunDirs {
            started_at,
            out,
            cells_dir,
            copy,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::s1::{estimates_s, probed_device};
    use super::*;

    fn parse_text(text: &str) -> Result<FileStudy> {
        parse(Path::new("my.toml"), text)
    }

    #[test]
    fn a_matrix_is_the_product_of_its_axes_devices_innermost() {
        let s = parse_text(
            "scale = \"test\"\ndevices = [\"hdd-10k\", \"nvme-gen4\"]\nterminals = [1, 2]\n[[engines]]\nengine = \"sqlite\"\n",
        )
        .unwrap();
        let ids: Vec<&str> = s.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "sqlite_hdd-10k_t1",
                "sqlite_nvme-gen4_t1",
                "sqlite_hdd-10k_t2",
                "sqlite_nvme-gen4_t2"
            ]
        );
        assert_eq!(s.baseline.as_deref(), Some("hdd-10k"));
        assert_eq!(s.cells[2].scale.terminals, 2);
    }

    #[test]
    fn layouts_are_the_storage_axis_after_the_devices() {
        let s = parse_text(
            "scale = \"test\"\ndevices = [\"hdd-10k\"]\nlayouts = [\n  \"data=hdd-10k,log=nvme-gen4\",\n  \"data=hdd-10k,table:stock=nvme-gen4\",\n  \"nvme-gen4\",\n]\nterminals = [1, 2]\nbaseline = \"data=hdd-10k,log=nvme-gen4\"\n",
        )
        .unwrap();
        let ids: Vec<&str> = s.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids[..4],
            [
                "sqlite_hdd-10k_t1",
                "sqlite_data_hdd-10k_log_nvme-gen4_t1",
                "sqlite_data_hdd-10k_table_stock_nvme-gen4_t1",
                "sqlite_nvme-gen4_t1",
            ]
        );
        assert_eq!(s.cells.len(), 8);
        assert_eq!(s.baseline.as_deref(), Some("data_hdd-10k_log_nvme-gen4"));
        assert!(s.cells[1].spec.is_layout());
        // A layout's device figures are its data device's, measured once with the plain device's.
        assert_eq!(probed_device(&s.cells[1].spec).name(), "hdd-10k");
        let est = estimates_s(&s, &vec![None; s.cells.len()]);
        assert!(est[0] > est[1] && est[3] > est[1], "{est:?}");
        // Layouts change the cell's hash: a different placement is a different cell.
        assert_ne!(s.cells[1].hash, s.cells[2].hash);
    }

    #[test]
    fn a_list_of_cells_takes_a_device_or_a_layout() {
        let s = parse_text(
            "scale = \"test\"\n[[cell]]\ndevice = \"hdd-10k\"\n[[cell]]\nlayout = \"data=hdd-10k,log=nvme-gen4,temp=nvme-gen4\"\nterminals = 3\n",
        )
        .unwrap();
        assert_eq!(s.cells.len(), 2);
        assert!(s.cells[1].spec.is_layout());
        assert_eq!(s.cells[1].scale.terminals, 3);
        // A layout given among the devices is a layout too, checked as one.
        let s = parse_text("devices = [\"hdd-10k\", \"data=hdd-10k,log=nvme-gen4\"]\n").unwrap();
        assert!(s.cells[1].spec.is_layout());
        let e = parse_text("devices = [\"data=hdd-10k,table:nope=nvme-gen4\"]\n")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("table:nope") && e.contains("line 1"), "{e}");
    }

    /// A named device or layout: the name is the cell's id part, its label and what the
    /// baseline names; its spec is unchanged, and a spec used again keeps the name.
    #[test]
    fn a_short_name_stands_for_its_layout() {
        let s = parse_text(
            "scale = \"test\"\nlayouts = [\n  { name = \"log-flash\", spec = \"data=hdd-10k,log=nvme-gen4\" },\n  \"data=hdd-10k,table:stock=nvme-gen4\",\n]\nbaseline = \"log-flash\"\n",
        )
        .unwrap();
        assert_eq!(s.cells[0].id, "sqlite_log-flash_t2");
        assert_eq!(s.cells[0].axes.label.as_deref(), Some("log-flash"));
        assert_eq!(s.cells[0].axes.device, "data=hdd-10k,log=nvme-gen4");
        assert_eq!(s.cells[1].axes.label, None);
        assert_eq!(s.baseline.as_deref(), Some("log-flash"));
        // Unnamed cells keep the id and hash they had before names existed.
        let plain =
            parse_text("scale = \"test\"\nlayouts = [\"data=hdd-10k,table:stock=nvme-gen4\"]\n")
                .unwrap();
        assert_eq!(plain.cells[0].result_file(), s.cells[1].result_file());
        let s = parse_text(
            "scale = \"test\"\n[[cell]]\nlayout = \"data=hdd-10k,log=nvme-gen4\"\nname = \"log-flash\"\n[[cell]]\nlayout = \"data=hdd-10k,log=nvme-gen4\"\nname = \"log-flash\"\nterminals = 4\n",
        )
        .unwrap();
        assert_eq!(s.cells[1].id, "sqlite_log-flash_t4");
    }

    /// Workloads are an axis between the engines and the pacing; TPC-C's cells keep their ids
    /// and hashes, a brokerage cell names its workload, and a layout may place the brokerage's
    /// tables.
    #[test]
    fn workloads_are_an_axis_and_tpcc_cells_keep_their_ids() {
        let s = parse_text(
            "scale = \"test\"\ndevices = [\"hdd-10k\", \"nvme-gen4\"]\nworkloads = [\"tpcc\", \"brokerage\"]\n",
        )
        .unwrap();
        let ids: Vec<&str> = s.cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "sqlite_hdd-10k_t2",
                "sqlite_nvme-gen4_t2",
                "sqlite_brokerage_hdd-10k_t2",
                "sqlite_brokerage_nvme-gen4_t2"
            ]
        );
        assert_eq!(s.cells[2].axes.workload, "brokerage");
        let tpcc = parse_text("scale = \"test\"\ndevices = [\"hdd-10k\"]\n").unwrap();
        assert_eq!(tpcc.cells[0].result_file(), s.cells[0].result_file());
        let s = parse_text(
            "workloads = [\"brokerage\"]\nlayouts = [\"data=hdd-10k,table:trade=nvme-gen4\"]\n",
        )
        .unwrap();
        assert!(s.cells[0].spec.is_layout());
        // Order entry: its cells name it, and a layout may place its tables.
        let s = parse_text(
            "scale = \"test\"\nlayouts = [\"data=hdd-10k,table:oe_order_lines=nvme-gen4\"]\n[[cell]]\nlayout = \"nvme-gen4\"\nworkload = \"orders\"\n",
        );
        assert!(s.is_err(), "layouts beside [[cell]]");
        let s = parse_text(
            "scale = \"test\"\nworkloads = [\"orders\"]\nlayouts = [\"data=hdd-10k,table:oe_order_lines=nvme-gen4\"]\n",
        )
        .unwrap();
        assert_eq!(s.cells[0].axes.workload, "orders");
        assert!(
            s.cells[0].id.starts_with("sqlite_orders_"),
            "{}",
            s.cells[0].id
        );
        // Repeated: every workload's cells.
        let s = parse_text(
            "repeat = 3\ndevices = [\"hdd-10k\"]\nworkloads = [\"brokerage\", \"orders\"]\n",
        )
        .unwrap();
        assert_eq!((s.repeat, s.cells.len()), (3, 2));
    }

    #[test]
    fn the_hash_follows_the_configuration_not_the_position() {
        let a = parse_text("scale = \"test\"\ndevices = [\"hdd-10k\"]\n").unwrap();
        let b = parse_text("scale = \"test\"\ndevices = [\"nvme-gen4\", \"hdd-10k\"]\n").unwrap();
        let c = parse_text("scale = \"quick\"\ndevices = [\"hdd-10k\"]\n").unwrap();
        assert_eq!(a.cells[0].result_file(), b.cells[1].result_file());
        assert_ne!(a.cells[0].hash, c.cells[0].hash);
    }

    /// studies/s1.toml is `oltplab study --scale quick`: S1's devices in order, the quick scale's
    /// terminals, SQLite, no pacing, one repetition, hdd-10k the baseline.
    #[test]
    fn the_shipped_s1_file_is_the_quick_s1_study() {
        let text = include_str!("../../../../studies/s1.toml");
        let s = parse(Path::new("studies/s1.toml"), text).unwrap();
        let devices: Vec<String> = s.cells.iter().map(|c| c.axes.device.clone()).collect();
        assert_eq!(
            devices,
            split_devices(super::super::DEFAULT_DEVICES).unwrap()
        );
        let quick = Scale::named("quick");
        assert_eq!(s.scale.name, "quick");
        assert_eq!(s.repeat, 1);
        assert_eq!(s.baseline.as_deref(), Some("hdd-10k"));
        for c in &s.cells {
            assert_eq!(c.axes.engine, "sqlite");
            assert_eq!(c.axes.pacing, "none");
            assert_eq!(c.scale.terminals, quick.terminals);
            assert!(c.axes.server_settings.is_empty());
        }
    }

    /// studies/s4.toml is `--scenario profiles`'s two sets in order (the first the baseline), and
    /// studies/s5.toml the in-memory scenario on SQLite; both at the quick scale.
    #[test]
    fn the_shipped_s4_and_s5_files_are_their_scenarios() {
        let s4 = parse(
            Path::new("studies/s4.toml"),
            include_str!("../../../../studies/s4.toml"),
        )
        .unwrap();
        let Measure::Profiles { sets } = &s4.measure else {
            panic!("s4.toml measures {:?}", s4.measure)
        };
        let scenario: Vec<String> = split_devices(super::super::profiles::DEFAULT_SETS)
            .unwrap()
            .iter()
            .map(|t| parse_spec(t).unwrap().name())
            .collect();
        assert_eq!(sets.iter().map(Spec::name).collect::<Vec<_>>(), scenario);
        assert_eq!(s4.scale.name, "quick");
        assert_eq!(
            s4.baseline.as_deref(),
            Some(file_name(&scenario[0]).as_str())
        );
        let s5 = parse(
            Path::new("studies/s5.toml"),
            include_str!("../../../../studies/s5.toml"),
        )
        .unwrap();
        assert_eq!(
            s5.measure,
            Measure::InMemory {
                engine: "sqlite".into()
            }
        );
        assert_eq!(s5.scale.name, "quick");
        // Their cells: S4's device sets, S5's table kinds.
        let ids = |s: &FileStudy| s.cells.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        assert_eq!(
            ids(&s4),
            scenario.iter().map(|n| file_name(n)).collect::<Vec<_>>()
        );
        assert_eq!(ids(&s5), ["disk", "memory"]);
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        let cases = [
            ("scale = \"test\"\ndevices = [\"hdd-10k\"]\nterminal = [2]\n", "line 3", "terminal"),
            ("scale = \"test\"\ndevices = [\"hdd-10k\", \"floppy\"]\n", "line 2", "floppy"),
            ("scale = \"huge\"\ndevices = [\"hdd-10k\"]\n", "line 1", "scale"),
            ("devices = [\"hdd-10k\"]\nterminals = [0]\n", "line 2", "terminals"),
            ("devices = [\"hdd-10k\"]\n[[engines]]\nengine = \"sqlite\"\nserver_settings = [\"a=b\"]\n", "line 4", "server_settings"),
            ("devices = [\"hdd-10k\"]\n[[engines]]\nengine = \"postgres\"\nserver_settings = [\"fsync\"]\n", "line 4", "KEY=VALUE"),
            ("devices = [\"hdd-10k\"]\nbaseline = \"nvme-gen4\"\n", "line 2", "baseline"),
            ("devices = [\"hdd-10k\"]\n[[cell]]\ndevice = \"hdd-10k\"\n", "line 1", "devices"),
            ("scale = \"test\"\nlayouts = [\n  \"data=hdd-10k,log=nvme-gen4\",\n  \"data=hdd-10k,wal=nvme-gen4\",\n]\n", "line 4", "layouts"),
            ("layouts = [\"data=hdd-10k,table:stocks=nvme-gen4\"]\n", "line 1", "table:stocks"),
            ("layouts = [\"log=nvme-gen4\"]\n", "line 1", "layouts"),
            ("layouts = [\"host\"]\n", "line 1", "layouts"),
            ("layouts = []\n", "line 1", "layouts"),
            ("scale = \"test\"\n[[cell]]\ndevice = \"hdd-10k\"\nlayout = \"data=hdd-10k,log=nvme-gen4\"\n", "line 4", "layout"),
            ("scale = \"test\"\n[[cell]]\nterminals = 2\n", "line 2", "layout"),
            ("layouts = [\"data=hdd-10k,log=nvme-gen4\"]\n[[cell]]\ndevice = \"hdd-10k\"\n", "line 1", "layouts"),
            // The brokerage workload: no pacing, its own tables.
            ("devices = [\"hdd-10k\"]\nworkloads = [\"tatp\"]\n", "line 2", "workloads"),
            ("devices = [\"hdd-10k\"]\nworkloads = [\"tpcc\", \"brokerage\"]\npacing = [\"none\", \"spec\"]\n", "line 3", "pacing"),
            ("workloads = [\"brokerage\"]\nlayouts = [\"data=hdd-10k,table:stock=nvme-gen4\"]\n", "line 2", "brokerage workload"),
            ("scale = \"test\"\n[[cell]]\ndevice = \"hdd-10k\"\nworkload = \"brokerage\"\npacing = \"spec\"\n", "line 5", "pacing"),
            ("measure = \"profiles\"\ndevices = [\"hdd-15k\", \"nvme-gen4\"]\nworkloads = [\"brokerage\"]\n", "line 3", "workloads"),
            // Order entry likewise.
            ("devices = [\"hdd-10k\"]\nworkloads = [\"orders\"]\npacing = [\"spec\"]\n", "line 3", "order-entry workload"),
            ("workloads = [\"orders\"]\nlayouts = [\"data=hdd-10k,table:stock=nvme-gen4\"]\n", "line 2", "order-entry workload"),
            // Short names: plain, one spec each, and only `name` and `spec` in an entry.
            ("scale = \"test\"\nlayouts = [\n  { name = \"log on flash\", spec = \"data=hdd-10k,log=nvme-gen4\" },\n]\n", "line 3", "name"),
            ("devices = [{ name = \"a\", spec = \"hdd-10k\" }, { name = \"a\", spec = \"nvme-gen4\" }]\n", "line 1", "\"a\""),
            ("devices = [\"hdd-10k\", { name = \"hdd-10k\", spec = \"nvme-gen4\" }]\n", "line 1", "hdd-10k"),
            ("layouts = [{ name = \"a\", layout = \"hdd-10k\" }]\n", "line 1", "layout"),
            ("scale = \"test\"\n[[cell]]\ndevice = \"hdd-10k\"\nname = \"x y\"\n", "line 4", "name"),
            // S4's and S5's measurements: the keys they do not take, and their own checks.
            ("measure = \"profile\"\n", "line 1", "measure"),
            ("measure = \"profiles\"\ndevices = [\"hdd-15k\", \"ssd\"]\nterminals = [4]\n", "line 3", "terminals"),
            ("measure = \"profiles\"\ndevices = [\"hdd-15k\", \"host\"]\n", "line 2", "host"),
            ("measure = \"profiles\"\ndevices = [\"hdd-15k\", \"data=hdd-15k,log=nvme-gen4\"]\n", "line 2", "devices"),
            ("measure = \"profiles\"\ndevices = [\"hdd-15k\", \"nvme-gen4\"]\nbaseline = \"nvme-gen4\"\n", "line 3", "baseline"),
            ("measure = \"profiles\"\nscale = \"s1\"\ndevices = [\"hdd-15k\", \"nvme-gen4\"]\n", "line 2", "scale"),
            ("measure = \"profiles\"\ndevices = [\"hdd-15k\", \"nvme-gen4\"]\n[[engines]]\nengine = \"sqlite\"\n", "line 3", "[[engines]]"),
            ("measure = \"in-memory\"\ndevices = [\"hdd-15k\"]\n", "line 2", "devices"),
            ("measure = \"in-memory\"\n[[engines]]\nengine = \"sqlite\"\n[[engines]]\nengine = \"postgres\"\n", "line 4", "one engine"),
            ("measure = \"in-memory\"\n[[engines]]\nengine = \"postgres\"\nserver_settings = [\"fsync=off\"]\n", "line 4", "server_settings"),
            // The cluster study's: its own keys checked, the others refused; nodes is its alone.
            ("devices = [\"hdd-10k\"]\nnodes = 3\n", "line 2", "nodes"),
            ("measure = \"profiles\"\ndevices = [\"hdd-15k\", \"nvme-gen4\"]\nnodes = 3\n", "line 3", "nodes"),
            ("measure = \"cluster\"\ndevices = [\"hdd-10k\"]\nnodes = 1\n", "line 3", "nodes"),
            ("measure = \"cluster\"\ndevices = [\"hdd-10k\", \"hdd-10k\"]\n", "line 2", "twice"),
            ("measure = \"cluster\"\ndevices = [\"hdd-10k\", \"data=hdd-10k,log=nvme-gen4\"]\n", "line 2", "layout"),
            ("measure = \"cluster\"\ndevices = [\"hdd-10k\"]\npacing = [\"none\", \"spec\"]\n", "line 3", "pacing"),
            ("measure = \"cluster\"\ndevices = [\"hdd-10k\"]\nterminals = [4]\n", "line 3", "terminals"),
            ("measure = \"cluster\"\ndevices = [\"hdd-10k\"]\n[[engines]]\nengine = \"mariadb\"\n", "line 3", "[[engines]]"),
        ];
        for (text, line, key) in cases {
            let e = parse_text(text)
                .err()
                .unwrap_or_else(|| panic!("accepted: {text}"));
            let msg = e.to_string();
            assert_eq!(e.exit_code(), 2, "{msg}");
            assert!(msg.contains(line) && msg.contains(key), "{text} → {msg}");
            assert!(!msg.contains('\n'), "one line: {msg}");
        }
    }
}
