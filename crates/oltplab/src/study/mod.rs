//! `oltplab study`: the reference studies S1–S5 and the user's own study files, each a matrix of
//! cells run by one engine. This module is the kit: the command's arguments, the scales, the
//! dispatch to a scenario, and the state and saving of a study's result. S1 (TPC-C on each
//! device, traced and replayed, α) is the shipped studies/s1.toml with the command's options
//! applied (`shipped.rs`), run by the study-file engine (`file.rs`: the file's format and its
//! cells; `cells.rs`: the loop over them, resumable) with S1's measurement (`s1.rs`) on loaded
//! databases (`database.rs`). S2/S3 (`storage.rs`), S4 (`profiles.rs`), S5 (`in_memory.rs`) and
//! the cluster study (`cluster.rs`) run their shipped files through the same engine; the power-cut
//! scenario is its own module.

mod cells;
mod cluster;
mod database;
mod explain;
mod file;
mod in_memory;
mod power_cut;
mod profiles;
mod s1;
mod shipped;
mod storage;

use std::path::{Path, PathBuf};

use clap::Args;
use oltplab_core::{Error, Result};
use oltplab_metrics::env::Env;
use oltplab_metrics::schema::ResultDoc;
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;
use serde_json::Value;

use crate::output;
use crate::workload::target::Engine;
use oltplab_schema::StudySummary;

use shipped::{equivalent_file, s1_file, s1_server_settings, S1_POOL_SHARE};

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

    /// Run each device's TPC-C run and replay (cache-tiers, placement: each configuration's run)
    /// N times, each on a fresh copy of the loaded database, and report the throughput, IOPS and
    /// α (cache-tiers, placement: response times and CPU) as means with 95 % confidence intervals
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
    /// with --scenario s1, cache-tiers, placement, profiles, in-memory or cluster: print the
    /// scenario as a study file
    #[arg(long)]
    pub dry_run: bool,

    /// A setting for the PostgreSQL or MariaDB server of S1, cache-tiers or placement, NAME=VALUE
    /// (repeat for more), e.g. synchronous_commit=off; names are checked against the installed
    /// server (a study file gives them per engine as server_settings)
    #[arg(long, value_name = "NAME=VALUE", conflicts_with_all = ["file", "resume"])]
    pub server_setting: Vec<String>,

    /// Continue the `oltplab study` (S1, cache-tiers, placement, profiles, in-memory, cluster) or --file study whose output
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
                                                   and of cache-tiers, placement, profiles,
                                                   in-memory and cluster: s2 … s5.toml,
                                                   cluster.toml)
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
        // The shipped studies/cluster.toml with the options given, a cell per system and device.
        return cluster::run_scenario(&args);
    }
    if storage {
        // S2, S3: the shipped studies/s2.toml or s3.toml with the options given.
        return storage::run_scenario(&args, &server_settings);
    }
    // S1: the shipped studies/s1.toml with the options given, run by the study-file engine.
    let s1 = s1_file(&args, &server_settings)?;
    s1::run_s1(&args, &s1)
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
    oltplab_schema::StorageStudySummary,
    oltplab_schema::ClusterStudySummary,
    oltplab_schema::ProfilesSummary,
    oltplab_schema::InMemorySummary
);

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
