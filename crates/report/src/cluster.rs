//! The cluster study (`study --scenario cluster`): one MariaDB server against a Galera cluster on
//! each emulated device — a row per run with throughput, New-Order's response time, certification
//! conflicts and flow control, a row per node with its own I/O, and bars of what replication costs.
//! Read through the typed `ClusterStudySummary`.

use oltplab_schema::{ClusterStudyRow, ClusterStudySummary};

use crate::common::{self, Ids};
use crate::doc::{Doc, Figures};
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

pub fn is_cluster(doc: &Doc) -> bool {
    summary(doc).is_some()
}

/// The summary, read typed when the result was checked (`classify::docs`).
fn summary<'a>(doc: &'a Doc) -> Option<&'a ClusterStudySummary> {
    match &doc.figures {
        Figures::Cluster(s) => Some(s),
        _ => None,
    }
}

fn rows<'a>(doc: &'a Doc) -> &'a [ClusterStudyRow] {
    summary(doc).map_or(&[], |s| s.rows.as_slice())
}

/// E.g. `study cluster, 3 nodes vs one MariaDB on 3 devices`.
pub fn label(doc: &Doc) -> String {
    let mut devices: Vec<&str> = rows(doc).iter().map(|r| r.device.as_str()).collect();
    devices.dedup();
    format!(
        "study cluster, {} nodes vs one MariaDB on {} device{}",
        summary(doc).map_or("?".into(), |s| s.nodes.to_string()),
        devices.len(),
        if devices.len() == 1 { "" } else { "s" }
    )
}

fn runs_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "runs",
        "One server and the cluster on each device",
        vec![
            Column::new("device", "device", Unit::Text),
            Column::new("system", "system", Unit::Text),
            Column::new("nodes", "nodes", Unit::Count),
            Column::new("tpmc", "New-Orders/min", Unit::Number),
            Column::new("tpmc_vs_single", "vs one server", Unit::Ratio),
            Column::new("new_order_lat_ns_p50", "New-Order p50", Unit::Ns),
            Column::new("new_order_lat_ns_p99", "New-Order p99", Unit::Ns),
            Column::new("commit_latency_ns_p50", "commit p50", Unit::Ns),
            Column::new("commit_latency_ns_p99", "commit p99", Unit::Ns),
            Column::new(
                "commit_replication_share",
                "commit: replication share",
                Unit::Share,
            ),
            Column::new(
                "conflicts_per_1000_tx",
                "conflicts per 1,000 tx",
                Unit::Number,
            ),
            Column::new(
                "flow_control_paused_share",
                "flow control paused",
                Unit::Share,
            ),
            Column::new("io_iops", "IOPS (all nodes)", Unit::Number),
            Column::new("io_syncs_per_s", "flushes/s (all nodes)", Unit::Number),
            Column::new("cpu_utilisation", "CPU busy", Unit::Share),
            Column::new("warnings", "less reliable", Unit::Text),
        ],
    );
    for r in rows(doc) {
        t.push(vec![
            Cell::Text(r.device.clone()),
            Cell::Text(r.system.clone()),
            Cell::Num(Some(r.nodes as f64)),
            Cell::Num(Some(r.tpmc)),
            Cell::Num(r.tpmc_vs_single),
            Cell::Num(Some(r.new_order_lat_ns_p50 as f64)),
            Cell::Num(Some(r.new_order_lat_ns_p99 as f64)),
            Cell::Num(Some(r.commit_latency_ns_p50 as f64)),
            Cell::Num(Some(r.commit_latency_ns_p99 as f64)),
            Cell::Num(r.commit_replication_share),
            Cell::Num(Some(r.conflicts_per_1000_tx)),
            Cell::Num(r.flow_control_paused_share),
            Cell::Num(Some(r.io_iops)),
            Cell::Num(Some(r.io_syncs_per_s)),
            Cell::Num(Some(r.cpu_utilisation)),
            Cell::Text(r.warnings.join(", ")),
        ]);
    }
    t
}

fn nodes_table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "nodes",
        "Each node on its own device",
        vec![
            Column::new("device", "device", Unit::Text),
            Column::new("node", "node", Unit::Count),
            Column::new("iops", "IOPS", Unit::Number),
            Column::new("reads", "reads", Unit::Count),
            Column::new("writes", "writes", Unit::Count),
            Column::new("syncs", "flushes", Unit::Count),
            Column::new("write_lat_ns_p99", "write p99", Unit::Ns),
            Column::new("sync_lat_ns_p99", "flush p99", Unit::Ns),
            Column::new(
                "flow_control_paused_share",
                "flow control paused",
                Unit::Share,
            ),
            Column::new("local_cert_failures", "certification failures", Unit::Count),
            Column::new("repl_latency_ns_mean", "replication latency mean", Unit::Ns),
            Column::new(
                "emulated_off_pct",
                "emulated mean off the model % (less waits for a core)",
                Unit::Number,
            ),
        ],
    );
    for r in rows(doc) {
        for n in &r.io_by_node {
            let w = r.wsrep_nodes.iter().find(|w| w.node == n.node);
            t.push(vec![
                Cell::Text(r.device.clone()),
                Cell::Num(Some(n.node as f64)),
                Cell::Num(Some(n.iops)),
                Cell::Num(Some(n.reads as f64)),
                Cell::Num(Some(n.writes as f64)),
                Cell::Num(Some(n.syncs as f64)),
                Cell::Num(Some(n.write_lat_ns.p99 as f64)),
                Cell::Num(Some(n.sync_lat_ns.p99 as f64)),
                Cell::Num(w.map(|w| w.flow_control_paused_share)),
                Cell::Num(w.map(|w| w.local_cert_failures as f64)),
                Cell::Num(w.and_then(|w| w.repl_latency_ns_mean)),
                Cell::Num(n.emulation.as_ref().map(|e| e.fidelity.emulated_off_pct)),
            ]);
        }
    }
    t
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Study (what a cluster costs): {}", doc.label),
        doc.label.clone(),
        "study",
    );
    s.notes.push(format!(
        "TPC-C, {} warehouses, {} terminals (S1's one per warehouse), a buffer pool of {} per server; each run on a fresh copy of its system's loaded data, every node on its own instance of the device. New-Order's response time ends with its commit, so on the cluster it holds replication and certification.",
        summary(doc).map_or("?".into(), |s| s.warehouses.to_string()),
        summary(doc).map_or("?".into(), |s| s.terminals.to_string()),
        summary(doc).map_or("?".into(), |s| {
            crate::fmt::value(Some(s.buffer_pool_bytes as f64), Unit::Bytes)
        }),
    ));
    s.notes.push(
        "Every node shares this machine's cores and memory and talks over loopback: this measures what replication and each node's storage cost, not scale-out (docs/cluster.md).".into(),
    );
    let rows = rows(doc);
    if charts && !rows.is_empty() {
        let mut ids = Ids::new(&s.id);
        let mut devices: Vec<String> = rows.iter().map(|r| r.device.clone()).collect();
        devices.dedup();
        let of = |system: &str, get: fn(&ClusterStudyRow) -> f64| -> Vec<Option<f64>> {
            devices
                .iter()
                .map(|d| {
                    rows.iter()
                        .find(|r| r.device == *d && r.system == system)
                        .map(get)
                })
                .collect()
        };
        s.chart(
            svg::bars(
                &ids.next(),
                "New-Orders per minute: one server and the cluster",
                "The same TPC-C on each device: one MariaDB server, and a Galera cluster with every node on its own instance of the device.",
                &devices,
                &[
                    Series::bars("one server", of("mariadb", |r| r.tpmc)),
                    Series::bars("cluster", of("galera", |r| r.tpmc)),
                ],
                &Axis::new("New-Orders/min", Scale::Linear, si),
                false,
                None,
            ),
            "What synchronous replication costs on each storage.",
        );
        s.chart(
            svg::bars(
                &ids.next(),
                "New-Order's 99th-percentile response time",
                "New-Order's response time ends with its commit.",
                &devices,
                &[
                    Series::bars("one server", of("mariadb", |r| r.new_order_lat_ns_p99 as f64)),
                    Series::bars("cluster", of("galera", |r| r.new_order_lat_ns_p99 as f64)),
                ],
                &Axis::new("p99", Scale::Linear, ns_short),
                false,
                None,
            ),
            "The tail of the commit path: the device's flushes, and on the cluster the round trip, certification and flow control.",
        );
    }
    s.table(runs_table(doc));
    let nodes = nodes_table(doc);
    if !nodes.rows.is_empty() {
        s.table(nodes);
    }
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}
