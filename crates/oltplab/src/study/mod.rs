//! `oltplab study`: S1 end to end on one machine. For each device (the real one, `host`, and
//! emulated ones): the device's 16 KiB random-read IOPS and latency, a TPC-C run with its I/O
//! trace captured, the trace's replay as fast as the device allows, and α = run IOPS / replay IOPS,
//! with a sentence on what limited the run. S1 is the shipped studies/s1.toml with the command's
//! options applied (`s1_file`), run by the study-file engine (`file.rs`): `results.json`, each
//! device's trace and `report.html` in the output directory, each finished device saved as a
//! cell, so that `--resume DIR` finishes an interrupted study. The other scenarios are their
//! own modules; S2–S5 run their shipped files through the same engine.

mod cluster;
mod explain;
mod file;
mod in_memory;
mod power_cut;
mod profiles;
mod storage;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use clap::Args;
use explain::Explain as _;
use oltplab_core::safety;
use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec, OFF_TARGET_PCT, P99_OFF_TARGET_PCT};
use oltplab_metrics::env::Env;
use oltplab_metrics::schema::{now_rfc3339, ResultDoc};
use oltplab_metrics::{Warning, WarningKind};
use oltplab_trace::replay::sim::{replay_virtual, ReplayOrder};
use oltplab_trace::{Op, TraceData, TraceReader};
use serde::Serialize;
use serde_json::Value;

use crate::device;
use crate::device::config::{DeviceRequest, Pattern, QueueDepths};
use crate::emulate::{BackingChoice, Emulation};
use crate::schema::{DeviceSummary, ReplayResult};
use crate::trace::replay::{replay, ReplayConfig};
use crate::workload::scaffold::{CaptureConfig, OutputConfig};
use oltplab_devmodel::Fidelity;
use std::time::Duration;

use crate::output;
use crate::schema::{Breakdown, DeviceFigures, Interval, Repeats, StudySummary};
use crate::tpcc::{self, LoadConfig, RunConfig};
use crate::workload::target::{DbSpec, Engine};
use crate::STOP;
use explain::explain;
use oltplab_workloads::tpcc::tx::TxType;

pub const RESULTS_FILE: &str = "results.json";
pub use crate::output::{write_report, REPORT_FILE};
/// S1's device list: the machine's own storage, then its three devices, emulated.
const DEFAULT_DEVICES: &str = "host,hdd-10k,sata-ssd-2010,pcie-flash-2012";

/// The reference studies `--scenario` names (docs/studies.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scenario {
    /// S1: TPC-C on each device, traced and replayed, α.
    S1,
    /// S5: disk against memory tables, a connection sweep.
    InMemory,
    /// S4: server access profiles on device sets.
    Profiles,
    /// S2: storage systems behind a RAID controller.
    CacheTiers,
    /// S3: what to put on faster storage.
    Placement,
    /// One MariaDB against a Galera cluster per device.
    Cluster,
    /// What a power cut loses per cache mode and setting.
    PowerCut,
}

impl Scenario {
    /// Its name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::S1 => "s1",
            Scenario::InMemory => "in-memory",
            Scenario::Profiles => "profiles",
            Scenario::CacheTiers => "cache-tiers",
            Scenario::Placement => "placement",
            Scenario::Cluster => "cluster",
            Scenario::PowerCut => "power-cut",
        }
    }
}

/// How terminals pace their transactions (`--pacing`, a study file's `pacing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pacing {
    /// Back to back (S1's runs, HammerDB's NOPM).
    None,
    /// TPC-C's keying and think times, ten terminals per warehouse.
    Spec,
}

impl Pacing {
    /// Its name on the command line, in study files and in results.
    pub fn name(self) -> &'static str {
        match self {
            Pacing::None => "none",
            Pacing::Spec => "spec",
        }
    }

    /// The pacing `name` names (None: no such pacing).
    pub fn from_name(name: &str) -> Option<Pacing> {
        [Pacing::None, Pacing::Spec]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

impl std::fmt::Display for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Args, Debug)]
#[command(after_help = AFTER_STUDY_HELP)]
pub struct StudyArgs {
    /// Database engine (sqlite is embedded: nothing to install)
    #[arg(long, default_value = "sqlite", value_parser = crate::workload::target::single_engine())]
    pub engine: Engine,

    /// Devices to compare, as device specs (see `oltplab devices`); ratios are against the first
    /// emulated one (--scenario profiles: two or more sets, default
    /// raid5(4,hdd-15k),raid5(4,sas-ssd-2012))
    #[arg(long, value_name = "SPECS", default_value = DEFAULT_DEVICES)]
    pub devices: String,

    /// quick (under 2 minutes), default (under 10), s1 (S1's proportions at 10 warehouses: one
    /// terminal per warehouse, a buffer pool of 2.5 % of the data; under an hour on 2 cores), or
    /// paper (S1's 200 warehouses; hours, big hardware)
    #[arg(long, default_value = "default", value_parser = scales())]
    pub scale: String,

    /// none: terminals run transactions back to back (S1's runs, HammerDB's NOPM); spec: TPC-C's
    /// keying and think times with the spec's ten terminals per warehouse (tpmC capped at 12.86 per
    /// warehouse)
    #[arg(long, default_value = "none", value_enum)]
    pub pacing: Pacing,

    /// The workload of the cache-tiers and placement scenarios: TPC-C, or the TPC-E-like brokerage
    /// workload S2 and S3 ran
    #[arg(long, value_name = "NAME", default_value = "tpcc", value_parser = ["tpcc", "brokerage"])]
    pub workload: String,

    /// Which reference study to re-run
    #[arg(long, value_name = "NAME", default_value = "s1", value_enum)]
    pub scenario: Scenario,

    /// Output directory [default: ./oltplab-results/study-<UTC time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Where the databases and replay copies live (created and marked by oltplab)
    #[arg(long, value_name = "DIR", default_value = "oltplab-data/study")]
    pub data_dir: PathBuf,

    /// Also write the JSON result (results.json) to FILE; - for standard output (human output then
    /// goes to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Run each device's TPC-C run and replay N times, each on a fresh copy of the loaded
    /// database, and report tpmC, run IOPS and α as means with 95 % confidence intervals
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeat: u32,

    /// The cluster scenario: the Galera cluster's nodes, 2 to 9 [default: 3, the smallest that
    /// survives a node's loss]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=9))]
    pub nodes: Option<u32>,

    /// Use an output or data directory that oltplab did not create
    #[arg(long)]
    pub force: bool,

    /// Run your own study from a TOML file: devices, engines with server settings, terminal
    /// counts, pacing, scale, repeats and a baseline, as a matrix or a list of cells
    /// (docs/studies.md, "Your own study: --file"); it replaces --scenario, --devices, --engine,
    /// --scale, --pacing and --repeat
    #[arg(long, value_name = "FILE", conflicts_with_all = ["scenario", "devices", "engine", "scale", "pacing", "repeat", "workload", "nodes"])]
    pub file: Option<PathBuf>,

    /// With --file: list the cells in order with an estimate of their time, and run nothing;
    /// with --scenario s1, cache-tiers, placement, profiles or in-memory: print the scenario as a
    /// study file
    #[arg(long)]
    pub dry_run: bool,

    /// A setting for the PostgreSQL or MariaDB server of S1, cache-tiers or placement, NAME=VALUE
    /// (repeat for more), e.g. synchronous_commit=off; names are checked against the installed
    /// server (a study file gives them per engine as server_settings)
    #[arg(long, value_name = "NAME=VALUE", conflicts_with_all = ["file", "resume"])]
    pub server_setting: Vec<String>,

    /// Continue the `oltplab study` (S1, cache-tiers, placement) or --file study whose output
    /// directory is DIR: its finished cells are kept, the others (new in the file, or stopped) run; without --file, DIR's copy
    /// of the file is used
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "scenario", "devices", "engine", "scale", "pacing", "repeat", "workload", "nodes"])]
    pub resume: Option<PathBuf>,
}

/// `--scale`'s values; `test` (hidden) is the profiles scenario's for its integration test.
fn scales() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    let shown = ["quick", "default", "s1", "paper"].map(PossibleValue::new);
    clap::builder::PossibleValuesParser::new(
        shown
            .into_iter()
            .chain([PossibleValue::new("test").hide(true)]),
    )
}

const AFTER_STUDY_HELP: &str = "\
Examples:
  oltplab study --scale quick                      S1 on SQLite: host and three emulated devices, ~2 min
  oltplab study                                    the same at the default scale, under 10 min
  oltplab study --devices hdd-15k,raid10(4,hdd-15k),nvme-gen4
  oltplab study --engine postgres --server-setting synchronous_commit=off   S1 with a server setting
  oltplab study --scenario in-memory --engine postgres   S5: disk vs memory tables, connection sweep
  oltplab study --scenario profiles --scale quick  S4: server profiles, HDD vs SSD RAID5, ~2.5 min
  oltplab study --scenario cache-tiers --workload brokerage --scale quick
                                                   S2: HDD RAID, + SSD read cache, SSD RAID, PCIe flash
  oltplab study --scenario placement --engine postgres --scale quick
                                                   S3: log+temp, the hottest table, or all on flash
  oltplab study --scenario cluster --scale quick   one MariaDB vs 3 Galera nodes on hdd-10k,
                                                   sata-ssd-2010, pcie-flash-2012, under 5 min
  oltplab study --scenario power-cut --scale quick  power cuts: SQLite FULL/NORMAL/OFF on a drive
                                                   whose cache is volatile, lying or battery-backed
  oltplab study --file studies/s1.toml --dry-run   your own study file: its cells and their time
  oltplab study --file my.toml --out my-study      run it; each finished cell is kept
  oltplab study --resume my-study                  after Ctrl-C: only the cells not finished (also
                                                   of `oltplab study`, which runs studies/s1.toml,
                                                   and of cache-tiers, placement, profiles and
                                                   in-memory: s2, s3, s4, s5.toml)
  oltplab report my-study --by terminals,device    its charts along terminals, a line per device

For each device: 16 KiB random reads at QD 1 (latency) and QD 32 (IOPS); a TPC-C run with its I/O
trace captured (warm-up excluded); the trace replayed as fast as the device allows; α = run IOPS /
replay IOPS; and what limited the run. Writes results.json, report.html and <device>.trace.";

/// What each scale runs.
#[derive(Clone, Debug, Serialize)]
pub struct Scale {
    pub name: String,
    pub warehouses: u32,
    pub terminals: u32,
    pub warmup_s: f64,
    pub duration_s: f64,
    pub buffer_pool_bytes: u64,
    pub device_runtime_s: f64,
    pub device_ramp_s: f64,
    pub device_size_bytes: u64,
    pub report_interval_s: f64,
    /// When set, the buffer pool is this share of the loaded data (S1: 512 MB for ~20 GB, 2.5 %)
    /// instead of `buffer_pool_bytes`.
    pub pool_share_of_data: Option<f64>,
    /// TPC-C's keying and think times (`--pacing spec`).
    pub keying_think: bool,
}

impl Scale {
    fn named(name: &str) -> Scale {
        let (warehouses, terminals, warmup_s, duration_s, pool, dev_s, ramp_s, size, interval) =
            match name {
                "quick" => (1, 4, 3.0, 10.0, 4 << 20, 1.5, 0.5, 256 << 20, 5.0),
                // The tests' (hidden): seconds per run.
                "test" => (1, 2, 1.0, 3.0, 4 << 20, 0.5, 0.2, 64 << 20, 1.0),
                // S1's proportions, small enough for 2 cores: one terminal per warehouse, the pool
                // set from the data after the load.
                "s1" => (10, 10, 30.0, 90.0, 0, 5.0, 1.0, 1 << 30, 10.0),
                // S1: 200 warehouses and terminals, 512 MB buffer pool, an hour of warm-up, 300 s.
                "paper" => (
                    200,
                    200,
                    3600.0,
                    300.0,
                    512 << 20,
                    30.0,
                    5.0,
                    64 << 30,
                    10.0,
                ),
                _ => (2, 8, 10.0, 60.0, 8 << 20, 5.0, 1.0, 1 << 30, 10.0),
            };
        Scale {
            name: name.to_string(),
            warehouses,
            terminals,
            warmup_s,
            duration_s,
            buffer_pool_bytes: pool,
            device_runtime_s: dev_s,
            device_ramp_s: ramp_s,
            device_size_bytes: size,
            report_interval_s: interval,
            pool_share_of_data: (name == "s1").then_some(S1_POOL_SHARE),
            keying_think: false,
        }
    }

    /// `--pacing spec`: keying and think times, with the spec's ten terminals per warehouse (one
    /// terminal per warehouse would offer 1.3 tpmC each).
    fn paced(mut self, pacing: Pacing) -> Scale {
        if pacing == Pacing::Spec {
            self.keying_think = true;
            self.terminals = 10 * self.warehouses;
        }
        self
    }
}

/// S1's buffer pool against its data: 512 MB for 200 warehouses (about 20 GB).
const S1_POOL_SHARE: f64 = 0.025;

/// S1's `--server-setting`s: for its managed server only, each name known to the installed server.
fn s1_server_settings(args: &StudyArgs) -> Result<Vec<(String, String)>> {
    if args.server_setting.is_empty() {
        return Ok(Vec::new());
    }
    if !matches!(
        args.scenario,
        Scenario::S1 | Scenario::CacheTiers | Scenario::Placement
    ) {
        return Err(Error::usage(format!(
            "--server-setting is for --scenario s1, cache-tiers and placement (and study files' server_settings); the {} scenario sets its own server: drop it",
            args.scenario
        )));
    }
    if args.engine == Engine::Sqlite {
        return Err(Error::usage(
            "--server-setting is for a PostgreSQL or MariaDB server: add --engine postgres or mariadb, or drop it",
        ));
    }
    let settings = crate::workload::parse_server_settings(&args.server_setting)?;
    oltplab_dbs::server::check_settings(args.engine.name(), &settings)?;
    Ok(settings)
}

pub fn run(args: StudyArgs) -> Result<()> {
    if args.nodes.is_some() && args.scenario != Scenario::Cluster {
        return Err(Error::usage(format!(
            "--nodes belongs to the cluster scenario (its Galera cluster's size); the {} scenario runs no cluster: drop it",
            args.scenario
        )));
    }
    if args.file.is_some() || args.resume.is_some() {
        return file::run(&args);
    }
    if args.dry_run {
        // A reference study's cells as a study file: printed, nothing run.
        output::say!("{}", equivalent_file(&args)?);
        return Ok(());
    }
    if args.scenario == Scenario::PowerCut {
        return power_cut::run(&args);
    }
    let server_settings = s1_server_settings(&args)?;
    if args.scale == "test" && args.scenario == Scenario::InMemory {
        return Err(Error::usage(
            "--scale test belongs to the other scenarios: use quick, default, s1 or paper",
        ));
    }
    let storage = args.scenario == Scenario::CacheTiers || args.scenario == Scenario::Placement;
    if args.workload != "tpcc" && !storage {
        return Err(Error::usage(format!(
            "--workload belongs to the cache-tiers and placement scenarios; the {} scenario runs its own workload",
            args.scenario
        )));
    }
    if args.scenario == Scenario::InMemory {
        // S5: the shipped studies/s5.toml with the options given, a cell per table kind.
        return in_memory::run_scenario(&args);
    }
    if args.scenario == Scenario::Profiles {
        // S4: the shipped studies/s4.toml with the options given, a cell per device set.
        return profiles::run_scenario(&args);
    }
    if args.scenario == Scenario::Cluster {
        return cluster::run(&args);
    }
    if storage {
        // S2, S3: the shipped studies/s2.toml or s3.toml with the options given.
        return storage::run_scenario(&args, &server_settings);
    }
    // S1: the shipped studies/s1.toml with the options given, run by the study-file engine.
    let s1 = s1_file(&args, &server_settings)?;
    file::run_s1(&args, &s1)
}

/// The shipped study files of the reference studies that a study file can express.
const SHIPPED_FILES: [(Scenario, &str, &str); 5] = [
    (
        Scenario::S1,
        "studies/s1.toml",
        include_str!("../../../../studies/s1.toml"),
    ),
    (
        Scenario::CacheTiers,
        "studies/s2.toml",
        include_str!("../../../../studies/s2.toml"),
    ),
    (
        Scenario::Placement,
        "studies/s3.toml",
        include_str!("../../../../studies/s3.toml"),
    ),
    (
        Scenario::Profiles,
        "studies/s4.toml",
        include_str!("../../../../studies/s4.toml"),
    ),
    (
        Scenario::InMemory,
        "studies/s5.toml",
        include_str!("../../../../studies/s5.toml"),
    ),
];

/// `--scenario NAME --dry-run`: the study file the scenario runs, with the options given applied
/// as its run applies them; an option the scenario does not take is refused with the reason.
fn equivalent_file(args: &StudyArgs) -> Result<String> {
    let file = match args.scenario {
        Scenario::S1 => s1_file(args, &s1_server_settings(args)?)?,
        Scenario::CacheTiers | Scenario::Placement => {
            storage::scenario_file(args, &s1_server_settings(args)?)?
        }
        Scenario::Profiles => profiles::scenario_file(args)?,
        Scenario::InMemory => in_memory::scenario_file(args)?,
        Scenario::Cluster | Scenario::PowerCut => {
            return Err(Error::usage(format!(
                "--dry-run prints the study file of the s1, cache-tiers, placement, profiles and in-memory scenarios or lists a study file's cells; the {} scenario has no study file yet: drop --dry-run, or add --file FILE",
                args.scenario
            )))
        }
    };
    Ok(file.text)
}

/// A scenario as the study file it runs: its shipped file (studies/s1.toml … s5.toml)
/// with every option given applied.
pub struct ScenarioFile {
    /// Where the text comes from, as errors and the result's `config.file` name it.
    pub label: &'static str,
    pub text: String,
    /// The keys the options changed, as written (`scale = "test"`); empty: the file as shipped.
    pub applied: Vec<String>,
}

impl ScenarioFile {
    /// What the options changed, as the first line says it: `as shipped` or `with …`.
    fn changed(&self) -> String {
        match self.applied.len() {
            0 => "as shipped".to_string(),
            _ => format!("with {}", self.applied.join(", ")),
        }
    }

    /// The run's first line: which file it runs, where its copy is and how to resume it.
    pub(super) fn announce(&self, copy: &Path, out: &Path) {
        output::note!(
            "(running {} {}: `oltplab study --file {}` runs the same cells, `oltplab study --resume {}` finishes this study if it stops)",
            self.label,
            self.changed(),
            copy.display(),
            out.display()
        );
    }
}

/// S1's `--devices`: each a device spec, each once as a file name (its trace and runs are named
/// by it), as given.
fn s1_devices(args: &StudyArgs) -> Result<Vec<(String, Spec)>> {
    let mut devices: Vec<(String, Spec)> = Vec::new();
    for text in split_devices(&args.devices)? {
        let spec =
            parse_spec(&text).map_err(|e| Error::usage(format!("--devices: `{text}`: {e}")))?;
        let name = file_name(&spec.name());
        if devices.iter().any(|(_, s)| file_name(&s.name()) == name) {
            return Err(Error::usage(format!(
                "--devices names {name} twice: give each device once"
            )));
        }
        devices.push((text, spec));
    }
    Ok(devices)
}

/// A TOML basic string: `"…"` with `\`, `"` and control characters escaped.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn toml_list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<String> = items.iter().map(|i| toml_string(i.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

/// studies/s1.toml with `--engine`, `--scale`, `--devices`, `--repeat`, `--pacing` and the
/// checked `--server-setting`s applied: the same cells the scenario measured by hand before.
fn s1_file(args: &StudyArgs, settings: &[(String, String)]) -> Result<ScenarioFile> {
    let Some((label, shipped)) = SHIPPED_FILES
        .iter()
        .find(|(s, ..)| *s == Scenario::S1)
        .map(|(_, label, text)| (*label, *text))
    else {
        unreachable!("studies/s1.toml is shipped")
    };
    if args.workload != "tpcc" {
        return Err(Error::usage(
            "--workload belongs to the cache-tiers and placement scenarios; the s1 scenario runs TPC-C (a study file's workloads = [\"brokerage\"] runs S1's measurement on the brokerage workload)",
        ));
    }
    let devices = s1_devices(args)?;
    // Terminals follow the scale and the pacing (ten per warehouse when paced), as S1 ran them.
    let scale = Scale::named(&args.scale).paced(args.pacing);
    let texts: Vec<&str> = devices.iter().map(|(t, _)| t.as_str()).collect();
    // As S1: ratios against the first emulated device; none if every device is the host.
    let baseline = devices
        .iter()
        .find(|(_, s)| !s.is_host())
        .map(|(t, _)| toml_string(t));
    let values: [(&str, Option<String>); 7] = [
        ("scale", Some(toml_string(&args.scale))),
        ("repeat", Some(args.repeat.to_string())),
        ("devices", Some(toml_list(&texts))),
        ("terminals", Some(format!("[{}]", scale.terminals))),
        ("pacing", Some(toml_list(&[args.pacing.name()]))),
        ("baseline", baseline),
        ("engine", Some(toml_string(args.engine.name()))),
    ];
    let (body, applied) = apply_to_shipped(
        label,
        shipped,
        &values,
        settings,
        &Shipped {
            none: Some("every device is the host"),
            ..Shipped::default()
        },
    )?;
    let mut command = format!(
        "oltplab study --scenario s1 --engine {} --scale {}",
        args.engine, args.scale
    );
    if args.devices != DEFAULT_DEVICES {
        command.push_str(&format!(" --devices {}", args.devices));
    }
    if args.repeat != 1 {
        command.push_str(&format!(" --repeat {}", args.repeat));
    }
    if args.pacing != Pacing::None {
        command.push_str(&format!(" --pacing {}", args.pacing.name()));
    }
    for s in &args.server_setting {
        command.push_str(&format!(" --server-setting {s}"));
    }
    command_file(label, &command, &body, applied)
}

/// How [`apply_to_shipped`] treats a shipped file's lines beyond writing values over them.
#[derive(Default)]
pub(super) struct Shipped<'a> {
    /// A key whose value is None: its line becomes this comment (`# key: none, …`), or with
    /// None is dropped.
    none: Option<&'a str>,
    /// Keys whose new value follows from another's and is not listed as applied.
    quiet: &'a [&'a str],
    /// A multi-line list (the line it starts with, up to its closing `]`) replaced by a text,
    /// and how that reads in the applied list.
    block: Option<(&'a str, &'a str, String)>,
}

/// A shipped study file with the command's `values` written over its `key = …` lines (each must
/// be there), and the command's server settings after its `engine` line. Returns the body and
/// what the options changed, as written.
pub(super) fn apply_to_shipped(
    label: &str,
    shipped: &str,
    values: &[(&str, Option<String>)],
    settings: &[(String, String)],
    how: &Shipped,
) -> Result<(String, Vec<String>)> {
    let mut found = vec![false; values.len()];
    let mut applied = Vec::new();
    let mut body = String::new();
    let mut lines = shipped.lines();
    while let Some(line) = lines.next() {
        if let Some((start, text, note)) = &how.block {
            if line.starts_with(start) {
                for l in lines.by_ref() {
                    if l.trim_end() == "]" {
                        break;
                    }
                }
                body.push_str(text);
                applied.push(note.clone());
                continue;
            }
        }
        let Some(i) = values
            .iter()
            .position(|(key, _)| line.starts_with(&format!("{key} = ")))
        else {
            body.push_str(line);
            body.push('\n');
            continue;
        };
        found[i] = true;
        let (key, value) = &values[i];
        let was = line[key.len() + 3..].trim();
        match (value, how.none) {
            (Some(v), _) => {
                body.push_str(&format!("{key} = {v}\n"));
                if v != was && !how.quiet.contains(key) {
                    applied.push(format!("{key} = {v}"));
                }
            }
            (None, Some(why)) => {
                body.push_str(&format!("# {key}: none, {why}\n"));
                applied.push(format!("no {key}"));
            }
            (None, None) => {}
        }
        if *key == "engine" && !settings.is_empty() {
            let given: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let line = format!("server_settings = {}", toml_list(&given));
            body.push_str(&line);
            body.push('\n');
            applied.push(line);
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(Error::failed(format!(
            "{label} has no `{} = ` line to apply the command's options to: this is a bug in oltplab",
            values[i].0
        )));
    }
    Ok((body, applied))
}

/// The file a scenario runs: `body` under one comment line naming the command and what it
/// changed, checked as `--file` checks a file.
pub(super) fn command_file(
    label: &'static str,
    command: &str,
    body: &str,
    applied: Vec<String>,
) -> Result<ScenarioFile> {
    let mut written = ScenarioFile {
        label,
        text: String::new(),
        applied,
    };
    // One comment line, whatever a setting's value holds.
    let command = command.replace(|c: char| c.is_control(), " ");
    written.text = format!(
        "# {command} as a study file: {label} {}\n{}",
        written.changed(),
        body.trim_end()
    );
    file::parse(Path::new(label), &written.text)
        .map_err(|e| Error::usage(format!("{command}: {e}")))?;
    Ok(written)
}

/// Splits the device list at top-level commas: `raid5(4,hdd-15k),host` is two devices.
fn split_devices(text: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    let out: Vec<String> = out.into_iter().map(|s| s.trim().to_string()).collect();
    if out.iter().any(|s| s.is_empty()) {
        return Err(Error::usage(
            "--devices has an empty entry: give device specs separated by commas, e.g. host,hdd-10k",
        ));
    }
    Ok(out)
}

/// A device spec as a file name: `raid5(4,hdd-15k)` → `raid5_4_hdd-15k`.
fn file_name(spec: &str) -> String {
    let mut name: String = spec
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    while name.contains("__") {
        name = name.replace("__", "_");
    }
    name.trim_matches('_').to_string()
}

/// The study's database: loaded once at `base`, copied for each device's run.
struct Database {
    engine: String,
    /// SQLite: the file; servers: the managed server's data directory.
    base: PathBuf,
    data_dir: PathBuf,
    buffer_pool_bytes: u64,
    /// Servers: settings of the study file's engine entry (`KEY=VALUE`), for the load and runs.
    server_settings: Vec<(String, String)>,
    /// What was loaded and runs: `tpcc`, or [`BROKERAGE`] (a study file's workload).
    workload: &'static str,
    /// A Galera cluster's nodes, for the load and runs (None: the engine's default).
    nodes: Option<u32>,
}

/// The brokerage workload, in a study file's cells and the storage scenarios.
const BROKERAGE: &str = "brokerage";
/// The brokerage workload's database in the studies: one load unit.
const BROKERAGE_CUSTOMERS: i64 = 1000;

/// The order-entry workload (S5's), in a study file's cells.
const ORDERS: &str = "orders";

/// Order entry in a study: what is loaded, and the fixed work of a cell's run (transactions
/// in all, shared out over its connections, after a warm-up of so many per connection).
struct OrdersWork {
    load: oltplab_workloads::orders::Scale,
    tx_per_point: u64,
    warmup_tx_per_connection: u64,
}

/// Order entry's load and work at a study's scale: the work is fixed (its time is what a cell
/// measures), sized to take about the scale's measured window on a fast emulated device.
fn orders_work(scale: &Scale) -> OrdersWork {
    let (customers, products, orders, tx, warmup) = match scale.name.as_str() {
        "test" => (1_000, 100, 1_000, 2_000, 10),
        "quick" => (10_000, 1_000, 10_000, 20_000, 10),
        "default" => (10_000, 1_000, 10_000, 100_000, 100),
        _ => (100_000, 10_000, 100_000, 500_000, 100),
    };
    OrdersWork {
        load: oltplab_workloads::orders::Scale {
            customers,
            products,
            orders,
        },
        tx_per_point: tx,
        warmup_tx_per_connection: warmup,
    }
}

/// Trading days of generated history: a few at the test and quick scales, more above.
fn brokerage_days(scale: &Scale) -> i64 {
    match scale.name.as_str() {
        "test" => 2,
        "quick" => 10,
        "default" => 50,
        _ => 300,
    }
}

/// The smallest buffer pool a managed server accepts (see `ServerConfig`).
const SERVER_POOL_BYTES_MIN: u64 = 8 << 20;

impl Database {
    fn new(engine: &str, data_dir: &Path, scale: &Scale) -> Database {
        let (base, buffer_pool_bytes) = match engine {
            "sqlite" => (data_dir.join("base.sqlite"), scale.buffer_pool_bytes),
            _ => (
                data_dir.join(format!("base-{engine}")),
                scale.buffer_pool_bytes.max(SERVER_POOL_BYTES_MIN),
            ),
        };
        Database {
            engine: engine.to_string(),
            base,
            data_dir: data_dir.to_path_buf(),
            buffer_pool_bytes,
            server_settings: Vec::new(),
            workload: "tpcc",
            nodes: None,
        }
    }

    fn is_server(&self) -> bool {
        self.engine != "sqlite"
    }

    /// The database at `at`: an SQLite file, or a managed server (O_DIRECT where the engine has
    /// it, as S1 ran) in that data directory.
    fn spec(&self, at: &Path) -> Result<DbSpec> {
        if self.is_server() {
            let mut spec = DbSpec::resolve(
                Some(Engine::named(&self.engine)?),
                None,
                at,
                self.buffer_pool_bytes,
                None,
                true,
            )?;
            spec.server_settings = self.server_settings.clone();
            spec.nodes = self.nodes.or(spec.nodes);
            Ok(spec)
        } else {
            DbSpec::resolve(
                Some(Engine::Sqlite),
                Some(&format!("sqlite:{}", at.display())),
                &self.data_dir,
                self.buffer_pool_bytes,
                None,
                false,
            )
        }
    }

    /// Loads TPC-C into the base database and checks its twelve conditions; the engine's version.
    fn load_tpcc(&self, warehouses: u32, seed: u64) -> Result<String> {
        let load = tpcc::load_with(
            &LoadConfig {
                db: self.spec(&self.base)?,
                warehouses,
                threads: std::thread::available_parallelism().map_or(1, |n| n.get()) as u32,
                seed,
                check: true,
                force: true,
                emulate: None,
                sqlite_vfs: None,
                quiet: output::quiet(),
            },
            &STOP,
        )?;
        if load.conditions.iter().any(|c| !c.holds()) {
            return Err(Error::failed(
                "the freshly loaded database violates TPC-C consistency conditions: this is a bug in oltplab",
            ));
        }
        Ok(load.engine_version)
    }

    /// Loads the brokerage workload's database ([`BROKERAGE_CUSTOMERS`], [`brokerage_days`]) into
    /// the base database and checks its invariants; the engine's version.
    fn load_brokerage(&self, scale: &Scale) -> Result<String> {
        let load = crate::brokerage::load_with(
            &crate::brokerage::LoadConfig {
                db: crate::brokerage::brokerage_spec(self.spec(&self.base)?),
                scale: oltplab_workloads::brokerage::Scale {
                    customers: BROKERAGE_CUSTOMERS,
                    days: brokerage_days(scale),
                },
                threads: std::thread::available_parallelism().map_or(1, |n| n.get()) as u32,
                seed: 1,
                check: true,
                force: true,
                quiet: output::quiet(),
            },
            &STOP,
        )?;
        if load.conditions.iter().any(|c| !c.holds()) {
            return Err(Error::failed(
                "the freshly loaded brokerage database violates its invariants: this is a bug in oltplab",
            ));
        }
        Ok(load.engine_version)
    }

    /// Loads order entry's tables ([`orders_work`], disk tables) into the base database and
    /// checks that every order has its five lines; the engine's version.
    fn load_orders(&self, scale: &Scale) -> Result<String> {
        let spec = crate::orders::orders_spec(self.spec(&self.base)?);
        let load = crate::orders::load_with(
            &crate::orders::OrdersLoadConfig {
                db: spec,
                tables: oltplab_workloads::orders::Tables::Disk,
                scale: orders_work(scale).load,
                seed: 1,
                force: true,
                quiet: output::quiet(),
            },
            &STOP,
        )?;
        Ok(load.engine_version)
    }

    /// A fresh copy of the loaded database for device `name`.
    fn copy_for(&self, name: &str) -> Result<PathBuf> {
        if self.is_server() {
            let to = self.data_dir.join(format!("run-{name}-{}", self.engine));
            if to.exists() {
                safety::ensure_own_dir(&to, false)?;
                std::fs::remove_dir_all(&to).map_err(|e| safety::io_usage(&to, "remove", &e))?;
            }
            oltplab_dbs::server::copy_cluster(&self.base, &to)?;
            Ok(to)
        } else {
            let to = self.data_dir.join(format!("run-{name}.sqlite"));
            copy_database(&self.base, &to)?;
            Ok(to)
        }
    }

    fn remove_copy(&self, copy: &Path) {
        if self.is_server() {
            let _ = std::fs::remove_dir_all(copy);
        } else {
            oltplab_dbs::sqlite::remove_database_files(copy);
        }
    }
}

/// Steps 2–4 of a device's measurement — TPC-C with its trace, the replays, α and what limited
/// the run, `repeat` times — given its device figures (QD 1 mean latency ns, QD 32 IOPS, from
/// `device_figures` or an earlier cell of the same device): what each cell of a study runs.
#[allow(clippy::too_many_arguments)]
fn study_runs(
    spec: &Spec,
    name: &str,
    device: (f64, f64),
    scale: &Scale,
    repeat: u32,
    database: &Database,
    data_dir: &Path,
    out: &Path,
    warnings: &mut Vec<Warning>,
) -> Result<DeviceFigures> {
    // 2–4, once per repetition, each on a fresh copy: the first keeps the plain file names.
    let mut runs = Vec::new();
    for r in 1..=repeat {
        let tag = match r {
            1 => name.to_string(),
            _ => format!("{name}-r{r}"),
        };
        if repeat > 1 {
            output::note!("  repetition {r} of {repeat}");
        }
        match run_and_replay(spec, name, &tag, scale, database, data_dir, out, warnings) {
            Ok(f) => runs.push(f),
            Err(Error::Interrupted) if !runs.is_empty() => break,
            Err(e) => return Err(e),
        }
    }
    let mut figures = runs[0].clone();
    figures.randread16k_lat_ns = device.0;
    figures.randread16k_iops = device.1;
    if runs.len() > 1 {
        let rep = Repeats::of(&runs);
        let mean = |i: &Interval| i.mean;
        figures.tpmc = mean(&rep.tpmc);
        figures.tpm_total = runs.iter().map(|r| r.tpm_total).sum::<f64>() / runs.len() as f64;
        figures.run_iops = mean(&rep.run_iops);
        figures.replay_iops = mean(&rep.replay_iops);
        figures.alpha = Some(mean(&rep.alpha));
        figures.alpha_causal = rep.alpha_causal.as_ref().map(mean);
        figures.tpse_like = rep.tpse_like.as_ref().map(mean);
        figures.orders_tps = rep.orders_tps.as_ref().map(mean);
        let mean_of = |f: fn(&DeviceFigures) -> Option<f64>| {
            let v: Vec<f64> = runs.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        figures.replay_causal_iops = mean_of(|r| r.replay_causal_iops);
        figures.replay_btreplay_iops = mean_of(|r| r.replay_btreplay_iops);
        figures.alpha_btreplay = mean_of(|r| r.alpha_btreplay);
        // The cell's own throughput: tpmC, Trade-Results/s or order-entry tx/s.
        let (name, t) = match (&rep.tpse_like, &rep.orders_tps) {
            (Some(t), _) => ("Trade-Results/s", t),
            (_, Some(t)) => ("order-entry tx/s", t),
            _ => ("tpmC", &rep.tpmc),
        };
        output::note!(
            "  over {} runs: {name} {:.0} ± {:.0}, α {:.2} ± {:.2} (95 %)",
            rep.runs,
            t.mean,
            t.ci95,
            rep.alpha.mean,
            rep.alpha.ci95
        );
        figures.repeats = Some(rep);
    }
    Ok(figures)
}

/// One TPC-C run of the device on a fresh copy, its replays and its explanation; `tag` names its
/// files (the device's name, with the repetition's number after the first).
#[allow(clippy::too_many_arguments)]
fn run_and_replay(
    spec: &Spec,
    name: &str,
    tag: &str,
    scale: &Scale,
    database: &Database,
    data_dir: &Path,
    out: &Path,
    warnings: &mut Vec<Warning>,
) -> Result<DeviceFigures> {
    let mut figures = DeviceFigures {
        name: name.to_string(),
        spec: spec.name(),
        ..DeviceFigures::default()
    };

    // 2. TPC-C on a fresh copy of the loaded database, through the VFS (SQLite) or the shim
    //    (servers) that traces and emulates.
    let db_path = database.copy_for(tag)?;
    let trace_path = out.join(format!("{tag}.trace"));
    if database.workload == ORDERS {
        let work = orders_work(scale);
        output::note!(
            "  order entry: {} connections, {} insert transactions in all after {} warm-up each",
            scale.terminals,
            format_count(work.tx_per_point as f64),
            work.warmup_tx_per_connection
        );
    } else {
        output::note!(
            "  {}: {} terminals, {} warm-up + {} measured",
            if database.workload == BROKERAGE {
                "brokerage"
            } else {
                "TPC-C"
            },
            scale.terminals,
            secs(scale.warmup_s),
            secs(scale.duration_s)
        );
    }
    let mut db = database.spec(&db_path)?;
    let user_set = |key: &str| db.server_settings.iter().any(|(k, _)| k == key);
    if db.engine == Engine::Postgres && scale.name != "quick" && !user_set("checkpoint_timeout") {
        // A checkpoint inside the measured window, so that the trace and α include the
        // engine's write-back (PostgreSQL's default, 5 min, may fall outside a short window).
        let timeout_s = (scale.duration_s / 2.0).clamp(30.0, 300.0).round();
        db.server_settings
            .push(("checkpoint_timeout".into(), format!("{timeout_s}s")));
    }
    let run_cfg = study_run(
        scale,
        db,
        (!spec.is_host()).then_some(spec),
        Some(trace_path.clone()),
        &out.join(format!("run-{tag}")),
    );
    let outcome = study_workload_run(database, &run_cfg, scale)?;
    figures.run = Some(outcome.step);
    let run = &outcome.summary;
    figures.tpmc = run.tpmc;
    figures.tpm_total = run.tpm_total;
    figures.tpse_like = outcome.tpse_like;
    figures.orders_tps = outcome.orders_tps;
    figures.trace = format!("{tag}.trace");
    figures.run_fidelity = run.emulation.as_ref().map(|e| e.fidelity.clone());
    for w in &outcome.warnings {
        if matches!(
            w.kind,
            WarningKind::EmulationOffTarget | WarningKind::ForeignData | WarningKind::NotSteady
        ) {
            warnings.push(Warning::new(w.kind, format!("{tag} run: {}", w.message)));
        }
    }
    let io = trace_totals(&trace_path)?;
    let measured_s = match run.measured_s {
        s if s > 0.0 => s,
        _ => scale.duration_s,
    };
    figures.run_ios = io.reads + io.writes;
    figures.run_syncs = io.syncs;
    figures.run_iops = figures.run_ios as f64 / measured_s;
    interrupted()?;

    // 3. The replay: the same I/Os, same order per thread and same concurrency, no time between.
    output::note!(
        "  replay: {} I/Os and {} syncs as fast as the device allows",
        format_count(figures.run_ios as f64),
        format_count(io.syncs as f64)
    );
    let replay_dir = data_dir.join(format!("replay-{tag}"));
    // As the run: SQLite and PostgreSQL go through the page cache, InnoDB uses O_DIRECT; on an
    // emulated device the time comes from its model either way.
    let direct = database.engine == "mariadb" && spec.is_host();
    let replayed = replay_figures(
        &trace_path,
        spec,
        &replay_dir,
        direct,
        &out.join(format!("replay-{tag}")),
    )?;
    let _ = std::fs::remove_dir_all(&replay_dir);
    database.remove_copy(&db_path);
    figures.replay_iops = replayed.summary.iops;
    figures.replay_fidelity = replayed.summary.fidelity.clone();
    // On the host the real-time replay is the lanes one.
    let mut bound_order = ReplayOrder::Lanes;
    if !spec.is_host() {
        // On a model the bound needs no waiting: the same trace through the same model in virtual
        // time, in both orders. The real-time replay stays as the cross-check.
        let trace = TraceData::load(&trace_path)?;
        let lanes = replay_virtual(&trace, spec, 1, ReplayOrder::Lanes)?;
        let causal = replay_virtual(&trace, spec, 1, ReplayOrder::Causal)?;
        // S1's era replayed with btreplay; it needs the CPU of each I/O, which every capture of
        // this version records.
        let btreplay = (trace.records_with_cpu() > 0)
            .then(|| replay_virtual(&trace, spec, 1, ReplayOrder::Btreplay))
            .transpose()?;
        let realtime = figures.replay_iops;
        if realtime > 0.0 && (realtime / lanes.iops - 1.0).abs() > REALTIME_AGREES_PCT / 100.0 {
            warn(warnings, Warning::new(
                WarningKind::EmulationOffTarget,
                format!("{tag}: the real-time replay through the emulator did {realtime:.0} IOPS, {:+.0} % off the model's {:.0} in virtual time; α uses the model's (the emulator's own timing error: {})", (realtime / lanes.iops - 1.0) * 100.0, lanes.iops, figures.replay_fidelity.as_ref().map(|f| f.off_pct).map_or("not measured".into(), |p| format!("{p:+.1} % latency"))),
            ));
        }
        figures.replay_realtime_iops = Some(realtime);
        figures.replay_lanes_iops = Some(lanes.iops);
        figures.replay_causal_iops = Some(causal.iops);
        figures.alpha_causal = (causal.iops > 0.0).then(|| figures.run_iops / causal.iops);
        figures.replay_btreplay_iops = btreplay.as_ref().map(|b| b.iops);
        figures.alpha_btreplay = btreplay
            .as_ref()
            .filter(|b| b.iops > 0.0)
            .map(|b| figures.run_iops / b.iops);
        // Every order is a schedule of the same I/O that the device can do, so the bound is the
        // one that got the most from it. btreplay's deep queue usually does; but run flat out,
        // a thread's I/O lands beside the others' as it never did in the run (a background
        // writer beside the readers), which can cost a device more than the run's own timing.
        (figures.replay_iops, bound_order) = [
            (lanes.iops, ReplayOrder::Lanes),
            (causal.iops, ReplayOrder::Causal),
            (
                figures.replay_btreplay_iops.unwrap_or(0.0),
                ReplayOrder::Btreplay,
            ),
        ]
        .into_iter()
        .fold((0.0, ReplayOrder::Lanes), |best, o| {
            if o.0 > best.0 {
                o
            } else {
                best
            }
        });
    }
    figures.alpha = (figures.replay_iops > 0.0).then(|| figures.run_iops / figures.replay_iops);
    interrupted()?;

    // 4. What limited the run.
    // The transactions that take SQLite's writer lock; their I/O is the holder's.
    let write_txs = [TxType::NewOrder, TxType::Payment, TxType::Delivery];
    let holder_io_ns = write_txs
        .iter()
        .map(|t| io.wait_ns_by_tag[t.tag() as usize])
        .sum();
    let write_names = write_txs.map(|t| t.name());
    // The breakdown's rules read a missing bound as no sign of a device limit (α 0).
    let alpha = figures.alpha.unwrap_or(0.0);
    figures.breakdown = Breakdown::from_run(run, io.wait_ns, scale, alpha);
    if database.workload == "tpcc" {
        // The other workloads' writers and their tags are their own; their lock waits stay
        // unsplit.
        figures.breakdown = figures
            .breakdown
            .with_writer_lock(run, &write_names, holder_io_ns);
    }
    figures.breakdown.alpha_causal = figures.alpha_causal;
    figures.bound_order = Some(bound_order);
    figures.breakdown.bound_order = bound_order;
    figures.breakdown.alpha_lanes = figures
        .replay_lanes_iops
        .filter(|&v| v > 0.0)
        .map(|v| figures.run_iops / v);
    let off_pct = |f: &Option<Fidelity>| f.as_ref().map(|f| f.off_pct);
    figures.breakdown.run_fidelity_off_pct = off_pct(&figures.run_fidelity);
    figures.breakdown.replay_fidelity_off_pct = off_pct(&figures.replay_fidelity);
    figures.explanation = explain(&figures.breakdown, spec.is_host(), &database.engine);
    figures.io_by_tx = run.io.by_tx.clone();
    // Said once per device, not once per repetition.
    if tag == name && spec.is_host() && io.reads > 0 && database.engine != "mariadb" {
        warn(warnings, Warning::new(
            WarningKind::PageCache,
            format!("{name}: {} reads through the page cache, so the host's run and replay figures include memory hits; the emulated devices see every read", outcome.engine_version.as_deref().unwrap_or(&database.engine)),
        ));
    }
    output::note!(
        "  {}, run {:.0} IOPS, replay {:.0} IOPS, α {}: {}",
        match (figures.tpse_like, figures.orders_tps) {
            (Some(t), _) => format!("{t:.1} Trade-Results/s"),
            (_, Some(t)) => format!("{t:.0} order-entry tx/s"),
            _ => format!("tpmC {:.0}", figures.tpmc),
        },
        figures.run_iops,
        figures.replay_iops,
        figures.alpha.map_or("—".into(), |a| format!("{a:.2}")),
        figures.explanation
    );
    Ok(figures)
}

/// Where a study that runs cell by cell stands when its result is written.
#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// Cells are still to run: a result left so (a crash, a failure) reads as unfinished
    /// (`interrupted`, with a warning), so that neither the report nor a reader takes it as a
    /// finished study.
    Running,
    /// Ctrl-C stopped it.
    Stopped,
    Finished,
}

impl State {
    /// The warning a study's results.json carries until the study has ended: `finished` of its
    /// `total` `cells` ("device sets") were done, `ran` of them in this run.
    fn unfinished_warning(
        self,
        finished: usize,
        total: usize,
        cells: &str,
        ran: usize,
    ) -> Option<Warning> {
        let text = match self {
            State::Finished => return None,
            State::Stopped => format!(
                "Ctrl-C stopped the study with {finished} of {total} {cells} finished ({ran} in this run); results.json holds those, `oltplab study --resume DIR` runs the rest"
            ),
            State::Running => format!(
                "unfinished: {finished} of {total} {cells} finished when this was written; if the study is no longer running, `oltplab study --resume DIR` runs the rest"
            ),
        };
        Some(Warning::new(WarningKind::Interrupted, text))
    }
}

/// A study's summary, which says whether Ctrl-C cut the study short.
trait Stoppable {
    fn interrupted(&mut self) -> &mut bool;
}

/// The study summaries, each with its `interrupted` field.
macro_rules! stoppable {
    ($($summary:ty),*) => {
        $(impl Stoppable for $summary {
            fn interrupted(&mut self) -> &mut bool {
                &mut self.interrupted
            }
        })*
    };
}

stoppable!(
    StudySummary,
    crate::schema::StorageStudySummary,
    crate::schema::ClusterStudySummary,
    crate::schema::ProfilesSummary,
    crate::schema::InMemorySummary
);

/// How every scenario ends: its summary says whether Ctrl-C stopped it, with the warning
/// `stopped` gives then (what it holds), and [`end`] writes and prints it a last time.
fn finish<S: Serialize + Stoppable>(
    mut doc: ResultDoc<S, Value>,
    out: &Path,
    json: Option<&Path>,
    stopped: impl FnOnce(&S) -> Warning,
    table: impl FnOnce(&S),
) -> Result<()> {
    let interrupted = STOP.load(Ordering::Relaxed);
    *doc.summary.interrupted() = interrupted;
    if interrupted {
        let w = stopped(&doc.summary);
        doc.warnings.push(w);
    }
    end(doc, out, json, table)
}

/// `results.json` (and `--json`) and `report.html` written a last time, `table` printing the
/// figures, and a stopped study ending as interrupted, so that its exit code says so.
fn end<S: Serialize + Stoppable>(
    mut doc: ResultDoc<S, Value>,
    out: &Path,
    json: Option<&Path>,
    table: impl FnOnce(&S),
) -> Result<()> {
    save(&doc, out, json)?;
    write_report(&doc, out)?;
    table(&doc.summary);
    if *doc.summary.interrupted() {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// A cell's run, whichever workload: the figures the study reads, in TPC-C's summary where the
/// brokerage's are the same (transactions, I/O, CPU, window, emulation).
struct WorkloadRun {
    summary: crate::schema::TpccSummary,
    step: crate::schema::RampStep,
    tpse_like: Option<f64>,
    orders_tps: Option<f64>,
    warnings: Vec<Warning>,
    engine_version: Option<String>,
}

/// The database's workload at the study's run configuration: TPC-C's run, or the brokerage's
/// with the same database, terminals, window, capture and output.
fn study_workload_run(database: &Database, cfg: &RunConfig, scale: &Scale) -> Result<WorkloadRun> {
    if database.workload == ORDERS {
        return orders_run(cfg, scale);
    }
    if database.workload != BROKERAGE {
        let o = tpcc::run_with(cfg, &STOP)?;
        return Ok(WorkloadRun {
            step: tpcc::step_of(&o.doc),
            summary: o.doc.summary,
            tpse_like: None,
            orders_tps: None,
            warnings: o.doc.warnings,
            engine_version: o.doc.env.engine_version,
        });
    }
    let b = crate::brokerage::RunConfig {
        db: crate::brokerage::brokerage_spec(cfg.db.clone()),
        terminals: cfg.terminals.unwrap_or(1),
        ramp: Vec::new(),
        duration_s: cfg.duration_s,
        warmup_s: cfg.warmup_s,
        report_interval_s: cfg.report_interval_s,
        max_retries: cfg.max_retries,
        seed: cfg.seed,
        capture: cfg.capture.clone(),
        output: cfg.output.clone(),
    };
    let doc = crate::brokerage::run_with(&b, &STOP)?;
    let s = &doc.summary;
    Ok(WorkloadRun {
        step: crate::brokerage::brokerage_step_of(&doc),
        summary: crate::schema::TpccSummary {
            tx: s.tx.clone(),
            io: s.io.clone(),
            cpu: s.cpu.clone(),
            measured_s: s.measured_s,
            emulation: s.emulation.clone(),
            interrupted: s.interrupted,
            ..Default::default()
        },
        tpse_like: Some(s.tpse_like),
        orders_tps: None,
        warnings: doc.warnings.clone(),
        engine_version: doc.env.engine_version.clone(),
    })
}

/// Order entry's run at a study's configuration: one connection per terminal, insert
/// transactions on disk tables, the fixed work of [`orders_work`], with the same database,
/// capture and output as TPC-C's; its figures where TPC-C's summary has the same.
fn orders_run(cfg: &RunConfig, scale: &Scale) -> Result<WorkloadRun> {
    use oltplab_workloads::orders::{Mode, Tables};
    let work = orders_work(scale);
    let connections = cfg.terminals.unwrap_or(1);
    let o = crate::orders::OrdersRunConfig {
        workload: ORDERS,
        db: crate::orders::orders_spec(cfg.db.clone()),
        mode: Mode::Insert,
        tables: Some(Tables::Disk),
        connections: vec![connections],
        tx_per_connection: work.tx_per_point.div_ceil(u64::from(connections.max(1))),
        tx_per_point: Some(work.tx_per_point),
        warmup_tx_per_connection: work.warmup_tx_per_connection,
        max_retries: cfg.max_retries,
        seed: cfg.seed,
        report_interval_s: cfg.report_interval_s,
        capture: cfg.capture.clone(),
        output: cfg.output.clone(),
    };
    let doc = crate::orders::run_with(&o, &STOP)?.doc;
    let s = &doc.summary;
    let io = s.io.clone().unwrap_or_default();
    // One transaction type, named by the mode as the run's I/O per transaction names it.
    let tx = crate::schema::TxSummary {
        count: s.transactions,
        errors: s.errors,
        retries: s.retries,
        tps: s.tps,
        lat_ns: s.lat_ns,
        ..Default::default()
    };
    let histogram = format!("tx_c{connections}");
    let step = crate::schema::RampStep {
        terminals: connections,
        throughput: s.tps,
        throughput_unit: "tx/s".into(),
        tx_per_s: s.tps,
        ..crate::workload::ramp::common_figures(
            std::iter::once(&histogram),
            &doc.histograms,
            s.cpu.utilisation,
            &io,
            &doc.warnings,
            s.interrupted,
        )
    };
    Ok(WorkloadRun {
        step,
        summary: crate::schema::TpccSummary {
            tx: [(s.mode.clone(), tx)].into(),
            io,
            cpu: s.cpu.clone(),
            measured_s: s.elapsed_s,
            emulation: s.emulation.clone(),
            interrupted: s.interrupted,
            ..Default::default()
        },
        tpse_like: None,
        orders_tps: Some(s.tps),
        warnings: doc.warnings.clone(),
        engine_version: doc.env.engine_version.clone(),
    })
}

/// A warning of the study itself (the runs print their own): printed now, kept in the result.
fn warn(warnings: &mut Vec<Warning>, w: Warning) {
    output::print_warnings(std::slice::from_ref(&w));
    warnings.push(w);
}

/// The real-time replay through the emulator and the virtual one may differ by this much before a
/// warning: the emulator's timing error on a busy machine.
const REALTIME_AGREES_PCT: f64 = 5.0;

fn interrupted() -> Result<()> {
    if STOP.load(Ordering::Relaxed) {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

/// The device's own figures: `oltplab device --profile db-16k-randread --sweep-qd 1,32` on it
/// (emulated devices on a RAM backing, so that the model, not this machine's disk, sets every
/// time), measured in-process; returns (QD 1 mean latency ns, QD 32 IOPS).
fn device_figures(
    spec: &Spec,
    name: &str,
    scale: &Scale,
    data_dir: &Path,
    out: &Path,
) -> Result<(f64, f64)> {
    let request = DeviceRequest {
        target: spec.is_host().then(|| data_dir.join("device.dat")),
        emulate: (!spec.is_host()).then(|| spec.clone()),
        backing: if spec.is_host() {
            BackingChoice::Auto
        } else {
            BackingChoice::Ram
        },
        pattern: Pattern::profiles(&[DEVICE_PROFILE]),
        queue_depths: QueueDepths::Sweep(vec![DEVICE_QD_LATENCY, DEVICE_QD_IOPS]),
        runtime: Duration::from_secs_f64(scale.device_runtime_s),
        ramp: Duration::from_secs_f64(scale.device_ramp_s),
        size: scale.device_size_bytes,
        out: Some(out.join(format!("device-{name}"))),
        ..DeviceRequest::default()
    };
    let outcome = device::measure(&request.check()?)?;
    if outcome.interrupted {
        return Err(Error::Interrupted);
    }
    sweep_figures(&outcome.doc.summary.measured)
}

/// The study's device profile and its two queue depths: latency at 1, IOPS at 32 (S1's figures).
const DEVICE_PROFILE: &str = "db-16k-randread";
const DEVICE_QD_LATENCY: u32 = 1;
const DEVICE_QD_IOPS: u32 = 32;

/// (QD 1 mean latency ns, QD 32 IOPS) of a device result; a point it lacks is an error, not a 0.
fn sweep_figures(summary: &DeviceSummary) -> Result<(f64, f64)> {
    let sweep = summary
        .profiles
        .as_ref()
        .and_then(|p| p.iter().find(|p| p.name == DEVICE_PROFILE))
        .map(|p| p.sweep.as_slice())
        .unwrap_or_default();
    let at = |qd: u32| {
        sweep.iter().find(|p| p.qd == qd).ok_or_else(|| {
            Error::failed(format!(
                "the device run measured no {DEVICE_PROFILE} point at QD {qd}, so the study has no device figure: this is a bug in oltplab"
            ))
        })
    };
    Ok((at(DEVICE_QD_LATENCY)?.lat_ns.mean, at(DEVICE_QD_IOPS)?.iops))
}

/// Replays the run's trace as fast as the device allows (`oltplab trace replay
/// --as-fast-as-possible`, in-process); its result is kept in `result_dir`.
fn replay_figures(
    trace: &Path,
    spec: &Spec,
    target: &Path,
    direct: bool,
    result_dir: &Path,
) -> Result<ReplayResult> {
    let cfg = ReplayConfig {
        direct,
        out: Some(result_dir.to_path_buf()),
        ..ReplayConfig::as_fast_as_possible(trace, target, (!spec.is_host()).then_some(spec))
    };
    let run = replay(&cfg)?;
    if run.interrupted {
        return Err(Error::Interrupted);
    }
    Ok(run.doc)
}

/// Copies the loaded database for one run; the copy is oltplab's (marked), the base stays as loaded.
/// Bytes in the files under `path` (or of the file `path`).
fn tree_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| tree_bytes(&e.path())).sum())
        .unwrap_or(0)
}

fn copy_database(base: &Path, to: &Path) -> Result<()> {
    // The last copy's, with any table a layout moved into its own file.
    oltplab_dbs::sqlite::remove_database_files(to);
    std::fs::copy(base, to).map_err(|e| {
        Error::failed(format!(
            "cannot copy {} to {}: {}",
            base.display(),
            to.display(),
            e
        ))
    })?;
    safety::write_file_marker(to, safety::FileMarker { filled_bytes: 0 })
        .map_err(|e| safety::io_usage(to, "mark", &e))?;
    Ok(())
}

struct TraceTotals {
    reads: u64,
    writes: u64,
    syncs: u64,
    /// Time the terminals spent in I/O calls (reads, writes and syncs): the records tied to a
    /// transaction, or every record of an untagged trace.
    wait_ns: u64,
    /// The same per transaction tag.
    wait_ns_by_tag: [u64; 256],
}

fn trace_totals(path: &Path) -> Result<TraceTotals> {
    let reader = TraceReader::open(path)?;
    let mut t = TraceTotals {
        reads: 0,
        writes: 0,
        syncs: 0,
        wait_ns: 0,
        wait_ns_by_tag: [0; 256],
    };
    let (mut all_ns, mut tagged_ns) = (0u64, 0u64);
    reader.for_each(|r| {
        match r.kind() {
            Op::Read => t.reads += 1,
            Op::Write => t.writes += 1,
            op if op.is_sync() => t.syncs += 1,
            _ => {}
        }
        all_ns += r.latency_ns as u64;
        if r.tag != 0 {
            tagged_ns += r.latency_ns as u64;
            t.wait_ns_by_tag[r.tag as usize] += r.latency_ns as u64;
        }
    })?;
    // A server's background processes (checkpointer, WAL writer) do I/O no terminal waits for.
    t.wait_ns = if tagged_ns > 0 { tagged_ns } else { all_ns };
    Ok(t)
}

/// A study's result document: its resolved config, the environment of its data directory.
fn new_study_doc<C: Serialize, S>(
    started_at: String,
    config: &C,
    data_dir: &Path,
    summary: S,
) -> ResultDoc<S, Value> {
    let config = serde_json::to_value(config).expect("config serialises");
    output::new_doc(
        "study",
        started_at,
        config,
        Env::collect(Some(data_dir)),
        summary,
    )
}

/// Checks `--json`, then makes the output and data directories: every scenario starts so.
fn prepare(args: &StudyArgs) -> Result<(String, PathBuf)> {
    if let Some(json) = &args.json {
        output::check_json_path(json, args.force)?;
    }
    let started_at = now_rfc3339();
    let out = output::prepare_out_dir(args.out.as_deref(), "study", &started_at, args.force)?;
    safety::ensure_own_dir(&args.data_dir, args.force)?;
    Ok((started_at, out))
}

/// A TPC-C run at the study's scale on `db` (emulating `emulate`, tracing into `trace`), its
/// result saved into `out`: what every TPC-C study runs per device or configuration.
fn study_run(
    scale: &Scale,
    db: DbSpec,
    emulate: Option<&Spec>,
    trace: Option<PathBuf>,
    out: &Path,
) -> RunConfig {
    RunConfig {
        db,
        warehouses: Some(scale.warehouses),
        terminals: Some(scale.terminals),
        ramp: Vec::new(),
        duration_s: scale.duration_s,
        warmup_s: scale.warmup_s,
        warmup_auto: false,
        report_interval_s: scale.report_interval_s,
        keying_think: scale.keying_think,
        max_retries: 10,
        seed: 1,
        warehouse_range: None,
        start_at: None,
        procedures: false,
        capture: CaptureConfig {
            emulate: emulate.cloned().map(Emulation::device),
            trace,
            // As the device step: a model's times must not wait for this machine's disk.
            backing: BackingChoice::Ram,
        },
        sqlite_vfs: None,
        output: OutputConfig::saved(None, Some(out.to_path_buf()), false),
    }
}

/// `results.json` in the output directory, and the `--json` copy (or standard output).
fn save<T: Serialize>(doc: &T, out: &Path, json: Option<&Path>) -> Result<()> {
    output::write_json(&out.join(RESULTS_FILE), doc)?;
    match json {
        Some(json) => output::write_json(json, doc),
        None => Ok(()),
    }
}

fn secs(s: f64) -> String {
    format!("{s:.0} s")
}

fn print_table(summary: &StudySummary, out: &Path) {
    output::say!("");
    output::say!(
        "{:<18} {:>11} {:>11} {:>9} {:>10} {:>10} {:>10} {:>10} {:>7} {:>8} {:>8} {:>9} {:>8} {:>6}  vs baseline (IOPS, lat, tpmC)",
        "device",
        "16k IOPS",
        "16k lat",
        "tpmC",
        "run IOPS",
        "lanes",
        "causal",
        "btreplay",
        "α",
        "α causal",
        "α btrep.",
        "run fid.",
        "run p99",
        "cpu q"
    );
    for d in &summary.devices {
        let vs = d.vs_baseline.as_ref().map_or(String::new(), |r| {
            format!(
                "{:.1}×, {:.3}×, {:.2}×",
                r.randread16k_iops, r.randread16k_lat_ns, r.tpmc
            )
        });
        // An α above 1.05 is no bound: it is marked where it stands, not only in the sentence.
        let alpha = |a: f64| {
            if a > explain::ALPHA_VALID_MAX {
                format!("{a:.2}!")
            } else {
                format!("{a:.2}")
            }
        };
        // The run's realised latency against its model: a figure off by more than 5 % is marked.
        let fidelity =
            d.run_fidelity
                .as_ref()
                .map(|f| f.emulated_off_pct)
                .map_or("—".into(), |p| {
                    let mark = if p.abs() > OFF_TARGET_PCT { "!" } else { "" };
                    format!("{p:+.1}%{mark}")
                });
        // Its emulated p99 against the model's: where the emulator's error shows first; and the
        // share of I/Os its threads' queueing for a core made late (the machine's load).
        let (p99, cpu_queue) = d.run_fidelity.as_ref().filter(|f| f.ios > 0).map_or(
            ("—".into(), "—".into()),
            |f| {
                let mark = if f.emulated_p99_off_pct.abs() > P99_OFF_TARGET_PCT {
                    "!"
                } else {
                    ""
                };
                (
                    format!("{:+.0}%{mark}", f.emulated_p99_off_pct),
                    format!("{:.0}%", f.cpu_queue_late_pct),
                )
            },
        );
        // With --repeat: the mean and its 95 % interval.
        let rep = d.repeats.as_ref();
        let tpmc = rep.map_or(format!("{:.0}", d.tpmc), |r| {
            format!("{:.0}±{:.0}", r.tpmc.mean, r.tpmc.ci95)
        });
        let alpha_shown = match rep {
            Some(r) => format!("{}±{:.2}", alpha(r.alpha.mean), r.alpha.ci95),
            None => d.alpha.map_or("—".into(), alpha),
        };
        // The replay α is against is marked.
        let replay = |v: Option<f64>, order: ReplayOrder| {
            v.map_or("—".into(), |v| {
                let mark = if Some(order) == d.bound_order {
                    "*"
                } else {
                    ""
                };
                format!("{v:.0}{mark}")
            })
        };
        output::say!(
            "{:<18} {:>11} {:>11} {:>9} {:>10.0} {:>10} {:>10} {:>10} {:>7} {:>8} {:>8} {:>9} {:>8} {:>6}  {}",
            d.name,
            format_count(d.randread16k_iops),
            format_ns(d.randread16k_lat_ns),
            tpmc,
            d.run_iops,
            replay(
                d.replay_lanes_iops.or(Some(d.replay_iops)),
                ReplayOrder::Lanes
            ),
            replay(d.replay_causal_iops, ReplayOrder::Causal),
            replay(d.replay_btreplay_iops, ReplayOrder::Btreplay),
            alpha_shown,
            d.alpha_causal.map_or("—".into(), alpha),
            d.alpha_btreplay.map_or("—".into(), alpha),
            fidelity,
            p99,
            cpu_queue,
            vs
        );
    }
    output::say!(
        "(replays, IOPS — lanes: each traced thread one synchronous I/O at a time, threads free; causal: an I/O waits for every I/O that had completed before it started in the run; btreplay: blktrace's btreplay -N, each CPU's I/O in bunches submitted back to back; on emulated devices all three in virtual time on the model, and α = run IOPS over the best of them, marked *; ! marks an α above {} — no bound; run fid. and run p99: the mean and p99 latency the emulated device gave in the run against the model's, ! beyond ±{OFF_TARGET_PCT} % and ±{P99_OFF_TARGET_PCT} %; cpu q: the share of I/Os late because their thread then queued for a free core, as it would after a real device's completion — the machine's load, not the emulator's error)",
        explain::ALPHA_VALID_MAX
    );
    if let Some(r) = summary.devices.iter().find_map(|d| d.repeats.as_ref()) {
        output::say!(
            "(tpmC and α: the mean of {} runs ± the half-width of its 95 % confidence interval; the sentences below are the first run's)",
            r.runs
        );
    }
    output::say!("");
    for d in &summary.devices {
        output::say!("{}: {}", d.name, d.explanation);
    }
    output::say!(
        "\nresults: {}  report: {}  traces: {}",
        out.join(RESULTS_FILE).display(),
        out.join(REPORT_FILE).display(),
        format_bytes(
            summary
                .devices
                .iter()
                .filter_map(|d| std::fs::metadata(out.join(&d.trace)).ok())
                .map(|m| m.len())
                .sum()
        )
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_metrics::schema::{ProfileResult, SweepPoint};

    fn profile(points: &[(u32, f64, f64)]) -> DeviceSummary {
        let sweep = points
            .iter()
            .map(|&(qd, iops, lat)| {
                let mut p = SweepPoint {
                    qd,
                    iops,
                    ..SweepPoint::default()
                };
                p.lat_ns.mean = lat;
                p
            })
            .collect();
        DeviceSummary {
            profiles: Some(vec![ProfileResult {
                name: DEVICE_PROFILE.into(),
                sweep,
                ..ProfileResult::default()
            }]),
            ..DeviceSummary::default()
        }
    }

    /// `oltplab study ARGS…`'s arguments, as clap parses them.
    pub(super) fn study_args(args: &[&str]) -> StudyArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            study: StudyArgs,
        }
        use clap::Parser as _;
        Cli::try_parse_from(std::iter::once("study").chain(args.iter().copied()))
            .unwrap()
            .study
    }

    /// `oltplab study --scale quick` is studies/s1.toml as shipped: the same cells, hashes
    /// included, so its finished cells are the file's.
    #[test]
    fn s1_at_the_quick_scale_is_the_shipped_file() {
        let s1 = s1_file(&study_args(&["--scale", "quick"]), &[]).unwrap();
        assert!(s1.applied.is_empty(), "{:?}", s1.applied);
        let ran = file::parse(Path::new(s1.label), &s1.text).unwrap();
        let shipped = file::parse(
            Path::new("studies/s1.toml"),
            include_str!("../../../../studies/s1.toml"),
        )
        .unwrap();
        let cells = |s: &file::FileStudy| -> Vec<(String, String)> {
            s.cells
                .iter()
                .map(|c| (c.id.clone(), c.hash.clone()))
                .collect()
        };
        assert_eq!(cells(&ran), cells(&shipped));
        assert_eq!(ran.baseline, shipped.baseline);
    }

    /// Every option of the S1 scenario lands in the file it runs, which parses into the cells S1
    /// measures: the devices in order, the scale's terminals (ten per warehouse when paced), the
    /// repetitions, the engine with its settings, the first emulated device as the baseline.
    #[test]
    fn s1_applies_every_option_to_its_file() {
        let args = study_args(&[
            "--scale",
            "test",
            "--engine",
            "postgres",
            "--devices",
            "host,raid10(4,hdd-15k),nvme-gen4",
            "--repeat",
            "3",
            "--pacing",
            "spec",
        ]);
        let settings = [("synchronous_commit".to_string(), "off".to_string())];
        let s1 = s1_file(&args, &settings).unwrap();
        let study = file::parse(Path::new(s1.label), &s1.text).unwrap();
        let devices: Vec<&str> = study.cells.iter().map(|c| c.axes.device.as_str()).collect();
        assert_eq!(
            devices,
            ["host", "raid10(4,hdd-15k,stripe=64k)", "nvme-gen4"],
            "{}",
            s1.text
        );
        let paced = Scale::named("test").paced(Pacing::Spec);
        for c in &study.cells {
            assert_eq!(c.axes.engine, "postgres");
            assert_eq!(c.axes.server_settings, ["synchronous_commit=off"]);
            assert_eq!(c.axes.terminals, paced.terminals);
            assert_eq!(c.axes.pacing, "spec");
        }
        assert_eq!(study.repeat, 3);
        assert_eq!(study.scale.name, "test");
        assert_eq!(
            study.baseline.as_deref(),
            Some("raid10_4_hdd-15k_stripe_64k")
        );
        for key in [
            "scale = \"test\"",
            "repeat = 3",
            "pacing = [\"spec\"]",
            "engine = \"postgres\"",
        ] {
            assert!(
                s1.applied.iter().any(|a| a == key),
                "{key}: {:?}",
                s1.applied
            );
        }
        assert!(s1
            .text
            .starts_with("# oltplab study --scenario s1 --engine postgres"));
        // Only the host: no baseline, as S1 had none then.
        let host = s1_file(&study_args(&["--devices", "host"]), &[]).unwrap();
        let study = file::parse(Path::new(host.label), &host.text).unwrap();
        assert_eq!(study.baseline, None);
        assert_eq!(study.cells.len(), 1);
    }

    #[test]
    fn s1_refuses_bad_devices_naming_the_option() {
        for (devices, expected) in [
            ("hdd-10k,,host", "empty entry"),
            ("floppy", "--devices: `floppy`"),
            ("host,host", "twice"),
        ] {
            let e = s1_file(&study_args(&["--devices", devices]), &[])
                .err()
                .unwrap();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(expected), "{devices}: {e}");
        }
        assert_eq!(toml_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }

    #[test]
    fn a_missing_device_figure_is_an_error_not_a_zero() {
        let both = profile(&[(1, 150.0, 6.6e6), (32, 420.0, 7.6e7)]);
        assert_eq!(sweep_figures(&both).unwrap(), (6.6e6, 420.0));
        for partial in [
            profile(&[(1, 150.0, 6.6e6)]),
            profile(&[(32, 420.0, 7.6e7)]),
            DeviceSummary::default(),
        ] {
            let err = sweep_figures(&partial).unwrap_err();
            assert_eq!(err.exit_code(), 1);
            assert!(err.to_string().contains("no device figure"), "{err}");
        }
    }

    /// The device step, in-process on an emulated device: the typed result gives the model's
    /// figures (a 10k rpm disk: milliseconds at QD 1, more IOPS at QD 32 by reordering).
    #[test]
    fn the_device_step_measures_an_emulated_device_in_process() {
        let dir = std::env::temp_dir().join(format!("oltplab-study-unit-{}", std::process::id()));
        let scale = Scale {
            device_runtime_s: 0.4,
            device_ramp_s: 0.1,
            device_size_bytes: 64 << 20,
            ..Scale::named("quick")
        };
        let spec = parse_spec("hdd-10k").unwrap();
        let (lat_ns, iops) = device_figures(&spec, "hdd-10k", &scale, &dir, &dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!((1e6..2e7).contains(&lat_ns), "QD 1 latency {lat_ns} ns");
        assert!(iops > 1e9 / lat_ns, "QD 32 {iops} IOPS vs QD 1 {lat_ns} ns");
    }
}
