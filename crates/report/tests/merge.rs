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
    let a = tpcc_run(1, 2, 2, 0);
    let b = tpcc_run(2, 3, 3, 1);
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
    assert!(w["message"]
        .as_str()
        .unwrap()
        .contains("start the drivers together"));
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
