//! `oltplab study --scenario cluster`: what synchronous replication costs on a given storage. One
//! MariaDB server and a Galera cluster of three MariaDB nodes (`--nodes`) run the same TPC-C, in
//! S1's proportions (one terminal per warehouse, a buffer pool of 2.5 % of the data), each on every
//! listed emulated device — the single server on one instance of it, each node on its own — and a
//! row per run gives New-Orders per minute, New-Order's response time (which ends with the
//! commit), every write transaction's COMMIT round trip and the share of it the nodes measured as
//! replication, certification conflicts per 1,000 transactions and the share of the window flow
//! control paused replication, with each node's I/O. All nodes share this machine's cores and
//! talk over loopback: the study measures replication's and storage's cost, not scale-out
//! (docs/cluster.md). The scenario is studies/cluster.toml with its options applied
//! (`scenario_file`), each run — a system on a device — a cell of the study-file engine, saved
//! when it finishes and resumable (`run`). Writes each run's result (`run-<device>-<system>/`),
//! each cell, `results.json` (kind `study`, rewritten after every run) and `report.html`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec};
use oltplab_metrics::schema::{now_rfc3339, ResultDoc};
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;
use serde_json::Value;

use super::cells;
use super::database::{Database, SERVER_POOL_BYTES_MIN};
use super::file::{self, CellPlan, FileStudy, Measure};
use super::shipped::{
    apply_to_shipped, command_file, file_name, split_devices, toml_list, toml_string, ScenarioFile,
    Shipped, S1_POOL_SHARE, SHIPPED_FILES,
};
use super::{secs, Scale, State, StudyArgs, DEFAULT_DEVICES};
use crate::output;
use crate::plugins::tpcc;
use crate::workload::target::Engine;
use crate::STOP;
use oltplab_schema::{
    CellAxes, ClusterCellResult as CellResult, ClusterStudyRow, ClusterStudySummary, TpccResult,
};

/// The cluster's size without `--nodes`: the smallest that survives a node's loss.
pub const NODES: u32 = 3;

/// The seed of both loads and every run.
const SEED: u64 = 1;

/// The systems of each device, its cells in order: the single server, then the cluster.
const SYSTEMS: [&str; 2] = ["mariadb", "galera"];

#[derive(Debug, Serialize)]
struct ClusterConfig {
    scenario: String,
    nodes: u32,
    devices: Vec<String>,
    scale: Scale,
    seed: u64,
    /// The study file it ran, and its cells (a system on a device each) in order.
    file: PathBuf,
    cells: Vec<String>,
}

/// The scale in S1's proportions: a warehouse per node at least, one terminal per warehouse (ten
/// when paced), the buffer pool S1's share of the loaded data.
pub(super) fn cluster_scale(name: &str, pacing: super::Pacing, nodes: u32) -> Scale {
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

/// `--scenario cluster` as the study file it runs: studies/cluster.toml with `--scale`,
/// `--pacing`, `--nodes` and `--devices` applied, after the options the scenario does not take
/// are refused.
pub(super) fn scenario_file(args: &StudyArgs) -> Result<ScenarioFile> {
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
    if args.workload != "tpcc" {
        return Err(Error::usage(
            "--workload belongs to the cache-tiers and placement scenarios; the cluster scenario runs its own workload",
        ));
    }
    super::shipped::s1_server_settings(args)?;
    let given = args.devices != DEFAULT_DEVICES;
    let block = if given {
        let specs = split_devices(&args.devices)?
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
        let mut text = String::from("devices = [\n");
        for s in &specs {
            text.push_str(&format!("  {},\n", toml_string(&s.name())));
        }
        text.push_str("]\n");
        Some((
            "devices = [",
            text,
            format!("devices from --devices {}", args.devices),
        ))
    } else {
        None
    };
    let Some((_, label, shipped)) = SHIPPED_FILES
        .iter()
        .find(|(s, ..)| *s == super::Scenario::Cluster)
    else {
        unreachable!("studies/cluster.toml is shipped")
    };
    let nodes = args.nodes.unwrap_or(NODES);
    let (body, applied) = apply_to_shipped(
        label,
        shipped,
        &[
            ("scale", Some(toml_string(&args.scale))),
            ("pacing", Some(toml_list(&[args.pacing.name()]))),
            ("nodes", Some(nodes.to_string())),
        ],
        &[],
        &Shipped {
            block: block
                .as_ref()
                .map(|(start, text, note)| (*start, text.as_str(), note.clone())),
            ..Shipped::default()
        },
    )?;
    let mut command = format!(
        "oltplab study --scenario cluster --scale {} --nodes {nodes}",
        args.scale
    );
    if args.pacing != super::Pacing::None {
        command.push_str(&format!(" --pacing {}", args.pacing.name()));
    }
    if given {
        command.push_str(&format!(" --devices {}", args.devices));
    }
    command_file(label, &command, &body, applied)
}

/// `oltplab study --scenario cluster`: the shipped file with the options given, run here.
pub(super) fn run_scenario(args: &StudyArgs) -> Result<()> {
    let built = scenario_file(args)?;
    let study = built.parse()?;
    run(&study, args, Some(&built))
}

/// The cluster study's cells: per device, the single server's run, then the cluster's, named
/// `mariadb_<device>` and `galera<nodes>_<device>`, each with a hash of the device's spec, the
/// system, its nodes and the scale.
pub(super) fn plan_cells(specs: &[Spec], nodes: u32, scale: &Scale) -> Vec<CellPlan> {
    let mut cells = Vec::new();
    for spec in specs {
        let name = file_name(&spec.name());
        for system in SYSTEMS {
            let system_nodes = if system == "mariadb" { 1 } else { nodes };
            #[derive(Serialize)]
            struct Key<'a> {
                device: String,
                system: &'a str,
                nodes: u32,
                scale: &'a Scale,
                seed: u64,
            }
            let key = serde_json::to_string(&Key {
                device: spec.name(),
                system,
                nodes: system_nodes,
                scale,
                seed: SEED,
            })
            .expect("serialises");
            let id = match system {
                "mariadb" => format!("mariadb_{name}"),
                _ => format!("galera{nodes}_{name}"),
            };
            cells.push(CellPlan {
                id,
                hash: format!("{:08x}", file::fnv1a(key.as_bytes()) as u32),
                axes: CellAxes {
                    engine: "mariadb".into(),
                    engine_name: system.into(),
                    device: spec.name(),
                    device_name: name.clone(),
                    workload: "tpcc".into(),
                    terminals: scale.terminals,
                    pacing: if scale.keying_think {
                        super::Pacing::Spec
                    } else {
                        super::Pacing::None
                    }
                    .name()
                    .into(),
                    ..CellAxes::default()
                },
                spec: spec.clone(),
                scale: scale.clone(),
                engine_index: 0,
            });
        }
    }
    cells
}

/// Runs the cluster study's measurement: the runs not finished in `--resume DIR`, each saved
/// when it finishes, then the cluster result. `built` is the file the scenario built (None:
/// given or resumed).
pub(super) fn run(study: &FileStudy, args: &StudyArgs, built: Option<&ScenarioFile>) -> Result<()> {
    let Measure::Cluster { devices, nodes } = &study.measure else {
        unreachable!("cluster::run runs measure = \"cluster\"")
    };
    let kept = cells::kept::<Systems>(study, args);
    if args.dry_run {
        let done: Vec<bool> = kept.iter().map(Option::is_some).collect();
        file::print_scenario_plan(study, &done);
        return Ok(());
    }
    if let Some(what) = oltplab_dbs::server::galera::missing() {
        return Err(Error::usage(what));
    }
    let begun = match (built, &args.resume) {
        (Some(file), _) => file::Begun::Built(file),
        (None, Some(_)) => file::Begun::Resumed("the cluster study"),
        (None, None) => file::Begun::File(Some("the cluster study's measurement")),
    };
    let scale = &study.scale;
    let mut cluster = Database::new("galera", &args.data_dir, scale);
    cluster.nodes = Some(*nodes);
    // The sizes every run had, when an earlier run of the study measured them.
    let sizes = kept
        .iter()
        .flatten()
        .next()
        .map(|c| (c.database_bytes, c.buffer_pool_bytes));
    let mut systems = Systems {
        study,
        args,
        specs: devices,
        nodes: *nodes,
        databases: [Database::new("mariadb", &args.data_dir, scale), cluster],
        load_s: [None, None],
        versions: [None, None],
        sizes,
    };
    cells::run(study, args, begun, kept, &mut systems)
}

/// The cluster study's measurement of a study's devices, cell by cell. Each system's database
/// is loaded once, when its first cell runs, and copied for each of its runs; a system whose
/// cells were all kept by `--resume` is not loaded (its load's seconds in the summary are 0).
struct Systems<'a> {
    study: &'a FileStudy,
    args: &'a StudyArgs,
    specs: &'a [Spec],
    nodes: u32,
    /// The single server's database, and the cluster's.
    databases: [Database; 2],
    /// Each system's load in this run, in seconds: None until it is loaded.
    load_s: [Option<f64>; 2],
    /// Each system's server version, as its load in this run reported it.
    versions: [Option<String>; 2],
    /// The loaded data's bytes and the buffer pool (S1's share of them) of every run: from the
    /// cells finished earlier, else from this run's first load.
    sizes: Option<(u64, u64)>,
}

impl Systems<'_> {
    /// Loads system `j` (0: the single server, 1: the cluster) unless it is; false when Ctrl-C
    /// stopped the load.
    fn load(&mut self, j: usize) -> Result<bool> {
        if self.load_s[j].is_some() {
            return Ok(true);
        }
        let scale = &self.study.scale;
        let t0 = Instant::now();
        let version = match self.databases[j].load_tpcc(scale.warehouses, SEED) {
            Ok(v) => v,
            Err(Error::Interrupted) => return Ok(false),
            Err(e) => return Err(e),
        };
        let load_s = t0.elapsed().as_secs_f64();
        self.load_s[j] = Some(load_s);
        self.versions[j] = Some(version);
        let (database_bytes, pool) = *self.sizes.get_or_insert_with(|| {
            // The single server's data, which the first run loads (the cluster's node 1 if
            // the study starts with a cluster run).
            let bytes = super::database::tree_bytes(&self.databases[j].base);
            (
                bytes,
                ((bytes as f64 * S1_POOL_SHARE) as u64).max(SERVER_POOL_BYTES_MIN),
            )
        });
        for d in &mut self.databases {
            d.buffer_pool_bytes = pool;
        }
        output::note!(
            "loaded in {:.0} s ({}); buffer pool {} = {:.1} % of the loaded {}",
            load_s,
            if j == 0 {
                "one server".to_string()
            } else {
                format!("{} nodes", self.nodes)
            },
            format_bytes(pool),
            S1_POOL_SHARE * 100.0,
            format_bytes(database_bytes)
        );
        Ok(true)
    }
}

impl cells::Measurement for Systems<'_> {
    type Cell = CellResult;
    type Summary = ClusterStudySummary;
    const CELLS: &'static str = "runs";

    fn intro(&self, out: &Path) {
        let scale = &self.study.scale;
        output::note!(
            "oltplab study cluster — one MariaDB vs a {}-node Galera cluster on {}: TPC-C, {} warehouses, {} terminals, {} warm-up + {} measured per run; output {}",
            self.nodes,
            self.specs.iter().map(Spec::name).collect::<Vec<_>>().join(", "),
            scale.warehouses,
            scale.terminals,
            secs(scale.warmup_s),
            secs(scale.duration_s),
            out.display()
        );
    }

    fn doc(
        &self,
        started_at: &str,
        results: &[Option<CellResult>],
        state: State,
        ran: usize,
    ) -> ResultDoc<ClusterStudySummary, Value> {
        let study = self.study;
        let scale = &study.scale;
        let cells: Vec<CellResult> = results.iter().flatten().cloned().collect();
        let config = ClusterConfig {
            scenario: super::Scenario::Cluster.name().into(),
            nodes: self.nodes,
            devices: self.specs.iter().map(Spec::name).collect(),
            scale: scale.clone(),
            seed: SEED,
            file: study.path.clone(),
            cells: study.cells.iter().map(|c| c.id.clone()).collect(),
        };
        let (database_bytes, buffer_pool_bytes) = cells
            .first()
            .map(|c| (c.database_bytes, c.buffer_pool_bytes))
            .or(self.sizes)
            .unwrap_or_default();
        let mut rows: Vec<ClusterStudyRow> = cells.iter().map(|c| c.row.clone()).collect();
        add_ratios(&mut rows);
        let summary = ClusterStudySummary {
            scenario: config.scenario.clone(),
            nodes: self.nodes,
            warehouses: scale.warehouses,
            terminals: scale.terminals,
            buffer_pool_bytes,
            database_bytes,
            load_s: self.load_s[0].unwrap_or(0.0),
            cluster_load_s: self.load_s[1].unwrap_or(0.0),
            rows,
            interrupted: state != State::Finished,
            cells,
        };
        let mut doc = super::new_study_doc(
            started_at.to_string(),
            &config,
            &self.args.data_dir,
            summary,
        );
        // The single server's version, as its load reported it.
        doc.env.engine_version = doc
            .summary
            .cells
            .iter()
            .find(|c| c.row.system == "mariadb")
            .map(|c| c.engine_version.clone())
            .or_else(|| self.versions.iter().flatten().next().cloned());
        doc.env
            .engine_settings
            .insert("galera_nodes".into(), self.nodes.to_string());
        let warnings: Vec<Warning> = doc
            .summary
            .cells
            .iter()
            .flat_map(|c| c.warnings.clone())
            .collect();
        doc.warnings.extend(warnings);
        let (finished, total) = (doc.summary.cells.len(), study.cells.len());
        doc.warnings
            .extend(state.unfinished_warning(finished, total, "runs", ran));
        doc
    }

    fn measure(
        &mut self,
        i: usize,
        cell: &CellPlan,
        _: &[Option<CellResult>],
        out: &Path,
    ) -> Result<Option<CellResult>> {
        // Per device: the single server, then the cluster.
        let (spec, j) = (&self.specs[i / 2], i % 2);
        let system = SYSTEMS[j];
        output::note!(
            "\n[{}/{}] {} ({} on {})",
            i + 1,
            self.study.cells.len(),
            cell.id,
            if j == 0 {
                "one MariaDB server".to_string()
            } else {
                format!("{} Galera nodes, each", self.nodes)
            },
            spec.name()
        );
        // A run stopped by Ctrl-C is not finished: it reruns, on a fresh copy.
        if !self.load(j)? {
            return Ok(None);
        }
        let system_nodes = if j == 0 { 1 } else { self.nodes };
        let (row, warnings) = match run_one(
            spec,
            &cell.axes.device_name,
            (system, system_nodes),
            &self.study.scale,
            &self.databases[j],
            out,
        ) {
            Ok(r) => r,
            Err(Error::Interrupted) => return Ok(None),
            Err(e) => return Err(e),
        };
        let (database_bytes, buffer_pool_bytes) = self.sizes.unwrap_or_default();
        Ok(Some(CellResult {
            id: cell.id.clone(),
            config_hash: cell.hash.clone(),
            finished_at: now_rfc3339(),
            engine_version: self.versions[j].clone().unwrap_or_default(),
            database_bytes,
            buffer_pool_bytes,
            row,
            warnings,
        }))
    }

    fn table(&self, summary: &ClusterStudySummary, out: &Path) {
        print_table(summary);
        output::say!("results: {}", out.display());
    }
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

    /// `--scenario cluster --scale quick` is studies/cluster.toml as shipped, with the same
    /// cells; every option given lands in the file it runs.
    #[test]
    fn the_scenario_is_its_shipped_file_with_the_options_applied() {
        use super::super::tests::study_args;
        let quick =
            scenario_file(&study_args(&["--scenario", "cluster", "--scale", "quick"])).unwrap();
        assert!(quick.applied.is_empty(), "{:?}", quick.applied);
        let ran = file::parse(Path::new(quick.label), &quick.text).unwrap();
        let shipped = file::parse(
            Path::new("studies/cluster.toml"),
            include_str!("../../../../studies/cluster.toml"),
        )
        .unwrap();
        let cells = |s: &FileStudy| -> Vec<(String, String)> {
            s.cells
                .iter()
                .map(|c| (c.id.clone(), c.hash.clone()))
                .collect()
        };
        assert_eq!(cells(&ran), cells(&shipped));
        assert_eq!(cells(&ran).len(), 6);
        let args = study_args(&[
            "--scenario",
            "cluster",
            "--scale",
            "test",
            "--nodes",
            "2",
            "--pacing",
            "spec",
            "--devices",
            "pcie-flash-2012,hdd-10k",
        ]);
        let built = scenario_file(&args).unwrap();
        let study = built.parse().unwrap();
        let Measure::Cluster { devices, nodes } = &study.measure else {
            panic!("{:?}", study.measure)
        };
        assert_eq!(*nodes, 2);
        assert_eq!(
            devices.iter().map(Spec::name).collect::<Vec<_>>(),
            ["pcie-flash-2012", "hdd-10k"]
        );
        assert_eq!(study.scale.name, "test");
        assert!(study.scale.keying_think);
        assert_eq!(study.cells[1].id, "galera2_pcie-flash-2012");
        for (given, says) in [
            (&["--repeat", "2"][..], "--repeat belongs to the s1"),
            (&["--engine", "postgres"], "drop --engine"),
            (
                &["--devices", "hdd-10k,hdd-10k"],
                "--devices names hdd-10k twice",
            ),
            (&["--workload", "brokerage"], "--workload belongs"),
        ] {
            let mut all = vec!["--scenario", "cluster"];
            all.extend(given);
            let e = scenario_file(&study_args(&all)).err().unwrap();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(says), "{given:?}: {e}");
        }
    }

    /// Per device the single server's cell, then the cluster's; a cell's hash follows its
    /// device, its system's nodes and the scale, so the single server's cells stay the same
    /// where the scale does.
    #[test]
    fn each_system_on_each_device_is_a_cell_in_order() {
        let specs: Vec<Spec> = ["hdd-10k", "pcie-flash-2012"]
            .iter()
            .map(|t| parse_spec(t).unwrap())
            .collect();
        let test = |nodes| cluster_scale("test", super::super::Pacing::None, nodes);
        let cells = plan_cells(&specs, 3, &test(3));
        let ids: Vec<&str> = cells.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "mariadb_hdd-10k",
                "galera3_hdd-10k",
                "mariadb_pcie-flash-2012",
                "galera3_pcie-flash-2012"
            ]
        );
        let hashes: std::collections::BTreeSet<&str> =
            cells.iter().map(|c| c.hash.as_str()).collect();
        assert_eq!(hashes.len(), 4);
        assert_eq!(plan_cells(&specs, 3, &test(3))[1].hash, cells[1].hash);
        // Another scale is another cell; so is a cluster of another size.
        let quick = cluster_scale("quick", super::super::Pacing::None, 3);
        assert_ne!(plan_cells(&specs, 3, &quick)[0].hash, cells[0].hash);
        let same_scale = Scale {
            terminals: 3,
            ..test(4)
        };
        let four = plan_cells(&specs, 4, &same_scale);
        assert_eq!(four[1].id, "galera4_hdd-10k");
        assert_ne!(four[1].hash, cells[1].hash);
        assert_eq!(
            four[0].hash, cells[0].hash,
            "the single server's run is the same"
        );
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
