//! `crash` results (`oltplab crash`, docs/crash.md): per device × cache × engine setting, what the
//! power cuts left — recoveries, acknowledged commits lost, broken invariants, corrupt pages — beside
//! the promise the engine documents for that row, and every state drawn.

use oltplab_schema::{CrashRow, CrashStateOutcome, CrashSummary};

use crate::common::{self, Ids};
use crate::doc::{Doc, Figures};
use crate::fmt::{ns_short, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

/// The crash summary, read typed when the result was checked (`classify::docs`).
fn summary<'a>(doc: &'a Doc) -> Option<&'a CrashSummary> {
    match &doc.figures {
        Figures::Crash(s) => Some(s),
        _ => None,
    }
}

fn rows<'a>(doc: &'a Doc) -> &'a [CrashRow] {
    summary(doc).map_or(&[], |s| s.rows.as_slice())
}

/// A row's setting as a reader names it: `synchronous=FULL`, `synchronous_commit=off`, `default`.
fn setting(row: &CrashRow) -> String {
    match (row.setting.as_str(), row.value.as_str()) {
        ("", "") => String::new(),
        ("default", _) => "default".into(),
        (n, "") => n.into(),
        (n, v) => format!("{n}={v}"),
    }
}

/// `sata-ssd-2010 · synchronous=FULL`: unique within a result (one row per device × setting).
fn row_label(row: &CrashRow) -> String {
    format!("{} · {}", row.spec, setting(row))
}

/// A count or figure as a table cell.
fn n(v: impl Into<f64>) -> Cell {
    Cell::Num(Some(v.into()))
}

/// A 64-bit count as a table cell (as the reports show every figure: a float).
fn n64(v: u64) -> Cell {
    Cell::Num(Some(v as f64))
}

/// The share of acknowledged commits the states lost (none acknowledged: no share).
fn lost_share(row: &CrashRow) -> Option<f64> {
    (row.acknowledged_commits > 0)
        .then(|| row.commits_lost as f64 / row.acknowledged_commits as f64)
}

/// Whether the row's states kept its promise: marked where a reader must look.
fn verdict(row: &CrashRow) -> String {
    if row.unexpected_states > 0 {
        format!(
            "⚠ unexpected: {} of {} states",
            row.unexpected_states, row.states
        )
    } else {
        "as promised".into()
    }
}

fn outcome_columns(first: Column) -> Vec<Column> {
    vec![
        first,
        Column::new("cache", "cache", Unit::Text),
        Column::new("setting", "setting", Unit::Text),
        Column::new("expected", "promise", Unit::Text),
        Column::new("verdict", "verdict", Unit::Text),
        Column::new("cuts", "cuts", Unit::Count),
        Column::new("states", "states", Unit::Count),
        Column::new("recoveries_ok", "recovered", Unit::Count),
        Column::new("recovery_ns_mean", "recovery mean", Unit::Ns),
        Column::new("recovery_ns_max", "recovery max", Unit::Ns),
        Column::new("acknowledged_commits", "commits acknowledged", Unit::Count),
        Column::new("commits_lost", "commits lost", Unit::Count),
        Column::new("commits_lost_share", "lost share", Unit::Share),
        Column::new(
            "states_losing_commits",
            "states losing commits",
            Unit::Count,
        ),
        Column::new("invariants_broken", "invariants broken", Unit::Count),
        Column::new("checks_failed", "unchecked", Unit::Count),
        Column::new("corrupt_reports", "corrupt reports", Unit::Count),
        Column::new("unexpected_states", "unexpected states", Unit::Count),
    ]
}

fn outcome_cells(row: &CrashRow) -> Vec<Cell> {
    vec![
        Cell::text(&row.cache),
        Cell::text(setting(row)),
        Cell::text(&row.expected),
        Cell::text(verdict(row)),
        n(row.cuts),
        n(row.states),
        n(row.recoveries_ok),
        n(row.recovery_ns_mean),
        n64(row.recovery_ns_max),
        n64(row.acknowledged_commits),
        n64(row.commits_lost),
        Cell::Num(lost_share(row)),
        n(row.states_losing_commits),
        n(row.invariants_broken),
        n(row.checks_failed),
        n(row.corrupt_reports),
        n(row.unexpected_states),
    ]
}

fn outcome_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "rows",
        "Power cuts per device × cache × setting",
        outcome_columns(Column::new("device", "device", Unit::Text)),
    );
    for row in rows(doc) {
        let mut cells = vec![Cell::text(&row.spec)];
        cells.extend(outcome_cells(row));
        t.push(cells);
        *t.row_keys.last_mut().expect("just pushed") = Some(row_label(row));
    }
    t
}

fn writes_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "writes",
        "Writes at the cut, and the time of a cycle",
        vec![
            Column::new("device", "device", Unit::Text),
            Column::new("setting", "setting", Unit::Text),
            Column::new("cache_bytes", "cache size", Unit::Bytes),
            Column::new("sector_bytes", "atomic unit", Unit::Bytes),
            Column::new("pending_writes_mean", "pending writes, mean", Unit::Number),
            Column::new("lost_writes", "writes lost", Unit::Count),
            Column::new("torn_writes", "writes torn", Unit::Count),
            Column::new("pages_repaired", "pages repaired", Unit::Count),
            Column::new("cycle_s_mean", "cycle, mean", Unit::Seconds),
        ],
    );
    for row in rows(doc) {
        t.push(vec![
            Cell::text(&row.spec),
            Cell::text(setting(row)),
            n64(row.cache_bytes),
            n64(row.sector_bytes),
            n(row.pending_writes_mean),
            n64(row.lost_writes),
            n64(row.torn_writes),
            Cell::Num(row.pages_repaired.map(f64::from)),
            n(row.cycle_s_mean),
        ]);
        *t.row_keys.last_mut().expect("just pushed") = Some(row_label(row));
    }
    t
}

/// Every state drawn: the seed replays it (`summary.states[].seed`, docs/crash.md).
fn states_table(doc: &Doc) -> Table {
    let rows = rows(doc);
    let mut t = Table::new(
        "states",
        "Every state",
        vec![
            Column::new("row", "row", Unit::Text),
            Column::new("cut", "cut", Unit::Count),
            Column::new("state", "state", Unit::Count),
            // Text: a 64-bit seed does not survive a float.
            Column::new("seed", "seed", Unit::Text),
            Column::new("cut_at_s", "cut at", Unit::Seconds),
            Column::new("pending_writes", "pending writes", Unit::Count),
            Column::new("lost_writes", "writes lost", Unit::Count),
            Column::new("torn_writes", "writes torn", Unit::Count),
            Column::new("recovered", "recovered", Unit::Text),
            Column::new("recovery_ns", "recovery", Unit::Ns),
            Column::new("acknowledged_commits", "commits acknowledged", Unit::Count),
            Column::new("commits_lost", "commits lost", Unit::Count),
            Column::new("invariants_broken", "invariants broken", Unit::Text),
            Column::new("corrupt_reports", "corrupt reports", Unit::Count),
            Column::new("pages_repaired", "pages repaired", Unit::Count),
        ],
    );
    let states: &[CrashStateOutcome] = summary(doc).map_or(&[], |s| s.states.as_slice());
    for st in states {
        let label = rows.get(st.row).map(row_label).unwrap_or_default();
        let broken = if st.invariants_broken.is_empty() {
            "none".to_string()
        } else {
            (st.invariants_broken.iter())
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        t.push(vec![
            Cell::text(label),
            n(st.cut),
            n(st.state),
            Cell::text(st.seed.to_string()),
            n(st.cut_at_s),
            n64(st.pending_writes),
            n64(st.lost_writes),
            n64(st.torn_writes),
            Cell::text(if st.recovered { "yes" } else { "no" }),
            n64(st.recovery_ns),
            n64(st.acknowledged_commits),
            n64(st.commits_lost),
            Cell::text(broken),
            n(st.corrupt_reports),
            Cell::Num(st.pages_repaired.map(f64::from)),
        ]);
        *t.row_keys.last_mut().expect("just pushed") =
            Some(format!("row{}/cut{}/state{}", st.row, st.cut, st.state));
    }
    t
}

/// What was cut, how often, for the section's first note.
fn describe_run(doc: &Doc) -> String {
    let Some(summary) = summary(doc) else {
        return "Power cuts.".into();
    };
    let mut parts = vec![format!("{} on {}", summary.workload, summary.engine)];
    // Written only for TPC-C: the other workloads have none.
    if summary.warehouses != 0 {
        let w = summary.warehouses;
        parts.push(format!("{w} warehouse{}", if w == 1 { "" } else { "s" }));
    }
    if let (Some(c), Some(s)) = (doc.config.cuts, doc.config.states) {
        parts.push(format!("{c} cuts per row, {s} states per cut"));
    }
    if let Some(seed) = doc.config.seed {
        parts.push(format!("seed {seed}"));
    }
    let mut text = format!("Power cuts: {}.", parts.join(", "));
    text.push_str(
        " Each row's promise is what the engine documents for that cache and setting; a state outside it is counted in \"unexpected states\" and named in the warnings.",
    );
    text
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Crash: {}", doc.label),
        doc.label.clone(),
        "crash",
    );
    s.notes.push(describe_run(doc));
    if summary(doc).is_some_and(|s| s.interrupted) {
        s.notes.push(
            "Interrupted: the rows hold the cuts finished before Ctrl-C, fewer than asked.".into(),
        );
    }
    if charts {
        let rows = rows(doc);
        let labels: Vec<String> = rows.iter().map(row_label).collect();
        let mut ids = Ids::new(&s.id);
        s.chart(
            svg::bars(
                &ids.next(),
                "Acknowledged commits lost, per row",
                "The share of the commits the driver saw acknowledged before the cut that the recovered states did not have, summed over each row's states.",
                &labels,
                &[Series::bars(
                    "commits lost",
                    rows.iter().map(lost_share).collect(),
                )],
                &Axis::new("commits lost", Scale::Linear, |v| {
                    format!("{:.0} %", v * 100.0)
                }),
                false,
                None,
            ),
            "A row whose promise is \"nothing lost\" must stay at 0 %; a state the engine could not start on counts every acknowledged commit as lost.",
        );
        s.chart(
            svg::bars(
                &ids.next(),
                "Recovery time, per row",
                "Mean and longest time from opening or starting the engine on a state to its first answer.",
                &labels,
                &[
                    Series::bars(
                        "mean",
                        rows.iter().map(|r| Some(r.recovery_ns_mean)).collect(),
                    ),
                    Series::bars(
                        "max",
                        rows.iter()
                            .map(|r| Some(r.recovery_ns_max as f64))
                            .collect(),
                    ),
                ],
                &Axis::new("recovery", Scale::Log, ns_short),
                false,
                None,
            ),
            "The engine's own crash recovery on what survived, on a logarithmic axis; on a server it includes the process start.",
        );
    }
    s.table(outcome_table(doc));
    s.table(writes_table(doc));
    s.table(states_table(doc));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

/// Several crash results: every row of each, side by side (each result's section follows).
pub fn comparison(docs: &[&Doc], _charts: bool) -> Section {
    let mut s = Section::new(
        "cmp-crash".into(),
        format!("Comparison of {} crash results", docs.len()),
        "comparison".into(),
        "crash",
    );
    let mut columns = vec![Column::new("result", "result", Unit::Text)];
    columns.extend(outcome_columns(Column::new("device", "device", Unit::Text)));
    let mut t = Table::new("comparison", "Every row of every result", columns);
    for d in docs {
        for row in rows(d) {
            let mut cells = vec![Cell::text(d.label.clone()), Cell::text(&row.spec)];
            cells.extend(outcome_cells(row));
            t.push(cells);
            *t.row_keys.last_mut().expect("just pushed") =
                Some(format!("{} · {}", d.label, row_label(row)));
        }
    }
    s.table(t);
    common::context(&mut s, docs);
    s
}
