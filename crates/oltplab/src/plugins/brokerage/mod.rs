//! `oltplab load | run | check brokerage`: the TPC-E-like brokerage workload (S2, S3). It shares
//! the database options with TPC-C, reads `--customers` (order entry's option group), `--threads`,
//! `--no-check`, `--terminals`, `--duration`, `--warmup` and `--isolation` (TPC-C's), and adds
//! `--days`.

mod ramp;
mod run;

use std::sync::atomic::AtomicBool;

use clap::Args;
use oltplab_core::units::format_count;
use oltplab_core::{Error, Result};
use oltplab_workloads::brokerage::check::run_checks;
use oltplab_workloads::brokerage::load::{planned_rows, LoadOptions, LoadReport};
use oltplab_workloads::brokerage::schema::TABLES;
use oltplab_workloads::brokerage::{require_loaded, Scale, LOAD_UNIT};
use oltplab_workloads::check::Condition;
use oltplab_workloads::sql::{db_failed, Connector, Purpose};
use serde::Serialize;

pub(crate) use ramp::brokerage_step_of;
pub use run::run_with;

use crate::plugins::orders::OrdersLoadArgs;
use crate::plugins::tpcc::{TpccLoadArgs, TpccRunArgs};
use crate::workload::cluster;
use crate::workload::ramp::terminal_steps;
use crate::workload::scaffold::{CaptureConfig, OutputConfig};
use crate::workload::target::{self, DbSpec, Engine, Open};
use crate::workload::{
    conditions_verdict, given, CommonLoadArgs, CommonRunArgs, DbArgs, Warmup, AUTO_WARMUP_MAX,
};
use crate::STOP;
use oltplab_schema::RunResult;

/// The SQLite file of this workload in `--data-dir`.
pub const SQLITE_BROKERAGE_FILE: &str = "brokerage.sqlite";
const LOAD_CUSTOMERS: u32 = 1000;
/// Trading days of initial history a load makes unless told (TPC-E: 300).
const LOAD_DAYS: u32 = 10;
const RUN_TERMINALS: u32 = 4;

/// `oltplab load brokerage` options.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Brokerage (load brokerage)")]
pub struct BrokerageLoadArgs {
    /// Trading days of initial trade history (TPC-E: 300; 17,280 trades per customer per 300
    /// days) [default: 10]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=3000))]
    pub days: Option<u32>,
}

impl BrokerageLoadArgs {
    /// Its options that were given: refused when another workload is loaded.
    pub fn given(&self) -> Vec<&'static str> {
        given(&[("--days", self.days.is_some())])
    }
}

/// Other workloads' options it reads as its own: order entry's `--customers`, TPC-C's others.
pub const BORROWED_OPTIONS: &[&str] = &[
    "--customers",
    "--threads",
    "--no-check",
    "--terminals",
    "--duration",
    "--warmup",
    "--isolation",
    "--procedures",
];

/// `oltplab load brokerage`, with the options it borrows from TPC-C's and order entry's groups.
pub(crate) fn load_command(
    args: CommonLoadArgs,
    own: &BrokerageLoadArgs,
    tpcc: &TpccLoadArgs,
    orders: &OrdersLoadArgs,
) -> Result<()> {
    let cfg = LoadConfig::from_args(args, own, tpcc, orders)?;
    let outcome = load_with(&cfg, &STOP)?;
    conditions_verdict(&outcome.conditions, "brokerage invariants", true)
}

/// `oltplab run brokerage`: one run, or a users ramp of them; TPC-C's group has its options.
pub(crate) fn run_command(args: CommonRunArgs, tpcc: &TpccRunArgs) -> Result<RunResult> {
    let cfg = RunConfig::from_args(&args, tpcc)?;
    if cfg.ramp.is_empty() {
        return Ok(RunResult::Brokerage(Box::new(run_with(&cfg, &STOP)?)));
    }
    let (doc, _) =
        crate::workload::ramp::ramp(&cfg.ramp, "brokerage", &cfg.output, &STOP, |terminals| {
            run_with(
                &RunConfig {
                    terminals,
                    output: cfg.output.step(),
                    ..cfg.clone()
                },
                &STOP,
            )
        })?;
    Ok(RunResult::Brokerage(Box::new(doc)))
}

/// `oltplab check brokerage`.
pub(crate) fn check_command(db: DbArgs) -> Result<()> {
    let db = brokerage_spec(db.spec()?);
    let conditions = check_with(&db, crate::output::quiet())?;
    conditions_verdict(&conditions, "brokerage invariants", false)
}

/// The database spec with the workload's own SQLite file.
pub(crate) fn brokerage_spec(spec: DbSpec) -> DbSpec {
    spec.for_workload("brokerage", SQLITE_BROKERAGE_FILE)
}

/// A validated load.
#[derive(Clone, Debug, Serialize)]
pub struct LoadConfig {
    pub db: DbSpec,
    pub scale: Scale,
    pub threads: u32,
    pub seed: u64,
    pub check: bool,
    pub force: bool,
    #[serde(skip)]
    pub quiet: bool,
}

impl LoadConfig {
    pub fn from_args(
        args: CommonLoadArgs,
        own: &BrokerageLoadArgs,
        tpcc: &TpccLoadArgs,
        orders: &OrdersLoadArgs,
    ) -> Result<LoadConfig> {
        let customers = orders.customers.unwrap_or(LOAD_CUSTOMERS) as i64;
        if customers % LOAD_UNIT != 0 {
            return Err(Error::usage(format!(
                "--customers {customers} is not a whole number of load units: give a multiple of {LOAD_UNIT}, e.g. --customers {}",
                (customers / LOAD_UNIT).max(1) * LOAD_UNIT
            )));
        }
        tpcc.refuse_emulate("brokerage")?;
        Ok(LoadConfig {
            db: brokerage_spec(args.db.spec()?),
            scale: Scale {
                customers,
                days: own.days.unwrap_or(LOAD_DAYS) as i64,
            },
            threads: tpcc.loader_threads(),
            seed: args.seed,
            check: !tpcc.no_check,
            force: args.force,
            quiet: crate::output::quiet(),
        })
    }
}

pub type LoadOutcome = crate::workload::LoadOutcome<LoadReport>;

/// Loads the brokerage database and (unless `cfg.check` is off) checks its invariants.
pub fn load_with(cfg: &LoadConfig, stop: &AtomicBool) -> Result<LoadOutcome> {
    let db = target::open(
        &cfg.db,
        Open::Load { force: cfg.force },
        cfg.threads as usize + 1,
        None,
        Vec::new(),
    )?;
    let s = cfg.scale;
    if !cfg.quiet {
        eprintln!(
            "oltplab load brokerage — {} customers, {} trading days ({} trades) into {} ({}), {} thread{}",
            format_count(s.customers as f64),
            s.days,
            format_count(s.last_loaded_trade() as f64),
            cfg.db.location(),
            db.version,
            cfg.threads,
            if cfg.threads == 1 { "" } else { "s" }
        );
    }
    let opts = LoadOptions {
        scale: s,
        threads: cfg.threads as usize,
        seed: cfg.seed,
        force: cfg.force,
        location: cfg.db.location(),
    };
    let report = crate::workload::load_with_progress(
        cfg.quiet,
        planned_rows(&s),
        |r: &LoadReport| &r.times,
        |progress| {
            oltplab_workloads::brokerage::load::load(db.connector.as_ref(), &opts, progress, stop)
        },
    )?;
    let conditions = if cfg.check {
        check_db(&db, &cfg.db, cfg.quiet)?
    } else {
        Vec::new()
    };
    let version = db.version.clone();
    db.close()?;
    Ok(LoadOutcome {
        report,
        engine_version: version,
        conditions,
        emulation: None,
    })
}

/// Checks the invariants of an existing brokerage database.
pub fn check_with(spec: &DbSpec, quiet: bool) -> Result<Vec<Condition>> {
    let db = target::open(spec, Open::Existing, 1, None, Vec::new())?;
    let (conditions, same_data) =
        cluster::check_every_node(&db, spec, &TABLES, quiet, |c| check_on(c, spec, quiet))?;
    db.close()?;
    same_data?;
    Ok(conditions)
}

fn check_db(db: &target::Db, spec: &DbSpec, quiet: bool) -> Result<Vec<Condition>> {
    check_on(db.connector.as_ref(), spec, quiet)
}

fn check_on(connector: &dyn Connector, spec: &DbSpec, quiet: bool) -> Result<Vec<Condition>> {
    let mut conn = connector.connect(Purpose::Check)?;
    let meta = require_loaded(conn.as_mut(), &spec.location())?;
    if !quiet {
        eprintln!("brokerage invariants:");
    }
    run_checks(
        conn.as_mut(),
        &meta,
        crate::workload::print_conditions(quiet, 100),
    )
    .map_err(|e| db_failed("an invariant's query failed", e))
}

/// A validated run (see [`run_with`]).
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    /// `brokerage`: the result's `config.workload`, by which the reports name the run, as every
    /// workload's run names itself.
    pub workload: &'static str,
    pub db: DbSpec,
    pub terminals: u32,
    /// A users ramp: each count in turn (`--terminals 8,32,64`); empty for one run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ramp: Vec<u32>,
    pub duration_s: f64,
    /// With `warmup_auto`, the longest the warm-up may take.
    pub warmup_s: f64,
    pub warmup_auto: bool,
    pub report_interval_s: f64,
    pub max_retries: u32,
    pub seed: u64,
    /// `--procedures`: each transaction one round trip, through server-side functions.
    pub procedures: bool,
    /// `--emulate`, `--trace`, `--backing`.
    #[serde(flatten)]
    pub capture: CaptureConfig,
    /// `--json`, `--out`, `--force`; whether it saves and prints.
    #[serde(flatten)]
    pub output: OutputConfig,
}

impl RunConfig {
    pub fn from_args(args: &CommonRunArgs, t: &TpccRunArgs) -> Result<RunConfig> {
        let db = args.timed_run_db(
            brokerage_spec(args.db.spec()?),
            t.isolation.as_deref(),
            t.duration,
        )?;
        let (warmup_s, warmup_auto) = match t.warmup {
            Warmup::For(d) => (d.as_secs_f64(), false),
            Warmup::Auto => (AUTO_WARMUP_MAX.as_secs_f64(), true),
        };
        if t.procedures && db.engine == Engine::Sqlite {
            return Err(Error::usage(
                "--procedures runs the brokerage's transactions as a server's functions or stored procedures, and SQLite runs them in-process already: drop --procedures, or run on --engine postgres or mariadb",
            ));
        }
        let (terminals, ramp) = terminal_steps(
            t.terminals.as_ref().map(|s| s.0.as_slice()),
            args.trace.is_some(),
            RUN_TERMINALS,
        )?;
        Ok(RunConfig {
            workload: "brokerage",
            db,
            terminals,
            ramp,
            duration_s: t.duration.as_secs_f64(),
            warmup_s,
            warmup_auto,
            report_interval_s: args.report_interval.as_secs_f64().round(),
            max_retries: args.max_retries,
            seed: args.seed,
            procedures: t.procedures,
            capture: args.capture_config(),
            output: args.output_config(),
        })
    }
}

/// The load record, read through a fresh connection of `db`.
pub(crate) fn meta_of(
    db: &target::Db,
    spec: &DbSpec,
) -> Result<oltplab_workloads::brokerage::Meta> {
    let mut conn = db.connector.connect(Purpose::Check)?;
    require_loaded(conn.as_mut(), &spec.location())
}
