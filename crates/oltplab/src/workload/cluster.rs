//! What a Galera cluster adds to a run and a check: each node's replication counters over the
//! measured window, and whether the nodes hold the same data (`CHECKSUM TABLE` on each).

use std::time::{Instant, SystemTime};

use oltplab_core::{Error, Result};
use oltplab_dbs::server::galera::{self, StatusProbe, WsrepStatus};

use oltplab_metrics::schema::rfc3339_micros;
use oltplab_metrics::{Warning, WarningKind};
use oltplab_workloads::tpcc::check::Condition;
use oltplab_workloads::tpcc::connect::MyConnector;
use oltplab_workloads::tpcc::{Connector, Purpose};

use crate::workload::target::{Db, DbSpec};
use oltplab_schema::{ClusterFailover, ClusterRun, WsrepNode};

/// Each node's counters at the window's start, on connections kept for its end.
pub struct WsrepSampler {
    nodes: Vec<(StatusProbe, WsrepStatus)>,
    started: Instant,
}

impl WsrepSampler {
    /// `None` when a node cannot be read (the run goes on without the figures).
    pub fn start(node_urls: &[String]) -> Option<WsrepSampler> {
        let mut nodes = Vec::new();
        for url in node_urls {
            let mut probe = StatusProbe::open(url).ok()?;
            let at_start = probe.read()?;
            nodes.push((probe, at_start));
        }
        Some(WsrepSampler {
            nodes,
            started: Instant::now(),
        })
    }

    /// The differences since [`WsrepSampler::start`]; a node that cannot be read any more (it
    /// died) is left out.
    pub fn finish(self) -> Vec<WsrepNode> {
        let window_s = self.started.elapsed().as_secs_f64().max(1e-9);
        let mut out = Vec::new();
        for (i, (mut probe, start)) in self.nodes.into_iter().enumerate() {
            let Some(end) = probe.read() else {
                continue;
            };
            let paused_s = end
                .flow_control_paused_ns
                .saturating_sub(start.flow_control_paused_ns) as f64
                / 1e9;
            out.push(WsrepNode {
                node: i as u32 + 1,
                local_cert_failures: end
                    .local_cert_failures
                    .saturating_sub(start.local_cert_failures),
                local_bf_aborts: end.local_bf_aborts.saturating_sub(start.local_bf_aborts),
                flow_control_paused_s: paused_s,
                flow_control_paused_share: (paused_s / window_s).min(1.0),
                apply_window: end.apply_window,
                commit_window: end.commit_window,
                local_commits: end.local_commits.saturating_sub(start.local_commits),
                repl_messages: window_mean_ns(&start, &end)
                    .map_or(0, |_| window_messages(&start, &end)),
                repl_latency_ns_mean: window_mean_ns(&start, &end),
            });
        }
        out
    }
}

/// Messages a node measured between two readings of `wsrep_evs_repl_latency` (0 if its
/// statistics were reset in between: a fall in the count, or a change of the group's size, as
/// when a node dies, after which the group's statistics start again).
fn window_messages(start: &WsrepStatus, end: &WsrepStatus) -> u64 {
    if end.cluster_size != start.cluster_size {
        return 0;
    }
    end.repl_latency_samples
        .saturating_sub(start.repl_latency_samples)
}

/// Their mean latency: the difference of the sums over the difference of the counts, since the
/// server reports a running mean. None where the readings cannot both be of one running mean
/// (a sum that did not grow: a reset the count did not show).
fn window_mean_ns(start: &WsrepStatus, end: &WsrepStatus) -> Option<f64> {
    let n = window_messages(start, end);
    let sum_s = end.repl_latency_mean_s * end.repl_latency_samples as f64
        - start.repl_latency_mean_s * start.repl_latency_samples as f64;
    (n > 0 && sum_s > 0.0).then(|| sum_s / n as f64 * 1e9)
}

/// A workload's checks on every node of a cluster: `check` on node 1 (through `db`'s connector)
/// and on each further node, a condition violated on any node counting as violated (naming the
/// node); then the nodes' checksums of `tables`. Returns the conditions, and whether the nodes
/// hold the same data (an error to return after the cluster is stopped). On a single server:
/// `check` alone.
pub fn check_every_node(
    db: &Db,
    spec: &DbSpec,
    tables: &[&str],
    quiet: bool,
    check: impl Fn(&dyn Connector) -> Result<Vec<Condition>>,
) -> Result<(Vec<Condition>, Result<()>)> {
    if db.node_urls.len() < 2 {
        return Ok((check(db.connector.as_ref())?, Ok(())));
    }
    if !quiet {
        eprintln!("node 1:");
    }
    let mut conditions = check(db.connector.as_ref())?;
    for (i, url) in db.node_urls.iter().enumerate().skip(1) {
        let node = MyConnector {
            url: url.clone(),
            isolation: spec.isolation(),
        };
        if !quiet {
            eprintln!("node {}:", i + 1);
        }
        for (all, this) in conditions.iter_mut().zip(check(&node)?) {
            if all.holds() && !this.holds() {
                *all = Condition {
                    note: Some(format!("on node {}", i + 1)),
                    ..this
                };
            }
        }
    }
    let same = table_checksums(&db.node_urls, tables).and_then(|sums| require_equal(&sums, quiet));
    Ok((conditions, same))
}

/// After a cluster's run, before it stops: which nodes went away and when (a `node_died` warning
/// each), where their connections went, and whether every acknowledged New-Order is on each node
/// still running (read with causal reads, so a node's apply lag is not taken for a loss).
/// `acknowledged`: the driver's record of New-Orders whose commit returned, (w_id, d_id, o_id).
pub fn verify_run(
    db: &mut Db,
    spec: &DbSpec,
    run_started: SystemTime,
    acknowledged: &[(i64, i64, i64)],
) -> Result<Option<(ClusterRun, Vec<Warning>)>> {
    let (Some(handle), Some(cluster)) = (db.cluster_log.clone(), db.cluster.as_mut()) else {
        return Ok(None);
    };
    let log = handle.log();
    let nodes = cluster.nodes().len();
    let dead = cluster.dead_nodes();
    let alive: Vec<usize> = (0..nodes)
        .filter(|i| !dead.iter().any(|(d, _)| d == i))
        .collect();
    let mut missing = 0u64;
    for &i in &alive {
        missing = missing.max(missing_orders(&db.node_urls[i], spec, acknowledged)?);
    }
    let t_of = |at: SystemTime| {
        at.duration_since(run_started)
            .map_or(0.0, |d| d.as_secs_f64())
    };
    let failovers: Vec<ClusterFailover> = log
        .failovers
        .iter()
        .map(|f| ClusterFailover {
            from_node: f.from_node as u32 + 1,
            to_node: f.to_node as u32 + 1,
            at: rfc3339_micros(f.at),
            t_s: t_of(f.at),
        })
        .collect();
    let names = |v: &[usize]| {
        v.iter()
            .map(|i| (i + 1).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let warnings = dead
        .iter()
        .map(|(i, what)| {
            let moved: Vec<&ClusterFailover> =
                failovers.iter().filter(|f| f.from_node as usize == i + 1).collect();
            let seen = match moved.first() {
                Some(f) => format!(
                    "first seen by a connection {:.1} s into the run ({}); {} connection{} moved to other nodes",
                    f.t_s,
                    f.at,
                    moved.len(),
                    if moved.len() == 1 { "" } else { "s" }
                ),
                None => "no connection noticed".to_string(),
            };
            Warning::new(
                WarningKind::NodeDied,
                format!(
                    "node {} of {nodes} went away during the run ({what}), {seen}; the run went on against node{} {}, {}",
                    i + 1,
                    if alive.len() == 1 { "" } else { "s" },
                    names(&alive),
                    if missing == 0 {
                        format!(
                            "which hold all {} acknowledged New-Orders",
                            acknowledged.len()
                        )
                    } else {
                        format!(
                            "which lack {missing} of the {} acknowledged New-Orders",
                            acknowledged.len()
                        )
                    }
                ),
            )
        })
        .collect();
    Ok(Some((
        ClusterRun {
            nodes: nodes as u32,
            nodes_alive_at_end: alive.iter().map(|i| *i as u32 + 1).collect(),
            failovers,
            acknowledged_new_orders: acknowledged.len() as u64,
            missing_new_orders: missing,
        },
        warnings,
    )))
}

/// How many of `keys` (w_id, d_id, o_id) the node at `url` has no ORDER row for.
fn missing_orders(url: &str, spec: &DbSpec, keys: &[(i64, i64, i64)]) -> Result<u64> {
    let node = MyConnector {
        url: url.to_string(),
        isolation: spec.isolation(),
    };
    let mut conn = node.connect(Purpose::Check)?;
    let failed = |e: oltplab_workloads::sql::DbError| {
        Error::failed(format!(
            "cannot look up the acknowledged New-Orders on a node: {e}"
        ))
    };
    conn.batch("SET SESSION wsrep_sync_wait = 1")
        .map_err(failed)?;
    // By district, one range read of the primary key each: a list of keys in an IN makes
    // InnoDB scan ORDERS for every list.
    let mut by_district: std::collections::BTreeMap<(i64, i64), Vec<i64>> = Default::default();
    for &(w, d, o) in keys {
        by_district.entry((w, d)).or_default().push(o);
    }
    let mut missing = 0u64;
    for ((w, d), mut ids) in by_district {
        ids.sort_unstable();
        ids.dedup();
        let (lo, hi) = (ids[0], ids[ids.len() - 1]);
        let rows = conn
            .query(&format!(
                "SELECT o_id FROM orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_id BETWEEN {lo} AND {hi}"
            ))
            .map_err(failed)?;
        let present: std::collections::HashSet<i64> =
            (0..rows.len()).map(|r| rows.get(r, 0).i64()).collect();
        missing += ids.iter().filter(|o| !present.contains(o)).count() as u64;
    }
    conn.rollback().map_err(failed)?;
    Ok(missing)
}

/// One table's checksum on each node, node 1 first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableChecksums {
    pub table: String,
    pub by_node: Vec<Option<u64>>,
}

impl TableChecksums {
    pub fn equal(&self) -> bool {
        self.by_node.windows(2).all(|w| w[0] == w[1]) && self.by_node.iter().all(Option::is_some)
    }
}

/// `CHECKSUM TABLE` of `tables` on every node.
pub fn table_checksums(node_urls: &[String], tables: &[&str]) -> Result<Vec<TableChecksums>> {
    let mut out: Vec<TableChecksums> = tables
        .iter()
        .map(|t| TableChecksums {
            table: t.to_string(),
            by_node: Vec::new(),
        })
        .collect();
    for url in node_urls {
        for (t, sum) in out.iter_mut().zip(galera::table_checksums(url, tables)?) {
            t.by_node.push(sum);
        }
    }
    Ok(out)
}

/// Prints the comparison and fails (exit code 1) when a table differs between nodes.
pub fn require_equal(sums: &[TableChecksums], quiet: bool) -> Result<()> {
    if !quiet {
        eprintln!(
            "table checksums on {} nodes:",
            sums.first().map_or(0, |s| s.by_node.len())
        );
        for s in sums {
            eprintln!(
                "  {:<18} {}",
                s.table,
                if s.equal() {
                    "equal".to_string()
                } else {
                    format!(
                        "DIFFER ({})",
                        s.by_node
                            .iter()
                            .map(|v| v.map_or("none".to_string(), |v| v.to_string()))
                            .collect::<Vec<_>>()
                            .join(" / ")
                    )
                }
            );
        }
    }
    let differ: Vec<&str> = sums
        .iter()
        .filter(|s| !s.equal())
        .map(|s| s.table.as_str())
        .collect();
    if differ.is_empty() {
        Ok(())
    } else {
        Err(Error::failed(format!(
            "the cluster's nodes hold different data in {}: replication lost or reordered a change; keep the data directory and its node logs for a bug report",
            differ.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_are_equal_only_when_every_node_has_the_same() {
        let t = |v: Vec<Option<u64>>| TableChecksums {
            table: "stock".into(),
            by_node: v,
        };
        assert!(t(vec![Some(1), Some(1), Some(1)]).equal());
        assert!(!t(vec![Some(1), Some(2), Some(1)]).equal());
        assert!(!t(vec![Some(1), None]).equal());
        assert!(require_equal(&[t(vec![Some(1), Some(2)])], true).is_err());
        assert!(require_equal(&[t(vec![Some(3), Some(3)])], true).is_ok());
    }

    #[test]
    fn the_windows_replication_latency_comes_from_the_running_means() {
        let at = |mean_s: f64, samples: u64| WsrepStatus {
            repl_latency_mean_s: mean_s,
            repl_latency_samples: samples,
            ..WsrepStatus::default()
        };
        // 100 messages of 200 µs, then 100 more of 400 µs: the window's are 400 µs.
        let (start, end) = (at(200e-6, 100), at(300e-6, 200));
        assert_eq!(window_messages(&start, &end), 100);
        assert!((window_mean_ns(&start, &end).unwrap() - 400e3).abs() < 1e-6);
        assert_eq!(window_mean_ns(&end, &end), None, "no message, no mean");
        assert_eq!(window_mean_ns(&end, &at(1e-3, 5)), None, "reset in between");
        // A reset the count hides: more messages since it than before, a smaller sum.
        assert_eq!(window_mean_ns(&end, &at(10e-6, 300)), None);
        // A node left the group (its statistics start again): no mean, and no messages counted.
        let left = WsrepStatus {
            cluster_size: 2,
            ..at(350e-6, 400)
        };
        let three = WsrepStatus {
            cluster_size: 3,
            ..start.clone()
        };
        assert_eq!(window_messages(&three, &left), 0);
        assert_eq!(window_mean_ns(&three, &left), None);
    }
}
