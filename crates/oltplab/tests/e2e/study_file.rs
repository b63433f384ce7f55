//! `oltplab study --file`: every shipped study file parses and dry-runs; bad files are refused
//! before anything runs with one sentence naming the key and the line; and a two-device ×
//! two-terminal-count SQLite study at the hidden test scale, stopped by Ctrl-C in its second cell
//! and given a new device, resumes running only the stopped and the new cells, then holds every
//! cell's figures and renders them in its report.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use common::{assert_ok, assert_one_line_usage_error, json, oltplab, scratch, stderr};
use serde_json::Value;

fn studies_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies")
}

/// Nothing but the test's own files: a refused or dry study makes no directory.
fn assert_nothing_made(dir: &Path, keep: &[&str]) {
    let made: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect();
    assert!(made.is_empty(), "made {made:?}");
}

#[test]
fn shipped_study_files_parse_and_dry_run() {
    let dir = scratch("shipped");
    let files: Vec<PathBuf> = std::fs::read_dir(studies_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    assert!(!files.is_empty(), "no study files in {:?}", studies_dir());
    for f in &files {
        let out = oltplab(&dir, &["study", "--file", f.to_str().unwrap(), "--dry-run"]);
        assert_ok(&out);
        let listing = String::from_utf8_lossy(&out.stdout);
        // S5's fixed work has no estimate from the scale; it says so on the estimate's line.
        assert!(
            (listing.contains("estimate: ~") || listing.contains("estimate: none"))
                && listing.contains("nothing was run"),
            "{}: {listing}",
            f.display()
        );
    }
    // S1's file lists S1's four devices in S1's order, each with its estimate.
    let out = oltplab(
        &dir,
        &[
            "study",
            "--file",
            studies_dir().join("s1.toml").to_str().unwrap(),
            "--dry-run",
        ],
    );
    let listing = String::from_utf8_lossy(&out.stdout);
    let ids: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.trim_start().split_once(". ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert_eq!(
        ids,
        [
            "sqlite_host_t4",
            "sqlite_hdd-10k_t4",
            "sqlite_sata-ssd-2010_t4",
            "sqlite_pcie-flash-2012_t4"
        ],
        "{listing}"
    );
    assert!(listing.contains("baseline hdd-10k"), "{listing}");
    assert_nothing_made(&dir, &[]);

    // Each scenario a file expresses prints that file, whose cells are the shipped file's.
    for (scenario, file, last) in [
        ("s1", "s1.toml", "4. sqlite_"),
        ("cache-tiers", "s2.toml", "4. sqlite_"),
        ("placement", "s3.toml", "4. sqlite_"),
        ("profiles", "s4.toml", "2. wbcache_raid5_4_sas-ssd-2012"),
        ("in-memory", "s5.toml", "4. memory-insert"),
        ("cluster", "cluster.toml", "6. galera3_pcie-flash-2012"),
    ] {
        let out = oltplab(
            &dir,
            &[
                "study",
                "--scenario",
                scenario,
                "--scale",
                "quick",
                "--dry-run",
            ],
        );
        assert_ok(&out);
        std::fs::write(dir.join("printed.toml"), &out.stdout).unwrap();
        let cells = |path: &str| {
            let out = oltplab(&dir, &["study", "--file", path, "--dry-run"]);
            assert_ok(&out);
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .skip(1)
                .collect::<Vec<_>>()
                .join("\n")
        };
        let shipped = cells(studies_dir().join(file).to_str().unwrap());
        assert_eq!(cells("printed.toml"), shipped, "{scenario}");
        assert!(shipped.contains(last), "{scenario}: {shipped}");
    }
    let out = oltplab(&dir, &["study", "--scenario", "power-cut", "--dry-run"]);
    assert_one_line_usage_error(&out, "power-cut scenario has no study file");
    // A scale the scenario does not run is refused as its file would refuse it.
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "profiles",
            "--scale",
            "s1",
            "--dry-run",
        ],
    );
    assert_one_line_usage_error(&out, "scale = \"s1\" is not known");

    assert_nothing_made(&dir, &["printed.toml"]);
    // S4's, S5's and the cluster study's files resume too: with nothing finished, every set,
    // sweep and run is to run.
    for (file, runs) in [("s4.toml", 2), ("s5.toml", 4), ("cluster.toml", 6)] {
        let prev = dir.join("prev");
        std::fs::create_dir(&prev).unwrap();
        std::fs::copy(studies_dir().join(file), prev.join("study.toml")).unwrap();
        let out = oltplab(&dir, &["study", "--resume", "prev", "--dry-run"]);
        assert_ok(&out);
        let plan = String::from_utf8_lossy(&out.stdout);
        let listed = plan.lines().filter(|l| l.contains(". ")).count();
        assert_eq!(listed, runs, "{file}: {plan}");
        assert!(!plan.contains("finished earlier"), "{file}: {plan}");
        std::fs::remove_dir_all(&prev).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_study_files_fail_before_anything_runs_naming_key_and_line() {
    let dir = scratch("bad");
    let cases = [
        // An unknown key, on line 3.
        (
            "scale = \"test\"\ndevices = [\"hdd-10k\"]\nterminal = [2]\n",
            ["line 3", "terminal"],
        ),
        // An unknown device, on the list's second line.
        (
            "scale = \"test\"\ndevices = [\"hdd-10k\",\n  \"floppy-1995\"]\n",
            ["line 3", "floppy-1995"],
        ),
        // A bad value: terminals must be whole numbers.
        (
            "devices = [\"hdd-10k\"]\n\nterminals = [\"many\"]\n",
            ["line 3", "terminals"],
        ),
        // A setting SQLite cannot take.
        (
            "devices = [\"hdd-10k\"]\n[[engines]]\nengine = \"sqlite\"\nserver_settings = [\"synchronous_commit=off\"]\n",
            ["line 4", "server_settings"],
        ),
        // An unknown engine.
        (
            "devices = [\"hdd-10k\"]\n[[engines]]\nengine = \"oracle\"\n",
            ["line 3", "engine"],
        ),
    ];
    for (text, expected) in cases {
        std::fs::write(dir.join("bad.toml"), text).unwrap();
        let out = oltplab(&dir, &["study", "--file", "bad.toml"]);
        for e in expected {
            assert_one_line_usage_error(&out, e);
        }
        assert!(stderr(&out).contains("bad.toml"), "{}", stderr(&out));
        assert_nothing_made(&dir, &["bad.toml"]);
    }
    // A layout with a role no database has, on the list's third line: the key and the line.
    std::fs::write(
        dir.join("bad.toml"),
        "scale = \"test\"\nlayouts = [\n  \"data=hdd-10k,log=nvme-gen4\",\n  \"data=hdd-10k,wal=nvme-gen4\",\n]\n",
    )
    .unwrap();
    let out = oltplab(&dir, &["study", "--file", "bad.toml"]);
    for e in ["bad.toml line 4", "layouts", "wal"] {
        assert_one_line_usage_error(&out, e);
    }
    assert_nothing_made(&dir, &["bad.toml"]);
    let out = oltplab(&dir, &["study", "--file", "missing.toml"]);
    assert_one_line_usage_error(&out, "missing.toml");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A server setting the installed server does not know is refused before anything starts, from
/// the server's own list of its settings.
#[test]
fn a_misspelt_server_setting_fails_before_anything_runs() {
    if !common::server_installed("initdb") {
        return;
    }
    let dir = scratch("setting");
    std::fs::write(
        dir.join("pg.toml"),
        "scale = \"test\"\ndevices = [\"hdd-10k\"]\n[[engines]]\nengine = \"postgres\"\nserver_settings = [\n  \"synchronous_commit=off\",\n  \"synchronous_comit=off\",\n]\n",
    )
    .unwrap();
    let out = oltplab(&dir, &["study", "--file", "pg.toml"]);
    assert_one_line_usage_error(&out, "line 7");
    assert_one_line_usage_error(&out, "synchronous_comit");
    assert_nothing_made(&dir, &["pg.toml"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn interrupted_study_resumes_only_the_stopped_and_new_cells_and_reports_every_cell() {
    let dir = scratch("resume");
    let res = dir.join("res");
    std::fs::write(
        dir.join("mine.toml"),
        "scale = \"test\"\ndevices = [\"sata-ssd-2010\"]\nterminals = [1, 2]\n",
    )
    .unwrap();

    // 1. Ctrl-C in the second cell, once the first is saved.
    let out = common::interrupt_after_first(
        &dir,
        &["study", "--file", "mine.toml", "--out", "res"],
        || !common::cell_files(&res).is_empty(),
        "cell",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("oltplab study --resume"), "{err}");
    let first = common::cell_files(&res);
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(
        first[0].starts_with("sqlite_sata-ssd-2010_t1-"),
        "{first:?}"
    );
    let stopped = json(&res.join("results.json"));
    assert_eq!(stopped["summary"]["interrupted"], true);
    assert_eq!(stopped["summary"]["cells"].as_array().unwrap().len(), 1);
    assert!(stopped["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "interrupted"));
    let kept_cell = json(&res.join("cells").join(&first[0]));

    // 2. A second device in the file, and resume: the stopped cell and the new device's run.
    std::fs::write(
        dir.join("mine.toml"),
        "scale = \"test\"\ndevices = [\"sata-ssd-2010\", \"pcie-flash-2012\"]\nterminals = [1, 2]\n",
    )
    .unwrap();
    let dry = oltplab(
        &dir,
        &[
            "study",
            "--file",
            "mine.toml",
            "--resume",
            "res",
            "--dry-run",
        ],
    );
    assert_ok(&dry);
    let listing = String::from_utf8_lossy(&dry.stdout);
    assert_eq!(listing.matches("finished, kept").count(), 1, "{listing}");
    assert!(listing.contains("for the 3 cells to run"), "{listing}");

    let out = oltplab(&dir, &["study", "--file", "mine.toml", "--resume", "res"]);
    assert_ok(&out);
    let (ran, kept) = common::cells_in(&stderr(&out));
    assert_eq!(kept, ["sqlite_sata-ssd-2010_t1"]);
    assert_eq!(
        ran,
        [
            "sqlite_pcie-flash-2012_t1",
            "sqlite_sata-ssd-2010_t2",
            "sqlite_pcie-flash-2012_t2"
        ]
    );
    // The kept cell's file is the one the first run wrote.
    assert_eq!(json(&res.join("cells").join(&first[0])), kept_cell);
    assert_eq!(common::cell_files(&res).len(), 4);

    // 3. The combined result: every cell in the file's order, S1's figures under S1's names, the
    //    ratios against the first emulated device's cell of the same terminals.
    let doc = json(&res.join("results.json"));
    assert_eq!(doc["kind"], "study");
    assert_eq!(doc["summary"]["scenario"], "file");
    assert_eq!(doc["summary"]["interrupted"], false);
    assert_eq!(doc["summary"]["baseline"], "sata-ssd-2010");
    let cells = doc["summary"]["cells"].as_array().unwrap();
    let ids: Vec<&str> = cells.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "sqlite_sata-ssd-2010_t1",
            "sqlite_pcie-flash-2012_t1",
            "sqlite_sata-ssd-2010_t2",
            "sqlite_pcie-flash-2012_t2"
        ]
    );
    let fig = |c: &Value, f: &str| c["figures"][f].as_f64().unwrap_or(0.0);
    for c in cells {
        for f in [
            "randread16k_iops",
            "randread16k_lat_ns",
            "tpmc",
            "run_iops",
            "replay_iops",
            "alpha",
        ] {
            assert!(fig(c, f) > 0.0, "{}.{f} = {}", c["id"], fig(c, f));
        }
        assert!(
            fig(c, "alpha") <= 1.05,
            "{}: α {}",
            c["id"],
            fig(c, "alpha")
        );
        assert_eq!(c["engine"], "sqlite");
        assert!(res
            .join(format!("{}.trace", c["id"].as_str().unwrap()))
            .is_file());
    }
    for (i, terminals) in [(0, 1), (1, 1), (2, 2), (3, 2)] {
        assert_eq!(cells[i]["terminals"], terminals);
        let base = &cells[i / 2 * 2];
        for f in ["tpmc", "alpha", "randread16k_iops"] {
            let got = cells[i]["figures"]["vs_baseline"][f].as_f64().unwrap();
            let want = fig(&cells[i], f) / fig(base, f);
            assert!(
                (got - want).abs() < 1e-9 * want.max(1.0),
                "{i}.{f}: {got} vs {want}"
            );
        }
    }
    // The flash does more random reads than the SATA SSD, measured once per device.
    assert!(fig(&cells[1], "randread16k_iops") > fig(&cells[0], "randread16k_iops"));
    assert_eq!(
        fig(&cells[0], "randread16k_iops"),
        fig(&cells[2], "randread16k_iops")
    );

    // 4. The report: a row per cell with its axes and ratios.
    let report = std::fs::read_to_string(res.join("report.html")).unwrap();
    assert!(report.contains("Cells (× against the sata-ssd-2010 cell"));
    for id in ids {
        assert!(report.contains(id), "{id} missing from the report");
    }
    // Its charts run along device, a series per terminal count (`report --by`'s default).
    for chart in [
        ">tpmC by device</title>",
        ">Storage utilisation α by device</title>",
    ] {
        assert!(report.contains(chart), "{chart} missing from the report");
    }
    assert!(
        report.contains(">terminals 2</text>"),
        "no series per terminal count"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two layouts of one disk and one flash card, end to end on SQLite: each cell runs on its layout
/// (the log, or the stock table, on the flash), its device figures are the data disk's (measured
/// once), its ratios are against the baseline layout, and the report charts along `--by layout`,
/// the named layout labelled by its name.
#[test]
fn a_two_layout_sqlite_study_runs_each_cell_on_its_layout_and_reports_by_layout() {
    let dir = scratch("layouts");
    let res = dir.join("res");
    std::fs::write(
        dir.join("two.toml"),
        "scale = \"test\"\nlayouts = [{ name = \"log-on-flash\", spec = \"data=hdd-15k,log=pcie-flash-2012\" }, \"data=hdd-15k,table:stock=pcie-flash-2012\"]\n",
    )
    .unwrap();
    let out = oltplab(&dir, &["study", "--file", "two.toml", "--out", "res"]);
    assert_ok(&out);
    let doc = json(&res.join("results.json"));
    assert_eq!(doc["summary"]["baseline"], "log-on-flash");
    let cells = doc["summary"]["cells"].as_array().unwrap();
    let ids: Vec<&str> = cells.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "sqlite_log-on-flash_t2",
            "sqlite_data_hdd-15k_table_stock_pcie-flash-2012_t2"
        ]
    );
    // The name is the cell's label; its spec stays the device.
    assert_eq!(cells[0]["label"], "log-on-flash");
    assert_eq!(cells[0]["device"], "data=hdd-15k,log=pcie-flash-2012");
    assert!(cells[1].get("label").is_none(), "{}", cells[1]);
    let fig = |c: &Value, f: &str| c["figures"][f].as_f64().unwrap_or(0.0);
    for c in cells {
        assert_eq!(c["randread16k_device"], "hdd-15k");
        for f in [
            "randread16k_iops",
            "tpmc",
            "run_iops",
            "replay_iops",
            "alpha",
        ] {
            assert!(fig(c, f) > 0.0, "{}.{f} = {}", c["id"], fig(c, f));
        }
        // The run was on the layout: its result names each device by its roles.
        let run = json(
            &res.join(format!("run-{}", c["id"].as_str().unwrap()))
                .join("result.json"),
        );
        let devices: Vec<&str> = run["summary"]["io"]["by_device"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(devices.len(), 2, "{devices:?}");
        assert!(devices[0].starts_with("data="), "{devices:?}");
        // The cell keeps the run's S2/S3 figures: the same devices, their busy shares.
        let kept: Vec<&str> = c["run"]["devices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(kept, devices);
        assert_eq!(c["run"]["throughput"], run["summary"]["tpmc"]);
    }
    // The data disk is measured once, for the first cell.
    assert_eq!(
        fig(&cells[0], "randread16k_iops"),
        fig(&cells[1], "randread16k_iops")
    );
    assert!(res.join(format!("device-{}", ids[0])).is_dir());
    assert!(!res.join(format!("device-{}", ids[1])).exists());
    for f in ["tpmc", "alpha"] {
        let got = cells[1]["figures"]["vs_baseline"][f].as_f64().unwrap();
        let want = fig(&cells[1], f) / fig(&cells[0], f);
        assert!(
            (got - want).abs() < 1e-9 * want.max(1.0),
            "{f}: {got} vs {want}"
        );
        assert_eq!(cells[0]["figures"]["vs_baseline"][f], 1.0);
    }
    // The report, along the layouts.
    let out = oltplab(&dir, &["report", "res", "--by", "layout", "-o", "by.html"]);
    assert_ok(&out);
    let report = std::fs::read_to_string(dir.join("by.html")).unwrap();
    assert!(
        report.contains(">tpmC by layout</title>"),
        "no tpmC chart by layout"
    );
    assert!(report.contains(">Storage utilisation α by layout</title>"));
    for id in ids {
        assert!(report.contains(id), "{id} missing from the report");
    }
    // The charts label the named layout by its name, the other by its spec.
    assert!(report.contains("<title>log-on-flash</title>"), "no label");
    assert!(report.contains("<title>data=hdd-15k,table:stock=pcie-flash-2012</title>"));
    let out = oltplab(&dir, &["report", "res", "--by", "layout,device"]);
    assert_one_line_usage_error(&out, "one axis");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The brokerage workload as a study file's workload: two emulated devices, end to end on SQLite
/// at the hidden test scale (one load, two cells): each cell's run is the brokerage's, traced
/// and replayed, its throughput Trade-Results per second (no tpmC), its ratios against the
/// baseline cell of the same workload, and the report shows every cell.
#[test]
fn a_two_cell_sqlite_brokerage_study_runs_end_to_end() {
    let dir = scratch("brokerage");
    let res = dir.join("res");
    std::fs::write(
        dir.join("b.toml"),
        "scale = \"test\"\nworkloads = [\"brokerage\"]\ndevices = [\"nvme-gen4\", \"pcie-flash-2012\"]\n",
    )
    .unwrap();
    let started = Instant::now();
    let out = oltplab(&dir, &["study", "--file", "b.toml", "--out", "res"]);
    assert_ok(&out);
    eprintln!("brokerage study: {:.1} s", started.elapsed().as_secs_f64());
    let doc = json(&res.join("results.json"));
    assert_eq!(doc["summary"]["baseline"], "nvme-gen4");
    let cells = doc["summary"]["cells"].as_array().unwrap();
    let ids: Vec<&str> = cells.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "sqlite_brokerage_nvme-gen4_t2",
            "sqlite_brokerage_pcie-flash-2012_t2"
        ]
    );
    let fig = |c: &Value, f: &str| c["figures"][f].as_f64().unwrap_or(0.0);
    for c in cells {
        assert_eq!(c["workload"], "brokerage");
        assert!(
            c["figures"].get("tpmc").is_none(),
            "a tpmC: {}",
            c["figures"]
        );
        for f in [
            "randread16k_iops",
            "tpse_like",
            "run_iops",
            "replay_iops",
            "alpha",
        ] {
            assert!(fig(c, f) > 0.0, "{}.{f} = {}", c["id"], fig(c, f));
        }
        // The run was the brokerage's, with its trace.
        let id = c["id"].as_str().unwrap();
        let run = json(&res.join(format!("run-{id}")).join("result.json"));
        assert_eq!(run["summary"]["tpse_like"], c["figures"]["tpse_like"]);
        assert_eq!(c["run"]["throughput_unit"], "Trade-Results/s");
        assert!(res.join(format!("{id}.trace")).is_file());
    }
    let got = cells[1]["figures"]["vs_baseline"]["tpse_like"]
        .as_f64()
        .unwrap();
    let want = fig(&cells[1], "tpse_like") / fig(&cells[0], "tpse_like");
    assert!((got - want).abs() < 1e-9 * want.max(1.0), "{got} vs {want}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("TR/s"));
    let report = std::fs::read_to_string(res.join("report.html")).unwrap();
    for id in ids {
        assert!(report.contains(id), "{id} missing from the report");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Order entry as a study file's workload: two emulated devices, end to end on SQLite at the
/// hidden test scale (one load, two cells): each cell's run is order entry's fixed work, traced
/// and replayed, its throughput transactions per second (no tpmC), its ratio against the
/// baseline cell of the same workload, and the report has its column and chart.
#[test]
fn a_two_cell_sqlite_order_entry_study_runs_end_to_end() {
    let dir = scratch("orders");
    let res = dir.join("res");
    std::fs::write(
        dir.join("o.toml"),
        "scale = \"test\"\nworkloads = [\"orders\"]\ndevices = [\"nvme-gen4\", \"pcie-flash-2012\"]\n",
    )
    .unwrap();
    let started = Instant::now();
    let out = oltplab(&dir, &["study", "--file", "o.toml", "--out", "res"]);
    assert_ok(&out);
    eprintln!(
        "order-entry study: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let doc = json(&res.join("results.json"));
    assert_eq!(doc["summary"]["baseline"], "nvme-gen4");
    let cells = doc["summary"]["cells"].as_array().unwrap();
    let ids: Vec<&str> = cells.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "sqlite_orders_nvme-gen4_t2",
            "sqlite_orders_pcie-flash-2012_t2"
        ]
    );
    let fig = |c: &Value, f: &str| c["figures"][f].as_f64().unwrap_or(0.0);
    for c in cells {
        assert_eq!(c["workload"], "orders");
        assert!(c["figures"].get("tpmc").is_none(), "{}", c["figures"]);
        assert!(c["figures"].get("tpse_like").is_none(), "{}", c["figures"]);
        for f in [
            "randread16k_iops",
            "orders_tps",
            "run_iops",
            "replay_iops",
            "alpha",
        ] {
            assert!(fig(c, f) > 0.0, "{}.{f} = {}", c["id"], fig(c, f));
        }
        // The run was order entry's, its fixed work shared over the cell's two connections,
        // with its trace.
        let id = c["id"].as_str().unwrap();
        let run = json(&res.join(format!("run-{id}")).join("result.json"));
        assert_eq!(run["summary"]["tps"], c["figures"]["orders_tps"]);
        assert_eq!(run["summary"]["connections"], serde_json::json!([2]));
        assert_eq!(run["summary"]["transactions"], 2000);
        assert_eq!(c["run"]["throughput_unit"], "tx/s");
        assert!(res.join(format!("{id}.trace")).is_file());
    }
    let got = cells[1]["figures"]["vs_baseline"]["orders_tps"]
        .as_f64()
        .unwrap();
    let want = fig(&cells[1], "orders_tps") / fig(&cells[0], "orders_tps");
    assert!((got - want).abs() < 1e-9 * want.max(1.0), "{got} vs {want}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("tx/s"));
    let report = std::fs::read_to_string(res.join("report.html")).unwrap();
    for id in ids {
        assert!(report.contains(id), "{id} missing from the report");
    }
    assert!(report.contains(">Order-entry transactions per second by device</title>"));
    assert!(report.contains("order-entry tx/s"), "no column");
    // The workload axis, on a study of one workload too.
    let out = oltplab(
        &dir,
        &["report", "res", "--by", "workload,device", "-o", "by.html"],
    );
    assert_ok(&out);
    let report = std::fs::read_to_string(dir.join("by.html")).unwrap();
    assert!(report.contains(">Order-entry transactions per second by workload</title>"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An order-entry cell repeated: each repetition its own run and replay, the cell's figures
/// their means, and each repetition's throughput and α with the mean and its 95 % interval (no
/// tpmC, which order entry has not).
#[test]
fn a_repeated_order_entry_cell_has_its_throughputs_mean_and_spread() {
    let dir = scratch("orders-repeat");
    let res = dir.join("res");
    std::fs::write(
        dir.join("o.toml"),
        "scale = \"test\"\nrepeat = 2\nworkloads = [\"orders\"]\ndevices = [\"nvme-gen4\"]\n",
    )
    .unwrap();
    let started = Instant::now();
    let out = oltplab(&dir, &["study", "--file", "o.toml", "--out", "res"]);
    assert_ok(&out);
    eprintln!(
        "repeated order-entry cell: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let doc = json(&res.join("results.json"));
    let c = &doc["summary"]["cells"][0];
    let rep = &c["figures"]["repeats"];
    assert_eq!(rep["runs"], 2, "{rep}");
    assert!(rep.get("tpmc").is_none(), "{rep}");
    let tps = &rep["orders_tps"];
    let values: Vec<f64> = tps["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(values.len(), 2);
    assert!(values.iter().all(|v| *v > 0.0), "{values:?}");
    let mean = values.iter().sum::<f64>() / 2.0;
    assert!((tps["mean"].as_f64().unwrap() - mean).abs() < 1e-9 * mean);
    assert_eq!(c["figures"]["orders_tps"], tps["mean"]);
    assert!(tps["ci95"].as_f64().unwrap() >= 0.0);
    // Each repetition ran order entry's fixed work: the second's run is its own.
    let id = c["id"].as_str().unwrap();
    for run in [format!("run-{id}"), format!("run-{id}-r2")] {
        let r = json(&res.join(&run).join("result.json"));
        assert_eq!(r["summary"]["transactions"], 2000, "{run}");
    }
    assert!(
        stderr(&out).contains("order-entry tx/s"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
