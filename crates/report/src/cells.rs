//! A study file's results (`study --file`, scenario `file`): a row per cell with its axes
//! (engine and settings, device or layout, terminals, pacing), S1's figures, the ratios against
//! the baseline's cell of the same engine, terminals and pacing, and the cell's warnings beside
//! its numbers; charts of tpmC, run IOPS, α, the emulated p99 and the tpmC and α ratios along the
//! axes the user picks (`oltplab report DIR --by AXIS[,AXIS]`), each warned cell marked.

use oltplab_schema::{CellFigures, CellStudyFigures};

use crate::common::{self, Ids};
use crate::doc::{Doc, Figures};
use crate::fmt::{ns_short, ratio_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Reference, Scale, Series};

/// An axis of a study file's cells that charts can run along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellAxis {
    Device,
    Engine,
    Terminals,
    Pacing,
    /// The storage axis by its other name: a study's devices and layouts are one axis (a layout
    /// names its devices), charted as `layout` when the user asks so.
    Layout,
    /// tpcc, brokerage or orders (`workloads = […]`).
    Workload,
}

impl CellAxis {
    pub const NAMES: [&'static str; 6] = [
        "device",
        "engine",
        "terminals",
        "pacing",
        "layout",
        "workload",
    ];
    /// The distinct axes (layout is the device axis).
    const ALL: [CellAxis; 5] = [
        CellAxis::Device,
        CellAxis::Engine,
        CellAxis::Terminals,
        CellAxis::Pacing,
        CellAxis::Workload,
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The axis itself, whatever it was called.
    fn same(self) -> CellAxis {
        match self {
            CellAxis::Layout => CellAxis::Device,
            a => a,
        }
    }

    /// `device,terminals` → the axes, or why not as one sentence (the caller names the option).
    pub fn parse_list(text: &str) -> Result<Vec<CellAxis>, String> {
        let mut axes = Vec::new();
        for name in text.split(',').map(str::trim) {
            let Some(axis) = Self::ALL
                .into_iter()
                .chain([CellAxis::Layout])
                .find(|a| a.name() == name)
            else {
                return Err(format!(
                    "`{name}` is not an axis of a study's cells: choose one or two of {}, e.g. device,terminals",
                    Self::NAMES.join(", ")
                ));
            };
            if let Some(other) = axes.iter().find(|a: &&CellAxis| a.same() == axis.same()) {
                return Err(if other.name() == name {
                    format!("`{name}` is named twice: name each axis once")
                } else {
                    format!(
                        "`{}` and `{name}` are one axis (a study's devices and layouts): name one of them",
                        other.name()
                    )
                });
            }
            axes.push(axis);
        }
        if axes.len() > 2 {
            return Err(format!(
                "{} axes were named: a chart runs along one axis with a series per value of a second, so name one or two",
                axes.len()
            ));
        }
        Ok(axes)
    }

    /// The cell's value on this axis, as shown.
    fn value(self, c: &CellFigures) -> String {
        let text = |t: &Option<String>| t.clone().unwrap_or_default();
        match self {
            // The short name the study file gave the device or layout, else its spec.
            CellAxis::Device | CellAxis::Layout => match text(&c.label) {
                label if label.is_empty() => text(&c.device),
                label => label,
            },
            CellAxis::Engine => text(&c.engine_name),
            CellAxis::Terminals => c.terminals.map(|t| t.to_string()).unwrap_or_default(),
            CellAxis::Pacing => text(&c.pacing),
            // A TPC-C cell names no workload (the cells before workloads were an axis).
            CellAxis::Workload => match text(&c.workload) {
                w if w.is_empty() => "tpcc".into(),
                w => w,
            },
        }
    }
}

pub fn is_cells(doc: &Doc) -> bool {
    study(doc).is_some()
}

/// The study's typed summary (None only for a result of another kind).
fn study<'a>(doc: &'a Doc) -> Option<&'a CellStudyFigures> {
    match &doc.figures {
        Figures::Cells(s) => Some(s),
        _ => None,
    }
}

/// The study's cells (none for a result of another kind).
fn cells<'a>(doc: &'a Doc) -> &'a [CellFigures] {
    study(doc).map(|s| s.cells.as_slice()).unwrap_or(&[])
}

/// The label of a study-file study, e.g. `study file, 4 cells (baseline hdd-10k)`.
pub fn label(doc: &Doc) -> String {
    let n = cells(doc).len();
    let mut text = format!("study file, {n} cell{}", if n == 1 { "" } else { "s" });
    if let Some(b) = study(doc).and_then(|s| s.baseline.as_ref()) {
        text.push_str(&format!(" (baseline {b})"));
    }
    text
}

fn text(t: &Option<String>) -> String {
    t.clone().unwrap_or_default()
}

/// The cell's warnings, one line each, beside its figures.
fn warnings_text(c: &CellFigures) -> String {
    c.warnings
        .iter()
        .filter_map(|w| {
            let kind = w.kind.as_deref().unwrap_or("warning");
            w.message.as_ref().map(|m| format!("{kind}: {m}"))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn cells_table(cells: &[CellFigures], baseline: Option<&str>) -> Table {
    // A study with brokerage cells gets their throughput beside tpmC; TPC-C's table is as it was.
    let brokerage = cells.iter().any(|c| c.figures.tpse_like.is_some());
    // Order-entry cells likewise, after the brokerage's.
    let orders = cells.iter().any(|c| c.figures.orders_tps.is_some());
    let orders_at = if brokerage { 12 } else { 10 };
    let mut columns = vec![
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
        Column::new("lat_ns_p90", "response p90", Unit::Ns),
        Column::new("device_busy", "device busy (read-cache hits)", Unit::Text),
        Column::new("alpha", "α", Unit::Number),
        Column::new("alpha_ratio", "α ×", Unit::Ratio),
        Column::new("randread16k_iops_ratio", "IOPS ×", Unit::Ratio),
        Column::new("limit", "limited by", Unit::Text),
        Column::new("warnings", "warnings", Unit::Text),
    ];
    if brokerage {
        columns.insert(
            10,
            Column::new("tpse_like", "Trade-Results/s", Unit::Number),
        );
        columns.insert(11, Column::new("tpse_like_ratio", "TR/s ×", Unit::Ratio));
    }
    if orders {
        let tps = Column::new("orders_tps", "order-entry tx/s", Unit::Number);
        columns.insert(orders_at, tps);
        let ratio = Column::new("orders_tps_ratio", "tx/s ×", Unit::Ratio);
        columns.insert(orders_at + 1, ratio);
    }
    // A study mixing workloads names each cell's.
    let workloads = varies(cells, CellAxis::Workload);
    if workloads {
        columns.insert(2, Column::new("workload", "workload", Unit::Text));
    }
    let mut t = Table::new(
        "cells",
        &format!(
            "Cells (× against {} of the same engine, terminals and pacing)",
            baseline.map_or("no baseline".to_string(), |b| format!("the {b} cell"))
        ),
        columns,
    );
    for c in cells {
        let f = &c.figures;
        let vs = f.vs_baseline.as_ref();
        let mut row = vec![
            Cell::Text(c.id.clone()),
            Cell::Text(text(&c.engine_name)),
            Cell::Text(c.server_settings.join(" ")),
            Cell::Text(text(&c.device)),
            Cell::Text(CellAxis::Terminals.value(c)),
            Cell::Text(text(&c.pacing)),
            Cell::Num(f.randread16k_iops),
            Cell::Num(f.randread16k_lat_ns),
            Cell::Num(f.tpmc),
            Cell::Num(vs.and_then(|r| r.tpmc)),
            Cell::Num(f.run_iops),
            Cell::Num(f.replay_iops),
            Cell::Num(c.run.as_ref().and_then(|r| r.lat_ns?.p90)),
            Cell::Text(busy_text(c)),
            Cell::Num(f.alpha),
            Cell::Num(vs.and_then(|r| r.alpha)),
            Cell::Num(vs.and_then(|r| r.randread16k_iops)),
            Cell::Text(text(&f.breakdown.as_ref().and_then(|b| b.limit.clone()))),
            Cell::Text(warnings_text(c)),
        ];
        if brokerage {
            row.insert(10, Cell::Num(f.tpse_like));
            row.insert(11, Cell::Num(vs.and_then(|r| r.tpse_like)));
        }
        if orders {
            row.insert(orders_at, Cell::Num(f.orders_tps));
            row.insert(orders_at + 1, Cell::Num(vs.and_then(|r| r.orders_tps)));
        }
        if workloads {
            row.insert(2, Cell::Text(CellAxis::Workload.value(c)));
        }
        t.push(row);
    }
    t
}

/// Each emulated device's busy share in the cell's run (S3's 100 − idle), a layout's by its
/// roles, with the read cache's hit ratio where there is one.
fn busy_text(c: &CellFigures) -> String {
    let devices = c.run.as_ref().map(|r| r.devices.as_slice()).unwrap_or(&[]);
    devices
        .iter()
        .map(|d| {
            let name = d.name.as_deref().unwrap_or("?");
            // `log+temp=SPEC` → `log+temp`; a single device's spec is long and in its own column.
            let name = match name.split_once('=') {
                Some((roles, _)) if !roles.contains('(') => roles,
                _ => "device",
            };
            let busy = d.busy_pct.unwrap_or(0.0);
            match d.read_cache_hit_pct {
                Some(h) => format!("{name} {busy:.0} % ({h:.0} %)"),
                None => format!("{name} {busy:.0} %"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The axes charts run along when the user names none: device, and terminals when they vary (else
/// the first other axis that varies) as the series.
fn default_axes(cells: &[CellFigures]) -> Vec<CellAxis> {
    // A layout's spec names its roles (`data=…`): the axis is then called layout.
    let storage = if cells.iter().any(|c| text(&c.device).contains('=')) {
        CellAxis::Layout
    } else {
        CellAxis::Device
    };
    let mut axes = vec![storage];
    if let Some(second) = [
        CellAxis::Terminals,
        CellAxis::Engine,
        CellAxis::Pacing,
        CellAxis::Workload,
    ]
    .into_iter()
    .find(|a| varies(cells, *a))
    {
        axes.push(second);
    }
    axes
}

fn varies(cells: &[CellFigures], axis: CellAxis) -> bool {
    cells.iter().any(|c| axis.value(c) != axis.value(&cells[0]))
}

/// Values in the order the cells first show them (terminals in numeric order).
fn axis_values(cells: &[CellFigures], axis: CellAxis) -> Vec<String> {
    let mut values: Vec<String> = Vec::new();
    for c in cells {
        let v = axis.value(c);
        if !values.contains(&v) {
            values.push(v);
        }
    }
    if axis.same() == CellAxis::Terminals {
        values.sort_by_key(|v| v.parse::<u64>().unwrap_or(u64::MAX));
    }
    values
}

/// A figure charted along the axes.
struct Metric {
    get: fn(&CellFigures) -> Option<f64>,
    title: &'static str,
    desc: &'static str,
    label: &'static str,
    fmt: fn(f64) -> String,
    reference: Option<(f64, &'static str)>,
    caption: &'static str,
}

const METRICS: [Metric; 10] = [
    Metric {
        get: |c| c.figures.tpmc,
        title: "tpmC",
        desc: "New-Order transactions per minute of each cell's TPC-C run.",
        label: "tpmC",
        fmt: si,
        reference: None,
        caption: "Throughput of each cell; the table gives it against the baseline device's cell.",
    },
    // A brokerage cell's throughput (`workloads = ["brokerage"]`); drawn only when a cell has it.
    Metric {
        get: |c| c.figures.tpse_like,
        title: "Trade-Results per second",
        desc: "Trade-Result transactions per second of each cell's brokerage run.",
        label: "Trade-Results/s",
        fmt: si,
        reference: None,
        caption: "Throughput of each brokerage cell; the table gives it against the baseline device's cell of the same workload.",
    },
    Metric {
        get: |c| c.figures.vs_baseline.as_ref()?.tpse_like,
        title: "Trade-Results per second against the baseline",
        desc: "Each brokerage cell's Trade-Results per second divided by the baseline cell's (same engine, workload, terminals and pacing).",
        label: "Trade-Results/s ×",
        fmt: ratio_short,
        reference: Some((1.0, "the baseline")),
        caption: "Above 1: the cell's storage did more Trade-Results than the baseline's.",
    },
    // An order-entry cell's throughput (`workloads = ["orders"]`); drawn only when a cell has it.
    Metric {
        get: |c| c.figures.orders_tps,
        title: "Order-entry transactions per second",
        desc: "Transactions per second of each cell's order-entry run over its fixed work.",
        label: "tx/s",
        fmt: si,
        reference: None,
        caption: "Throughput of each order-entry cell; the table gives it against the baseline device's cell of the same workload.",
    },
    Metric {
        get: |c| c.figures.vs_baseline.as_ref()?.orders_tps,
        title: "Order-entry transactions per second against the baseline",
        desc: "Each order-entry cell's transactions per second divided by the baseline cell's (same engine, workload, terminals and pacing).",
        label: "tx/s ×",
        fmt: ratio_short,
        reference: Some((1.0, "the baseline")),
        caption: "Above 1: the cell's storage did more order-entry transactions than the baseline's.",
    },
    Metric {
        get: |c| c.figures.run_iops,
        title: "IOPS in the TPC-C run",
        desc: "I/O operations per second the database issued during each cell's TPC-C run.",
        label: "IOPS",
        fmt: si,
        reference: None,
        caption: "What the database asked of the device during the run; α divides it by what the replay of the same trace got.",
    },
    Metric {
        get: |c| c.figures.alpha,
        title: "Storage utilisation α",
        desc: "α = IOPS during TPC-C / IOPS of the trace replay, per cell.",
        label: "α",
        fmt: si,
        reference: Some((1.0, "α = 1: the device is kept busy")),
        caption: "α near 1: the database keeps the device busy; low: something else (CPU, locks, the driver) limits it. Above 1.05 a replay was no bound.",
    },
    Metric {
        get: |c| c.figures.vs_baseline.as_ref()?.tpmc,
        title: "tpmC against the baseline",
        desc: "Each cell's tpmC divided by the baseline cell's (same engine, terminals and pacing).",
        label: "tpmC ×",
        fmt: ratio_short,
        reference: Some((1.0, "the baseline")),
        caption: "Above 1: the cell's storage did more New-Orders than the baseline's; cells with no baseline cell of their engine, terminals and pacing are missing.",
    },
    Metric {
        get: |c| c.figures.vs_baseline.as_ref()?.alpha,
        title: "α against the baseline",
        desc: "Each cell's storage utilisation α divided by the baseline cell's (same engine, terminals and pacing).",
        label: "α ×",
        fmt: ratio_short,
        reference: Some((1.0, "the baseline")),
        caption: "Below 1: the database used less of this storage's capability than of the baseline's.",
    },
    Metric {
        get: |c| c.figures.run_fidelity.as_ref()?.realised_lat_ns_p99,
        title: "I/O latency p99 on the emulated device",
        desc: "The 99th percentile of the I/O latency the emulated device gave during each cell's TPC-C run.",
        label: "latency p99",
        fmt: ns_short,
        reference: None,
        caption: "The tail the database met on the emulated device; host devices have no such figure.",
    },
];

/// The charts of every metric along `axes[0]`, one series per value of `axes[1]` (and of any other
/// axis that varies, so that no cell hides another).
fn axis_charts(s: &mut Section, cells: &[CellFigures], axes: &[CellAxis]) {
    let x_axis = axes[0];
    let mut series_axes: Vec<CellAxis> = axes[1..].to_vec();
    series_axes.extend(
        CellAxis::ALL
            .into_iter()
            .filter(|a| !axes.iter().any(|x| x.same() == *a) && varies(cells, *a)),
    );
    let key = |c: &CellFigures| -> String {
        series_axes
            .iter()
            .map(|a| format!("{} {}", a.name(), a.value(c)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let xs = axis_values(cells, x_axis);
    // Series in order of first appearance; a cell whose (x, series) another already holds (the
    // axes do not tell them apart) gets a series of its own, named by its id.
    let mut series: Vec<(String, Vec<Option<&CellFigures>>)> = Vec::new();
    for c in cells {
        let x = xs
            .iter()
            .position(|v| *v == x_axis.value(c))
            .expect("listed");
        let mut name = key(c);
        let taken = |name: &str, series: &[(String, Vec<Option<&CellFigures>>)]| {
            series.iter().any(|(n, row)| n == name && row[x].is_some())
        };
        if taken(&name, &series) {
            name = format!("cell {}", c.id);
        }
        let row = match series.iter().position(|(n, _)| *n == name) {
            Some(i) => &mut series[i].1,
            None => {
                series.push((name, vec![None; xs.len()]));
                &mut series.last_mut().expect("pushed").1
            }
        };
        row[x] = Some(c);
    }
    let what = if series_axes.is_empty() {
        String::new()
    } else {
        format!(
            ", one series per {}",
            series_axes
                .iter()
                .map(|a| a.name())
                .collect::<Vec<_>>()
                .join(" and ")
        )
    };
    s.notes.push(format!(
        "Charts along {}{what}; a triangle marks a cell with warnings (`oltplab report DIR --by AXIS[,AXIS]` picks the axes: {}).",
        x_axis.name(),
        CellAxis::NAMES.join(", ")
    ));
    let mut ids = Ids::new(&s.id);
    for m in &METRICS {
        if cells.iter().all(|c| (m.get)(c).is_none()) {
            continue;
        }
        let y_axis = Axis::new(m.label, Scale::Linear, m.fmt);
        let reference = m.reference.map(|(value, label)| Reference {
            value,
            label: label.into(),
        });
        let title = format!("{} by {}", m.title, x_axis.name());
        let make =
            |name: &str, row: &[Option<&CellFigures>]| -> (String, Vec<Option<f64>>, Vec<String>) {
                let label = if name.is_empty() {
                    m.label.to_string()
                } else {
                    name.to_string()
                };
                let values = row.iter().map(|c| c.and_then(m.get)).collect();
                let warnings = row
                    .iter()
                    .map(|c| c.map(warnings_text).unwrap_or_default())
                    .collect();
                (label, values, warnings)
            };
        let svg = if x_axis == CellAxis::Terminals {
            // A count: lines through the terminal counts, on a numeric axis.
            let lines: Vec<Series> = series
                .iter()
                .map(|(name, row)| {
                    let (label, values, warnings) = make(name, row);
                    let (points, warnings): (Vec<(f64, f64)>, Vec<String>) = xs
                        .iter()
                        .zip(values)
                        .zip(warnings)
                        .filter_map(|((x, v), w)| Some(((x.parse::<f64>().ok()?, v?), w)))
                        .unzip();
                    Series::line(label, points).with_warnings(warnings)
                })
                .collect();
            svg::lines(
                &ids.next(),
                &title,
                m.desc,
                &lines,
                // Ticks at the counts the study ran, not at fractions of a terminal.
                &Axis::new("terminals", Scale::Linear, si).with_ticks(
                    xs.iter()
                        .filter_map(|x| Some((x.parse::<f64>().ok()?, x.clone())))
                        .collect(),
                ),
                &y_axis,
                reference.as_ref(),
            )
        } else {
            let bars: Vec<Series> = series
                .iter()
                .map(|(name, row)| {
                    let (label, values, warnings) = make(name, row);
                    Series::bars(label, values).with_warnings(warnings)
                })
                .collect();
            svg::bars(
                &ids.next(),
                &title,
                m.desc,
                &xs,
                &bars,
                &y_axis,
                false,
                reference.as_ref(),
            )
        };
        s.chart(svg, m.caption);
    }
}

/// The section of a study-file study; charts along `by` (None: [`default_axes`]).
pub fn section(doc: &Doc, index: usize, charts: bool, by: Option<&[CellAxis]>) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Study: {}", doc.label),
        doc.label.clone(),
        "study",
    );
    let cells = cells(doc);
    for c in cells {
        if let Some(e) = &c.figures.explanation {
            s.notes.push(format!("{}: {e}", c.id));
        }
    }
    if study(doc).and_then(|s| s.interrupted) == Some(true) {
        s.notes.push("Interrupted: the table holds the cells that finished; `oltplab study --resume DIR` runs the rest.".into());
    }
    if charts && !cells.is_empty() {
        let axes = by.map_or_else(|| default_axes(cells), <[CellAxis]>::to_vec);
        axis_charts(&mut s, cells, &axes);
    }
    let baseline = study(doc).and_then(|s| s.baseline.as_deref());
    s.table(cells_table(cells, baseline));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell as its JSON reads.
    fn cell(v: serde_json::Value) -> CellFigures {
        serde_json::from_value(v).unwrap()
    }

    /// A named device or layout is charted by its name, the others by their spec.
    #[test]
    fn the_storage_axis_shows_a_cells_short_name() {
        let named = cell(
            serde_json::json!({"id": "a", "device": "data=hdd-10k,log=nvme-gen4", "label": "log-flash"}),
        );
        let plain = cell(serde_json::json!({"id": "b", "device": "data=hdd-10k,log=nvme-gen4"}));
        assert_eq!(CellAxis::Layout.value(&named), "log-flash");
        assert_eq!(CellAxis::Device.value(&named), "log-flash");
        assert_eq!(CellAxis::Layout.value(&plain), "data=hdd-10k,log=nvme-gen4");
    }

    /// A brokerage cell's Trade-Results per second get their columns, beside tpmC; a study of
    /// TPC-C cells keeps its table as it was.
    #[test]
    fn brokerage_cells_get_their_throughput_columns() {
        let tpcc = cell(serde_json::json!({"id": "a", "figures": {"tpmc": 900.0}}));
        let brokerage = cell(serde_json::json!({"id": "b", "workload": "brokerage",
            "figures": {"tpse_like": 41.5, "vs_baseline": {"tpse_like": 1.0}}}));
        let keys = |t: &Table| t.columns.iter().map(|c| c.key.clone()).collect::<Vec<_>>();
        let only_tpcc = cells_table(std::slice::from_ref(&tpcc), None);
        assert!(!keys(&only_tpcc).contains(&"tpse_like".to_string()));
        let both = cells_table(&[tpcc, brokerage], None);
        let at = keys(&both).iter().position(|k| k == "tpse_like").unwrap();
        assert_eq!(keys(&both)[at - 1], "tpmc_ratio");
        assert_eq!(both.columns.len(), both.rows[1].len());
        assert!(matches!(both.rows[1][at], Cell::Num(Some(v)) if v == 41.5));
        assert!(matches!(both.rows[0][at], Cell::Num(None)));
    }

    /// A study mixing workloads: a workload column, a workload axis for `--by`, and as the
    /// default chart's series when nothing else varies; order entry's throughput columns.
    #[test]
    fn a_study_mixing_workloads_gets_a_workload_column_and_axis() {
        let tpcc = cell(serde_json::json!({"id": "a", "device": "d", "figures": {"tpmc": 900.0}}));
        let orders = cell(
            serde_json::json!({"id": "b", "device": "d", "workload": "orders",
            "figures": {"orders_tps": 1500.0, "vs_baseline": {"orders_tps": 1.0}}}),
        );
        let by = CellAxis::parse_list("workload,device").unwrap();
        assert_eq!(by, [CellAxis::Workload, CellAxis::Device]);
        assert_eq!(CellAxis::Workload.value(&tpcc), "tpcc", "TPC-C names none");
        let keys = |t: &Table| t.columns.iter().map(|c| c.key.clone()).collect::<Vec<_>>();
        let only_tpcc = cells_table(std::slice::from_ref(&tpcc), None);
        assert!(!keys(&only_tpcc).contains(&"workload".to_string()));
        let both = cells_table(&[tpcc.clone(), orders.clone()], None);
        let k = keys(&both);
        assert_eq!(k[2], "workload");
        let at = k.iter().position(|k| k == "orders_tps").unwrap();
        assert_eq!(k[at - 1], "tpmc_ratio");
        assert_eq!(k[at + 1], "orders_tps_ratio");
        for row in &both.rows {
            assert_eq!(row.len(), k.len());
        }
        assert!(matches!(&both.rows[1][2], Cell::Text(w) if w == "orders"));
        assert!(matches!(both.rows[1][at], Cell::Num(Some(v)) if v == 1500.0));
        assert_eq!(
            default_axes(&[tpcc, orders]),
            [CellAxis::Device, CellAxis::Workload]
        );
    }
}
