//! `replay` results: the IOPS a captured trace reached when replayed as fast as the device allows.

use crate::common::{self, lat_cells, lat_columns, Ids, Metric};
use crate::doc::Doc;
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

fn summary_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "summary",
        "Summary",
        vec![
            Column::new("figure", "figure", Unit::Text),
            Column::new("value", "value", Unit::Text),
        ],
    );
    t.push_kv("iops", "IOPS", doc.num("/summary/iops"), Unit::Count);
    t.push_kv(
        "ops",
        "operations replayed",
        doc.num("/summary/ops"),
        Unit::Count,
    );
    for (key, label, ptr, unit) in [
        ("read_iops", "read IOPS", "/summary/read/iops", Unit::Count),
        (
            "write_iops",
            "write IOPS",
            "/summary/write/iops",
            Unit::Count,
        ),
        (
            "elapsed_s",
            "replay time",
            "/summary/elapsed_s",
            Unit::Seconds,
        ),
        ("trace_s", "traced time", "/summary/trace_s", Unit::Seconds),
        (
            "speedup",
            "speed-up over the traced time",
            "/summary/speedup",
            Unit::Ratio,
        ),
    ] {
        if doc.v.pointer(ptr).is_some() {
            t.push_kv(key, label, doc.num(ptr), unit);
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
    for op in ["read", "write", "sync"] {
        let Some(v) = doc.v.pointer(&format!("/summary/{op}")) else {
            continue;
        };
        let mut row = vec![Cell::text(op), Cell::Num(crate::doc::num(v, "/iops"))];
        row.extend(lat_cells(v.get("lat_ns")));
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
        let ops = ["read", "write"];
        let cats: Vec<String> = ops.iter().map(|o| format!("{o}s")).collect();
        let lat: Vec<Series> = [("p50", "p50"), ("p99", "p99"), ("p999", "p99.9")]
            .iter()
            .map(|(f, l)| {
                Series::bars(
                    *l,
                    ops.iter()
                        .map(|o| doc.num(&format!("/summary/{o}/lat_ns/{f}")))
                        .collect(),
                )
            })
            .collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "Replay IOPS, reads and writes",
                &format!(
                    "Read IOPS {}, write IOPS {}.",
                    crate::fmt::value(doc.num("/summary/read/iops"), Unit::Count),
                    crate::fmt::value(doc.num("/summary/write/iops"), Unit::Count)
                ),
                &cats,
                &[Series::bars(
                    "IOPS",
                    ops.iter().map(|o| doc.num(&format!("/summary/{o}/iops"))).collect(),
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
            Metric::new("iops", "IOPS", Unit::Count, "/summary/iops", Some("IOPS ×")),
            Metric::new("ops", "operations", Unit::Count, "/summary/ops", None),
            Metric::new(
                "read_lat_ns_p99",
                "read p99",
                Unit::Ns,
                "/summary/read/lat_ns/p99",
                Some("read p99 ×"),
            ),
            Metric::new(
                "write_lat_ns_p99",
                "write p99",
                Unit::Ns,
                "/summary/write/lat_ns/p99",
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
                    docs.iter().map(|d| d.num("/summary/iops")).collect(),
                )],
                &Axis::new(
                    "IOPS",
                    common::auto_scale(docs.iter().filter_map(|d| d.num("/summary/iops"))),
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
