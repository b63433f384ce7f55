//! `study --scenario profiles` results (S4): for each device set the twelve server access profiles'
//! IOPS at every queue depth with their geometric means, each set's geometric mean per queue depth
//! against the depth, each profile's ratio against the baseline set, and one drive of each set's
//! 16 KiB sequential reads and writes.

use serde_json::Value;

use crate::common::{self, auto_scale, Ids};
use crate::doc::{num, Doc};
use crate::fmt::{si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Reference, Series};

/// True for a study of this scenario.
pub fn is_profiles(doc: &Doc) -> bool {
    doc.str("/summary/scenario") == Some("profiles")
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("?")
}

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The spec of the set the ratios are against (`ratio.against` names it), for readers.
fn against(sets: &[Value]) -> String {
    let name = sets
        .iter()
        .find_map(|s| s.pointer("/ratio/against").and_then(Value::as_str));
    sets.iter()
        .find(|s| s.get("name").and_then(Value::as_str) == name)
        .or(sets.first())
        .map_or_else(|| "the first set".into(), |s| text(s, "spec").to_string())
}

/// The IOPS of profile `p` at queue depth `qd`.
fn iops_at(p: &Value, qd: f64) -> Option<f64> {
    let i = array(p, "qd").iter().position(|q| q.as_f64() == Some(qd))?;
    array(p, "iops").get(i).and_then(Value::as_f64)
}

fn set_table(set: &Value, index: usize, qds: &[f64]) -> Table {
    let mut columns = vec![Column::new("profile", "profile", Unit::Text)];
    for qd in qds {
        columns.push(Column::new(
            &format!("iops_qd{qd}"),
            &format!("QD {qd}"),
            Unit::Count,
        ));
    }
    columns.push(Column::new("geomean_iops", "geomean", Unit::Count));
    let mut t = Table::new(
        &format!("set{}", index + 1),
        &format!("IOPS of every profile on {}", text(set, "spec")),
        columns,
    );
    for p in array(set, "profiles") {
        let mut row = vec![Cell::text(text(p, "name"))];
        row.extend(qds.iter().map(|qd| Cell::Num(iops_at(p, *qd))));
        row.push(Cell::Num(num(p, "/geomean_iops")));
        t.push(row);
    }
    let mut row = vec![Cell::text("geometric mean")];
    row.extend(qds.iter().map(|qd| {
        Cell::Num(
            array(set, "geomean_by_qd")
                .iter()
                .find(|g| num(g, "/qd") == Some(*qd))
                .and_then(|g| num(g, "/geomean_iops")),
        )
    }));
    row.push(Cell::Num(num(set, "/geomean_iops")));
    t.push(row);
    t
}

fn ratio_table(sets: &[Value]) -> Table {
    let mut columns = vec![Column::new("profile", "profile", Unit::Text)];
    let others: Vec<&Value> = sets.iter().filter(|s| s.get("ratio").is_some()).collect();
    for s in &others {
        columns.push(Column::new(
            &format!("{}_ratio", text(s, "name")),
            &format!("{} ×", text(s, "spec")),
            Unit::Ratio,
        ));
    }
    let against = against(sets);
    let mut t = Table::new(
        "ratio",
        &format!("Geometric mean of IOPS against {against}, per profile"),
        columns,
    );
    let names: Vec<&str> = sets
        .first()
        .map(|s| {
            array(s, "profiles")
                .iter()
                .map(|p| text(p, "name"))
                .collect()
        })
        .unwrap_or_default();
    for name in names {
        let mut row = vec![Cell::text(name)];
        row.extend(others.iter().map(|s| Cell::Num(profile_ratio(s, name))));
        t.push(row);
    }
    let mut row = vec![Cell::text("all profiles")];
    row.extend(
        others
            .iter()
            .map(|s| Cell::Num(num(s, "/ratio/geomean_iops_ratio"))),
    );
    t.push(row);
    t
}

fn profile_ratio(set: &Value, name: &str) -> Option<f64> {
    set.pointer("/ratio/profiles")
        .and_then(Value::as_array)?
        .iter()
        .find(|r| r.get("name").and_then(Value::as_str) == Some(name))
        .and_then(|r| num(r, "/geomean_iops_ratio"))
}

fn drive_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "drive_seq16k",
        "16 KiB sequential reads and writes of one drive of each set",
        vec![
            Column::new("device", "drive", Unit::Text),
            Column::new("qd", "QD", Unit::Count),
            Column::new("read_iops", "read IOPS", Unit::Count),
            Column::new("read_bw_bytes", "read", Unit::BytesPerS),
            Column::new("read_lat_ns_mean", "read latency", Unit::Ns),
            Column::new("write_iops", "write IOPS", Unit::Count),
            Column::new("write_bw_bytes", "write", Unit::BytesPerS),
            Column::new("write_lat_ns_mean", "write latency", Unit::Ns),
        ],
    );
    for d in doc.array("/summary/drive_seq16k") {
        t.push(vec![
            Cell::text(text(d, "device")),
            Cell::Num(num(d, "/qd")),
            Cell::Num(num(d, "/read_iops")),
            Cell::Num(num(d, "/read_bw_bytes")),
            Cell::Num(num(d, "/read_lat_ns_mean")),
            Cell::Num(num(d, "/write_iops")),
            Cell::Num(num(d, "/write_bw_bytes")),
            Cell::Num(num(d, "/write_lat_ns_mean")),
        ]);
    }
    t
}

fn random_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "random_qd4",
        "Random reads and random writes of each set at queue depth 4",
        vec![
            Column::new("set", "set", Unit::Text),
            Column::new("block_size_bytes", "block", Unit::Bytes),
            Column::new("read_iops", "read IOPS", Unit::Count),
            Column::new("read_lat_ns_mean", "read latency", Unit::Ns),
            Column::new("write_iops", "write IOPS", Unit::Count),
            Column::new("write_lat_ns_mean", "write latency", Unit::Ns),
        ],
    );
    for r in doc.array("/summary/random_qd4") {
        t.push(vec![
            Cell::text(text(r, "set")),
            Cell::Num(num(r, "/block_size_bytes")),
            Cell::Num(num(r, "/read_iops")),
            Cell::Num(num(r, "/read_lat_ns_mean")),
            Cell::Num(num(r, "/write_iops")),
            Cell::Num(num(r, "/write_lat_ns_mean")),
        ]);
    }
    t
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Study (server access profiles, S4): {}", doc.label),
        doc.label.clone(),
        "study",
    );
    let sets = doc.array("/summary/sets");
    let qds: Vec<f64> = doc
        .array("/summary/qd")
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    s.notes.push(format!(
        "Each set ran S4's twelve server access profiles at queue depths {} on the emulated device ({} s per point after {} s of warm-up); a profile's figure is the geometric mean of its IOPS over the depths, so every depth counts alike.",
        qds.iter().map(|q| q.to_string()).collect::<Vec<_>>().join(", "),
        doc.num("/summary/runtime_s").map_or("?".into(), |v| v.to_string()),
        doc.num("/summary/ramp_s").map_or("?".into(), |v| v.to_string()),
    ));
    for set in sets {
        if set.get("complete") == Some(&Value::Bool(false)) {
            s.notes.push(format!(
                "{}: Ctrl-C stopped this set, so its geometric means cover only the points measured before, and its ratios only the profiles it finished.",
                text(set, "spec")
            ));
        }
    }
    for set in sets.iter().skip(1) {
        if let Some(r) = num(set, "/ratio/geomean_iops_ratio") {
            s.notes.push(format!(
                "{}: {} the IOPS of {} (geometric mean over every profile and queue depth).",
                text(set, "spec"),
                crate::fmt::value(Some(r), Unit::Ratio),
                against(sets)
            ));
        }
    }
    if charts && !sets.is_empty() {
        let mut ids = Ids::new(&s.id);
        profile_charts(&mut s, &mut ids, sets, &qds);
    }
    for (i, set) in sets.iter().enumerate() {
        s.table(set_table(set, i, &qds));
    }
    if sets.len() > 1 {
        s.table(ratio_table(sets));
    }
    if !doc.array("/summary/random_qd4").is_empty() {
        s.table(random_table(doc));
    }
    s.table(drive_table(doc));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

fn profile_charts(s: &mut Section, ids: &mut Ids, sets: &[Value], qds: &[f64]) {
    let series: Vec<Series> = sets
        .iter()
        .map(|set| {
            Series::line(
                text(set, "spec").to_string(),
                array(set, "geomean_by_qd")
                    .iter()
                    .filter_map(|g| Some((num(g, "/qd")?, num(g, "/geomean_iops")?)))
                    .collect(),
            )
        })
        .collect();
    let all: Vec<f64> = sets
        .iter()
        .flat_map(|set| {
            array(set, "geomean_by_qd")
                .iter()
                .filter_map(|g| num(g, "/geomean_iops"))
        })
        .collect();
    s.chart(
        svg::lines(
            &ids.next(),
            "Geometric mean of the profiles' IOPS against queue depth",
            "At each queue depth, the geometric mean of the twelve profiles' IOPS, one line per device set.",
            &series,
            &crate::device::qd_axis(qds),
            &Axis::new("IOPS (geometric mean)", auto_scale(all), si),
            None,
        ),
        "S4's view of the sets: how much each gains from a deeper queue; the gap between the lines is the sets' ratio at that depth.",
    );
    let others: Vec<&Value> = sets.iter().filter(|s| s.get("ratio").is_some()).collect();
    let Some(first) = others.first() else {
        return;
    };
    let names: Vec<String> = array(first, "profiles")
        .iter()
        .map(|p| text(p, "name").to_string())
        .collect();
    let bars: Vec<Series> = others
        .iter()
        .map(|set| {
            Series::bars(
                text(set, "spec").to_string(),
                names.iter().map(|n| profile_ratio(set, n)).collect(),
            )
        })
        .collect();
    let ratios = bars.iter().flat_map(|b| b.values.iter().flatten().copied());
    let against = against(sets);
    s.chart(
        svg::bars(
            &ids.next(),
            &format!("Ratio against {against} per profile"),
            &format!(
                "Each profile's geometric mean of IOPS over the queue depths, divided by {against}'s."
            ),
            &names,
            &bars,
            &Axis::new("× the baseline", auto_scale(ratios), si),
            false,
            Some(&Reference {
                value: 1.0,
                label: "1×".into(),
            }),
        ),
        "Above 1×, the set does more I/O per second than the baseline with that profile; random small I/O gains the most from flash, sequential large I/O the least.",
    );
}
