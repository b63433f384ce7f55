//! The workloads oltplab can load, run and check, behind one trait ([`Workload`], after what
//! BenchBase does with its benchmark modules and fio with its `ioengine_ops`), and the command
//! line they share: where the database is (engine, managed server, URL), seeds, retries, the
//! output. `oltplab load|run|check NAME` finds the workload in [`WORKLOADS`] and refuses the
//! options of the others. A new workload is a module with a type implementing [`Workload`], its
//! option group flattened into [`LoadArgs`] / [`RunArgs`], and one line in [`WORKLOADS`].

pub mod capture;
pub mod cluster;
pub mod edges;
pub mod layout;
pub mod procstat;
pub mod ramp;
pub mod scaffold;
pub mod target;

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::PossibleValuesParser;
use clap::Args;
use oltplab_core::units;
use oltplab_core::{Error, Result};

use oltplab_workloads::bulk::LoadTimes;
use oltplab_workloads::check::Condition;
use oltplab_workloads::sql::Isolation;
use serde::Serialize;

use crate::brokerage::{Brokerage, BrokerageLoadArgs};
use crate::emulate::{BackingChoice, Emulation};
use crate::orders::{Orders, OrdersLoadArgs, OrdersRunArgs};
use crate::progress::Progress;
use crate::schema::{EmulationSummary, IoSummary, RunResult};
use crate::tatp::{Tatp, TatpLoadArgs};
use crate::tpcc::{Tpcc, TpccLoadArgs, TpccRunArgs};
use crate::workload::target::{DbSpec, Engine};

/// A workload: its schema and loader, its transactions and driver, its checks, and the summary
/// of its runs. Each method gets the whole command line of its command and reads its own group.
pub trait Workload: Sync {
    /// Its name on the command line (`oltplab run NAME`) and in results.
    fn name(&self) -> &'static str;
    /// Creates and fills its tables.
    fn load(&self, args: LoadArgs) -> Result<()>;
    /// Drives the loaded database, prints and saves its result, and returns it.
    fn run(&self, args: RunArgs) -> Result<RunResult>;
    /// Checks the database's consistency; a violation is exit code 1.
    fn check(&self, args: CheckArgs) -> Result<()>;
    /// Its own `load` options that were given: refused when another workload is loaded.
    fn load_options_given(&self, args: &LoadArgs) -> Vec<&'static str>;
    /// Its own `run` options that were given: refused when another workload runs.
    fn run_options_given(&self, args: &RunArgs) -> Vec<&'static str>;
    /// Options of other workloads' groups it reads as its own (`--terminals`, `--customers` …).
    fn borrowed_options(&self) -> &'static [&'static str] {
        &[]
    }
}

/// Every workload; the first is the default.
pub static WORKLOADS: &[&dyn Workload] = &[&Tpcc, &Orders, &Brokerage, &Tatp];

fn names() -> PossibleValuesParser {
    PossibleValuesParser::new(WORKLOADS.iter().map(|w| w.name()))
}

/// `--server-setting NAME=VALUE` options, each as the study file's `server_settings` take it.
pub fn parse_server_settings(texts: &[String]) -> Result<Vec<(String, String)>> {
    texts
        .iter()
        .map(|t| {
            oltplab_dbs::server::parse_setting(t)
                .map_err(|why| Error::usage(format!("--server-setting {why}")))
        })
        .collect()
}

/// The workload named `name` (clap has checked it).
fn find(name: &str) -> Result<&'static dyn Workload> {
    WORKLOADS
        .iter()
        .copied()
        .find(|w| w.name() == name)
        .ok_or_else(|| Error::usage(format!("there is no workload named {name}")))
}

pub fn load(args: LoadArgs) -> Result<()> {
    let w = find(&args.db.workload)?;
    args.db.check_db_options(w)?;
    for other in WORKLOADS.iter().filter(|o| o.name() != w.name()) {
        reject_foreign(other.name(), w, &other.load_options_given(&args))?;
    }
    w.load(args)
}

/// `oltplab run NAME`: Ctrl-C during the run is exit code 130, the partial result saved.
pub fn run(args: RunArgs) -> Result<()> {
    let w = find(&args.db.workload)?;
    args.db.check_db_options(w)?;
    for other in WORKLOADS.iter().filter(|o| o.name() != w.name()) {
        reject_foreign(other.name(), w, &other.run_options_given(&args))?;
    }
    if w.run(args)?.interrupted() {
        return Err(Error::Interrupted);
    }
    Ok(())
}

pub fn check(args: CheckArgs) -> Result<()> {
    let w = find(&args.db.workload)?;
    args.db.check_db_options(w)?;
    w.check(args)
}

/// A usage error naming the first option of `owner` given to `workload` that it does not borrow.
fn reject_foreign(owner: &str, workload: &dyn Workload, given: &[&str]) -> Result<()> {
    let borrowed = workload.borrowed_options();
    let workload = workload.name();
    match given.iter().find(|o| !borrowed.contains(o)) {
        Some(name) => Err(Error::usage(format!(
            "{name} is an option of the {owner} workload, not of {workload}: drop it, or run `{owner}`"
        ))),
        None => Ok(()),
    }
}

/// What a workload's load did: the loader's report `R`, the engine's version, the conditions
/// checked right after it (none with `--no-check`), and under `--emulate` (TPC-C on SQLite) the
/// load's and check's I/O on the emulated device with the emulation's fidelity.
#[derive(Clone, Debug, Serialize)]
pub struct LoadOutcome<R> {
    pub report: R,
    pub engine_version: String,
    pub conditions: Vec<Condition>,
    pub emulation: Option<(IoSummary, EmulationSummary)>,
}

/// `--warmup`: a fixed time, or until the throughput is steady.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Warmup {
    For(Duration),
    Auto,
}

/// The longest `--warmup auto` waits for a steady rate.
pub const AUTO_WARMUP_MAX: Duration = Duration::from_secs(20 * 60);

pub fn warmup_arg(text: &str) -> std::result::Result<Warmup, String> {
    match text {
        "auto" => Ok(Warmup::Auto),
        _ => units::parse_duration(text).map(Warmup::For),
    }
}

/// Runs a loader with a progress bar of `total_rows` (unless `quiet`) and prints what it loaded.
pub fn load_with_progress<R>(
    quiet: bool,
    total_rows: u64,
    times: impl Fn(&R) -> &LoadTimes,
    load: impl FnOnce(&(dyn Fn(u64, u64) + Sync)) -> Result<R>,
) -> Result<R> {
    let bar = (!quiet).then(|| Progress::new(total_rows, "loading [{bar:30}] {msg}"));
    let progress = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set(
                done,
                format!(
                    "{} of ~{} rows",
                    units::format_count(done as f64),
                    units::format_count(total as f64)
                ),
            );
        }
    };
    let report = load(&progress);
    if let Some(bar) = &bar {
        bar.finish();
    }
    let report = report?;
    if !quiet {
        let t = times(&report);
        eprintln!(
            "loaded {} rows in {:.1} s ({} rows/s; data {:.1} s, indexes and statistics {:.1} s)",
            units::format_count(t.rows as f64),
            t.elapsed_s,
            units::format_count(t.rows_per_s),
            t.data_s,
            t.index_s
        );
    }
    Ok(report)
}

/// The names of the options in `given` whose flag is set.
pub fn given(options: &[(&'static str, bool)]) -> Vec<&'static str> {
    options
        .iter()
        .filter(|(_, g)| *g)
        .map(|(n, _)| *n)
        .collect()
}

/// A workload's conditions as the command's verdict: an error (exit code 1) saying how many are
/// violated; `after_load`: a load that was just checked broke them, oltplab's or the engine's bug.
pub(crate) fn conditions_verdict(
    conditions: &[Condition],
    what: &str,
    after_load: bool,
) -> Result<()> {
    let violated = conditions.iter().filter(|c| !c.holds()).count();
    if violated == 0 {
        return Ok(());
    }
    let when = if after_load {
        " right after the load: this is a bug in oltplab or the engine"
    } else {
        ""
    };
    Err(Error::failed(format!(
        "{violated} of {} {what} are violated{when}",
        conditions.len()
    )))
}

pub const AFTER_HELP: &str = "\
Engines: sqlite (embedded, the default: DATA_DIR/tpcc.sqlite or orders.sqlite, or --url sqlite:PATH), postgres and
mariadb (started by oltplab in DATA_DIR unless --url names an external server: postgres://USER@HOST/DB,
mysql://USER@HOST/DB). Passwords in --url are never printed or stored.";

pub const AFTER_RUN_HELP: &str = "\
Examples:
  oltplab run tpcc                                 SQLite in ./oltplab-data: 4 terminals, 60 s
  oltplab run tpcc --engine postgres -t 16 --duration 5m --json run.json
  oltplab run tpcc --keying-think                  spec keying/think times, 10 terminals a warehouse
  oltplab run tpcc --quiet --json - | jq .summary.tpmc

Scale-out: drivers on several machines against one database, each on its own home warehouses,
measuring the same window; then one result from all:
  host1$ oltplab run tpcc --url postgres://bench@db/tpcc -w 100 --warehouse-range 1:50 \\
             --start-at 2026-11-22T10:00:00Z --json a.json
  host2$ oltplab run tpcc --url postgres://bench@db/tpcc -w 100 --warehouse-range 51:100 \\
             --start-at 2026-11-22T10:00:00Z --json b.json
  oltplab merge a.json b.json -o all.json

Engines: sqlite (embedded, the default: DATA_DIR/tpcc.sqlite or --url sqlite:PATH), postgres and
mariadb (started by oltplab in DATA_DIR unless --url names an external server:
postgres://USER@HOST/DB, mysql://USER@HOST/DB). Passwords in --url are never printed or stored.
The warm-up is excluded from every figure.";

/// Where the database is; shared by load, run and check.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// The workload
    #[arg(value_parser = names(), default_value = "tpcc")]
    pub workload: String,

    /// Database engine [default: sqlite, or what --url names]
    #[arg(long, value_enum)]
    pub engine: Option<Engine>,

    /// The database: sqlite:PATH, postgres://USER[:PASSWORD]@HOST[:PORT]/DB or mysql://…
    /// (without it, SQLite lives in --data-dir and servers are started by oltplab there); several
    /// hosts of one database (HOST1:PORT1,HOST2:PORT2, or --url repeated) get the terminals of
    /// tpcc and brokerage in turn, load and check the first
    #[arg(long, value_name = "URL")]
    pub url: Vec<String>,

    /// Directory for the SQLite file or the managed server's data, created and marked by oltplab
    #[arg(long, value_name = "DIR", default_value = "oltplab-data")]
    pub data_dir: PathBuf,

    /// Database memory: SQLite's page cache (shared out over the connections), PostgreSQL's
    /// shared_buffers, InnoDB's buffer pool (managed servers)
    #[arg(long, value_name = "SIZE", default_value = "128m", value_parser = units::parse_size)]
    pub buffer_pool: u64,

    /// Put the managed server's WAL / redo log in this directory
    #[arg(long, value_name = "DIR")]
    pub wal_dir: Option<PathBuf>,

    /// Let a managed server go through the page cache (default: O_DIRECT where the engine has it)
    #[arg(long)]
    pub buffered: bool,

    /// Nodes of a managed Galera cluster (--engine galera) [default: 3 for a load, as loaded
    /// for run and check]
    #[arg(long, value_name = "N")]
    pub nodes: Option<u32>,

    /// A setting for the PostgreSQL or MariaDB server oltplab starts, NAME=VALUE (repeat for
    /// more), e.g. synchronous_commit=off or innodb_flush_log_at_trx_commit=2; names are checked
    /// against the installed server, and the result's engine settings show what the server used
    #[arg(long, value_name = "NAME=VALUE")]
    pub server_setting: Vec<String>,
}

impl DbArgs {
    pub fn spec(&self) -> Result<DbSpec> {
        let urls: Vec<&str> = self.url.iter().map(String::as_str).collect();
        let mut spec = DbSpec::resolve_urls(
            self.engine,
            &urls,
            &self.data_dir,
            self.buffer_pool,
            self.wal_dir.as_deref(),
            !self.buffered,
        )?;
        spec.nodes = self.nodes;
        spec.server_settings = parse_server_settings(&self.server_setting)?;
        if !spec.server_settings.is_empty() && spec.engine == Engine::Sqlite {
            return Err(Error::usage(
                "--server-setting is for a PostgreSQL or MariaDB server oltplab starts: add --engine postgres or mariadb, or drop it",
            ));
        }
        if !spec.server_settings.is_empty() && !spec.managed {
            return Err(Error::usage(
                "--server-setting configures a server oltplab starts, not one named by --url: set it on that server (ALTER SYSTEM, SET GLOBAL), or drop --url",
            ));
        }
        Ok(spec)
    }

    /// Refuses, before anything starts, a --server-setting the installed server does not know.
    fn check_server_settings(&self) -> Result<()> {
        let spec = self.spec()?;
        let kind = match spec.engine {
            Engine::Sqlite => return Ok(()),
            Engine::Postgres => "postgres",
            Engine::Mariadb | Engine::Galera => "mariadb",
        };
        oltplab_dbs::server::check_settings(kind, &spec.server_settings).map(|_| ())
    }

    /// `--nodes` only with `--engine galera`, and the cluster (for now) only for TPC-C; and the
    /// --server-setting names.
    fn check_db_options(&self, w: &dyn Workload) -> Result<()> {
        self.check_server_settings()?;
        let hosts = self.spec()?.hosts.len();
        // TATP's and order entry's results have no account of the hosts (order entry opens its
        // own single-server connections).
        if hosts > 1 && !matches!(w.name(), "tpcc" | "brokerage") {
            return Err(Error::usage(format!(
                "--url names {hosts} hosts, but only tpcc and brokerage spread their terminals over several: give {} one host",
                w.name()
            )));
        }
        let galera = self.engine == Some(Engine::Galera);
        if self.nodes.is_some() && !galera {
            return Err(Error::usage(
                "--nodes is the size of a managed Galera cluster: add --engine galera, or drop --nodes",
            ));
        }
        // Order entry opens its own single-server connections (and its MEMORY tables are not
        // replicated by Galera).
        if galera && w.name() == "orders" {
            return Err(Error::usage(
                "--engine galera runs TPC-C and brokerage so far, not orders: run tpcc or brokerage, or use --engine mariadb",
            ));
        }
        Ok(())
    }
}

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct LoadArgs {
    #[command(flatten)]
    pub db: DbArgs,

    /// Seed of the generated data
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Replace a database that already holds tables (only TPC-C's tables are dropped)
    #[arg(long)]
    pub force: bool,

    #[command(flatten)]
    pub tpcc: TpccLoadArgs,

    #[command(flatten)]
    pub orders: OrdersLoadArgs,

    #[command(flatten)]
    pub brokerage: BrokerageLoadArgs,

    #[command(flatten)]
    pub tatp: TatpLoadArgs,
}

#[derive(Args, Debug)]
#[command(after_help = AFTER_RUN_HELP)]
pub struct RunArgs {
    #[command(flatten)]
    pub db: DbArgs,

    /// Print a progress line this often
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = units::parse_duration)]
    pub report_interval: Duration,

    /// Re-runs of a transaction after a serialization failure, deadlock or busy database
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_retries: u32,

    /// Seed of the terminals' random choices
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Also write the JSON result to FILE; - for standard output (human output then goes to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Directory for this run's result.json [default: ./oltplab-results/tpcc-<time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Allow writing into an output directory or --json file oltplab did not create
    #[arg(long)]
    pub force: bool,

    /// Run on an emulated device (SQLite: in-process VFS; managed servers: the preload shim on
    /// their cluster directory), or on a layout of several: --layout
    /// 'data=raid10(16,hdd-15k),log=pcie-flash-2012,temp=pcie-flash-2012,table:stock=sas-ssd-2012'
    /// (roles data, log, temp, table:NAME; roles with the same spec share one device; tables only
    /// on PostgreSQL and MariaDB)
    #[arg(long, value_name = "SPEC", visible_alias = "layout", value_parser = Emulation::parse)]
    pub emulate: Option<Emulation>,

    /// Where a managed server's files really live under --emulate: ram (the page cache, for devices
    /// faster than the real disk), disk, or auto (ram if the cluster fits in half the free memory)
    #[arg(long, value_name = "WHERE", value_enum, default_value_t = BackingChoice::Auto)]
    pub backing: BackingChoice,

    /// Capture the database's own I/O of the measured window into FILE (an oltplab trace; see
    /// `oltplab trace stat`), each I/O tied to its transaction type where the engine allows
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    #[command(flatten)]
    pub tpcc: TpccRunArgs,

    #[command(flatten)]
    pub orders: OrdersRunArgs,
}

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct CheckArgs {
    #[command(flatten)]
    pub db: DbArgs,
}

impl RunArgs {
    /// `--emulate`, `--trace`, `--backing` as a run's config keeps them.
    pub fn capture_config(&self) -> scaffold::CaptureConfig {
        scaffold::CaptureConfig {
            emulate: self.emulate.clone(),
            trace: self.trace.clone(),
            backing: self.backing,
        }
    }

    /// `--json`, `--out`, `--force` as a run's config keeps them: saved, as loud as `--quiet` says.
    pub fn output_config(&self) -> scaffold::OutputConfig {
        scaffold::OutputConfig::saved(self.json.clone(), self.out.clone(), self.force)
    }

    /// The checks a timed run (TPC-C, brokerage) shares: `--isolation` only for the servers, a
    /// `--duration` above 0, a `--report-interval` of at least 1 s, a `--json` file that may be
    /// written; returns `db` with the servers' isolation level set.
    pub fn timed_run_db(&self, mut db: DbSpec) -> Result<DbSpec> {
        db.isolation = self
            .tpcc
            .isolation
            .as_deref()
            .map(|name| Isolation::parse(name).expect("clap checked the name"));
        if db.engine == Engine::Sqlite && db.isolation.is_some() {
            return Err(Error::usage(
                "--isolation is for PostgreSQL and MariaDB; SQLite runs every transaction serializable (one writer at a time): drop --isolation",
            ));
        }
        if self.tpcc.duration.is_zero() {
            return Err(Error::usage(
                "--duration must be longer than 0 s, e.g. --duration 60s",
            ));
        }
        if self.report_interval < Duration::from_secs(1) {
            return Err(Error::usage("--report-interval must be at least 1 s"));
        }
        if let Some(json) = &self.json {
            crate::output::check_json_path(json, self.force)?;
        }
        Ok(db)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_options_are_named() {
        let err = reject_foreign(
            "tpcc",
            &Orders,
            &given(&[("--a", false), ("--terminals", true)]),
        )
        .unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("--terminals"), "{err}");
        assert!(reject_foreign("x", &Orders, &given(&[("--a", false)])).is_ok());
        // Brokerage reads TPC-C's --terminals as its own, not its --keying-think.
        assert!(reject_foreign("tpcc", &Brokerage, &given(&[("--terminals", true)])).is_ok());
    }

    #[test]
    fn every_workload_is_registered_once() {
        let mut names: Vec<&str> = WORKLOADS.iter().map(|w| w.name()).collect();
        assert_eq!(names[0], "tpcc", "the default comes first");
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WORKLOADS.len());
    }
}
