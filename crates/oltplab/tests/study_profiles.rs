//! `oltplab study --scenario profiles` (S4) end to end at the hidden test scale (0.1 s points, the
//! quick scale takes over two minutes): both default device sets get every profile at every queue
//! depth, the SSD RAID beats the HDD RAID, the HDD RAID gains from a deeper queue, the drives'
//! sequential figures are there — every set and drive behind S4's RAID controller, so the 15k
//! drive's 16 KiB writes at QD 1 do not wait a turn each — and results.json and report.html are
//! written; bad input is refused before anything runs. Its own binary: a loaded machine bends the
//! deep queues it checks (resuming a stopped S4 is tests/e2e/study_profiles_resume.rs).

mod common;

use common::{assert_ok, assert_one_line_usage_error, json, oltplab, scratch};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

#[test]
fn profiles_study_measures_both_sets_at_every_depth() {
    let dir = scratch("profiles");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "profiles",
            "--scale",
            "test",
            "--out",
            "res",
            "--json",
            "copy.json",
        ],
    );
    assert_ok(&out);
    let doc = json(&dir.join("res/results.json"));
    assert_eq!(doc, json(&dir.join("copy.json")));
    assert_eq!(doc["kind"], "study");
    let s = &doc["summary"];
    assert_eq!(s["scenario"], "profiles");
    assert_eq!(s["interrupted"], false);
    let qds: Vec<u64> = s["qd"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q.as_u64().unwrap())
        .collect();
    assert_eq!(qds, [1, 2, 4]);
    let sets = s["sets"].as_array().unwrap();
    let specs: Vec<&str> = sets.iter().map(|s| s["spec"].as_str().unwrap()).collect();
    assert_eq!(
        specs,
        [
            "wbcache(raid5(4,hdd-15k,stripe=64k),size=1g,readahead=192k)",
            "wbcache(raid5(4,sas-ssd-2012,stripe=64k),size=1g,readahead=192k)"
        ]
    );
    assert_eq!(s["baseline"], sets[0]["name"]);
    // S4's controller in front of every set and of the drives measured alone.
    let drive_specs: Vec<&str> = sets.iter().map(|s| s["drive"].as_str().unwrap()).collect();
    assert_eq!(
        drive_specs,
        [
            "wbcache(hdd-15k,size=1g,readahead=64k)",
            "wbcache(sas-ssd-2012,size=1g,readahead=64k)"
        ]
    );
    for set in sets {
        let name = set["spec"].as_str().unwrap();
        let profiles = set["profiles"].as_array().unwrap();
        assert_eq!(profiles.len(), 12, "{name}");
        for p in profiles {
            let iops = p["iops"].as_array().unwrap();
            // The test scale sweeps QD 1, 2 and 4 (the others 1 … 256).
            assert_eq!(p["qd"].as_array().unwrap().len(), 3, "{name} {}", p["name"]);
            assert_eq!(iops.len(), 3, "{name} {}", p["name"]);
            for v in iops {
                assert!(f(v) > 0.0, "{name} {}: {iops:?}", p["name"]);
            }
            assert!(f(&p["geomean_iops"]) > 0.0);
        }
        assert_eq!(set["complete"], true, "{name}");
        assert_eq!(set["geomean_by_qd"].as_array().unwrap().len(), 3);
        assert!(f(&set["geomean_iops"]) > 0.0);
        let result = dir.join("res").join(set["result"].as_str().unwrap());
        assert_eq!(json(&result)["kind"], "device", "{result:?}");
    }
    // The SSDs do more at every profile's geometric mean taken together, and the ratio says so.
    let (hdd, ssd) = (&sets[0], &sets[1]);
    assert!(f(&ssd["geomean_iops"]) > f(&hdd["geomean_iops"]));
    assert!(hdd.get("ratio").is_none());
    let ratio = &ssd["ratio"];
    assert!(f(&ratio["geomean_iops_ratio"]) > 1.0, "{ratio}");
    // With every profile in both sets, the geometric mean of the ratios is the ratio of the means.
    let of_means = f(&ssd["geomean_iops"]) / f(&hdd["geomean_iops"]);
    assert!((f(&ratio["geomean_iops_ratio"]) / of_means - 1.0).abs() < 1e-9);
    assert_eq!(ratio["profiles"].as_array().unwrap().len(), 12);
    // Four disks and their elevators: a deeper queue gains on the HDD RAID. Measured against QD 1:
    // at the test scale a profile's point holds a few dozen of the RAID's I/Os, and four runs
    // gave QD 2 ÷ QD 1 1.40–1.69 but QD 4 ÷ QD 2 0.99–1.32, too close to order every doubling.
    let by_qd: Vec<f64> = hdd["geomean_by_qd"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| f(&g["geomean_iops"]))
        .collect();
    for deeper in &by_qd[1..] {
        assert!(
            deeper > &(1.2 * by_qd[0]),
            "HDD RAID geomean by QD: {by_qd:?}"
        );
    }
    // One drive of each set, 16 KiB sequential, at QD 1 and 32.
    let drives: Vec<(String, u64)> = s["drive_seq16k"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            // Behind the controller neither stream waits a turn per I/O at QD 1, as the bare
            // 15k drive's writes do (250/s, its write cache off): the writes are acknowledged from
            // the 1 GB cache, the reads come from its read-ahead (and the drive's own).
            if d["qd"] == 1 {
                for k in ["read_iops", "write_iops"] {
                    assert!(f(&d[k]) > 2_000.0, "{d}: {k}");
                }
            }
            for k in ["read_iops", "write_iops", "read_bw_bytes", "write_bw_bytes"] {
                assert!(f(&d[k]) > 0.0, "{d}: {k}");
            }
            assert!((f(&d["read_bw_bytes"]) - 16384.0 * f(&d["read_iops"])).abs() < 1.0);
            (
                d["device"].as_str().unwrap().to_string(),
                d["qd"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        drives,
        [
            (drive_specs[0].into(), 1),
            (drive_specs[0].into(), 32),
            (drive_specs[1].into(), 1),
            (drive_specs[1].into(), 32)
        ]
    );
    // Each set's 4 KiB and 64 KiB random reads and writes at QD 4; the SSD set does more of each,
    // and a 64 KiB I/O takes longer than a 4 KiB one on either set.
    let random: Vec<(String, u64, f64, f64, f64)> = s["random_qd4"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            for k in [
                "read_iops",
                "write_iops",
                "read_lat_ns_mean",
                "write_lat_ns_mean",
            ] {
                assert!(f(&r[k]) > 0.0, "{r}: {k}");
            }
            (
                r["set"].as_str().unwrap().to_string(),
                r["block_size_bytes"].as_u64().unwrap(),
                f(&r["read_iops"]),
                f(&r["write_iops"]),
                f(&r["read_lat_ns_mean"]),
            )
        })
        .collect();
    let keys: Vec<(&str, u64)> = random.iter().map(|r| (r.0.as_str(), r.1)).collect();
    assert_eq!(
        keys,
        [
            (specs[0], 4096),
            (specs[0], 65536),
            (specs[1], 4096),
            (specs[1], 65536)
        ]
    );
    for i in 0..2 {
        let (hdd, ssd) = (&random[i], &random[i + 2]);
        assert!(ssd.2 > hdd.2, "{hdd:?} vs {ssd:?}");
        // Both sets sit behind the controller's 1 GB write-back cache (issue 31), so their
        // writes are acknowledged at the controller's rate, not at the drives' (a 15k RAID5 does
        // a few hundred).
        assert!(hdd.3 > 20.0 * hdd.2.min(1_000.0), "{hdd:?} vs {ssd:?}");
    }
    // What the cache does is in the model's own latencies, which a loaded machine cannot move:
    // every set's writes took at most QD 4 x the controller's command time (66.8 us), where
    // the same sets without the cache take 2.8-34 ms at p99 (and the SSD RAID 137 us at p50 for
    // 4 KiB). The realised rates are no check of it: at 64 KiB they are the machine's copy rate,
    // 52,630 and 28,540 in one CI run.
    let mut writes = 0;
    for entry in std::fs::read_dir(dir.join("res")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("random-") && name.contains("-randwrite-") {
            let fidelity = &json(&path.join("result.json"))["summary"]["emulation"]["fidelity"];
            let p99 = f(&fidelity["modelled_lat_ns_p99"]);
            assert!(p99 > 0.0 && p99 < 200_000.0, "{name}: {fidelity}");
            writes += 1;
        }
    }
    assert_eq!(writes, 4, "both sets' 4 and 64 KiB random writes");
    for i in 0..2 {
        let (small, large) = (&random[2 * i], &random[2 * i + 1]);
        assert!(large.4 > small.4, "{small:?} vs {large:?}");
    }
    let report = std::fs::read_to_string(dir.join("res/report.html")).unwrap();
    assert!(report.contains("queue depth 4"), "random I/O table");
    assert!(report.contains("server access profiles"), "report title");
    assert!(report.contains("<svg"), "report charts");
    assert!(report.contains("web-file-4k") && report.contains("os-paging"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_profiles_input_is_refused_before_anything_runs() {
    let dir = scratch("profiles-bad");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "profiles",
            "--devices",
            "hdd-15k",
            "--out",
            "res",
        ],
    );
    assert_one_line_usage_error(&out, "compares two");
    for (args, says) in [
        (&["--devices", "host,hdd-15k"][..], "emulated devices only"),
        (&["--engine", "postgres"][..], "runs no database"),
        (&["--scale", "s1"][..], "quick, default or paper"),
    ] {
        let mut all = vec!["study", "--scenario", "profiles", "--out", "res"];
        all.extend_from_slice(args);
        assert_one_line_usage_error(&oltplab(&dir, &all), says);
    }
    // The hidden test scale is not the in-memory study's.
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "in-memory",
            "--scale",
            "test",
            "--out",
            "res",
        ],
    );
    assert_one_line_usage_error(&out, "belongs to the other scenarios");
    assert!(!dir.join("res").exists(), "nothing ran");
    let _ = std::fs::remove_dir_all(&dir);
}
