//! The cluster study (`study --scenario cluster`): one MariaDB server against a Galera cluster on
//! each emulated device — a row per run with throughput, New-Order's response time, certification
//! conflicts and flow control, a row per node with its own I/O, and bars of what replication costs.

use serde_json::Value;

use crate::common::{self, Ids};
use crate::doc::{num, Doc};
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

pub fn is_cluster(doc: &Doc) -> bool {
    doc.str("/summary/scenario") == Some("cluster")
}

/// E.g. `study cluster, 3 nodes vs one MariaDB on 3 devices`.
pub fn label(doc: &Doc) -> String {
    let rows = doc.array("/summary/rows");
    let mut devices: Vec<&str> = rows.iter().filter_map(|r| r["device"].as_str()).collect();
    devices.dedup();
    format!(
        "study cluster, {} nodes vs one MariaDB on {} device{}",
        doc.num("/summary/nodes")
            .map_or("?".into(), |n| n.to_string()),
        devices.len(),
        if devices.len() == 1 { "" } else { "s" }
    )
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or("?").to_string()
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
    for r in doc.array("/summary/rows") {
        let warnings: Vec<&str> = r["warnings"]
            .as_array()
            .map(|w| w.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        t.push(vec![
            Cell::Text(text(r, "device")),
            Cell::Text(text(r, "system")),
            Cell::Num(num(r, "/nodes")),
            Cell::Num(num(r, "/tpmc")),
            Cell::Num(num(r, "/tpmc_vs_single")),
            Cell::Num(num(r, "/new_order_lat_ns_p50")),
            Cell::Num(num(r, "/new_order_lat_ns_p99")),
            Cell::Num(num(r, "/commit_latency_ns_p50")),
            Cell::Num(num(r, "/commit_latency_ns_p99")),
            Cell::Num(num(r, "/commit_replication_share")),
            Cell::Num(num(r, "/conflicts_per_1000_tx")),
            Cell::Num(num(r, "/flow_control_paused_share")),
            Cell::Num(num(r, "/io_iops")),
            Cell::Num(num(r, "/io_syncs_per_s")),
            Cell::Num(num(r, "/cpu_utilisation")),
            Cell::Text(warnings.join(", ")),
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
    for r in doc.array("/summary/rows") {
        let wsrep = r["wsrep_nodes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for n in r["io_by_node"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            let k = num(n, "/node");
            let w = wsrep.iter().find(|w| num(w, "/node") == k);
            t.push(vec![
                Cell::Text(text(r, "device")),
                Cell::Num(k),
                Cell::Num(num(n, "/iops")),
                Cell::Num(num(n, "/reads")),
                Cell::Num(num(n, "/writes")),
                Cell::Num(num(n, "/syncs")),
                Cell::Num(num(n, "/write_lat_ns/p99")),
                Cell::Num(num(n, "/sync_lat_ns/p99")),
                Cell::Num(w.and_then(|w| num(w, "/flow_control_paused_share"))),
                Cell::Num(w.and_then(|w| num(w, "/local_cert_failures"))),
                Cell::Num(w.and_then(|w| num(w, "/repl_latency_ns_mean"))),
                Cell::Num(num(n, "/emulation/fidelity/emulated_off_pct")),
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
        doc.num("/summary/warehouses").map_or("?".into(), |v| v.to_string()),
        doc.num("/summary/terminals").map_or("?".into(), |v| v.to_string()),
        doc.num("/summary/buffer_pool_bytes")
            .map_or("?".into(), |b| crate::fmt::value(Some(b), Unit::Bytes)),
    ));
    s.notes.push(
        "Every node shares this machine's cores and memory and talks over loopback: this measures what replication and each node's storage cost, not scale-out (docs/cluster.md).".into(),
    );
    let rows = doc.array("/summary/rows");
    if charts && !rows.is_empty() {
        let mut ids = Ids::new(&s.id);
        let mut devices: Vec<String> = rows.iter().map(|r| text(r, "device")).collect();
        devices.dedup();
        let of = |system: &str, p: &str| -> Vec<Option<f64>> {
            devices
                .iter()
                .map(|d| {
                    rows.iter()
                        .find(|r| r["device"].as_str() == Some(d) && r["system"] == system)
                        .and_then(|r| num(r, p))
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
                    Series::bars("one server", of("mariadb", "/tpmc")),
                    Series::bars("cluster", of("galera", "/tpmc")),
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
                    Series::bars("one server", of("mariadb", "/new_order_lat_ns_p99")),
                    Series::bars("cluster", of("galera", "/new_order_lat_ns_p99")),
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
