//! `oltplab crash tpcc`: power cuts on an emulated device while TPC-C runs, and what survives.
//!
//! SQLite runs in oltplab's own process, so a cut is: stop every I/O of the VFS at the cut instant
//! (no later write, sync, truncate or delete reaches the files; every call fails, as if the
//! process had died), then, for each state the device model allows (`devmodel::durability`),
//! copy the files and apply what the device would have lost. SQLite then opens each copy with its
//! own recovery (the WAL's checksums decide which frames count), and the copy is checked: the
//! twelve TPC-C consistency conditions, `PRAGMA quick_check`, and durability — every New-Order
//! whose COMMIT returned before the cut must be there. docs/crash.md describes the model.
//!
//! A managed PostgreSQL or MariaDB server runs under the emulating shim instead ([`server`]): the shim keeps
//! the undo log, the cut is kill -9 of the server's processes, and the engine restarts on each
//! state with its own crash recovery.

mod server;
mod workloads;

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Args;
use oltplab_core::safety::{self, io_usage};
use oltplab_core::units::format_ns;
use oltplab_core::{Error, Result};
use oltplab_devmodel::durability::{CrashState, Durability};
use oltplab_devmodel::params::CacheMode;
use oltplab_devmodel::Spec;
use oltplab_metrics::env::Env;
use oltplab_metrics::schema::now_rfc3339;
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;

use crate::output::{self, say};
use crate::workload::target::{single_engine, Engine};
use crate::STOP;
use oltplab_schema::{CrashResult, CrashRow, CrashStateOutcome, CrashSummary};

const AFTER_CRASH_HELP: &str = "\
Examples:
  oltplab crash tpcc --emulate sata-ssd-2010 --cuts 5
  oltplab crash tpcc --emulate 'sata-ssd-2010{cache=lying}' --emulate pcie-flash-2012 \\
      --sqlite-synchronous FULL,NORMAL,OFF --cuts 10 --seed 7
  oltplab crash tpcc --engine postgres --emulate sata-ssd-2010 \\
      --server-setting default --server-setting synchronous_commit=off --cuts 3
  oltplab crash tpcc --engine mariadb --emulate 'sata-ssd-2010{sector=4k}' \\
      --server-setting default --server-setting innodb_doublewrite=off --cut-during checkpoint
  oltplab crash brokerage --emulate sata-ssd-2010 --emulate 'sata-ssd-2010{cache=lying}' --cuts 3
  oltplab crash orders --engine mariadb --emulate sata-ssd-2010 --cuts 3

Each cut: a copy of the loaded database, the workload on the emulated device until a random
moment of --duration, the power cut there, SQLite's recovery on each state the device could have left, and
the checks (a managed server: kill -9 at the cut, restarted on each state). Device specs take
cache=off|volatile|lying|battery and sector=512|4k (docs/devices.md).
States whose outcome SQLite's documentation does not allow are kept in the output directory.";

#[derive(Args, Debug, Clone)]
#[command(after_help = AFTER_CRASH_HELP)]
pub struct CrashArgs {
    /// The workload to cut the power under: TPC-C (acknowledged New-Orders checked), the
    /// brokerage (Trade-Orders and Trade-Results) or order entry (inserted orders)
    #[arg(value_parser = ["tpcc", "brokerage", "orders"])]
    pub workload: String,

    /// Database engine: SQLite in oltplab's process, or a managed PostgreSQL or MariaDB server
    /// killed at the cut
    #[arg(long, default_value = "sqlite", value_parser = single_engine())]
    pub engine: Engine,

    /// Emulated device, with its cache (repeat for several: one table row each)
    #[arg(long, value_name = "SPEC", value_parser = crate::emulate::spec_arg, default_value = "sata-ssd-2010")]
    pub emulate: Vec<Spec>,

    /// SQLite's synchronous setting(s) to run each device with, comma-separated
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "FULL",
          value_parser = clap::builder::PossibleValuesParser::new(["OFF", "NORMAL", "FULL", "off", "normal", "full"]))]
    pub sqlite_synchronous: Vec<String>,

    /// A server setting to run each device with, NAME=VALUE, or `default` (repeat: one table row
    /// each): PostgreSQL synchronous_commit, fsync, full_page_writes, wal_sync_method; MariaDB
    /// innodb_flush_log_at_trx_commit, innodb_doublewrite
    #[arg(long, value_name = "NAME=VALUE", default_values_t = vec!["default".to_string()])]
    pub server_setting: Vec<String>,

    /// Power cuts per device and setting
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub cuts: u32,

    /// On-disk states checked per cut (each a different draw of what the device lost)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub states: u32,

    /// Seed of the cut times, the device models and the states: the same seed draws the same cuts
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Warehouses to load
    #[arg(long, value_name = "W", default_value_t = 1, value_parser = clap::value_parser!(i64).range(1..=100))]
    pub warehouses: i64,

    /// Terminals driving TPC-C (no keying or think times)
    #[arg(long, value_name = "T", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub terminals: u32,

    /// The longest run before a cut: each cut comes at a random moment between a quarter of it and all of it
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = oltplab_core::units::parse_duration)]
    pub duration: Duration,

    /// When the power goes: at a random moment of the run, or (servers) while the engine writes
    /// its dirty pages — a checkpoint asked for at that moment (PostgreSQL `CHECKPOINT`, InnoDB
    /// `innodb_max_dirty_pages_pct=0`), the cut a random moment into it
    #[arg(long, value_name = "WHEN", default_value = "run", value_parser = ["run", "checkpoint"])]
    pub cut_during: String,

    /// Keep every state checked, not only those with an outcome the engine does not document
    #[arg(long)]
    pub keep_states: bool,

    /// Output directory [default: ./oltplab-results/crash-<UTC time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Also write the result here (`-`: standard output)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write into a non-empty directory or over a file oltplab did not create
    #[arg(long)]
    pub force: bool,
}

/// One device × engine setting.
#[derive(Clone, Debug, Serialize)]
pub struct CrashConfigRow {
    pub spec: String,
    /// `synchronous` (SQLite), a server setting's name, or `default` (the server as configured).
    pub setting: String,
    pub value: String,
}

impl CrashConfigRow {
    /// The server settings the row adds (none for `default`).
    fn server_settings(&self) -> Vec<(String, String)> {
        match self.setting.as_str() {
            "synchronous" | "default" => Vec::new(),
            name => vec![(name.to_string(), self.value.clone())],
        }
    }

    /// How the table and the directories name the setting.
    fn label(&self) -> String {
        match self.setting.as_str() {
            "synchronous" | "default" => self.value.clone(),
            name => format!("{name}={}", self.value),
        }
    }
}

/// Server settings that trade durability, with the values they take (docs/crash.md).
type Settings = [(&'static str, &'static [&'static str])];

const POSTGRES_SETTINGS: [(&str, &[&str]); 4] = [
    (
        "synchronous_commit",
        &["on", "off", "local", "remote_write", "remote_apply"],
    ),
    ("fsync", &["on", "off"]),
    ("full_page_writes", &["on", "off"]),
    (
        "wal_sync_method",
        &["fdatasync", "fsync", "open_datasync", "open_sync"],
    ),
];

const MARIADB_SETTINGS: [(&str, &[&str]); 2] = [
    ("innodb_flush_log_at_trx_commit", &["0", "1", "2"]),
    ("innodb_doublewrite", &["on", "off"]),
];

/// `default` or NAME=VALUE of the engine's settings, as (setting, value).
fn parse_server_setting(engine: Engine, text: &str) -> Result<(String, String)> {
    if text == "default" {
        return Ok(("default".into(), "default".into()));
    }
    let (known, product): (&Settings, &str) = match engine {
        Engine::Mariadb => (&MARIADB_SETTINGS, "MariaDB"),
        _ => (&POSTGRES_SETTINGS, "PostgreSQL"),
    };
    let names: Vec<&str> = known.iter().map(|(n, _)| *n).collect();
    let Some((name, value)) = text.split_once('=') else {
        return Err(Error::usage(format!(
            "--server-setting {text}: give NAME=VALUE (one of {}) or default",
            names.join(", ")
        )));
    };
    let (name, value) = (name.trim(), value.trim().to_ascii_lowercase());
    let Some((_, values)) = known.iter().find(|(n, _)| *n == name) else {
        return Err(Error::usage(format!(
            "--server-setting {text}: oltplab crash knows what {product} promises for {} only; give one of them",
            names.join(", ")
        )));
    };
    if !values.contains(&value.as_str()) {
        return Err(Error::usage(format!(
            "--server-setting {text}: {name} takes {}",
            values.join(", ")
        )));
    }
    Ok((name.to_string(), value))
}

/// The validated command.
#[derive(Clone, Debug, Serialize)]
pub struct CrashConfig {
    pub workload: String,
    pub engine: Engine,
    pub rows: Vec<CrashConfigRow>,
    pub cuts: u32,
    pub states: u32,
    pub seed: u64,
    pub warehouses: i64,
    pub terminals: u32,
    pub duration_s: f64,
    /// `run` or `checkpoint` (--cut-during).
    pub cut_during: String,
    /// `power-cut` when `oltplab study --scenario power-cut` made this configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub study: Option<String>,
    pub keep_states: bool,
    #[serde(skip)]
    pub specs: Vec<Spec>,
    pub out: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub force: bool,
}

impl CrashConfig {
    pub fn from_args(args: &CrashArgs) -> Result<CrashConfig> {
        let server = args.engine != Engine::Sqlite;
        let default_sync = args.sqlite_synchronous.len() == 1
            && args.sqlite_synchronous[0].eq_ignore_ascii_case("FULL");
        if server && !default_sync {
            return Err(Error::usage(
                "--sqlite-synchronous is SQLite's: for a server give --server-setting (e.g. synchronous_commit=off)",
            ));
        }
        if !server && args.server_setting != ["default"] {
            return Err(Error::usage(
                "--server-setting is for --engine postgres or mariadb: on SQLite give --sqlite-synchronous",
            ));
        }
        if !server && args.cut_during == "checkpoint" {
            return Err(Error::usage(
                "--cut-during checkpoint is for --engine postgres or mariadb for now: on SQLite leave it at run",
            ));
        }
        if args.workload != "tpcc" && args.cut_during == "checkpoint" {
            return Err(Error::usage(format!(
                "--cut-during checkpoint is for crash tpcc for now: crash {} cuts during the run; leave it at run",
                args.workload
            )));
        }
        if args.workload != "tpcc" && args.warehouses != 1 {
            return Err(Error::usage(format!(
                "--warehouses is TPC-C's: crash {} loads a fixed small scale (docs/crash.md); drop it",
                args.workload
            )));
        }
        if args.duration < Duration::from_millis(400) {
            return Err(Error::usage(
                "--duration must be at least 400ms, so that the run commits something before the cut: give e.g. 5s",
            ));
        }
        let mut specs = Vec::new();
        for spec in &args.emulate {
            if spec.is_host() {
                return Err(Error::usage(
                    "--emulate host is the real device, whose cache oltplab cannot cut: give an emulated device such as sata-ssd-2010",
                ));
            }
            if server && spec.is_layout() {
                return Err(Error::usage(format!(
                    "--emulate {}: a layout is not cut on a server yet; give one device",
                    spec.name()
                )));
            }
            specs.push(spec.clone());
        }
        let mut settings: Vec<(String, String)> = Vec::new();
        if server {
            for text in &args.server_setting {
                let s = parse_server_setting(args.engine, text)?;
                if !settings.contains(&s) {
                    settings.push(s);
                }
            }
        } else {
            for s in &args.sqlite_synchronous {
                let s = ("synchronous".to_string(), s.to_ascii_uppercase());
                if !settings.contains(&s) {
                    settings.push(s);
                }
            }
        }
        let rows = specs
            .iter()
            .flat_map(|spec| {
                settings.iter().map(move |(setting, value)| CrashConfigRow {
                    spec: spec.name(),
                    setting: setting.clone(),
                    value: value.clone(),
                })
            })
            .collect();
        if let Some(json) = &args.json {
            output::check_json_path(json, args.force)?;
        }
        Ok(CrashConfig {
            workload: args.workload.clone(),
            engine: args.engine,
            rows,
            cuts: args.cuts,
            states: args.states,
            seed: args.seed,
            warehouses: args.warehouses,
            terminals: args.terminals,
            duration_s: args.duration.as_secs_f64(),
            cut_during: args.cut_during.clone(),
            study: None,
            keep_states: args.keep_states,
            specs,
            out: args.out.clone(),
            json: args.json.clone(),
            force: args.force,
        })
    }
}

/// The command: run, print the table, save the result.
pub fn run(args: CrashArgs) -> Result<()> {
    run_as(&CrashConfig::from_args(&args)?, "crash")
}

/// Runs `cfg` into an output directory named after `kind` when --out is not given (`study
/// --scenario power-cut` runs its matrix through here).
pub(crate) fn run_as(cfg: &CrashConfig, kind: &str) -> Result<()> {
    refuse_mapped_redo_log(cfg)?;
    let started_at = now_rfc3339();
    let out = output::prepare_out_dir(cfg.out.as_deref(), kind, &started_at, cfg.force)?;
    let doc = crash_with(cfg, &out, &started_at)?;
    print_table(&doc.summary);
    output::print_warnings(&doc.warnings);
    say!(
        "result: {}, report: {}",
        out.join(output::RESULT_FILE).display(),
        out.join(output::REPORT_FILE).display()
    );
    if doc.summary.interrupted {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// What SQLite's documentation promises for a device's cache and a synchronous setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Promise {
    /// Nothing acknowledged is lost, nothing breaks.
    Durable,
    /// Acknowledged commits may be lost, but the database stays consistent (WAL with NORMAL:
    /// "a transaction committed in WAL mode with synchronous=NORMAL might roll back following a
    /// power loss").
    Consistent,
    /// Anything may happen: the device or the setting breaks SQLite's assumptions.
    Nothing,
}

impl Promise {
    /// SQLite's promise for its `synchronous` setting on a device with `cache`.
    fn of(cache: CacheMode, synchronous: &str) -> Promise {
        match (cache, synchronous) {
            (CacheMode::Lying, _) | (_, "OFF") => Promise::Nothing,
            (_, "NORMAL") => Promise::Consistent,
            _ => Promise::Durable,
        }
    }

    /// The engine's promise for a row: SQLite's for `synchronous`, the server's otherwise
    /// (PostgreSQL's and InnoDB's setting names do not overlap).
    fn of_row(cache: CacheMode, row: &CrashConfigRow) -> Promise {
        if row.setting == "synchronous" {
            return Promise::of(cache, &row.value);
        }
        match (cache, row.setting.as_str(), row.value.as_str()) {
            (CacheMode::Lying, _, _) => Promise::Nothing,
            // "only an operating system crash or a power outage can erase the last second of
            // transactions" (2); "any mysqld process crash can erase the last second" (0);
            // InnoDB's crash recovery works regardless.
            (_, "innodb_flush_log_at_trx_commit", "0" | "2") => Promise::Consistent,
            // Without the doublewrite buffer a page torn by the cut cannot be restored: InnoDB's
            // 16 KiB pages are larger than any atomic unit here.
            (_, "innodb_doublewrite", "off") => Promise::Nothing,
            // "can result in unrecoverable data corruption" (runtime-config-wal, fsync).
            (_, "fsync", "off") => Promise::Nothing,
            // Torn pages are not repaired from the WAL: "might lead to either unrecoverable data
            // corruption, or silent data corruption" on a device whose atomic unit is below 8 KiB.
            (_, "full_page_writes", "off") => Promise::Nothing,
            // "a window between when a transaction is reported committed and when it is really
            // safe … the database will be consistent" (wal-async-commit).
            (_, "synchronous_commit", "off") => Promise::Consistent,
            _ => Promise::Durable,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Promise::Durable => "nothing lost, nothing broken",
            Promise::Consistent => "commits may be lost, nothing broken",
            Promise::Nothing => "no promise",
        }
    }

    fn allows(self, s: &CrashStateOutcome) -> bool {
        let broken = !s.recovered
            || !s.checks_ran
            || !s.invariants_broken.is_empty()
            || s.corrupt_reports > 0;
        match self {
            Promise::Durable => !broken && s.commits_lost == 0,
            Promise::Consistent => !broken,
            Promise::Nothing => true,
        }
    }
}

/// What every cut starts from a copy of.
enum Loaded {
    /// The workload's SQLite file.
    Sqlite(workloads::Loaded),
    /// A stopped managed server's data directory.
    Server { data_dir: PathBuf },
}

/// Loads once, then cuts `cfg.cuts` times per row; saves the result after every cut.
pub fn crash_with(cfg: &CrashConfig, out: &Path, started_at: &str) -> Result<CrashResult> {
    let load_dir = out.join("load");
    own_subdir(&load_dir)?;
    let load_started = Instant::now();
    let loaded = match cfg.engine {
        Engine::Sqlite => Loaded::Sqlite(workloads::load(cfg, &load_dir)?),
        _ => server::load(cfg, &load_dir)?,
    };
    let load_s = load_started.elapsed().as_secs_f64();
    say!("  loaded in {load_s:.1}s");
    let product = match cfg.engine {
        Engine::Sqlite => "SQLite",
        Engine::Mariadb => "MariaDB",
        _ => "PostgreSQL",
    };

    let mut doc: CrashResult = output::new_doc(
        "crash",
        started_at.to_string(),
        serde_json::to_value(cfg).expect("the config serialises"),
        Env::collect(Some(out)),
        CrashSummary {
            workload: cfg.workload.clone(),
            engine: cfg.engine.name().to_string(),
            // TPC-C's scale, or the other workloads' customers.
            warehouses: match cfg.workload.as_str() {
                "tpcc" => cfg.warehouses,
                _ => 0,
            },
            customers: workloads::customers(&cfg.workload),
            load_s,
            ..Default::default()
        },
    );
    for (r, row) in cfg.rows.iter().enumerate() {
        let spec = cfg
            .specs
            .iter()
            .find(|s| s.name() == row.spec)
            .expect("every row's spec was parsed")
            .clone();
        let durability = Durability::of(&spec, 0);
        let promise = Promise::of_row(durability.cache, row);
        doc.summary.rows.push(CrashRow {
            spec: row.spec.clone(),
            cache: durability.cache.name().to_string(),
            cache_bytes: durability.cache_bytes,
            sector_bytes: durability.sector_bytes,
            setting: row.setting.clone(),
            value: row.value.clone(),
            expected: promise.name().into(),
            pages_repaired: Some(0),
            ..Default::default()
        });
        let row_dir = out.join(format!(
            "{}-{}",
            file_name(&row.spec),
            file_name(&row.label())
        ));
        own_subdir(&row_dir)?;
        for cut in 0..cfg.cuts {
            if STOP.load(Ordering::Relaxed) {
                doc.summary.interrupted = true;
                break;
            }
            let seed = mix(cfg.seed, r as u64, cut as u64);
            let cycle_started = Instant::now();
            let outcomes = match &loaded {
                Loaded::Sqlite(w) => {
                    workloads::one_cut(cfg, &spec, &row.value, w, &row_dir, cut, seed, promise)?
                }
                Loaded::Server { data_dir } => server::one_cut(
                    cfg,
                    &spec,
                    &row.server_settings(),
                    data_dir,
                    &row_dir,
                    cut,
                    seed,
                    promise,
                )?,
            };
            let Some(outcomes) = outcomes else {
                doc.summary.interrupted = true;
                break;
            };
            let cycle_s = cycle_started.elapsed().as_secs_f64();
            let sum = &mut doc.summary.rows[r];
            sum.cycle_s_mean =
                (sum.cycle_s_mean * sum.cuts as f64 + cycle_s) / (sum.cuts + 1) as f64;
            sum.pending_writes_mean = (sum.pending_writes_mean * sum.cuts as f64
                + outcomes.first().map_or(0, |o| o.pending_writes) as f64)
                / (sum.cuts + 1) as f64;
            sum.cuts += 1;
            for mut o in outcomes {
                o.row = r;
                add(sum, &o);
                if !promise.allows(&o) {
                    sum.unexpected_states += 1;
                    doc.warnings.push(Warning::new(
                        WarningKind::CrashUnexpected,
                        format!(
                            "{} with {}: cut {} state {} {} where {product} promises {}; the state is kept in {}",
                            row.spec,
                            row.label(),
                            o.cut,
                            o.state,
                            describe(&o),
                            promise.name(),
                            o.kept.as_deref().unwrap_or("?")
                        ),
                    ));
                }
                doc.summary.states.push(o);
            }
            output::save(&doc, out, cfg.json.as_deref())?;
        }
        let sum = &doc.summary.rows[r];
        say!(
            "  {} {}: {} cut(s), {} of {} acknowledged commits lost, {} invariant(s) broken",
            sum.spec,
            row.label(),
            sum.cuts,
            sum.commits_lost,
            sum.acknowledged_commits,
            sum.invariants_broken
        );
        if doc.summary.interrupted {
            break;
        }
    }
    output::save(&doc, out, cfg.json.as_deref())?;
    output::write_report(&doc, out)?;
    Ok(doc)
}

/// A managed MariaDB keeps its files under the output directory. On /dev/shm's file system it
/// memory-maps its redo log (it takes it for persistent memory): its commits would write and sync
/// nothing the emulated device sees, so a cut could lose none of them. Refused before anything
/// is written.
fn refuse_mapped_redo_log(cfg: &CrashConfig) -> Result<()> {
    if cfg.engine != Engine::Mariadb {
        return Ok(());
    }
    // The output directory need not exist yet: its nearest existing ancestor's file system.
    let out = cfg.out.clone().unwrap_or_else(|| PathBuf::from("."));
    let Some(existing) = out
        .ancestors()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .find(|p| p.exists())
    else {
        return Ok(());
    };
    if oltplab_dbs::server::maps_redo_log_in(existing) {
        return Err(Error::usage(format!(
            "{} is in /dev/shm, where MariaDB memory-maps its redo log (it takes /dev/shm for persistent memory), so its commits would reach no emulated device for a cut to lose: give --out a directory on another file system",
            out.display()
        )));
    }
    Ok(())
}

/// A directory for oltplab's own files inside the output directory: new, or one oltplab made
/// (cuts remove what they leave in it, so a foreign one is refused even with --force).
fn own_subdir(dir: &Path) -> Result<()> {
    if dir.exists() && !safety::is_own_dir(dir) {
        return Err(Error::usage(format!(
            "{} exists and oltplab did not create it: choose another --out",
            dir.display()
        )));
    }
    safety::ensure_own_dir(dir, false)
}

fn describe(o: &CrashStateOutcome) -> String {
    let mut parts = Vec::new();
    if !o.recovered {
        parts.push(format!(
            "did not recover ({})",
            o.error.as_deref().unwrap_or("no error given")
        ));
    }
    if o.commits_lost > 0 {
        parts.push(format!(
            "lost {} of {} acknowledged commits",
            o.commits_lost, o.acknowledged_commits
        ));
    }
    if o.recovered && !o.checks_ran {
        parts.push("could not run the consistency checks".to_string());
    }
    if !o.invariants_broken.is_empty() {
        parts.push(format!("broke conditions {:?}", o.invariants_broken));
    }
    if o.corrupt_reports > 0 {
        parts.push(format!(
            "had {} report(s) of corruption from the engine",
            o.corrupt_reports
        ));
    }
    parts.join(", ")
}

fn add(sum: &mut CrashRow, o: &CrashStateOutcome) {
    sum.states += 1;
    if o.recovered {
        sum.recovery_ns_mean = (sum.recovery_ns_mean * sum.recoveries_ok as f64
            + o.recovery_ns as f64)
            / (sum.recoveries_ok + 1) as f64;
        sum.recoveries_ok += 1;
        sum.recovery_ns_max = sum.recovery_ns_max.max(o.recovery_ns);
    }
    sum.acknowledged_commits += o.acknowledged_commits;
    sum.commits_lost += o.commits_lost;
    sum.states_losing_commits += u32::from(o.commits_lost > 0);
    sum.invariants_broken += o.invariants_broken.len() as u32;
    sum.checks_failed += u32::from(o.recovered && !o.checks_ran);
    sum.corrupt_reports += o.corrupt_reports;
    sum.pages_repaired = Some(sum.pages_repaired.unwrap_or(0) + o.pages_repaired.unwrap_or(0));
    sum.lost_writes += o.lost_writes;
    sum.torn_writes += o.torn_writes;
}

/// SplitMix64's finaliser over the seed, the row and the cut: each cut its own draw.
fn mix(seed: u64, row: u64, cut: u64) -> u64 {
    let mut z = seed
        .wrapping_add(row.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(cut.wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A database file and the journal files SQLite may keep beside it.
fn sqlite_files(db: &Path) -> Vec<PathBuf> {
    ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|s| {
            let mut n = db.as_os_str().to_os_string();
            n.push(s);
            PathBuf::from(n)
        })
        .collect()
}

/// A device spec as a directory name: `sata-ssd-2010{cache=lying}` → `sata-ssd-2010_cache_lying`.
fn file_name(spec: &str) -> String {
    let mut s: String = spec
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    while s.ends_with('_') {
        s.pop();
    }
    s
}

/// Where a cut's states were drawn and what its row promises: what each checked state's
/// outcome is finished with.
struct CutPlace {
    cut: u32,
    cut_at: Duration,
    /// How far into a checkpoint the cut came (`--cut-during checkpoint`, servers only).
    into_checkpoint: Option<Duration>,
    keep_states: bool,
    promise: Promise,
}

impl CutPlace {
    /// Checks state `k`, put into `dir`, timing the check; the outcome gets where it came from
    /// and what the device lost, and its directory is kept (with a note) when asked or when the
    /// outcome is outside the row's promise, else removed.
    fn finish_state(
        &self,
        k: usize,
        st: &CrashState,
        dir: &Path,
        check: impl FnOnce() -> CrashStateOutcome,
    ) -> Result<CrashStateOutcome> {
        let checked = Instant::now();
        let mut o = check();
        o.check_s = checked.elapsed().as_secs_f64();
        o.cut_into_checkpoint_s = self.into_checkpoint.map(|d| d.as_secs_f64());
        o.cut = self.cut;
        o.state = k as u32;
        o.seed = st.seed;
        o.cut_at_s = self.cut_at.as_secs_f64();
        o.pending_writes = st.pending_writes;
        o.lost_writes = st.lost_writes;
        o.torn_writes = st.torn_writes;
        if self.keep_states || !self.promise.allows(&o) {
            write_state_note(dir, &o)?;
            o.kept = Some(dir.display().to_string());
        } else {
            let _ = std::fs::remove_dir_all(dir);
        }
        Ok(o)
    }
}

/// After a cut's states: its run files go, and its directory too unless a state was kept.
fn end_cut(
    run_dir: &Path,
    cut_dir: &Path,
    outcomes: Vec<CrashStateOutcome>,
) -> Vec<CrashStateOutcome> {
    let _ = std::fs::remove_dir_all(run_dir);
    if !outcomes.iter().any(|o| o.kept.is_some()) {
        let _ = std::fs::remove_dir_all(cut_dir);
    }
    outcomes
}

/// Puts the files as the cut left them into `dir` (moved when `take`, else copied) and applies
/// the state's patches: what the device lost.
fn materialise(files: &[(String, u32)], st: &CrashState, dir: &Path, take: bool) -> Result<()> {
    let mut placed: Vec<(u32, PathBuf)> = Vec::new();
    for (path, slot) in files {
        let from = Path::new(path);
        let Some(name) = from.file_name() else {
            continue;
        };
        let to = dir.join(name);
        if take {
            std::fs::rename(from, &to).map_err(|e| io_usage(&to, "move the cut's file to", &e))?;
        } else {
            std::fs::copy(from, &to).map_err(|e| io_usage(&to, "copy the cut's file to", &e))?;
        }
        placed.push((*slot, to));
    }
    for p in &st.patches {
        let Some((_, path)) = placed.iter().find(|(s, _)| *s == p.file) else {
            continue;
        };
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io_usage(path, "open", &e))?;
        f.write_all_at(&p.data, p.offset)
            .map_err(|e| io_usage(path, "write the crash state into", &e))?;
    }
    Ok(())
}

fn write_state_note(dir: &Path, o: &CrashStateOutcome) -> Result<()> {
    let text = serde_json::to_string_pretty(o).expect("a state serialises");
    output::write_atomic(&dir.join("state.json"), &text)
}

fn print_table(s: &CrashSummary) {
    // SQLite's synchronous values are short; a server setting is NAME=VALUE.
    let setting = |r: &CrashRow| match r.setting.as_str() {
        "synchronous" | "default" => r.value.clone(),
        name => format!("{name}={}", r.value),
    };
    let width = s
        .rows
        .iter()
        .map(|r| setting(r).len())
        .max()
        .unwrap_or(0)
        .max(7);
    let (head, setting_head) = match s.engine.as_str() {
        "sqlite" => ("sync", 7),
        _ => ("setting", width),
    };
    say!("");
    say!(
        "{:<34} {:<9} {:<setting_head$} {:>5} {:>9} {:>10} {:>13} {:>7} {:>9} {:>8} {:>8} {:>5} {:>8}",
        "device",
        "cache",
        head,
        "cuts",
        "recovered",
        "recovery",
        "commits lost",
        "broken",
        "unchecked",
        "corrupt",
        "cycle",
        "torn",
        "repaired"
    );
    for r in &s.rows {
        say!(
            "{:<34} {:<9} {:<setting_head$} {:>5} {:>9} {:>10} {:>13} {:>7} {:>9} {:>8} {:>7.1}s {:>5} {:>8}",
            r.spec,
            r.cache,
            setting(r),
            r.cuts,
            format!("{}/{}", r.recoveries_ok, r.states),
            format_ns(r.recovery_ns_mean),
            format!("{}/{}", r.commits_lost, r.acknowledged_commits),
            r.invariants_broken,
            r.checks_failed,
            r.corrupt_reports,
            r.cycle_s_mean,
            r.torn_writes,
            r.pages_repaired.unwrap_or(0)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_promise_follows_the_cache_and_the_setting() {
        assert_eq!(Promise::of(CacheMode::Volatile, "FULL"), Promise::Durable);
        assert_eq!(
            Promise::of(CacheMode::Battery, "NORMAL"),
            Promise::Consistent
        );
        assert_eq!(Promise::of(CacheMode::Lying, "FULL"), Promise::Nothing);
        assert_eq!(Promise::of(CacheMode::Off, "OFF"), Promise::Nothing);
        let lost = CrashStateOutcome {
            recovered: true,
            checks_ran: true,
            commits_lost: 1,
            ..Default::default()
        };
        assert!(!Promise::Durable.allows(&lost));
        assert!(Promise::Consistent.allows(&lost));
        let broken = CrashStateOutcome {
            recovered: true,
            checks_ran: true,
            invariants_broken: vec![3],
            ..Default::default()
        };
        assert!(!Promise::Consistent.allows(&broken));
        assert!(Promise::Nothing.allows(&broken));
    }

    #[test]
    fn postgres_settings_parse_and_carry_what_postgres_promises() {
        let row = |text: &str| {
            let (setting, value) = parse_server_setting(Engine::Postgres, text).unwrap();
            CrashConfigRow {
                spec: "sata-ssd-2010".into(),
                setting,
                value,
            }
        };
        let default = row("default");
        assert!(default.server_settings().is_empty());
        assert_eq!(default.label(), "default");
        let off = row("synchronous_commit=OFF");
        assert_eq!(
            off.server_settings(),
            [("synchronous_commit".to_string(), "off".to_string())]
        );
        assert_eq!(off.label(), "synchronous_commit=off");
        assert_eq!(
            Promise::of_row(CacheMode::Volatile, &default),
            Promise::Durable
        );
        assert_eq!(
            Promise::of_row(CacheMode::Volatile, &off),
            Promise::Consistent
        );
        assert_eq!(
            Promise::of_row(CacheMode::Battery, &row("fsync=off")),
            Promise::Nothing
        );
        assert_eq!(
            Promise::of_row(CacheMode::Off, &row("full_page_writes=off")),
            Promise::Nothing
        );
        assert_eq!(
            Promise::of_row(CacheMode::Lying, &default),
            Promise::Nothing
        );
        for (bad, says) in [
            ("fsync", "give NAME=VALUE"),
            ("work_mem=4MB", "knows what PostgreSQL promises"),
            ("fsync=maybe", "fsync takes on, off"),
        ] {
            let e = parse_server_setting(Engine::Postgres, bad).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
        // InnoDB's, which PostgreSQL does not have and the other way round.
        let (setting, value) =
            parse_server_setting(Engine::Mariadb, "innodb_flush_log_at_trx_commit=2").unwrap();
        let row = CrashConfigRow {
            spec: "sata-ssd-2010".into(),
            setting,
            value,
        };
        assert_eq!(
            Promise::of_row(CacheMode::Volatile, &row),
            Promise::Consistent
        );
        let (setting, value) =
            parse_server_setting(Engine::Mariadb, "innodb_doublewrite=OFF").unwrap();
        let row = CrashConfigRow {
            spec: "sata-ssd-2010".into(),
            setting,
            value,
        };
        assert_eq!(Promise::of_row(CacheMode::Volatile, &row), Promise::Nothing);
        assert!(parse_server_setting(Engine::Mariadb, "fsync=off").is_err());
        assert!(parse_server_setting(Engine::Postgres, "innodb_doublewrite=off").is_err());
    }

    #[test]
    fn spec_names_become_directory_names() {
        assert_eq!(
            file_name("sata-ssd-2010{cache=lying}"),
            "sata-ssd-2010_cache_lying"
        );
        assert_eq!(
            file_name("wbcache(raid5(4,hdd-15k))"),
            "wbcache_raid5_4_hdd-15k"
        );
    }
}
