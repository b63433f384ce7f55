//! Reports read S1 studies and every result's envelope through `oltplab-schema`'s typed documents:
//! a real study's figures reach the report as written, and a result whose fields do not read is
//! refused with a sentence naming the field.

use std::path::Path;

use oltplab_report::ReportError;
use serde_json::Value;

/// A result of this version: the README's quick study on SQLite (`study --scale quick`).
fn quick_study() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/tests/fixtures/study-s1-quick.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The CSV's raw value of `device`'s `column` in the devices table.
fn csv_value(csv: &str, device: &str, column: &str) -> Option<String> {
    let tail = format!(",study,devices,{device},{column},");
    csv.lines()
        .find_map(|l| l.split_once(&tail).map(|(_, v)| v.to_string()))
}

#[test]
fn a_real_studys_figures_reach_the_report_as_written() {
    let doc = quick_study();
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let devices = doc["summary"]["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 4);
    for d in devices {
        let name = d["name"].as_str().unwrap();
        for column in [
            "randread16k_iops",
            "tpmc",
            "run_iops",
            "replay_iops",
            "alpha",
        ] {
            let written = d[column].as_f64().unwrap();
            let shown: f64 = csv_value(&csv, name, column)
                .unwrap_or_else(|| panic!("{name} {column} not in the report"))
                .parse()
                .unwrap();
            assert_eq!(shown, written, "{name} {column}");
        }
        assert_eq!(
            csv_value(&csv, name, "limit").as_deref(),
            d["breakdown"]["limit"].as_str(),
            "{name}"
        );
        assert_eq!(
            csv_value(&csv, name, "bound_order"),
            Some(format!("{} replay", d["bound_order"].as_str().unwrap())),
        );
    }
}

#[test]
fn a_study_with_a_renamed_field_is_refused_naming_it() {
    let mut doc = quick_study();
    let dev = doc["summary"]["devices"][2].as_object_mut().unwrap();
    let v = dev.remove("run_iops").unwrap();
    dev.insert("run_iops_total".into(), v);
    let err = oltplab_report::markdown(std::slice::from_ref(&doc)).unwrap_err();
    assert!(
        matches!(err, ReportError::Invalid { index: 0, .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("has no readable field `summary.devices[2].run_iops` (missing)"),
        "{text}"
    );
    // A limit this version does not know: another tool's, or a newer version's.
    let mut doc = quick_study();
    doc["summary"]["devices"][0]["breakdown"]["limit"] = "telepathy".into();
    let text = oltplab_report::html(&[doc]).unwrap_err().to_string();
    assert!(
        text.contains("`summary.devices[0].breakdown.limit`"),
        "{text}"
    );
    assert!(text.contains("unknown variant `telepathy`"), "{text}");
}

#[test]
fn an_envelope_with_a_field_of_another_type_is_refused_naming_it() {
    let mut doc = quick_study();
    doc["env"]["cores"] = "two".into();
    let text = oltplab_report::csv(&[doc]).unwrap_err().to_string();
    assert!(text.contains("`env.cores`"), "{text}");
    let mut doc = quick_study();
    doc["warnings"] = serde_json::json!([{"kind": "cosmic_rays", "message": "m"}]);
    let text = oltplab_report::csv(&[doc]).unwrap_err().to_string();
    assert!(text.contains("`warnings[0].kind`"), "{text}");
}

/// A result of this version: `oltplab crash tpcc --cuts 2 --duration 3s` on SQLite.
fn crash() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schema/tests/fixtures/crash-tpcc-sqlite.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_real_crash_results_rows_reach_the_report_as_written() {
    let doc = crash();
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let row = &doc["summary"]["rows"][0];
    let key = format!("{} · synchronous=FULL", row["spec"].as_str().unwrap());
    let columns = [
        ("rows", "cuts"),
        ("rows", "states"),
        ("rows", "recoveries_ok"),
        ("rows", "acknowledged_commits"),
        ("rows", "commits_lost"),
        ("writes", "pages_repaired"),
        ("writes", "pending_writes_mean"),
    ];
    for (table, column) in columns {
        let tail = format!(",crash,{table},{key},{column},");
        let shown = csv
            .lines()
            .find_map(|l| l.split_once(&tail).map(|(_, v)| v.to_string()))
            .unwrap_or_else(|| panic!("{column} not in {csv}"));
        assert_eq!(
            shown.parse::<f64>().unwrap(),
            row[column].as_f64().unwrap(),
            "{column}"
        );
    }
    let mut doc = crash();
    doc["summary"]["states"][1]["recovered"] = "yes".into();
    let text = oltplab_report::markdown(&[doc]).unwrap_err().to_string();
    assert!(text.contains("`summary.states[1].recovered`"), "{text}");
}

/// A result of this version: the quick study's `device` run on the emulated hdd-10k.
fn device() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/tests/fixtures/device-hdd-10k.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_real_device_results_points_reach_the_report_as_written() {
    let doc = device();
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let profile = &doc["summary"]["profiles"][0];
    let name = profile["name"].as_str().unwrap();
    let points = profile["sweep"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        let key = format!("{name} QD{}", p["qd"]);
        for (column, written) in [
            ("iops", &p["iops"]),
            ("bw_bytes", &p["bw_bytes"]),
            ("read_iops", &p["read"]["iops"]),
            ("lat_ns_p99", &p["lat_ns"]["p99"]),
        ] {
            let tail = format!(",device,points,{key},{column},");
            let shown = csv
                .lines()
                .find_map(|l| l.split_once(&tail).map(|(_, v)| v.to_string()))
                .unwrap_or_else(|| panic!("{key} {column} not in {csv}"));
            assert_eq!(
                shown.parse::<f64>().unwrap(),
                written.as_f64().unwrap(),
                "{key} {column}"
            );
        }
    }
    let mut doc = device();
    doc["summary"]["profiles"][0]["sweep"][1]["read"]["ios"] = (-1).into();
    let text = oltplab_report::html(&[doc]).unwrap_err().to_string();
    assert!(
        text.contains("`summary.profiles[0].sweep[1].read.ios` (invalid value: integer `-1`"),
        "{text}"
    );
    let mut doc = device();
    doc["summary"]["read"]
        .as_object_mut()
        .unwrap()
        .remove("ios");
    let text = oltplab_report::html(&[doc]).unwrap_err().to_string();
    assert!(text.contains("`summary.read.ios` (missing)"), "{text}");
}

/// A real S5 result (`study --scenario in-memory`, the report's fixture): its sweep points reach the
/// report as written, and a point's mistyped field is refused naming it.
#[test]
fn an_in_memory_studys_points_reach_the_report_as_written() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/study-in-memory.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let runs = doc["summary"]["runs"].as_array().unwrap();
    let mut checked = 0;
    for r in runs {
        let name = format!(
            "{} {}",
            r["tables"].as_str().unwrap(),
            r["mode"].as_str().unwrap()
        );
        for p in r["points"].as_array().unwrap() {
            let shown: Vec<String> = csv
                .lines()
                .filter(|l| l.contains(&format!(",study,sweeps,{name},")))
                .filter_map(|l| l.split_once(",tps,").map(|(_, v)| v.to_string()))
                .collect();
            let tps = p["tps"].as_f64().unwrap();
            assert!(
                shown.iter().any(|v| v.parse::<f64>().unwrap() == tps),
                "{name}: {tps} not in {shown:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked} points");
    let mut bad = doc.clone();
    bad["summary"]["runs"][1]["points"][0]["connections"] = "many".into();
    let text = oltplab_report::csv(&[bad]).unwrap_err().to_string();
    assert!(
        text.contains("`summary.runs[1].points[0].connections`"),
        "{text}"
    );
}

/// A fixture of the report's (`tests/fixtures`) or, with `schema/`, of the schema crate's.
fn real(name: &str) -> Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = match name.strip_prefix("schema/") {
        Some(n) => dir.join("../schema/tests/fixtures").join(n),
        None => dir.join("tests/fixtures").join(name),
    };
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The CSV's raw value at (table, row, column), as a number.
fn csv_number(csv: &str, kind: &str, table: &str, row: &str, column: &str) -> f64 {
    let tail = format!(",{kind},{table},{row},{column},");
    csv.lines()
        .find_map(|l| l.split_once(&tail).map(|(_, v)| v.to_string()))
        .unwrap_or_else(|| panic!("{table} {row} {column} not in {csv}"))
        .parse()
        .unwrap()
}

/// `oltplab`'s refusal of `doc`: the error of rendering it, which names `path`.
fn refused(doc: Value, path: &str) {
    let err = oltplab_report::markdown(&[doc]).unwrap_err();
    assert!(
        matches!(err, ReportError::Invalid { index: 0, .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains(&format!("`{path}`")), "{path}: {text}");
    assert_eq!(text.lines().count(), 1, "one sentence: {text}");
}

/// A real replay (the quick study's trace of hdd-10k replayed on its model): its figures reach the
/// report as written, and a missing or mistyped one is refused naming it.
#[test]
fn a_real_replays_figures_reach_the_report_as_written() {
    let doc = real("schema/replay-hdd-10k.json");
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let s = &doc["summary"];
    for (table, row, column, written) in [
        ("summary", "iops", "value", &s["iops"]),
        ("summary", "ops", "value", &s["ops"]),
        ("summary", "elapsed_s", "value", &s["elapsed_s"]),
        ("summary", "speedup", "value", &s["speedup"]),
        ("latency", "read", "iops", &s["read"]["iops"]),
        (
            "latency",
            "write",
            "lat_ns_p99",
            &s["write"]["lat_ns"]["p99"],
        ),
        (
            "latency",
            "sync",
            "lat_ns_mean",
            &s["sync"]["lat_ns"]["mean"],
        ),
    ] {
        assert_eq!(
            csv_number(&csv, "replay", table, row, column),
            written.as_f64().unwrap(),
            "{table} {row} {column}"
        );
    }
    let mut bad = doc.clone();
    bad["summary"]["write"]
        .as_object_mut()
        .unwrap()
        .remove("iops");
    refused(bad, "summary.write.iops");
    let mut bad = doc;
    bad["summary"]["read"]["lat_ns"]["p99"] = "slow".into();
    refused(bad, "summary.read.lat_ns.p99");
}

/// A real placement study (S3, PostgreSQL): each configuration's figures reach the report as
/// written; a configuration without its throughput, or a study whose terminals are text, is
/// refused naming the field.
#[test]
fn a_real_storage_studys_figures_reach_the_report_as_written() {
    let doc = real("study-placement.json");
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let configs = doc["summary"]["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 4);
    for c in configs {
        let name = c["name"].as_str().unwrap();
        for (column, written) in [
            ("throughput", &c["throughput"]),
            ("throughput_vs_first", &c["throughput_vs_first"]),
            ("io_iops", &c["io_iops"]),
            ("lat_ns_p90", &c["lat_ns"]["p90"]),
            ("cpu_utilisation", &c["cpu_utilisation"]),
        ] {
            assert_eq!(
                csv_number(&csv, "study", "configs", name, column),
                written.as_f64().unwrap(),
                "{name} {column}"
            );
        }
    }
    let mut bad = doc.clone();
    bad["summary"]["configs"][2]
        .as_object_mut()
        .unwrap()
        .remove("throughput");
    refused(bad, "summary.configs[2].throughput");
    let mut bad = doc;
    bad["summary"]["terminals"] = "four".into();
    refused(bad, "summary.terminals");
}

/// The real cluster study: each run's and each node's figures reach the report as written; a row
/// without its tpmC, or a node whose flushes are text, is refused naming the field.
#[test]
fn a_real_cluster_studys_figures_reach_the_report_as_written() {
    let doc = real("study-cluster.json");
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let rows = doc["summary"]["rows"].as_array().unwrap();
    let mut nodes = 0;
    for r in rows {
        let device = r["device"].as_str().unwrap();
        // The table's rows are named by device; the system is a column of its own.
        let shown: Vec<f64> = csv
            .lines()
            .filter_map(|l| l.split_once(&format!(",study,runs,{device},tpmc,")))
            .map(|(_, v)| v.parse().unwrap())
            .collect();
        assert!(
            shown.contains(&r["tpmc"].as_f64().unwrap()),
            "{device}: {shown:?}"
        );
        for n in r["io_by_node"].as_array().into_iter().flatten() {
            let iops = n["iops"].as_f64().unwrap();
            assert!(
                csv.lines()
                    .filter_map(|l| l.split_once(&format!(",study,nodes,{device},iops,")))
                    .any(|(_, v)| v.parse::<f64>().unwrap() == iops),
                "{device} node {}: {iops}",
                n["node"]
            );
            nodes += 1;
        }
    }
    assert!(nodes >= 3, "{nodes} nodes");
    let mut bad = doc.clone();
    bad["summary"]["rows"][1]
        .as_object_mut()
        .unwrap()
        .remove("tpmc");
    refused(bad, "summary.rows[1].tpmc");
    let mut bad = doc;
    bad["summary"]["rows"][1]["io_by_node"][0]["syncs"] = "many".into();
    refused(bad, "summary.rows[1].io_by_node[0].syncs");
}

/// A real run (TPC-C on SQLite, emulated hdd-10k, traced): its figures reach the report as
/// written; a figure of another type, or a transaction type without its count, is refused naming
/// the field.
#[test]
fn a_real_runs_figures_reach_the_report_as_written() {
    let doc = real("schema/run-tpcc-sqlite-hdd-10k.json");
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let s = &doc["summary"];
    for (row, written) in [
        ("tpmc", &s["tpmc"]),
        ("tpm_total", &s["tpm_total"]),
        ("io_iops", &s["io"]["iops"]),
        ("io_written_bytes", &s["io"]["written_bytes"]),
        ("cpu_utilisation", &s["cpu"]["utilisation"]),
    ] {
        let shown = csv_number(&csv, "run", "summary", row, "value");
        assert_eq!(shown, written.as_f64().unwrap(), "{row}");
    }
    for (tx, v) in s["tx"].as_object().unwrap() {
        assert_eq!(
            csv_number(&csv, "run", "tx", tx, "count"),
            v["count"].as_f64().unwrap(),
            "{tx}"
        );
        assert_eq!(
            csv_number(&csv, "run", "tx", tx, "lat_ns_p99"),
            v["lat_ns"]["p99"].as_f64().unwrap(),
            "{tx}"
        );
    }
    let mut bad = doc.clone();
    bad["summary"]["tpmc"] = "fast".into();
    refused(bad, "summary.tpmc");
    let mut bad = doc.clone();
    bad["summary"]["tx"]["new_order"]
        .as_object_mut()
        .unwrap()
        .remove("count");
    refused(bad, "summary.tx.new_order.count");
    let mut bad = doc;
    bad["summary"]["io"]["by_table"][0]
        .as_object_mut()
        .unwrap()
        .remove("name");
    refused(bad, "summary.io.by_table[0].name");
}

/// Order entry's sweep, a Galera run's nodes and a users ramp are read typed too: a point, a node
/// or a step whose field does not read is refused naming it.
#[test]
fn a_run_whose_sweep_node_or_step_does_not_read_is_refused_naming_it() {
    let mut bad = real("run-orders-postgres.json");
    bad["summary"]["sweep"][1]["tps"] = "many".into();
    refused(bad, "summary.sweep[1].tps");
    let mut bad = real("run-tpcc-galera.json");
    bad["summary"]["io"]["by_node"][0]
        .as_object_mut()
        .unwrap()
        .remove("node");
    refused(bad, "summary.io.by_node[0].node");
    let mut bad = real("run-tpcc-ramp.json");
    bad["summary"]["ramp"][1]
        .as_object_mut()
        .unwrap()
        .remove("throughput");
    refused(bad, "summary.ramp[1].throughput");
}

/// A real study file's result (two SQLite devices at one and two terminals): each cell's figures
/// reach the report as written; a cell whose tpmC is text, or without its id, is refused naming
/// the field.
#[test]
fn a_real_study_files_cells_reach_the_report_as_written() {
    let doc = real("study-file.json");
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let cells = doc["summary"]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    for c in cells {
        let id = c["id"].as_str().unwrap();
        for column in [
            "randread16k_iops",
            "tpmc",
            "run_iops",
            "replay_iops",
            "alpha",
        ] {
            assert_eq!(
                csv_number(&csv, "study", "cells", id, column),
                c["figures"][column].as_f64().unwrap(),
                "{id} {column}"
            );
        }
    }
    let mut bad = doc.clone();
    bad["summary"]["cells"][1]["figures"]["tpmc"] = "fast".into();
    refused(bad, "summary.cells[1].figures.tpmc");
    let mut bad = doc;
    bad["summary"]["cells"][2]
        .as_object_mut()
        .unwrap()
        .remove("id");
    refused(bad, "summary.cells[2].id");
}

/// A real S4 study (`study --scenario profiles --scale quick`): each profile's IOPS at every depth,
/// the sets' ratios and the random and drive figures reach the report as written; a set without
/// its geometric mean, a profile whose depths are text, or an S4 result of an older version
/// (before its sets said whether Ctrl-C cut them short) is refused naming the field.
#[test]
fn a_real_profiles_studys_figures_reach_the_report_as_written() {
    let doc = real("study-profiles.json");
    let csv = oltplab_report::csv(std::slice::from_ref(&doc)).unwrap();
    let sets = doc["summary"]["sets"].as_array().unwrap();
    assert_eq!(sets.len(), 2);
    for (i, set) in sets.iter().enumerate() {
        let table = format!("set{}", i + 1);
        for p in set["profiles"].as_array().unwrap() {
            let name = p["name"].as_str().unwrap();
            let qds = p["qd"].as_array().unwrap();
            assert_eq!(qds.len(), 9, "{name}");
            for (qd, iops) in qds.iter().zip(p["iops"].as_array().unwrap()) {
                assert_eq!(
                    csv_number(&csv, "study", &table, name, &format!("iops_qd{qd}")),
                    iops.as_f64().unwrap(),
                    "{table} {name} QD {qd}"
                );
            }
            assert_eq!(
                csv_number(&csv, "study", &table, name, "geomean_iops"),
                p["geomean_iops"].as_f64().unwrap(),
                "{table} {name}"
            );
        }
        assert_eq!(
            csv_number(&csv, "study", &table, "geometric mean", "geomean_iops"),
            set["geomean_iops"].as_f64().unwrap(),
            "{table}"
        );
    }
    let ratio = &sets[1]["ratio"];
    let column = format!("{}_ratio", sets[1]["name"].as_str().unwrap());
    assert_eq!(
        csv_number(&csv, "study", "ratio", "all profiles", &column),
        ratio["geomean_iops_ratio"].as_f64().unwrap()
    );
    for r in ratio["profiles"].as_array().unwrap() {
        let name = r["name"].as_str().unwrap();
        assert_eq!(
            csv_number(&csv, "study", "ratio", name, &column),
            r["geomean_iops_ratio"].as_f64().unwrap(),
            "{name}"
        );
    }
    // The random and drive tables' rows are named by set and drive (specs, quoted: they hold
    // commas), once per block size or depth.
    for (table, rows, key, column) in [
        ("random_qd4", "random_qd4", "set", "read_iops"),
        ("random_qd4", "random_qd4", "set", "write_lat_ns_mean"),
        ("drive_seq16k", "drive_seq16k", "device", "write_bw_bytes"),
    ] {
        let written = doc["summary"][rows].as_array().unwrap();
        assert!(!written.is_empty(), "{rows}");
        for r in written {
            let row = r[key].as_str().unwrap();
            let shown: Vec<f64> = csv
                .lines()
                .filter_map(|l| l.split_once(&format!(",study,{table},\"{row}\",{column},")))
                .map(|(_, v)| v.parse().unwrap())
                .collect();
            let value = r[column].as_f64().unwrap();
            assert!(
                shown.contains(&value),
                "{table} {row} {column}: {value} not in {shown:?}"
            );
        }
    }
    let mut bad = doc.clone();
    bad["summary"]["sets"][1]
        .as_object_mut()
        .unwrap()
        .remove("geomean_iops");
    refused(bad, "summary.sets[1].geomean_iops");
    let mut bad = doc.clone();
    bad["summary"]["sets"][0]["profiles"][3]["qd"][2] = "four".into();
    refused(bad, "summary.sets[0].profiles[3].qd[2]");
    let mut bad = doc;
    bad["summary"]["random_qd4"][1]
        .as_object_mut()
        .unwrap()
        .remove("write_iops");
    refused(bad, "summary.random_qd4[1].write_iops");
    refused(
        real("study-profiles-2026-11-25.json"),
        "summary.sets[0].complete",
    );
}
