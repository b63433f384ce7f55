//! Scale-out as a user meets it: several `oltplab run tpcc --warehouse-range` driver processes
//! against one PostgreSQL server at the same time, merged with `oltplab merge`; and `--quiet` and
//! `--json -` for scripts. The server is started by the test in a temporary directory and always
//! stopped; where PostgreSQL is not installed the server test says so and passes.

use crate::common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{assert_one_line_usage_error as assert_usage_error, json, scratch};
use oltplab_dbs::server::{self, ManagedServer, ServerConfig, ServerKind};
use oltplab_metrics::LatencyHistogram;
use serde_json::Value;

const TX: [&str; 5] = [
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_oltplab"));
    cmd.current_dir(dir).args(args);
    cmd
}

fn oltplab(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("run oltplab")
}

/// `oltplab run tpcc --url URL --warehouse-range RANGE …`.
fn run_tpcc(dir: &Path, url: &str, range: &str, extra: &[&str]) -> Command {
    let mut cmd = command(
        dir,
        &["run", "tpcc", "--url", url, "--warehouse-range", range],
    );
    cmd.args(extra);
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn f(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} missing"))
}

/// With --quiet, stderr holds at most warnings, one line each.
fn assert_quiet(out: &Output) {
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    for line in err.lines() {
        assert!(
            line.starts_with("warning: "),
            "not quiet: {line:?} in {err}"
        );
    }
}

fn unix_s(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// Σ d_next_o_id of each warehouse: grows by one per New-Order of that home warehouse.
fn next_order_ids(url: &str) -> Vec<i64> {
    let mut client = server::connect::pg_connect(url).unwrap();
    client
        .query(
            "SELECT sum(d_next_o_id)::bigint FROM district GROUP BY d_w_id ORDER BY d_w_id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get::<_, i64>(0))
        .collect()
}

#[test]
fn drivers_on_partitions_of_one_server_merge_exactly() {
    if server::find_program(&["initdb"], None).is_none() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            "PostgreSQL is not installed",
        );
        return;
    }
    let dir = scratch("pg");
    let mut cfg = ServerConfig::new(ServerKind::Postgres, dir.join("pg"));
    cfg.buffer_pool_bytes = 64 << 20;
    cfg.max_connections = 40;
    // Stopped on drop, also when an assertion fails.
    let server = ManagedServer::start(&cfg).unwrap();
    let url = server.url();

    let out = oltplab(
        &dir,
        &[
            "load",
            "tpcc",
            "--url",
            &url,
            "-w",
            "2",
            "--threads",
            "2",
            "--no-check",
            "-q",
        ],
    );
    assert_quiet(&out);

    // A range beyond the load is refused before anything is written.
    let out = run_tpcc(&dir, &url, "2:3", &["--out", "refused"])
        .output()
        .unwrap();
    assert_usage_error(&out, "--warehouse-range 2:3 goes beyond the 2 warehouses");
    assert!(!dir.join("refused").exists());

    // One driver on warehouse 2 alone: New-Orders land in warehouse 2 only.
    let before = next_order_ids(&url);
    let alone = [
        "-t",
        "2",
        "--warmup",
        "0s",
        "--duration",
        "2s",
        "--out",
        "alone",
        "-q",
    ];
    let out = run_tpcc(&dir, &url, "2:2", &alone).output().unwrap();
    assert_quiet(&out);
    let after = next_order_ids(&url);
    assert_eq!(after[0], before[0], "warehouse 1 got New-Orders");
    assert!(after[1] > before[1], "warehouse 2 got none");

    // Two drivers at once, one per warehouse, measuring the same window from --start-at. The first
    // is quiet and writes its JSON to stdout; the second talks and writes a file.
    let start_at = (unix_s(SystemTime::now() + Duration::from_secs(3))).to_string();
    let driver = |range: &str, extra: &[&str]| {
        let window = [
            "-t",
            "3",
            "--warmup",
            "3s",
            "--duration",
            "8s",
            "--report-interval",
            "2s",
            "--start-at",
            &start_at,
        ];
        run_tpcc(&dir, &url, range, &[&window[..], extra].concat())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let a = driver("1:1", &["--out", "a", "--json", "-", "--quiet"]);
    let b = driver("2:2", &["--out", "b", "--json", "b.json"]);
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_quiet(&a);
    let part_a: Value = serde_json::from_slice(&a.stdout).expect("stdout is one JSON document");
    assert_eq!(part_a["schema"], "oltplab.result/1");
    assert_eq!(part_a, json(&dir.join("a/result.json")));
    assert!(b.status.success(), "{}", text(&b.stderr));
    assert!(b.stdout.is_empty(), "human output belongs on stderr");
    let b_err = text(&b.stderr);
    assert!(b_err.contains("home warehouses 2–2 of 2"), "{b_err}");
    assert!(
        b_err.contains("NOPM") && b_err.contains("new_order"),
        "{b_err}"
    );
    let part_b = json(&dir.join("b.json"));
    for (part, range) in [(&part_a, 1), (&part_b, 2)] {
        assert_eq!(part["config"]["warehouse_range"]["first"], range);
        assert_eq!(part["config"]["warehouse_range"]["last"], range);
        assert_eq!(part["config"]["warehouses"], 2);
        assert_eq!(part["summary"]["warehouses"], 1);
        assert!(f(part, "/summary/tx/new_order/count") > 0.0);
    }
    std::fs::write(dir.join("a.json"), serde_json::to_string(&part_a).unwrap()).unwrap();

    let out = oltplab(&dir, &["merge", "a.json", "b.json", "-o", "merged.json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let m = json(&dir.join("merged.json"));
    assert_eq!(m["kind"], "merge");
    assert_eq!(m["config"]["merged_kind"], "run");
    for (i, range) in [1, 2].iter().enumerate() {
        assert_eq!(
            m["config"]["parts"][i]["config"]["warehouse_range"]["first"],
            *range
        );
    }
    let mut all = 0.0;
    for tx in TX {
        for field in ["count", "errors", "rollbacks", "retries"] {
            let p = format!("/summary/tx/{tx}/{field}");
            assert_eq!(f(&m, &p), f(&part_a, &p) + f(&part_b, &p), "{p}");
        }
        let count = f(&m, &format!("/summary/tx/{tx}/count"));
        all += count;
        let h = LatencyHistogram::from_base64(m["histograms"][tx].as_str().unwrap()).unwrap();
        assert_eq!(
            h.count() as f64,
            count,
            "{tx}: histogram holds every transaction"
        );
        // From the merged histogram (the mean only up to JSON's last digit).
        let lat: oltplab_metrics::LatencyNs =
            serde_json::from_value(m["summary"]["tx"][tx]["lat_ns"].clone()).unwrap();
        let want = h.stats();
        assert_eq!(
            (lat.p50, lat.p90, lat.p99, lat.p999, lat.max, lat.min),
            (want.p50, want.p90, want.p99, want.p999, want.max, want.min),
            "{tx}"
        );
        assert!((lat.mean - want.mean).abs() <= 1e-9 * want.mean, "{tx}");
    }
    // tpmC: the summed New-Orders over the merged window, which is as long as the parts'.
    let window_s = f(&m, "/summary/measured_s");
    assert!((window_s - 8.0).abs() < 0.5, "{window_s}");
    let new_orders = f(&m, "/summary/tx/new_order/count");
    assert!((f(&m, "/summary/tpmc") - new_orders * 60.0 / window_s).abs() < 1e-6);
    assert!((f(&m, "/summary/tpm_total") - all * 60.0 / window_s).abs() < 1e-6);
    assert_eq!(m["summary"]["warehouses"], 2);
    // Unpaced parts: New-Orders per minute (NOPM) and no efficiency, merged alike.
    assert_eq!(f(&m, "/summary/nopm"), f(&m, "/summary/tpmc"));
    assert!(
        m.pointer("/summary/efficiency").is_none(),
        "{}",
        m["summary"]
    );
    // Started together: the windows coincide to well under a second, and no warning says otherwise.
    let offsets = m["summary"]["merge"]["start_offsets_s"].as_array().unwrap();
    assert!(
        offsets.iter().all(|o| o.as_f64().unwrap() < 0.5),
        "{offsets:?}"
    );
    assert!(f(&m, "/summary/merge/overlap_s") > 0.9 * window_s);
    let warnings = m["warnings"].as_array().unwrap();
    assert!(
        !warnings.iter().any(|w| w["kind"] == "windows_not_aligned"),
        "{warnings:?}"
    );
    assert!(m["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .any(|iv| iv["parts"] == 2));
    eprintln!(
        "merged: tpmC {:.0} = ({} + {}) New-Orders × 60 / {window_s:.3} s; windows start {} s apart",
        f(&m, "/summary/tpmc"),
        f(&part_a, "/summary/tx/new_order/count"),
        f(&part_b, "/summary/tx/new_order/count"),
        f(&m, "/summary/merge/span_s") - window_s,
    );

    // Merging a driver with a copy of itself would count warehouse 1 twice: refused.
    std::fs::copy(dir.join("a.json"), dir.join("a-again.json")).unwrap();
    let out = oltplab(
        &dir,
        &["merge", "a.json", "a-again.json", "-o", "twice.json"],
    );
    assert_usage_error(&out, "overlap result 1's 1–1");
    assert!(!dir.join("twice.json").exists());

    server.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn quiet_and_json_on_stdout_for_scripts() {
    let dir = scratch("quiet");
    let null = |extra: &[&str]| {
        let mut args = vec![
            "device",
            "--engine",
            "null",
            "--runtime",
            "200ms",
            "--ramp",
            "0s",
        ];
        args.extend_from_slice(extra);
        oltplab(&dir, &args)
    };
    // --quiet: no header, progress or summary; the result is saved as always.
    let out = null(&["--quiet", "--out", "q"]);
    assert_quiet(&out);
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(dir.join("q/result.json").is_file());

    // --json -: stdout is exactly one result document; the summary moves to stderr.
    let out = null(&["--json", "-", "--out", "j"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "oltplab.result/1");
    assert_eq!(doc["kind"], "device");
    assert_eq!(doc, json(&dir.join("j/result.json")));
    assert!(text(&out.stderr).contains("IOPS"), "{}", text(&out.stderr));

    // Both: the JSON and nothing but warnings.
    let out = null(&["--json", "-", "-q", "--out", "jq"]);
    assert_quiet(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["kind"], "device");

    // merge -o -: the merged result on stdout; --quiet drops the line about it.
    let out = oltplab(&dir, &["merge", "q", "jq", "-o", "-", "--quiet"]);
    assert_quiet(&out);
    let merged: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(merged["kind"], "merge");
    assert_eq!(
        f(&merged, "/summary/read/ios"),
        f(&json(&dir.join("q/result.json")), "/summary/read/ios")
            + f(&json(&dir.join("jq/result.json")), "/summary/read/ios")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_scale_out_options_are_one_sentence_and_write_nothing() {
    let dir = scratch("bad");
    let cases: &[(&[&str], &str)] = &[
        (&["--warehouse-range", "one:two"], "is not a range"),
        (&["--warehouse-range", "3:1"], "--warehouse-range 1:3"),
        (&["--warehouse-range", "0:4"], "numbered from 1"),
        (&["--start-at", "soon"], "is not a time"),
        (&["--start-at", "2020-01-01T00:00:00Z"], "has passed"),
        (
            &["--keying-think", "--warehouse-range", "1:2", "-t", "5"],
            "give --terminals 20",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["run", "tpcc", "--data-dir", "db"];
        args.extend_from_slice(extra);
        assert_usage_error(&oltplab(&dir, &args), expected);
    }
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "a refused run wrote something"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
