//! `oltplab study --scenario placement|cache-tiers` (S3, S2): a configuration per layout or storage
//! system on copies of one loaded database, with S2/S3's figures per configuration; each runs its
//! shipped study file (studies/s3.toml, s2.toml) with the options applied, prints it with
//! `--dry-run`, and resumes after Ctrl-C running only the configurations not finished.

use crate::common;

use common::{assert_ok, assert_usage_error, json, oltplab, scratch, stderr};

/// On SQLite, the default engine: the hottest table moves into an attached file of its own in its
/// configuration's copy (PostgreSQL's and MariaDB's placed tables: tests/e2e/layout.rs).
#[test]
fn placement_moves_the_log_then_the_hottest_table_then_everything_to_flash() {
    let dir = scratch("study-placement");
    assert_ok(&oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "placement",
            "--scale",
            "test",
            "--data-dir",
            "data",
            "--out",
            "out",
        ],
    ));
    let doc = json(&dir.join("out/results.json"));
    let s = &doc["summary"];
    let configs = s["configs"].as_array().unwrap();
    let names: Vec<&str> = configs
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let hot = s["hot_table"].as_str().unwrap();
    assert_eq!(
        names,
        [
            "nothing on flash",
            "log and temp on flash",
            &format!("{hot} on flash"),
            "everything on flash"
        ]
    );
    // The hottest table is the first run's largest table by I/O.
    let first_tables = configs[0]["tables"].as_array().unwrap();
    let largest = first_tables
        .iter()
        .find(|t| !t["name"].as_str().unwrap().starts_with('('))
        .unwrap();
    assert_eq!(largest["name"], hot);
    // Each layout's devices: one, then data + log/temp, data + the table, one.
    let devices: Vec<usize> = configs
        .iter()
        .map(|c| c["devices"].as_array().unwrap().len())
        .collect();
    assert_eq!(devices, [1, 2, 2, 1]);
    let table_dev = &configs[2]["devices"][1];
    assert_eq!(
        table_dev["name"],
        format!("table:{hot}=pcie-flash-2012").as_str()
    );
    assert!(
        table_dev["reads"].as_u64().unwrap() > 0,
        "the table was read on flash"
    );
    for c in configs {
        assert!(c["throughput"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["lat_ns"]["p90"].as_u64().unwrap() > 0);
        assert!(c["cpu_utilisation"].as_f64().unwrap() > 0.0);
        assert!(c["io_iops"].as_f64().unwrap() > 0.0);
    }
    // Everything on flash beats nothing on flash on an HDD RAID.
    assert!(
        configs[3]["throughput"].as_f64().unwrap() > configs[0]["throughput"].as_f64().unwrap()
    );
    assert!(dir.join("out/report.html").is_file());
    // The copies are gone, the table's own file with them.
    let left: Vec<String> = std::fs::read_dir(dir.join("data"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("-table-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// S2 ran a TPC-E-like workload: the brokerage one here (TPC-C is the placement test's).
#[test]
fn cache_tiers_runs_s2s_four_systems_with_the_brokerage_workload() {
    let dir = scratch("study-cache-tiers");
    assert_ok(&oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "cache-tiers",
            "--workload",
            "brokerage",
            "--scale",
            "test",
            "--data-dir",
            "data",
            "--out",
            "out",
        ],
    ));
    let doc = json(&dir.join("out/results.json"));
    let configs = doc["summary"]["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 4);
    assert!(configs[1]["spec"].as_str().unwrap().contains("readcache("));
    // S2's controller: the data sets on it and, in every configuration, the log on its own 2×15k
    // RAID1 behind it, write back and read ahead.
    for (i, c) in configs.iter().enumerate() {
        let spec = c["spec"].as_str().unwrap();
        assert!(
            spec.contains(",log=wbcache(raid1(2,hdd-15k),size=1g,readahead=64k)"),
            "{spec}"
        );
        assert_eq!(spec.starts_with("data=wbcache("), i < 3, "{spec}");
    }
    let cache = &configs[1]["devices"][0];
    let hits = cache["read_cache_hit_pct"].as_f64().unwrap();
    // The brokerage workload reads its hot rows again and again: the cache in front of the HDD
    // RAID serves some of them. (A cache that never hit, or a share that is not one, fails.)
    eprintln!("read cache hits: {hits:.1} %");
    assert!(hits > 0.0 && hits <= 100.0, "{cache}");
    assert!(cache["reads"].as_u64().unwrap() > 0, "{cache}");
    assert!(configs[0]["devices"][0].get("read_cache_hit_pct").is_none());
    assert_eq!(doc["summary"]["workload"], "brokerage");
    assert_eq!(doc["summary"]["customers"], 1000);
    for c in configs {
        assert!(c["throughput"].as_f64().unwrap() > 0.0, "{c}");
        assert_eq!(c["throughput_unit"], "Trade-Results/s");
        // Brokerage traced on SQLite: its I/O by table names its own tables.
        let tables = c["tables"].as_array().unwrap();
        assert!(tables.iter().any(|t| t["name"] == "trade"), "{c}");
    }
    assert!(dir.join("out/report.html").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn storage_scenarios_refuse_bad_input_before_anything_runs() {
    let dir = scratch("study-storage-bad");
    for (args, says) in [
        (
            vec![
                "--scenario",
                "placement",
                "--engine",
                "mariadb",
                "--devices",
                "hdd-15k",
            ],
            "two devices",
        ),
        (
            vec![
                "--scenario",
                "placement",
                "--engine",
                "mariadb",
                "--devices",
                "hdd-15k,nvme-9",
            ],
            "unknown device",
        ),
        (
            vec!["--scenario", "cache-tiers", "--devices", "host,hdd-15k"],
            "host is not one",
        ),
        (
            vec!["--scenario", "cache-tiers", "--repeat", "21"],
            "--repeat",
        ),
    ] {
        let mut all = vec!["study", "--out", "out", "--data-dir", "data"];
        all.extend(args.iter().copied());
        assert_usage_error(&oltplab(&dir, &all), says);
        assert!(!dir.join("out").exists(), "{args:?}: nothing written");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--scenario cache-tiers --dry-run` prints its study file with every option given applied: a
/// file that parses (`--file … --dry-run` lists its cells) and runs what the options say. Nothing
/// is made.
#[test]
fn cache_tiers_dry_run_prints_its_file_with_the_options_applied() {
    let dir = scratch("study-cache-tiers-dry");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "cache-tiers",
            "--scale",
            "test",
            "--workload",
            "brokerage",
            "--devices",
            "raid10(4,hdd-15k),readcache(hdd-15k,sas-ssd-2012,size=50%db)",
            "--dry-run",
        ],
    );
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.starts_with("# oltplab study --scenario cache-tiers --engine sqlite --scale test --workload brokerage --devices "),
        "{text}"
    );
    for line in [
        "measure = \"storage\"",
        "scale = \"test\"",
        "workloads = [\"brokerage\"]",
        "baseline = \"raid10(4,hdd-15k,stripe=64k)\"",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}: {text}");
    }
    std::fs::write(dir.join("printed.toml"), &text).unwrap();
    let out = oltplab(&dir, &["study", "--file", "printed.toml", "--dry-run"]);
    assert_ok(&out);
    let listing = String::from_utf8_lossy(&out.stdout);
    let cells: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.trim_start().split_once(". ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert_eq!(
        cells,
        [
            "sqlite_brokerage_raid10_4_hdd-15k_stripe_64k_t2",
            "sqlite_brokerage_readcache_hdd-15k_sas-ssd-2012_size_50_db_t2"
        ],
        "{listing}"
    );
    assert!(listing.contains("scale test"), "{listing}");
    let made: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "printed.toml")
        .collect();
    assert!(made.is_empty(), "made {made:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--scenario placement` stopped by Ctrl-C in its second configuration keeps the first, and
/// `oltplab study --resume DIR` runs only the other three — the hottest table found from the
/// kept first one — into the scenario's result with all four.
#[test]
fn an_interrupted_placement_study_resumes_only_its_unfinished_configurations() {
    let dir = scratch("study-placement-resume");
    let res = dir.join("res");
    let out = common::interrupt_after_first(
        &dir,
        &[
            "study",
            "--scenario",
            "placement",
            "--scale",
            "test",
            "--data-dir",
            "data",
            "--out",
            "res",
        ],
        || !common::cell_files(&res).is_empty(),
        "configuration",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with("(running studies/s3.toml with ") && first.contains("scale = \"test\""),
        "{err}"
    );
    assert!(err.contains("oltplab study --resume res"), "{err}");
    let stopped = json(&res.join("results.json"));
    assert_eq!(stopped["summary"]["scenario"], "placement");
    assert_eq!(stopped["summary"]["interrupted"], true);
    assert_eq!(stopped["summary"]["configs"].as_array().unwrap().len(), 1);
    let kept = common::cell_files(&res);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let kept_text = std::fs::read_to_string(res.join("cells").join(&kept[0])).unwrap();
    assert!(res.join("study.toml").is_file());

    let out = oltplab(&dir, &["study", "--resume", "res", "--data-dir", "data"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let doc = json(&res.join("results.json"));
    let s = &doc["summary"];
    let hot = s["hot_table"].as_str().unwrap();
    let (ran, kept_now) = common::cells_in(&err);
    assert_eq!(kept_now, ["nothing on flash"], "{err}");
    assert_eq!(
        ran,
        [
            "log and temp on flash".to_string(),
            format!("{hot} on flash"),
            "everything on flash".to_string()
        ],
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(res.join("cells").join(&kept[0])).unwrap(),
        kept_text,
        "the kept configuration's result was rewritten"
    );
    assert_eq!(s["scenario"], "placement");
    assert_eq!(doc["config"]["scenario"], "placement");
    assert_eq!(s["interrupted"], false);
    let configs = s["configs"].as_array().unwrap();
    let names: Vec<&str> = configs
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "nothing on flash",
            "log and temp on flash",
            &format!("{hot} on flash"),
            "everything on flash"
        ]
    );
    // The hottest table is the kept first configuration's largest table by I/O.
    let largest = configs[0]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| !t["name"].as_str().unwrap().starts_with('('))
        .unwrap();
    assert_eq!(largest["name"], hot);
    for c in configs {
        assert!(c["throughput"].as_f64().unwrap() > 0.0, "{c}");
        let got = c["throughput_vs_first"].as_f64().unwrap();
        let want = c["throughput"].as_f64().unwrap() / configs[0]["throughput"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9 * want.max(1.0), "{got} vs {want}");
    }
    assert_eq!(s["cells"].as_array().unwrap().len(), 4);
    assert!(doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["kind"] != "interrupted"));
    assert!(res.join("report.html").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A storage study file repeated: each configuration runs twice, each run on a fresh copy with
/// its own run directory; its headline figures are the runs' means, each with its 95 % interval,
/// in the JSON, the console table and the report.
#[test]
fn a_repeated_storage_configuration_has_its_figures_means_and_spread() {
    let dir = scratch("study-storage-repeat");
    let res = dir.join("res");
    std::fs::write(
        dir.join("mine.toml"),
        "measure = \"storage\"\nscale = \"test\"\nrepeat = 2\ndevices = [\"nvme-gen4\"]\n",
    )
    .unwrap();
    let out = oltplab(
        &dir,
        &[
            "study",
            "--file",
            "mine.toml",
            "--out",
            "res",
            "--data-dir",
            "data",
        ],
    );
    assert_ok(&out);
    let err = stderr(&out);
    assert!(err.contains("repetition 2 of 2"), "{err}");
    assert!(err.contains(" ± "), "the table shows no interval: {err}");
    let doc = json(&res.join("results.json"));
    let c = &doc["summary"]["configs"][0];
    let rep = &c["repeats"];
    assert_eq!(rep["runs"], 2, "{c}");
    for (f, figure) in [
        ("throughput", &c["throughput"]),
        ("tx_per_s", &c["tx_per_s"]),
        ("io_iops", &c["io_iops"]),
        ("lat_ns_mean", &c["lat_ns"]["mean"]),
        ("lat_ns_p90", &c["lat_ns"]["p90"]),
        ("cpu_utilisation", &c["cpu_utilisation"]),
    ] {
        let values: Vec<f64> = rep[f]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(values.len(), 2, "{f}");
        assert!(values.iter().all(|v| *v > 0.0), "{f}: {values:?}");
        let mean = values.iter().sum::<f64>() / 2.0;
        let said = rep[f]["mean"].as_f64().unwrap();
        assert!((said - mean).abs() < 1e-9 * mean, "{f}: {said} vs {mean}");
        // The configuration's figure is the mean (p90 in whole nanoseconds).
        assert!((figure.as_f64().unwrap() - mean).abs() <= 0.5, "{f}");
        assert!(rep[f]["ci95"].as_f64().unwrap() >= 0.0, "{f}");
    }
    // The saved cell is the configuration, repeats included; each run has its own directory.
    let cell = &doc["summary"]["cells"][0];
    assert_eq!(cell["figures"]["repeats"], *rep);
    let id = cell["id"].as_str().unwrap();
    for run in [format!("run-{id}"), format!("run-{id}-r2")] {
        assert!(res.join(&run).join("result.json").is_file(), "{run}");
    }
    let report = std::fs::read_to_string(res.join("report.html")).unwrap();
    assert!(
        report.contains("IOPS ± (95 %)"),
        "no interval in the report"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
