//! `oltplab crash tpcc` on SQLite: one cut on an honest volatile cache with synchronous=FULL
//! loses no acknowledged commit and breaks nothing; one on a lying cache loses commits; bad input
//! is refused with one sentence and exit code 2.

use std::path::PathBuf;

use crate::common;

use common::{assert_ok, assert_one_line_usage_error, assert_usage_error, json, oltplab, scratch};

#[test]
fn an_honest_cache_loses_nothing_and_a_lying_one_loses_commits() {
    let dir = scratch("crash");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--emulate",
            "sata-ssd-2010",
            "--emulate",
            "sata-ssd-2010{cache=lying}",
            "--cuts",
            "1",
            "--states",
            "2",
            "--duration",
            "2s",
            "--seed",
            "3",
            "--out",
            "out",
        ],
    );
    assert_ok(&out);
    let doc = json(&dir.join("out/result.json"));
    assert_eq!(doc["kind"], "crash");
    // The reports read the config through schema's typed view: what the crash wrote must read.
    let view = oltplab_schema::ConfigView::of(&doc["config"]);
    assert_eq!(
        (
            view.workload.as_deref(),
            view.engine(),
            view.cuts,
            view.states,
            view.seed
        ),
        (Some("tpcc"), Some("sqlite"), Some(1), Some(2), Some(3)),
        "{}",
        doc["config"]
    );
    let rows = doc["summary"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{doc:#}");
    let (honest, lying) = (&rows[0], &rows[1]);
    assert_eq!(honest["cache"], "volatile");
    assert_eq!(lying["cache"], "lying");
    for row in rows {
        assert_eq!(row["cuts"], 1, "{row:#}");
        assert_eq!(row["states"], 2, "{row:#}");
        assert!(row["acknowledged_commits"].as_u64().unwrap() > 0, "{row:#}");
    }
    // Honest flushes and synchronous=FULL: SQLite's recovery finds every acknowledged commit
    // and a consistent database. (A lying cache may also break it, if a checkpoint's pages
    // were lost: no promise, so not asserted.)
    assert_eq!(honest["recoveries_ok"], 2, "{honest:#}");
    assert_eq!(honest["checks_failed"], 0, "{honest:#}");
    assert_eq!(honest["invariants_broken"], 0, "{honest:#}");
    assert_eq!(honest["corrupt_reports"], 0, "{honest:#}");
    assert_eq!(honest["commits_lost"], 0, "{honest:#}");
    assert_eq!(honest["unexpected_states"], 0, "{honest:#}");
    assert!(
        lying["commits_lost"].as_u64().unwrap() > 0,
        "a lying cache's cut lost no acknowledged commit: {lying:#}"
    );
    // Nothing unexpected: what the lying cache did is allowed (no promise), so nothing is kept.
    assert_eq!(doc["warnings"].as_array().unwrap().len(), 0, "{doc:#}");
    assert!(!dir.join("out/sata-ssd-2010-FULL/cut-0").exists());
    assert_eq!(doc["summary"]["states"].as_array().unwrap().len(), 4);
    // The run's own report, and `oltplab report` on its directory: the rows with their promises.
    let html = std::fs::read_to_string(dir.join("out/report.html")).unwrap();
    assert!(
        html.contains("oltplab crash report") && html.contains("Power cuts per device"),
        "report.html does not render the crash result"
    );
    let report = oltplab(&dir, &["report", "out", "--format", "md"]);
    assert_ok(&report);
    let md = String::from_utf8_lossy(&report.stdout);
    assert!(
        md.contains("| sata-ssd-2010 | volatile | synchronous=FULL | nothing lost, nothing broken | as promised |"),
        "{md}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_refused_with_one_sentence() {
    let dir = scratch("crash-usage");
    let out = oltplab(
        &dir,
        &["crash", "tpcc", "--emulate", "hdd-15k{cache=maybe}"],
    );
    assert_one_line_usage_error(
        &out,
        "unknown cache mode 'maybe'; use off, volatile, lying or battery",
    );
    let out = oltplab(&dir, &["crash", "tpcc", "--emulate", "hdd-15k{sector=1k}"]);
    assert_one_line_usage_error(&out, "a sector is 512 or 4k");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "mariadb",
            "--server-setting",
            "synchronous_commit=off",
        ],
    );
    assert_one_line_usage_error(&out, "knows what MariaDB promises for");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "postgres",
            "--sqlite-synchronous",
            "OFF",
        ],
    );
    assert_one_line_usage_error(&out, "--sqlite-synchronous is SQLite's");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--server-setting",
            "synchronous_commit=off",
        ],
    );
    assert_one_line_usage_error(&out, "--server-setting is for --engine postgres or mariadb");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "postgres",
            "--server-setting",
            "work_mem=4MB",
        ],
    );
    assert_one_line_usage_error(&out, "knows what PostgreSQL promises for");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "postgres",
            "--server-setting",
            "fsync=maybe",
        ],
    );
    assert_one_line_usage_error(&out, "fsync takes on, off");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "postgres",
            "--emulate",
            "data=hdd-15k,log=sata-ssd-2010",
        ],
    );
    assert_one_line_usage_error(&out, "a layout is not cut on a server yet");
    let out = oltplab(&dir, &["crash", "tpcc", "--emulate", "host"]);
    assert_one_line_usage_error(&out, "whose cache oltplab cannot cut");
    let out = oltplab(
        &dir,
        &["crash", "tpcc", "--sqlite-synchronous", "SOMETIMES"],
    );
    assert_usage_error(&out, "SOMETIMES");
    let out = oltplab(&dir, &["crash", "tpcc", "--cut-during", "checkpoint"]);
    assert_one_line_usage_error(&out, "--cut-during checkpoint is for --engine postgres");
    let out = oltplab(&dir, &["crash", "tpcc", "--cut-during", "sometime"]);
    assert_usage_error(&out, "sometime");
    let out = oltplab(&dir, &["crash", "payroll"]);
    assert_usage_error(&out, "payroll");
    // MariaDB memory-maps its redo log in /dev/shm: a cut there would lose nothing the device saw.
    let shm = PathBuf::from(format!("/dev/shm/oltplab-it-crash-{}", std::process::id()));
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "mariadb",
            "--out",
            shm.to_str().unwrap(),
        ],
    );
    assert_one_line_usage_error(&out, "MariaDB memory-maps its redo log");
    assert!(!shm.exists(), "nothing written in /dev/shm");
    // Nothing was created by the refusals.
    assert!(!dir.join("oltplab-results").exists());
    // A directory of someone else's inside --out is never written into, --force or not.
    std::fs::create_dir_all(dir.join("theirs/load")).unwrap();
    std::fs::write(dir.join("theirs/load/tpcc.sqlite"), b"not ours").unwrap();
    let out = oltplab(&dir, &["crash", "tpcc", "--out", "theirs", "--force"]);
    assert_one_line_usage_error(&out, "oltplab did not create it");
    assert_eq!(
        std::fs::read(dir.join("theirs/load/tpcc.sqlite")).unwrap(),
        b"not ours"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `oltplab study --scenario power-cut`: the crash matrix of one drive's three cache modes ×
/// SQLite's three synchronous settings, one result and one report; the rows the engine makes a
/// promise for keep it (at the hidden test scale: one cut of one state per row, runs up to 1 s).
#[test]
fn the_power_cut_study_cuts_each_cache_mode_with_each_synchronous_setting() {
    let dir = scratch("study-power-cut");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "power-cut",
            "--scale",
            "test",
            "--out",
            "out",
        ],
    );
    assert_ok(&out);
    let doc = json(&dir.join("out/result.json"));
    assert_eq!(doc["kind"], "crash");
    assert_eq!(doc["config"]["study"], "power-cut");
    let rows = doc["summary"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 9, "{doc:#}");
    for cache in ["volatile", "lying", "battery"] {
        for sync in ["FULL", "NORMAL", "OFF"] {
            let r = rows
                .iter()
                .find(|r| r["cache"] == cache && r["value"] == sync)
                .unwrap_or_else(|| panic!("no {cache} × {sync} row: {doc:#}"));
            assert_eq!(r["cuts"], 1, "{r:#}");
            assert!(r["acknowledged_commits"].as_u64().unwrap() > 0, "{r:#}");
            // A battery-backed cache loses nothing SQLite wrote, whatever it synced; honest
            // flushes with FULL may lose writes after the last sync, never a commit.
            if cache == "battery" {
                assert_eq!(r["lost_writes"], 0, "{r:#}");
            }
            if cache == "battery" || (cache == "volatile" && sync == "FULL") {
                assert_eq!(r["commits_lost"], 0, "{r:#}");
            }
        }
    }
    // Every row kept its promise: no warning, no state kept.
    assert_eq!(doc["warnings"].as_array().unwrap().len(), 0, "{doc:#}");
    assert!(dir.join("out/report.html").is_file());
    // What the scenario does not take is refused in one sentence.
    let out = oltplab(
        &dir,
        &["study", "--scenario", "power-cut", "--pacing", "spec"],
    );
    assert_one_line_usage_error(&out, "--scenario power-cut runs TPC-C without pacing");
    let out = oltplab(
        &dir,
        &[
            "study",
            "--scenario",
            "power-cut",
            "--server-setting",
            "fsync=off",
        ],
    );
    assert_one_line_usage_error(&out, "--server-setting is for --engine postgres or mariadb");
    let out = oltplab(
        &dir,
        &["study", "--scenario", "power-cut", "--devices", "host"],
    );
    assert_one_line_usage_error(&out, "whose cache oltplab cannot cut");
    std::fs::remove_dir_all(&dir).unwrap();
}
