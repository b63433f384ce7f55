//! `oltplab crash brokerage` and `oltplab crash orders` on SQLite: per workload one cut on an
//! honest volatile cache with synchronous=FULL loses no acknowledged commit and breaks none of
//! the workload's conditions; one on a lying cache (same seed) loses acknowledged commits.

mod common;

use common::{assert_ok, assert_one_line_usage_error, json, oltplab, scratch};
use serde_json::Value;

/// One honest and one lying row of `crash WORKLOAD`, one cut of two states each.
fn honest_and_lying(workload: &str, duration: &str) -> Value {
    let dir = scratch(&format!("crash-{workload}"));
    let out = oltplab(
        &dir,
        &[
            "crash",
            workload,
            "--emulate",
            "sata-ssd-2010",
            "--emulate",
            "sata-ssd-2010{cache=lying}",
            "--cuts",
            "1",
            "--states",
            "2",
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
        assert_eq!(row["states"], 2, "{row:#}");
        assert!(row["acknowledged_commits"].as_u64().unwrap() > 0, "{row:#}");
    }
    // Honest flushes and synchronous=FULL: every acknowledged commit found, every condition holds.
    assert_eq!(honest["recoveries_ok"], 2, "{honest:#}");
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
    let states = doc["summary"]["states"].as_array().unwrap();
    assert_eq!(states.len(), 4);
    // The acknowledged commits are the run's: the same count in both states of a cut.
    assert_eq!(
        states[0]["acknowledged_commits"],
        states[1]["acknowledged_commits"]
    );
    // Nothing of the cuts is left behind but the load (no state was kept).
    assert!(!dir.join("out/sata-ssd-2010-FULL/cut-0").exists());
    std::fs::remove_dir_all(&dir).unwrap();
    doc
}

#[test]
fn brokerage_an_honest_cache_loses_no_trade_and_a_lying_one_loses_trades() {
    honest_and_lying("brokerage", "2s");
}

#[test]
fn orders_an_honest_cache_loses_no_order_and_a_lying_one_loses_orders() {
    honest_and_lying("orders", "1s");
}

#[test]
fn brokerage_and_orders_refuse_what_they_do_not_support() {
    let dir = scratch("crash-workloads-usage");
    let out = oltplab(&dir, &["crash", "orders", "--engine", "postgres"]);
    assert_one_line_usage_error(&out, "crash orders runs on SQLite for now");
    let out = oltplab(&dir, &["crash", "brokerage", "--warehouses", "2"]);
    assert_one_line_usage_error(&out, "--warehouses is TPC-C's");
    assert!(!dir.join("oltplab-results").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
