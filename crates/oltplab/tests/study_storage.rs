//! `oltplab study --scenario placement|cache-tiers` (S3, S2): a configuration per layout or storage
//! system on copies of one loaded database, with S2/S3's figures per configuration.

mod common;

use common::{assert_ok, assert_usage_error, json, oltplab, scratch};

/// On SQLite, the default engine: the hottest table moves into an attached file of its own in its
/// configuration's copy (PostgreSQL's and MariaDB's placed tables: tests/layout.rs).
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
            vec!["--scenario", "cache-tiers", "--repeat", "2"],
            "--repeat belongs to the s1",
        ),
    ] {
        let mut all = vec!["study", "--out", "out", "--data-dir", "data"];
        all.extend(args.iter().copied());
        assert_usage_error(&oltplab(&dir, &all), says);
        assert!(!dir.join("out").exists(), "{args:?}: nothing written");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
