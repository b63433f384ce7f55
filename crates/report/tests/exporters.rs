//! Snapshot tests of every exporter on results of every kind: the output must be byte-for-byte what
//! tests/snapshots holds. After an intended change, `UPDATE_SNAPSHOTS=1 cargo test -p oltplab-report`
//! rewrites them; review the diff like code.

mod common;

use std::path::PathBuf;

use common::*;
use oltplab_report::{render, Format};
use serde_json::Value;

/// Whether `UPDATE_SNAPSHOTS` (its value) asks to rewrite the snapshots: set, and not empty, `0`
/// or `false` — `UPDATE_SNAPSHOTS=0` compares.
fn update_snapshots(value: Option<&str>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
}

#[test]
fn update_snapshots_0_compares_instead_of_rewriting() {
    assert!(!update_snapshots(None));
    assert!(!update_snapshots(Some("")));
    assert!(!update_snapshots(Some("0")));
    assert!(!update_snapshots(Some("false")));
    assert!(update_snapshots(Some("1")));
    assert!(update_snapshots(Some("yes")));
}

fn check_snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if update_snapshots(std::env::var("UPDATE_SNAPSHOTS").ok().as_deref()) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "snapshot {} is missing: run UPDATE_SNAPSHOTS=1 cargo test -p oltplab-report",
            path.display()
        )
    });
    if expected != actual {
        let new = path.with_extension(format!(
            "{}.new",
            path.extension().unwrap().to_string_lossy()
        ));
        std::fs::write(&new, actual).unwrap();
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from its snapshot at line {}:\n  expected: {:?}\n  actual:   {:?}\n(actual output written to {})",
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line),
            new.display()
        );
    }
}

fn all_formats(name: &str, results: &[Value], html_too: bool) {
    let md = render(results, &[], Format::Markdown).unwrap();
    let csv = render(results, &[], Format::Csv).unwrap();
    // Deterministic: the same input renders to the same bytes.
    assert_eq!(md, render(results, &[], Format::Markdown).unwrap());
    check_snapshot(&format!("{name}.md"), &md);
    check_snapshot(&format!("{name}.csv"), &csv);
    let html = render(results, &[], Format::Html).unwrap();
    assert_eq!(html, render(results, &[], Format::Html).unwrap());
    if html_too {
        check_snapshot(&format!("{name}.html"), &html);
    }
}

#[test]
fn device_single_point() {
    all_formats("device-randrw", &[fixture("device-randrw.json")], false);
}

#[test]
fn device_queue_depth_sweep() {
    all_formats("device-sweep", &[fixture("device-sweep.json")], false);
}

#[test]
fn device_profiles() {
    all_formats("device-profiles", &[fixture("device-profiles.json")], false);
}

#[test]
fn device_comparison() {
    all_formats(
        "device-comparison",
        &[fixture("device-sweep.json"), fixture("device-randrw.json")],
        false,
    );
}

#[test]
fn tpcc_run() {
    all_formats("run-tpcc", &[common::tpcc_run(1, 2, 2, 0)], true);
}

#[test]
fn orders_run_with_connection_sweep() {
    all_formats("run-orders", &[orders_run()], false);
}

/// A real TPC-C run on a 3-node Galera cluster (the cluster study's, on sata-ssd-2010): a row per
/// node with its own I/O on its own emulated device.
#[test]
fn tpcc_run_on_galera_nodes() {
    let run = fixture("run-tpcc-galera.json");
    all_formats("run-tpcc-galera", std::slice::from_ref(&run), false);
    let md = oltplab_report::markdown(&[run]).unwrap();
    for row in [
        "I/O by Galera node (each on its own device)",
        "| 1 | sata-ssd-2010 | 2,682 |",
        "| 3 | sata-ssd-2010 | 2,743 |",
        "node3:sata-ssd-2010",
    ] {
        assert!(md.contains(row), "{row} missing: {md}");
    }
}

/// A real brokerage run on PostgreSQL: its headline is tpsE-like, never a tpmC.
#[test]
fn brokerage_run_on_postgres() {
    let run = fixture("run-brokerage-postgres.json");
    all_formats("run-brokerage-postgres", std::slice::from_ref(&run), false);
    let md = render(&[run], &[], Format::Markdown).unwrap();
    assert!(md.contains("tpsE-like"), "{md}");
    assert!(
        md.contains("trade_result") && md.contains("market_feed"),
        "{md}"
    );
    assert!(!md.contains("tpmC"), "{md}");
}

/// Two runs that differ only in `--procedures` are told apart by their labels.
#[test]
fn a_procedures_run_says_so_in_its_label() {
    let statements = fixture("run-brokerage-postgres.json");
    let mut procedures = statements.clone();
    procedures["config"]["procedures"] = serde_json::json!(true);
    let md = render(&[statements, procedures], &[], Format::Markdown).unwrap();
    assert!(
        md.contains("#1 brokerage, on postgres, 4 terminals |")
            && md.contains("#2 brokerage, on postgres, 4 terminals, server-side procedures |"),
        "{md}"
    );
}

/// A real run: PostgreSQL, disk tables, inserts over a connection sweep (bench/in-memory).
#[test]
fn orders_run_on_postgres() {
    let run = fixture("run-orders-postgres.json");
    all_formats("run-orders-postgres", std::slice::from_ref(&run), true);
    let md = oltplab_report::markdown(&[run]).unwrap();
    // PostgreSQL's waits are sampled sessions: shown once, and labelled so.
    assert!(md.contains("sessions waiting (sampled)"), "{md}");
    assert!(!md.contains(": waits per second |"), "{md}");
    assert!(md.contains("Durability: disk tables"), "{md}");
}

/// A real S5 study on PostgreSQL: four sweeps and S5's three views.
#[test]
fn in_memory_study() {
    let study = fixture("study-in-memory.json");
    all_formats("study-in-memory", std::slice::from_ref(&study), true);
    let html = oltplab_report::html(std::slice::from_ref(&study)).unwrap();
    for view in [
        "Elapsed time of the fixed work",
        "Throughput against connections",
        "Waits against connections",
    ] {
        assert!(html.contains(view), "{view} missing");
    }
    let md = oltplab_report::markdown(&[study]).unwrap();
    for run in [
        "disk update",
        "disk insert",
        "memory update",
        "memory insert",
    ] {
        assert!(md.contains(&format!("| {run} |")), "{run} missing: {md}");
    }
    assert!(md.contains("do not survive a crash"), "{md}");
}

/// A real S4 study at the quick scale (2026-11-27, `study --scenario profiles --scale quick`): two
/// RAID5 sets behind a controller's write-back cache, twelve profiles at nine depths each, their
/// random I/O at queue depth 4 and each set's drive.
#[test]
fn profiles_study() {
    let study = fixture("study-profiles.json");
    all_formats("study-profiles", std::slice::from_ref(&study), true);
    let html = oltplab_report::html(std::slice::from_ref(&study)).unwrap();
    for view in [
        "Geometric mean of the profiles&#39; IOPS against queue depth",
        "Ratio against wbcache(raid5(4,hdd-15k,stripe=64k),size=1g,readahead=192k) per profile",
        "IOPS of every profile on wbcache(raid5(4,sas-ssd-2012,stripe=64k),size=1g,readahead=192k)",
        "Random reads and random writes of each set at queue depth 4",
    ] {
        assert!(html.contains(view), "{view} missing");
    }
    let md = oltplab_report::markdown(&[study]).unwrap();
    for row in [
        "| web-file-4k |",
        "| os-paging |",
        "| geometric mean |",
        "| wbcache(hdd-15k,size=1g,readahead=64k) |",
    ] {
        assert!(md.contains(row), "{row} missing: {md}");
    }
}

/// S3 (`placement`): a real study on PostgreSQL — a row per configuration with its devices' busy
/// shares, the hot table's note and the three charts.
#[test]
fn placement_study() {
    let study = fixture("study-placement.json");
    all_formats("study-placement", std::slice::from_ref(&study), true);
    let html = oltplab_report::html(std::slice::from_ref(&study)).unwrap();
    for view in [
        "Study (where the files live, S3)",
        "Throughput by storage configuration",
        "Response time by storage configuration",
        "CPU and the busiest device by storage configuration",
        "The hottest table, stock, had 51.3 %",
    ] {
        assert!(html.contains(view), "{view} missing");
    }
    let md = oltplab_report::markdown(&[study]).unwrap();
    for row in [
        "| nothing on flash |",
        "| log and temp on flash |",
        "| stock on flash |",
        "| everything on flash |",
        "New-Orders/min",
        "log+temp=pcie-flash-2012: busy 0 %",
        "TPC-C, 1 warehouse(s), 4 terminals",
    ] {
        assert!(md.contains(row), "{row} missing: {md}");
    }
}

/// The cluster study (`--scenario cluster`): a real quick-scale run — one MariaDB and three
/// Galera nodes on each of three devices, a row per run with the cluster's cost against the one
/// server and its commit round trip, a row per node with its own I/O and replication latency, and
/// the two charts.
#[test]
fn cluster_study() {
    let study = fixture("study-cluster.json");
    all_formats("study-cluster", std::slice::from_ref(&study), true);
    let html = oltplab_report::html(std::slice::from_ref(&study)).unwrap();
    for view in [
        "Study (what a cluster costs)",
        "New-Orders per minute: one server and the cluster",
        "New-Order&#39;s 99th-percentile response time",
        "not scale-out",
    ] {
        assert!(html.contains(view), "{view} missing");
    }
    let md = oltplab_report::markdown(&[study]).unwrap();
    for row in [
        "study cluster, 3 nodes vs one MariaDB on 3 devices",
        "| hdd-10k | galera | 3 | 185 | 1.24× |",
        "| pcie-flash-2012 | mariadb | 1 | 7,560 | — |",
        // Commit p50, p99 and the share of it the nodes measured as replication.
        "| 4.18ms | 34.77ms | 17.4 % |",
        "### Each node on its own device",
        "| sata-ssd-2010 | 3 | 1,204 |",
    ] {
        assert!(md.contains(row), "{row} missing: {md}");
    }
}

/// S2 (`cache-tiers`) with the brokerage workload: its throughput unit, its customers and a read
/// cache's hit share — the placement study reshaped as S2's four systems.
#[test]
fn cache_tiers_study() {
    let mut study = fixture("study-placement.json");
    let s = &mut study["summary"];
    s["scenario"] = "cache-tiers".into();
    s["workload"] = "brokerage".into();
    s["customers"] = 1000.into();
    s.as_object_mut().unwrap().remove("hot_table");
    s.as_object_mut().unwrap().remove("warehouses");
    for (c, (name, spec)) in s["configs"].as_array_mut().unwrap().iter_mut().zip([
        ("HDD RAID10", "raid10(8,hdd-15k)"),
        (
            "HDD RAID10 + SSD read cache",
            "readcache(raid10(8,hdd-15k),sas-ssd-2012)",
        ),
        ("SAS SSD RAID10", "raid10(8,sas-ssd-2012)"),
        ("PCIe flash", "pcie-flash-2012"),
    ]) {
        c["name"] = name.into();
        c["spec"] = spec.into();
        c["throughput_unit"] = "Trade-Results/s".into();
    }
    s["configs"][1]["devices"] = serde_json::json!([{
        "name": "readcache(raid10(8,hdd-15k),sas-ssd-2012)", "reads": 900, "writes": 100,
        "syncs": 10, "read_bytes": 7372800, "written_bytes": 819200, "share_pct": 100.0,
        "busy_pct": 41.5, "read_cache_hit_pct": 87.25
    }]);
    all_formats("study-cache-tiers", std::slice::from_ref(&study), false);
    let md = oltplab_report::markdown(&[study.clone()]).unwrap();
    for row in [
        "study cache-tiers on postgres, 4 configurations",
        "| HDD RAID10 + SSD read cache |",
        "Trade-Results/s",
        "readcache(raid10(8,hdd-15k),sas-ssd-2012): busy 42 %, read cache hits 87 %",
        "The brokerage workload (TPC-E-like), 1000 customers, 4 terminals",
    ] {
        assert!(md.contains(row), "{row} missing: {md}");
    }
    let html = oltplab_report::html(&[study]).unwrap();
    assert!(html.contains("Study (storage behind the controller, S2)"));
    assert!(!html.contains("The hottest table"), "S2 has no hot table");
}

/// A study file's result (`study --file`, two devices × two terminal counts on SQLite at the test
/// scale, as measured): a row per cell with its axes, its ratios against the baseline device's
/// cell of the same terminals, and its warnings beside its numbers.
#[test]
fn study_file_cells() {
    let study = fixture("study-file.json");
    all_formats("study-file", std::slice::from_ref(&study), false);
    let md = oltplab_report::markdown(std::slice::from_ref(&study)).unwrap();
    assert!(
        md.contains("study file, 4 cells (baseline sata-ssd-2010)"),
        "{md}"
    );
    let cells = study["summary"]["cells"].as_array().unwrap();
    for c in cells {
        let id = c["id"].as_str().unwrap();
        let row = md_row(&md, "| cell | engine", id);
        assert_eq!(row["device"], c["device"].as_str().unwrap(), "{md}");
        assert_eq!(row["terminals"], c["terminals"].to_string(), "{md}");
        // The baseline's own cells are 1×; the others their tpmC over the baseline's.
        let base = cells
            .iter()
            .find(|b| b["device"] == "sata-ssd-2010" && b["terminals"] == c["terminals"])
            .unwrap();
        let want =
            c["figures"]["tpmc"].as_f64().unwrap() / base["figures"]["tpmc"].as_f64().unwrap();
        assert_eq!(row["tpmC ×"], format!("{want:.2}×"), "{id}: {md}");
        // Every warning of the cell stands in its row.
        for w in c["warnings"].as_array().unwrap() {
            let kind = w["kind"].as_str().unwrap();
            assert!(
                row["warnings"].contains(kind),
                "{id}: {kind} missing from {row:?}"
            );
        }
    }
    // Without --by: along device, one series per terminal count (they vary in this study).
    let html = oltplab_report::html(std::slice::from_ref(&study)).unwrap();
    let tpmc = chart(&html, "tpmC by device");
    assert_eq!(marks(tpmc, "rect", "mark").len(), 4, "{tpmc}");
    assert!(tpmc.contains(">terminals 1</text>") && tpmc.contains(">terminals 2</text>"));
    for title in [
        "IOPS in the TPC-C run by device",
        "Storage utilisation α by device",
        "I/O latency p99 on the emulated device by device",
    ] {
        chart(&html, title);
    }
    // The ratios against the baseline: the baseline's bars at 1×, every warned cell marked.
    for (title, field) in [
        ("tpmC against the baseline by device", "tpmc"),
        ("α against the baseline by device", "alpha"),
    ] {
        let svg = chart(&html, title);
        let bars = marks(svg, "rect", "mark");
        assert_eq!(bars.len(), 4, "{svg}");
        // The baseline's own cells stand at 1×, the others at their ratio.
        for c in cells {
            let ratio = c["figures"]["vs_baseline"][field].as_f64().unwrap();
            let key = format!(
                "{}, terminals {}: ",
                c["device"].as_str().unwrap(),
                c["terminals"]
            );
            let bar = bars
                .iter()
                .find_map(|b| b.strip_prefix(&key))
                .unwrap_or_else(|| panic!("{key} not in {bars:?}"));
            let shown = parse_ratio(bar);
            assert!((shown / ratio - 1.0).abs() < 0.005, "{key}{bar} vs {ratio}");
        }
        let warned = cells
            .iter()
            .filter(|c| !c["warnings"].as_array().unwrap().is_empty())
            .count();
        assert_eq!(marks(svg, "path", "warned").len(), warned, "{svg}");
    }
}

/// A study file of two layouts (`study --file`, S3's disks with the log and temp, or the stock
/// table, on flash; SQLite at the test scale, as measured): each row has its run's response time
/// and each device's busy share by role, and the charts run along the layouts.
#[test]
fn study_file_layouts() {
    let study = fixture("study-file-layouts.json");
    all_formats("study-file-layouts", std::slice::from_ref(&study), false);
    let md = oltplab_report::markdown(std::slice::from_ref(&study)).unwrap();
    let cells = study["summary"]["cells"].as_array().unwrap();
    for (c, placed) in cells.iter().zip(["log+temp", "table:stock"]) {
        let id = c["id"].as_str().unwrap();
        let row = md_row(&md, "| cell | engine", id);
        let busy = &row["device busy (read-cache hits)"];
        let data = c["run"]["devices"][0]["busy_pct"].as_f64().unwrap();
        assert!(
            busy.starts_with(&format!("data {data:.0} %, {placed} ")),
            "{busy}"
        );
        assert_ne!(row["response p90"], "—", "{row:?}");
    }
    let html = oltplab_report::html(std::slice::from_ref(&study)).unwrap();
    for title in [
        "tpmC by layout",
        "Storage utilisation α by layout",
        "tpmC against the baseline by layout",
        "α against the baseline by layout",
    ] {
        let svg = chart(&html, title);
        assert_eq!(marks(svg, "rect", "mark").len(), 2, "{title}: {svg}");
    }
}

/// A ratio as the charts' values show it (`1×`, `9.64×`, `1/2.01×`), back to a number.
fn parse_ratio(text: &str) -> f64 {
    let text = text.trim_end_matches('×');
    match text.strip_prefix("1/") {
        Some(d) => 1.0 / d.parse::<f64>().unwrap(),
        None => text.parse().unwrap(),
    }
}

/// The SVG of the chart titled `title` in a report page.
fn chart<'a>(html: &'a str, title: &str) -> &'a str {
    let at = html
        .find(&format!("\">{title}</title>"))
        .unwrap_or_else(|| panic!("no chart {title}"));
    let start = html[..at].rfind("<svg").unwrap();
    let end = at + html[at..].find("</svg>").unwrap();
    &html[start..end]
}

/// The tooltips of the `<tag class="class…">` elements of a chart.
fn marks(svg: &str, tag: &str, class: &str) -> Vec<String> {
    svg.split(&format!("<{tag} class=\"{class}"))
        .skip(1)
        .map(|m| {
            let from = m.find("<title>").unwrap() + "<title>".len();
            m[from..from + m[from..].find("</title>").unwrap()].to_string()
        })
        .collect()
}

/// `report --by terminals,device` on the study file: a line per device along the terminal counts,
/// each point the cell's figure, each cell with warnings marked by a triangle whose tooltip lists
/// them; and the axis names are checked.
#[test]
fn study_file_by_axes() {
    use oltplab_report::{render_with, CellAxis, Options};
    let study = fixture("study-file.json");
    let by = CellAxis::parse_list("terminals,device").unwrap();
    let options = Options { by: Some(by) };
    let html = render_with(std::slice::from_ref(&study), &[], Format::Html, &options).unwrap();
    let cells = study["summary"]["cells"].as_array().unwrap();
    for (title, pointer, fmt) in [
        (
            "tpmC by terminals",
            "/figures/tpmc",
            oltplab_report::fmt::si as fn(f64) -> String,
        ),
        (
            "IOPS in the TPC-C run by terminals",
            "/figures/run_iops",
            oltplab_report::fmt::si,
        ),
        (
            "Storage utilisation α by terminals",
            "/figures/alpha",
            oltplab_report::fmt::si,
        ),
        (
            "I/O latency p99 on the emulated device by terminals",
            "/figures/run_fidelity/realised_lat_ns_p99",
            oltplab_report::fmt::ns_short,
        ),
    ] {
        let svg = chart(&html, title);
        assert_eq!(marks(svg, "path", "mark line").len(), 2, "{title}: {svg}");
        let dots = marks(svg, "circle", "dot");
        let warned = marks(svg, "path", "warned");
        assert_eq!(dots.len(), 4, "{title}: {svg}");
        for c in cells {
            let device = c["device"].as_str().unwrap();
            let v = c.pointer(pointer).unwrap().as_f64().unwrap();
            let point = format!("device {device}, {}: {}", c["terminals"], fmt(v));
            assert!(dots.contains(&point), "{title}: no {point} in {dots:?}");
            // The cell's triangle names the point and every warning of the cell.
            let tip = warned
                .iter()
                .find(|w| w.starts_with(&point))
                .unwrap_or_else(|| panic!("{title}: {point} is not marked: {warned:?}"));
            for w in c["warnings"].as_array().unwrap() {
                let message = w["message"].as_str().unwrap();
                let shown = oltplab_report::fmt::esc(message);
                assert!(
                    tip.contains(&shown),
                    "{title}: {message} missing from {tip}"
                );
            }
        }
    }
    // The α chart keeps its α = 1 line.
    assert!(chart(&html, "Storage utilisation α by terminals").contains("α = 1"));

    // A cell without warnings gets no triangle.
    let mut quiet = study.clone();
    quiet["summary"]["cells"][0]["warnings"] = serde_json::json!([]);
    let html = render_with(&[quiet], &[], Format::Html, &options).unwrap();
    assert_eq!(
        marks(chart(&html, "tpmC by terminals"), "path", "warned").len(),
        3
    );

    // Bad axes and --by on a result without cells: one sentence each.
    for (text, want) in [
        ("users", "`users` is not an axis"),
        ("device,device", "named twice"),
        ("device,terminals,pacing", "name one or two"),
    ] {
        let e = CellAxis::parse_list(text).unwrap_err();
        assert!(e.contains(want), "{text}: {e}");
    }
    let e = render_with(
        &[fixture("run-tpcc-ramp.json")],
        &[],
        Format::Html,
        &options,
    )
    .unwrap_err();
    assert!(e.to_string().contains("drop --by"), "{e}");
}

/// The cells of the row of `first` in the Markdown table whose header row starts with `header`,
/// by column name.
fn md_row(md: &str, header: &str, first: &str) -> std::collections::BTreeMap<String, String> {
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let mut lines = md.lines().skip_while(|l| !l.starts_with(header));
    let names = cells(
        lines
            .next()
            .unwrap_or_else(|| panic!("no {header} in {md}")),
    );
    let row = lines
        .find(|l| l.starts_with(&format!("| {first} |")))
        .unwrap_or_else(|| panic!("no row {first} in {md}"));
    names.into_iter().zip(cells(row)).collect()
}

/// α's no-figure path: a device whose study stored no α and whose replay did no I/O has no α — a
/// dash in the table and the chart's caption, never 0 (which would say the device idled); one
/// with no stored α but both figures gets α from its definition.
#[test]
fn alpha_without_a_figure_is_a_dash_not_zero() {
    let mut doc = study();
    let devices = doc["summary"]["devices"].as_array_mut().unwrap();
    devices[2].as_object_mut().unwrap().remove("alpha");
    devices[2]["replay_iops"] = serde_json::json!(0.0);
    devices[3].as_object_mut().unwrap().remove("alpha");
    let md = oltplab_report::markdown(std::slice::from_ref(&doc)).unwrap();
    let ssd = md_row(&md, "| device | spec", "sata-ssd-2010");
    assert_eq!(ssd["α"], "—", "{md}");
    assert_eq!(ssd["IOPS in replay"], "0", "{md}");
    let flash = md_row(&md, "| device | spec", "pcie-flash-2012");
    // 2,800 / 33,000, as the study would have stored it.
    assert_eq!(flash["α"], "0.085", "{md}");
    let html = oltplab_report::html(&[doc]).unwrap();
    assert!(html.contains("sata-ssd-2010 —"), "the α chart's caption");
    assert!(!html.contains("sata-ssd-2010 0,") && !html.contains("sata-ssd-2010 0.00"));
}

#[test]
fn run_comparison() {
    all_formats(
        "run-comparison",
        &[common::tpcc_run(1, 2, 2, 0), common::tpcc_run(2, 3, 3, 0)],
        false,
    );
}

#[test]
fn replay_and_comparison() {
    all_formats("replay", &[replay(5, 8000.0)], false);
    all_formats(
        "replay-comparison",
        &[replay(5, 8000.0), replay(6, 12000.0)],
        false,
    );
}

#[test]
fn study_report() {
    all_formats("study", &[study()], true);
}

#[test]
fn io_per_transaction_type_is_shown_for_a_traced_run() {
    let mut run = common::tpcc_run(1, 2, 2, 0);
    run["summary"]["io"]["by_tx"] = serde_json::json!({
        "new_order": {"transactions": 400, "reads": 1200, "writes": 500, "syncs": 400,
            "read_bytes": 19660800, "written_bytes": 8192000, "reads_per_tx": 3.0,
            "writes_per_tx": 1.25, "syncs_per_tx": 1.0, "read_bytes_per_tx": 49152.0,
            "written_bytes_per_tx": 20480.0},
        "other": {"transactions": 0, "reads": 7, "writes": 90, "syncs": 30, "read_bytes": 0,
            "written_bytes": 0, "reads_per_tx": 0.0, "writes_per_tx": 0.0, "syncs_per_tx": 0.0,
            "read_bytes_per_tx": 0.0, "written_bytes_per_tx": 0.0}
    });
    let md = oltplab_report::markdown(&[run]).unwrap();
    assert!(md.contains("### I/O per transaction type"), "{md}");
    assert!(
        md.contains(
            "| new_order | 400 | 3.00 | 1.25 | 1.00 | 48 KiB | 20 KiB | 1,200 | 500 | 400 |"
        ),
        "{md}"
    );
    // Outside transactions there is no per-transaction figure.
    assert!(
        md.contains("| other | 0 | — | — | — | — | — | 7 | 90 | 30 |"),
        "{md}"
    );
    // An untraced run has no such table.
    let plain = oltplab_report::markdown(&[common::tpcc_run(1, 2, 2, 0)]).unwrap();
    assert!(!plain.contains("I/O per transaction"), "{plain}");
}

#[test]
fn markdown_and_csv_hold_the_figures() {
    let md = oltplab_report::markdown(&[study()]).unwrap();
    // Ratios against the baseline device, in S1's terms.
    assert!(md.contains("| 43.2× |"), "{md}");
    assert!(md.contains("| 208× |") || md.contains("| 208.1× |"), "{md}");
    assert!(md.contains("1/16.7×"), "{md}");
    assert!(md.contains("1/160×"), "{md}");
    assert!(
        md.contains("- pcie-flash-2012: the flash is mostly idle"),
        "{md}"
    );
    let csv = oltplab_report::csv(&[study()]).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("result,kind,table,row,column,value"));
    // Raw numbers for spreadsheets: no separators, no units.
    assert!(
        csv.contains(",study,devices,sata-ssd-2010,randread16k_iops,8208\n"),
        "{csv}"
    );
    for line in csv.lines().skip(1) {
        let fields = line.matches(',').count();
        assert!(fields >= 5, "{line}");
    }
}

#[test]
fn missing_fields_show_a_dash_not_a_number() {
    let mut run = common::tpcc_run(1, 1, 1, 0);
    let summary = run["summary"].as_object_mut().unwrap();
    summary.remove("tpmc");
    summary.remove("io");
    summary["tx"]["delivery"]
        .as_object_mut()
        .unwrap()
        .remove("lat_ns");
    let md = oltplab_report::markdown(&[run.clone()]).unwrap();
    assert!(md.contains("| tpmC | — |"), "{md}");
    assert!(
        md.lines()
            .any(|l| l.starts_with("| delivery |") && l.ends_with("| — | — | — | — | — | — |")),
        "{md}"
    );
    let html = oltplab_report::html(&[run]).unwrap();
    assert!(html.contains("<td class=\"num\">—</td>"));
}

#[test]
fn html_is_self_contained_and_accessible() {
    let html = oltplab_report::html(&[common::tpcc_run(1, 2, 2, 0)]).unwrap();
    for forbidden in ["http://", "https://", "<script", "<link", "@import", "url("] {
        let hits: Vec<_> = html
            .match_indices(forbidden)
            .map(|(i, _)| &html[i.saturating_sub(30)..(i + 40).min(html.len())])
            // The SVG namespace is a name, not a fetch.
            .filter(|ctx| !ctx.contains("www.w3.org/2000/svg"))
            .collect();
        assert!(hits.is_empty(), "{forbidden} in the page: {hits:?}");
    }
    assert!(html.contains("<meta name=\"viewport\""));
    assert!(html.contains("@media print"));
    let charts = html.matches("<svg class=\"chart\"").count();
    assert!(charts >= 6, "{charts} charts");
    assert_eq!(
        html.matches("role=\"img\" aria-labelledby=").count(),
        charts
    );
    assert_eq!(html.matches("<desc id=").count(), charts);
    // Every chart has marks, and says how many.
    for svg in html.split("<svg class=\"chart\"").skip(1) {
        let svg = &svg[..svg.find("</svg>").unwrap()];
        let declared: usize = svg
            .split("data-marks=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        let drawn = svg.matches("class=\"mark").count();
        assert!(declared > 0 && declared == drawn, "{declared} vs {drawn}");
    }
}

#[test]
fn bad_results_are_named() {
    use oltplab_report::ReportError;
    assert!(matches!(
        oltplab_report::html(&[]),
        Err(ReportError::NoResults)
    ));
    let not_ours = serde_json::json!({"hello": 1});
    let err = oltplab_report::html(&[study(), not_ours]).unwrap_err();
    assert!(
        matches!(err, ReportError::Invalid { index: 1, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("not an oltplab result"), "{err}");
    let newer = serde_json::json!({"schema": "oltplab.result/9", "kind": "run"});
    let err = oltplab_report::markdown(&[newer]).unwrap_err();
    assert!(err.to_string().contains("oltplab.result/9"), "{err}");
    let odd = serde_json::json!({"schema": "oltplab.result/1", "kind": "telepathy"});
    assert!(oltplab_report::csv(&[odd])
        .unwrap_err()
        .to_string()
        .contains("telepathy"));
}

#[test]
fn mixed_kinds_get_a_section_each() {
    let md = oltplab_report::markdown(&[study(), fixture("device-randrw.json"), replay(1, 100.0)])
        .unwrap();
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(headings.len(), 3, "{headings:?}");
    assert!(!md.contains("## Comparison"));
}

/// A real `oltplab crash tpcc --engine postgres` result (bench/crash-overhead/runs/2026-11-26-vm-servers):
/// three devices × four server settings, three cuts of two states each.
#[test]
fn crash_on_postgres() {
    let crash = fixture("crash-postgres.json");
    all_formats("crash-postgres", std::slice::from_ref(&crash), true);
    let md = oltplab_report::markdown(std::slice::from_ref(&crash)).unwrap();
    assert!(md.contains("# oltplab crash report"), "{md}");
    let row = md_row(&md, "| device | cache |", "sata-ssd-2010");
    assert_eq!(row["setting"], "default");
    assert_eq!(row["promise"], "nothing lost, nothing broken");
    assert_eq!(row["verdict"], "as promised");
    assert_eq!(row["commits acknowledged"], "922");
    assert_eq!(row["commits lost"], "0");
    let html = oltplab_report::html(&[crash]).unwrap();
    assert!(
        html.contains("Acknowledged commits lost, per row"),
        "no loss chart"
    );
    assert!(html.contains("Recovery time, per row"), "no recovery chart");
}

/// A real `oltplab crash tpcc` on SQLite (made for this test: sata-ssd-2010 honest and lying ×
/// synchronous FULL and NORMAL, two cuts of two states each, seed 7): NORMAL's documented losses.
#[test]
fn crash_on_sqlite() {
    let crash = fixture("crash-sqlite.json");
    all_formats("crash-sqlite", std::slice::from_ref(&crash), false);
    let md = oltplab_report::markdown(&[crash]).unwrap();
    let row = md_row(&md, "| row | cut |", "sata-ssd-2010 · synchronous=NORMAL");
    assert_eq!(row["recovered"], "yes");
    assert_eq!(row["invariants broken"], "none");
}

/// Every figure of a crash row is a column of the report: a figure the table dropped fails here
/// even after the snapshots were rewritten.
#[test]
fn crash_report_keeps_every_row_figure() {
    for name in ["crash-postgres.json", "crash-sqlite.json"] {
        let crash = fixture(name);
        let csv = oltplab_report::csv(std::slice::from_ref(&crash)).unwrap();
        let first = crash["summary"]["rows"][0].as_object().unwrap();
        let spec = first["spec"].as_str().unwrap();
        assert!(
            csv.contains(&format!(",crash,rows,{spec} · ")),
            "{name}: the rows are not named by their device"
        );
        for key in first.keys() {
            // The spec names the row (checked above); the setting's value is in `setting`.
            let column = match key.as_str() {
                "spec" => continue,
                "value" => "setting",
                other => other,
            };
            assert!(
                csv.lines().any(
                    |l| (l.contains(",crash,rows,") || l.contains(",crash,writes,"))
                        && l.contains(&format!(",{column},"))
                ),
                "{name}: summary.rows[].{key} is not in the report's CSV"
            );
        }
        let first_state = crash["summary"]["states"][0].as_object().unwrap();
        for key in first_state.keys() {
            // Which row, cut and state: the row's key; `recovered`: text; `check_s`, `checks_ran`:
            // how the checks went, shown per row as `unchecked`.
            if ["row", "check_s", "checks_ran"].contains(&key.as_str()) {
                continue;
            }
            assert!(
                csv.lines()
                    .any(|l| l.contains(",crash,states,") && l.contains(&format!(",{key},"))),
                "{name}: summary.states[].{key} is not in the report's CSV"
            );
        }
    }
}

/// A row whose states broke its promise is marked, with how many; the others say they kept it.
#[test]
fn crash_rows_outside_their_promise_are_marked() {
    let mut crash = fixture("crash-postgres.json");
    crash["summary"]["rows"][1]["unexpected_states"] = 2.into();
    let md = oltplab_report::markdown(&[crash]).unwrap();
    let marked: Vec<&str> = md.lines().filter(|l| l.contains("⚠ unexpected")).collect();
    assert_eq!(marked.len(), 1, "{md}");
    assert!(
        marked[0].contains("synchronous_commit=off") && marked[0].contains("2 of 6 states"),
        "{}",
        marked[0]
    );
    assert_eq!(md.matches("| as promised |").count(), 11, "{md}");
}

/// Two crash results: every row of both side by side, and crash results refuse to merge.
#[test]
fn crash_results_compare_and_do_not_merge() {
    let a = fixture("crash-sqlite.json");
    let b = fixture("crash-postgres.json");
    let md = oltplab_report::markdown(&[a.clone(), b.clone()]).unwrap();
    assert!(md.contains("Comparison of 2 crash results"), "{md}");
    let rows = a["summary"]["rows"].as_array().unwrap().len()
        + b["summary"]["rows"].as_array().unwrap().len();
    let section = md
        .split("\n## ")
        .find(|s| s.starts_with("Comparison"))
        .unwrap();
    assert_eq!(
        section.lines().filter(|l| l.starts_with("| #")).count(),
        rows,
        "{section}"
    );
    let err = oltplab_report::merge(&[a, b]).unwrap_err().to_string();
    assert!(err.contains("cannot be merged"), "{err}");
}
