//! `oltplab load|run|check tpcc --engine galera` as a user meets it: a 3-node cluster loaded with
//! one warehouse, a short run of eight terminals spread over the nodes on that one warehouse's
//! hot rows (certification conflicts must show up, counted as their own retry kind, and each
//! node's wsrep counters in the result) during which one node is killed, then the check: the
//! twelve conditions on each node and equal table checksums across them. Nothing of the cluster
//! keeps running. Usage errors first.

use crate::common;

use common::{
    assert_ok, assert_usage_error, galera_installed, json, mariadbd_under, oltplab, scratch, stderr,
};
use std::path::Path;

#[test]
fn galera_usage_errors_name_the_fix() {
    let dir = scratch("galera-usage");
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let out = oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--engine",
            "mariadb",
            "--nodes",
            "3",
            "--data-dir",
            data,
        ],
    );
    assert_usage_error(&out, "--engine galera");
    let out = oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--emulate",
            "shared:hdd-10k",
            "--data-dir",
            data,
        ],
    );
    assert_usage_error(&out, "--engine galera");
    let out = oltplab(
        &dir,
        &["load", "orders", "--engine", "galera", "--data-dir", data],
    );
    assert_usage_error(&out, "not orders");
    let out = oltplab(
        &dir,
        &["run", "tpcc", "--engine", "galera", "--data-dir", data],
    );
    assert_usage_error(&out, "holds no Galera cluster");
    // A per-node device list is for a cluster's nodes only.
    let out = oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--engine",
            "sqlite",
            "--emulate",
            "node1:hdd-10k;node2:hdd-10k",
            "--data-dir",
            data,
        ],
    );
    assert_usage_error(&out, "--engine galera");
    let out = oltplab(
        &dir,
        &[
            "load",
            "tpcc",
            "--engine",
            "galera",
            "--nodes",
            "0",
            "--data-dir",
            data,
        ],
    );
    assert_usage_error(&out, "--nodes 0");
    let out = oltplab(
        &dir,
        &[
            "load",
            "tpcc",
            "--engine",
            "galera",
            "--url",
            "mysql://root@localhost/x",
        ],
    );
    assert_usage_error(&out, "does not match");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The options every command of a test's cluster in `data` takes.
fn cluster_args(data: &str) -> [&str; 6] {
    [
        "--engine",
        "galera",
        "--data-dir",
        data,
        "--buffer-pool",
        "32m",
    ]
}

/// Loads one warehouse into a cluster of `nodes` nodes (unchecked: each test checks after its
/// runs) and says how long it took.
fn load_cluster(db: &[&str], nodes: &str) {
    let t0 = std::time::Instant::now();
    let out = oltplab(
        Path::new("/"),
        &[
            &["load", "tpcc"][..],
            db,
            &["--nodes", nodes, "--warehouses", "1", "--threads", "2"],
            &["--no-check"],
        ]
        .concat(),
    );
    assert_ok(&out);
    eprintln!("load: {:.1} s", t0.elapsed().as_secs_f64());
}

/// The pid of the mariadbd serving node `k` of the cluster in `data`.
fn node_pid(data: &Path, k: u32) -> Option<u32> {
    let cluster = data.join(format!("galera/node{k}/mariadb"));
    let mut arg = b"--datadir=".to_vec();
    arg.extend_from_slice(cluster.as_os_str().as_encoded_bytes());
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmd.split(|&b| b == 0).any(|a| a == arg.as_slice()) {
            return Some(pid);
        }
    }
    None
}

/// Three nodes, one warehouse, eight terminals: hot rows, so certification conflicts; node 1 —
/// the node that bootstraps the cluster, loads it and serves the checks — is killed (kill -9) in
/// the window's first second with New-Orders, the run goes on against nodes 2 and 3, says when in a warning, and
/// every New-Order the driver saw committed is on both; then the check starts node 1 as a copy
/// of the most advanced survivor, says so, and finds the conditions holding and the checksums
/// equal on all three.
#[test]
fn galera_conflicts_node_kill_and_equal_nodes() {
    if !galera_installed() {
        return;
    }
    let dir = scratch("galera");
    let data_dir = dir.join("data");
    let db = cluster_args(data_dir.to_str().unwrap());
    load_cluster(&db, "3");
    // A run asking for another cluster size is refused before anything starts.
    let out = oltplab(
        Path::new("/"),
        &[&["run", "tpcc"][..], &db, &["--nodes", "2"]].concat(),
    );
    assert_usage_error(&out, "loaded with 3 nodes");

    let t0 = std::time::Instant::now();
    let result = dir.join("result");
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_oltplab"))
        .current_dir("/")
        .args(["run", "tpcc"])
        .args(db)
        // The group waits about 5 s (evs.suspect_timeout) before it drops the killed node.
        .args(["--terminals", "8", "--warmup", "1s", "--duration", "16s"])
        .args(["--report-interval", "1s", "--out", result.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(run.stderr.take().unwrap()).lines();
        let mut killed = false;
        for line in lines.by_ref() {
            let line = line.unwrap();
            // The kill once the window shows New-Orders (its first second on a quiet machine):
            // on a loaded one the first seconds may commit nothing, and a kill then left the
            // survivors' view change alone in the window.
            let new_orders = line
                .strip_prefix('[')
                .and_then(|l| l.split("New-Orders/min").nth(1))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|n| n.replace(',', "").parse::<f64>().ok());
            if !killed && new_orders.is_some_and(|n| n > 0.0) {
                let pid = node_pid(&data_dir, 1).expect("node 1 runs");
                // SAFETY: kill(2) of the node this test's oltplab started.
                assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
                killed = true;
            }
            err.push_str(&line);
            err.push('\n');
        }
        assert!(killed, "no New-Order committed in the window: {err}");
    }
    let status = run.wait().unwrap();
    assert!(status.success(), "{err}");
    eprintln!("run: {:.1} s", t0.elapsed().as_secs_f64());
    let doc = json(&result.join("result.json"));
    let s = &doc["summary"];
    assert!(s["tpmc"].as_f64().unwrap() > 0.0, "{err}");
    let conflicts = s["retries_by_kind"]["certification_conflict"]
        .as_u64()
        .unwrap_or(0);
    assert!(conflicts > 0, "no certification conflict counted: {err}");
    eprintln!("retries by kind: {}", s["retries_by_kind"]);
    // A killed node's socket fails as a lost connection, which moves to another node — not as an
    // error of another kind that every later statement repeats (a reset socket once came back as
    // the client's codec error: 600,000 failures in an 8 s window, terminals never moved).
    let other = s["errors_by_kind"]["other"].as_u64().unwrap_or(0);
    assert!(other < 100, "{}", s["errors_by_kind"]);
    // The commit round trip, and the survivors' share of it as replication.
    let commit = &s["commit"];
    assert!(commit["commits"].as_u64().unwrap() > 0, "{commit}");
    assert_eq!(commit["with_last_statement"], 0, "{commit}");
    // The kill changes the group's view, after which the survivors' replication statistics start
    // again: a window across it has no split (no share rather than a wrong one); the study's
    // test checks the split on a window without a kill.
    if let Some(share) = commit["replication_share"].as_f64() {
        assert!(share > 0.0 && share <= 1.0, "{commit}");
    }
    let nodes = s["server_waits"]["wsrep_nodes"].as_array().unwrap();
    assert!(nodes.len() >= 2, "{}", s["server_waits"]);
    let cert_failures: u64 = nodes
        .iter()
        .map(|n| n["local_cert_failures"].as_u64().unwrap())
        .sum();
    assert!(cert_failures > 0, "{}", s["server_waits"]);
    for n in nodes {
        let share = n["flow_control_paused_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&share), "{n}");
    }
    assert_eq!(doc["env"]["engine_settings"]["galera_nodes"], "3");
    let c = &s["cluster"];
    assert_eq!(c["nodes_alive_at_end"], serde_json::json!([2, 3]), "{c}");
    assert!(c["acknowledged_new_orders"].as_u64().unwrap() > 0, "{c}");
    assert_eq!(c["missing_new_orders"], 0, "{c}");
    let died: Vec<&serde_json::Value> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "node_died")
        .collect();
    assert_eq!(died.len(), 1, "{}", doc["warnings"]);
    let message = died[0]["message"].as_str().unwrap();
    assert!(message.contains("node 1 of 3"), "{message}");
    assert!(message.contains("which hold all"), "{message}");

    let t0 = std::time::Instant::now();
    let out = oltplab(Path::new("/"), &[&["check", "tpcc"][..], &db].concat());
    let err = stderr(&out);
    assert_ok(&out);
    eprintln!("check: {:.1} s", t0.elapsed().as_secs_f64());
    assert!(err.contains("starts as a copy of node"), "{err}");
    assert!(err.contains("node 3:"), "{err}");
    assert!(err.contains("table checksums on 3 nodes"), "{err}");
    assert!(
        !err.contains("VIOLATED") && !err.contains("DIFFER"),
        "{err}"
    );
    assert_eq!(err.matches(" equal").count(), 9, "{err}");

    assert!(mariadbd_under(&dir).is_empty(), "a node outlived oltplab");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two nodes, each on its own emulated device: node 1 on a layout (data on a 2010 SATA SSD, the
/// redo log on a 2012 PCIe card), node 2 on the PCIe card alone. Each node's I/O is in
/// `summary.io.by_node`, nonzero, its own (its model counted only its own I/O, so the nodes did
/// not share a device), summing to `summary.io`; each node has its own trace file and its own
/// fidelity figures. A device list naming a node the cluster lacks is refused first.
#[test]
fn galera_nodes_each_on_their_own_emulated_device() {
    if !galera_installed() {
        return;
    }
    let dir = scratch("galera-emulate");
    let data_dir = dir.join("data");
    let db = cluster_args(data_dir.to_str().unwrap());
    load_cluster(&db, "2");

    let out = oltplab(
        Path::new("/"),
        &[
            &["run", "tpcc"][..],
            &db,
            &["--emulate", "node1:pcie-flash-2012;node3:pcie-flash-2012"],
        ]
        .concat(),
    );
    assert_usage_error(&out, "nodes 1 to 2");

    let t0 = std::time::Instant::now();
    let result = dir.join("result");
    let trace = dir.join("run.trace");
    let out = oltplab(
        Path::new("/"),
        &[
            &["run", "tpcc"][..],
            &db,
            &[
                "--layout",
                "node1:data=sata-ssd-2010,log=pcie-flash-2012;node2:pcie-flash-2012",
                "--trace",
                trace.to_str().unwrap(),
                "--terminals",
                "4",
                "--warmup",
                "1s",
                "--duration",
                "4s",
                "--out",
                result.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_ok(&out);
    eprintln!("run: {:.1} s", t0.elapsed().as_secs_f64());
    let doc = json(&result.join("result.json"));
    let io = &doc["summary"]["io"];
    let nodes = io["by_node"].as_array().expect("summary.io.by_node");
    assert_eq!(nodes.len(), 2, "{io}");
    let ops = |n: &serde_json::Value| n["reads"].as_u64().unwrap() + n["writes"].as_u64().unwrap();
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["node"], i as u64 + 1, "{n}");
        assert!(ops(n) > 0 && n["syncs"].as_u64().unwrap() > 0, "{n}");
        assert!(n["iops"].as_f64().unwrap() > 0.0, "{n}");
        assert!(n["write_lat_ns"]["p99"].as_u64().unwrap() > 0, "{n}");
        assert!(n["sync_lat_ns"]["p50"].as_u64().unwrap() > 0, "{n}");
        let fidelity = &n["emulation"]["fidelity"];
        assert!(fidelity["ios"].as_u64().unwrap() > 0, "{n}");
        // The node's own model saw its own I/O, not both nodes': the trace and the model count
        // the same operations, cut at slightly different instants.
        let modelled: u64 = n["by_device"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["reads"].as_u64().unwrap() + d["writes"].as_u64().unwrap())
            .sum();
        let traced = ops(n) as f64;
        assert!(
            (modelled as f64 - traced).abs() <= 0.2 * traced + 50.0,
            "node {}: model {modelled}, trace {traced}: {n}",
            i + 1
        );
        assert!(
            trace
                .with_file_name(format!("run-node{}.trace", i + 1))
                .is_file(),
            "node {}'s trace",
            i + 1
        );
    }
    assert_eq!(nodes[0]["device"], "data=sata-ssd-2010,log=pcie-flash-2012");
    assert_eq!(nodes[1]["device"], "pcie-flash-2012");
    assert_eq!(
        nodes[0]["by_device"].as_array().unwrap().len(),
        2,
        "{}",
        nodes[0]
    );
    assert_ne!(
        (ops(&nodes[0]), nodes[0]["syncs"].as_u64()),
        (ops(&nodes[1]), nodes[1]["syncs"].as_u64()),
        "two devices, two different nodes' I/O"
    );
    let sum: u64 = nodes.iter().map(|n| n["reads"].as_u64().unwrap()).sum();
    assert_eq!(io["reads"].as_u64().unwrap(), sum, "{io}");
    assert!(
        io["by_device"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["name"].as_str().unwrap().starts_with("node2:")),
        "{io}"
    );
    let per_node = |nodes: &[serde_json::Value]| {
        nodes
            .iter()
            .map(|n| (ops(n), n["syncs"].as_u64().unwrap()))
            .collect::<Vec<_>>()
    };
    eprintln!(
        "own devices, per node (reads + writes, syncs): {:?}",
        per_node(nodes)
    );

    // Asked for, the nodes share one device: one model counts every node's I/O, and the trace
    // still tells each node's apart.
    let result = dir.join("shared");
    let out = oltplab(
        Path::new("/"),
        &[
            &["run", "tpcc"][..],
            &db,
            &["--emulate", "shared:pcie-flash-2012", "--terminals", "4"],
            &["--warmup", "1s", "--duration", "2s"],
            &["--out", result.to_str().unwrap()],
        ]
        .concat(),
    );
    assert_ok(&out);
    let doc = json(&result.join("result.json"));
    let io = &doc["summary"]["io"];
    let shared = io["by_node"].as_array().expect("summary.io.by_node");
    assert_eq!(shared.len(), 2, "{io}");
    for n in shared {
        assert!(ops(n) > 0 && n["syncs"].as_u64().unwrap() > 0, "{n}");
        assert_eq!(n["device"], "shared:pcie-flash-2012", "{n}");
    }
    let devices = io["by_device"].as_array().unwrap();
    assert_eq!(devices.len(), 1, "one device: {io}");
    let modelled = devices[0]["reads"].as_u64().unwrap() + devices[0]["writes"].as_u64().unwrap();
    let traced: u64 = shared.iter().map(ops).sum();
    assert!(
        (modelled as f64 - traced as f64).abs() <= 0.2 * traced as f64 + 50.0,
        "the shared model counted {modelled}, the nodes' traces {traced}: {io}"
    );
    assert!(
        modelled as f64 > 1.2 * shared.iter().map(ops).max().unwrap() as f64,
        "the shared model saw more than one node's I/O: {io}"
    );
    eprintln!(
        "shared device, per node (reads + writes, syncs): {:?}",
        per_node(shared)
    );
    eprintln!(
        "per node (reads, writes, syncs, iops): {:?}",
        nodes
            .iter()
            .map(|n| (&n["reads"], &n["writes"], &n["syncs"], &n["iops"]))
            .collect::<Vec<_>>()
    );
    assert!(mariadbd_under(&dir).is_empty(), "a node outlived oltplab");
    let _ = std::fs::remove_dir_all(&dir);
}
