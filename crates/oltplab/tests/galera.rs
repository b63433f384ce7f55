//! `oltplab load|run|check tpcc --engine galera` as a user meets it: a 2-node cluster loaded with
//! one warehouse, a short run of eight terminals spread over both nodes on that one warehouse's
//! hot rows (certification conflicts must show up, counted as their own retry kind, and each
//! node's wsrep counters in the result), then the check: the twelve conditions on each node and
//! equal table checksums across them. Nothing of the cluster keeps running. Usage errors first.

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

#[test]
fn galera_conflicts_are_counted_and_nodes_agree() {
    if !installed() {
        return;
    }
    let dir = scratch("galera");
    let data = dir.join("data");
    let data = data.to_str().unwrap();
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
                "2",
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
        &[&["run", "tpcc"][..], &db, &["--nodes", "3"]].concat(),
    );
    assert_usage_error(&out, "loaded with 2 nodes");

    let t0 = std::time::Instant::now();
    let result = dir.join("result");
    let out = oltplab(
        Path::new("/"),
        &[
            &["run", "tpcc"][..],
            &db,
            // Eight terminals on one warehouse's ten districts, over two nodes: hot rows.
            &["--terminals", "8", "--warmup", "1s", "--duration", "4s"],
            &["--out", result.to_str().unwrap()],
        ]
        .concat(),
    );
    let err = stderr(&out);
    assert_ok(&out);
    eprintln!("run: {:.1} s", t0.elapsed().as_secs_f64());
    let doc = json(&result.join("result.json"));
    let s = &doc["summary"];
    assert!(s["tpmc"].as_f64().unwrap() > 0.0, "{err}");
    let conflicts = s["retries_by_kind"]["certification_conflict"]
        .as_u64()
        .unwrap_or(0);
    assert!(conflicts > 0, "no certification conflict counted: {err}");
    let nodes = s["server_waits"]["wsrep_nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{}", s["server_waits"]);
    let cert_failures: u64 = nodes
        .iter()
        .map(|n| n["local_cert_failures"].as_u64().unwrap())
        .sum();
    assert!(cert_failures > 0, "{}", s["server_waits"]);
    for n in nodes {
        let share = n["flow_control_paused_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&share), "{n}");
    }
    assert_eq!(doc["env"]["engine_settings"]["galera_nodes"], "2");

    let t0 = std::time::Instant::now();
    let out = oltplab(Path::new("/"), &[&["check", "tpcc"][..], &db].concat());
    let err = stderr(&out);
    assert_ok(&out);
    eprintln!("check: {:.1} s", t0.elapsed().as_secs_f64());
    assert!(err.contains("node 2:"), "{err}");
    assert!(err.contains("table checksums on 2 nodes"), "{err}");
    assert!(
        !err.contains("VIOLATED") && !err.contains("DIFFER"),
        "{err}"
    );
    assert_eq!(err.matches(" equal").count(), 9, "{err}");

    assert!(servers_under(&dir).is_empty(), "a node outlived oltplab");
    let _ = std::fs::remove_dir_all(&dir);
}
