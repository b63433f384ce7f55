//! `device` results: IOPS and latency per job or profile, the latency percentile curve, the
//! queue-depth sweep with its geometric mean (S4's figures), and the read/write split.

use oltplab_metrics::schema::{DeviceSummary, OpSummary, ProfileResult, SweepPoint};
use oltplab_metrics::LatencyNs;

use crate::common::{self, auto_scale, lat_columns, Ids, Metric};
use crate::doc::{Doc, Figures};
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Reference, Scale, Series};

/// The device summary, read typed when the result was checked (`classify::docs`).
fn summary<'a>(doc: &'a Doc) -> Option<&'a DeviceSummary> {
    match &doc.figures {
        Figures::Device(s) => Some(s),
        _ => None,
    }
}

fn profiles<'a>(doc: &'a Doc) -> &'a [ProfileResult] {
    summary(doc)
        .and_then(|s| s.profiles.as_deref())
        .unwrap_or(&[])
}

/// The figures every point has: a queue depth of a sweep, a profile, or the whole run.
#[derive(Clone, Copy)]
pub struct Figures3<'a> {
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: &'a LatencyNs,
    pub read: &'a OpSummary,
    pub write: &'a OpSummary,
}

impl<'a> Figures3<'a> {
    fn of_point(p: &'a SweepPoint) -> Self {
        Figures3 {
            iops: p.iops,
            bw_bytes: p.bw_bytes,
            lat_ns: &p.lat_ns,
            read: &p.read,
            write: &p.write,
        }
    }

    fn of_profile(p: &'a ProfileResult) -> Self {
        Figures3 {
            iops: p.iops,
            bw_bytes: p.bw_bytes,
            lat_ns: &p.lat_ns,
            read: &p.read,
            write: &p.write,
        }
    }

    fn of_run(s: &'a DeviceSummary) -> Self {
        Figures3 {
            iops: s.iops,
            bw_bytes: s.bw_bytes,
            lat_ns: &s.lat_ns,
            read: &s.read,
            write: &s.write,
        }
    }
}

/// One measured point: a (profile, queue depth) pair, or the whole run when it had only one.
pub struct Point<'a> {
    pub label: String,
    pub profile: Option<&'a str>,
    pub qd: Option<f64>,
    pub f: Figures3<'a>,
    /// Prefix of the point's histograms, e.g. `oltp-db/qd4/`.
    pub hist_prefix: Option<String>,
}

pub fn points<'a>(doc: &'a Doc) -> Vec<Point<'a>> {
    let mut out = Vec::new();
    let Some(summary) = summary(doc) else {
        return out;
    };
    let profiles = profiles(doc);
    if !profiles.is_empty() {
        for p in profiles {
            let name = p.name.as_str();
            if p.sweep.is_empty() {
                out.push(Point {
                    label: name.to_string(),
                    profile: Some(name),
                    qd: None,
                    f: Figures3::of_profile(p),
                    hist_prefix: None,
                });
            }
            for point in &p.sweep {
                let q = point.qd;
                out.push(Point {
                    label: if p.sweep.len() > 1 {
                        format!("{name} QD{q}")
                    } else {
                        name.to_string()
                    },
                    profile: Some(name),
                    qd: Some(f64::from(q)),
                    f: Figures3::of_point(point),
                    hist_prefix: Some(format!("{name}/qd{q}/")),
                });
            }
        }
        return out;
    }
    let sweep = summary.sweep.as_deref().unwrap_or(&[]);
    if !sweep.is_empty() {
        for point in sweep {
            let q = point.qd;
            out.push(Point {
                label: format!("QD{q}"),
                profile: None,
                qd: Some(f64::from(q)),
                f: Figures3::of_point(point),
                hist_prefix: Some(format!("job/qd{q}/")),
            });
        }
        return out;
    }
    let qd = doc.config.queue_depths.first().map(|&q| q as f64);
    out.push(Point {
        // A device section's documents are device results (`summary` above).
        label: crate::doc::describe_device(&doc.config),
        profile: None,
        qd,
        f: Figures3::of_run(summary),
        hist_prefix: qd.map(|q| format!("job/qd{q}/")),
    });
    out
}

fn points_table(doc: &Doc, pts: &[Point]) -> Table {
    let mut columns = vec![
        Column::new("point", "point", Unit::Text),
        Column::new("iops", "IOPS", Unit::Count),
        Column::new("bw_bytes", "bandwidth", Unit::BytesPerS),
        Column::new("read_iops", "read IOPS", Unit::Count),
        Column::new("write_iops", "write IOPS", Unit::Count),
    ];
    columns.extend(lat_columns(""));
    columns.push(Column::new("read_lat_ns_p99", "read p99", Unit::Ns));
    columns.push(Column::new("write_lat_ns_p99", "write p99", Unit::Ns));
    let mut t = Table::new("points", "IOPS and latency per point", columns);
    let row = |label: String, f: Figures3| {
        let mut r = vec![
            Cell::Text(label),
            Cell::Num(Some(f.iops)),
            Cell::Num(Some(f.bw_bytes)),
            Cell::Num(Some(f.read.iops)),
            Cell::Num(Some(f.write.iops)),
        ];
        r.extend(common::latency_cells(f.lat_ns));
        // A side that did no I/O has no percentile.
        r.push(Cell::Num(
            (f.read.ios != 0).then_some(f.read.lat_ns.p99 as f64),
        ));
        r.push(Cell::Num(
            (f.write.ios != 0).then_some(f.write.lat_ns.p99 as f64),
        ));
        r
    };
    for p in pts {
        t.push(row(p.label.clone(), p.f));
    }
    if pts.len() > 1 {
        if let Some(s) = summary(doc) {
            t.push(row("all points".into(), Figures3::of_run(s)));
        }
    }
    t
}

fn run_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "run",
        "Run",
        vec![
            Column::new("figure", "figure", Unit::Text),
            Column::new("value", "value", Unit::Text),
        ],
    );
    let Some(r) = summary(doc) else {
        return t;
    };
    let rows: [(&str, &str, Option<f64>, Unit); 9] = [
        ("iops", "IOPS, all points", Some(r.iops), Unit::Count),
        ("bw_bytes", "bandwidth", Some(r.bw_bytes), Unit::BytesPerS),
        (
            "geomean_iops",
            "geometric mean of IOPS",
            r.geomean_iops,
            Unit::Count,
        ),
        ("read_ios", "reads", Some(r.read.ios as f64), Unit::Count),
        ("write_ios", "writes", Some(r.write.ios as f64), Unit::Count),
        (
            "measured_s",
            "measured time",
            Some(r.measured_s),
            Unit::Seconds,
        ),
        ("ramp_s", "ramp (excluded)", Some(r.ramp_s), Unit::Seconds),
        (
            "cpu_jobs_utilisation",
            "I/O threads busy",
            Some(r.cpu.jobs_utilisation),
            Unit::Share,
        ),
        (
            "ios_per_cpu_s",
            "I/Os per CPU second of the tool",
            Some(r.cpu.ios_per_cpu_s),
            Unit::Count,
        ),
    ];
    for (key, label, value, unit) in rows {
        t.push_kv(key, label, value, unit);
    }
    t
}

fn profiles_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "profiles",
        "Access profiles",
        vec![
            Column::new("profile", "profile", Unit::Text),
            Column::new("block_size_bytes", "block size", Unit::Bytes),
            Column::new("read_pct", "read %", Unit::Number),
            Column::new("random_pct", "random %", Unit::Number),
            Column::new("iops", "IOPS", Unit::Count),
            Column::new("geomean_iops", "geomean IOPS", Unit::Count),
            Column::new("bw_bytes", "bandwidth", Unit::BytesPerS),
            Column::new("lat_ns_mean", "mean", Unit::Ns),
            Column::new("lat_ns_p99", "p99", Unit::Ns),
        ],
    );
    for p in profiles(doc) {
        t.push(vec![
            Cell::text(&p.name),
            Cell::Num(Some(p.block_size_bytes as f64)),
            Cell::Num(Some(f64::from(p.read_pct))),
            Cell::Num(Some(f64::from(p.random_pct))),
            Cell::Num(Some(p.iops)),
            Cell::Num(Some(p.geomean_iops)),
            Cell::Num(Some(p.bw_bytes)),
            Cell::Num(Some(p.lat_ns.mean)),
            Cell::Num(Some(p.lat_ns.p99 as f64)),
        ]);
    }
    t
}

/// Queue depths as x ticks: 1, 2, 4 … on a log axis.
pub(crate) fn qd_axis(qds: &[f64]) -> Axis {
    let mut ticks: Vec<(f64, String)> = qds.iter().map(|q| (*q, format!("{q}"))).collect();
    ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
    ticks.dedup_by(|a, b| a.0 == b.0);
    Axis::new("queue depth", Scale::Log, |q| format!("QD{q}")).with_ticks(ticks)
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Device: {}", doc.label),
        doc.label.clone(),
        "device",
    );
    let pts = points(doc);
    if charts {
        let mut ids = Ids::new(&s.id);
        device_charts(&mut s, &mut ids, doc, &pts);
    }
    s.table(run_table(doc));
    s.table(points_table(doc, &pts));
    s.table(profiles_table(doc));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

fn device_charts(s: &mut Section, ids: &mut Ids, doc: &Doc, pts: &[Point]) {
    let profiles = profiles(doc);
    let labels: Vec<String> = pts.iter().map(|p| p.label.clone()).collect();
    // S4's summary figure: the geometric mean of IOPS over the queue depths, per profile.
    if profiles.len() > 1 {
        let names: Vec<String> = profiles.iter().map(|p| p.name.clone()).collect();
        let geo: Vec<Option<f64>> = profiles.iter().map(|p| Some(p.geomean_iops)).collect();
        let scale = auto_scale(geo.iter().flatten().copied());
        let desc = names
            .iter()
            .zip(&geo)
            .map(|(n, g)| format!("{n} {}", crate::fmt::value(*g, Unit::Count)))
            .collect::<Vec<_>>()
            .join(", ");
        s.chart(
            svg::bars(
                &ids.next(),
                "Geometric mean of IOPS per profile",
                &format!("Geometric mean of IOPS over the queue depths: {desc}."),
                &names,
                &[Series::bars("geomean IOPS", geo)],
                &Axis::new("IOPS (geometric mean)", scale, si),
                false,
                None,
            ),
            "S4's summary figure: each profile's IOPS averaged geometrically over its queue depths, so every depth counts alike.",
        );
    }
    // The queue-depth sweep: IOPS and latency against the depth, one line per profile.
    let by_profile = group_by_profile(pts);
    let swept = by_profile.iter().any(|(_, p)| p.len() > 1);
    if swept {
        let qds: Vec<f64> = pts.iter().filter_map(|p| p.qd).collect();
        let iops: Vec<Series> = by_profile
            .iter()
            .map(|(name, p)| {
                Series::line(
                    name.clone(),
                    p.iter()
                        .filter_map(|pt| Some((pt.qd?, pt.f.iops)))
                        .collect(),
                )
            })
            .collect();
        let scale = auto_scale(iops.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
        let geomean = summary(doc)
            .and_then(|s| s.geomean_iops)
            .filter(|_| profiles.is_empty());
        let reference = geomean.map(|g| Reference {
            value: g,
            label: format!("geometric mean {}", crate::fmt::value(Some(g), Unit::Count)),
        });
        s.chart(
            svg::lines(
                &ids.next(),
                "IOPS by queue depth",
                &format!("IOPS at each queue depth{}.", point_desc(pts, |f| f.iops, Unit::Count)),
                &iops,
                &qd_axis(&qds),
                &Axis::new("IOPS", scale, si),
                reference.as_ref(),
            ),
            "The queue-depth sweep: how IOPS grow with the I/Os kept in flight until the device saturates.",
        );
        let mut lat = Vec::new();
        for (name, p) in &by_profile {
            for (field, what) in [("mean", "mean"), ("p99", "p99")] {
                let label = if by_profile.len() > 1 {
                    format!("{name} {what}")
                } else {
                    what.to_string()
                };
                lat.push(Series::line(
                    label,
                    p.iter()
                        .filter_map(|pt| Some((pt.qd?, common::lat_figure(pt.f.lat_ns, field))))
                        .collect(),
                ));
            }
        }
        s.chart(
            svg::lines(
                &ids.next(),
                "Latency by queue depth",
                &format!(
                    "Mean and p99 latency at each queue depth{}.",
                    point_desc(pts, |f| f.lat_ns.p99 as f64, Unit::Ns)
                ),
                &lat,
                &qd_axis(&qds),
                &Axis::new("latency", Scale::Log, ns_short),
                None,
            ),
            "Latency rises with queue depth once the device is saturated (Little's law: depth = IOPS × latency).",
        );
    }
    // IOPS per point, split into reads and writes.
    if pts.len() > 1 || pts.iter().any(|p| p.f.write.iops > 0.0) {
        let reads: Vec<Option<f64>> = pts.iter().map(|p| Some(p.f.read.iops)).collect();
        let writes: Vec<Option<f64>> = pts.iter().map(|p| Some(p.f.write.iops)).collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "IOPS per point, reads and writes",
                &format!(
                    "Read and write IOPS per point{}.",
                    point_desc(pts, |f| f.iops, Unit::Count)
                ),
                &labels,
                &[Series::bars("read", reads), Series::bars("write", writes)],
                &Axis::new("IOPS", Scale::Linear, si),
                true,
                None,
            ),
            "Each bar is one point's IOPS; the colours split it into reads and writes.",
        );
    }
    // Latency percentiles per point.
    let lat_series: Vec<Series> = [("p50", "p50"), ("p99", "p99"), ("p999", "p99.9")]
        .iter()
        .map(|(f, l)| {
            Series::bars(
                *l,
                pts.iter()
                    .map(|p| Some(common::lat_figure(p.f.lat_ns, f)))
                    .collect(),
            )
        })
        .collect();
    s.chart(
        svg::bars(
            &ids.next(),
            "Latency per point",
            &format!(
                "p50, p99 and p99.9 latency per point{}.",
                point_desc(pts, |f| f.lat_ns.p99 as f64, Unit::Ns)
            ),
            &labels,
            &lat_series,
            &Axis::new("latency", Scale::Log, ns_short),
            false,
            None,
        ),
        "Median, p99 and p99.9 latency of each point, on a logarithmic axis.",
    );
    // Percentile curves: reads and writes over the whole run, and each point when there are a few.
    let mut curves = Vec::new();
    for name in ["read", "write"] {
        if let Some(h) = doc.histogram(name) {
            curves.push((format!("{name}s"), h));
        }
    }
    let id = ids.next();
    s.chart(
        common::percentile_chart(&id, "Latency percentiles, reads and writes", &curves),
        common::PERCENTILE_CAPTION,
    );
    if pts.len() > 1 && pts.len() <= 12 {
        let curves: Vec<_> = pts
            .iter()
            .filter_map(|p| {
                let prefix = p.hist_prefix.as_ref()?;
                let h =
                    doc.histogram_sum(&[&format!("{prefix}read"), &format!("{prefix}write")])?;
                Some((p.label.clone(), h))
            })
            .collect();
        let id = ids.next();
        s.chart(
            common::percentile_chart(&id, "Latency percentiles per point", &curves),
            "One curve per point, reads and writes together. ".to_string()
                + common::PERCENTILE_CAPTION,
        );
    }
    common::interval_charts(s, ids, doc);
}

fn group_by_profile<'a, 'b>(pts: &'b [Point<'a>]) -> Vec<(String, Vec<&'b Point<'a>>)> {
    let mut out: Vec<(String, Vec<&Point>)> = Vec::new();
    for p in pts {
        let name = p.profile.unwrap_or("IOPS").to_string();
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push(p),
            None => out.push((name, vec![p])),
        }
    }
    out
}

/// `: QD1 8,449, QD2 14,995 …` for a chart's description (the first dozen points).
fn point_desc(pts: &[Point], get: fn(&Figures3) -> f64, unit: Unit) -> String {
    let items: Vec<String> = pts
        .iter()
        .take(12)
        .map(|p| format!("{} {}", p.label, crate::fmt::value(Some(get(&p.f)), unit)))
        .collect();
    if items.is_empty() {
        String::new()
    } else {
        format!(
            ": {}{}",
            items.join(", "),
            if pts.len() > 12 { " …" } else { "" }
        )
    }
}

/// Several device results side by side, with ratios against the first.
pub fn comparison(docs: &[&Doc], charts: bool) -> Section {
    let mut s = Section::new(
        "cmp-device".into(),
        format!("Comparison of {} device results", docs.len()),
        "comparison".into(),
        "device",
    );
    let t = common::comparison_table(
        docs,
        &[
            Metric::typed(
                "iops",
                "IOPS",
                Unit::Count,
                |d| Some(summary(d)?.iops),
                Some("IOPS ×"),
            ),
            Metric::typed(
                "geomean_iops",
                "geomean IOPS",
                Unit::Count,
                |d| summary(d)?.geomean_iops,
                Some("geomean ×"),
            ),
            Metric::typed(
                "bw_bytes",
                "bandwidth",
                Unit::BytesPerS,
                |d| Some(summary(d)?.bw_bytes),
                None,
            ),
            Metric::typed(
                "lat_ns_mean",
                "mean latency",
                Unit::Ns,
                |d| Some(summary(d)?.lat_ns.mean),
                Some("mean ×"),
            ),
            Metric::typed(
                "lat_ns_p99",
                "p99",
                Unit::Ns,
                |d| Some(summary(d)?.lat_ns.p99 as f64),
                Some("p99 ×"),
            ),
        ],
    );
    // Points that several results share (same profile and depth) are compared one by one.
    let all_points: Vec<Vec<Point>> = docs.iter().map(|d| points(d)).collect();
    let mut shared: Vec<String> = Vec::new();
    for pts in &all_points {
        for p in pts {
            if !shared.contains(&p.label) {
                shared.push(p.label.clone());
            }
        }
    }
    let common_points = shared
        .iter()
        .filter(|l| {
            all_points
                .iter()
                .filter(|pts| pts.iter().any(|p| &p.label == *l))
                .count()
                > 1
        })
        .count();
    if charts {
        let mut ids = Ids::new(&s.id);
        let labels: Vec<String> = docs.iter().map(|d| d.label.clone()).collect();
        if common_points > 0 && shared.len() <= 40 {
            let series: Vec<Series> = docs
                .iter()
                .zip(&all_points)
                .map(|(d, pts)| {
                    Series::bars(
                        d.label.clone(),
                        shared
                            .iter()
                            .map(|l| pts.iter().find(|p| &p.label == l).map(|p| p.f.iops))
                            .collect(),
                    )
                })
                .collect();
            let scale = auto_scale(
                series
                    .iter()
                    .flat_map(|s| s.values.iter().flatten().copied()),
            );
            s.chart(
                svg::bars(
                    &ids.next(),
                    "IOPS per point and result",
                    "IOPS of each point, one bar per result.",
                    &shared,
                    &series,
                    &Axis::new("IOPS", scale, si),
                    false,
                    None,
                ),
                "Each group is one point; each colour one result.",
            );
        } else {
            let iops: Vec<Option<f64>> = docs.iter().map(|d| summary(d).map(|s| s.iops)).collect();
            s.chart(
                svg::bars(
                    &ids.next(),
                    "IOPS per result",
                    "IOPS of each result over all its points.",
                    &labels,
                    &[Series::bars("IOPS", iops)],
                    &Axis::new("IOPS", Scale::Linear, si),
                    false,
                    None,
                ),
                "IOPS of each result over all its points.",
            );
        }
        // Sweeps of one profile each overlay well: IOPS by queue depth, one line per result.
        let sweeps: Vec<Series> = docs
            .iter()
            .zip(&all_points)
            .filter(|(_, pts)| pts.len() > 1 && pts.iter().all(|p| p.profile.is_none()))
            .map(|(d, pts)| {
                Series::line(
                    d.label.clone(),
                    pts.iter().filter_map(|p| Some((p.qd?, p.f.iops))).collect(),
                )
            })
            .collect();
        if sweeps.len() > 1 {
            let qds: Vec<f64> = sweeps
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .collect();
            let scale = auto_scale(sweeps.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
            s.chart(
                svg::lines(
                    &ids.next(),
                    "IOPS by queue depth per result",
                    "IOPS at each queue depth, one line per result.",
                    &sweeps,
                    &qd_axis(&qds),
                    &Axis::new("IOPS", scale, si),
                    None,
                ),
                "The queue-depth sweeps of the results, overlaid.",
            );
        }
        let curves: Vec<_> = docs
            .iter()
            .filter_map(|d| Some((d.label.clone(), d.histogram_sum(&["read", "write"])?)))
            .collect();
        let id = ids.next();
        s.chart(
            common::percentile_chart(&id, "Latency percentiles per result", &curves),
            "All I/Os of each result. ".to_string() + common::PERCENTILE_CAPTION,
        );
    }
    s.table(t);
    common::context(&mut s, docs);
    s
}
