//! `oltplab crash tpcc --engine postgres|mariadb`: a managed server under the emulating shim,
//! killed at each cut and restarted on what the device kept. With honest flushes (a volatile
//! cache that honours them) nothing acknowledged is lost and nothing breaks, with
//! synchronous_commit=off (innodb_flush_log_at_trx_commit=2) the data stays consistent, and a
//! lying cache loses acknowledged commits. The servers are started by oltplab on private sockets
//! and stopped; where one is not installed the test says so and passes (fails under CI and
//! scripts/test.sh).

use crate::common;

use common::{assert_ok, json, oltplab, scratch, server_installed};

#[test]
fn postgres_keeps_every_acknowledged_commit_on_honest_flushes_and_loses_some_on_a_lying_cache() {
    if !server_installed("initdb") {
        return;
    }
    let dir = scratch("crash-postgres");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "postgres",
            "--emulate",
            "sata-ssd-2010",
            "--emulate",
            "sata-ssd-2010{cache=lying}",
            "--server-setting",
            "default",
            "--server-setting",
            "synchronous_commit=off",
            "--cuts",
            "2",
            "--states",
            "2",
            "--duration",
            "3s",
            "--seed",
            "5",
            "--out",
            "out",
        ],
    );
    assert_ok(&out);
    let doc = json(&dir.join("out/result.json"));
    assert_eq!(doc["summary"]["engine"], "postgres");
    let rows = doc["summary"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{doc:#}");
    let row = |cache: &str, setting: &str| {
        rows.iter()
            .find(|r| r["cache"] == cache && r["setting"] == setting)
            .unwrap_or_else(|| panic!("no {cache} × {setting} row: {doc:#}"))
    };
    for r in rows {
        assert_eq!(r["cuts"], 2, "{r:#}");
        assert_eq!(r["states"], 4, "{r:#}");
        assert!(r["acknowledged_commits"].as_u64().unwrap() > 0, "{r:#}");
        // On honest flushes PostgreSQL recovered every state: the WAL it needs is fsynced
        // before any data page that depends on it, or lost with it.
        if r["cache"] == "volatile" {
            assert_eq!(r["recoveries_ok"], 4, "{r:#}");
        }
    }
    // A lying cache may also lose the lock file the run's postmaster wrote and fsynced at its
    // start, when the run wrote less than the cache holds after it ("bogus data in lock file",
    // docs/crash.md): the server then refuses to start. Nothing else may stop it.
    for st in doc["summary"]["states"].as_array().unwrap() {
        if st["recovered"] == false {
            let error = st["error"].as_str().unwrap_or("");
            assert!(
                rows[st["row"].as_u64().unwrap() as usize]["cache"] == "lying"
                    && error.contains("lock file"),
                "{st:#}"
            );
        }
    }
    // Honest flushes and synchronous_commit=on: what PostgreSQL documents, nothing lost, nothing
    // broken — over writes the model could have lost (the undo log caught them).
    let honest = row("volatile", "default");
    for field in [
        "commits_lost",
        "invariants_broken",
        "checks_failed",
        "corrupt_reports",
        "unexpected_states",
    ] {
        assert_eq!(honest[field], 0, "{field}: {honest:#}");
    }
    assert_eq!(honest["expected"], "nothing lost, nothing broken");
    // synchronous_commit=off: commits may be lost (the WAL writer flushes later), never the
    // consistency of the data.
    let async_commit = row("volatile", "synchronous_commit");
    assert_eq!(async_commit["value"], "off");
    assert_eq!(async_commit["invariants_broken"], 0, "{async_commit:#}");
    assert_eq!(async_commit["unexpected_states"], 0, "{async_commit:#}");
    assert_eq!(
        async_commit["expected"],
        "commits may be lost, nothing broken"
    );
    // A lying cache: its flushes made nothing durable, so the run's newest writes, the WAL
    // of acknowledged commits among them, were lost.
    let lying = row("lying", "default");
    assert!(
        lying["pending_writes_mean"].as_f64().unwrap() > 0.0,
        "{lying:#}"
    );
    assert!(lying["lost_writes"].as_u64().unwrap() > 0, "{lying:#}");
    assert!(
        lying["commits_lost"].as_u64().unwrap() > 0,
        "a lying cache's cuts lost no acknowledged commit: {lying:#}"
    );
    assert_eq!(lying["expected"], "no promise");
    // Nothing outside a promise, so no state kept; the cut's copies are gone.
    assert_eq!(doc["warnings"].as_array().unwrap().len(), 0, "{doc:#}");
    assert!(!dir.join("out/sata-ssd-2010-default/cut-0").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mariadb_keeps_every_acknowledged_commit_on_honest_flushes_and_loses_some_on_a_lying_cache() {
    if !server_installed("mariadbd") {
        return;
    }
    let dir = scratch("crash-mariadb");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "mariadb",
            "--emulate",
            "sata-ssd-2010",
            "--emulate",
            "sata-ssd-2010{cache=lying}",
            "--server-setting",
            "default",
            "--server-setting",
            "innodb_flush_log_at_trx_commit=2",
            "--cuts",
            "1",
            "--states",
            "2",
            "--duration",
            "3s",
            "--seed",
            "5",
            "--out",
            "out",
        ],
    );
    assert_ok(&out);
    let doc = json(&dir.join("out/result.json"));
    assert_eq!(doc["summary"]["engine"], "mariadb");
    let rows = doc["summary"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{doc:#}");
    let row = |cache: &str, setting: &str| {
        rows.iter()
            .find(|r| r["cache"] == cache && r["setting"] == setting)
            .unwrap_or_else(|| panic!("no {cache} × {setting} row: {doc:#}"))
    };
    for r in rows {
        assert_eq!(r["states"], 2, "{r:#}");
        assert!(r["acknowledged_commits"].as_u64().unwrap() > 0, "{r:#}");
    }
    let honest = row("volatile", "default");
    for field in [
        "commits_lost",
        "invariants_broken",
        "checks_failed",
        "corrupt_reports",
        "unexpected_states",
    ] {
        assert_eq!(honest[field], 0, "{field}: {honest:#}");
    }
    assert_eq!(honest["recoveries_ok"], 2, "{honest:#}");
    // The undo log gave back what the drive's flushes made durable while the server ran.
    let honest_row = rows.iter().position(|r| std::ptr::eq(r, honest)).unwrap();
    for st in doc["summary"]["states"].as_array().unwrap() {
        if st["row"] != honest_row {
            continue;
        }
        let size = |k: &str| st["undo_log"][k].as_u64().unwrap();
        assert!(size("appended_bytes") > 0, "{st:#}");
        assert!(
            size("given_back_bytes") * 2 >= size("appended_bytes"),
            "the log kept most of itself: {st:#}"
        );
    }
    let relaxed = row("volatile", "innodb_flush_log_at_trx_commit");
    assert_eq!(relaxed["value"], "2");
    assert_eq!(relaxed["expected"], "commits may be lost, nothing broken");
    assert_eq!(relaxed["unexpected_states"], 0, "{relaxed:#}");
    // A lying cache: InnoDB loses acknowledged commits (or cannot start at all, its redo log
    // behind its pages: every acknowledged commit lost with it).
    let lying = row("lying", "default");
    assert!(lying["lost_writes"].as_u64().unwrap() > 0, "{lying:#}");
    assert!(
        lying["commits_lost"].as_u64().unwrap() > 0,
        "a lying cache's cut lost no acknowledged commit: {lying:#}"
    );
    assert_eq!(doc["warnings"].as_array().unwrap().len(), 0, "{doc:#}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 36, item 4: with `innodb_doublewrite=OFF`, 16 KiB pages on a drive of 4 KiB sectors and
/// the cut inside a flush of the buffer pool, a page write is torn and InnoDB's recovery finds
/// the page corrupt (it refuses to start: "Unable to apply log to corrupted page", or a checksum
/// mismatch in the data file). The seed draws cuts early in the flush, so that page writes are
/// pending when the power goes.
#[test]
fn mariadb_without_doublewrite_reports_a_page_the_cut_tore() {
    if !server_installed("mariadbd") {
        return;
    }
    let dir = scratch("crash-mariadb-torn");
    let out = oltplab(
        &dir,
        &[
            "crash",
            "tpcc",
            "--engine",
            "mariadb",
            "--emulate",
            "sata-ssd-2010{sector=4k}",
            "--server-setting",
            "innodb_doublewrite=off",
            "--cut-during",
            "checkpoint",
            "--cuts",
            "2",
            "--states",
            "2",
            "--duration",
            "3s",
            "--seed",
            SEED,
            "--out",
            "out",
        ],
    );
    assert_ok(&out);
    let doc = json(&dir.join("out/result.json"));
    assert_eq!(doc["config"]["cut_during"], "checkpoint");
    let row = &doc["summary"]["rows"][0];
    assert_eq!(row["sector_bytes"], 4096, "{row:#}");
    assert_eq!(row["expected"], "no promise");
    let states = doc["summary"]["states"].as_array().unwrap();
    for st in states {
        assert!(
            st["cut_into_checkpoint_s"].as_f64().is_some(),
            "every cut came inside a checkpoint: {st:#}"
        );
    }
    // A torn write was drawn, and a state with one had InnoDB report the damage, its lines kept.
    let torn: Vec<&serde_json::Value> = states
        .iter()
        .filter(|s| s["torn_writes"].as_u64().unwrap() > 0)
        .collect();
    assert!(!torn.is_empty(), "no state tore a write: {doc:#}");
    let reported = torn
        .iter()
        .find(|s| s["corrupt_reports"].as_u64().unwrap() > 0)
        .unwrap_or_else(|| panic!("InnoDB reported none of the torn pages: {doc:#}"));
    let lines = reported["corrupt_lines"].as_array().unwrap();
    assert!(
        lines.iter().any(|l| {
            let l = l.as_str().unwrap().to_lowercase();
            l.contains("corrupt") || l.contains("checksum mismatch")
        }),
        "{reported:#}"
    );
    // Without the doublewrite buffer nothing is restored.
    assert_eq!(row["pages_repaired"], 0, "{row:#}");
    assert!(row["corrupt_reports"].as_u64().unwrap() > 0, "{row:#}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The seed of the torn-page test's cuts (each waits for four pending page writes as well).
const SEED: &str = "1";
