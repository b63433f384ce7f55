//! `study --scenario in-memory` results (S5): disk versus memory tables, update and insert, over a
//! sweep of connection counts — the elapsed time of the fixed work, the throughput and the waits
//! against the number of connections, and the CPU the machine spent.

use oltplab_schema::{InMemoryPoint, InMemoryRun, InMemorySummary};

use crate::common::{self, auto_scale, Ids};
use crate::doc::{Doc, Figures};
use crate::fmt::{si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

/// True for a study of this scenario.
pub fn is_in_memory(doc: &Doc) -> bool {
    summary(doc).is_some()
}

/// The summary, read typed when the result was checked (`classify::docs`).
fn summary<'a>(doc: &'a Doc) -> Option<&'a InMemorySummary> {
    match &doc.figures {
        Figures::InMemory(s) => Some(s),
        _ => None,
    }
}

/// One (tables, mode) sweep.
struct Run<'a> {
    name: String,
    r: &'a InMemoryRun,
}

fn runs<'a>(doc: &'a Doc) -> Vec<Run<'a>> {
    summary(doc)
        .map_or(&[][..], |s| s.runs.as_slice())
        .iter()
        .map(|r| Run {
            name: format!("{} {}", r.tables, r.mode),
            r,
        })
        .collect()
}

fn points<'a>(run: &Run<'a>) -> &'a [InMemoryPoint] {
    &run.r.points
}

/// Sum of one point's waiting sessions over all kinds.
fn sessions_total(p: &InMemoryPoint) -> Option<f64> {
    Some(p.waiting_sessions.values().sum())
}

/// The kinds with the most waiting sessions of a point, e.g. `LWLock 6.9, IO 0.7`.
fn top_waits(p: &InMemoryPoint) -> String {
    let mut v: Vec<(&String, f64)> = p.waiting_sessions.iter().map(|(k, x)| (k, *x)).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.iter()
        .take(3)
        .map(|(k, x)| format!("{k} {}", crate::fmt::value(Some(*x), Unit::Number)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A point's figure by its field name, for the charts.
fn figure(p: &InMemoryPoint, field: &str) -> Option<f64> {
    Some(match field {
        "elapsed_s" => p.elapsed_s,
        "tps" => p.tps,
        "cpu_utilisation" => p.cpu_utilisation,
        _ => return None,
    })
}

fn sweeps_table(runs: &[Run]) -> Table {
    let mut t = Table::new(
        "sweeps",
        "Every sweep point",
        vec![
            Column::new("run", "tables and mode", Unit::Text),
            Column::new("connections", "connections", Unit::Count),
            Column::new("elapsed_s", "elapsed", Unit::Seconds),
            Column::new("tps", "transactions/s", Unit::Number),
            Column::new("lat_ns_p99", "p99", Unit::Ns),
            Column::new("cpu_utilisation", "CPU busy", Unit::Share),
            Column::new("waiting_sessions", "sessions waiting", Unit::Number),
            Column::new("top_waits", "mostly on", Unit::Text),
        ],
    );
    for r in runs {
        for p in points(r) {
            t.push(vec![
                Cell::Text(r.name.clone()),
                Cell::Num(Some(f64::from(p.connections))),
                Cell::Num(Some(p.elapsed_s)),
                Cell::Num(Some(p.tps)),
                Cell::Num(Some(p.lat_ns.p99 as f64)),
                Cell::Num(Some(p.cpu_utilisation)),
                Cell::Num(sessions_total(p)),
                Cell::Text(top_waits(p)),
            ]);
        }
    }
    t
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Study (in-memory tables, S5): {}", doc.label),
        doc.label.clone(),
        "study",
    );
    let runs = runs(doc);
    s.notes.push(format!(
        "{}: every connection ran {} transactions (insert: one order and its five lines; update: a random existing order and its five lines); the elapsed time of that fixed work is S5's figure.",
        summary(doc).map_or("the engine", |s| s.engine.as_str()),
        crate::fmt::value(
            summary(doc).map(|s| s.tx_per_connection as f64),
            Unit::Count
        )
    ));
    if runs.iter().any(|r| !r.r.survives_crash) {
        s.notes.push(
            "Memory tables (PostgreSQL UNLOGGED, MariaDB MEMORY, SQLite in memory) do not survive a crash: their speed is bought with durability.".into(),
        );
    }
    if runs.iter().any(|r| r.r.waits_unit == "waiting_sessions") {
        s.notes.push(
            "PostgreSQL counts no waits: its waits are the average number of sessions seen waiting in samples of pg_stat_activity.".into(),
        );
    }
    if charts && !runs.is_empty() {
        let mut ids = Ids::new(&s.id);
        study_charts(&mut s, &mut ids, &runs);
    }
    s.table(sweeps_table(&runs));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

fn study_charts(s: &mut Section, ids: &mut Ids, runs: &[Run]) {
    let mut connections: Vec<f64> = runs
        .iter()
        .flat_map(|r| points(r).iter().map(|p| f64::from(p.connections)))
        .collect();
    connections.sort_by(f64::total_cmp);
    connections.dedup();
    let cats: Vec<String> = connections.iter().map(|c| format!("{c}")).collect();
    let at = |r: &Run, c: f64, field: &str| {
        points(r)
            .iter()
            .find(|p| f64::from(p.connections) == c)
            .and_then(|p| figure(p, field))
    };
    let all = |field: &str| -> Vec<f64> {
        runs.iter()
            .flat_map(|r| points(r).iter().filter_map(|p| figure(p, field)))
            .collect()
    };
    let elapsed: Vec<Series> = runs
        .iter()
        .map(|r| {
            Series::bars(
                r.name.clone(),
                connections.iter().map(|c| at(r, *c, "elapsed_s")).collect(),
            )
        })
        .collect();
    s.chart(
        svg::bars(
            &ids.next(),
            "Elapsed time of the fixed work",
            "Seconds until every connection had run its transactions, per connection count, for each table kind and mode.",
            &cats,
            &elapsed,
            &Axis::new("seconds", auto_scale(all("elapsed_s")), si),
            false,
            None,
        ),
        "S5's first view: the same work per connection; a shorter bar is a faster engine for that table kind.",
    );
    let x_scale = auto_scale(connections.iter().copied());
    let line = |field: &str| -> Vec<Series> {
        runs.iter()
            .map(|r| {
                Series::line(
                    r.name.clone(),
                    points(r)
                        .iter()
                        .filter_map(|p| Some((f64::from(p.connections), figure(p, field)?)))
                        .collect(),
                )
            })
            .collect()
    };
    s.chart(
        svg::lines(
            &ids.next(),
            "Throughput against connections",
            "Transactions per second at each number of connections, one line per table kind and mode.",
            &line("tps"),
            &Axis::new("connections", x_scale, si),
            &Axis::new("transactions per second", auto_scale(all("tps")), si),
            None,
        ),
        "S5's second view: where each table kind stops scaling as connections are added.",
    );
    let sessions: Vec<Series> = runs
        .iter()
        .map(|r| {
            Series::line(
                r.name.clone(),
                points(r)
                    .iter()
                    .filter_map(|p| Some((f64::from(p.connections), sessions_total(p)?)))
                    .collect(),
            )
        })
        .collect();
    s.chart(
        svg::lines(
            &ids.next(),
            "Waits against connections",
            "The average number of sessions waiting (all kinds together) at each number of connections.",
            &sessions,
            &Axis::new("connections", x_scale, si),
            &Axis::new("sessions waiting", Scale::Linear, si),
            None,
        ),
        "S5's third view (latch waits): how much of the concurrency is spent waiting; the table of sweep points names the kinds.",
    );
    s.chart(
        svg::lines(
            &ids.next(),
            "CPU against connections",
            "Share of the machine's CPU the database and the driver used, at each number of connections.",
            &line("cpu_utilisation"),
            &Axis::new("connections", x_scale, si),
            &Axis::new("CPU busy", Scale::Linear, |v| format!("{:.0} %", v * 100.0)),
            None,
        ),
        "A table kind that leaves the CPU idle while throughput stalls is waiting — on the log, on latches or on locks.",
    );
}
