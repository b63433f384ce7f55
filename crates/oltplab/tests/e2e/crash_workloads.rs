//! `oltplab crash brokerage` and `oltplab crash orders`: per workload one cut on an honest
//! volatile cache (SQLite's synchronous=FULL, a server's defaults) loses no acknowledged commit
//! and breaks none of the workload's conditions; one on a lying cache (same seed) loses
//! acknowledged commits. SQLite for both; order entry on PostgreSQL and the brokerage on MariaDB,
//! servers oltplab starts on private sockets and stops (skipped where not installed).

use crate::common;

use common::{assert_ok, assert_one_line_usage_error, json, oltplab, scratch, server_installed};
use serde_json::Value;

/// One honest and one lying row of `crash WORKLOAD --engine ENGINE`, one cut of `states` states.
fn honest_and_lying(workload: &str, engine: &str, duration: &str, states: u64) -> Value {
    let dir = scratch(&format!("crash-{workload}-{engine}"));
    let states_arg = states.to_string();
    let out = oltplab(
        &dir,
        &[
            "crash",
            workload,
            "--engine",
            engine,
            "--emulate",
            "sata-ssd-2010",
            "--emulate",
            "sata-ssd-2010{cache=lying}",
            "--cuts",
            "1",
            "--states",
            &states_arg,
            "--duration",
            duration,
            "--seed",
            "3",
            "--out",
            "out",
        ],
    );
    assert_ok(&out);
    let doc = json(&dir.join("out/result.json"));
    assert_eq!(doc["kind"], "crash");
    assert_eq!(doc["summary"]["workload"], workload);
    assert_eq!(doc["config"]["workload"], workload);
    // TPC-C's scale is not claimed for another workload.
    assert!(doc["summary"].get("warehouses").is_none(), "{doc:#}");
    assert_eq!(doc["summary"]["customers"], 1000);
    let rows = doc["summary"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{doc:#}");
    let (honest, lying) = (&rows[0], &rows[1]);
    assert_eq!(honest["cache"], "volatile");
    assert_eq!(lying["cache"], "lying");
    for row in rows {
        assert_eq!(row["cuts"], 1, "{row:#}");
        assert_eq!(row["states"], states, "{row:#}");
        assert!(row["acknowledged_commits"].as_u64().unwrap() > 0, "{row:#}");
    }
    // Honest flushes and synchronous=FULL (a server's defaults): every acknowledged commit
    // found, every condition holds.
    assert_eq!(honest["recoveries_ok"], states, "{honest:#}");
    assert_eq!(honest["checks_failed"], 0, "{honest:#}");
    assert_eq!(honest["invariants_broken"], 0, "{honest:#}");
    assert_eq!(honest["corrupt_reports"], 0, "{honest:#}");
    assert_eq!(honest["commits_lost"], 0, "{honest:#}");
    assert_eq!(honest["unexpected_states"], 0, "{honest:#}");
    assert_eq!(honest["expected"], "nothing lost, nothing broken");
    // The lying cache's flushes made nothing durable: acknowledged commits are gone.
    assert!(
        lying["commits_lost"].as_u64().unwrap() > 0,
        "a lying cache's cut lost no acknowledged commit: {lying:#}"
    );
    assert_eq!(lying["expected"], "no promise");
    assert_eq!(doc["warnings"].as_array().unwrap().len(), 0, "{doc:#}");
    let all = doc["summary"]["states"].as_array().unwrap();
    assert_eq!(all.len() as u64, 2 * states);
    // The acknowledged commits are the run's: the same count in every state of a cut.
    assert_eq!(
        all[0]["acknowledged_commits"],
        all[states as usize - 1]["acknowledged_commits"]
    );
    // No cut's files are left behind: no state was kept.
    for row in std::fs::read_dir(dir.join("out")).unwrap().flatten() {
        if row.path().is_dir() && row.file_name() != "load" {
            let cuts: Vec<_> = std::fs::read_dir(row.path())
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("cut-"))
                .collect();
            assert!(cuts.is_empty(), "{}: {cuts:?}", row.path().display());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    doc
}

#[test]
fn brokerage_an_honest_cache_loses_no_trade_and_a_lying_one_loses_trades() {
    honest_and_lying("brokerage", "sqlite", "2s", 2);
}

#[test]
fn orders_an_honest_cache_loses_no_order_and_a_lying_one_loses_orders() {
    honest_and_lying("orders", "sqlite", "1s", 2);
}

#[test]
fn orders_on_postgres_an_honest_cache_loses_no_order_and_a_lying_one_loses_orders() {
    if !server_installed("initdb") {
        return;
    }
    honest_and_lying("orders", "postgres", "2s", 1);
}

#[test]
fn brokerage_on_mariadb_an_honest_cache_loses_no_trade_and_a_lying_one_loses_trades() {
    if !server_installed("mariadbd") {
        return;
    }
    honest_and_lying("brokerage", "mariadb", "2s", 1);
}

#[test]
fn brokerage_and_orders_refuse_what_they_do_not_support() {
    let dir = scratch("crash-workloads-usage");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "orders",
            "--engine",
            "postgres",
            "--sqlite-synchronous",
            "OFF",
        ],
    );
    assert_one_line_usage_error(&out, "--sqlite-synchronous is SQLite's");
    let out = oltplab(&dir, &["crash", "brokerage", "--warehouses", "2"]);
    assert_one_line_usage_error(&out, "--warehouses is TPC-C's");
    assert!(!dir.join("oltplab-results").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
