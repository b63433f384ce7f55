//! A study file's results (`study --file`, scenario `file`): a row per cell with its axes
//! (engine and settings, device, terminals, pacing), S1's figures, the ratios against the
//! baseline device's cell of the same engine, terminals and pacing, and the cell's warnings beside
//! its numbers; bars of tpmC and α per cell.

use serde_json::Value;

use crate::common::{self, Ids};
use crate::doc::{num, Doc};
use crate::fmt::{si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Reference, Scale, Series};

pub fn is_cells(doc: &Doc) -> bool {
    doc.str("/summary/scenario") == Some("file")
}

/// The label of a study-file study, e.g. `study file, 4 cells (baseline hdd-10k)`.
pub fn label(doc: &Doc) -> String {
    let n = doc.array("/summary/cells").len();
    let mut text = format!("study file, {n} cell{}", if n == 1 { "" } else { "s" });
    if let Some(b) = doc.str("/summary/baseline") {
        text.push_str(&format!(" (baseline {b})"));
    }
    text
}

fn id(c: &Value) -> String {
    c.get("id")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string()
}

fn text(c: &Value, pointer: &str) -> String {
    match c.pointer(pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The cell's warnings, one line each, beside its figures.
fn warnings_text(c: &Value) -> String {
    c["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| {
            let kind = w["kind"].as_str().unwrap_or("warning");
            w["message"].as_str().map(|m| format!("{kind}: {m}"))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn cells_table(cells: &[Value], baseline: Option<&str>) -> Table {
    let columns = vec![
        Column::new("cell", "cell", Unit::Text),
        Column::new("engine", "engine", Unit::Text),
        Column::new("server_settings", "server settings", Unit::Text),
        Column::new("device", "device", Unit::Text),
        Column::new("terminals", "terminals", Unit::Text),
        Column::new("pacing", "pacing", Unit::Text),
        Column::new("randread16k_iops", "16k read IOPS", Unit::Count),
        Column::new("randread16k_lat_ns", "latency", Unit::Ns),
        Column::new("tpmc", "tpmC", Unit::Number),
        Column::new("tpmc_ratio", "tpmC ×", Unit::Ratio),
        Column::new("run_iops", "IOPS in TPC-C", Unit::Count),
        Column::new("replay_iops", "IOPS in replay", Unit::Count),
        Column::new("alpha", "α", Unit::Number),
        Column::new("alpha_ratio", "α ×", Unit::Ratio),
        Column::new("randread16k_iops_ratio", "IOPS ×", Unit::Ratio),
        Column::new("limit", "limited by", Unit::Text),
        Column::new("warnings", "warnings", Unit::Text),
    ];
    let mut t = Table::new(
        "cells",
        &format!(
            "Cells (× against {} of the same engine, terminals and pacing)",
            baseline.map_or("no baseline".to_string(), |b| format!("the {b} cell"))
        ),
        columns,
    );
    for c in cells {
        let f = &c["figures"];
        t.push(vec![
            Cell::Text(id(c)),
            Cell::Text(text(c, "/engine_name")),
            Cell::Text(text(c, "/server_settings")),
            Cell::Text(text(c, "/device")),
            Cell::Text(text(c, "/terminals")),
            Cell::Text(text(c, "/pacing")),
            Cell::Num(num(f, "/randread16k_iops")),
            Cell::Num(num(f, "/randread16k_lat_ns")),
            Cell::Num(num(f, "/tpmc")),
            Cell::Num(num(f, "/vs_baseline/tpmc")),
            Cell::Num(num(f, "/run_iops")),
            Cell::Num(num(f, "/replay_iops")),
            Cell::Num(num(f, "/alpha")),
            Cell::Num(num(f, "/vs_baseline/alpha")),
            Cell::Num(num(f, "/vs_baseline/randread16k_iops")),
            Cell::Text(text(f, "/breakdown/limit")),
            Cell::Text(warnings_text(c)),
        ]);
    }
    t
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Study: {}", doc.label),
        doc.label.clone(),
        "study",
    );
    let cells = doc.array("/summary/cells");
    for c in cells {
        if let Some(e) = c.pointer("/figures/explanation").and_then(Value::as_str) {
            s.notes.push(format!("{}: {e}", id(c)));
        }
    }
    if doc.v.pointer("/summary/interrupted") == Some(&Value::Bool(true)) {
        s.notes.push("Interrupted: the table holds the cells that finished; `oltplab study --resume DIR` runs the rest.".into());
    }
    if charts && !cells.is_empty() {
        let mut ids = Ids::new(&s.id);
        let names: Vec<String> = cells.iter().map(id).collect();
        let tpmc: Vec<Option<f64>> = cells.iter().map(|c| num(c, "/figures/tpmc")).collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "tpmC per cell",
                "New-Order transactions per minute of each cell's TPC-C run.",
                &names,
                &[Series::bars("tpmC", tpmc)],
                &Axis::new("tpmC", Scale::Linear, si),
                false,
                None,
            ),
            "Throughput of each cell; the table gives it against the baseline device's cell.",
        );
        let alpha: Vec<Option<f64>> = cells.iter().map(|c| num(c, "/figures/alpha")).collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "Storage utilisation α per cell",
                "α = IOPS during TPC-C / IOPS of the trace replay, per cell.",
                &names,
                &[Series::bars("α", alpha)],
                &Axis::new("α", Scale::Linear, si),
                false,
                Some(&Reference {
                    value: 1.0,
                    label: "α = 1: the device is kept busy".into(),
                }),
            ),
            "α near 1: the database keeps the device busy; low: something else (CPU, locks, the driver) limits it. Above 1.05 a replay was no bound.",
        );
    }
    s.table(cells_table(cells, doc.str("/summary/baseline")));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}
