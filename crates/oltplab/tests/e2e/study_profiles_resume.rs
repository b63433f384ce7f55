//! `oltplab study --scenario profiles` (S4) stopped by Ctrl-C after its first device set resumes
//! measuring only the second (each set is a cell of studies/s4.toml), and a set added to the file
//! is the only one a resume would run. It checks which sets ran, not their figures, so it runs
//! beside other tests (the figures are tests/study_profiles.rs's, alone).

use crate::common;

use common::{assert_ok, json, oltplab, scratch, stderr};

#[test]
fn an_interrupted_profiles_study_resumes_only_its_unfinished_set() {
    let dir = scratch("profiles-resume");
    let res = dir.join("res");
    let out = common::interrupt_after_first(
        &dir,
        &[
            "study",
            "--scenario",
            "profiles",
            "--scale",
            "test",
            "--out",
            "res",
        ],
        || !common::cell_files(&res).is_empty(),
        "device set",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with("(running studies/s4.toml with ") && first.contains("scale = \"test\""),
        "{err}"
    );
    assert!(err.contains("oltplab study --resume res"), "{err}");
    let stopped = json(&res.join("results.json"));
    assert_eq!(stopped["summary"]["scenario"], "profiles");
    assert_eq!(stopped["summary"]["interrupted"], true);
    // The set Ctrl-C cut short is not kept: only the finished one is in the result.
    assert_eq!(stopped["summary"]["sets"].as_array().unwrap().len(), 1);
    let kept = common::cell_files(&res);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let kept_text = std::fs::read_to_string(res.join("cells").join(&kept[0])).unwrap();
    assert!(res.join("study.toml").is_file());

    let out = oltplab(&dir, &["study", "--resume", "res"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let (ran, kept_now) = common::cells_in(&err);
    let ran: Vec<&String> = ran.iter().filter(|id| id.starts_with("wbcache_")).collect();
    let hdd = "wbcache_raid5_4_hdd-15k_stripe_64k_size_1g_readahead_192k";
    let ssd = "wbcache_raid5_4_sas-ssd-2012_stripe_64k_size_1g_readahead_192k";
    assert_eq!(kept_now, [hdd], "{err}");
    assert_eq!(ran, [ssd], "{err}");
    assert_eq!(
        std::fs::read_to_string(res.join("cells").join(&kept[0])).unwrap(),
        kept_text,
        "the kept set's result was rewritten"
    );
    let doc = json(&res.join("results.json"));
    let s = &doc["summary"];
    assert_eq!(s["interrupted"], false);
    let names: Vec<&str> = s["sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [hdd, ssd]);
    assert_eq!(s["baseline"], hdd);
    assert!(
        s["sets"][1]["ratio"]["geomean_iops_ratio"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(s["random_qd4"].as_array().unwrap().len(), 4);
    assert_eq!(s["drive_seq16k"].as_array().unwrap().len(), 4);
    assert_eq!(s["cells"].as_array().unwrap().len(), 2);
    assert_eq!(common::cell_files(&res).len(), 2);

    // A set added to the file is the only one left to measure.
    let copy = res.join("study.toml");
    let text = std::fs::read_to_string(&copy).unwrap();
    let added = text.replace(
        "readahead=on)\",\n]",
        "readahead=on)\",\n  \"raid10(4,hdd-10k)\",\n]",
    );
    assert_ne!(added, text, "{text}");
    std::fs::write(&copy, &added).unwrap();
    let out = oltplab(&dir, &["study", "--resume", "res", "--dry-run"]);
    assert_ok(&out);
    let plan = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = plan.lines().filter(|l| l.contains(". ")).collect();
    assert_eq!(lines.len(), 3, "{plan}");
    assert!(lines[0].ends_with("finished earlier, kept"), "{plan}");
    assert!(lines[1].ends_with("finished earlier, kept"), "{plan}");
    assert!(
        lines[2].contains("raid10_4_hdd-10k") && lines[2].contains('~'),
        "{plan}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
