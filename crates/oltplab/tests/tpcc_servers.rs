//! `oltplab load/run/check tpcc` on managed PostgreSQL and MariaDB servers as a user meets them: the
//! real binary starts a fresh server in a temporary directory for each command, loads one
//! warehouse, runs 30 s (2 s of it warm-up) with every transaction's server SQL (New-Order's
//! one-statement stock change included), and the twelve consistency conditions hold after it.
//! Where a server is not installed the test says so and passes (scripts/test.sh installs both).

mod common;

use common::{oltplab, scratch, stderr};
use oltplab_dbs::server;
use serde_json::Value;
use std::path::Path;

fn load_run_check(engine: &str, programs: &[&str]) {
    if server::find_program(programs, None).is_none() {
        oltplab_core::testing::skip(&format!("{engine} is not installed"));
        return;
    }
    let dir = scratch(&format!("tpcc-{engine}"));
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let db = ["--engine", engine, "--data-dir", data];

    let out = oltplab(
        Path::new("/"),
        &[
            &["load", "tpcc"],
            &db[..],
            &["--warehouses", "1", "--threads", "2"],
        ]
        .concat(),
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("consistency conditions"), "{err}");
    assert!(!err.contains("VIOLATED"), "{err}");

    let result_dir = dir.join("result");
    let out = oltplab(
        Path::new("/"),
        &[
            &["run", "tpcc"],
            &db[..],
            // Issue 4's 30 s run: 2 s warm-up and 28 s measured.
            &["--terminals", "4", "--warmup", "2s", "--duration", "28s"],
            &["--out", result_dir.to_str().unwrap()],
        ]
        .concat(),
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(result_dir.join("result.json")).unwrap()).unwrap();
    let s = &doc["summary"];
    for t in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        assert!(s["tx"][t]["count"].as_u64().unwrap() > 0, "{t}: {err}");
        assert_eq!(s["tx"][t]["errors"].as_u64(), Some(0), "{t}: {err}");
    }
    assert!(s["tpmc"].as_f64().unwrap() > 0.0, "{err}");

    // The run's orders, stock and payments keep the database consistent.
    let out = oltplab(Path::new("/"), &[&["check", "tpcc"], &db[..]].concat());
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(" holds"), "{err}");
    assert!(!err.contains("VIOLATED"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgres_load_run_check() {
    load_run_check("postgres", &["initdb"]);
}

#[test]
fn mariadb_load_run_check() {
    load_run_check("mariadb", &["mariadbd", "mysqld"]);
}

/// `kill -9` of the managed server in the measured window: the run ends with exit code 1 and a
/// sentence that says so, and the result of what was measured before is saved with a
/// `server_died` warning — not a clean, shorter run.
#[test]
fn a_server_killed_mid_run_ends_the_run_with_its_result_saved() {
    if server::find_program(&["initdb"], None).is_none() {
        oltplab_core::testing::skip("postgres is not installed");
        return;
    }
    let started = std::time::SystemTime::now();
    let dir = scratch("tpcc-killed");
    let data = dir.join("data");
    let db = ["--engine", "postgres", "--data-dir", data.to_str().unwrap()];
    let out = oltplab(
        Path::new("/"),
        &[&["-q", "load", "tpcc"], &db[..], &["--no-check"]].concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let result_dir = dir.join("result");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_oltplab"))
        .args(
            [
                &["-q", "run", "tpcc"],
                &db[..],
                &["--warmup", "1s", "--duration", "30s"],
                &["--out", result_dir.to_str().unwrap()],
            ]
            .concat(),
        )
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Into the measured window, then the postmaster, as a crash or the OOM killer would.
    std::thread::sleep(std::time::Duration::from_secs(6));
    let pid_text = std::fs::read_to_string(data.join("postgres/postmaster.pid")).unwrap();
    let pid: i32 = pid_text.lines().next().unwrap().trim().parse().unwrap();
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let out = run.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("died"), "{err}");
    let doc: Value =
        serde_json::from_slice(&std::fs::read(result_dir.join("result.json")).unwrap()).unwrap();
    let kinds: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"server_died"), "{kinds:?}");
    assert!(doc["summary"]["tx"]["new_order"]["count"].as_u64().unwrap() > 0);
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the postmaster is gone"
    );
    // Nothing of the killed server is left in shared memory (its segments live in the cluster).
    let segments: Vec<String> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name().to_string_lossy().starts_with("PostgreSQL.")
                && e.metadata()
                    .is_ok_and(|m| m.modified().is_ok_and(|t| t >= started))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(segments.is_empty(), "left in /dev/shm: {segments:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
