//! `oltplab devices` and `oltplab device --emulate` as a user meets them: the real binary.

mod common;

use std::path::PathBuf;

use common::{assert_one_line_usage_error as assert_usage_error, oltplab, scratch};
use serde_json::Value;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn the_catalogue_lists_every_device_with_sources() {
    let dir = scratch("devices");
    let out = oltplab(&dir, &["devices"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    for name in [
        "hdd-15k",
        "hdd-10k",
        "hdd-7.2k",
        "sata-ssd-2010",
        "sas-ssd-2012",
        "pcie-flash-2012",
        "nvme-gen4",
        "optane",
        "ram",
        "host",
    ] {
        assert!(listing.contains(&format!("{name}  —")), "{name} missing");
    }
    assert!(listing.contains("Sources:") && listing.contains("Ruemmler"));
    assert!(listing.contains("seek_avg_ms"));

    let out = oltplab(&dir, &["devices", "--json"]);
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = v.as_array().unwrap();
    assert_eq!(list.len(), 10);
    for e in list {
        for p in e["params"].as_array().unwrap() {
            assert!(!p["source"].as_str().unwrap().is_empty());
        }
    }
    let hdd = list.iter().find(|e| e["name"] == "hdd-15k").unwrap();
    let lat = hdd["model"]["randread16k_qd1_lat_ns"].as_f64().unwrap();
    assert!((5.0e6..6.5e6).contains(&lat), "{lat}");

    // A composition shows what the model makes of it.
    let out = oltplab(&dir, &["devices", "raid10(4,hdd-15k)"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).contains("raid10(4,hdd-15k,stripe=64k)"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_specs_say_where_and_why() {
    let dir = scratch("emulate-bad");
    assert_usage_error(
        &oltplab(&dir, &["devices", "floppy"]),
        "unknown device 'floppy'",
    );
    assert_usage_error(
        &oltplab(&dir, &["device", "--emulate", "raid5(2,hdd-15k)"]),
        "column 7: raid5 needs at least 3 disks",
    );
    assert_usage_error(
        &oltplab(&dir, &["device", "--emulate", "wbcache(hdd-15k,size=2t)"]),
        "larger than its",
    );
    assert_usage_error(
        &oltplab(&dir, &["device", "--emulate", "hdd-15k{rpm=}"]),
        "expected a non-negative number",
    );
    assert_usage_error(
        &oltplab(&dir, &["device", "--backing", "ram"]),
        "only applies to an emulated device",
    );
    assert_usage_error(
        &oltplab(
            &dir,
            &[
                "device",
                "x.dat",
                "--emulate",
                "hdd-15k",
                "--backing",
                "ram",
            ],
        ),
        "takes no TARGET",
    );
    assert_usage_error(
        &oltplab(&dir, &["device", "--emulate", "ram", "--size", "100g"]),
        "larger than the emulated",
    );
    // Nothing was created for the refused runs.
    assert!(!dir.join("oltplab-data").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_emulated_hdd_runs_at_its_modelled_pace_and_reports_fidelity() {
    let dir = scratch("emulate-hdd");
    let out = oltplab(
        &dir,
        &[
            "device",
            "--emulate",
            "hdd-15k",
            "--size",
            "64m",
            "--qd",
            "4",
            "--runtime",
            "1500ms",
            "--ramp",
            "300ms",
            "--json",
            "r.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(v["config"]["emulate"], "hdd-15k");
    assert_eq!(v["config"]["backing"], "ram");
    let e = &v["summary"]["emulation"];
    assert_eq!(e["spec"], "hdd-15k");
    let point = &e["points"][0];
    let iops = v["summary"]["iops"].as_f64().unwrap();
    let model = point["model_iops"].as_f64().unwrap();
    // The model's own closed loop at QD 4 over the same region. The tolerance is the emulation's
    // claimed accuracy (realised within 1 % of the model: bench/device-emulation) plus the noise of
    // ~400 random I/Os against the model's 20,000 (service times vary by ~40 %: 2 % as one
    // standard deviation of the mean, so 6 % at three).
    assert!((iops / model - 1.0).abs() < 0.07, "{iops} vs model {model}");
    let f = &e["fidelity"];
    assert!(f["ios"].as_u64().unwrap() > 100);
    let modelled = f["modelled_lat_ns_mean"].as_f64().unwrap();
    let realised = f["realised_lat_ns_mean"].as_f64().unwrap();
    assert!(realised >= modelled, "completions are never early");
    assert_eq!(f["early_pct"], 0.0, "{f}");
    // Milliseconds per I/O: a busy test machine's wake-up lateness (tens of µs) is far inside the
    // tail's tolerance, so the distribution must match, not only the mean.
    assert!(f["p99_off_pct"].as_f64().unwrap().abs() <= 25.0, "{f}");
    assert!(f["late_pct"].as_f64().unwrap() <= 10.0, "{f}");
    // The RAM backing is gone.
    let err = text(&out.stderr);
    assert!(err.contains("emulating hdd-15k"), "{err}");
    let shm = err
        .lines()
        .find_map(|l| l.strip_prefix("target "))
        .and_then(|l| l.split(' ').next())
        .map(PathBuf::from)
        .expect("the target line");
    assert!(shm.starts_with("/dev/shm"), "{}", shm.display());
    assert!(
        !shm.parent().unwrap().exists(),
        "{} was left behind",
        shm.display()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn null_engine_gives_the_model_alone_and_writes_nothing() {
    let dir = scratch("emulate-null");
    let out = oltplab(
        &dir,
        &[
            "device",
            "--engine",
            "null",
            "--emulate",
            "raid5(4,hdd-15k)",
            "--rw",
            "randwrite",
            "--qd",
            "16",
            "--runtime",
            "1s",
            "--ramp",
            "200ms",
            "--json",
            "r.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    assert_eq!(v["config"]["backing"], "none");
    assert_eq!(v["config"]["emulate"], "raid5(4,hdd-15k,stripe=64k)");
    let iops = v["summary"]["iops"].as_f64().unwrap();
    // Four disks, four I/Os per small write: a few hundred IOPS at most.
    assert!((50.0..600.0).contains(&iops), "{iops}");
    assert!(
        !dir.join("oltplab-data").exists(),
        "no target for the null engine"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every device says what a power cut does to it: its catalogue default, or the spec's cache=.
#[test]
fn each_device_says_what_a_power_cut_loses() {
    let dir = scratch("devices-power-cut");
    let out = oltplab(
        &dir,
        &["devices", "sata-ssd-2010{cache=lying,sector=4k}", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["durability"]["cache"], "lying", "{v}");
    assert_eq!(v["durability"]["sector_bytes"], 4096, "{v}");
    assert_eq!(v["durability"]["cache_bytes"], 16 << 20, "{v}");
    let out = oltplab(&dir, &["devices", "pcie-flash-2012"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("power cut: cache=battery (64m), sector=512: the cache survives a cut"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
