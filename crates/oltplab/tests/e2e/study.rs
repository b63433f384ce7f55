//! `oltplab study` end to end, as the README's main job runs it but at the hidden test scale (3 s
//! runs; the README's quick scale takes two minutes and is run from a clean clone before every
//! release): every device gets its device figures, a traced TPC-C run, a replay and α;
//! results.json, the traces and report.html are written; bad input is refused before anything runs;
//! `--dry-run` prints studies/s1.toml with the options applied, and a stopped study resumes.

use crate::common;

use common::{oltplab, scratch, stderr};
use serde_json::Value;

#[test]
fn quick_study_writes_every_figure_trace_and_the_report() {
    let dir = scratch("quick");
    let out = oltplab(&dir, &["study", "--scale", "test", "--out", "res"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("res/results.json")).unwrap())
            .unwrap();
    assert_eq!(doc["schema"], "oltplab.result/1");
    assert_eq!(doc["kind"], "study");
    assert_eq!(doc["summary"]["baseline"], "hdd-10k");
    let devices = doc["summary"]["devices"].as_array().unwrap();
    let names: Vec<&str> = devices
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["host", "hdd-10k", "sata-ssd-2010", "pcie-flash-2012"]
    );
    for d in devices {
        let name = d["name"].as_str().unwrap();
        for field in [
            "randread16k_iops",
            "randread16k_lat_ns",
            "tpmc",
            "run_iops",
            "replay_iops",
            "alpha",
        ] {
            let v = d[field].as_f64().unwrap_or(0.0);
            assert!(v > 0.0, "{name}.{field} = {v}");
        }
        assert!(!d["explanation"].as_str().unwrap().is_empty());
        let trace = dir.join("res").join(format!("{name}.trace"));
        assert!(std::fs::metadata(&trace).unwrap().len() > 64, "{trace:?}");
    }
    // The emulated devices keep S1's order: faster device, higher IOPS and lower latency.
    let fig = |i: usize, f: &str| devices[i][f].as_f64().unwrap();
    assert!(fig(1, "randread16k_iops") < fig(2, "randread16k_iops"));
    assert!(fig(2, "randread16k_iops") < fig(3, "randread16k_iops"));
    assert!(fig(1, "randread16k_lat_ns") > fig(2, "randread16k_lat_ns"));
    assert!(fig(2, "randread16k_lat_ns") > fig(3, "randread16k_lat_ns"));
    assert!(fig(1, "tpmc") < fig(3, "tpmc"));
    // Every α is a bound (never above 1.05), against the best of the three replays, each of which
    // stands beside it (the VFS records each I/O's CPU, so btreplay always runs); on SQLite, whose
    // writers take turns in the run, free lanes never do less than the causal order.
    for (i, d) in devices.iter().enumerate().skip(1) {
        let (alpha, causal) = (fig(i, "alpha"), fig(i, "alpha_causal"));
        assert!(alpha <= 1.05, "{}: α {alpha} causal {causal}", d["name"]);
        let (lanes_iops, causal_iops, btreplay_iops) = (
            fig(i, "replay_lanes_iops"),
            fig(i, "replay_causal_iops"),
            fig(i, "replay_btreplay_iops"),
        );
        let best = lanes_iops.max(causal_iops).max(btreplay_iops);
        assert_eq!(fig(i, "replay_iops"), best);
        let bound = if best == btreplay_iops {
            "btreplay"
        } else if best == causal_iops {
            "causal"
        } else {
            "lanes"
        };
        assert_eq!(d["bound_order"], bound, "{}", d["name"]);
        assert!((fig(i, "alpha_btreplay") - fig(i, "run_iops") / btreplay_iops).abs() < 1e-9);
        assert!((alpha - fig(i, "run_iops") / fig(i, "replay_iops")).abs() < 1e-9);
        assert!(
            lanes_iops >= 0.98 * causal_iops,
            "{}: lanes {lanes_iops} causal {causal_iops}",
            d["name"]
        );
        assert!(d["replay_realtime_iops"].as_f64().unwrap() > 0.0);
    }
    // SQLite's writers take turns: in the run's own order the HDD is busy all the time, so the
    // causal replay does what the run did.
    assert!(
        fig(1, "alpha_causal") > 0.8,
        "hdd α causal {}",
        fig(1, "alpha_causal")
    );
    // Every device's figures against the baseline's (hdd-10k), each ratio its own division: the
    // baseline's are 1, the flash's IOPS ratio is its IOPS over the HDD's (and above 1).
    let ratios = [
        "randread16k_iops",
        "randread16k_lat_ns",
        "tpmc",
        "run_iops",
        "alpha",
    ];
    for (i, d) in devices.iter().enumerate() {
        for f in ratios {
            let got = d["vs_baseline"][f].as_f64().unwrap();
            let want = fig(i, f) / fig(1, f);
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{}: vs_baseline.{f} = {got}, its {f} over hdd-10k's = {want}",
                d["name"]
            );
        }
    }
    assert!(
        devices[3]["vs_baseline"]["randread16k_iops"]
            .as_f64()
            .unwrap()
            > 1.0
    );
    assert!(
        devices[3]["vs_baseline"]["randread16k_lat_ns"]
            .as_f64()
            .unwrap()
            < 1.0
    );
    let report = std::fs::read_to_string(dir.join("res/report.html")).unwrap();
    assert!(report.contains("<svg") && report.contains("pcie-flash-2012"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn repeated_study_gives_intervals_and_measured_writer_lock_waits() {
    let dir = scratch("repeat");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scale",
            "test",
            "--devices",
            "sata-ssd-2010",
            "--repeat",
            "2",
            "--out",
            "res",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("res/results.json")).unwrap())
            .unwrap();
    let d = &doc["summary"]["devices"][0];
    let rep = &d["repeats"];
    assert_eq!(rep["runs"], 2, "{d}");
    for figure in ["tpmc", "run_iops", "alpha"] {
        let values: Vec<f64> = rep[figure]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(values.len(), 2);
        assert!(values.iter().all(|v| *v > 0.0), "{figure}: {values:?}");
        let mean = rep[figure]["mean"].as_f64().unwrap();
        assert!((mean - (values[0] + values[1]) / 2.0).abs() < 1e-9);
        assert!(
            (d[figure].as_f64().unwrap() - mean).abs() < 1e-9,
            "{figure}"
        );
        // Two runs: t = 12.706 on one degree of freedom, so the half-width is 12.706 × |a−b|/2.
        let ci = rep[figure]["ci95"].as_f64().unwrap();
        assert!((ci - 12.706 * (values[0] - values[1]).abs() / 2.0).abs() < 1e-6 * (1.0 + ci));
    }
    // Each repetition has its own run, trace and replay.
    for f in [
        "sata-ssd-2010.trace",
        "sata-ssd-2010-r2.trace",
        "run-sata-ssd-2010-r2",
    ] {
        assert!(dir.join("res").join(f).exists(), "{f}");
    }
    assert!(stderr.contains("±"), "{stderr}");
    // SQLite's writer lock: measured per transaction type, read-only Stock-Level never waits.
    let run: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("res/run-sata-ssd-2010/result.json")).unwrap(),
    )
    .unwrap();
    let tx = &run["summary"]["tx"];
    assert!(
        tx["new_order"]["writer_lock_wait_ns_mean"]
            .as_f64()
            .unwrap()
            > 0.0,
        "{tx}"
    );
    assert_eq!(
        tx["stock_level"]["writer_lock_wait_ns_mean"].as_f64(),
        Some(0.0)
    );
    assert!(tx["new_order"]["cpu_ns_mean"].as_f64().unwrap() > 0.0);
    let b = &d["breakdown"];
    let share = b["writer_lock_wait_share"].as_f64().unwrap();
    assert!(share > 0.0 && share <= 1.0, "{b}");
    let (io, cpu) = (
        b["holder_io_share"].as_f64().unwrap(),
        b["holder_cpu_share"].as_f64().unwrap(),
    );
    // The I/O's wall time holds the CPU its system calls spend (page-cache copies under
    // `--backing ram`), which the CPU share counts too: a CI run on 2026-11-27, with sata-ssd-2010's
    // flushes filling the holders' time, gave the I/O share at its cap (1.0) and the CPU 0.106.
    assert!(io > 0.0 && cpu > 0.0 && io + cpu <= 1.2, "{b}");
    let report = std::fs::read_to_string(dir.join("res/report.html")).unwrap();
    assert!(report.contains("α ± (95 %)"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_device_lists_are_refused_before_anything_runs() {
    let dir = scratch("bad");
    for (args, expected) in [
        (vec!["study", "--devices", "hdd-10k,,host"], "empty entry"),
        (vec!["study", "--devices", "floppy"], "floppy"),
        (vec!["study", "--devices", "host,host"], "twice"),
        (vec!["study", "--scale", "huge"], "huge"),
        (vec!["study", "--repeat", "0"], "--repeat"),
        (vec!["study", "--pacing", "fast"], "fast"),
        (
            vec!["study", "--server-setting", "synchronous_commit=off"],
            "add --engine postgres or mariadb",
        ),
        (
            vec!["study", "--engine", "postgres", "--server-setting", "fsync"],
            "is not KEY=VALUE",
        ),
        (
            vec![
                "study",
                "--scenario",
                "profiles",
                "--engine",
                "postgres",
                "--server-setting",
                "fsync=off",
            ],
            "is for --scenario s1",
        ),
    ] {
        let out = oltplab(&dir, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(
        !dir.join("oltplab-results").exists(),
        "nothing written for bad input"
    );
    assert!(
        !dir.join("oltplab-data").exists(),
        "nothing written for bad input"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// S1 on a managed PostgreSQL with `--server-setting synchronous_commit=off` at the test scale: the
/// setting reaches the server of the load and of the run (its `env.engine_settings` reports it) and
/// the study's configuration records it.
#[test]
fn s1_server_setting_reaches_the_managed_server() {
    if oltplab_dbs::server::find_program(&["postgres"], None).is_none() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            "postgres is not installed",
        );
        return;
    }
    let dir = scratch("s1-server-setting");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--engine",
            "postgres",
            "--scale",
            "test",
            "--devices",
            "sata-ssd-2010",
            "--server-setting",
            "synchronous_commit=off",
            "--out",
            "res",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let read = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(p)).unwrap()).unwrap()
    };
    let study = read("res/results.json");
    assert_eq!(
        study["config"]["server_settings"],
        serde_json::json!(["synchronous_commit=off"])
    );
    let run = read("res/run-sata-ssd-2010/result.json");
    assert_eq!(
        run["env"]["engine_settings"]["synchronous_commit"], "off",
        "{}",
        run["env"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--scenario s1 --dry-run` applies every option to studies/s1.toml and prints a file that
/// parses, whose cells are what the options say; nothing is made.
#[test]
fn s1_dry_run_prints_its_file_with_every_option_applied() {
    let dir = scratch("s1-dry");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "s1",
            "--scale",
            "test",
            "--devices",
            "hdd-10k,raid10(4,hdd-15k)",
            "--repeat",
            "2",
            "--pacing",
            "spec",
            "--dry-run",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    for line in [
        "devices = [\"hdd-10k\", \"raid10(4,hdd-15k)\"]",
        "repeat = 2",
        "pacing = [\"spec\"]",
        "terminals = [10]",
        "baseline = \"hdd-10k\"",
    ] {
        assert!(stdout.lines().any(|l| l == line), "{line}: {stdout}");
    }
    std::fs::write(dir.join("printed.toml"), &stdout).unwrap();
    let out = oltplab(&dir, &["study", "--file", "printed.toml", "--dry-run"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains("2 cells at scale test"), "{listing}");
    assert!(listing.contains("2 repetitions"), "{listing}");
    for id in [
        "sqlite_hdd-10k_t10_spec",
        "sqlite_raid10_4_hdd-15k_stripe_64k_t10_spec",
    ] {
        assert!(listing.contains(id), "{id}: {listing}");
    }
    let made: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "printed.toml")
        .collect();
    assert!(made.is_empty(), "made {made:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `oltplab study` says first which file it runs; stopped by Ctrl-C in its second device, it
/// keeps the first, and `oltplab study --resume DIR` runs only the second: S1's result with both
/// devices, each device's trace under its name.
#[test]
fn an_interrupted_study_resumes_only_its_unfinished_devices() {
    let dir = scratch("s1-resume");
    let res = dir.join("res");
    let cells = |res: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(res.join("cells"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".json"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let out = common::interrupt_after_first(
        &dir,
        &[
            "study",
            "--scale",
            "test",
            "--devices",
            "sata-ssd-2010,pcie-flash-2012",
            "--out",
            "res",
        ],
        || !cells(&res).is_empty(),
        "device",
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    // First, which file it ran and what it applied.
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with("(running studies/s1.toml with ") && first.contains("scale = \"test\""),
        "{err}"
    );
    assert!(err.contains("oltplab study --resume res"), "{err}");
    let stopped: Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("results.json")).unwrap()).unwrap();
    assert_eq!(stopped["summary"]["scenario"], "s1");
    assert_eq!(stopped["summary"]["interrupted"], true);
    assert_eq!(stopped["summary"]["devices"].as_array().unwrap().len(), 1);
    let kept = cells(&res);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let kept_text = std::fs::read_to_string(res.join("cells").join(&kept[0])).unwrap();
    assert!(res.join("study.toml").is_file());

    let out = oltplab(&dir, &["study", "--resume", "res"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        common::cells_in(&err),
        (
            vec!["pcie-flash-2012".to_string()],
            vec!["sata-ssd-2010".to_string()]
        ),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(res.join("cells").join(&kept[0])).unwrap(),
        kept_text,
        "the kept device's result was rewritten"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("results.json")).unwrap()).unwrap();
    assert_eq!(doc["summary"]["scenario"], "s1");
    assert_eq!(doc["config"]["scenario"], "s1");
    assert_eq!(doc["summary"]["interrupted"], false);
    assert_eq!(doc["summary"]["baseline"], "sata-ssd-2010");
    let devices = doc["summary"]["devices"].as_array().unwrap();
    let names: Vec<&str> = devices
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sata-ssd-2010", "pcie-flash-2012"]);
    for d in devices {
        for f in [
            "randread16k_iops",
            "tpmc",
            "run_iops",
            "replay_iops",
            "alpha",
        ] {
            assert!(d[f].as_f64().unwrap_or(0.0) > 0.0, "{}.{f}", d["name"]);
        }
        assert!(res
            .join(format!("{}.trace", d["name"].as_str().unwrap()))
            .is_file());
    }
    let got = devices[1]["vs_baseline"]["tpmc"].as_f64().unwrap();
    let want = devices[1]["tpmc"].as_f64().unwrap() / devices[0]["tpmc"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-9 * want.max(1.0), "{got} vs {want}");
    assert_eq!(doc["summary"]["cells"].as_array().unwrap().len(), 2);
    // A file whose cells differ in more than the device cannot continue S1's result.
    std::fs::write(
        dir.join("two.toml"),
        "scale = \"test\"\ndevices = [\"sata-ssd-2010\"]\nterminals = [1, 2]\n",
    )
    .unwrap();
    let out = oltplab(&dir, &["study", "--file", "two.toml", "--resume", "res"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("one row per device") && !err.contains("panicked"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A study that fails before its first device finishes (here: PostgreSQL refuses a setting's
/// value at the load) leaves a result that reads as unfinished — `interrupted`, with a warning
/// that says so, also in the report — and `oltplab study --resume DIR` runs its device again
/// (which fails the same way here). It used to read as a finished study of no devices.
#[test]
fn a_study_that_fails_before_its_first_device_reads_as_unfinished_and_resumes() {
    if !common::server_installed("postgres") {
        return;
    }
    let dir = scratch("s1-fails-first");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--engine",
            "postgres",
            "--scale",
            "test",
            "--devices",
            "sata-ssd-2010",
            "--server-setting",
            "work_mem=banana",
            "--out",
            "res",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("work_mem"), "{err}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("res/results.json")).unwrap())
            .unwrap();
    assert_eq!(doc["summary"]["interrupted"], true, "{}", doc["summary"]);
    assert!(doc["summary"]["devices"].as_array().unwrap().is_empty());
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w["kind"] == "interrupted"
            && w["message"]
                .as_str()
                .unwrap()
                .starts_with("unfinished: 0 of 1")),
        "{warnings:?}"
    );
    let report = oltplab(&dir, &["report", "res", "--format", "md"]);
    assert!(report.status.success(), "{}", stderr(&report));
    assert!(
        String::from_utf8_lossy(&report.stdout).contains("unfinished: 0 of 1 devices"),
        "{}",
        String::from_utf8_lossy(&report.stdout)
    );
    let out = oltplab(&dir, &["study", "--resume", "res"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        common::cells_in(&err),
        (vec!["sata-ssd-2010".to_string()], Vec::new()),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
