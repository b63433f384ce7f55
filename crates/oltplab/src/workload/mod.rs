//! What every workload plug-in (`tpcc`, `orders`, `brokerage`, `tatp`) shares, and which
//! imports none of them: the command-line options they all have (where the database is — engine,
//! managed server, URL —, seeds, retries, the output), the database target, the capture, the run
//! scaffold, the users ramp, a Galera cluster's checks. The command line that names every
//! workload, and the list of them, are one level up (`workload_commands`).

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

use clap::Args;
use oltplab_core::units;
use oltplab_core::{Error, Result};

use oltplab_workloads::bulk::LoadTimes;
use oltplab_workloads::check::Condition;
use oltplab_workloads::sql::Isolation;
use serde::Serialize;

use crate::emulate::{BackingChoice, Emulation};
use crate::progress::Progress;
use crate::workload::target::{DbSpec, Engine};
use oltplab_schema::{EmulationSummary, IoSummary};

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

/// Prints each checked condition as `check` shows it, unless `quiet`: its number, its rule padded
/// to `rule_width`, its status and note, then the first offending rows.
pub(crate) fn print_conditions(quiet: bool, rule_width: usize) -> impl FnMut(&Condition) {
    move |c| {
        if quiet {
            return;
        }
        let note = c
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let status = c.status.shown();
        eprintln!("  {:>2}  {:<rule_width$} {status}{note}", c.number, c.rule);
        for e in &c.examples {
            eprintln!("        {e}");
        }
    }
}

/// Where the database is; shared by load, run and check.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
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
    pub(crate) fn check_server_settings(&self) -> Result<()> {
        let spec = self.spec()?;
        let kind = match spec.engine {
            Engine::Sqlite => return Ok(()),
            Engine::Postgres => "postgres",
            Engine::Mariadb | Engine::Galera => "mariadb",
        };
        oltplab_dbs::server::check_settings(kind, &spec.server_settings).map(|_| ())
    }
}

/// The `load` options every workload has (`workload_commands::LoadArgs` adds each workload's).
#[derive(Args, Debug)]
pub struct CommonLoadArgs {
    #[command(flatten)]
    pub db: DbArgs,

    /// Seed of the generated data
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Replace a database that already holds tables (only TPC-C's tables are dropped)
    #[arg(long)]
    pub force: bool,
}

/// The `run` options every workload has (`workload_commands::RunArgs` adds each workload's).
#[derive(Args, Debug)]
pub struct CommonRunArgs {
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
}

impl CommonRunArgs {
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

    /// The checks a timed run (TPC-C, brokerage, TATP) shares: `--isolation` only for the
    /// servers, a `--duration` above 0, a `--report-interval` of at least 1 s, a `--json` file
    /// that may be written; returns `db` with the servers' isolation level set. `isolation` and
    /// `duration` are TPC-C's options, which the others borrow.
    pub fn timed_run_db(
        &self,
        mut db: DbSpec,
        isolation: Option<&str>,
        duration: Duration,
    ) -> Result<DbSpec> {
        db.isolation = isolation.map(|name| Isolation::parse(name).expect("clap checked the name"));
        if db.engine == Engine::Sqlite && db.isolation.is_some() {
            return Err(Error::usage(
                "--isolation is for PostgreSQL and MariaDB; SQLite runs every transaction serializable (one writer at a time): drop --isolation",
            ));
        }
        if duration.is_zero() {
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
