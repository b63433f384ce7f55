//! `oltplab load tpcc`, `oltplab run tpcc`, `oltplab check tpcc`: the command line, resolved into
//! [`LoadConfig`] / [`RunConfig`] / [`CheckConfig`], and the in-process entry points
//! [`load_with`], [`run_with`] and [`check_with`] that `oltplab study` calls.

mod ramp;
mod run;
mod scaleout;
pub mod steady;
pub mod waits;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::Args;
use oltplab_core::units::format_ns;
use oltplab_core::{Error, Result};
use oltplab_workloads::tpcc::check::{run_checks, Condition};
use oltplab_workloads::tpcc::load::{LoadOptions, LoadReport};
use oltplab_workloads::tpcc::schema::TABLES;
use oltplab_workloads::tpcc::{db_failed, Connector, Purpose};
use serde::Serialize;

use crate::emulate::{BackingChoice, Emulation};
use crate::workload::capture::{Capture, CaptureRequest, RunEnd};
use crate::workload::cluster;
use crate::workload::scaffold::{CaptureConfig, OutputConfig};
use crate::workload::target::{self, DbSpec, Engine, Open};
// The in-process API `oltplab study` builds on.
pub use crate::workload::{warmup_arg, Warmup, AUTO_WARMUP_MAX};
pub(crate) use ramp::step_of;
pub use run::{run_with, RunOutcome};
use scaleout::WarehouseRange;

use crate::workload::{conditions_verdict, given, CommonLoadArgs, CommonRunArgs, DbArgs};
use crate::STOP;
use oltplab_schema::RunResult;

/// `load tpcc`'s and `run tpcc`'s defaults, where the code needs them too.
const LOAD_WAREHOUSES: u32 = 1;
const RUN_DURATION: &str = "60s";
const RUN_WARMUP: &str = "10s";
/// Terminals of a run without --keying-think and --terminals.
const RUN_TERMINALS: u32 = 4;

/// `oltplab load tpcc` options.
#[derive(Args, Debug)]
#[command(next_help_heading = "TPC-C (load tpcc)")]
pub struct TpccLoadArgs {
    /// Warehouses (each ≈ 100 MB: 10 districts, 30,000 customers, 100,000 stock rows)
    #[arg(long, short = 'w', value_name = "W", default_value_t = LOAD_WAREHOUSES, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub warehouses: u32,

    /// Loader threads (servers: connections; SQLite: data generators feeding one writer)
    /// [default: the number of cores]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: Option<u32>,

    /// Skip the consistency check after loading
    #[arg(long)]
    pub no_check: bool,

    /// Load onto an emulated device (`oltplab devices`): every read, write and sync of the load
    /// takes the model's time. SQLite only (through oltplab's VFS); load a server without it and
    /// run it with --emulate
    #[arg(long, value_name = "SPEC", value_parser = Emulation::parse)]
    pub emulate: Option<Emulation>,
}

/// `oltplab run tpcc` options.
#[derive(Args, Debug)]
#[command(next_help_heading = "TPC-C (run tpcc)")]
pub struct TpccRunArgs {
    /// Warehouses the database was loaded with [default: read from the database]
    #[arg(long, short = 'w', value_name = "W", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub warehouses: Option<u32>,

    /// Terminals (threads, one connection each) [default: 4; 10 per warehouse with --keying-think];
    /// several (8,32,64 or A:B:STEP) ramp the users up: each step runs in turn on the same data and
    /// the result lists each step's throughput, response times, CPU and device busy share
    #[arg(long, short = 't', value_name = "T[,T…]|A:B:STEP", value_parser = terminals_arg)]
    pub terminals: Option<TerminalSteps>,

    /// Measured time
    #[arg(long, value_name = "DURATION", default_value = RUN_DURATION, value_parser = oltplab_core::units::parse_duration)]
    pub duration: Duration,

    /// Warm-up before the measured time, excluded from every figure; `auto` warms up until the
    /// headline rate (New-Order; brokerage: Trade-Result; TATP: GET_SUBSCRIBER_DATA) is steady
    /// (two 10 s windows agree), at most 20 min
    #[arg(long, value_name = "DURATION|auto", default_value = RUN_WARMUP, value_parser = warmup_arg)]
    pub warmup: Warmup,

    /// Spec keying and think times, 10 terminals per warehouse with fixed home district
    /// (at most 12.86 tpmC per warehouse)
    #[arg(long)]
    pub keying_think: bool,

    /// Drive only home warehouses A to B (1-based, inclusive), e.g. one range per driver machine
    /// against one database; remote order lines and payments still reach every warehouse
    #[arg(long, value_name = "A:B")]
    pub warehouse_range: Option<String>,

    /// Start the warm-up at TIME (RFC 3339 such as 2026-11-22T10:00:00Z, or unix seconds), so that
    /// drivers started apart measure the same window
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,

    /// The servers' isolation level for write transactions (read-only ones always see one
    /// snapshot) [default: PostgreSQL read-committed, MariaDB repeatable-read: TPC-C's level 3
    /// through locking reads]; repeatable-read/serializable on PostgreSQL add serialization
    /// failures, retried and counted. SQLite is always serializable
    #[arg(long, value_name = "LEVEL",
          value_parser = clap::builder::PossibleValuesParser::new(["read-committed", "repeatable-read", "serializable"]))]
    pub isolation: Option<String>,

    /// Run each transaction as one call of a server-side function (PostgreSQL) or stored procedure
    /// (MariaDB), as HammerDB runs TPC-C: one round trip per transaction, so the driver's CPU and
    /// waits shrink. They (oltplab_tpcc_*) are created or replaced in the database at the run's
    /// start; `run brokerage --procedures` does the same with its own (oltplab_bk_*)
    #[arg(long)]
    pub procedures: bool,
}

/// `--terminals`: one count, or the steps of a users ramp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TerminalSteps(pub Vec<u32>);

impl TerminalSteps {
    /// The one count of a run that is not a ramp.
    pub fn single(&self) -> Option<u32> {
        match self.0.as_slice() {
            [n] => Some(*n),
            _ => None,
        }
    }
}

/// Most steps of a users ramp.
const RAMP_STEPS_MAX: usize = 50;

fn terminals_arg(text: &str) -> std::result::Result<TerminalSteps, String> {
    let bad = || {
        format!("'{text}' is not a terminal count from 1 to 10000, a list such as 8,32,64, or a range A:B:STEP such as 8:64:8")
    };
    let count = |t: &str| -> std::result::Result<u32, String> {
        match t.trim().parse::<u32>() {
            Ok(n) if (1..=10_000).contains(&n) => Ok(n),
            _ => Err(bad()),
        }
    };
    let steps: Vec<u32> = match text.split(':').collect::<Vec<_>>().as_slice() {
        [a, b, step] => {
            let (a, b, step) = (count(a)?, count(b)?, count(step)?);
            if b < a {
                return Err(format!(
                    "--terminals {text}: the range ends below its start; give A:B:STEP with A ≤ B"
                ));
            }
            (a..=b).step_by(step as usize).collect()
        }
        [_] => text
            .split(',')
            .map(count)
            .collect::<std::result::Result<_, _>>()?,
        _ => return Err(bad()),
    };
    if steps.len() > RAMP_STEPS_MAX {
        return Err(format!(
            "--terminals {text} makes {} steps; a ramp has at most {RAMP_STEPS_MAX}: take a larger STEP",
            steps.len()
        ));
    }
    Ok(TerminalSteps(steps))
}

impl TpccLoadArgs {
    /// Loader threads: `--threads`, or one per core.
    pub fn loader_threads(&self) -> u32 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        self.threads.unwrap_or(cores)
    }

    /// Another workload's load (`database` names it) refuses `--emulate`: only TPC-C's load runs
    /// on an emulated device; the others' runs do.
    pub fn refuse_emulate(&self, database: &str) -> Result<()> {
        match self.emulate {
            Some(_) => Err(Error::usage(format!(
                "--emulate is for `load tpcc`; load the {database} database without it and run with --emulate"
            ))),
            None => Ok(()),
        }
    }

    /// Its options that were given: refused when another workload is loaded.
    pub fn given(&self) -> Vec<&'static str> {
        given(&[
            ("--warehouses", self.warehouses != LOAD_WAREHOUSES),
            ("--threads", self.threads.is_some()),
            ("--no-check", self.no_check),
            ("--emulate", self.emulate.is_some()),
        ])
    }
}

impl TpccRunArgs {
    /// Its options that were given: refused when another workload runs (unless it borrows them).
    pub fn given(&self) -> Vec<&'static str> {
        // --duration and --warmup have defaults, so only a value other than the default shows
        // that the user gave them.
        let differs = |d: Duration, default: &str| {
            oltplab_core::units::parse_duration(default).is_ok_and(|x| x != d)
        };
        given(&[
            ("--warehouses", self.warehouses.is_some()),
            ("--terminals", self.terminals.is_some()),
            ("--duration", differs(self.duration, RUN_DURATION)),
            (
                "--warmup",
                match self.warmup {
                    Warmup::For(d) => differs(d, RUN_WARMUP),
                    Warmup::Auto => true,
                },
            ),
            ("--keying-think", self.keying_think),
            ("--warehouse-range", self.warehouse_range.is_some()),
            ("--start-at", self.start_at.is_some()),
            ("--isolation", self.isolation.is_some()),
            ("--procedures", self.procedures),
        ])
    }
}

/// `oltplab run tpcc`: one run, or a users ramp of them.
pub(crate) fn run_command(args: CommonRunArgs, tpcc: &TpccRunArgs) -> Result<RunResult> {
    let cfg = RunConfig::from_args(&args, tpcc)?;
    let outcome = if cfg.ramp.is_empty() {
        run_with(&cfg, &STOP)?
    } else {
        ramp::run_ramp(&cfg, &STOP)?
    };
    Ok(RunResult::Tpcc(Box::new(outcome.doc)))
}

/// A validated load.
#[derive(Clone, Debug, Serialize)]
pub struct LoadConfig {
    pub db: DbSpec,
    pub warehouses: u32,
    pub threads: u32,
    pub seed: u64,
    pub check: bool,
    pub force: bool,
    pub emulate: Option<Emulation>,
    /// A registered SQLite VFS to load through (the lead's emulating VFS).
    pub sqlite_vfs: Option<String>,
    /// Print progress and the summary.
    #[serde(skip)]
    pub quiet: bool,
}

pub type LoadOutcome = crate::workload::LoadOutcome<LoadReport>;

/// A validated check.
#[derive(Clone, Debug)]
pub struct CheckConfig {
    pub db: DbSpec,
    pub quiet: bool,
}

/// A validated run (see [`run_with`]).
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    /// `tpcc`: the result's `config.workload`, by which the reports name the run, as every
    /// workload's run names itself.
    pub workload: &'static str,
    pub db: DbSpec,
    /// Checked against the load; None: as loaded.
    pub warehouses: Option<u32>,
    /// None: 10 per driven warehouse (`--keying-think`), known once the database is open.
    pub terminals: Option<u32>,
    /// A users ramp: each count in turn (`--terminals 8,32,64`); empty for one run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ramp: Vec<u32>,
    pub duration_s: f64,
    /// The warm-up; with `warmup_auto`, the longest it may take.
    pub warmup_s: f64,
    /// `--warmup auto`: until the New-Order rate is steady.
    pub warmup_auto: bool,
    pub report_interval_s: f64,
    pub keying_think: bool,
    pub max_retries: u32,
    pub seed: u64,
    /// This driver's home warehouses; None: all.
    pub warehouse_range: Option<WarehouseRange>,
    /// When the warm-up starts (RFC 3339, UTC); None: at once.
    pub start_at: Option<String>,
    /// `--procedures`: each transaction one call of a server-side function.
    pub procedures: bool,
    /// `--emulate`, `--trace`, `--backing`.
    #[serde(flatten)]
    pub capture: CaptureConfig,
    /// A registered SQLite VFS to open every connection through (trace capture, emulation).
    pub sqlite_vfs: Option<String>,
    /// `--json`, `--out`, `--force`; whether it saves and prints.
    #[serde(flatten)]
    pub output: OutputConfig,
}

impl RunConfig {
    pub fn from_args(args: &CommonRunArgs, t: &TpccRunArgs) -> Result<RunConfig> {
        let db = args.timed_run_db(args.db.spec()?, t.isolation.as_deref(), t.duration)?;
        let warehouse_range = t
            .warehouse_range
            .as_deref()
            .map(WarehouseRange::parse)
            .transpose()?;
        let start_at = t
            .start_at
            .as_deref()
            .map(crate::start_at::parse_start_at)
            .transpose()?;
        let ramp = match &t.terminals {
            Some(steps) if steps.single().is_none() => {
                if t.keying_think {
                    return Err(Error::usage("--keying-think runs 10 terminals per warehouse, so it takes no users ramp: give --terminals one count or drop --keying-think"));
                }
                if args.trace.is_some() {
                    return Err(Error::usage("--trace records one run: trace one step of the ramp on its own (--terminals N), or drop --trace"));
                }
                steps.0.clone()
            }
            _ => Vec::new(),
        };
        if t.procedures && db.engine == Engine::Sqlite {
            return Err(Error::usage(
                "--procedures runs TPC-C's transactions as a server's functions or stored procedures, and SQLite runs them in-process already: drop --procedures, or run on --engine postgres or mariadb",
            ));
        }
        let single = t.terminals.as_ref().and_then(TerminalSteps::single);
        let terminals = match (t.keying_think, single) {
            (true, Some(n)) => {
                // Driven warehouses: the range's, else --warehouses.
                let w = match warehouse_range {
                    Some(r) => r.count(),
                    None => t.warehouses.ok_or_else(|| {
                        Error::usage("--keying-think with --terminals needs --warehouses too (10 terminals per warehouse)")
                    })?,
                };
                if n != 10 * w {
                    return Err(Error::usage(format!(
                        "--keying-think runs 10 terminals per warehouse ({} for {w}): drop --terminals or give --terminals {}",
                        10 * w,
                        10 * w
                    )));
                }
                Some(n)
            }
            (true, None) => None,
            (false, Some(n)) => Some(n),
            (false, None) => Some(ramp.first().copied().unwrap_or(RUN_TERMINALS)),
        };
        Ok(RunConfig {
            workload: "tpcc",
            db,
            warehouses: t.warehouses,
            terminals,
            ramp,
            duration_s: t.duration.as_secs_f64(),
            warmup_s: match t.warmup {
                Warmup::For(d) => d.as_secs_f64(),
                Warmup::Auto => AUTO_WARMUP_MAX.as_secs_f64(),
            },
            warmup_auto: t.warmup == Warmup::Auto,
            report_interval_s: args.report_interval.as_secs_f64().round(),
            keying_think: t.keying_think,
            max_retries: args.max_retries,
            seed: args.seed,
            warehouse_range,
            start_at,
            procedures: t.procedures,
            capture: args.capture_config(),
            sqlite_vfs: None,
            output: args.output_config(),
        })
    }
}

/// `oltplab load tpcc`.
pub(crate) fn load_command(args: CommonLoadArgs, tpcc: TpccLoadArgs) -> Result<()> {
    let cfg = LoadConfig {
        db: args.db.spec()?,
        warehouses: tpcc.warehouses,
        threads: tpcc.loader_threads(),
        seed: args.seed,
        check: !tpcc.no_check,
        force: args.force,
        emulate: tpcc.emulate,
        sqlite_vfs: None,
        quiet: crate::output::quiet(),
    };
    let outcome = load_with(&cfg, &STOP)?;
    conditions_verdict(&outcome.conditions, "consistency conditions", true)
}

/// Loads TPC-C into a fresh database and (unless `cfg.check` is off) checks it.
pub fn load_with(cfg: &LoadConfig, stop: &AtomicBool) -> Result<LoadOutcome> {
    // On SQLite, --emulate loads through oltplab's VFS with the device's model (unless the
    // caller's own VFS already does); a server's cluster does not exist before its load, and the
    // shim's emulation session belongs to a run.
    let capture = match (&cfg.emulate, cfg.db.engine, &cfg.sqlite_vfs) {
        (None, _, _) | (Some(_), Engine::Sqlite, Some(_)) => None,
        (Some(_), Engine::Sqlite, None) => Capture::new(&CaptureRequest {
            db: &cfg.db,
            emulate: cfg.emulate.as_ref(),
            trace: None,
            backing: BackingChoice::Auto,
            seed: cfg.seed,
            force: cfg.force,
        })?,
        (Some(spec), _, _) => {
            return Err(Error::usage(format!(
                "--emulate with `load tpcc` is for SQLite: load the {} database without it, then `oltplab run tpcc --emulate {spec}`",
                cfg.db.engine.name()
            )))
        }
    };
    let vfs = capture
        .as_ref()
        .and_then(Capture::sqlite_vfs)
        .or_else(|| cfg.sqlite_vfs.clone());
    let db = target::open(
        &cfg.db,
        Open::Load { force: cfg.force },
        cfg.threads as usize + 1,
        vfs,
        Vec::new(),
    )?;
    if !cfg.quiet {
        eprintln!(
            "oltplab load tpcc — {} warehouse{} into {} ({}{}), {} thread{}",
            cfg.warehouses,
            if cfg.warehouses == 1 { "" } else { "s" },
            cfg.db.location(),
            db.version,
            match (&capture, &cfg.emulate) {
                (Some(_), Some(spec)) => format!(", on an emulated {spec}"),
                _ => String::new(),
            },
            cfg.threads,
            if cfg.threads == 1 { "" } else { "s" }
        );
    }
    let started = std::time::Instant::now();
    if let Some(c) = &capture {
        c.measure_start();
    }
    let opts = LoadOptions {
        warehouses: cfg.warehouses as i64,
        threads: cfg.threads as usize,
        seed: cfg.seed,
        force: cfg.force,
        location: cfg.db.location(),
    };
    let total_rows: u64 = oltplab_workloads::tpcc::gen::plan(cfg.warehouses as i64)
        .iter()
        .map(|c| c.rows())
        .sum();
    let report = crate::workload::load_with_progress(
        cfg.quiet,
        total_rows,
        |r: &LoadReport| &r.times,
        |progress| {
            oltplab_workloads::tpcc::load::load(db.connector.as_ref(), &opts, progress, stop)
        },
    )?;
    let conditions = if cfg.check {
        check_db(&db, cfg.quiet)?
    } else {
        Vec::new()
    };
    let version = db.version.clone();
    db.close()?;
    // The connections are closed: what the emulated device did for the load and the check.
    let emulation = match capture {
        None => None,
        Some(c) => {
            c.measure_end();
            let elapsed_s = started.elapsed().as_secs_f64();
            let (io, warnings, emulation) = c.finish(&RunEnd {
                measured_s: elapsed_s,
                spans: &[],
                tx_of_tag: &|_| ("load".to_string(), 0),
                terminals_without_backend: 0,
            })?;
            if !cfg.quiet {
                let held = emulation.as_ref().map_or(String::new(), |e| {
                    format!(
                        "; {} held for the model, mean latency {} modelled, {} realised",
                        e.fidelity.ios,
                        format_ns(e.fidelity.modelled_lat_ns_mean),
                        format_ns(e.fidelity.realised_lat_ns_mean)
                    )
                });
                eprintln!(
                    "on the emulated {}: {} reads, {} writes, {} syncs in {:.1} s{held}",
                    cfg.emulate.as_ref().map_or("device", Emulation::text),
                    io.reads,
                    io.writes,
                    io.syncs,
                    elapsed_s
                );
                crate::output::print_warnings(&warnings);
            }
            emulation.map(|e| (io, e))
        }
    };
    Ok(LoadOutcome {
        report,
        engine_version: version,
        conditions,
        emulation,
    })
}

/// `oltplab check tpcc`.
pub(crate) fn check_command(db: DbArgs) -> Result<()> {
    let cfg = CheckConfig {
        db: db.spec()?,
        quiet: crate::output::quiet(),
    };
    let conditions = check_with(&cfg)?;
    conditions_verdict(&conditions, "consistency conditions", false)
}

/// Runs the twelve consistency conditions on an existing database; on a cluster on every node
/// (a condition violated on any node is reported violated, naming the node), and then compares
/// the nodes' table checksums (a difference is exit code 1).
pub fn check_with(cfg: &CheckConfig) -> Result<Vec<Condition>> {
    let db = target::open(&cfg.db, Open::Existing, 1, None, Vec::new())?;
    let (conditions, same_data) =
        cluster::check_every_node(&db, &cfg.db, &TABLES, cfg.quiet, |c| {
            check_conditions(c, cfg.quiet)
        })?;
    db.close()?;
    same_data?;
    Ok(conditions)
}

fn check_db(db: &target::Db, quiet: bool) -> Result<Vec<Condition>> {
    check_conditions(db.connector.as_ref(), quiet)
}

fn check_conditions(connector: &dyn Connector, quiet: bool) -> Result<Vec<Condition>> {
    let mut conn = connector.connect(Purpose::Check)?;
    let state = oltplab_workloads::tpcc::inspect(conn.as_mut())?;
    if state.tpcc_tables.len() < 9 {
        return Err(Error::usage(format!(
            "the database holds no complete TPC-C schema (found {} of its 9 tables): load it with `oltplab load tpcc`",
            state.tpcc_tables.iter().filter(|t| *t != "oltplab_tpcc").count()
        )));
    }
    if !quiet {
        eprintln!("consistency conditions (TPC-C 3.3.2.1–12):");
    }
    let conditions = run_checks(conn.as_mut(), crate::workload::print_conditions(quiet, 72))
        .map_err(|e| db_failed("a consistency query failed", e))?;
    Ok(conditions)
}
