//! `oltplab study --scenario cluster`: what synchronous replication costs on a given storage. One
//! MariaDB server and a Galera cluster of three MariaDB nodes (`--nodes`) run the same TPC-C, in
//! S1's proportions (one terminal per warehouse, a buffer pool of 2.5 % of the data), each on every
//! listed emulated device — the single server on one instance of it, each node on its own — and a
//! row per run gives New-Orders per minute, New-Order's response time (which ends with the
//! commit), every write transaction's COMMIT round trip and the share of it the nodes measured as
//! replication, certification conflicts per 1,000 transactions and the share of the window flow
//! control paused replication, with each node's I/O. All nodes share this machine's cores and
//! talk over loopback: the study measures replication's and storage's cost, not scale-out
//! (docs/cluster.md).
//!
//! Why a scenario and not a study file (`study --file`): a file's cells each get S1's
//! measurement — the device's own figures, one trace, its replays, α — and a cluster's run has a
//! trace per node and figures of its own (conflicts, flow control), which none of those steps
//! know.

use std::path::Path;
use std::sync::atomic::Ordering;

use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec};
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;

use super::database::{Database, SERVER_POOL_BYTES_MIN};
use super::shipped::{file_name, split_devices, S1_POOL_SHARE};
use super::{new_study_doc, prepare, save, secs, Scale, StudyArgs, DEFAULT_DEVICES};
use crate::output;
use crate::plugins::tpcc;
use crate::workload::target::Engine;
use crate::STOP;
use oltplab_schema::{ClusterStudyRow, ClusterStudySummary, TpccResult};

/// The cluster's size without `--nodes`: the smallest that survives a node's loss.
pub const NODES: u32 = 3;
/// S1's three devices.
const CLUSTER_DEVICES: &str = "hdd-10k,sata-ssd-2010,pcie-flash-2012";

#[derive(Debug, Serialize)]
struct ClusterConfig {
    scenario: String,
    nodes: u32,
    devices: Vec<String>,
    scale: Scale,
    seed: u64,
}

/// The scale in S1's proportions: a warehouse per node at least, one terminal per warehouse (ten
/// when paced), the buffer pool S1's share of the loaded data.
fn cluster_scale(name: &str, pacing: super::Pacing, nodes: u32) -> Scale {
    let mut scale = Scale::named(name);
    if name == "test" {
        // The tests' hidden scale keeps its one warehouse, with a terminal per node on it: its
        // runs are seconds long and show that the study runs, not what a cluster costs, and
        // each further warehouse costs two loads' time.
        scale.terminals = nodes;
    } else {
        scale.warehouses = scale.warehouses.max(nodes);
        scale.terminals = scale.warehouses;
    }
    scale.pool_share_of_data = Some(S1_POOL_SHARE);
    scale.paced(pacing)
}

pub fn run(args: &StudyArgs) -> Result<()> {
    if args.repeat != 1 {
        return Err(Error::usage(
            "--repeat belongs to the s1 scenario; the cluster scenario runs each device once per system",
        ));
    }
    if !matches!(args.engine, Engine::Sqlite | Engine::Mariadb) {
        return Err(Error::usage(format!(
            "the cluster scenario compares one MariaDB server with a Galera cluster of MariaDB nodes, not {}: drop --engine",
            args.engine
        )));
    }
    let devices = if args.devices == DEFAULT_DEVICES {
        CLUSTER_DEVICES.to_string()
    } else {
        args.devices.clone()
    };
    let specs = split_devices(&devices)?
        .iter()
        .map(|t| parse_spec(t).map_err(|e| Error::usage(format!("--devices: `{t}`: {e}"))))
        .collect::<Result<Vec<Spec>>>()?;
    let names: Vec<String> = specs.iter().map(|s| file_name(&s.name())).collect();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(Error::usage(format!(
                "--devices names {n} twice: give each device once"
            )));
        }
    }
    if let Some(what) = oltplab_dbs::server::galera::missing() {
        return Err(Error::usage(what));
    }
    let nodes = args.nodes.unwrap_or(NODES);
    let scale = cluster_scale(&args.scale, args.pacing, nodes);
    let (started_at, out) = prepare(args)?;
    let config = ClusterConfig {
        scenario: args.scenario.to_string(),
        nodes,
        devices: specs.iter().map(Spec::name).collect(),
        scale: scale.clone(),
        seed: 1,
    };
    output::note!(
        "oltplab study cluster — one MariaDB vs a {nodes}-node Galera cluster on {}: TPC-C, {} warehouses, {} terminals, {} warm-up + {} measured per run; output {}",
        config.devices.join(", "),
        scale.warehouses,
        scale.terminals,
        secs(scale.warmup_s),
        secs(scale.duration_s),
        out.display()
    );

    // One load per system, copied for each run, so every run starts from the same data.
    let mut single = Database::new("mariadb", &args.data_dir, &scale);
    let mut cluster = Database::new("galera", &args.data_dir, &scale);
    cluster.nodes = Some(nodes);
    let t0 = std::time::Instant::now();
    let engine_version = single.load_tpcc(scale.warehouses, config.seed)?;
    let load_s = t0.elapsed().as_secs_f64();
    let t0 = std::time::Instant::now();
    cluster.load_tpcc(scale.warehouses, config.seed)?;
    let cluster_load_s = t0.elapsed().as_secs_f64();
    let database_bytes = super::database::tree_bytes(&single.base);
    let pool = ((database_bytes as f64 * S1_POOL_SHARE) as u64).max(SERVER_POOL_BYTES_MIN);
    single.buffer_pool_bytes = pool;
    cluster.buffer_pool_bytes = pool;
    output::note!(
        "loaded in {:.0} s (one server) and {:.0} s ({nodes} nodes); buffer pool {} = {:.1} % of the loaded {}",
        load_s,
        cluster_load_s,
        format_bytes(pool),
        S1_POOL_SHARE * 100.0,
        format_bytes(database_bytes)
    );

    let summary = ClusterStudySummary {
        scenario: args.scenario.to_string(),
        nodes,
        warehouses: scale.warehouses,
        terminals: scale.terminals,
        buffer_pool_bytes: pool,
        database_bytes,
        load_s,
        cluster_load_s,
        ..ClusterStudySummary::default()
    };
    let mut doc = new_study_doc(started_at, &config, &args.data_dir, summary);
    doc.env.engine_version = Some(engine_version);
    doc.env
        .engine_settings
        .insert("galera_nodes".into(), nodes.to_string());

    let runs = specs.len() * 2;
    'devices: for (i, spec) in specs.iter().enumerate() {
        for (j, database) in [&single, &cluster].into_iter().enumerate() {
            if STOP.load(Ordering::Relaxed) {
                break 'devices;
            }
            let system = if j == 0 { "mariadb" } else { "galera" };
            output::note!(
                "\n[{}/{runs}] {} on {}",
                2 * i + j + 1,
                if j == 0 {
                    "one MariaDB server".to_string()
                } else {
                    format!("{nodes} Galera nodes, each")
                },
                spec.name()
            );
            let system_nodes = if j == 0 { 1 } else { nodes };
            match run_one(
                spec,
                &names[i],
                (system, system_nodes),
                &scale,
                database,
                &out,
            ) {
                Ok((row, warnings)) => {
                    doc.warnings.extend(warnings);
                    doc.summary.rows.push(row);
                }
                Err(Error::Interrupted) => break 'devices,
                Err(e) => return Err(e),
            }
            add_ratios(&mut doc.summary.rows);
            save(&doc, &out, args.json.as_deref())?;
        }
    }
    let stopped = |s: &ClusterStudySummary| {
        Warning::new(
            WarningKind::Interrupted,
            format!(
                "Ctrl-C stopped the study after {} of {runs} runs; results.json holds those",
                s.rows.len()
            ),
        )
    };
    super::finish(doc, &out, args.json.as_deref(), stopped, |s| {
        print_table(s);
        output::say!("results: {}", out.display());
    })
}

/// One system (its name and nodes) on a fresh copy of its loaded database, on `spec`.
fn run_one(
    spec: &Spec,
    name: &str,
    (system, nodes): (&str, u32),
    scale: &Scale,
    database: &Database,
    out: &Path,
) -> Result<(ClusterStudyRow, Vec<Warning>)> {
    let copy = database.copy_for(name)?;
    let result_dir = format!("run-{name}-{system}");
    let db = database.spec(&copy)?;
    let cfg = super::database::study_run(scale, db, Some(spec), None, &out.join(&result_dir));
    let result = tpcc::run_with(&cfg, &STOP);
    database.remove_copy(&copy);
    let doc = result?.doc;
    if doc.summary.interrupted {
        return Err(Error::Interrupted);
    }
    let mut row = row_of(&doc, &spec.name(), system, nodes);
    row.result = format!("{result_dir}/{}", output::RESULT_FILE);
    let warnings = doc
        .warnings
        .iter()
        .filter(|w| less_reliable(w.kind))
        .map(|w| Warning::new(w.kind, format!("{system} on {name}: {}", w.message)))
        .collect();
    Ok((row, warnings))
}

/// What makes a row's figures less reliable: the study's warnings and the row's mark.
fn less_reliable(kind: WarningKind) -> bool {
    matches!(
        kind,
        WarningKind::EmulationOffTarget | WarningKind::NotSteady | WarningKind::FewSamples
    )
}

/// A run's row: its figures, from its typed result.
fn row_of(doc: &TpccResult, device: &str, system: &str, nodes: u32) -> ClusterStudyRow {
    let s = &doc.summary;
    let new_order = s.tx.get("new_order");
    let transactions: u64 = s.tx.values().map(|t| t.count).sum();
    let conflicts = s
        .retries_by_kind
        .get("certification_conflict")
        .copied()
        .unwrap_or(0)
        + s.errors_by_kind
            .get("certification_conflict")
            .copied()
            .unwrap_or(0);
    let wsrep = s
        .server_waits
        .as_ref()
        .map(|w| w.wsrep_nodes.clone())
        .unwrap_or_default();
    let measured_s = s.measured_s.max(1e-9);
    ClusterStudyRow {
        device: device.to_string(),
        system: system.to_string(),
        nodes,
        tpmc: s.tpmc,
        tpmc_vs_single: None,
        new_order_lat_ns_p50: new_order.map_or(0, |t| t.lat_ns.p50),
        new_order_lat_ns_p99: new_order.map_or(0, |t| t.lat_ns.p99),
        commit_latency_ns_p50: s.commit.as_ref().map_or(0, |c| c.latency_ns.p50),
        commit_latency_ns_p99: s.commit.as_ref().map_or(0, |c| c.latency_ns.p99),
        commits_with_last_statement: s.commit.as_ref().map_or(0, |c| c.with_last_statement),
        commit_replication_share: s.commit.as_ref().and_then(|c| c.replication_share),
        transactions,
        certification_conflicts: conflicts,
        conflicts_per_1000_tx: if transactions == 0 {
            0.0
        } else {
            conflicts as f64 * 1000.0 / transactions as f64
        },
        flow_control_paused_share: (!wsrep.is_empty()).then(|| {
            wsrep
                .iter()
                .map(|n| n.flow_control_paused_share)
                .sum::<f64>()
                / wsrep.len() as f64
        }),
        io_iops: s.io.iops,
        io_syncs_per_s: s.io.syncs as f64 / measured_s,
        cpu_utilisation: s.cpu.utilisation,
        io_by_node: s.io.by_node.clone(),
        wsrep_nodes: wsrep,
        warnings: doc
            .warnings
            .iter()
            .filter(|w| less_reliable(w.kind))
            .filter_map(|w| {
                serde_json::to_value(w.kind)
                    .ok()?
                    .as_str()
                    .map(String::from)
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
        result: String::new(),
    }
}

/// Each cluster row's tpmC against the single server's on the same device.
fn add_ratios(rows: &mut [ClusterStudyRow]) {
    let singles: Vec<(String, f64)> = rows
        .iter()
        .filter(|r| r.system == "mariadb")
        .map(|r| (r.device.clone(), r.tpmc))
        .collect();
    for r in rows.iter_mut().filter(|r| r.system == "galera") {
        r.tpmc_vs_single = singles
            .iter()
            .find(|(d, t)| *d == r.device && *t > 0.0)
            .map(|(_, t)| r.tpmc / t);
    }
}

fn print_table(s: &ClusterStudySummary) {
    output::say!("");
    output::say!(
        "{:<20} {:<8} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13} {:>9} {:>9}",
        "device",
        "system",
        "NO/min",
        "vs one",
        "NO p50",
        "NO p99",
        "commit p50",
        "commit p99",
        "repl share",
        "conflicts/1k",
        "FC paused",
        "IOPS"
    );
    for r in &s.rows {
        output::say!(
            "{:<20} {:<8} {:>10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>13.1} {:>9} {:>9}",
            r.device,
            if r.warnings.is_empty() {
                r.system.clone()
            } else {
                format!("{} *", r.system)
            },
            format_count(r.tpmc),
            r.tpmc_vs_single
                .map_or("—".to_string(), |x| format!("{x:.2}×")),
            format_ns(r.new_order_lat_ns_p50 as f64),
            format_ns(r.new_order_lat_ns_p99 as f64),
            format_ns(r.commit_latency_ns_p50 as f64),
            format_ns(r.commit_latency_ns_p99 as f64),
            r.commit_replication_share
                .map_or("—".to_string(), |x| format!("{:.0} %", 100.0 * x)),
            r.conflicts_per_1000_tx,
            r.flow_control_paused_share
                .map_or("—".to_string(), |x| format!("{:.0} %", 100.0 * x)),
            format_count(r.io_iops)
        );
        for n in &r.io_by_node {
            output::say!(
                "    node {}: {} IOPS, {} flushes, write p99 {}, flush p99 {}",
                n.node,
                format_count(n.iops),
                format_count(n.syncs as f64),
                format_ns(n.write_lat_ns.p99 as f64),
                format_ns(n.sync_lat_ns.p99 as f64)
            );
        }
    }
    if s.rows.iter().any(|r| !r.warnings.is_empty()) {
        output::say!("* with warnings: see them above and in results.json");
    }
    output::say!(
        "NO = New-Orders; its response time ends with the commit. commit = every write transaction's COMMIT round trip (one server: with its last statement); repl share = the part of the mean commit the nodes measured as replication. All nodes share this machine's cores and loopback: replication's cost, not scale-out."
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_schema::{ServerWaits, TpccSummary, TxSummary, WsrepNode};

    #[test]
    fn the_scale_keeps_s1s_proportions_with_a_warehouse_per_node() {
        let quick = cluster_scale("quick", super::super::Pacing::None, NODES);
        assert_eq!((quick.warehouses, quick.terminals), (3, 3));
        assert_eq!(quick.pool_share_of_data, Some(S1_POOL_SHARE));
        let five = cluster_scale("quick", super::super::Pacing::None, 5);
        assert_eq!((five.warehouses, five.terminals), (5, 5));
        let test = cluster_scale("test", super::super::Pacing::None, 2);
        assert_eq!((test.warehouses, test.terminals), (1, 2));
        let s1 = cluster_scale("s1", super::super::Pacing::None, NODES);
        assert_eq!((s1.warehouses, s1.terminals), (10, 10));
        let paced = cluster_scale("quick", super::super::Pacing::Spec, NODES);
        assert_eq!(paced.terminals, 30);
        assert!(paced.keying_think);
    }

    #[test]
    fn a_row_counts_conflicts_per_thousand_and_the_nodes_mean_flow_control() {
        let mut s = TpccSummary {
            tpmc: 600.0,
            measured_s: 10.0,
            ..TpccSummary::default()
        };
        for (name, count) in [
            ("new_order", 450u64),
            ("payment", 430),
            ("stock_level", 120),
        ] {
            s.tx.insert(
                name.into(),
                TxSummary {
                    count,
                    ..TxSummary::default()
                },
            );
        }
        s.retries_by_kind.insert("certification_conflict".into(), 4);
        s.errors_by_kind.insert("certification_conflict".into(), 1);
        s.retries_by_kind.insert("deadlock".into(), 7);
        s.server_waits = Some(ServerWaits {
            wsrep_nodes: [0.2, 0.4, 0.3]
                .iter()
                .enumerate()
                .map(|(i, share)| WsrepNode {
                    node: i as u32 + 1,
                    flow_control_paused_share: *share,
                    ..WsrepNode::default()
                })
                .collect(),
            ..ServerWaits::default()
        });
        let doc = TpccResult {
            summary: s,
            ..crate::output::new_doc(
                "run",
                String::new(),
                serde_json::Value::Null,
                oltplab_metrics::env::Env::default(),
                TpccSummary::default(),
            )
        };
        let row = row_of(&doc, "hdd-10k", "galera", NODES);
        assert_eq!(row.transactions, 1000);
        assert_eq!(
            row.certification_conflicts, 5,
            "deadlocks are not conflicts"
        );
        assert!((row.conflicts_per_1000_tx - 5.0).abs() < 1e-9);
        assert!((row.flow_control_paused_share.unwrap() - 0.3).abs() < 1e-9);
        assert_eq!(row.nodes, NODES);
        let mut rows = vec![
            ClusterStudyRow {
                device: "hdd-10k".into(),
                system: "mariadb".into(),
                tpmc: 1200.0,
                ..ClusterStudyRow::default()
            },
            row,
        ];
        add_ratios(&mut rows);
        assert_eq!(rows[1].tpmc_vs_single, Some(0.5));
        assert_eq!(rows[0].tpmc_vs_single, None);
    }
}
