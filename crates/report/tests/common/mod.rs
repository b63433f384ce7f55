//! Small, deterministic results of every kind, shaped as the README's "Read the results" section describes
//! them. Device results are real ones (tests/fixtures); run, replay and study results are built here
//! from seeded latencies so their histograms are real HdrHistograms too; the kinds the report reads
//! typed carry every field their type requires.

#![allow(dead_code)]

use std::path::Path;

use oltplab_metrics::LatencyHistogram;
use serde_json::{json, Value};

pub fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// A seeded stream of latencies: a log-normal-ish body around `median_ns` with a slow tail.
pub fn latencies(seed: u64, n: usize, median_ns: f64) -> Vec<u64> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|_| {
            let body = median_ns * (1.2 * (next() - 0.5)).exp();
            let tail = if next() < 0.01 {
                median_ns * 20.0 * next()
            } else {
                0.0
            };
            (body + tail) as u64
        })
        .collect()
}

pub fn hist(values: &[u64]) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for v in values {
        h.record(*v);
    }
    h
}

fn env(host: &str) -> Value {
    json!({
        "hostname": host, "kernel": "6.1.0-test", "cpu": "Test CPU", "cores": 8,
        "memory_bytes": 17179869184u64, "target_fs": "ext4",
        "engine_version": "SQLite 3.46.0",
        "engine_settings": {"journal_mode": "wal", "synchronous": "full"}
    })
}

const TX: [(&str, usize, f64); 5] = [
    ("new_order", 450, 4.0e6),
    ("payment", 430, 2.0e6),
    ("order_status", 40, 1.0e6),
    ("delivery", 40, 9.0e6),
    ("stock_level", 40, 3.0e6),
];

/// A TPC-C run of `warehouses` warehouses that started `start_offset_s` after 10:00:00, with
/// transaction counts scaled by `scale` and latencies seeded by `seed`.
pub fn tpcc_run(seed: u64, scale: usize, warehouses: u64, start_offset_s: u64) -> Value {
    let elapsed_s = 60.0;
    let mut tx = serde_json::Map::new();
    let mut histograms = serde_json::Map::new();
    let mut total = 0usize;
    for (i, (name, count, median)) in TX.iter().enumerate() {
        let n = count * scale;
        total += n;
        let lats = latencies(seed * 10 + i as u64, n, *median);
        let h = hist(&lats);
        let errors = if *name == "payment" { scale as u64 } else { 0 };
        let rollbacks = if *name == "new_order" {
            (n / 100) as u64
        } else {
            0
        };
        tx.insert(
            name.to_string(),
            json!({"count": n, "errors": errors, "rollbacks": rollbacks, "lat_ns": h.stats()}),
        );
        histograms.insert(name.to_string(), json!(h.to_base64()));
    }
    let new_orders = (TX[0].1 * scale) as f64;
    let tpmc = new_orders / (elapsed_s / 60.0);
    let intervals: Vec<Value> = (1..=6)
        .map(|t| {
            json!({
                "t_s": t as f64 * 10.0,
                "tpmc": tpmc * (0.9 + 0.04 * t as f64),
                "tpm_total": total as f64 * (0.9 + 0.04 * t as f64),
                "iops": 800.0 * scale as f64 + 20.0 * t as f64,
                "cpu_utilisation": 0.4 + 0.02 * t as f64,
                "errors": if t == 3 { 1 } else { 0 },
                "retries": if t == 4 { 2 } else { 0 },
            })
        })
        .collect();
    json!({
        "schema": "oltplab.result/1",
        "kind": "run",
        "tool": {"name": "oltplab", "version": "0.1.0", "git": "test"},
        "started_at": format!("2026-11-22T10:00:{:02}Z", start_offset_s),
        "config": {"workload": "tpcc", "engine": "sqlite", "warehouses": warehouses, "terminals": 10 * warehouses,
                   "duration_s": elapsed_s, "warmup_s": 10.0, "keying_think": false, "buffer_pool_bytes": 536870912u64},
        "env": env(&format!("driver{seed}")),
        "summary": {
            "tpmc": tpmc,
            "tpm_total": total as f64 / (elapsed_s / 60.0),
            "efficiency": tpmc / (12.86 * warehouses as f64),
            "elapsed_s": elapsed_s,
            "tx": tx,
            "io": {"reads": 40000 * scale, "writes": 12000 * scale, "syncs": 900 * scale,
                   "read_bytes": 40000u64 * 16384 * scale as u64, "written_bytes": 12000u64 * 16384 * scale as u64,
                   "iops": 52000.0 * scale as f64 / elapsed_s},
            "cpu": {"db_user_s": 20.5, "db_sys_s": 4.25, "driver_user_s": 3.5, "driver_sys_s": 0.75, "utilisation": 0.45}
        },
        "intervals": intervals,
        "histograms": histograms,
        "warnings": [{"kind": "few_samples", "message": "only 40 Delivery transactions: its percentiles are rough; run longer"}]
    })
}

pub fn orders_run() -> Value {
    let sweep: Vec<Value> = [
        (100, 4100.0, 0.2),
        (500, 9800.0, 3.5),
        (1000, 11200.0, 21.0),
        (2000, 10400.0, 95.0),
    ]
    .iter()
    .map(|(c, tps, w)| {
        json!({"connections": c, "tps": tps, "elapsed_s": 10000.0 * *c as f64 / tps,
                   "waits_per_s": {"latch": w, "lock": w / 4.0}})
    })
    .collect();
    json!({
        "schema": "oltplab.result/1", "kind": "run",
        "tool": {"name": "oltplab", "version": "0.1.0", "git": "test"},
        "started_at": "2026-11-22T11:00:00Z",
        "config": {"workload": "orders", "engine": "postgres", "connections": [100, 500, 1000, 2000]},
        "env": env("db1"),
        "summary": {"tps": 11200.0, "elapsed_s": 892.9, "waits_per_s": {"latch": 21.0, "lock": 5.25},
                    "cpu": {"db_user_s": 800.0, "db_sys_s": 120.0, "utilisation": 0.93}, "sweep": sweep},
        "intervals": [], "histograms": {}, "warnings": []
    })
}

pub fn replay(seed: u64, iops: f64) -> Value {
    let reads = latencies(seed, 3000, 150_000.0);
    let writes = latencies(seed + 1, 1000, 400_000.0);
    let (hr, hw) = (hist(&reads), hist(&writes));
    json!({
        "schema": "oltplab.result/1", "kind": "replay",
        "tool": {"name": "oltplab", "version": "0.1.0", "git": "test"},
        "started_at": "2026-11-22T12:00:00Z",
        "config": {"trace": "host.trace", "target": "/mnt/test", "as_fast_as_possible": true},
        "env": env("vm"),
        "summary": {"iops": iops, "ops": 4000,
                    "ops_by_kind": {"read": 3000, "write": 1000},
                    "read": {"ios": 3000, "bytes": 3000 * 16384, "iops": iops * 0.75,
                             "bw_bytes": iops * 0.75 * 16384.0, "lat_ns": hr.stats()},
                    "write": {"ios": 1000, "bytes": 1000 * 16384, "iops": iops * 0.25,
                              "bw_bytes": iops * 0.25 * 16384.0, "lat_ns": hw.stats()},
                    "trace_ops": 4000, "trace_complete": true, "threads": 4, "lanes": 4,
                    "workers": 1, "engine": "io_uring", "direct": true, "direct_align_bytes": 4096,
                    "unaligned_ops": 0, "short_ios": 0, "unsupported_ops": 0,
                    "interrupted": false, "cpu_user_s": 0.25, "cpu_sys_s": 0.5},
        "intervals": [{"t_s": 1.0, "iops": iops * 0.9}, {"t_s": 2.0, "iops": iops * 1.05}, {"t_s": 3.0, "iops": iops}],
        "histograms": {"read": hr.to_base64(), "write": hw.to_base64()},
        "warnings": []
    })
}

/// S1 with its device inputs (docs/studies.md): the SATA SSD gives 43.2× the HDD's IOPS at 1/16.7 of its
/// latency, the PCIe flash 208.1× at 1/160.
pub fn study() -> Value {
    let hdd_iops = 190.0;
    let hdd_lat = 5.2e6;
    let dev = |name: &str,
               spec: &str,
               iops_x: f64,
               lat_div: f64,
               tpmc: f64,
               run: f64,
               replay: f64,
               why: &str| {
        let alpha = run / replay;
        let io = 0.9 * alpha;
        json!({"name": name, "spec": spec, "randread16k_iops": hdd_iops * iops_x,
               "randread16k_lat_ns": hdd_lat / lat_div, "tpmc": tpmc, "run_iops": run,
               "replay_iops": replay, "alpha": alpha, "explanation": why,
               "run_ios": (run * 10.0) as u64, "run_syncs": (run * 0.5) as u64,
               "trace": format!("{name}.trace"),
               "breakdown": {"io_wait_share": io, "cpu_share": 0.3 * (1.0 - io),
                             "other_share": 0.7 * (1.0 - io),
                             "limit": if alpha >= 0.8 { "device" } else { "locks" }}})
    };
    json!({
        "schema": "oltplab.result/1", "kind": "study",
        "tool": {"name": "oltplab", "version": "0.1.0", "git": "test"},
        "started_at": "2026-11-22T13:00:00Z",
        "config": {"scenario": "s1", "engine": "sqlite", "scale": "quick",
                   "devices": ["hdd-10k", "sata-ssd-2010", "pcie-flash-2012"]},
        "env": env("vm"),
        "summary": {"scenario": "s1", "engine": "sqlite", "baseline": "hdd-10k",
                    "buffer_pool_bytes": 4194304, "load_s": 12.5, "interrupted": false, "devices": [
            dev("host", "host", 310.0, 2.5, 2600.0, 1500.0, 2400.0,
                "this machine's storage is used for 62 % of what it can do"),
            dev("hdd-10k", "hdd:rpm=10000", 1.0, 1.0, 410.0, 180.0, 195.0,
                "the disk is busy nearly all the time (α 0.92): TPC-C waits on the actuator"),
            dev("sata-ssd-2010", "ssd:sata-2010", 43.2, 16.7, 3900.0, 2100.0, 7400.0,
                "about a quarter of the SSD is used (α 0.28): the database's CPU and locks limit it"),
            dev("pcie-flash-2012", "ssd:pcie-2012", 208.1, 160.0, 5200.0, 2800.0, 33000.0,
                "the flash is mostly idle (α 0.08): faster storage no longer raises tpmC")
        ]},
        "intervals": [], "histograms": {}, "warnings": []
    })
}
