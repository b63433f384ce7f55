//! `oltplab run tpcc --trace/--emulate` on managed servers: the server runs under the shim, its
//! trace holds only the measured window, each record is tied to the transaction that did it, and
//! `summary.io` comes from that trace. Also `oltplab study --engine postgres` end to end.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::{oltplab, scratch, server_installed};
use serde_json::Value;

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Loads one warehouse, runs it traced (and emulated if `emulate`), and checks the capture.
fn traced_run(engine: &str, emulate: Option<&str>) {
    let dir = scratch(engine);
    ok(&oltplab(
        &dir,
        &[
            "load",
            "tpcc",
            "--engine",
            engine,
            "--data-dir",
            "db",
            "-w",
            "1",
            "--no-check",
        ],
    ));
    let mut args = vec![
        "run",
        "tpcc",
        "--engine",
        engine,
        "--data-dir",
        "db",
        "--warmup",
        "2s",
        "--duration",
        "5s",
        "--trace",
        "run.trace",
        "--out",
        "res",
    ];
    if let Some(spec) = emulate {
        args.extend(["--emulate", spec]);
    }
    let out = oltplab(&dir, &args);
    ok(&out);
    let doc = read_json(&dir.join("res/result.json"));
    let s = &doc["summary"];
    let io = &s["io"];
    assert_eq!(io["source"], "trace", "{io}");
    let (reads, writes) = (
        io["reads"].as_u64().unwrap(),
        io["writes"].as_u64().unwrap(),
    );
    assert!(writes > 0 && io["syncs"].as_u64().unwrap() > 0, "{io}");

    // Every New-Order commits, so each did at least one write or sync in its own server thread.
    let by_tx = &io["by_tx"];
    let no = &by_tx["new_order"];
    assert_eq!(
        no["transactions"].as_u64().unwrap(),
        s["tx"]["new_order"]["count"].as_u64().unwrap(),
        "{by_tx}"
    );
    assert!(no["transactions"].as_u64().unwrap() > 0);
    assert!(
        no["writes_per_tx"].as_f64().unwrap() + no["syncs_per_tx"].as_f64().unwrap() > 0.5,
        "{no}"
    );
    // The read-only Stock-Level writes nothing of its own.
    assert_eq!(
        by_tx["stock_level"]["syncs"].as_u64().unwrap_or(0),
        0,
        "{by_tx}"
    );
    let tagged: u64 = by_tx
        .as_object()
        .unwrap()
        .values()
        .map(|t| t["reads"].as_u64().unwrap() + t["writes"].as_u64().unwrap())
        .sum();
    assert_eq!(tagged, reads + writes, "by_tx covers every read and write");

    // The trace holds the measured window only, and the same operations as summary.io.
    let stat = oltplab(&dir, &["trace", "stat", "run.trace", "--json", "stat.json"]);
    ok(&stat);
    let stat = read_json(&dir.join("stat.json"));
    assert_eq!(stat["ops"]["read"].as_u64().unwrap(), reads);
    assert_eq!(stat["ops"]["write"].as_u64().unwrap(), writes);
    let measured_s = s["measured_s"].as_f64().unwrap();
    assert!(
        stat["duration_s"].as_f64().unwrap() <= measured_s + 0.5,
        "trace spans {} s, the window {measured_s} s",
        stat["duration_s"]
    );
    // The server's own account of its waits in the window.
    let waits = &s["server_waits"];
    match engine {
        "postgres" => {
            assert_eq!(waits["source"], "pg_stat_activity", "{s}");
            assert!(waits["backend_samples"].as_u64().unwrap() > 0, "{waits}");
            let shares: f64 = (waits["share_by_event"].as_object().unwrap().values())
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!((shares - 1.0).abs() < 1e-9, "{waits}");
        }
        _ => {
            assert_eq!(waits["source"], "innodb_status", "{s}");
            // InnoDB's counters over the window: a count, and their time only with waits; no
            // terminal waits longer than the window and its warm-up (a wait that began in the
            // warm-up is counted when it ends).
            let count = waits["row_lock_waits"].as_u64().expect("a count");
            let wait_s = waits["row_lock_wait_s"].as_f64().unwrap();
            assert!(count > 0 || wait_s == 0.0, "time without waits: {waits}");
            let terminals = doc["config"]["terminals"].as_f64().unwrap();
            let warmup_s = 2.0;
            assert!(
                wait_s <= terminals * (measured_s + warmup_s),
                "{wait_s} s of row-lock waits for {terminals} terminals in {measured_s} s: {waits}"
            );
        }
    }
    // Every traced file carries the device slot the shim placed it at in the run, one slot per
    // file, so the replay puts each file at the offsets the run used (not at its trace id, which
    // depends on the order the server's processes first did I/O).
    let trace = oltplab_trace::TraceData::load(&dir.join("run.trace")).unwrap();
    let used: std::collections::BTreeSet<u16> = trace.records.iter().map(|r| r.file).collect();
    let slots: std::collections::BTreeSet<u32> =
        used.iter().map(|&f| trace.device_slot(f)).collect();
    assert!(
        used.iter().all(|f| trace.places.contains_key(f)),
        "files without a place: {used:?} {:?}",
        trace.places
    );
    assert_eq!(
        slots.len(),
        used.len(),
        "two files share a slot: {:?}",
        trace.places
    );
    match emulate {
        Some(spec) => {
            assert_eq!(s["emulation"]["device"], spec);
            assert!(s["emulation"]["fidelity"]["ios"].as_u64().unwrap() > 0);
        }
        None => {
            assert!(s.get("emulation").is_none(), "{s}");
            // The real device's side of the emulator's comparison: what each kind of call took,
            // timed by the shim as it times an emulated run's.
            let waited = s["io"]["waited_by_kind"]
                .as_array()
                .expect("waited_by_kind");
            for kind in ["read", "write", "flush"] {
                let k = waited
                    .iter()
                    .find(|k| k["kind"] == kind)
                    .unwrap_or_else(|| panic!("no {kind} in {waited:?}"));
                assert!(k["ios"].as_u64().unwrap() > 0, "{k}");
                let p50 = k["realised_lat_ns_p50"].as_u64().unwrap();
                assert!(
                    p50 > 0 && p50 <= k["realised_lat_ns_p99"].as_u64().unwrap(),
                    "{k}"
                );
            }
        }
    }
    if emulate.is_some() {
        assert!(s["io"].get("waited_by_kind").is_none(), "{s}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn postgres_run_is_traced_and_emulated_through_the_shim() {
    if server_installed("initdb") {
        traced_run("postgres", Some("sata-ssd-2010"));
    }
}

#[test]
fn mariadb_run_is_traced_with_each_io_tied_to_its_transaction() {
    if server_installed("mariadbd") {
        traced_run("mariadb", None);
    }
}

#[test]
fn trace_on_an_external_server_is_refused() {
    let dir = scratch("external");
    let out = oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--url",
            "postgres://u@127.0.0.1:1/db",
            "--trace",
            "t.trace",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("drop --url"), "{stderr}");
    assert!(!dir.join("t.trace").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn postgres_study_gives_alpha_and_io_per_transaction() {
    if !server_installed("initdb") {
        return;
    }
    let dir = scratch("study");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--engine",
            "postgres",
            "--scale",
            "quick",
            "--devices",
            "sata-ssd-2010",
            "--out",
            "res",
        ],
    );
    ok(&out);
    let doc = read_json(&dir.join("res/results.json"));
    assert_eq!(doc["summary"]["engine"], "postgres");
    let d = &doc["summary"]["devices"][0];
    for field in ["tpmc", "run_iops", "replay_iops", "alpha"] {
        assert!(d[field].as_f64().unwrap_or(0.0) > 0.0, "{field}: {d}");
    }
    assert!(
        d["io_by_tx"]["new_order"]["transactions"].as_u64().unwrap() > 0,
        "{d}"
    );
    // On a model the bound is the virtual-time replay, in every order (the shim records each
    // I/O's CPU, which btreplay needs); the real-time replay through the emulator is the
    // cross-check, and its own result is kept beside the run's.
    for field in [
        "replay_causal_iops",
        "alpha_causal",
        "replay_btreplay_iops",
        "alpha_btreplay",
        "replay_realtime_iops",
    ] {
        assert!(d[field].as_f64().unwrap_or(0.0) > 0.0, "{field}: {d}");
    }
    // The explanation names what the server measured, not only what I/O and CPU leave over.
    assert_eq!(d["breakdown"]["server_waits"]["source"], "pg_stat_activity");
    assert!(
        d["explanation"]
            .as_str()
            .unwrap()
            .contains("The server's account (pg_stat_activity"),
        "{}",
        d["explanation"]
    );
    let replay = read_json(&dir.join("res/replay-sata-ssd-2010/result.json"));
    assert_eq!(replay["kind"], "replay");
    assert_eq!(replay["summary"]["iops"], d["replay_realtime_iops"]);
    assert_eq!(replay["summary"]["clock"], "real");
    assert!(dir.join("res/sata-ssd-2010.trace").is_file());
    assert!(dir.join("res/report.html").is_file());
    // The per-device copies of the loaded cluster are gone; the loaded base stays for reuse.
    let left: Vec<String> = std::fs::read_dir(dir.join("oltplab-data/study"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("run-") || n.starts_with("replay-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
