//! `oltplab load | run | check tatp`: TATP, the telecom benchmark (docs/tatp.md). It shares the
//! database options, reads TPC-C's `--threads`, `--no-check`, `--terminals`, `--duration`,
//! `--warmup` and `--isolation`, and adds `--subscribers`.

mod run;

use std::sync::atomic::AtomicBool;

use clap::Args;
use oltplab_core::units::format_count;
use oltplab_core::Result;
use oltplab_workloads::check::Condition;
use oltplab_workloads::sql::{db_failed, Purpose};
use oltplab_workloads::tatp::check::run_checks;
use oltplab_workloads::tatp::load::{planned_rows, LoadOptions, LoadReport};
use oltplab_workloads::tatp::{require_loaded, Meta, DEFAULT_SUBSCRIBERS};
use serde::Serialize;

pub use run::run_with;

use crate::plugins::tpcc::{TpccLoadArgs, TpccRunArgs};
use crate::workload::ramp::terminal_steps;
use crate::workload::scaffold::{CaptureConfig, OutputConfig};
use crate::workload::target::{self, DbSpec, Open};
use crate::workload::{
    conditions_verdict, given, CommonLoadArgs, CommonRunArgs, DbArgs, Warmup, AUTO_WARMUP_MAX,
};
use crate::STOP;
use oltplab_schema::RunResult;

/// The SQLite file of this workload in `--data-dir`.
pub const SQLITE_TATP_FILE: &str = "tatp.sqlite";
const RUN_TERMINALS: u32 = 4;

/// `oltplab load tatp` options.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "TATP (load tatp)")]
pub struct TatpLoadArgs {
    /// Subscribers to load (TATP's population; the description's smallest is 100,000)
    /// [default: 100000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    pub subscribers: Option<u32>,
}

impl TatpLoadArgs {
    /// Its options that were given: refused when another workload is loaded.
    pub fn given(&self) -> Vec<&'static str> {
        given(&[("--subscribers", self.subscribers.is_some())])
    }
}

/// TPC-C's options it reads as its own.
pub const BORROWED_OPTIONS: &[&str] = &[
    "--threads",
    "--no-check",
    "--terminals",
    "--duration",
    "--warmup",
    "--isolation",
];

/// `oltplab load tatp`, with the options it borrows from TPC-C's group.
pub(crate) fn load_command(
    args: CommonLoadArgs,
    own: &TatpLoadArgs,
    tpcc: &TpccLoadArgs,
) -> Result<()> {
    let cfg = LoadConfig::from_args(args, own, tpcc)?;
    let conditions = load_with(&cfg, &STOP)?;
    conditions_verdict(&conditions, "TATP conditions", true)
}

/// `oltplab run tatp`; TPC-C's group has its options.
pub(crate) fn run_command(args: CommonRunArgs, tpcc: &TpccRunArgs) -> Result<RunResult> {
    let cfg = RunConfig::from_args(&args, tpcc)?;
    if cfg.ramp.is_empty() {
        return Ok(RunResult::Tatp(Box::new(run_with(&cfg, &STOP)?)));
    }
    let (doc, _) =
        crate::workload::ramp::ramp(&cfg.ramp, "tatp", &cfg.output, &STOP, |terminals| {
            run_with(
                &RunConfig {
                    terminals,
                    output: cfg.output.step(),
                    ..cfg.clone()
                },
                &STOP,
            )
        })?;
    Ok(RunResult::Tatp(Box::new(doc)))
}

/// `oltplab check tatp`.
pub(crate) fn check_command(db: DbArgs) -> Result<()> {
    let spec = tatp_spec(db.spec()?);
    let db = target::open(&spec, Open::Existing, 1, None, Vec::new())?;
    let conditions = check_db(&db, &spec, crate::output::quiet());
    if let Some(server) = db.server {
        server.stop()?;
    }
    let conditions = conditions?;
    conditions_verdict(&conditions, "TATP conditions", false)
}

/// The database spec with the workload's own SQLite file.
fn tatp_spec(spec: DbSpec) -> DbSpec {
    spec.for_workload("tatp", SQLITE_TATP_FILE)
}

/// A validated load.
#[derive(Clone, Debug, Serialize)]
pub struct LoadConfig {
    pub db: DbSpec,
    pub subscribers: i64,
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
        own: &TatpLoadArgs,
        tpcc: &TpccLoadArgs,
    ) -> Result<LoadConfig> {
        tpcc.refuse_emulate("TATP")?;
        Ok(LoadConfig {
            db: tatp_spec(args.db.spec()?),
            subscribers: own.subscribers.map_or(DEFAULT_SUBSCRIBERS, i64::from),
            threads: tpcc.loader_threads(),
            seed: args.seed,
            check: !tpcc.no_check,
            force: args.force,
            quiet: crate::output::quiet(),
        })
    }
}

/// Loads the TATP database and (unless `cfg.check` is off) checks it; returns the conditions.
pub fn load_with(cfg: &LoadConfig, stop: &AtomicBool) -> Result<Vec<Condition>> {
    let db = target::open(
        &cfg.db,
        Open::Load { force: cfg.force },
        cfg.threads as usize + 1,
        None,
        Vec::new(),
    )?;
    if !cfg.quiet {
        eprintln!(
            "oltplab load tatp — {} subscribers into {} ({}), {} thread{}",
            format_count(cfg.subscribers as f64),
            cfg.db.location(),
            db.version,
            cfg.threads,
            if cfg.threads == 1 { "" } else { "s" }
        );
    }
    let opts = LoadOptions {
        subscribers: cfg.subscribers,
        threads: cfg.threads as usize,
        seed: cfg.seed,
        force: cfg.force,
        location: cfg.db.location(),
    };
    let loaded = crate::workload::load_with_progress(
        cfg.quiet,
        planned_rows(cfg.subscribers),
        |r: &LoadReport| &r.times,
        |progress| {
            oltplab_workloads::tatp::load::load(db.connector.as_ref(), &opts, progress, stop)
        },
    );
    let conditions = match loaded {
        Ok(_) if cfg.check => check_db(&db, &cfg.db, cfg.quiet),
        Ok(_) => Ok(Vec::new()),
        Err(e) => Err(e),
    };
    if let Some(server) = db.server {
        server.stop()?;
    }
    conditions
}

fn check_db(db: &target::Db, spec: &DbSpec, quiet: bool) -> Result<Vec<Condition>> {
    let mut conn = db.connector.connect(Purpose::Check)?;
    let meta = require_loaded(conn.as_mut(), &spec.location())?;
    if !quiet {
        eprintln!("TATP conditions:");
    }
    run_checks(
        conn.as_mut(),
        &meta,
        crate::workload::print_conditions(quiet, 90),
    )
    .map_err(|e| db_failed("a condition's query failed", e))
}

/// A validated run (see [`run_with`]).
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
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
            tatp_spec(args.db.spec()?),
            t.isolation.as_deref(),
            t.duration,
        )?;
        let (terminals, ramp) = terminal_steps(
            t.terminals.as_ref().map(|s| s.0.as_slice()),
            args.trace.is_some(),
            RUN_TERMINALS,
        )?;
        let (warmup_s, warmup_auto) = match t.warmup {
            Warmup::For(d) => (d.as_secs_f64(), false),
            Warmup::Auto => (AUTO_WARMUP_MAX.as_secs_f64(), true),
        };
        Ok(RunConfig {
            db,
            terminals,
            ramp,
            duration_s: t.duration.as_secs_f64(),
            warmup_s,
            warmup_auto,
            report_interval_s: args.report_interval.as_secs_f64().round(),
            max_retries: args.max_retries,
            seed: args.seed,
            capture: args.capture_config(),
            output: args.output_config(),
        })
    }
}

/// The load record, read through a fresh connection of `db`.
fn meta_of(db: &target::Db, spec: &DbSpec) -> Result<Meta> {
    let mut conn = db.connector.connect(Purpose::Check)?;
    require_loaded(conn.as_mut(), &spec.location())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulate::{BackingChoice, Emulation};
    use std::path::Path;

    // Here, not in workload/scaffold.rs: the kit imports no workload.
    #[test]
    fn a_run_config_keeps_its_json_field_names() {
        let db = DbSpec::resolve(None, None, Path::new("data"), 1 << 20, None, true).unwrap();
        let cfg = RunConfig {
            db,
            terminals: 2,
            ramp: Vec::new(),
            duration_s: 1.0,
            warmup_s: 0.0,
            warmup_auto: false,
            report_interval_s: 1.0,
            max_retries: 0,
            seed: 1,
            capture: CaptureConfig {
                emulate: Some(Emulation::parse("sata-ssd-2010").unwrap()),
                trace: None,
                backing: BackingChoice::Ram,
            },
            // As the scaffold's tests make it: saved to run.json and results/, forced.
            output: OutputConfig {
                json: Some("run.json".into()),
                out: Some("results".into()),
                force: true,
                save: true,
                quiet: false,
            },
        };
        let v = serde_json::to_value(&cfg).unwrap();
        assert_eq!(v["emulate"], "sata-ssd-2010");
        assert_eq!(v["backing"], "ram");
        assert!(v["trace"].is_null() && v.get("trace").is_some());
        assert_eq!(v["json"], "run.json");
        assert_eq!(v["out"], "results");
        assert_eq!(v["force"], true);
        for gone in ["capture", "output", "save", "quiet"] {
            assert!(v.get(gone).is_none(), "{gone} in {v}");
        }
    }
}
