//! `oltplab load/run/check brokerage` on embedded SQLite and managed PostgreSQL and MariaDB as a
//! user meets them: the real binary loads 1,000 customers with two trading days of history, runs
//! 30 s (10 s of it warm-up), and the invariants hold after it; the measured mix is within one
//! percentage point of EGen's weights for every one of the ten types. Where a server is not
//! installed the test says so (and fails under CI: scripts/test.sh installs both).

use crate::common;

use common::{
    assert_one_line_usage_error, assert_procedures_cost_the_driver_less, json, oltplab, scratch,
    stderr,
};
use oltplab_dbs::server;
use std::path::Path;

const TYPES: [(&str, f64); 10] = [
    ("broker_volume", 4.9),
    ("customer_position", 13.0),
    ("market_watch", 18.0),
    ("security_detail", 14.0),
    ("trade_lookup", 8.0),
    ("trade_order", 10.1),
    ("trade_status", 19.0),
    ("trade_update", 2.0),
    ("trade_result", 10.0),
    ("market_feed", 1.0),
];

fn load_run_check(engine: &str, programs: &[&str]) {
    if !programs.is_empty() && server::find_program(programs, None).is_none() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            &format!("{engine} is not installed"),
        );
        return;
    }
    let dir = scratch(&format!("brokerage-{engine}"));
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let db = ["--engine", engine, "--data-dir", data];

    let out = oltplab(
        Path::new("/"),
        &[
            &["load", "brokerage"],
            &db[..],
            &["--days", "2", "--threads", "2"],
        ]
        .concat(),
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("brokerage invariants"), "{err}");
    assert!(!err.contains("VIOLATED"), "{err}");

    let doc = run_the_mix(&db, &[], "10s", "20s", &dir.join("result"));
    // The reports read the config through schema's typed view: what the run wrote must read.
    let view = oltplab_schema::ConfigView::of(&doc["config"]);
    assert_eq!(
        (view.workload.as_deref(), view.engine(), view.terminals),
        (Some("brokerage"), Some(engine), Some(4)),
        "{}",
        doc["config"]
    );
    check_holds(&db);

    if engine != "sqlite" {
        // The transactions as server-side functions or procedures, one round trip each: the same mix, the
        // intended rollbacks, no failure, the invariants hold, and the driver spends less CPU
        // per transaction than with the statements.
        let called = run_the_mix(&db, &["--procedures"], "2s", "10s", &dir.join("procedures"));
        assert_eq!(called["config"]["procedures"], true);
        assert_procedures_cost_the_driver_less(&doc, &called);
        check_holds(&db);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `oltplab run brokerage` with 4 terminals: every type ran, none failed, the measured mix follows
/// EGen's weights and Trade-Order's intended rollbacks rolled back. Returns the result.
fn run_the_mix(
    db: &[&str],
    options: &[&str],
    warmup: &str,
    duration: &str,
    result_dir: &Path,
) -> serde_json::Value {
    let out = oltplab(
        Path::new("/"),
        &[
            &["run", "brokerage"],
            db,
            options,
            &[
                "--terminals",
                "4",
                "--warmup",
                warmup,
                "--duration",
                duration,
            ],
            &["--out", result_dir.to_str().unwrap()],
        ]
        .concat(),
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("tpsE-like"), "{err}");
    let doc = json(&result_dir.join("result.json"));
    let s = &doc["summary"];
    assert!(s["tpse_like"].as_f64().unwrap() > 0.0, "{err}");
    for (t, weight) in TYPES {
        let x = &s["tx"][t];
        assert!(x["count"].as_u64().unwrap() > 0, "{t}: {err}");
        assert_eq!(x["errors"].as_u64(), Some(0), "{t}: {err}");
        let measured = s["mix"][t]["measured_pct"].as_f64().unwrap();
        // The terminals draw their transactions from EGen's mix: within 1 point. Trade-Result and
        // Market-Feed are the market emulator's, run by its two workers after the trade orders
        // they answer, so their share is the orders' less the market's backlog, which a busy
        // 2-core machine grows: 8.2 % (SQLite) and 9.0 % (MariaDB) of a 10 % weight under CI's
        // load on 2026-11-26. Within 2 points for those.
        let tolerance = if matches!(t, "trade_result" | "market_feed") {
            2.0
        } else {
            1.0
        };
        assert!(
            (measured - weight).abs() <= tolerance,
            "{t}: {measured:.2} % of the mix, weight {weight} %: {err}"
        );
    }
    assert!(s["tx"]["trade_order"]["rollbacks"].as_u64().unwrap() > 0);
    doc
}

/// `oltplab check brokerage`: the six invariants hold.
fn check_holds(db: &[&str]) {
    let out = oltplab(Path::new("/"), &[&["check", "brokerage"], db].concat());
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches(" holds").count(), 6, "{err}");
}

#[test]
fn sqlite_load_run_check() {
    load_run_check("sqlite", &[]);
}

#[test]
fn postgres_load_run_check() {
    load_run_check("postgres", &["initdb"]);
}

#[test]
fn mariadb_load_run_check() {
    load_run_check("mariadb", &["mariadbd", "mysqld"]);
}

#[test]
fn bad_brokerage_input_is_one_sentence() {
    let dir = scratch("brokerage-bad");
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let out = oltplab(
        &dir,
        &[
            "load",
            "brokerage",
            "--data-dir",
            data,
            "--customers",
            "1500",
        ],
    );
    assert_one_line_usage_error(&out, "multiple of 1000");
    let out = oltplab(&dir, &["run", "brokerage", "--data-dir", data]);
    assert_one_line_usage_error(&out, "oltplab load brokerage");
    let out = oltplab(
        &dir,
        &["run", "brokerage", "--data-dir", data, "--keying-think"],
    );
    assert_one_line_usage_error(&out, "--keying-think");
    let out = oltplab(
        &dir,
        &["run", "brokerage", "--data-dir", data, "--mode", "insert"],
    );
    assert_one_line_usage_error(&out, "--mode");
    // Server-side procedures need a server.
    let out = oltplab(
        &dir,
        &["run", "brokerage", "--data-dir", data, "--procedures"],
    );
    assert_one_line_usage_error(&out, "--engine postgres or mariadb");
    assert!(!Path::new(data).join("brokerage.sqlite").exists());
    // TPC-C's --no-check and --threads are brokerage's too.
    let out = oltplab(
        &dir,
        &[
            "load",
            "brokerage",
            "--data-dir",
            data,
            "--days",
            "1",
            "--no-check",
            "--threads",
            "1",
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("brokerage invariants"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `run brokerage --warmup auto`, as TPC-C and TATP take it: warmed up until Trade-Result's rate
/// is steady (20 s at least), then measured; whether it became steady is in the result, and a
/// warning says when it did not.
#[test]
fn an_auto_warm_up_waits_for_a_steady_trade_result_rate() {
    let dir = scratch("brokerage-auto-warmup");
    let data = dir.join("data");
    let data = data.to_str().unwrap();
    let out = oltplab(
        &dir,
        &[
            "load",
            "brokerage",
            "--data-dir",
            data,
            "--days",
            "1",
            "--no-check",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = oltplab(
        &dir,
        &[
            "run",
            "brokerage",
            "--data-dir",
            data,
            "--warmup",
            "auto",
            "--duration",
            "2s",
            "--terminals",
            "2",
            "--json",
            "auto.json",
        ],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("until Trade-Result's rate is steady"), "{err}");
    let doc = json(&dir.join("auto.json"));
    assert_eq!(doc["config"]["warmup_auto"], true, "{doc}");
    let s = &doc["summary"];
    assert!(s["warmup_s"].as_f64().unwrap() >= 20.0, "{s}");
    let steady = s["warmup_steady"].as_bool().expect("warmup_steady");
    let warned = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "not_steady");
    assert_eq!(warned, !steady, "{doc}");
    assert!(
        s["tx"]["trade_result"]["count"].as_u64().unwrap() > 0,
        "{s}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
