//! `oltplab load/run/check orders` as a user meets them: the real binary on embedded SQLite and on
//! PostgreSQL and MariaDB servers that oltplab starts in a temporary data directory (and stops),
//! a few dozen connections, both table kinds, both modes, and the result's contract fields.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::{assert_ok, json, oltplab, scratch, server_installed, stderr};
use oltplab_dbs::server::{ManagedServer, ServerConfig, ServerKind};
use serde_json::Value;

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = oltplab(dir, args);
    let err = stderr(&out);
    assert!(out.status.success(), "oltplab {args:?} failed: {err}");
    err
}

fn assert_usage_error(out: &Output, expected: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(expected), "expected '{expected}' in: {err}");
    assert!(!err.contains("panicked"), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("oltplab:")).collect();
    assert_eq!(errors.len(), 1, "one error: {err}");
    assert_eq!(
        err.trim().lines().last(),
        Some(errors[0]),
        "the error comes last: {err}"
    );
}

fn result(dir: &Path, out: &str) -> Value {
    json(&dir.join(out).join("result.json"))
}

fn warning_kinds(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap().to_string())
        .collect()
}

/// The contract of a `run` (orders) result, and that the work done is what was asked.
fn assert_run_result(doc: &Value, connections: &[u64], tx_per_connection: u64) {
    let total = connections.iter().sum::<u64>() * tx_per_connection;
    assert_run_work(doc, connections, total);
}

/// [`assert_run_result`] for a run of `total` transactions in all.
fn assert_run_work(doc: &Value, connections: &[u64], total: u64) {
    assert_eq!(doc["schema"], "oltplab.result/1");
    assert_eq!(doc["kind"], "run");
    assert_eq!(doc["config"]["workload"], "orders");
    let s = &doc["summary"];
    assert_eq!(
        s["transactions"].as_u64().unwrap() + s["errors"].as_u64().unwrap(),
        total,
        "{s}"
    );
    assert_eq!(s["errors"], 0, "{}", s["first_error"]);
    assert!(s["tps"].as_f64().unwrap() > 0.0);
    assert!(s["elapsed_s"].as_f64().unwrap() > 0.0);
    let tps = s["transactions"].as_f64().unwrap() / s["elapsed_s"].as_f64().unwrap();
    assert!((tps / s["tps"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    assert!(s["waits_per_s"].is_object() && s["waiting_sessions"].is_object());
    assert!(!s["waits"]["source"].as_str().unwrap().is_empty());
    let cpu = &s["cpu"];
    for f in [
        "db_user_s",
        "db_sys_s",
        "driver_user_s",
        "driver_sys_s",
        "utilisation",
    ] {
        assert!(cpu[f].as_f64().is_some(), "cpu.{f}");
    }
    // Server processes' CPU comes in clock ticks (10 ms) per process, so a short run of many
    // connections may round to zero; the whole never does.
    assert!(cpu["utilisation"].as_f64().unwrap() > 0.0, "{cpu}");
    assert!(s["lat_ns"]["p99"].as_u64().unwrap() > 0);
    assert!(doc["histograms"]["tx"].is_string());
    assert!(!doc["intervals"].as_array().unwrap().is_empty());
    if connections.len() > 1 {
        let sweep = s["sweep"].as_array().unwrap();
        let got: Vec<u64> = sweep
            .iter()
            .map(|p| p["connections"].as_u64().unwrap())
            .collect();
        assert_eq!(got, connections);
        for p in sweep {
            assert!(p["tps"].as_f64().unwrap() > 0.0 && p["elapsed_s"].as_f64().unwrap() > 0.0);
            assert!(p["waits_per_s"].is_object());
        }
    } else {
        assert!(s["sweep"].is_null());
    }
}

/// Load and run both table kinds and both modes on `engine` (managed by oltplab in `dir`).
fn both_kinds(engine: &str, dir: &Path) -> (Value, Value) {
    // `oltplab COMMAND orders ARGS… --engine ENGINE --data-dir data`.
    let cmd = |command: &[&'static str], args: &[&'static str]| -> Vec<&str> {
        let mut v = vec![command[0], "orders"];
        v.extend_from_slice(&command[1..]);
        v.extend_from_slice(args);
        v.extend(["--engine", engine, "--data-dir", "data"]);
        v
    };
    let small = "--customers 500 --products 50 --initial-orders 300";
    let small: Vec<&'static str> = small.split(' ').collect();
    let load = cmd(&["load"], &small);
    ok(dir, &load);
    // A second load without --force is refused: the tables hold data.
    assert_usage_error(&oltplab(dir, &load), "--force");

    let sweep = "--connections 8,24 --tx-per-connection 15 --warmup-tx 2 --out disk";
    ok(dir, &cmd(&["run"], &sweep.split(' ').collect::<Vec<_>>()));
    let disk = result(dir, "disk");
    assert_run_result(&disk, &[8, 24], 15);
    assert_eq!(disk["summary"]["tables"], "disk");
    assert_eq!(disk["summary"]["durability"]["survives_crash"], true);
    assert!(!warning_kinds(&disk).contains(&"not_durable".to_string()));
    ok(dir, &cmd(&["check"], &[]));

    let err = ok(
        dir,
        &cmd(&["load", "--tables", "memory", "--force"], &small),
    );
    assert!(
        err.contains("crash") || err.contains("restart") || err.contains("gone"),
        "{err}"
    );
    let update = "--mode update --connections 24 --tx-per-connection 15 --out memory";
    ok(dir, &cmd(&["run"], &update.split(' ').collect::<Vec<_>>()));
    let memory = result(dir, "memory");
    assert_run_result(&memory, &[24], 15);
    assert_eq!(memory["summary"]["tables"], "memory");
    assert_eq!(memory["summary"]["mode"], "update");
    assert_eq!(memory["summary"]["durability"]["survives_crash"], false);
    assert!(warning_kinds(&memory).contains(&"not_durable".to_string()));
    // The loaded kind is what runs: asking for the other one is refused.
    let refused = cmd(&["run", "--tables", "disk", "--out", "refused"], &[]);
    assert_usage_error(&oltplab(dir, &refused), "--tables memory");
    ok(dir, &cmd(&["check"], &[]));
    (disk, memory)
}

#[test]
fn sqlite_file_and_in_memory() {
    let dir = scratch("orders-sqlite");
    let (disk, memory) = both_kinds("sqlite", &dir);
    assert!(dir.join("data/orders.sqlite").is_file());
    for doc in [&disk, &memory] {
        let s = &doc["summary"];
        assert_eq!(s["waits"]["unit"], "waits_per_s");
        assert!(s["waits_per_s"]["busy"].as_f64().is_some(), "{s}");
        assert!(s["driver_threads"].as_u64().unwrap() >= 1);
    }
    assert_eq!(
        disk["summary"]["durability"]["commit_setting"],
        "synchronous"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-q` leaves nothing but warnings on stderr and nothing on stdout, for load, run and check alike.
#[test]
fn quiet_silences_load_run_and_check() {
    let dir = scratch("orders-quiet");
    let db = ["--engine", "sqlite", "--data-dir", "data"];
    let commands: [&[&str]; 3] = [
        &[
            "-q",
            "load",
            "orders",
            "--customers",
            "200",
            "--products",
            "20",
            "--initial-orders",
            "50",
        ],
        &[
            "-q",
            "run",
            "orders",
            "--connections",
            "4",
            "--tx-per-connection",
            "10",
            "--out",
            "run",
        ],
        &["-q", "check", "orders"],
    ];
    for command in commands {
        let args: Vec<&str> = command.iter().chain(db.iter()).copied().collect();
        let out = oltplab(&dir, &args);
        let err = stderr(&out);
        assert!(out.status.success(), "oltplab {args:?} failed: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        let chatter: Vec<&str> = err.lines().filter(|l| !l.starts_with("warning:")).collect();
        assert!(
            chatter.is_empty(),
            "oltplab {args:?} with -q printed: {chatter:?}"
        );
    }
    // The run was measured and saved all the same.
    assert_run_result(&result(&dir, "run"), &[4], 10);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Order entry on an emulated device through the shared capture: the managed server runs under
/// the shim, its I/O of the measured work is traced and counted per transaction, and the result
/// says how closely it followed the model.
#[test]
fn postgres_on_an_emulated_device_with_its_trace() {
    if !server_installed("initdb") {
        return;
    }
    let dir = scratch("orders-pg-emulated");
    let db = ["--engine", "postgres", "--data-dir", "data"];
    let with_db = |args: &[&'static str]| -> Vec<&'static str> {
        args.iter().chain(db.iter()).copied().collect()
    };
    ok(
        &dir,
        &with_db(&[
            "load",
            "orders",
            "--customers",
            "500",
            "--products",
            "50",
            "--initial-orders",
            "300",
        ]),
    );
    // One connection count per capture: a sweep is refused before anything starts.
    assert_usage_error(
        &oltplab(
            &dir,
            &with_db(&[
                "run",
                "orders",
                "--connections",
                "4,8",
                "--emulate",
                "sata-ssd-2010",
            ]),
        ),
        "one connection count",
    );
    ok(
        &dir,
        &with_db(&[
            "run",
            "orders",
            "--connections",
            "8",
            "--tx-per-connection",
            "20",
            "--emulate",
            "sata-ssd-2010",
            "--trace",
            "orders.trace",
            "--out",
            "emulated",
        ]),
    );
    let doc = result(&dir, "emulated");
    assert_run_result(&doc, &[8], 20);
    let s = &doc["summary"];
    assert_eq!(s["emulation"]["spec"], "sata-ssd-2010");
    assert!(
        s["emulation"]["fidelity"]["ios"].as_u64().unwrap() > 0,
        "{s}"
    );
    assert_eq!(s["io"]["source"], "trace");
    // Commits reach the WAL, several at a time (group commit): at most one flush per commit.
    let per_tx = &s["io"]["by_tx"]["insert"];
    assert_eq!(per_tx["transactions"], 160, "{per_tx}");
    assert!(per_tx["writes"].as_u64().unwrap() > 0, "{per_tx}");
    let syncs = per_tx["syncs_per_tx"].as_f64().unwrap();
    assert!(syncs > 0.0 && syncs <= 1.0, "{per_tx}");
    assert!(dir.join("orders.trace").metadata().unwrap().len() > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgres_logged_and_unlogged() {
    if !server_installed("initdb") {
        return;
    }
    let dir = scratch("orders-pg");
    let (disk, memory) = both_kinds("postgres", &dir);
    for doc in [&disk, &memory] {
        let s = &doc["summary"];
        assert_eq!(s["waits"]["unit"], "waiting_sessions");
        assert!(warning_kinds(doc).contains(&"waits_sampled".to_string()));
        assert_eq!(s["durability"]["commit_setting"], "synchronous_commit");
        assert_eq!(s["durability"]["commit_value"], "on");
    }
    // Ten samples a second of pg_stat_activity: what they catch is by chance (a short run may see
    // only sessions waiting for the driver), but each is one of PostgreSQL's wait event types.
    const TYPES: [&str; 9] = [
        "Activity",
        "BufferPin",
        "Client",
        "Extension",
        "IO",
        "IPC",
        "Lock",
        "LWLock",
        "Timeout",
    ];
    // Sampling ran (a short run may still catch no session waiting).
    assert!(
        disk["summary"]["waits"]["missing"].is_null(),
        "{}",
        disk["summary"]["waits"]
    );
    let waits = disk["summary"]["waiting_sessions"].as_object().unwrap();
    for (kind, sessions) in waits {
        assert!(TYPES.contains(&kind.as_str()), "{kind}");
        assert!(sessions.as_f64().unwrap() > 0.0, "{kind}: {sessions}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mariadb_innodb_and_memory() {
    if !server_installed("mariadbd") {
        return;
    }
    let dir = scratch("orders-mariadb");
    let (disk, memory) = both_kinds("mariadb", &dir);
    for doc in [&disk, &memory] {
        let s = &doc["summary"];
        assert_eq!(s["waits"]["unit"], "waits_per_s");
        assert!(s["waits"]["missing"].is_null(), "performance_schema is on");
        // performance_schema counts the engine's mutex and rwlock waits.
        assert!(
            s["waits_per_s"]["synch/mutex"].as_f64().unwrap() > 0.0,
            "{s}"
        );
    }
    assert!(disk["env"]["engine_settings"]["innodb_flush_log_at_trx_commit"].is_string());
    let _ = std::fs::remove_dir_all(&dir);
}

/// An external server that allows fewer connections than asked for is refused before anything
/// runs, with its limit in the message.
#[test]
fn external_server_connection_limit() {
    if !server_installed("initdb") {
        return;
    }
    let dir = scratch("orders-external");
    let mut cfg = ServerConfig::new(ServerKind::Postgres, dir.join("server"));
    cfg.max_connections = 20;
    let server = ManagedServer::start(&cfg).expect("start PostgreSQL");
    let url = server.url();
    let small = [
        "--customers",
        "100",
        "--products",
        "10",
        "--initial-orders",
        "50",
    ];
    let mut load = vec!["load", "orders", "--url", url.as_str()];
    load.extend(small);
    ok(&dir, &load);
    let out = oltplab(
        &dir,
        &[
            "run",
            "orders",
            "--url",
            &url,
            "--connections",
            "10,50",
            "--out",
            "r",
        ],
    );
    assert_usage_error(&out, "max_connections 20");
    assert!(!dir.join("r/result.json").exists());
    let out = oltplab(
        &dir,
        &[
            "run",
            "orders",
            "--url",
            &url,
            "--connections",
            "10",
            "--tx-per-connection",
            "5",
            "--out",
            "r2",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_one_sentence_and_exit_2() {
    let dir = scratch("orders-bad");
    let cases: &[(&[&str], &str)] = &[
        (&["run", "orders", "--terminals", "4"], "--terminals"),
        (&["run", "orders", "--duration", "30s"], "--duration"),
        (&["run", "tpcc", "--mode", "insert"], "--mode"),
        (&["run", "tpcc", "--connections", "10"], "--connections"),
        (&["load", "tpcc", "--tables", "memory"], "--tables"),
        (&["load", "orders", "--warehouses", "3"], "--warehouses"),
        (&["run", "orders", "--connections", "0"], "--connections"),
        (&["run", "orders", "--connections", "10,x"], "--connections"),
        (&["run", "orders"], "oltplab load orders"),
        (&["check", "orders"], "oltplab load orders"),
        (&["load", "orders", "--customers", "0"], "--customers"),
    ];
    for (args, expected) in cases {
        let out = oltplab(&dir, args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(expected),
            "{args:?}: expected '{expected}' in {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // More connections than the open-files limit allows (hard limit 512 for this child).
    let limited = {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_oltplab"));
        cmd.current_dir(&dir).args([
            "load",
            "orders",
            "--customers",
            "10",
            "--initial-orders",
            "10",
        ]);
        assert!(cmd.output().unwrap().status.success());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_oltplab"));
        cmd.current_dir(&dir)
            .args(["run", "orders", "--connections", "1000"]);
        // SAFETY: setrlimit is async-signal-safe and touches only the child.
        unsafe {
            cmd.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 256,
                    rlim_max: 512,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
                Ok(())
            });
        }
        cmd.output().unwrap()
    };
    assert_usage_error(&limited, "open files");
    let _ = std::fs::remove_dir_all(&dir);
}

/// S5 on SQLite at the quick scale: four sweeps (disk and memory tables, update and insert), each
/// run's result, results.json and the report with S5's three views. The study is killed (SIGKILL:
/// a crash, no handler runs) in its second table kind and resumed: only that kind runs again, and
/// the first kind's saved cell stays as it was.
#[test]
fn in_memory_study_quick_on_sqlite() {
    let dir = scratch("orders-study");
    let killed = common::signal_after_first(
        &dir,
        &[
            "study",
            "--scenario",
            "in-memory",
            "--scale",
            "quick",
            "--out",
            "s",
            "--data-dir",
            "d",
        ],
        || !common::cell_files(&dir.join("s")).is_empty(),
        "table kind",
        libc::SIGKILL,
    );
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(killed.status.signal(), Some(libc::SIGKILL));
    let saved = common::cell_files(&dir.join("s"));
    assert_eq!(saved.len(), 1, "{saved:?}");
    assert!(saved[0].starts_with("disk-"), "{saved:?}");
    let saved_text = std::fs::read_to_string(dir.join("s/cells").join(&saved[0])).unwrap();
    // What the crash left reads as unfinished.
    let left = json(&dir.join("s/results.json"));
    assert_eq!(left["summary"]["interrupted"], true, "{left}");

    let resumed = oltplab(&dir, &["study", "--resume", "s", "--data-dir", "d"]);
    assert_ok(&resumed);
    let (ran, kept) = common::cells_in(&stderr(&resumed));
    assert_eq!((ran.len(), kept.len()), (1, 1), "{}", stderr(&resumed));
    assert_eq!(ran, ["memory"], "{}", stderr(&resumed));
    assert_eq!(
        std::fs::read_to_string(dir.join("s/cells").join(&saved[0])).unwrap(),
        saved_text,
        "the kept cell's file was rewritten"
    );
    assert_eq!(common::cell_files(&dir.join("s")).len(), 2);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("s/results.json")).unwrap())
            .unwrap();
    assert_eq!(doc["kind"], "study");
    assert_eq!(doc["summary"]["scenario"], "in-memory");
    let runs = doc["summary"]["runs"].as_array().unwrap();
    let names: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "{}-{}",
                r["tables"].as_str().unwrap(),
                r["mode"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "disk-update",
            "disk-insert",
            "memory-update",
            "memory-insert"
        ]
    );
    for r in runs {
        let points = r["points"].as_array().unwrap();
        assert_eq!(points.len(), 3, "{r}");
        for p in points {
            assert!(p["tps"].as_f64().unwrap() > 0.0 && p["elapsed_s"].as_f64().unwrap() > 0.0);
        }
        let run = json(&dir.join("s").join(r["result"].as_str().unwrap()));
        // The quick scale's fixed work: 20,000 transactions per connection count, each a
        // whole number per connection (2,000, 400, 200).
        assert_run_work(&run, &[10, 50, 100], 3 * 20_000);
        for p in points {
            assert!(
                p["elapsed_s"].as_f64().unwrap() > 0.2,
                "measured for long: {p}"
            );
        }
    }
    assert!(warning_kinds(&doc).contains(&"not_durable".to_string()));
    let html = std::fs::read_to_string(dir.join("s/report.html")).unwrap();
    for view in [
        "Elapsed time of the fixed work",
        "Throughput against connections",
        "Waits against connections",
    ] {
        assert!(html.contains(view), "{view} missing from the report");
    }
    let out = oltplab(
        &dir,
        &["study", "--scenario", "in-memory", "--devices", "hdd-15k"],
    );
    assert_usage_error(&out, "--devices");
    let _ = std::fs::remove_dir_all(&dir);
}
