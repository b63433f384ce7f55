//! `oltplab report`, `merge`, `completions` and `man` as a user meets them: the real binary on real
//! device results.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_one_line_usage_error, assert_usage_error, json, oltplab, scratch, stderr};
use serde_json::Value;

/// A short real device measurement into `dir/<name>`.
fn device(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let data = format!("{name}.dat");
    let mut args = vec![
        "device",
        &data,
        "--runtime",
        "300ms",
        "--ramp",
        "0s",
        "--size",
        "16m",
        "--out",
        name,
    ];
    args.extend_from_slice(extra);
    let out = oltplab(dir, &args);
    assert!(out.status.success(), "device failed: {}", stderr(&out));
    dir.join(name).join("result.json")
}

#[test]
fn reports_in_every_format_from_a_real_result() {
    let dir = scratch("formats");
    let sweep = device(&dir, "sweep", &["--sweep-qd", "1:4"]);
    let mixed = device(&dir, "mixed", &["--rw", "randrw", "--qd", "4"]);
    // The reports read the config through schema's typed view: what the device wrote must read.
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&sweep).unwrap()).unwrap();
    let view = oltplab_schema::ConfigView::of(&doc["config"]);
    assert_eq!(view.queue_depths, [1, 2, 4], "{}", doc["config"]);
    assert!(
        view.engine().is_some() && view.workloads.len() == 1,
        "{}",
        doc["config"]
    );

    // HTML by default, to ./report.html, from an output directory.
    let out = oltplab(&dir, &["report", "sweep"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("IOPS by queue depth"));
    assert!(stderr(&out).contains("written to report.html"));

    // A comparison; the labels are the output directories' names.
    let out = oltplab(
        &dir,
        &["report", "sweep", mixed.to_str().unwrap(), "-o", "cmp.html"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let cmp = std::fs::read_to_string(dir.join("cmp.html")).unwrap();
    assert!(cmp.contains("Comparison of 2 device results"));
    assert!(cmp.contains("Device: mixed"));

    // Markdown goes to standard output; its IOPS is the result's.
    let out = oltplab(&dir, &["report", sweep.to_str().unwrap(), "--format", "md"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let md = String::from_utf8(out.stdout).unwrap();
    let iops = json(&sweep)["summary"]["iops"].as_f64().unwrap();
    let shown = oltplab_core_format_count(iops);
    assert!(
        md.contains(&format!("| IOPS, all points | {shown} |")),
        "{shown} not in {md}"
    );

    // CSV from -o's extension, raw numbers.
    let out = oltplab(&dir, &["report", "mixed", "-o", "mixed.csv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = std::fs::read_to_string(dir.join("mixed.csv")).unwrap();
    let ios = json(&mixed)["summary"]["write"]["ios"].as_u64().unwrap();
    assert!(csv.starts_with("result,kind,table,row,column,value\n"));
    assert!(
        csv.contains(&format!(",device,run,write_ios,value,{ios}\n")),
        "{csv}"
    );

    // A report oltplab wrote is replaced; anything else only with --force.
    let again = oltplab(&dir, &["report", "sweep"]);
    assert!(again.status.success(), "{}", stderr(&again));
    std::fs::write(dir.join("notes.html"), "mine").unwrap();
    assert_usage_error(
        &oltplab(&dir, &["report", "sweep", "-o", "notes.html"]),
        "was not written by oltplab",
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.html")).unwrap(),
        "mine"
    );
    let forced = oltplab(&dir, &["report", "sweep", "-o", "notes.html", "--force"]);
    assert!(forced.status.success());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `12,346` as the reports print counts.
fn oltplab_core_format_count(v: f64) -> String {
    let digits = format!("{:.0}", v);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn bad_input_is_one_sentence_and_exit_code_2() {
    let dir = scratch("bad");
    std::fs::write(dir.join("broken.json"), "{").unwrap();
    std::fs::write(dir.join("other.json"), r#"{"name": "not a result"}"#).unwrap();
    std::fs::write(
        dir.join("future.json"),
        r#"{"schema": "oltplab.result/7", "kind": "run"}"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["report", "missing.json"], "cannot read missing.json"),
        (&["report", "broken.json"], "broken.json is not JSON"),
        (
            &["report", "other.json"],
            "other.json is not an oltplab result",
        ),
        (&["report", "future.json"], "oltplab.result/7"),
        (&["report", "empty"], "without result.json"),
        (&["report", "other.json", "--format", "pdf"], "html"),
        (&["report"], "RESULT"),
        (
            &["merge", "other.json", "other.json", "-o", "m.json"],
            "is named twice",
        ),
        (&["merge", "broken.json"], "2 values required"),
        (&["man", "nosuch"], "there is no command 'nosuch'"),
        (&["completions", "tcsh"], "bash"),
    ];
    for (args, expected) in cases {
        assert_usage_error(&oltplab(&dir, args), expected);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merging_two_drivers_that_ran_at_once_equals_their_sum() {
    let dir = scratch("merge");
    // Two "drivers" measuring at the same time, as two machines would: both start measuring at
    // one --start-at, a few seconds ahead (time to start and fill on a busy machine), not
    // whenever each process gets there.
    let start_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 5;
    let start_at = start_at.to_string();
    let spawn = |name: &str| {
        Command::new(env!("CARGO_BIN_EXE_oltplab"))
            .current_dir(&dir)
            .args([
                "device",
                &format!("{name}.dat"),
                "--start-at",
                &start_at,
                "--runtime",
                "1s",
                "--ramp",
                "0s",
                "--size",
                "16m",
                "--qd",
                "4",
                "--out",
                name,
            ])
            .output()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| spawn("a"));
        let b = s.spawn(|| spawn("b"));
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    assert!(
        a.status.success() && b.status.success(),
        "{}{}",
        stderr(&a),
        stderr(&b)
    );
    let out = oltplab(&dir, &["merge", "a", "b/result.json", "-o", "merged.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("2 device results merged into merged.json"));
    let (ja, jb, m) = (
        json(&dir.join("a/result.json")),
        json(&dir.join("b/result.json")),
        json(&dir.join("merged.json")),
    );
    assert_eq!(m["kind"], "merge");
    assert_eq!(m["config"]["merged_kind"], "device");
    // Each measured from the agreed time.
    let started = |v: &Value| {
        let t = v["summary"]["measure_started_at"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            t.as_str() >= ja["config"]["start_at"].as_str().unwrap(),
            "{t}"
        );
        t
    };
    let (sa, sb) = (started(&ja), started(&jb));
    assert_eq!(
        sa[..19],
        sb[..19],
        "both started in the same second: {sa} {sb}"
    );
    assert_eq!(m["config"]["parts"][1]["file"], "b/result.json");
    let u = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_u64).unwrap();
    for p in [
        "/summary/read/ios",
        "/summary/read/bytes",
        "/summary/write/ios",
    ] {
        assert_eq!(u(&m, p), u(&ja, p) + u(&jb, p), "{p}");
    }
    let f = |v: &Value, p: &str| v.pointer(p).and_then(Value::as_f64).unwrap();
    let iops = f(&ja, "/summary/iops") + f(&jb, "/summary/iops");
    assert!((f(&m, "/summary/iops") - iops).abs() < 1e-6);
    // Percentiles of the merged histogram lie between the parts' (they cover both).
    let (pa, pb, pm) = (
        f(&ja, "/summary/read/lat_ns/p99"),
        f(&jb, "/summary/read/lat_ns/p99"),
        f(&m, "/summary/read/lat_ns/p99"),
    );
    assert!(pm >= pa.min(pb) && pm <= pa.max(pb), "{pa} {pb} {pm}");
    assert_eq!(
        f(&m, "/summary/read/lat_ns/max"),
        f(&ja, "/summary/read/lat_ns/max").max(f(&jb, "/summary/read/lat_ns/max"))
    );
    // They ran at once, so no window warning.
    assert!(
        !m["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "windows_not_aligned"),
        "{}",
        m["warnings"]
    );
    // merge refuses to overwrite a file oltplab did not write.
    std::fs::write(dir.join("precious.json"), "{}").unwrap();
    assert_usage_error(
        &oltplab(&dir, &["merge", "a", "b", "-o", "precious.json"]),
        "was not written by oltplab",
    );
    // And the merged result is a report like any other.
    let out = oltplab(&dir, &["report", "merged.json", "--format", "md"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Merged from 2 results"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn completions_and_man_page_come_from_the_command_line_definition() {
    let dir = scratch("docs");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = oltplab(&dir, &["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", stderr(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        for word in ["report", "merge", "sweep-qd"] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
    let out = oltplab(&dir, &["man"]);
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH oltplab 1"), "{page}");
    assert!(page.contains("oltplab\\-report(1)"));
    let out = oltplab(&dir, &["man", "report"]);
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.contains(".TH oltplab\\-report 1") || page.contains(".TH oltplab-report 1"),
        "{page}"
    );
    assert!(page.contains("\\-\\-format"));
    assert!(page.contains("Examples:"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `oltplab report DIR --by AXIS[,AXIS]` on a study file's stored results: the charts run along the
/// axes named; a bad axis, or --by on a result without cells, is one sentence and exit code 2.
#[test]
fn report_by_picks_a_study_files_chart_axes() {
    let dir = scratch("by");
    let study = dir.join("study");
    std::fs::create_dir_all(&study).unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/study-file.json");
    std::fs::copy(&fixture, study.join("results.json")).unwrap();
    let run =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/run-tpcc-ramp.json");
    std::fs::copy(&run, dir.join("run.json")).unwrap();

    let out = oltplab(
        &dir,
        &[
            "report",
            "study",
            "--by",
            "terminals,device",
            "-o",
            "by.html",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.join("by.html")).unwrap();
    assert!(html.contains(">tpmC by terminals</title>"), "{html}");
    assert!(html.contains(">device pcie-flash-2012</text>"), "{html}");
    let out = oltplab(&dir, &["report", "study", "-o", "default.html"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(dir.join("default.html")).unwrap();
    assert!(html.contains(">tpmC by device</title>"), "{html}");

    let cases: &[(&[&str], &str)] = &[
        (
            &["report", "study", "--by", "users"],
            "`users` is not an axis",
        ),
        (&["report", "study", "--by", "device,device"], "named twice"),
        (&["report", "run.json", "--by", "device"], "drop --by"),
    ];
    for (args, expected) in cases {
        assert_usage_error(&oltplab(&dir, args), expected);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A result of another version or tool whose fields do not read is refused by `report` and
/// `merge` with one sentence naming the field, exit code 2 — never rendered as "—".
#[test]
fn a_result_with_a_renamed_field_is_refused_naming_it() {
    let dir = scratch("renamed");
    let real = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schema/tests/fixtures/run-tpcc-sqlite-hdd-10k.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(real).unwrap()).unwrap();
    // A renamed envelope field, and (in another file) one of the environment's.
    let mut renamed = v.clone();
    let started = renamed["started_at"].take();
    renamed.as_object_mut().unwrap().remove("started_at");
    renamed["started"] = started;
    std::fs::write(dir.join("renamed.json"), renamed.to_string()).unwrap();
    v["env"].as_object_mut().unwrap().remove("hostname");
    std::fs::write(dir.join("no-host.json"), v.to_string()).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["report", "renamed.json"],
            "renamed.json has no readable field `started_at` (missing)",
        ),
        (
            &["report", "no-host.json", "--format", "md"],
            "`env.hostname`",
        ),
        (
            &["merge", "renamed.json", "no-host.json", "-o", "m.json"],
            "`started_at`",
        ),
    ];
    for (args, expected) in cases {
        assert_one_line_usage_error(&oltplab(&dir, args), expected);
    }
    assert!(!dir.join("m.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Replays, storage and cluster studies are read through their types too: a real one with a field
/// removed or of another type is refused by `report` with one sentence naming it, exit code 2, and
/// the real one renders.
#[test]
fn a_replay_or_study_with_a_broken_field_is_refused_naming_it() {
    let dir = scratch("broken-kinds");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(here.join(path)).unwrap()).unwrap()
    };
    let replay = read("../schema/tests/fixtures/replay-hdd-10k.json");
    let placement = read("../report/tests/fixtures/study-placement.json");
    let cluster = read("../report/tests/fixtures/study-cluster.json");
    for (name, doc) in [
        ("replay.json", &replay),
        ("placement.json", &placement),
        ("cluster.json", &cluster),
    ] {
        std::fs::write(dir.join(name), doc.to_string()).unwrap();
        let out = oltplab(&dir, &["report", name, "--format", "md", "-o", "-"]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
    }
    let mut bad = replay;
    bad["summary"].as_object_mut().unwrap().remove("iops");
    std::fs::write(dir.join("bad-replay.json"), bad.to_string()).unwrap();
    let mut bad = placement;
    bad["summary"]["configs"][1]["io_iops"] = "lots".into();
    std::fs::write(dir.join("bad-placement.json"), bad.to_string()).unwrap();
    let mut bad = cluster;
    bad["summary"]["rows"][0]
        .as_object_mut()
        .unwrap()
        .remove("cpu_utilisation");
    std::fs::write(dir.join("bad-cluster.json"), bad.to_string()).unwrap();
    for (file, expected) in [
        (
            "bad-replay.json",
            "bad-replay.json has no readable field `summary.iops` (missing)",
        ),
        ("bad-placement.json", "`summary.configs[1]"),
        (
            "bad-cluster.json",
            "has no readable field `summary.rows[0].cpu_utilisation` (missing)",
        ),
    ] {
        assert_one_line_usage_error(&oltplab(&dir, &["report", file]), expected);
    }
    assert!(!dir.join("report.html").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs are read through their types: `report` of a real run whose New-Order entry lost its
/// count, or whose tpmC is text, exits 2 with one sentence naming the field and writes nothing;
/// the real one renders.
#[test]
fn a_run_with_a_broken_field_is_refused_naming_it() {
    let dir = scratch("broken-run");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run: Value = serde_json::from_str(
        &std::fs::read_to_string(
            here.join("../schema/tests/fixtures/run-tpcc-sqlite-hdd-10k.json"),
        )
        .unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let out = oltplab(&dir, &["report", "run.json", "--format", "md", "-o", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut no_count = run.clone();
    no_count["summary"]["tx"]["new_order"]
        .as_object_mut()
        .unwrap()
        .remove("count");
    std::fs::write(dir.join("no-count.json"), no_count.to_string()).unwrap();
    assert_one_line_usage_error(
        &oltplab(&dir, &["report", "no-count.json"]),
        "no-count.json has no readable field `summary.tx.new_order.count` (missing)",
    );
    let mut text = run;
    text["summary"]["tpmc"] = "fast".into();
    std::fs::write(dir.join("text.json"), text.to_string()).unwrap();
    assert_one_line_usage_error(
        &oltplab(&dir, &["report", "text.json", "--format", "csv"]),
        "text.json has no readable field `summary.tpmc` (invalid type: string \"fast\"",
    );
    assert!(!dir.join("report.html").exists());
    assert!(!dir.join("report.csv").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A study file's cells are read through their types: `report` of a real one whose cell lost its
/// id exits 2 with one sentence naming the field and writes nothing.
#[test]
fn a_study_files_cell_without_its_id_is_refused_naming_it() {
    let dir = scratch("broken-cells");
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut study: Value = serde_json::from_str(
        &std::fs::read_to_string(here.join("../report/tests/fixtures/study-file.json")).unwrap(),
    )
    .unwrap();
    study["summary"]["cells"][0]
        .as_object_mut()
        .unwrap()
        .remove("id");
    std::fs::write(dir.join("cells.json"), study.to_string()).unwrap();
    assert_one_line_usage_error(
        &oltplab(&dir, &["report", "cells.json", "--by", "terminals"]),
        "cells.json has no readable field `summary.cells[0].id` (missing)",
    );
    assert!(!dir.join("report.html").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
