//! Parts every kind of report shares: latency columns, environment and configuration tables,
//! per-second charts and percentile curves.

use std::collections::BTreeMap;

use oltplab_metrics::{LatencyHistogram, LatencyNs};
use oltplab_schema::Envelope;
use serde_json::Value;

use crate::doc::{num, Doc};
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

/// Unique chart ids within one page.
pub struct Ids {
    prefix: String,
    next: usize,
}

impl Ids {
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.into(),
            next: 0,
        }
    }

    pub fn next(&mut self) -> String {
        self.next += 1;
        format!("{}-c{}", self.prefix, self.next)
    }
}

pub const LAT_FIELDS: [(&str, &str); 6] = [
    ("mean", "mean"),
    ("p50", "p50"),
    ("p90", "p90"),
    ("p99", "p99"),
    ("p999", "p99.9"),
    ("max", "max"),
];

pub fn lat_columns(prefix: &str) -> Vec<Column> {
    LAT_FIELDS
        .iter()
        .map(|(k, l)| {
            Column::new(
                &format!("{prefix}lat_ns_{k}"),
                &if prefix.is_empty() {
                    l.to_string()
                } else {
                    format!("{} {l}", prefix.trim_end_matches('_'))
                },
                Unit::Ns,
            )
        })
        .collect()
}

/// A latency figure by its field name (`mean`, `p50`, `p90`, `p99`, `p999`, `max`).
pub fn lat_figure(l: &LatencyNs, field: &str) -> f64 {
    match field {
        "mean" => l.mean,
        "p50" => l.p50 as f64,
        "p90" => l.p90 as f64,
        "p99" => l.p99 as f64,
        "p999" => l.p999 as f64,
        _ => l.max as f64,
    }
}

/// Latency cells of a typed `lat_ns`, in the order of `lat_columns`.
pub fn latency_cells(l: &LatencyNs) -> Vec<Cell> {
    LAT_FIELDS
        .iter()
        .map(|(k, _)| Cell::Num(Some(lat_figure(l, k))))
        .collect()
}

/// One figure of a side-by-side comparison: a column of values from `get` (each kind's typed
/// document), and, with a `ratio_label`, a column of ratios against the first result.
pub struct Metric {
    pub key: &'static str,
    pub label: &'static str,
    pub unit: Unit,
    pub get: fn(&Doc) -> Option<f64>,
    pub ratio_label: Option<&'static str>,
}

impl Metric {
    /// A figure of a kind read through its typed document.
    pub const fn typed(
        key: &'static str,
        label: &'static str,
        unit: Unit,
        get: fn(&Doc) -> Option<f64>,
        ratio_label: Option<&'static str>,
    ) -> Self {
        Self {
            key,
            label,
            unit,
            get,
            ratio_label,
        }
    }

    fn value(&self, d: &Doc) -> Option<f64> {
        (self.get)(d)
    }
}

/// The "Side by side (ratios against the first)" table of several results of one kind.
pub fn comparison_table(docs: &[&Doc], metrics: &[Metric]) -> Table {
    let base = docs[0];
    let mut columns = vec![Column::new("result", "result", Unit::Text)];
    for m in metrics {
        columns.push(Column::new(m.key, m.label, m.unit));
        if let Some(label) = m.ratio_label {
            columns.push(Column::new(&format!("{}_ratio", m.key), label, Unit::Ratio));
        }
    }
    let mut t = Table::new(
        "comparison",
        &format!("Side by side (ratios against {})", base.label),
        columns,
    );
    for d in docs {
        let mut row = vec![Cell::Text(d.label.clone())];
        for m in metrics {
            row.push(Cell::Num(m.value(d)));
            if m.ratio_label.is_some() {
                row.push(Cell::Num(ratio(m.value(d), m.value(base))));
            }
        }
        t.push(row);
    }
    t
}

pub fn ratio(v: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 && v >= 0.0 => Some(v / b),
        _ => None,
    }
}

/// A log axis when the values span more than ~20×, where a linear one would flatten the small ones.
pub fn auto_scale(values: impl IntoIterator<Item = f64>) -> Scale {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
    if hi > 0.0 && hi / lo > 20.0 {
        Scale::Log
    } else {
        Scale::Linear
    }
}

fn env_rows(head: &Envelope) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let env = &head.env;
    out.insert(
        "0 tool".into(),
        format!("oltplab {} ({})", head.tool.version, head.tool.git),
    );
    out.insert("1 started".into(), head.started_at.clone());
    let device = env.target_device.as_ref();
    let rows: [(&str, Option<String>); 11] = [
        ("2 host", Some(env.hostname.clone())),
        ("3 kernel", Some(env.kernel.clone())),
        ("4 CPU", Some(env.cpu.clone())),
        ("5 cores", Some(env.cores.to_string())),
        ("7 target file system", env.target_fs.clone()),
        ("8 target device", device.map(|d| d.name.clone())),
        ("8a device model", device.and_then(|d| d.model.clone())),
        ("8c I/O scheduler", device.and_then(|d| d.scheduler.clone())),
        (
            "8d queue size",
            device.and_then(|d| d.nr_requests).map(|n| n.to_string()),
        ),
        (
            "8e logical block size",
            (device.and_then(|d| d.logical_block_size_bytes)).map(|n| n.to_string()),
        ),
        ("9 database engine", env.engine_version.clone()),
    ];
    for (label, text) in rows {
        if let Some(t) = text {
            out.insert(label.into(), t);
        }
    }
    out.insert(
        "6 memory".into(),
        oltplab_core::units::format_bytes(env.memory_bytes),
    );
    if let Some(r) = device.and_then(|d| d.rotational) {
        out.insert("8b rotational".into(), if r { "yes" } else { "no" }.into());
    }
    for (k, s) in &env.engine_settings {
        out.insert(format!("9z {k}"), s.clone());
    }
    out
}

/// One column per result; rows that differ between results are highlighted.
fn side_by_side(
    id: &str,
    title: &str,
    docs: &[&Doc],
    rows: Vec<BTreeMap<String, String>>,
    strip_order: bool,
) -> Table {
    let mut columns = vec![Column::new("item", "", Unit::Text)];
    for d in docs {
        columns.push(Column::new(&d.label, &d.label, Unit::Text));
    }
    let mut keys: Vec<&String> = rows.iter().flat_map(|r| r.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut table = Table::new(id, title, columns);
    for key in keys {
        let label = if strip_order {
            key.split_once(' ').map_or(key.as_str(), |(_, l)| l)
        } else {
            key.as_str()
        };
        let mut row = vec![Cell::text(label)];
        let values: Vec<Option<&String>> = rows.iter().map(|r| r.get(key)).collect();
        row.extend(
            values
                .iter()
                .map(|v| Cell::text(v.cloned().unwrap_or_default())),
        );
        let differs = values.windows(2).any(|w| w[0] != w[1]);
        table.push(row);
        *table.highlight.last_mut().expect("pushed") = docs.len() > 1 && differs;
    }
    table
}

pub fn env_table(docs: &[&Doc]) -> Table {
    let rows = docs.iter().map(|d| env_rows(&d.head)).collect();
    side_by_side("env", "Environment", docs, rows, true)
}

/// Every resolved option, flattened to dotted names (`workloads.0.block_size_bytes`).
pub fn config_table(docs: &[&Doc]) -> Table {
    let rows = docs
        .iter()
        .map(|d| {
            let mut out = BTreeMap::new();
            flatten("", &d.head.config, &mut out);
            out
        })
        .collect();
    side_by_side("config", "Configuration", docs, rows, false)
}

fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&join(k), x, out);
            }
        }
        // Lists of plain values read best on one line: `1, 2, 4`.
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let items: Vec<String> = a.iter().map(scalar).collect();
            out.insert(prefix.to_string(), items.join(", "));
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                flatten(&join(&i.to_string()), x, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), scalar(other));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "—".into(),
        other => other.to_string(),
    }
}

/// Environment, configuration and warnings of the results in a section.
pub fn context(section: &mut Section, docs: &[&Doc]) {
    section.table(env_table(docs));
    section.table(config_table(docs));
}

/// What a per-second field measures, from its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Family {
    Throughput,
    Io,
    Latency,
    Cpu,
    Errors,
    Waits,
}

fn family(name: &str) -> Option<Family> {
    let n = name.to_ascii_lowercase();
    Some(
        if n.contains("error")
            || n.contains("retr")
            || n.contains("rollback")
            || n.contains("abort")
            || n.contains("deadlock")
        {
            Family::Errors
        } else if n.contains("wait") {
            Family::Waits
        } else if n.contains("lat_ns") {
            Family::Latency
        } else if n.contains("cpu") || n.contains("utilisation") {
            Family::Cpu
        } else if n.contains("iops") {
            Family::Io
        } else if n.contains("tpm") || n.contains("tps") || n.contains("throughput") {
            Family::Throughput
        } else {
            return None;
        },
    )
}

/// Numeric fields of one interval, nested objects flattened one level (`tx.new_order`).
fn interval_fields(iv: &Value) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    if let Some(m) = iv.as_object() {
        for (k, v) in m {
            if k == "t_s" {
                continue;
            }
            match v {
                Value::Number(n) => {
                    if let Some(f) = n.as_f64() {
                        out.push((k.clone(), f));
                    }
                }
                Value::Object(inner) => {
                    for (ik, iv) in inner {
                        if let Some(f) = iv.as_f64() {
                            out.push((format!("{k}.{ik}"), f));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Per-second series of a result, by family: `{family: {field: [(t_s, value)]}}`.
fn interval_series(doc: &Doc) -> BTreeMap<Family, BTreeMap<String, Vec<(f64, f64)>>> {
    let mut out: BTreeMap<Family, BTreeMap<String, Vec<(f64, f64)>>> = BTreeMap::new();
    for iv in doc.intervals() {
        let Some(t) = num(iv, "/t_s") else { continue };
        for (name, v) in interval_fields(iv) {
            // A family's name may reach into a nested object: `waits_per_s.lock` is a wait.
            let fam = family(&name).or_else(|| name.split_once('.').and_then(|(p, _)| family(p)));
            if let Some(f) = fam {
                out.entry(f)
                    .or_default()
                    .entry(name)
                    .or_default()
                    .push((t, v));
            }
        }
    }
    out
}

/// The per-interval series of a run's headline throughput (`tpmc`, else `tps`, else the first
/// throughput figure), with its field name.
pub fn headline_intervals(doc: &Doc) -> Option<(String, Vec<(f64, f64)>)> {
    let mut series = interval_series(doc).remove(&Family::Throughput)?;
    for name in ["tpmc", "tpse_like", "tps", "tpm_total", "tpm"] {
        if let Some(points) = series.remove(name) {
            return Some((name.to_string(), points));
        }
    }
    series.into_iter().next().filter(|(_, p)| p.len() > 1)
}

/// Line charts of the per-second figures: throughput, device IOPS, latency, CPU, errors and waits.
pub fn interval_charts(section: &mut Section, ids: &mut Ids, doc: &Doc) {
    let series = interval_series(doc);
    for (fam, fields) in series {
        // Fewer than three seconds make no line worth drawing.
        if fields.values().all(|p| p.len() < 3) {
            continue;
        }
        let (title, y_label, fmt, what): (&str, &str, fn(f64) -> String, &str) = match fam {
            Family::Throughput => (
                "Throughput over time",
                "per second or minute",
                si,
                "throughput",
            ),
            Family::Io => ("Device IOPS over time", "IOPS", si, "I/Os per second"),
            Family::Latency => ("Latency over time", "latency", ns_short, "latency"),
            Family::Cpu => ("CPU over time", "CPU", si, "CPU use"),
            Family::Errors => (
                "Errors and retries over time",
                "per interval",
                si,
                "errors and retries",
            ),
            Family::Waits => ("Waits over time", "per second", si, "waits"),
        };
        let all: Vec<f64> = fields
            .values()
            .flat_map(|p| p.iter().map(|q| q.1))
            .collect();
        let scale = if fam == Family::Latency {
            auto_scale(all.iter().copied())
        } else {
            Scale::Linear
        };
        let lines: Vec<Series> = fields
            .into_iter()
            .take(12)
            .map(|(name, points)| Series::line(name, points))
            .collect();
        let desc = format!(
            "{} per interval of the measured time, one line per figure: {}.",
            what,
            lines
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        section.chart(
            svg::lines(
                &ids.next(),
                title,
                &desc,
                &lines,
                &Axis::new("time (s)", Scale::Linear, si),
                &Axis::new(y_label, scale, fmt),
                None,
            ),
            format!("{title}: each point is one interval of the measured time (t_s, seconds from its start)."),
        );
    }
}

/// The latency percentile curve of each histogram; x in "nines" (p90, p99, p99.9 …), y log-scaled.
pub fn percentile_chart(
    id: &str,
    title: &str,
    curves: &[(String, LatencyHistogram)],
) -> Option<svg::Svg> {
    let curves: Vec<&(String, LatencyHistogram)> = curves
        .iter()
        .filter(|(_, h)| h.count() > 0)
        .take(12)
        .collect();
    if curves.is_empty() {
        return None;
    }
    let mut max_nines: f64 = 1.0;
    let series: Vec<Series> = curves
        .iter()
        .map(|(name, h)| {
            let qs = svg::percentile_quantiles(h.count());
            let points = qs
                .iter()
                .map(|q| (svg::nines(*q), h.value_at_quantile(*q) as f64))
                .collect::<Vec<_>>();
            max_nines = max_nines.max(points.last().map_or(0.0, |p| p.0));
            Series::line(
                format!("{name} (n={})", crate::fmt::si(h.count() as f64)),
                points,
            )
        })
        .collect();
    let desc = format!(
        "Latency at each percentile from the stored HdrHistograms: {}.",
        curves
            .iter()
            .map(|(n, h)| format!(
                "{n} p50 {} p99 {} max {}",
                crate::fmt::ns_short(h.value_at_quantile(0.5) as f64),
                crate::fmt::ns_short(h.value_at_quantile(0.99) as f64),
                crate::fmt::ns_short(h.value_at_quantile(1.0) as f64)
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    svg::lines(
        id,
        title,
        &desc,
        &series,
        &svg::percentile_axis(max_nines),
        &Axis::new("latency", Scale::Log, ns_short),
        None,
    )
}

pub const PERCENTILE_CAPTION: &str = "Read from the left: the latency that the given share of operations stayed under (p99 = 99 % of them); the right end is the slowest operation. Both axes are logarithmic.";

/// Warnings of one result, for its section.
pub fn warnings(section: &mut Section, doc: &Doc) {
    section.warnings = doc.warnings();
}
