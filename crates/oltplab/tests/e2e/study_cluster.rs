//! `oltplab study --scenario cluster`: it refuses what it cannot run before it writes or loads
//! anything, and runs end to end at the tests' scale (one device, two nodes, seconds per run;
//! the quick and s1 scales' figures are measured by hand, docs/cluster.md).

use crate::common;

use common::{
    assert_ok, assert_usage_error, galera_installed, json, mariadbd_under, oltplab, scratch,
};

#[test]
fn the_cluster_study_refuses_bad_input_before_anything_runs() {
    let dir = scratch("study-cluster-bad");
    for (args, says) in [
        (vec!["--repeat", "2"], "--repeat belongs to the s1"),
        (vec!["--engine", "postgres"], "drop --engine"),
        (vec!["--devices", "hdd-10k,hdd-10k"], "twice"),
        (vec!["--devices", "hdd-10k,nvme-9"], "nvme-9"),
        (vec!["--workload", "brokerage"], "--workload belongs"),
        (vec!["--server-setting", "x=1"], "--server-setting is for"),
        (vec!["--nodes", "1"], "--nodes"),
    ] {
        let mut all = vec![
            "study",
            "--scenario",
            "cluster",
            "--out",
            "out",
            "--data-dir",
            "data",
        ];
        all.extend(args.iter().copied());
        assert_usage_error(&oltplab(&dir, &all), says);
        assert!(!dir.join("out").exists(), "{args:?}: nothing written");
        assert!(!dir.join("data").exists(), "{args:?}: nothing loaded");
    }
    // The cluster's size is the cluster scenario's alone.
    let out = oltplab(
        &dir,
        &["study", "--scenario", "s1", "--nodes", "3", "--out", "out"],
    );
    assert_usage_error(&out, "--nodes belongs to the cluster scenario");
    assert!(!dir.join("out").exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The study end to end at the tests' scale: one device, a 2-node cluster (one warehouse, a
/// terminal per node, 1 s warm-up and 3 s measured per run). Ctrl-C after the single server's
/// run keeps that run's cell, and `--resume` runs only the cluster's (loading only the cluster).
/// Its rows are the single server's and the
/// cluster's, each with its own figures — the cluster's tpmC against the server's, the commit
/// round trip (with the last statement on the server, alone on the cluster's nodes), the share of
/// it the nodes measured as replication, each node's counters and I/O — and nothing of either
/// system runs or keeps a socket afterwards.
#[test]
fn the_cluster_study_compares_one_server_with_a_two_node_cluster() {
    if !galera_installed() {
        return;
    }
    let dir = scratch("study-cluster-run");
    let t0 = std::time::Instant::now();
    let cells_dir = dir.join("out/cells");
    let cells = || -> Vec<String> {
        std::fs::read_dir(&cells_dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".json"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (stopped_pid, out) = common::signal_after_first_with_pid(
        &dir,
        &[
            "study",
            "--scenario",
            "cluster",
            "--scale",
            "test",
            "--nodes",
            "2",
            "--devices",
            "pcie-flash-2012",
            "--out",
            "out",
            "--data-dir",
            "data",
        ],
        || !cells().is_empty(),
        "run",
        libc::SIGINT,
    );
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with("(running studies/cluster.toml with ")
            && first.contains("scale = \"test\"")
            && first.contains("nodes = 2"),
        "{err}"
    );
    assert!(err.contains("oltplab study --resume out"), "{err}");
    let stopped = json(&dir.join("out/results.json"));
    assert_eq!(stopped["summary"]["scenario"], "cluster");
    assert_eq!(stopped["summary"]["interrupted"], true);
    assert_eq!(stopped["summary"]["rows"].as_array().unwrap().len(), 1);
    let kept = cells();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].starts_with("mariadb_pcie-flash-2012-"), "{kept:?}");
    let kept_text = std::fs::read_to_string(cells_dir.join(&kept[0])).unwrap();
    assert!(dir.join("out/study.toml").is_file());

    let child = std::process::Command::new(env!("CARGO_BIN_EXE_oltplab"))
        .current_dir(&dir)
        .args(["study", "--resume", "out", "--data-dir", "data"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_ok(&out);
    eprintln!(
        "study, stopped and resumed: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let err = common::stderr(&out);
    let (ran, kept_now) = common::cells_in(&err);
    assert_eq!(kept_now, ["mariadb_pcie-flash-2012"], "{err}");
    assert_eq!(ran, ["galera2_pcie-flash-2012"], "{err}");
    assert!(
        !err.contains("managed mariadb server"),
        "the single server's runs were all kept: it is not loaded again: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(cells_dir.join(&kept[0])).unwrap(),
        kept_text,
        "the kept run's result was rewritten"
    );

    let doc = json(&dir.join("out/results.json"));
    let s = &doc["summary"];
    assert_eq!(s["interrupted"], false, "{s}");
    assert_eq!(s["cells"].as_array().unwrap().len(), 2, "{s}");
    assert_eq!(
        (
            s["load_s"].as_f64(),
            s["cluster_load_s"].as_f64().map(|l| l > 0.0)
        ),
        (Some(0.0), Some(true)),
        "{s}"
    );
    assert_eq!(s["nodes"], 2, "{s}");
    assert_eq!(
        (&s["warehouses"], &s["terminals"]),
        (&1.into(), &2.into()),
        "a terminal per node: {s}"
    );
    assert_eq!(doc["env"]["engine_settings"]["galera_nodes"], "2");
    let rows = s["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{s}");
    let (one, cluster) = (&rows[0], &rows[1]);
    assert_eq!(
        (&one["system"], &one["nodes"]),
        (&"mariadb".into(), &1.into())
    );
    assert_eq!(
        (&cluster["system"], &cluster["nodes"]),
        (&"galera".into(), &2.into())
    );
    for r in rows {
        assert_eq!(r["device"], "pcie-flash-2012", "{r}");
        assert!(r["tpmc"].as_f64().unwrap() > 0.0, "{r}");
        let (p50, p99) = (
            r["commit_latency_ns_p50"].as_u64().unwrap(),
            r["commit_latency_ns_p99"].as_u64().unwrap(),
        );
        assert!(p50 > 0 && p50 <= p99, "{r}");
        assert!(
            dir.join("out")
                .join(r["result"].as_str().unwrap())
                .is_file(),
            "{r}"
        );
    }
    let ratio = cluster["tpmc"].as_f64().unwrap() / one["tpmc"].as_f64().unwrap();
    let vs = cluster["tpmc_vs_single"].as_f64().unwrap();
    assert!((vs - ratio).abs() < 1e-9 * ratio, "{vs} against {ratio}");
    assert!(one.get("tpmc_vs_single").is_none(), "{one}");
    // One server sends a transaction's last statement with its COMMIT; a Galera node's COMMIT
    // goes alone, after the savepoint's release.
    assert!(
        one["commits_with_last_statement"].as_u64().unwrap() > 0,
        "{one}"
    );
    assert_eq!(cluster["commits_with_last_statement"], 0, "{cluster}");
    assert!(one.get("commit_replication_share").is_none(), "{one}");
    assert!(one.get("flow_control_paused_share").is_none(), "{one}");
    let share = cluster["commit_replication_share"].as_f64().unwrap();
    assert!(share > 0.0 && share <= 1.0, "{cluster}");
    let paused = cluster["flow_control_paused_share"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&paused), "{cluster}");
    let nodes = cluster["wsrep_nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{cluster}");
    for n in nodes {
        assert!(n["repl_messages"].as_u64().unwrap() > 0, "{n}");
        assert!(n["repl_latency_ns_mean"].as_f64().unwrap() > 0.0, "{n}");
        assert!(n["local_commits"].as_u64().unwrap() > 0, "{n}");
    }
    let io = cluster["io_by_node"].as_array().unwrap();
    assert_eq!(io.len(), 2, "{cluster}");
    assert!(
        io.iter().all(|n| n["syncs"].as_u64().unwrap() > 0),
        "{cluster}"
    );
    assert!(one.get("io_by_node").is_none(), "{one}");
    assert!(dir.join("out/report.html").is_file());
    // The table of rows, on stdout.
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("commit p50") && table.contains("repl share"),
        "{table}"
    );

    assert!(
        mariadbd_under(&dir).is_empty(),
        "a server outlived the study"
    );
    let sockets: Vec<String> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            [pid, stopped_pid]
                .iter()
                .any(|p| n.starts_with(&format!("oltplab-mariadb-{p}-")))
        })
        .collect();
    assert!(sockets.is_empty(), "socket directories left: {sockets:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
