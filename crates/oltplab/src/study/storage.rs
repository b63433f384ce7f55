//! The storage-configuration studies: S2 (`--scenario cache-tiers`: four storage systems behind the
//! RAID controller) and S3 (`--scenario placement`: nothing, the log and temp, the hottest table,
//! or everything on flash). Both load TPC-C once and run it on a fresh copy of the database per
//! configuration — a device spec or a layout (docs/layouts.md) — and tabulate what S2 and S3 did:
//! throughput, IOPS, mean and 90th-percentile response time, CPU utilisation, and each device's
//! busy (100 − idle) share and read-cache hit ratio.

use std::sync::atomic::Ordering;

use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec};
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;

use super::DEFAULT_DEVICES;
use super::{brokerage_days, BROKERAGE_CUSTOMERS};
use super::{new_study_doc, prepare, save, secs, split_devices, Database, Scale, StudyArgs};
use crate::output;
use crate::schema::{ConfigFigures, StorageStudySummary};
use crate::tpcc;
use crate::STOP;

/// S2's controller (PERC H710P): 1 GB of battery-backed cache, write back, adaptive read-ahead.
const CONTROLLER_CACHE: &str = "size=1g,readahead=on";
/// S2's log in every configuration: its own two 15k rpm disks in RAID1 behind the same controller.
const S2_LOG: &str = "wbcache(raid1(2,hdd-15k),size=1g,readahead=on)";
/// S3's defaults: the server's disks (behind its controller cache), and the PCIe flash card.
const PLACEMENT_DEVICES: &str = "wbcache(raid10(8,hdd-15k),size=1g),pcie-flash-2012";
/// S2's SSD read cache holds this share of the loaded database (its one SAS SSD against a
/// database that did not fit it).
const READ_CACHE_SHARE: f64 = 0.5;

#[derive(Debug, Serialize)]
struct StorageConfig {
    scenario: String,
    engine: String,
    workload: String,
    devices: Vec<String>,
    scale: Scale,
    seed: u64,
}

/// A configuration still to run: its name and spec; placement's hot-table layout is made once the
/// first run has named the table.
enum Planned {
    Ready(String, Spec),
    HotTable { slow: Spec, fast: Spec },
}

pub fn run(args: &StudyArgs) -> Result<()> {
    if args.repeat != 1 {
        return Err(Error::usage(format!(
            "--repeat belongs to the s1 scenario; the {} scenario runs each configuration once",
            args.scenario
        )));
    }
    let placement = args.scenario == super::Scenario::Placement;
    let given = (args.devices != DEFAULT_DEVICES)
        .then(|| split_devices(&args.devices))
        .transpose()?;
    let parse = |t: &str| parse_spec(t).map_err(|e| Error::usage(format!("--devices: `{t}`: {e}")));
    // Every device is checked before anything is made or loaded.
    let placement_devices = if placement {
        Some(two_devices(given.as_deref(), PLACEMENT_DEVICES, &parse)?)
    } else {
        None
    };
    let given_tiers = match (&given, placement) {
        (Some(list), false) => {
            let specs = list
                .iter()
                .map(|t| parse(t).map(|s| (s.name(), s)))
                .collect::<Result<Vec<_>>>()?;
            if specs.len() < 2 || specs.iter().any(|(_, s)| s.is_host()) {
                return Err(Error::usage(
                    "--devices for cache-tiers: two or more emulated storage configurations (host is not one)",
                ));
            }
            Some(specs)
        }
        _ => None,
    };
    let scale = Scale::named(&args.scale).paced(args.pacing);
    let (started_at, out) = prepare(args)?;
    let mut database = Database::new(args.engine.name(), &args.data_dir, &scale);

    // One load, copied for each configuration.
    let brokerage = args.workload == "brokerage";
    output::note!(
        "oltplab study {} — {} on {}: {}, {} terminals, {} warm-up + {} measured per configuration; output {}",
        args.scenario,
        if brokerage { "brokerage" } else { "TPC-C" },
        args.engine,
        if brokerage {
            format!("{BROKERAGE_CUSTOMERS} customers, {} trading days", brokerage_days(&scale))
        } else {
            format!(
                "{} warehouse{}",
                scale.warehouses,
                if scale.warehouses == 1 { "" } else { "s" }
            )
        },
        scale.terminals,
        secs(scale.warmup_s),
        secs(scale.duration_s),
        out.display()
    );
    if given.is_none() && !brokerage {
        let (study, file) = if placement {
            ("S3", "studies/s3.toml")
        } else {
            ("S2", "studies/s2.toml")
        };
        output::note!(
            "({study}'s configurations as a study file: {file}, printed by `oltplab study --scenario {} --dry-run`; a file's cells get S1's figures beside these)",
            args.scenario
        );
    }
    let load_started = std::time::Instant::now();
    let engine_version = if brokerage {
        database.load_brokerage(&scale)?
    } else {
        database.load_tpcc(scale.warehouses, 1)?
    };
    let database_bytes = super::tree_bytes(&database.base);
    if let Some(share) = scale.pool_share_of_data {
        database.buffer_pool_bytes =
            ((database_bytes as f64 * share) as u64).max(super::SERVER_POOL_BYTES_MIN);
    }

    let plan = match placement_devices {
        Some((slow, fast)) => placement_plan(slow, fast)?,
        None => match given_tiers {
            Some(specs) => specs,
            None => cache_tiers(database_bytes)?,
        }
        .into_iter()
        .map(|(name, s)| Planned::Ready(name, s))
        .collect(),
    };
    let config = StorageConfig {
        scenario: args.scenario.to_string(),
        engine: args.engine.name().to_string(),
        workload: args.workload.clone(),
        devices: plan
            .iter()
            .map(|p| match p {
                Planned::Ready(_, s) => s.name(),
                Planned::HotTable { slow, fast } => {
                    format!("data={},table:<hottest>={}", slow.name(), fast.name())
                }
            })
            .collect(),
        scale: scale.clone(),
        seed: 1,
    };
    let summary = StorageStudySummary {
        scenario: args.scenario.to_string(),
        engine: args.engine.name().to_string(),
        workload: args.workload.clone(),
        warehouses: (!brokerage).then_some(scale.warehouses),
        customers: brokerage.then_some(BROKERAGE_CUSTOMERS),
        terminals: scale.terminals,
        load_s: load_started.elapsed().as_secs_f64(),
        database_bytes,
        buffer_pool_bytes: database.buffer_pool_bytes,
        ..StorageStudySummary::default()
    };
    let mut doc = new_study_doc(started_at, &config, &args.data_dir, summary);
    doc.env.engine_version = Some(engine_version);

    let count = plan.len();
    for (i, planned) in plan.into_iter().enumerate() {
        if STOP.load(Ordering::Relaxed) {
            break;
        }
        let (name, spec) = match planned {
            Planned::Ready(name, spec) => (name, spec),
            Planned::HotTable { slow, fast } => {
                let (table, share) = hottest_table(&doc.summary.configs)?;
                doc.summary.hot_table = Some(table.clone());
                doc.summary.hot_table_share_pct = Some(share);
                output::note!(
                    "the hottest table is {table}: {share:.1} % of the reads and writes of the first configuration"
                );
                let spec = parse(&format!(
                    "data={},table:{table}={}",
                    slow.name(),
                    fast.name()
                ))?;
                (format!("{table} on flash"), spec)
            }
        };
        output::note!("\n[{}/{}] {name}: {}", i + 1, count, spec.name());
        match run_config(&name, &spec, i, &scale, &database, brokerage, &out) {
            Ok((figures, warnings)) => {
                doc.warnings.extend(warnings);
                doc.summary.configs.push(figures);
            }
            Err(Error::Interrupted) => break,
            Err(e) => return Err(e),
        }
        let first = doc.summary.configs[0].figures.throughput;
        for c in &mut doc.summary.configs {
            c.throughput_vs_first = (first > 0.0).then(|| c.figures.throughput / first);
        }
        save(&doc, &out, args.json.as_deref())?;
    }
    let stopped = |s: &StorageStudySummary| {
        Warning::new(
            WarningKind::Interrupted,
            format!(
                "Ctrl-C stopped the study after {} of {count} configurations; results.json holds those",
                s.configs.len()
            ),
        )
    };
    super::finish(doc, &out, args.json.as_deref(), stopped, |s| {
        print_table(s);
        output::say!("results: {}", out.display());
    })
}

/// S3's four configurations of a slow device and a flash device, in S3's order.
fn placement_plan(slow: Spec, fast: Spec) -> Result<Vec<Planned>> {
    let layout = |roles: &str| -> Result<Spec> {
        let t = format!("data={},{roles}", slow.name());
        parse_spec(&t).map_err(|e| Error::usage(format!("--devices: `{t}`: {e}")))
    };
    Ok(vec![
        Planned::Ready("nothing on flash".into(), slow.clone()),
        Planned::Ready(
            "log and temp on flash".into(),
            layout(&format!("log={f},temp={f}", f = fast.name()))?,
        ),
        Planned::HotTable {
            slow: slow.clone(),
            fast: fast.clone(),
        },
        Planned::Ready("everything on flash".into(), fast),
    ])
}

/// `--devices SLOW,FAST` for placement, or its defaults.
fn two_devices(
    given: Option<&[String]>,
    default: &str,
    parse: &dyn Fn(&str) -> Result<Spec>,
) -> Result<(Spec, Spec)> {
    let list = match given {
        Some(l) => l.to_vec(),
        None => split_devices(default)?,
    };
    let [slow, fast] = list.as_slice() else {
        return Err(Error::usage(
            "--devices for placement: two devices, the slow one and the flash, e.g. raid10(8,hdd-15k),pcie-flash-2012",
        ));
    };
    let (slow, fast) = (parse(slow)?, parse(fast)?);
    if slow.is_host() || fast.is_host() || slow.is_layout() || fast.is_layout() {
        return Err(Error::usage(
            "--devices for placement: two emulated devices (not host, not layouts); the scenario makes the layouts",
        ));
    }
    Ok((slow, fast))
}

/// S2's four storage systems for the data. The three on the RAID controller sit behind its 1 GB
/// battery-backed cache (write back, read-ahead); the PCIe flash card is a card of its own, not
/// behind the controller. In every configuration the log is on its own 2×15k RAID1 behind the
/// controller (each device of a layout gets its own controller model, so the two do not share
/// one 1 GB cache as S2's did).
fn cache_tiers(database_bytes: u64) -> Result<Vec<(String, Spec)>> {
    // A read cache holds half the database, in whole MiB, at least 16 MiB.
    let cache_mib = ((database_bytes as f64 * READ_CACHE_SHARE) / (1 << 20) as f64)
        .ceil()
        .max(16.0) as u64;
    [
        (
            "HDD RAID10 x16",
            format!("wbcache(raid10(16,hdd-15k),{CONTROLLER_CACHE})"),
        ),
        (
            "HDD RAID10 x16 + SSD read cache",
            format!(
                "wbcache(readcache(raid10(16,hdd-15k),sas-ssd-2012,size={cache_mib}m),{CONTROLLER_CACHE})"
            ),
        ),
        (
            "SAS SSD RAID10 x4",
            format!("wbcache(raid10(4,sas-ssd-2012),{CONTROLLER_CACHE})"),
        ),
        ("PCIe flash", "pcie-flash-2012".to_string()),
    ]
    .into_iter()
    .map(|(name, t)| {
        let t = format!("data={t},log={S2_LOG}");
        parse_spec(&t)
            .map(|s| (name.to_string(), s))
            .map_err(|e| Error::failed(format!("the built-in configuration {t}: {e}")))
    })
    .collect()
}

/// The table with the largest share of the first configuration's reads and writes.
fn hottest_table(configs: &[ConfigFigures]) -> Result<(String, f64)> {
    configs
        .first()
        .and_then(|c| {
            c.figures
                .tables
                .iter()
                .find(|t| {
                    oltplab_trace::format::names_a_table(&t.name) && !t.name.starts_with("sqlite_")
                })
                .map(|t| (t.name.clone(), t.share_pct))
        })
        .ok_or_else(|| {
            Error::failed(
                "the first configuration's run attributed no I/O to a table, so the hottest table is unknown: check its warnings",
            )
        })
}

/// The workload on a fresh copy of the database, on `spec`.
fn run_config(
    name: &str,
    spec: &Spec,
    index: usize,
    scale: &Scale,
    database: &Database,
    brokerage: bool,
    out: &std::path::Path,
) -> Result<(ConfigFigures, Vec<Warning>)> {
    let tag = format!("config{}", index + 1);
    let db_path = database.copy_for(&tag)?;
    // SQLite attributes I/O to tables only from a trace; servers always trace.
    let trace = (database.engine == "sqlite").then(|| out.join(format!("{tag}.trace")));
    let run_cfg = super::study_run(
        scale,
        database.spec(&db_path)?,
        Some(spec),
        trace,
        &out.join(format!("run-{tag}")),
    );
    let result = if brokerage {
        let cfg = crate::brokerage::RunConfig {
            db: crate::brokerage::brokerage_spec(run_cfg.db.clone()),
            terminals: scale.terminals,
            ramp: Vec::new(),
            duration_s: run_cfg.duration_s,
            warmup_s: run_cfg.warmup_s,
            report_interval_s: run_cfg.report_interval_s,
            max_retries: run_cfg.max_retries,
            seed: run_cfg.seed,
            capture: run_cfg.capture.clone(),
            output: run_cfg.output.clone(),
        };
        crate::brokerage::run_with(&cfg, &STOP)
            .map(|doc| (crate::brokerage::brokerage_step_of(&doc), doc.warnings))
    } else {
        tpcc::run_with(&run_cfg, &STOP).map(|o| (tpcc::step_of(&o.doc), o.doc.warnings))
    };
    database.remove_copy(&db_path);
    let (figures, run_warnings) = result?;
    // What makes this configuration's figures less reliable goes into the study's warnings,
    // named by the configuration, and marks its row.
    let warnings: Vec<Warning> = run_warnings
        .iter()
        .filter(|w| {
            matches!(
                w.kind,
                WarningKind::EmulationOffTarget | WarningKind::NotSteady | WarningKind::FewSamples
            )
        })
        .map(|w| Warning::new(w.kind, format!("{name}: {}", w.message)))
        .collect();
    Ok((
        ConfigFigures {
            name: name.to_string(),
            spec: spec.name(),
            figures,
            throughput_vs_first: None,
        },
        warnings,
    ))
}

fn print_table(s: &StorageStudySummary) {
    output::say!("");
    let unit = s
        .configs
        .first()
        .map_or("throughput", |c| c.figures.throughput_unit.as_str());
    output::say!(
        "{:<32} {:>15} {:>7} {:>9} {:>9} {:>9} {:>9}  device busy (read-cache hits)",
        "configuration",
        unit,
        "vs 1st",
        "IOPS",
        "mean rt",
        "p90 rt",
        "CPU busy"
    );
    for c in &s.configs {
        let f = &c.figures;
        let devices: Vec<String> = f
            .devices
            .iter()
            .map(|d| {
                // One device: the configuration names it; a layout's: by their roles.
                let name = if f.devices.len() == 1 {
                    "device".to_string()
                } else {
                    short(&d.name)
                };
                match d.read_cache_hit_pct {
                    Some(h) => format!("{name} {:.0} % ({h:.0} %)", d.busy_pct),
                    None => format!("{name} {:.0} %", d.busy_pct),
                }
            })
            .collect();
        output::say!(
            "{:<32} {:>15} {:>7} {:>9} {:>9} {:>9} {:>7.0} %  {}",
            if c.figures.warnings.is_empty() {
                c.name.clone()
            } else {
                format!("{} *", c.name)
            },
            format_count(f.throughput),
            c.throughput_vs_first
                .map_or("—".to_string(), |r| format!("{r:.2}×")),
            format_count(f.io_iops),
            format_ns(f.lat_ns.mean),
            format_ns(f.lat_ns.p90 as f64),
            100.0 * f.cpu_utilisation,
            devices.join(", ")
        );
    }
    if s.configs.iter().any(|c| !c.figures.warnings.is_empty()) {
        output::say!("* less reliable: see the warnings above and in results.json");
    }
    if let Some(t) = &s.hot_table {
        output::say!(
            "hottest table: {t} ({:.1} % of the first configuration's I/O)",
            s.hot_table_share_pct.unwrap_or(0.0)
        );
    }
    output::say!(
        "database {} loaded in {:.0} s",
        format_bytes(s.database_bytes),
        s.load_s
    );
}

/// A device name without a long spec's details: its roles, or the spec's head.
fn short(name: &str) -> String {
    match name.split_once('=') {
        Some((roles, _)) if !roles.contains('(') => roles.to_string(),
        _ if name.chars().count() > 40 => name.chars().take(39).collect::<String>() + "…",
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The storage axis of a shipped study file, as resolved specs.
    fn file_specs(name: &str, text: &str) -> Vec<String> {
        let study = super::super::file::parse(Path::new(name), text).unwrap();
        let quick = Scale::named("quick");
        assert_eq!(study.scale.name, "quick");
        assert_eq!(study.repeat, 1);
        for c in &study.cells {
            assert_eq!(c.axes.engine, "sqlite");
            assert_eq!(c.axes.pacing, "none");
            assert_eq!(c.axes.terminals, quick.terminals);
        }
        assert_eq!(
            study.baseline.as_deref(),
            Some(study.cells[0].axes.device_name.as_str()),
            "the first configuration is the baseline, as the scenario's `vs first`"
        );
        study.cells.iter().map(|c| c.axes.device.clone()).collect()
    }

    /// studies/s3.toml is `--scenario placement --scale quick`'s four configurations in order,
    /// with the hottest table every measured run found (stock) named.
    #[test]
    fn the_shipped_s3_file_is_the_placement_scenario() {
        let parse = |t: &str| parse_spec(t).unwrap();
        let (slow, fast) = two_devices(None, PLACEMENT_DEVICES, &|t| Ok(parse(t))).unwrap();
        let scenario: Vec<String> = placement_plan(slow, fast)
            .unwrap()
            .into_iter()
            .map(|p| match p {
                Planned::Ready(_, s) => s.name(),
                Planned::HotTable { slow, fast } => {
                    parse(&format!("data={},table:stock={}", slow.name(), fast.name())).name()
                }
            })
            .collect();
        let file = file_specs(
            "studies/s3.toml",
            include_str!("../../../../studies/s3.toml"),
        );
        assert_eq!(file, scenario);
    }

    /// studies/s2.toml is `--scenario cache-tiers --scale quick`'s four systems in order, the
    /// read cache sized as the scenario sizes it for the quick SQLite load (half of ~80 MiB).
    #[test]
    fn the_shipped_s2_file_is_the_cache_tiers_scenario() {
        let scenario: Vec<String> = cache_tiers(80 << 20)
            .unwrap()
            .into_iter()
            .map(|(_, s)| s.name())
            .collect();
        let file = file_specs(
            "studies/s2.toml",
            include_str!("../../../../studies/s2.toml"),
        );
        assert_eq!(file, scenario);
    }
}
