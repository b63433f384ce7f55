//! `run` results (TPC-C and orders): throughput over time, per-transaction-type latency percentiles,
//! CPU and device IOPS, errors and retries, and an orders connection sweep. Read through the
//! typed `RunDocument`.

use std::collections::BTreeMap;

use oltplab_schema::{
    CpuFigures, GroupFigures, IoFigures, LatencyFigures, RampFigures, RunDocument, RunFigures,
    SweepFigures, TxFigures, TxIoFigures, Written,
};

use crate::common::{self, auto_scale, lat_columns, Ids, Metric};
use crate::doc::{Doc, Figures};
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

/// TPC-C's transaction types in the specification's order; others follow alphabetically.
const TX_ORDER: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// The run's typed document (None only for a result of another kind).
pub fn document<'a>(doc: &'a Doc) -> Option<&'a RunDocument> {
    match &doc.figures {
        Figures::Run(r) => Some(r),
        _ => None,
    }
}

fn figures<'a>(doc: &'a Doc) -> Option<&'a RunFigures> {
    document(doc).map(|r| &r.summary)
}

/// A run's `config.workload` (None for a result of another kind).
fn workload<'a>(doc: &'a Doc) -> Option<&'a str> {
    document(doc)?;
    doc.config.workload.as_deref()
}

/// `summary.tx.<name>`.
fn tx<'a>(doc: &'a Doc, name: &str) -> Option<&'a TxFigures> {
    figures(doc)?.tx.as_ref()?.get(name)
}

/// A figure of `summary.io`, as written.
fn io_figure(f: &RunFigures, get: fn(&IoFigures) -> Written) -> Written {
    f.io.as_ref().and_then(get)
}

/// A figure of `summary.cpu`, as written.
fn cpu_figure(f: &RunFigures, get: fn(&CpuFigures) -> Written) -> Written {
    f.cpu.as_ref().and_then(get)
}

/// Latency cells in the order of `lat_columns`, "—" where not written.
fn latency_cells(l: Option<&LatencyFigures>) -> Vec<Cell> {
    common::LAT_FIELDS
        .iter()
        .map(|(k, _)| Cell::Num(l.and_then(|l| l.get(k))))
        .collect()
}

pub fn tx_names<'a>(doc: &'a Doc) -> Vec<&'a str> {
    let Some(tx) = figures(doc).and_then(|f| f.tx.as_ref()) else {
        return Vec::new();
    };
    let mut names: Vec<&str> = TX_ORDER
        .iter()
        .filter_map(|n| tx.get_key_value(*n))
        .map(|(k, _)| k.as_str())
        .collect();
    let mut rest: Vec<&str> = tx
        .keys()
        .map(String::as_str)
        .filter(|k| !TX_ORDER.contains(k))
        .collect();
    rest.sort_unstable();
    names.extend(rest);
    names
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
    let Some(f) = figures(doc) else {
        return t;
    };
    let rows: [(&str, &str, Written, Unit); 19] = [
        (
            "tpse_like",
            "tpsE-like (Trade-Results per second; not a TPC-E tpsE)",
            f.tpse_like,
            Unit::Number,
        ),
        (
            "tps_total",
            "transactions per second",
            f.tps_total,
            Unit::Number,
        ),
        (
            "reads_per_write",
            "reads per write",
            f.reads_per_write,
            Unit::Number,
        ),
        ("tpmc", "tpmC (New-Orders per minute)", f.tpmc, Unit::Number),
        (
            "tpm_total",
            "transactions per minute",
            f.tpm_total,
            Unit::Number,
        ),
        ("tps", "transactions per second", f.tps, Unit::Number),
        (
            "efficiency",
            "efficiency (of the 12.86 tpmC per warehouse ceiling)",
            f.efficiency,
            Unit::Share,
        ),
        ("elapsed_s", "measured time", f.elapsed_s, Unit::Seconds),
        (
            "io_iops",
            "device IOPS",
            io_figure(f, |i| i.iops),
            Unit::Count,
        ),
        ("io_reads", "reads", io_figure(f, |i| i.reads), Unit::Count),
        (
            "io_writes",
            "writes",
            io_figure(f, |i| i.writes),
            Unit::Count,
        ),
        ("io_syncs", "syncs", io_figure(f, |i| i.syncs), Unit::Count),
        (
            "io_read_bytes",
            "read",
            io_figure(f, |i| i.read_bytes),
            Unit::Bytes,
        ),
        (
            "io_written_bytes",
            "written",
            io_figure(f, |i| i.written_bytes),
            Unit::Bytes,
        ),
        (
            "cpu_db_user_s",
            "database CPU, user",
            cpu_figure(f, |c| c.db_user_s),
            Unit::Seconds,
        ),
        (
            "cpu_db_sys_s",
            "database CPU, system",
            cpu_figure(f, |c| c.db_sys_s),
            Unit::Seconds,
        ),
        (
            "cpu_driver_user_s",
            "driver CPU, user",
            cpu_figure(f, |c| c.driver_user_s),
            Unit::Seconds,
        ),
        (
            "cpu_driver_sys_s",
            "driver CPU, system",
            cpu_figure(f, |c| c.driver_sys_s),
            Unit::Seconds,
        ),
        (
            "cpu_utilisation",
            "CPU utilisation",
            cpu_figure(f, |c| c.utilisation),
            Unit::Share,
        ),
    ];
    let orders_rows = [
        (
            "transactions",
            "transactions measured",
            f.transactions,
            Unit::Count,
        ),
        (
            "lat_ns_p50",
            "latency p50",
            f.lat_ns.and_then(|l| l.p50).map(Some),
            Unit::Ns,
        ),
        (
            "lat_ns_p99",
            "latency p99",
            f.lat_ns.and_then(|l| l.p99).map(Some),
            Unit::Ns,
        ),
        ("errors", "errors", f.errors, Unit::Count),
        ("retries", "retries", f.retries, Unit::Count),
    ];
    // An unpaced TPC-C run's New-Orders per minute is not a tpmC (HammerDB calls it NOPM).
    let unpaced = f.paced == Some(false);
    for (key, label, written, unit) in rows.into_iter().chain(orders_rows) {
        let label = match key {
            "tpmc" if unpaced => "NOPM (New-Orders per minute, unpaced: not a tpmC)",
            _ => label,
        };
        if let Some(value) = written {
            t.push_kv(key, label, value, unit);
        }
    }
    // Throughput figures are the point of a run: show them as missing rather than leave them out.
    for (key, label, written) in [
        ("tpmc", "tpmC", f.tpmc),
        ("tps", "transactions per second", f.tps),
        ("tpse_like", "tpsE-like", f.tpse_like),
    ] {
        let wanted = match key {
            "tpmc" => is_tpcc(doc),
            "tpse_like" => is_brokerage(doc),
            _ => !is_tpcc(doc) && !is_brokerage(doc),
        };
        if wanted && written.is_none() {
            t.push_kv(key, label, None, Unit::Number);
        }
    }
    for (field, label) in wait_fields(f) {
        for (k, v) in f.waits_of(field).into_iter().flatten() {
            t.push_kv(
                &format!("{field}_{k}"),
                &format!("{k}: {label}"),
                *v,
                Unit::Number,
            );
        }
    }
    t
}

/// The wait figures of an orders run, each with how a reader should read it. PostgreSQL counts no
/// waits: its `waits_per_s` holds the sampled sessions, the same figures as `waiting_sessions`, so
/// they are shown once.
fn wait_fields(f: &RunFigures) -> Vec<(&'static str, &'static str)> {
    let has_sessions = f.waiting_sessions.is_some();
    let unit = f.waits.as_ref().and_then(|w| w.unit.as_deref());
    match (unit, has_sessions) {
        (Some("waiting_sessions"), true) => {
            vec![("waiting_sessions", "sessions waiting (sampled)")]
        }
        (Some("waiting_sessions"), false) => vec![("waits_per_s", "sessions waiting (sampled)")],
        (_, true) => vec![
            ("waits_per_s", "waits per second"),
            ("waiting_sessions", "sessions waiting (average)"),
        ],
        (_, false) => vec![("waits_per_s", "waits per second")],
    }
}

/// The kinds present in `field` of any sweep point, sorted.
fn sweep_kinds(sweep: &[SweepFigures], field: &str) -> Vec<String> {
    let mut kinds: Vec<String> = sweep
        .iter()
        .flat_map(|p| p.waits(field).keys().cloned())
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

/// `point.field[kind]`.
fn kind_value(p: &SweepFigures, field: &str, kind: &str) -> Option<f64> {
    p.waits(field).get(kind).copied().flatten()
}

pub fn is_tpcc(doc: &Doc) -> bool {
    let written = figures(doc).is_some_and(|f| f.tpmc.is_some() || f.tx.is_some());
    !is_brokerage(doc) && (written || workload(doc) == Some("tpcc"))
}

/// A run of the brokerage workload (TPC-E-like): its headline is tpsE-like.
pub fn is_brokerage(doc: &Doc) -> bool {
    figures(doc).is_some_and(|f| f.tpse_like.is_some()) || workload(doc) == Some("brokerage")
}

fn tx_table(doc: &Doc) -> Table {
    let mut columns = vec![
        Column::new("tx", "transaction", Unit::Text),
        Column::new("count", "count", Unit::Count),
        Column::new("errors", "errors", Unit::Count),
        Column::new("rollbacks", "rollbacks", Unit::Count),
        Column::new("retries", "retries", Unit::Count),
    ];
    columns.extend(lat_columns(""));
    let mut t = Table::new("tx", "Transactions", columns);
    for name in tx_names(doc) {
        let Some(v) = tx(doc, name) else { continue };
        let mut row = vec![
            Cell::text(name),
            Cell::Num(Some(v.count as f64)),
            Cell::Num(v.errors),
            Cell::Num(v.rollbacks),
            Cell::Num(v.retries),
        ];
        row.extend(latency_cells(v.lat_ns.as_ref()));
        t.push(row);
    }
    t
}

/// What each transaction type cost in I/O (`summary.io.by_tx` of a traced run; a study's
/// `io_by_tx` per device): `rows` are (label, that type's entry).
/// One row of [`io_per_tx_table`]: a transaction type's I/O, in all and per transaction.
pub struct IoPerTx {
    pub transactions: Option<f64>,
    /// reads, writes, syncs, read bytes, written bytes per transaction.
    pub per_tx: [Option<f64>; 5],
    /// reads, writes, syncs.
    pub totals: [Option<f64>; 3],
}

impl IoPerTx {
    /// From a run's `summary.io.by_tx.<type>`, each figure where written.
    pub fn of_figures(v: &TxIoFigures) -> IoPerTx {
        IoPerTx {
            transactions: v.transactions,
            per_tx: [
                v.reads_per_tx,
                v.writes_per_tx,
                v.syncs_per_tx,
                v.read_bytes_per_tx,
                v.written_bytes_per_tx,
            ],
            totals: [v.reads, v.writes, v.syncs],
        }
    }

    pub fn of(io: &oltplab_schema::TxIo) -> IoPerTx {
        IoPerTx {
            transactions: Some(io.transactions as f64),
            per_tx: [
                io.reads_per_tx,
                io.writes_per_tx,
                io.syncs_per_tx,
                io.read_bytes_per_tx,
                io.written_bytes_per_tx,
            ]
            .map(Some),
            totals: [io.reads, io.writes, io.syncs].map(|n| Some(n as f64)),
        }
    }
}

pub fn io_per_tx_table(id: &str, title: &str, first: &str, rows: &[(String, IoPerTx)]) -> Table {
    let mut t = Table::new(
        id,
        title,
        vec![
            Column::new("name", first, Unit::Text),
            Column::new("transactions", "transactions", Unit::Count),
            Column::new("reads_per_tx", "reads/tx", Unit::Number),
            Column::new("writes_per_tx", "writes/tx", Unit::Number),
            Column::new("syncs_per_tx", "syncs/tx", Unit::Number),
            Column::new("read_bytes_per_tx", "read/tx", Unit::Bytes),
            Column::new("written_bytes_per_tx", "written/tx", Unit::Bytes),
            Column::new("reads", "reads", Unit::Count),
            Column::new("writes", "writes", Unit::Count),
            Column::new("syncs", "syncs", Unit::Count),
        ],
    );
    for (label, v) in rows {
        // Per-transaction figures mean nothing for I/O outside transactions (`other`).
        let per = |i: usize| v.per_tx[i].filter(|_| v.transactions > Some(0.0));
        let mut row = vec![Cell::Text(label.clone()), Cell::Num(v.transactions)];
        row.extend((0..5).map(|i| Cell::Num(per(i))));
        row.extend(v.totals.map(Cell::Num));
        t.push(row);
    }
    t
}

fn run_io_table(doc: &Doc) -> Table {
    let empty = BTreeMap::new();
    let by_tx = figures(doc)
        .and_then(|f| f.io.as_ref())
        .map_or(&empty, |io| &io.by_tx);
    let mut names: Vec<&str> = tx_names(doc)
        .into_iter()
        .filter(|n| by_tx.contains_key(*n))
        .collect();
    if by_tx.contains_key("other") {
        names.push("other");
    }
    let rows: Vec<(String, IoPerTx)> = names
        .iter()
        .map(|n| (n.to_string(), IoPerTx::of_figures(&by_tx[*n])))
        .collect();
    io_per_tx_table(
        "io_by_tx",
        "I/O per transaction type (from the trace; other: background work and time between transactions)",
        "transaction",
        &rows,
    )
}

fn sweep_table(doc: &Doc) -> Table {
    let sweep = sweep(doc);
    let mut columns = vec![
        Column::new("connections", "connections", Unit::Text),
        Column::new("tps", "transactions/s", Unit::Number),
        Column::new("elapsed_s", "elapsed", Unit::Seconds),
        Column::new("lat_ns_p99", "p99", Unit::Ns),
        Column::new("cpu_utilisation", "CPU busy", Unit::Share),
    ];
    let mut kinds = Vec::new();
    for (field, label) in figures(doc).map(wait_fields).unwrap_or_default() {
        for k in sweep_kinds(sweep, field) {
            columns.push(Column::new(
                &format!("{field}_{k}"),
                &format!("{k} {label}"),
                Unit::Number,
            ));
            kinds.push((field, k));
        }
    }
    let mut t = Table::new("sweep", "Connection sweep", columns);
    for p in sweep {
        let mut row = vec![
            Cell::Text(p.connections.map_or(String::new(), |c| format!("{c}"))),
            Cell::Num(p.tps),
            Cell::Num(p.elapsed_s),
            Cell::Num(p.lat_ns.and_then(|l| l.p99)),
            Cell::Num(sweep_utilisation(p)),
        ];
        for (field, k) in &kinds {
            row.push(Cell::Num(kind_value(p, field, k)));
        }
        t.push(row);
    }
    t
}

/// An order-entry sweep's points (none for other runs).
fn sweep<'a>(doc: &'a Doc) -> &'a [SweepFigures] {
    figures(doc).and_then(|f| f.sweep.as_deref()).unwrap_or(&[])
}

fn sweep_utilisation(p: &SweepFigures) -> Option<f64> {
    p.cpu.as_ref().and_then(|c| c.utilisation).flatten()
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Run: {}", doc.label),
        doc.label.clone(),
        "run",
    );
    if !is_tpcc(doc) && !is_brokerage(doc) {
        orders_notes(&mut s, doc);
    }
    if charts {
        let mut ids = Ids::new(&s.id);
        run_charts(&mut s, &mut ids, doc);
    }
    s.table(summary_table(doc));
    s.table(tx_table(doc));
    s.table(run_io_table(doc));
    s.table(sweep_table(doc));
    s.table(ramp_table(doc));
    s.table(io_group_table(doc, "by_device", "I/O by device"));
    s.table(node_io_table(doc));
    s.table(io_group_table(
        doc,
        "by_table",
        "I/O by table (indexes included)",
    ));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

/// Histograms to draw as percentile curves: the transaction types' (top-level names).
fn curve_histograms(doc: &Doc) -> Vec<(String, oltplab_metrics::LatencyHistogram)> {
    let mut names: Vec<&str> = doc
        .histogram_names()
        .into_iter()
        .filter(|n| !n.contains('/'))
        .collect();
    let order = |n: &str| {
        TX_ORDER
            .iter()
            .position(|t| *t == n)
            .unwrap_or(TX_ORDER.len())
    };
    names.sort_by_key(|n| (order(n), n.to_string()));
    names
        .into_iter()
        .filter_map(|n| Some((n.to_string(), doc.histogram(n)?)))
        .collect()
}

/// A latency figure (`p99` …) of a transaction type, where written.
fn tx_latency(doc: &Doc, name: &str, field: &str) -> Option<f64> {
    tx(doc, name)?.lat_ns?.get(field)
}

fn run_charts(s: &mut Section, ids: &mut Ids, doc: &Doc) {
    common::interval_charts(s, ids, doc);
    let names = tx_names(doc);
    let cats: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let lat: Vec<Series> = [
        ("p50", "p50"),
        ("p90", "p90"),
        ("p99", "p99"),
        ("p999", "p99.9"),
    ]
    .iter()
    .map(|(f, l)| Series::bars(*l, names.iter().map(|n| tx_latency(doc, n, f)).collect()))
    .collect();
    s.chart(
        svg::bars(
            &ids.next(),
            "Latency per transaction type",
            &format!(
                "p50, p90, p99 and p99.9 latency per transaction type: {}.",
                names
                    .iter()
                    .map(|n| format!(
                        "{n} p99 {}",
                        crate::fmt::value(tx_latency(doc, n, "p99"), Unit::Ns)
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            &cats,
            &lat,
            &Axis::new("latency", Scale::Log, ns_short),
            false,
            None,
        ),
        "Response time of each transaction type, from the driver's view, on a logarithmic axis.",
    );
    let id = ids.next();
    s.chart(
        common::percentile_chart(
            &id,
            "Latency percentiles per transaction type",
            &curve_histograms(doc),
        ),
        common::PERCENTILE_CAPTION,
    );
    // Errors, rollbacks and retries per type: only when there were any.
    let failures: Vec<Series> = [
        ("errors", (|t| t.errors) as fn(&TxFigures) -> Option<f64>),
        ("rollbacks", |t| t.rollbacks),
        ("retries", |t| t.retries),
    ]
    .iter()
    .map(|(f, get)| Series::bars(*f, names.iter().map(|n| tx(doc, n).and_then(get)).collect()))
    .collect();
    if failures
        .iter()
        .any(|s| s.values.iter().flatten().any(|v| *v > 0.0))
    {
        s.chart(
            svg::bars(
                &ids.next(),
                "Errors, rollbacks and retries per transaction type",
                "Count of errors, rollbacks (TPC-C's 1 % of New-Orders roll back by design) and retries per type.",
                &cats,
                &failures,
                &Axis::new("count", Scale::Linear, si),
                false,
                None,
            ),
            "TPC-C rolls back about 1 % of New-Orders on purpose; errors and retries come from the database (deadlocks, serialisation failures, busy).",
        );
    }
    orders_charts(s, ids, doc);
    ramp_charts(s, ids, doc);
}

/// `summary.io.by_device` or (`list` = `by_table`) `by_table`: reads, writes, share and busy share per group.
fn io_group_table(doc: &Doc, list: &str, title: &str) -> Table {
    let mut t = Table::new(
        list,
        title,
        vec![
            Column::new("name", "name", Unit::Text),
            Column::new("reads", "reads", Unit::Count),
            Column::new("writes", "writes", Unit::Count),
            Column::new("syncs", "syncs", Unit::Count),
            Column::new("read_bytes", "read", Unit::Bytes),
            Column::new("written_bytes", "written", Unit::Bytes),
            Column::new("share_pct", "share of I/O %", Unit::Number),
            Column::new("busy_pct", "busy %", Unit::Number),
            Column::new("read_cache_hit_pct", "read cache hits %", Unit::Number),
        ],
    );
    let groups: &[GroupFigures] = match figures(doc).and_then(|f| f.io.as_ref()) {
        Some(io) if list == "by_device" => &io.by_device,
        Some(io) => &io.by_table,
        None => &[],
    };
    for g in groups {
        t.push(vec![
            Cell::Text(g.name.clone()),
            Cell::Num(g.reads),
            Cell::Num(g.writes),
            Cell::Num(g.syncs),
            Cell::Num(g.read_bytes),
            Cell::Num(g.written_bytes),
            Cell::Num(g.share_pct),
            Cell::Num(g.busy_pct),
            Cell::Num(g.read_cache_hit_pct),
        ]);
    }
    t
}

/// `summary.io.by_node`: a Galera cluster's nodes, each on its own (emulated) device.
fn node_io_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "by_node",
        "I/O by Galera node (each on its own device)",
        vec![
            Column::new("node", "node", Unit::Count),
            Column::new("device", "device", Unit::Text),
            Column::new("iops", "IOPS", Unit::Number),
            Column::new("reads", "reads", Unit::Count),
            Column::new("writes", "writes", Unit::Count),
            Column::new("syncs", "syncs", Unit::Count),
            Column::new("read_lat_ns_p99", "read p99", Unit::Ns),
            Column::new("write_lat_ns_p99", "write p99", Unit::Ns),
            Column::new("sync_lat_ns_p50", "sync p50", Unit::Ns),
            Column::new("sync_lat_ns_p99", "sync p99", Unit::Ns),
            Column::new(
                "emulated_off_pct",
                "emulated mean off the model %",
                Unit::Number,
            ),
        ],
    );
    let nodes = figures(doc)
        .and_then(|f| f.io.as_ref())
        .map(|io| io.by_node.as_slice())
        .unwrap_or(&[]);
    for n in nodes {
        t.push(vec![
            Cell::Num(Some(n.node as f64)),
            Cell::Text(n.device.clone().unwrap_or_default()),
            Cell::Num(n.iops),
            Cell::Num(n.reads),
            Cell::Num(n.writes),
            Cell::Num(n.syncs),
            Cell::Num(n.read_lat_ns.and_then(|l| l.p99)),
            Cell::Num(n.write_lat_ns.and_then(|l| l.p99)),
            Cell::Num(n.sync_lat_ns.and_then(|l| l.p50)),
            Cell::Num(n.sync_lat_ns.and_then(|l| l.p99)),
            Cell::Num(
                n.emulation
                    .as_ref()
                    .and_then(|e| e.fidelity.as_ref())
                    .and_then(|f| f.emulated_off_pct),
            ),
        ]);
    }
    t
}

/// The device names of a ramp's steps, in their first order.
fn ramp_devices(ramp: &[RampFigures]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for step in ramp {
        for d in &step.devices {
            if !names.contains(&d.name) {
                names.push(d.name.clone());
            }
        }
    }
    names
}

fn device_busy(step: &RampFigures, name: &str) -> Option<f64> {
    step.devices
        .iter()
        .find(|d| d.name == name)
        .map(|d| d.busy_pct)
}

/// Typed reliability warnings, as text: their names as results spell them.
pub(crate) fn warning_kinds(kinds: &[oltplab_metrics::WarningKind]) -> String {
    kinds
        .iter()
        .filter_map(|k| serde_json::to_value(k).ok())
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a ramp's steps count as throughput: `New-Orders/min` (TPC-C), `Trade-Results/s`
/// (brokerage).
fn ramp_unit(ramp: &[RampFigures]) -> &str {
    ramp.first()
        .map(|s| s.throughput_unit.as_str())
        .unwrap_or("New-Orders/min")
}

/// A users ramp's steps (none without a ramp).
fn ramp<'a>(doc: &'a Doc) -> &'a [RampFigures] {
    figures(doc).map(|f| f.ramp.as_slice()).unwrap_or(&[])
}

/// A users ramp, a row per step: S3's table.
fn ramp_table(doc: &Doc) -> Table {
    let ramp = ramp(doc);
    let devices = ramp_devices(ramp);
    let mut columns = vec![
        Column::new("terminals", "terminals", Unit::Text),
        Column::new("throughput", ramp_unit(ramp), Unit::Number),
        Column::new("tx_per_s", "transactions/s", Unit::Number),
        Column::new("lat_ns_mean", "mean response", Unit::Ns),
        Column::new("lat_ns_p90", "p90 response", Unit::Ns),
        Column::new("cpu_utilisation", "CPU busy", Unit::Share),
        Column::new("io_iops", "IOPS", Unit::Number),
    ];
    for (i, d) in devices.iter().enumerate() {
        columns.push(Column::new(
            &format!("device{i}_busy_pct"),
            &format!("{d} busy %"),
            Unit::Number,
        ));
    }
    columns.push(Column::new("warnings", "less reliable", Unit::Text));
    let mut t = Table::new("ramp", "Users ramp", columns);
    for step in ramp {
        let mut row = vec![
            Cell::Text(step.terminals.to_string()),
            Cell::Num(Some(step.throughput)),
            Cell::Num(Some(step.tx_per_s)),
            Cell::Num(Some(step.lat_ns.mean)),
            Cell::Num(Some(step.lat_ns.p90 as f64)),
            Cell::Num(Some(step.cpu_utilisation)),
            Cell::Num(Some(step.io_iops)),
        ];
        for d in &devices {
            row.push(Cell::Num(device_busy(step, d)));
        }
        row.push(Cell::Text(step.warnings.join(", ")));
        t.push(row);
    }
    t
}

/// S3's figures against the number of users: throughput, response time, CPU and device busy.
fn ramp_charts(s: &mut Section, ids: &mut Ids, doc: &Doc) {
    let ramp = ramp(doc);
    if ramp.len() < 2 {
        return;
    }
    let x = auto_scale(ramp.iter().map(|p| p.terminals as f64));
    let line = |get: fn(&RampFigures) -> f64, factor: f64| -> Vec<(f64, f64)> {
        ramp.iter()
            .map(|p| (p.terminals as f64, get(p) * factor))
            .collect()
    };
    // TPC-C counts per minute, the brokerage workload per second: all transactions alike.
    let unit = ramp_unit(ramp);
    let (per, tx_label, tx_factor) = if unit.ends_with("/s") {
        ("second", "transactions/s", 1.0)
    } else {
        ("minute", "transactions/min", 60.0)
    };
    s.chart(
        svg::lines(
            &ids.next(),
            "Throughput by users",
            &format!("{unit} and all transactions per {per} at each number of terminals."),
            &[
                Series::line(unit, line(|p| p.throughput, 1.0)),
                Series::line(tx_label, line(|p| p.tx_per_s, tx_factor)),
            ],
            &Axis::new("terminals", x, si),
            &Axis::new(format!("per {per}"), Scale::Linear, si),
            None,
        ),
        "Where throughput stops growing as users are added.",
    );
    s.chart(
        svg::lines(
            &ids.next(),
            "Response time by users",
            "Mean and 90th-percentile response time over all transaction types at each number of terminals.",
            &[
                Series::line("mean", line(|p| p.lat_ns.mean, 1.0)),
                Series::line("p90", line(|p| p.lat_ns.p90 as f64, 1.0)),
            ],
            &Axis::new("terminals", x, si),
            &Axis::new("response time", Scale::Linear, ns_short),
            None,
        ),
        "Past the knee, more users only queue: response time grows with them.",
    );
    let mut busy = vec![Series::line(
        "CPU busy %",
        line(|p| p.cpu_utilisation, 100.0),
    )];
    for d in ramp_devices(ramp) {
        busy.push(Series::line(
            format!("{d} busy %"),
            ramp.iter()
                .filter_map(|p| Some((p.terminals as f64, device_busy(p, &d)?)))
                .collect(),
        ));
    }
    s.chart(
        svg::lines(
            &ids.next(),
            "CPU and device busy share by users",
            "The database machine's CPU utilisation and each emulated device's busy share (100 − idle) at each number of terminals.",
            &busy,
            &Axis::new("terminals", x, si),
            &Axis::new("percent", Scale::Linear, si),
            None,
        ),
        "S3's view: what ran out first — the CPU, or a device's idle time.",
    );
}

/// Orders: what ran, what the tables give up, and what the waits figures are.
fn orders_notes(s: &mut Section, doc: &Doc) {
    let Some(f) = figures(doc) else { return };
    if let (Some(tables), Some(mode)) = (&f.tables, &f.mode) {
        let connections: Vec<String> = f.connections.iter().map(u32::to_string).collect();
        s.notes.push(format!(
            "{tables} tables, {mode} transactions: each of {} connections ran {} transactions after {} warm-up transactions (not measured).",
            connections.join(" / "),
            crate::fmt::value(f.tx_per_connection, Unit::Count),
            crate::fmt::value(f.warmup_tx_per_connection, Unit::Count)
        ));
    }
    if let Some(d) = &f.durability {
        if let Some(note) = &d.note {
            s.notes.push(format!(
                "Durability: {note} ({} = {}).",
                d.commit_setting.as_deref().unwrap_or(""),
                d.commit_value.as_deref().unwrap_or("")
            ));
        }
    }
    if let Some(source) = f.waits.as_ref().and_then(|w| w.source.as_ref()) {
        s.notes.push(format!("Waits: {source}."));
    }
}

/// Orders: waits by kind, and S5's views of a connection sweep — the elapsed time of the fixed
/// work, the throughput and the waits as connections are added.
fn orders_charts(s: &mut Section, ids: &mut Ids, doc: &Doc) {
    let Some(f) = figures(doc) else { return };
    for (field, label) in wait_fields(f) {
        let caption = if field == "waits_per_s" && label == "waits per second" {
            "What the transactions waited for (S5's latch waits per second)."
        } else {
            "How many sessions were waiting on each kind at an average moment: wait time divided by elapsed time, or (PostgreSQL) sampled."
        };
        let Some(waits) = f.waits_of(field).filter(|w| !w.is_empty()) else {
            continue;
        };
        let kinds: Vec<String> = waits.keys().cloned().collect();
        let vals: Vec<Option<f64>> = waits.values().copied().collect();
        s.chart(
            svg::bars(
                &ids.next(),
                &format!("Waits by kind: {label}"),
                &format!("{label} of each kind during the measured work."),
                &kinds,
                &[Series::bars(label, vals.clone())],
                &Axis::new(label, auto_scale(vals.iter().flatten().copied()), si),
                false,
                None,
            ),
            caption,
        );
    }
    let sweep = sweep(doc);
    if sweep.len() < 2 {
        return;
    }
    let connections: Vec<Option<f64>> = sweep.iter().map(|p| p.connections).collect();
    let cats: Vec<String> = connections
        .iter()
        .map(|c| c.map_or(String::new(), |c| format!("{c}")))
        .collect();
    let x_scale = auto_scale(connections.iter().flatten().copied());
    let line = |get: fn(&SweepFigures) -> Option<f64>| -> Vec<(f64, f64)> {
        sweep
            .iter()
            .filter_map(|p| Some((p.connections?, get(p)?)))
            .collect()
    };
    let elapsed: Vec<Option<f64>> = sweep.iter().map(|p| p.elapsed_s).collect();
    s.chart(
        svg::bars(
            &ids.next(),
            "Elapsed time of the fixed work by connections",
            "Seconds until every connection had run its transactions, at each number of connections.",
            &cats,
            &[Series::bars("elapsed", elapsed)],
            &Axis::new("seconds", Scale::Linear, si),
            false,
            None,
        ),
        "S5's first view: each connection runs the same number of transactions, so more connections mean more work; the time it takes shows how well the engine scales.",
    );
    s.chart(
        svg::lines(
            &ids.next(),
            "Throughput by connections",
            "Transactions per second at each number of concurrent connections.",
            &[Series::line("transactions/s", line(|p| p.tps))],
            &Axis::new("connections", x_scale, si),
            &Axis::new("transactions per second", Scale::Linear, si),
            None,
        ),
        "S5's figure: throughput as the number of concurrent connections grows.",
    );
    for (field, label) in wait_fields(f) {
        let waits: Vec<Series> = sweep_kinds(sweep, field)
            .iter()
            .map(|k| {
                Series::line(
                    k.clone(),
                    sweep
                        .iter()
                        .filter_map(|p| Some((p.connections?, kind_value(p, field, k)?)))
                        .collect(),
                )
            })
            .collect();
        s.chart(
            svg::lines(
                &ids.next(),
                &format!("Waits by connections: {label}"),
                &format!("{label} of each kind at each number of connections."),
                &waits,
                &Axis::new("connections", x_scale, si),
                &Axis::new(label, Scale::Linear, si),
                None,
            ),
            "Where contention sets in as connections are added.",
        );
    }
}

/// The headline throughput: tpmC for TPC-C, transactions per second otherwise.
fn headline(doc: &Doc) -> Option<f64> {
    let f = figures(doc)?;
    f.tpmc
        .flatten()
        .or(f.tps.flatten())
        .or(f.tpse_like.flatten())
}

pub fn comparison(docs: &[&Doc], charts: bool) -> Section {
    let mut s = Section::new(
        "cmp-run".into(),
        format!("Comparison of {} runs", docs.len()),
        "comparison".into(),
        "run",
    );
    let metrics = [
        Metric::typed(
            "tpmc",
            "tpmC",
            Unit::Number,
            |d| figures(d)?.tpmc.flatten(),
            Some("tpmC ×"),
        ),
        Metric::typed(
            "tps",
            "tx/s",
            Unit::Number,
            |d| figures(d)?.tps.flatten(),
            Some("tx/s ×"),
        ),
        Metric::typed(
            "tpse_like",
            "tpsE-like",
            Unit::Number,
            |d| figures(d)?.tpse_like.flatten(),
            Some("tpsE-like ×"),
        ),
        Metric::typed(
            "efficiency",
            "efficiency",
            Unit::Share,
            |d| figures(d)?.efficiency.flatten(),
            None,
        ),
        Metric::typed(
            "new_order_lat_ns_p99",
            "New-Order p99",
            Unit::Ns,
            |d| tx_latency(d, "new_order", "p99"),
            Some("p99 ×"),
        ),
        Metric::typed(
            "io_iops",
            "device IOPS",
            Unit::Count,
            |d| io_figure(figures(d)?, |i| i.iops).flatten(),
            Some("IOPS ×"),
        ),
        Metric::typed(
            "cpu_utilisation",
            "CPU",
            Unit::Share,
            |d| cpu_figure(figures(d)?, |c| c.utilisation).flatten(),
            None,
        ),
    ];
    // tpsE-like only where a brokerage run is compared.
    let brokerage = docs.iter().any(|d| is_brokerage(d));
    let metrics: Vec<Metric> = metrics
        .into_iter()
        .filter(|m| brokerage || m.key != "tpse_like")
        .collect();
    let t = common::comparison_table(docs, &metrics);
    if charts {
        let mut ids = Ids::new(&s.id);
        let labels: Vec<String> = docs.iter().map(|d| d.label.clone()).collect();
        let tpcc = docs.iter().all(|d| is_tpcc(d));
        let (what, unit_label) = if tpcc {
            ("tpmC", "tpmC")
        } else {
            ("Throughput", "transactions per second")
        };
        s.chart(
            svg::bars(
                &ids.next(),
                &format!("{what} per result"),
                &format!(
                    "{what} of each run: {}.",
                    docs.iter()
                        .map(|d| format!(
                            "{} {}",
                            d.label,
                            crate::fmt::value(headline(d), Unit::Number)
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                &labels,
                &[Series::bars(
                    unit_label,
                    docs.iter().map(|d| headline(d)).collect(),
                )],
                &Axis::new(unit_label, Scale::Linear, si),
                false,
                None,
            ),
            format!("{what} of each run."),
        );
        let p99: Vec<Series> = docs
            .iter()
            .map(|d| {
                Series::bars(
                    d.label.clone(),
                    tx_names(docs[0])
                        .iter()
                        .map(|n| tx_latency(d, n, "p99"))
                        .collect(),
                )
            })
            .collect();
        let cats: Vec<String> = tx_names(docs[0]).iter().map(|n| n.to_string()).collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "p99 latency per transaction type and result",
                "p99 latency of each transaction type, one bar per result.",
                &cats,
                &p99,
                &Axis::new("p99 latency", Scale::Log, ns_short),
                false,
                None,
            ),
            "Each group is one transaction type; each colour one run.",
        );
        let curves: Vec<_> = docs
            .iter()
            .filter_map(|d| {
                let hist = curve_histograms(d).into_iter().next()?;
                Some((format!("{} {}", d.label, hist.0), hist.1))
            })
            .collect();
        let id = ids.next();
        s.chart(
            common::percentile_chart(&id, "Latency percentiles per result", &curves),
            "The first transaction type of each run (New-Order for TPC-C). ".to_string()
                + common::PERCENTILE_CAPTION,
        );
        // Throughput over time, one line per run, on the clock of each run's own start.
        let lines: Vec<Series> = docs
            .iter()
            .filter_map(|d| {
                let (field, points) = common::headline_intervals(d)?;
                Some(Series::line(format!("{} {field}", d.label), points))
            })
            .collect();
        if !lines.is_empty() {
            s.chart(
                svg::lines(
                    &ids.next(),
                    "Throughput over time per result",
                    "The headline throughput of each run per interval of its measured time.",
                    &lines,
                    &Axis::new("time (s)", Scale::Linear, si),
                    &Axis::new("throughput", Scale::Linear, si),
                    None,
                ),
                "Each line is one run; time counts from each run's own start.",
            );
        }
    }
    s.table(t);
    common::context(&mut s, docs);
    s
}
