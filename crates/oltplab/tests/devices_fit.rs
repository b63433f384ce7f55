//! `oltplab devices fit`: fitting the flash model to an emulated catalogue device (RAM-backed, so
//! the test runs anywhere) gives back that device's curves within the fit error it prints; bad
//! input is one sentence and exit code 2.

mod common;

use common::{assert_one_line_usage_error as assert_usage_error, json, oltplab, scratch, stderr};
use oltplab_devmodel::parse_spec;
use oltplab_devmodel::sim::ClosedLoop;

/// The size of the measured region, and of the simulated one.
const REGION: u64 = 256 << 20;

/// What the model of `spec` gives at a point of the fit: (IOPS, mean latency).
fn model(spec: &str, op: &str, bs: u64, qd: u32) -> (f64, f64) {
    let spec = parse_spec(spec).unwrap();
    let mut lp = match op {
        "commit" => ClosedLoop::commits(bs),
        _ => ClosedLoop::random_reads(bs, qd),
    };
    match op {
        "randwrite" => lp.read_pct = 0,
        "randrw" => lp.read_pct = 70,
        _ => {}
    }
    lp.region_bytes = REGION;
    lp.stroke_bytes = REGION;
    lp.ios = 20_000;
    let r = lp.run(&spec).unwrap();
    (r.iops, r.lat_ns_mean)
}

#[test]
fn fitting_an_emulated_device_recovers_its_curves() {
    let dir = scratch("devices-fit");
    let given = "sata-ssd-2010";
    let out = oltplab(
        &dir,
        &[
            "devices",
            "fit",
            "--emulate",
            given,
            "--bs",
            "16k",
            "--sweep-qd",
            "1,16",
            "--runtime",
            "500ms",
            "--ramp",
            "150ms",
            "--size",
            "256m",
            "--sim-ios",
            "500",
            "--max-evals",
            "1500",
            "--out",
            "fitted.spec",
            "--json",
            "fit.json",
            "--results",
            "res",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The spec is the only line on standard output, and the file holds the same.
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let fitted = stdout.trim().to_string();
    assert_eq!(
        std::fs::read_to_string(dir.join("fitted.spec"))
            .unwrap()
            .trim(),
        fitted
    );
    assert!(fitted.starts_with("sata-ssd-2010{"), "{fitted}");
    parse_spec(&fitted).expect("the fitted spec parses");
    assert!(err.contains("fit error:"), "{err}");

    let doc = json(&dir.join("fit.json"));
    assert_eq!(doc["schema"], "oltplab.result/1");
    assert_eq!(doc["kind"], "devices-fit");
    let s = &doc["summary"];
    assert_eq!(s["spec"], fitted.as_str());
    assert_eq!(s["emulated"], given);
    let points = s["points"].as_array().unwrap();
    assert_eq!(
        points.len(),
        8,
        "3 patterns × 1 size × 2 depths + commits after 8 and 128 KiB"
    );
    let printed = s["fit_error"]["rms_log"].as_f64().unwrap();
    // Five runs of these points gave 0.060–0.113 (6.2–12.0 %, 2026-11-28); until then the search's
    // first start guessed the write acknowledgement from the random write's latency, and the fit
    // ended at 0.22–0.25.
    assert!(
        printed < 0.20,
        "the fit should reproduce an emulated catalogue device: {printed}"
    );
    for m in s["measurements"].as_array().unwrap() {
        assert!(dir.join("res").join(m.as_str().unwrap()).is_file(), "{m}");
    }

    // The fitted model against the given one, computed here by devmodel's own closed loop (not
    // the fit's simulation). The fit reproduces what was measured (its printed error); the live
    // emulation that was measured may itself be off the given model on a busy machine (its
    // distance from the model is computed here too). So the fitted curves must lie within the
    // printed fit error plus the emulation's own error (and 5 % for the two simulations' warm-up)
    // of the given device's: a fit that simulated other points than it measured, or printed
    // another spec than it fitted, fails this.
    let (mut fitted_vs_given, mut measured_vs_given) = (Vec::new(), Vec::new());
    for p in points {
        let (op, bs, qd) = (
            p["op"].as_str().unwrap(),
            p["block_size_bytes"].as_u64().unwrap(),
            p["qd"].as_u64().unwrap() as u32,
        );
        let (fi, fl) = model(&fitted, op, bs, qd);
        let (gi, gl) = model(given, op, bs, qd);
        let (mi, ml) = (
            p["measured"]["iops"].as_f64().unwrap(),
            p["measured"]["lat_ns"].as_f64().unwrap(),
        );
        fitted_vs_given.push((fi / gi).ln());
        measured_vs_given.push((mi / gi).ln());
        // ClosedLoop's commit latency is the append's, the fit's the flush's, and its mixed
        // latency all I/Os', the fit's the reads': IOPS only there.
        if op != "commit" && op != "randrw" {
            fitted_vs_given.push((fl / gl).ln());
            measured_vs_given.push((ml / gl).ln());
        }
        eprintln!(
            "{op} {bs} QD {qd}: given {gi:.0} IOPS {gl:.0} ns, measured {mi:.0} IOPS {ml:.0} ns, fitted {fi:.0} IOPS {fl:.0} ns"
        );
    }
    eprintln!("fitted: {fitted}, fit error {printed:.3}");
    let rms = |v: &[f64]| (v.iter().map(|l| l * l).sum::<f64>() / v.len() as f64).sqrt();
    let (fg, mg) = (rms(&fitted_vs_given), rms(&measured_vs_given));
    assert!(
        fg <= printed + mg + 0.05,
        "fitted vs given: RMS log ratio {fg:.3}; printed fit error {printed:.3}, emulation vs its model {mg:.3}: {fitted}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_one_sentence_and_exit_code_2() {
    let dir = scratch("devices-fit-bad");
    for (args, expected) in [
        (&["--rw", "seqread"][..], "--rw 'seqread'"),
        (&["--bs", "1000"][..], "--bs '1000'"),
        (&["--sweep-qd", "8:2"][..], "--sweep-qd"),
        (&["--sweep-qd", "1:4096"][..], "beyond queue depth 1024"),
        (&["--emulate", "floppy"][..], "unknown device 'floppy'"),
        (&["--emulate", "host"][..], "--emulate host"),
        (&["--base", "hdd-15k"][..], "not a flash device"),
        (
            &["x.dat", "--emulate", "sata-ssd-2010"][..],
            "takes no TARGET",
        ),
        (
            &["--emulate", "ram", "--size", "100g"][..],
            "larger than the emulated",
        ),
        (
            &["--emulate", "ram", "--trace", "no-such.trace"][..],
            "--trace no-such.trace",
        ),
        (
            &["--emulate", "ram", "--trace-weight", "0"][..],
            "--trace-weight 0",
        ),
    ] {
        let mut argv = vec!["devices", "fit"];
        argv.extend_from_slice(args);
        assert_usage_error(&oltplab(&dir, &argv), expected);
    }
    // Nothing was measured or created for the refused runs.
    assert!(!dir.join("oltplab-data").exists());
    assert!(!dir.join("oltplab-results").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
