//! `replay` results: the IOPS a captured trace reached when replayed as fast as the device allows.
//! Read through the typed `ReplaySummary`.

use oltplab_schema::ReplaySummary;

use crate::common::{self, lat_columns, lat_figure, latency_cells, Ids, Metric};
use crate::doc::{Doc, Figures};
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

fn summary<'a>(doc: &'a Doc) -> Option<&'a ReplaySummary> {
    match &doc.figures {
        Figures::Replay(s) => Some(s),
        _ => None,
    }
}

/// A figure of the summary; None where the result has not got it.
fn figure(doc: &Doc, get: fn(&ReplaySummary) -> Option<f64>) -> Option<f64> {
    summary(doc).and_then(get)
}

/// Reads', writes' and (where written) syncs' IOPS and latency, in that order.
fn ops(s: &ReplaySummary) -> Vec<(&'static str, f64, &oltplab_metrics::LatencyNs)> {
    let mut out = vec![
        ("read", s.read.iops, &s.read.lat_ns),
        ("write", s.write.iops, &s.write.lat_ns),
    ];
    if let Some(sync) = &s.sync {
        out.push(("sync", sync.iops, &sync.lat_ns));
    }
    out
}

fn summary_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "summary",
        "Summary",
        vec![
            Column::new("figure", "figure", Unit::Text),
            Column::new("value", "value", Unit::Text),
        ],
    );
    let Some(s) = summary(doc) else { return t };
    t.push_kv("iops", "IOPS", Some(s.iops), Unit::Count);
    t.push_kv(
        "ops",
        "operations replayed",
        Some(s.ops as f64),
        Unit::Count,
    );
    for (key, label, value, unit) in [
        ("read_iops", "read IOPS", Some(s.read.iops), Unit::Count),
        ("write_iops", "write IOPS", Some(s.write.iops), Unit::Count),
        ("elapsed_s", "replay time", s.elapsed_s, Unit::Seconds),
        ("trace_s", "traced time", s.trace_s, Unit::Seconds),
        (
            "speedup",
            "speed-up over the traced time",
            s.speedup,
            Unit::Ratio,
        ),
    ] {
        if value.is_some() {
            t.push_kv(key, label, value, unit);
        }
    }
    t
}

fn latency_table(doc: &Doc) -> Table {
    let mut columns = vec![
        Column::new("op", "operation", Unit::Text),
        Column::new("iops", "IOPS", Unit::Count),
    ];
    columns.extend(lat_columns(""));
    let mut t = Table::new("latency", "Latency by operation", columns);
    for (op, iops, lat) in summary(doc).map(ops).unwrap_or_default() {
        let mut row = vec![Cell::text(op), Cell::Num(Some(iops))];
        row.extend(latency_cells(lat));
        t.push(row);
    }
    t
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Replay: {}", doc.label),
        doc.label.clone(),
        "replay",
    );
    if charts {
        let mut ids = Ids::new(&s.id);
        let ops: Vec<(&str, f64, &oltplab_metrics::LatencyNs)> = summary(doc)
            .map(|s| ops(s).into_iter().take(2).collect())
            .unwrap_or_default();
        let cats: Vec<String> = ["read", "write"].iter().map(|o| format!("{o}s")).collect();
        let lat: Vec<Series> = [("p50", "p50"), ("p99", "p99"), ("p999", "p99.9")]
            .iter()
            .map(|(f, l)| Series::bars(*l, ops.iter().map(|o| Some(lat_figure(o.2, f))).collect()))
            .collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "Replay IOPS, reads and writes",
                &format!(
                    "Read IOPS {}, write IOPS {}.",
                    crate::fmt::value(ops.first().map(|o| o.1), Unit::Count),
                    crate::fmt::value(ops.get(1).map(|o| o.1), Unit::Count)
                ),
                &cats,
                &[Series::bars(
                    "IOPS",
                    ops.iter().map(|o| Some(o.1)).collect(),
                )],
                &Axis::new("IOPS", Scale::Linear, si),
                false,
                None,
            ),
            "What the device delivered with the trace's I/Os and no time between them but the device's own.",
        );
        s.chart(
            svg::bars(
                &ids.next(),
                "Replay latency, reads and writes",
                "p50, p99 and p99.9 latency of reads and writes during the replay.",
                &cats,
                &lat,
                &Axis::new("latency", Scale::Log, ns_short),
                false,
                None,
            ),
            "Latency of the replayed I/Os on a logarithmic axis.",
        );
        let curves: Vec<_> = doc
            .histogram_names()
            .into_iter()
            .filter(|n| !n.contains('/'))
            .filter_map(|n| Some((n.to_string(), doc.histogram(n)?)))
            .collect();
        let id = ids.next();
        s.chart(
            common::percentile_chart(&id, "Latency percentiles", &curves),
            common::PERCENTILE_CAPTION,
        );
        common::interval_charts(&mut s, &mut ids, doc);
    }
    s.table(summary_table(doc));
    s.table(latency_table(doc));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

pub fn comparison(docs: &[&Doc], charts: bool) -> Section {
    let mut s = Section::new(
        "cmp-replay".into(),
        format!("Comparison of {} replays", docs.len()),
        "comparison".into(),
        "replay",
    );
    let t = common::comparison_table(
        docs,
        &[
            Metric::typed(
                "iops",
                "IOPS",
                Unit::Count,
                |d| figure(d, |s| Some(s.iops)),
                Some("IOPS ×"),
            ),
            Metric::typed(
                "ops",
                "operations",
                Unit::Count,
                |d| figure(d, |s| Some(s.ops as f64)),
                None,
            ),
            Metric::typed(
                "read_lat_ns_p99",
                "read p99",
                Unit::Ns,
                |d| figure(d, |s| Some(s.read.lat_ns.p99 as f64)),
                Some("read p99 ×"),
            ),
            Metric::typed(
                "write_lat_ns_p99",
                "write p99",
                Unit::Ns,
                |d| figure(d, |s| Some(s.write.lat_ns.p99 as f64)),
                Some("write p99 ×"),
            ),
        ],
    );
    if charts {
        let mut ids = Ids::new(&s.id);
        let labels: Vec<String> = docs.iter().map(|d| d.label.clone()).collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "Replay IOPS per result",
                "IOPS of each replay.",
                &labels,
                &[Series::bars(
                    "IOPS",
                    docs.iter().map(|d| figure(d, |s| Some(s.iops))).collect(),
                )],
                &Axis::new(
                    "IOPS",
                    common::auto_scale(docs.iter().filter_map(|d| figure(d, |s| Some(s.iops)))),
                    si,
                ),
                false,
                None,
            ),
            "IOPS of each replay.",
        );
        let curves: Vec<_> = docs
            .iter()
            .filter_map(|d| Some((d.label.clone(), d.histogram_sum(&["read", "write"])?)))
            .collect();
        let id = ids.next();
        s.chart(
            common::percentile_chart(&id, "Latency percentiles per result", &curves),
            common::PERCENTILE_CAPTION,
        );
    }
    s.table(t);
    common::context(&mut s, docs);
    s
}
