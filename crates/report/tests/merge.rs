//! `merge`: two partial results must equal the sum — counts added, histograms merged exactly (the
//! merged percentiles are those of all raw latencies together), intervals on one clock.

mod common;

use common::*;
use oltplab_metrics::LatencyHistogram;
use oltplab_report::{merge, ReportError};
use serde_json::{json, Value};

fn f(v: &Value, p: &str) -> f64 {
    v.pointer(p)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{p} missing"))
}

#[test]
fn two_partial_tpcc_runs_merge_to_their_sum() {
    // Warehouses 1–2 on one driver, 3–5 on another, started one second apart.
    let a = ranged(tpcc_run(1, 2, 2, 0), 1, 2, 5);
    let b = ranged(tpcc_run(2, 3, 3, 1), 3, 5, 5);
    let m = merge(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(m["schema"], "oltplab.result/1");
    assert_eq!(m["kind"], "merge");
    assert_eq!(m["config"]["merged_kind"], "run");
    assert_eq!(m["config"]["parts"].as_array().unwrap().len(), 2);
    assert_eq!(
        oltplab_report::validate(&m).unwrap(),
        oltplab_report::Kind::Run
    );

    for tx in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        for field in ["count", "errors", "rollbacks"] {
            let p = format!("/summary/tx/{tx}/{field}");
            assert_eq!(f(&m, &p), f(&a, &p) + f(&b, &p), "{p}");
        }
        // The merged histogram is the histogram of both drivers' raw latencies together.
        let i = [
            "new_order",
            "payment",
            "order_status",
            "delivery",
            "stock_level",
        ]
        .iter()
        .position(|t| *t == tx)
        .unwrap() as u64;
        let (na, nb) = (
            f(&a, &format!("/summary/tx/{tx}/count")) as usize,
            f(&b, &format!("/summary/tx/{tx}/count")) as usize,
        );
        let mut raw = latencies(10 + i, na, [4.0e6, 2.0e6, 1.0e6, 9.0e6, 3.0e6][i as usize]);
        raw.extend(latencies(
            20 + i,
            nb,
            [4.0e6, 2.0e6, 1.0e6, 9.0e6, 3.0e6][i as usize],
        ));
        let want = hist(&raw).stats();
        let got: oltplab_metrics::LatencyNs =
            serde_json::from_value(m["summary"]["tx"][tx]["lat_ns"].clone()).unwrap();
        assert_eq!(got, want, "{tx}");
        let stored = LatencyHistogram::from_base64(m["histograms"][tx].as_str().unwrap()).unwrap();
        assert_eq!(stored.count(), raw.len() as u64);
        assert_eq!(stored.stats(), want);
    }
    for p in [
        "/summary/tpmc",
        "/summary/tpm_total",
        "/summary/io/reads",
        "/summary/io/writes",
        "/summary/io/read_bytes",
        "/summary/io/iops",
        "/summary/cpu/db_user_s",
    ] {
        assert!((f(&m, p) - (f(&a, p) + f(&b, p))).abs() < 1e-6, "{p}");
    }
    // The parts ran side by side: the window is as long as the longer part, not the sum.
    assert_eq!(f(&m, "/summary/elapsed_s"), 60.0);
    // Efficiency over the 5 warehouses driven in total.
    let tpmc = f(&m, "/summary/tpmc");
    assert!((f(&m, "/summary/efficiency") - tpmc / (12.86 * 5.0)).abs() < 1e-9);
    // Windows: the second driver started 1 s later; they overlap for 59 of 61 s.
    assert_eq!(m["summary"]["merge"]["start_offsets_s"], json!([0.0, 1.0]));
    assert_eq!(f(&m, "/summary/merge/overlap_s"), 59.0);
    assert_eq!(f(&m, "/summary/merge/span_s"), 61.0);
    // Intervals on one clock: b's t_s = 10 is 11 s after a's start and gets its own second.
    let ivs = m["intervals"].as_array().unwrap();
    assert_eq!(ivs.len(), 12);
    assert_eq!(f(&ivs[0], "/t_s"), 10.0);
    assert_eq!(f(&ivs[1], "/t_s"), 11.0);
    assert_eq!(f(&ivs[0], "/tpmc"), f(&a["intervals"][0], "/tpmc"));
    // Each part's warning is kept and says which part.
    let warnings = m["warnings"].as_array().unwrap();
    assert!(warnings
        .iter()
        .any(|w| w["message"].as_str().unwrap().starts_with("part 2: ")));
    assert!(!warnings.iter().any(|w| w["kind"] == "windows_not_aligned"));
    // The merged result renders like any run, with a note on the merge.
    let md = oltplab_report::markdown(&[m]).unwrap();
    assert!(
        md.contains("- Merged from 2 results (hosts: driver1, driver2)"),
        "{md}"
    );
}

/// `run tpcc --warehouse-range first:last` on a database of `loaded` warehouses.
fn ranged(mut run: Value, first: u64, last: u64, loaded: u64) -> Value {
    run["config"]["warehouse_range"] = json!({"first": first, "last": last});
    run["config"]["warehouses"] = json!(loaded);
    run
}

#[test]
fn overlapping_warehouse_ranges_are_refused() {
    let a = ranged(tpcc_run(1, 1, 2, 0), 1, 2, 4);
    let b = ranged(tpcc_run(2, 1, 2, 0), 2, 3, 4);
    let e = merge(&[a.clone(), b]).unwrap_err();
    assert!(matches!(e, ReportError::Invalid { index: 1, .. }));
    assert!(
        e.to_string()
            .contains("drove home warehouses 2–3, which overlap result 1's 1–2"),
        "{e}"
    );
    // A part without a range drove every warehouse, so it overlaps any range.
    let mut whole = tpcc_run(3, 1, 4, 0);
    whole["config"]["warehouses"] = json!(4);
    assert!(merge(&[a, whole]).is_err());
}

#[test]
fn drivers_on_the_whole_database_count_its_warehouses_once() {
    // Two drivers without ranges on one 3-warehouse database: more load, not more warehouses.
    let a = tpcc_run(1, 1, 3, 0);
    let b = tpcc_run(2, 1, 3, 0);
    let m = merge(&[a.clone(), b.clone()]).unwrap();
    let tpmc = f(&m, "/summary/tpmc");
    assert!((tpmc - f(&a, "/summary/tpmc") - f(&b, "/summary/tpmc")).abs() < 1e-6);
    assert!((f(&m, "/summary/efficiency") - tpmc / (12.86 * 3.0)).abs() < 1e-9);
}

#[test]
fn tpmc_is_the_summed_new_orders_over_the_merged_window() {
    // The second driver was stopped after 30 of its 60 s: its rate was the same, its count half.
    let a = tpcc_run(1, 1, 1, 0);
    let mut b = tpcc_run(2, 1, 1, 0);
    b["summary"]["elapsed_s"] = json!(30.0);
    let half = f(&b, "/summary/tx/new_order/count") / 2.0;
    b["summary"]["tx"]["new_order"]["count"] = json!(half as u64);
    let m = merge(&[a.clone(), b]).unwrap();
    let new_orders = f(&a, "/summary/tx/new_order/count") + half.floor();
    assert_eq!(f(&m, "/summary/elapsed_s"), 60.0);
    assert!((f(&m, "/summary/tpmc") - new_orders).abs() < 1e-9);
    // b's 30 s lie inside a's 60 s: nothing ran outside the merged window, so no warning.
    let w = m["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "windows_not_aligned");
    assert!(w.is_none(), "b's 30 s lie inside a's 60 s: {w:?}");
}

#[test]
fn windows_are_aligned_by_the_measured_window_start() {
    // Both commands started at 10:00:00, but b connected slowly and began measuring 2.5 s later.
    let mut a = tpcc_run(1, 1, 1, 0);
    let mut b = tpcc_run(2, 1, 1, 0);
    a["summary"]["measure_started_at"] = json!("2026-11-22T10:00:10.000000Z");
    b["summary"]["measure_started_at"] = json!("2026-11-22T10:00:12.500000Z");
    let m = merge(&[a, b]).unwrap();
    assert_eq!(m["summary"]["merge"]["start_offsets_s"], json!([0.0, 2.5]));
    assert_eq!(
        m["summary"]["measure_started_at"],
        "2026-11-22T10:00:10.000000Z"
    );
    // a's t_s 10, 20 … and b's 12.5 → 13, 22.5 → 23 …: no second is shared.
    let ivs = m["intervals"].as_array().unwrap();
    assert_eq!(ivs.len(), 12);
    assert!(ivs.iter().all(|iv| iv["parts"] == 1));
    // Per-second latency figures of coinciding seconds combine as bounds and means, never sums.
    let c = merge(&[
        {
            let mut x = tpcc_run(1, 1, 1, 0);
            x["intervals"][0]["new_order_lat_ns_p99"] = json!(1000);
            x["intervals"][0]["new_order_lat_ns_mean"] = json!(400.0);
            x
        },
        {
            let mut y = tpcc_run(2, 1, 1, 0);
            y["intervals"][0]["new_order_lat_ns_p99"] = json!(3000);
            y["intervals"][0]["new_order_lat_ns_mean"] = json!(600.0);
            y
        },
    ])
    .unwrap();
    assert_eq!(c["intervals"][0]["new_order_lat_ns_p99"], 3000);
    assert_eq!(f(&c["intervals"][0], "/new_order_lat_ns_mean"), 500.0);
}

#[test]
fn machine_wide_figures_count_once_per_machine() {
    // Three drivers against one external server: two on host x, one on host y. Each read its
    // machine's device counters and the server's CPU by process name.
    let part = |seed: u64, host: &str, reads: u64, db_user_s: f64| {
        let mut r = tpcc_run(seed, 1, 1, 0);
        r["env"]["hostname"] = json!(host);
        r["config"]["db"] = json!({"engine": "postgres", "managed": false});
        r["summary"]["io"]["source"] = json!("diskstats:vda");
        r["summary"]["io"]["reads"] = json!(reads);
        r["summary"]["cpu"]["db_user_s"] = json!(db_user_s);
        r
    };
    let m = merge(&[
        part(1, "x", 1000, 20.0),
        part(2, "x", 1010, 21.0),
        part(3, "y", 50, 0.0),
    ])
    .unwrap();
    assert_eq!(m["summary"]["io"]["reads"], 1060);
    assert_eq!(f(&m, "/summary/cpu/db_user_s"), 21.0);
    // The driver's own CPU is its own: summed.
    assert_eq!(f(&m, "/summary/cpu/driver_user_s"), 3.0 * 3.5);
}

#[test]
fn seconds_that_coincide_are_summed() {
    let a = tpcc_run(1, 1, 1, 0);
    let b = tpcc_run(2, 1, 1, 0);
    let m = merge(&[a.clone(), b.clone()]).unwrap();
    let ivs = m["intervals"].as_array().unwrap();
    assert_eq!(ivs.len(), 6);
    for (i, iv) in ivs.iter().enumerate() {
        assert_eq!(iv["parts"], 2);
        let want = f(&a["intervals"][i], "/tpmc") + f(&b["intervals"][i], "/tpmc");
        assert!((f(iv, "/tpmc") - want).abs() < 1e-9);
        // Utilisation of two machines is an average, not a sum.
        let u = (f(&a["intervals"][i], "/cpu_utilisation")
            + f(&b["intervals"][i], "/cpu_utilisation"))
            / 2.0;
        assert!((f(iv, "/cpu_utilisation") - u).abs() < 1e-9);
    }
}

#[test]
fn device_results_merge_exactly_per_point() {
    let a = fixture("device-sweep.json");
    let b = fixture("device-sweep.json");
    let m = merge(&[a.clone(), b]).unwrap();
    assert_eq!(f(&m, "/summary/read/ios"), 2.0 * f(&a, "/summary/read/ios"));
    assert_eq!(f(&m, "/summary/iops"), 2.0 * f(&a, "/summary/iops"));
    for (i, p) in a["summary"]["sweep"].as_array().unwrap().iter().enumerate() {
        let mp = &m["summary"]["sweep"][i];
        assert_eq!(mp["qd"], p["qd"]);
        assert_eq!(f(mp, "/read/ios"), 2.0 * f(p, "/read/ios"));
        // The same latencies twice over have the same percentiles.
        assert_eq!(mp["read"]["lat_ns"]["p99"], p["read"]["lat_ns"]["p99"]);
        assert_eq!(mp["lat_ns"]["max"], p["lat_ns"]["max"]);
    }
    let g = f(&m, "/summary/geomean_iops");
    assert!((g - 2.0 * f(&a, "/summary/geomean_iops")).abs() / g < 1e-9);
    let h = LatencyHistogram::from_base64(m["histograms"]["read"].as_str().unwrap()).unwrap();
    assert_eq!(h.count() as f64, f(&m, "/summary/read/ios"));
}

#[test]
fn windows_that_do_not_overlap_are_flagged() {
    let a = tpcc_run(1, 1, 1, 0);
    let mut b = tpcc_run(2, 1, 1, 0);
    b["started_at"] = json!("2026-11-22T10:05:00Z");
    let m = merge(&[a, b]).unwrap();
    assert_eq!(f(&m, "/summary/merge/overlap_s"), 0.0);
    let w = m["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "windows_not_aligned")
        .expect("a warning");
    assert!(w["message"].as_str().unwrap().contains(
        "(0 %), so the summed rates overstate what ran at once: start the drivers together"
    ));
    // Typed: the kind reads back as the schema's WarningKind.
    let w: oltplab_metrics::Warning = serde_json::from_value(w.clone()).unwrap();
    assert_eq!(w.kind, oltplab_metrics::WarningKind::WindowsNotAligned);
}

#[test]
fn latencies_without_histograms_are_flagged_as_bounds() {
    let a = tpcc_run(1, 1, 1, 0);
    let mut b = tpcc_run(2, 1, 1, 0);
    let mut a2 = a.clone();
    a2["histograms"] = json!({});
    b["histograms"] = json!({});
    let m = merge(&[a2, b.clone()]).unwrap();
    assert!(m["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "latency_not_merged"));
    // Without histograms the p99 is the higher of the two (a bound), never a sum.
    let p = "/summary/tx/payment/lat_ns/p99";
    assert_eq!(f(&m, p), f(&a, p).max(f(&b, p)));
}

#[test]
fn what_cannot_be_merged_says_why() {
    let one = merge(&[tpcc_run(1, 1, 1, 0)]).unwrap_err();
    assert!(one.to_string().contains("at least two"), "{one}");
    let mixed = merge(&[tpcc_run(1, 1, 1, 0), replay(1, 10.0)]).unwrap_err();
    assert!(matches!(mixed, ReportError::Invalid { index: 1, .. }));
    assert!(mixed.to_string().contains("one kind"), "{mixed}");
    let s = merge(&[study(), study()]).unwrap_err();
    assert!(s.to_string().contains("merge the run results"), "{s}");
    let mut broken = tpcc_run(1, 1, 1, 0);
    broken["histograms"]["payment"] = json!("bm90IGEgaGlzdG9ncmFt");
    let e = merge(&[tpcc_run(2, 1, 1, 0), broken]).unwrap_err();
    assert!(matches!(e, ReportError::Invalid { index: 1, .. }));
    assert!(e.to_string().contains("damaged histogram 'payment'"), "{e}");
}
