//! `oltplab load|run|check NAME`: the command line that names every workload, the list of them
//! ([`WORKLOADS`]) and the dispatch to them. It sits above the plug-ins (`tpcc`, `orders`,
//! `brokerage`, `tatp`), which see only their own option groups and what every workload shares
//! (`workload::CommonLoadArgs`, `CommonRunArgs`, `DbArgs`), never this module: so `workload/`
//! stays a kit the plug-ins use and no import goes back up (scripts/module-cycles.py).
//!
//! A new workload is its option group(s) flattened into [`LoadArgs`] / [`RunArgs`], a type here
//! implementing [`Workload`] (after what BenchBase does with its benchmark modules and fio with
//! its `ioengine_ops`) that hands the plug-in its groups, and one line in [`WORKLOADS`].

use clap::builder::PossibleValuesParser;
use clap::Args;
use oltplab_core::{Error, Result};

use crate::plugins::brokerage::BrokerageLoadArgs;
use crate::plugins::orders::{OrdersLoadArgs, OrdersRunArgs};
use crate::plugins::tatp::TatpLoadArgs;
use crate::plugins::tpcc::{TpccLoadArgs, TpccRunArgs};
use crate::plugins::{brokerage, orders, tatp, tpcc};
use crate::workload::target::Engine;
use crate::workload::{CommonLoadArgs, CommonRunArgs, DbArgs};
use oltplab_schema::RunResult;

/// A workload as the command line sees it: each method gets the whole command line of its
/// command and hands the plug-in the groups it reads.
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

/// TPC-C (spec 5.11): nine tables, five transactions, the twelve consistency conditions.
pub struct Tpcc;

impl Workload for Tpcc {
    fn name(&self) -> &'static str {
        "tpcc"
    }
    fn load(&self, args: LoadArgs) -> Result<()> {
        tpcc::load_command(args.common, args.tpcc)
    }
    fn run(&self, args: RunArgs) -> Result<RunResult> {
        tpcc::run_command(args.common, &args.tpcc)
    }
    fn check(&self, args: CheckArgs) -> Result<()> {
        tpcc::check_command(args.db)
    }
    fn load_options_given(&self, args: &LoadArgs) -> Vec<&'static str> {
        args.tpcc.given()
    }
    fn run_options_given(&self, args: &RunArgs) -> Vec<&'static str> {
        args.tpcc.given()
    }
}

/// S5's order entry: customers, products, orders of five lines; inserts or updates of one order
/// per transaction, a fixed number per connection.
pub struct Orders;

impl Workload for Orders {
    fn name(&self) -> &'static str {
        "orders"
    }
    fn load(&self, args: LoadArgs) -> Result<()> {
        orders::load_command(args.common, &args.orders)
    }
    fn run(&self, args: RunArgs) -> Result<RunResult> {
        orders::run_command(args.common, &args.orders)
    }
    fn check(&self, args: CheckArgs) -> Result<()> {
        orders::check_command(args.db)
    }
    fn load_options_given(&self, args: &LoadArgs) -> Vec<&'static str> {
        args.orders.given()
    }
    fn run_options_given(&self, args: &RunArgs) -> Vec<&'static str> {
        args.orders.given()
    }
}

/// TPC-E-like brokerage: customers, accounts, brokers, securities and their market, a trade
/// history; ten transactions, a market emulator; six invariants.
pub struct Brokerage;

impl Workload for Brokerage {
    fn name(&self) -> &'static str {
        "brokerage"
    }
    fn load(&self, args: LoadArgs) -> Result<()> {
        brokerage::load_command(args.common, &args.brokerage, &args.tpcc, &args.orders)
    }
    fn run(&self, args: RunArgs) -> Result<RunResult> {
        brokerage::run_command(args.common, &args.tpcc)
    }
    fn check(&self, args: CheckArgs) -> Result<()> {
        brokerage::check_command(args.db)
    }
    fn load_options_given(&self, args: &LoadArgs) -> Vec<&'static str> {
        args.brokerage.given()
    }
    fn run_options_given(&self, _args: &RunArgs) -> Vec<&'static str> {
        Vec::new()
    }
    fn borrowed_options(&self) -> &'static [&'static str] {
        brokerage::BORROWED_OPTIONS
    }
}

/// TATP: a home location register of subscribers in four tables, seven short transactions.
pub struct Tatp;

impl Workload for Tatp {
    fn name(&self) -> &'static str {
        "tatp"
    }
    fn load(&self, args: LoadArgs) -> Result<()> {
        tatp::load_command(args.common, &args.tatp, &args.tpcc)
    }
    fn run(&self, args: RunArgs) -> Result<RunResult> {
        tatp::run_command(args.common, &args.tpcc)
    }
    fn check(&self, args: CheckArgs) -> Result<()> {
        tatp::check_command(args.db)
    }
    fn load_options_given(&self, args: &LoadArgs) -> Vec<&'static str> {
        args.tatp.given()
    }
    fn run_options_given(&self, _args: &RunArgs) -> Vec<&'static str> {
        Vec::new()
    }
    fn borrowed_options(&self) -> &'static [&'static str] {
        tatp::BORROWED_OPTIONS
    }
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
    let w = find(&args.workload)?;
    check_db_options(&args.common.db, w)?;
    for other in WORKLOADS.iter().filter(|o| o.name() != w.name()) {
        reject_foreign(other.name(), w, &other.load_options_given(&args))?;
    }
    w.load(args)
}

/// `oltplab run NAME`: Ctrl-C during the run is exit code 130, the partial result saved.
pub fn run(args: RunArgs) -> Result<()> {
    let w = find(&args.workload)?;
    check_db_options(&args.common.db, w)?;
    for other in WORKLOADS.iter().filter(|o| o.name() != w.name()) {
        reject_foreign(other.name(), w, &other.run_options_given(&args))?;
    }
    if w.run(args)?.interrupted() {
        return Err(Error::Interrupted);
    }
    Ok(())
}

pub fn check(args: CheckArgs) -> Result<()> {
    let w = find(&args.workload)?;
    check_db_options(&args.db, w)?;
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

/// `--nodes` only with `--engine galera`, and the cluster (for now) only for TPC-C; and the
/// --server-setting names.
fn check_db_options(db: &DbArgs, w: &dyn Workload) -> Result<()> {
    db.check_server_settings()?;
    let hosts = db.spec()?.hosts.len();
    // TATP's and order entry's results have no account of the hosts (order entry opens its
    // own single-server connections).
    if hosts > 1 && !matches!(w.name(), "tpcc" | "brokerage") {
        return Err(Error::usage(format!(
            "--url names {hosts} hosts, but only tpcc and brokerage spread their terminals over several: give {} one host",
            w.name()
        )));
    }
    let galera = db.engine == Some(Engine::Galera);
    if db.nodes.is_some() && !galera {
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

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct LoadArgs {
    /// The workload
    #[arg(value_parser = names(), default_value = "tpcc")]
    pub workload: String,

    #[command(flatten)]
    pub common: CommonLoadArgs,

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
    /// The workload
    #[arg(value_parser = names(), default_value = "tpcc")]
    pub workload: String,

    #[command(flatten)]
    pub common: CommonRunArgs,

    #[command(flatten)]
    pub tpcc: TpccRunArgs,

    #[command(flatten)]
    pub orders: OrdersRunArgs,
}

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct CheckArgs {
    /// The workload
    #[arg(value_parser = names(), default_value = "tpcc")]
    pub workload: String,

    #[command(flatten)]
    pub db: DbArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::given;

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
