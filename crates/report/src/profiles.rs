//! `study --scenario profiles` results (S4): for each device set the twelve server access profiles'
//! IOPS at every queue depth with their geometric means, each set's geometric mean per queue depth
//! against the depth, each profile's ratio against the baseline set, and one drive of each set's
//! 16 KiB sequential reads and writes. Read through the typed `ProfilesSummary`.

use oltplab_schema::{DriveSeq, ProfileFigures, ProfileSet, ProfilesSummary, RandomQd4};

use crate::common::{self, auto_scale, Ids};
use crate::doc::{Doc, Figures};
use crate::fmt::{si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Reference, Series};

/// True for a study of this scenario (its summary read typed by `classify::docs`).
pub fn is_profiles(doc: &Doc) -> bool {
    summary(doc).is_some()
}

/// The summary, read typed when the result was checked (`classify::docs`).
fn summary<'a>(doc: &'a Doc) -> Option<&'a ProfilesSummary> {
    match &doc.figures {
        Figures::Profiles(s) => Some(s),
        _ => None,
    }
}

/// The label of a profiles study, e.g. `study profiles, raid5(4,hdd-15k) vs raid5(4,sas-ssd-2012)`.
pub fn label(doc: &Doc) -> String {
    let sets: Vec<&str> = summary(doc)
        .map(|s| s.sets.iter().map(|s| s.spec.as_str()).collect())
        .unwrap_or_default();
    format!("study profiles, {}", sets.join(" vs "))
}

/// The spec of the set the ratios are against (`ratio.against` names it), for readers.
fn against(sets: &[ProfileSet]) -> String {
    let name = sets
        .iter()
        .find_map(|s| s.ratio.as_ref().map(|r| r.against.as_str()));
    sets.iter()
        .find(|s| Some(s.name.as_str()) == name)
        .or(sets.first())
        .map_or_else(|| "the first set".into(), |s| s.spec.clone())
}

/// The IOPS of profile `p` at queue depth `qd`.
fn iops_at(p: &ProfileFigures, qd: u32) -> Option<f64> {
    let i = p.qd.iter().position(|q| *q == qd)?;
    p.iops.get(i).copied()
}

fn set_table(set: &ProfileSet, index: usize, qds: &[u32]) -> Table {
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
        &format!("IOPS of every profile on {}", set.spec),
        columns,
    );
    for p in &set.profiles {
        let mut row = vec![Cell::text(&p.name)];
        row.extend(qds.iter().map(|qd| Cell::Num(iops_at(p, *qd))));
        row.push(Cell::Num(Some(p.geomean_iops)));
        t.push(row);
    }
    let mut row = vec![Cell::text("geometric mean")];
    row.extend(qds.iter().map(|qd| {
        Cell::Num(
            set.geomean_by_qd
                .iter()
                .find(|g| g.qd == *qd)
                .map(|g| g.geomean_iops),
        )
    }));
    row.push(Cell::Num(Some(set.geomean_iops)));
    t.push(row);
    t
}

fn ratio_table(sets: &[ProfileSet]) -> Table {
    let mut columns = vec![Column::new("profile", "profile", Unit::Text)];
    let others: Vec<&ProfileSet> = sets.iter().filter(|s| s.ratio.is_some()).collect();
    for s in &others {
        columns.push(Column::new(
            &format!("{}_ratio", s.name),
            &format!("{} ×", s.spec),
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
        .map(|s| s.profiles.iter().map(|p| p.name.as_str()).collect())
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
            .map(|s| Cell::Num(s.ratio.as_ref().map(|r| r.geomean_iops_ratio))),
    );
    t.push(row);
    t
}

fn profile_ratio(set: &ProfileSet, name: &str) -> Option<f64> {
    set.ratio
        .as_ref()?
        .profiles
        .iter()
        .find(|r| r.name == name)
        .map(|r| r.geomean_iops_ratio)
}

fn drive_table(drives: &[DriveSeq]) -> Table {
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
    for d in drives {
        t.push(vec![
            Cell::text(&d.device),
            Cell::Num(Some(f64::from(d.qd))),
            Cell::Num(Some(d.read_iops)),
            Cell::Num(Some(d.read_bw_bytes)),
            Cell::Num(Some(d.read_lat_ns_mean)),
            Cell::Num(Some(d.write_iops)),
            Cell::Num(Some(d.write_bw_bytes)),
            Cell::Num(Some(d.write_lat_ns_mean)),
        ]);
    }
    t
}

fn random_table(random: &[RandomQd4]) -> Table {
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
    for r in random {
        t.push(vec![
            Cell::text(&r.set),
            Cell::Num(Some(r.block_size_bytes as f64)),
            Cell::Num(Some(r.read_iops)),
            Cell::Num(Some(r.read_lat_ns_mean)),
            Cell::Num(Some(r.write_iops)),
            Cell::Num(Some(r.write_lat_ns_mean)),
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
    // `study::section` calls this only for a typed summary; an empty one shows nothing.
    let empty;
    let summary = match summary(doc) {
        Some(summary) => summary,
        None => {
            empty = ProfilesSummary::default();
            &empty
        }
    };
    let sets = summary.sets.as_slice();
    let qds = summary.qd.as_slice();
    s.notes.push(format!(
        "Each set ran S4's twelve server access profiles at queue depths {} on the emulated device ({} s per point after {} s of warm-up); a profile's figure is the geometric mean of its IOPS over the depths, so every depth counts alike.",
        qds.iter().map(|q| q.to_string()).collect::<Vec<_>>().join(", "),
        summary.runtime_s,
        summary.ramp_s,
    ));
    for set in sets {
        if !set.complete {
            s.notes.push(format!(
                "{}: Ctrl-C stopped this set, so its geometric means cover only the points measured before, and its ratios only the profiles it finished.",
                set.spec
            ));
        }
    }
    for set in sets.iter().skip(1) {
        if let Some(r) = &set.ratio {
            s.notes.push(format!(
                "{}: {} the IOPS of {} (geometric mean over every profile and queue depth).",
                set.spec,
                crate::fmt::value(Some(r.geomean_iops_ratio), Unit::Ratio),
                against(sets)
            ));
        }
    }
    if charts && !sets.is_empty() {
        let mut ids = Ids::new(&s.id);
        profile_charts(&mut s, &mut ids, sets, qds);
    }
    for (i, set) in sets.iter().enumerate() {
        s.table(set_table(set, i, qds));
    }
    if sets.len() > 1 {
        s.table(ratio_table(sets));
    }
    if !summary.random_qd4.is_empty() {
        s.table(random_table(&summary.random_qd4));
    }
    s.table(drive_table(&summary.drive_seq16k));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

fn profile_charts(s: &mut Section, ids: &mut Ids, sets: &[ProfileSet], qds: &[u32]) {
    let series: Vec<Series> = sets
        .iter()
        .map(|set| {
            Series::line(
                set.spec.clone(),
                set.geomean_by_qd
                    .iter()
                    .map(|g| (f64::from(g.qd), g.geomean_iops))
                    .collect(),
            )
        })
        .collect();
    let all: Vec<f64> = sets
        .iter()
        .flat_map(|set| set.geomean_by_qd.iter().map(|g| g.geomean_iops))
        .collect();
    let qds: Vec<f64> = qds.iter().map(|q| f64::from(*q)).collect();
    s.chart(
        svg::lines(
            &ids.next(),
            "Geometric mean of the profiles' IOPS against queue depth",
            "At each queue depth, the geometric mean of the twelve profiles' IOPS, one line per device set.",
            &series,
            &crate::device::qd_axis(&qds),
            &Axis::new("IOPS (geometric mean)", auto_scale(all), si),
            None,
        ),
        "S4's view of the sets: how much each gains from a deeper queue; the gap between the lines is the sets' ratio at that depth.",
    );
    let others: Vec<&ProfileSet> = sets.iter().filter(|s| s.ratio.is_some()).collect();
    let Some(first) = others.first() else {
        return;
    };
    let names: Vec<String> = first.profiles.iter().map(|p| p.name.clone()).collect();
    let bars: Vec<Series> = others
        .iter()
        .map(|set| {
            Series::bars(
                set.spec.clone(),
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
