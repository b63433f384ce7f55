//! Opens reports in headless Chromium (Debian's `chromium`, which scripts/test.sh installs): every
//! chart must lay out with visible marks, and a screenshot of each report is kept under
//! `target/report-artifacts/` for a person to look at.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("oltplab-it-browser-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Runs headless Chromium on `page` with its own profile directory (parallel runs do not share one).
fn browser(chrome: &Path, profile: &Path, args: &[&str], page: &Path) -> std::process::Output {
    Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--allow-file-access-from-files",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium")
}

fn artifacts_dir() -> PathBuf {
    // target/debug/oltplab → target/report-artifacts
    let exe = Path::new(env!("CARGO_BIN_EXE_oltplab"));
    let dir = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("report-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Measures each chart after layout: how many of its marks have a non-empty box. The script goes
/// into a copy of the report only; reports themselves carry no script.
const PROBE: &str = r#"<script>
window.addEventListener('load', () => {
  const out = [];
  for (const svg of document.querySelectorAll('svg.chart')) {
    const box = svg.getBoundingClientRect();
    let visible = 0;
    for (const m of svg.querySelectorAll('.mark')) {
      const b = m.getBBox();
      if (b.width > 0 || b.height > 0) visible++;
    }
    out.push({id: svg.id, declared: +svg.dataset.marks, visible, w: box.width, h: box.height});
  }
  const pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"#;

fn check_report(chrome: &Path, dir: &Path, html: &Path, name: &str, min_charts: usize) {
    let text = std::fs::read_to_string(html).unwrap();
    let probe_page = dir.join(format!("{name}-probe.html"));
    std::fs::write(
        &probe_page,
        text.replace("</body>", &format!("{PROBE}</body>")),
    )
    .unwrap();
    let out = browser(
        chrome,
        &dir.join("profile-dom"),
        &["--dump-dom"],
        &probe_page,
    );
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"probe\">").expect("the probe ran") + "<pre id=\"probe\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let charts: Vec<serde_json::Value> = serde_json::from_str(
        &dom[start..end]
            .replace("&amp;", "&")
            .replace("&quot;", "\""),
    )
    .unwrap();
    assert!(
        charts.len() >= min_charts,
        "{name}: {} charts",
        charts.len()
    );
    for c in &charts {
        let (declared, visible) = (
            c["declared"].as_u64().unwrap(),
            c["visible"].as_u64().unwrap(),
        );
        assert!(declared > 0, "{name}: chart {} has no data", c["id"]);
        assert_eq!(
            visible, declared,
            "{name}: chart {} shows {visible} of {declared} marks",
            c["id"]
        );
        assert!(
            c["w"].as_f64().unwrap() > 300.0 && c["h"].as_f64().unwrap() > 150.0,
            "{c}"
        );
    }
    // A phone-sized and a desktop screenshot of the report as users get it.
    for (label, size) in [("desktop", "1280,2400"), ("phone", "390,2400")] {
        let png = artifacts_dir().join(format!("{name}-{label}.png"));
        let _ = std::fs::remove_file(&png);
        let out = browser(
            chrome,
            &dir.join(format!("profile-{label}")),
            &[
                &format!("--window-size={size}"),
                &format!("--screenshot={}", png.display()),
            ],
            html,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        assert!(width >= 390, "{width}");
        // A blank page compresses to a few KiB; charts and tables do not.
        assert!(
            bytes.len() > 30_000,
            "{name}-{label}: {} bytes",
            bytes.len()
        );
    }
    eprintln!(
        "{name}: {} charts rendered with data; screenshots in {}",
        charts.len(),
        artifacts_dir().display()
    );
}

/// S1 as a study writes it (summary.devices[] …; docs/studies.md), with the paper's device inputs.
fn study_result() -> serde_json::Value {
    let dev = |name: &str, iops: f64, lat: f64, tpmc: f64, run: f64, replay: f64, why: &str| {
        let alpha = run / replay;
        json!({"name": name, "spec": name, "randread16k_iops": iops, "randread16k_lat_ns": lat,
               "tpmc": tpmc, "run_iops": run, "replay_iops": replay, "alpha": alpha,
               "run_ios": (run * 10.0) as u64, "run_syncs": (run * 0.5) as u64,
               "trace": format!("{name}.trace"), "explanation": why,
               "breakdown": {"io_wait_share": 0.9 * alpha, "cpu_share": 0.05, "other_share": 0.95 - 0.9 * alpha,
                             "limit": if alpha > 0.8 { "device" } else { "locks" }}})
    };
    json!({
        "schema": "oltplab.result/1", "kind": "study",
        "tool": {"name": "oltplab", "version": "0.1.0", "git": "test"},
        "started_at": "2026-11-22T13:00:00Z",
        "config": {"scenario": "s1", "engine": "sqlite", "scale": "quick"},
        "env": {"hostname": "vm", "kernel": "6.1", "cpu": "test", "cores": 2, "memory_bytes": 1u64 << 33},
        "summary": {"scenario": "s1", "engine": "sqlite", "baseline": "hdd-10k",
                    "buffer_pool_bytes": 4194304, "load_s": 12.5, "interrupted": false, "devices": [
            dev("host", 30_000.0, 90_000.0, 2600.0, 1500.0, 2400.0, "the host's disk is used for 62 %"),
            dev("hdd-10k", 190.0, 5.2e6, 410.0, 180.0, 195.0, "the disk is the bottleneck"),
            dev("sata-ssd-2010", 8208.0, 311_000.0, 3900.0, 2100.0, 7400.0, "CPU and locks limit the SSD"),
            dev("pcie-flash-2012", 39_539.0, 32_500.0, 5200.0, 2800.0, 33_000.0, "the flash is mostly idle"),
        ]},
        "intervals": [], "histograms": {}, "warnings": []
    })
}

#[test]
fn reports_render_every_chart_with_data_in_chromium() {
    let Some(chrome) = chromium() else {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Browser,
            "the browser test needs Debian's chromium (apt-get install chromium); scripts/test.sh installs it",
        );
        return;
    };
    let dir = scratch("study");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_oltplab"))
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::write(dir.join("study.json"), study_result().to_string()).unwrap();
    run(&["report", "study.json", "-o", "study.html"]);
    check_report(&chrome, &dir, &dir.join("study.html"), "study", 6);

    // A real device measurement with a queue-depth sweep and reads and writes.
    run(&[
        "device",
        "d.dat",
        "--rw",
        "randrw",
        "--sweep-qd",
        "1:4",
        "--runtime",
        "300ms",
        "--ramp",
        "0s",
        "--size",
        "16m",
        "--out",
        "dev",
    ]);
    run(&["report", "dev", "-o", "device.html"]);
    check_report(&chrome, &dir, &dir.join("device.html"), "device", 6);

    // S5: a real in-memory study (bench/in-memory, PostgreSQL) with its four views.
    let s5 =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/study-in-memory.json");
    run(&["report", s5.to_str().unwrap(), "-o", "in-memory.html"]);
    check_report(&chrome, &dir, &dir.join("in-memory.html"), "in-memory", 4);

    // A study file's cells (two devices × two terminal counts, measured), charted along device
    // (bars) and, with --by, along terminals (lines).
    let cells =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/study-file.json");
    run(&["report", cells.to_str().unwrap(), "-o", "study-file.html"]);
    check_report(&chrome, &dir, &dir.join("study-file.html"), "study-file", 4);
    run(&[
        "report",
        cells.to_str().unwrap(),
        "--by",
        "terminals,device",
        "-o",
        "study-file-by.html",
    ]);
    check_report(
        &chrome,
        &dir,
        &dir.join("study-file-by.html"),
        "study-file-by",
        4,
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A crafted result file: markup in every string that could reach the page (device names,
/// explanations, the host name, warnings) — the report shows it as text and runs none of it.
#[test]
fn a_hostile_result_renders_as_text_and_runs_no_script() {
    let Some(chrome) = chromium() else {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Browser,
            "the browser test needs Debian's chromium (apt-get install chromium); scripts/test.sh installs it",
        );
        return;
    };
    const PAYLOAD: &str =
        "<script>document.documentElement.setAttribute('data-pwned','1')</script>\
        <img src=x onerror=\"document.documentElement.setAttribute('data-pwned','2')\">\
        <svg onload=\"document.documentElement.setAttribute('data-pwned','3')\"></svg>";
    fn poison(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => s.push_str(PAYLOAD),
            serde_json::Value::Array(items) => items.iter_mut().for_each(poison),
            serde_json::Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    if !matches!(k.as_str(), "schema" | "kind" | "limit" | "scenario") {
                        poison(x);
                    }
                }
            }
            _ => {}
        }
    }
    let dir = scratch("hostile");
    let mut doc = study_result();
    poison(&mut doc);
    doc["warnings"] = json!([{"kind": "interrupted", "message": PAYLOAD}]);
    std::fs::write(dir.join("hostile.json"), doc.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_oltplab"))
        .current_dir(&dir)
        .args(["report", "hostile.json", "-o", "hostile.html"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.join("hostile.html")).unwrap();
    assert!(
        html.contains("&lt;script&gt;"),
        "the payload is shown as text"
    );
    for raw in ["<script", "<img", "<svg onload"] {
        assert!(!html.contains(raw), "raw {raw} in the report");
    }
    let out = browser(
        &chrome,
        &dir.join("profile-hostile"),
        &["--dump-dom", "--virtual-time-budget=2000"],
        &dir.join("hostile.html"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains("<html"), "chromium rendered the page");
    assert!(!dom.contains("data-pwned=\""), "a script of the file ran");
    std::fs::remove_dir_all(&dir).unwrap();
}
