//! `oltplab load|run|check tpcc --engine galera` as a user meets it: a 3-node cluster loaded with
//! one warehouse, a short run of eight terminals spread over the nodes on that one warehouse's
//! hot rows (certification conflicts must show up, counted as their own retry kind, and each
//! node's wsrep counters in the result) during which one node is killed, then the check: the
//! twelve conditions on each node and equal table checksums across them. Nothing of the cluster
//! keeps running. Usage errors first.

mod common;

use common::{assert_ok, assert_usage_error, json, oltplab, scratch, stderr};
use std::path::Path;

fn installed() -> bool {
    if !common::server_installed("mariadbd") {
        return false;
    }
    let missing = if oltplab_dbs::server::galera::provider().is_err() {
        Some("Galera (galera-4) is not installed")
    } else if oltplab_dbs::server::find_program(&["openssl"], None).is_none() {
        Some("openssl is not installed")
    } else {
        None
    };
    if let Some(why) = missing {
        oltplab_core::testing::skip(oltplab_core::testing::Need::Server, why);
    }
    missing.is_none()
}

/// mariadbd processes serving a directory under `dir`.
fn servers_under(dir: &Path) -> Vec<u32> {
    let needle = dir.as_os_str().as_encoded_bytes().to_vec();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmd.windows(needle.len()).any(|w| w == needle.as_slice())
            && std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "mariadbd")
        {
            found.push(pid);
        }
    }
    found
}

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
        &["load", "orders", "--engine", "galera", "--data-dir", data],
    );
    assert_usage_error(&out, "not orders");
    let out = oltplab(
        &dir,
        &["run", "tpcc", "--engine", "galera", "--data-dir", data],
    );
    assert_usage_error(&out, "holds no Galera cluster");
    let out = oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--engine",
            "galera",
            "--emulate",
            "hdd-10k",
            "--data-dir",
            data,
        ],
    );
    assert_usage_error(&out, "do not yet reach the nodes");
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

/// Three nodes, one warehouse, eight terminals: hot rows, so certification conflicts; node 3 is
/// killed (kill -9) a second into the window, the run goes on against nodes 1 and 2, says when in
/// a warning, and every New-Order the driver saw committed is on both; then the check re-copies
/// node 3 and finds the conditions holding and the checksums equal on all three.
#[test]
fn galera_conflicts_node_kill_and_equal_nodes() {
    if !installed() {
        return;
    }
    let dir = scratch("galera");
    let data_dir = dir.join("data");
    let data = data_dir.to_str().unwrap();
    let db = [
        "--engine",
        "galera",
        "--data-dir",
        data,
        "--buffer-pool",
        "32m",
    ];

    let t0 = std::time::Instant::now();
    let out = oltplab(
        Path::new("/"),
        &[
            &["load", "tpcc"][..],
            &db,
            &[
                "--nodes",
                "3",
                "--warehouses",
                "1",
                "--threads",
                "2",
                "--no-check",
            ],
        ]
        .concat(),
    );
    assert_ok(&out);
    eprintln!("load: {:.1} s", t0.elapsed().as_secs_f64());
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
        .args(["--terminals", "8", "--warmup", "1s", "--duration", "12s"])
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
            if !killed && line.starts_with("[    1s]") {
                let pid = node_pid(&data_dir, 3).expect("node 3 runs");
                // SAFETY: kill(2) of the node this test's oltplab started.
                assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
                killed = true;
            }
            err.push_str(&line);
            err.push('\n');
        }
        assert!(killed, "the window never started: {err}");
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
    assert_eq!(c["nodes_alive_at_end"], serde_json::json!([1, 2]), "{c}");
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
    assert!(message.contains("node 3 of 3"), "{message}");
    assert!(message.contains("which hold all"), "{message}");

    let t0 = std::time::Instant::now();
    let out = oltplab(Path::new("/"), &[&["check", "tpcc"][..], &db].concat());
    let err = stderr(&out);
    assert_ok(&out);
    eprintln!("check: {:.1} s", t0.elapsed().as_secs_f64());
    assert!(err.contains("node 3:"), "{err}");
    assert!(err.contains("table checksums on 3 nodes"), "{err}");
    assert!(
        !err.contains("VIOLATED") && !err.contains("DIFFER"),
        "{err}"
    );
    assert_eq!(err.matches(" equal").count(), 9, "{err}");

    assert!(servers_under(&dir).is_empty(), "a node outlived oltplab");
    let _ = std::fs::remove_dir_all(&dir);
}
