//! `oltplab load | run | check orders`: the order-entry workload of S5 (in-memory versus disk-based
//! tables, thousands of connections, a fixed number of transactions per connection). The command
//! line shares `--engine/--url/--data-dir` and the output options with TPC-C; the orders-only
//! options are here, flattened into `load` and `run`.

mod run;

use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use oltplab_core::units::format_count;
use oltplab_core::{Error, Result};
use oltplab_dbs::server::connect_check;
use oltplab_workloads::orders::server::{self, ServerTarget, MEMORY_TABLE_MAX_BYTES};
use oltplab_workloads::orders::sqlite::{self as osq, SqliteTarget};
use oltplab_workloads::orders::{self as wl, Dialect, Meta, Mode, Scale, Tables};
use serde::Serialize;

#[allow(unused_imports)]
pub use run::run_with;

use crate::progress::Progress;
use crate::workload::capture::Capture;
use crate::workload::scaffold::{CaptureConfig, OutputConfig};
use crate::workload::target::{self, DbSpec, Engine, Open};
use crate::workload::{given, CommonLoadArgs, CommonRunArgs, DbArgs};
use crate::STOP;
use oltplab_schema::RunResult;

/// The SQLite file of this workload in `--data-dir`.
pub const SQLITE_ORDERS_FILE: &str = "orders.sqlite";

/// `oltplab load orders` options.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Order entry (load orders)")]
pub struct OrdersLoadArgs {
    /// Customers [default: 10000; brokerage: 1000, in load units of 1000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub customers: Option<u32>,

    /// Products [default: 1000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub products: Option<u32>,

    /// Orders (each with five lines) after the load; update transactions pick among them
    /// [default: 10000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub initial_orders: Option<u32>,

    /// Table kind: disk (PostgreSQL logged, InnoDB, an SQLite file) or memory (PostgreSQL UNLOGGED,
    /// MariaDB MEMORY, an in-memory SQLite database; a crash loses them) [default: disk]
    #[arg(long, value_name = "KIND", value_parser = Tables::NAMES)]
    pub tables: Option<String>,
}

/// `oltplab run orders` options.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Order entry (run orders)")]
pub struct OrdersRunArgs {
    /// insert: one order and its five lines per transaction; update: a random existing order and
    /// its five lines [default: insert]
    #[arg(long, value_name = "MODE", value_parser = Mode::NAMES)]
    pub mode: Option<String>,

    /// Concurrent connections; a list (100,500,1000) runs each in turn [default: 100]
    #[arg(long, value_name = "N[,N…]")]
    pub connections: Option<String>,

    /// Transactions each connection runs (S5: 10000); the elapsed time of this fixed work is the
    /// result [default: 1000]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub tx_per_connection: Option<u64>,

    /// Transactions each connection count runs in all, shared out over its connections (N /
    /// connections each, rounded up): every point of a sweep then does about the same work
    #[arg(long, value_name = "N", conflicts_with = "tx_per_connection", value_parser = clap::value_parser!(u64).range(1..))]
    pub tx_per_point: Option<u64>,

    /// Transactions each connection runs before the measured work, excluded from every figure
    /// [default: 10]
    #[arg(long, value_name = "N")]
    pub warmup_tx: Option<u64>,

    /// Expect this table kind (refused if the database was loaded with the other) [default: as
    /// loaded]
    #[arg(long, value_name = "KIND", value_parser = Tables::NAMES)]
    pub tables: Option<String>,
}

impl OrdersLoadArgs {
    /// Its options that were given: refused when another workload is loaded (unless it
    /// borrows them).
    pub fn given(&self) -> Vec<&'static str> {
        given(&[
            ("--customers", self.customers.is_some()),
            ("--products", self.products.is_some()),
            ("--initial-orders", self.initial_orders.is_some()),
            ("--tables", self.tables.is_some()),
        ])
    }
}

impl OrdersRunArgs {
    /// Its options that were given: refused when another workload runs.
    pub fn given(&self) -> Vec<&'static str> {
        given(&[
            ("--mode", self.mode.is_some()),
            ("--connections", self.connections.is_some()),
            ("--tx-per-connection", self.tx_per_connection.is_some()),
            ("--tx-per-point", self.tx_per_point.is_some()),
            ("--warmup-tx", self.warmup_tx.is_some()),
            ("--tables", self.tables.is_some()),
        ])
    }
}

/// `oltplab load orders`.
pub(crate) fn load_command(args: CommonLoadArgs, orders: &OrdersLoadArgs) -> Result<()> {
    let cfg = OrdersLoadConfig::from_args(args, orders)?;
    load_with(&cfg, &STOP).map(|_| ())
}

/// `oltplab run orders`.
pub(crate) fn run_command(args: CommonRunArgs, orders: &OrdersRunArgs) -> Result<RunResult> {
    let cfg = OrdersRunConfig::from_args(args, orders)?;
    Ok(RunResult::Orders(Box::new(run_with(&cfg, &STOP)?.doc)))
}

/// `--connections 100,500,1000`.
fn parse_connections(text: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        match part.parse::<u32>() {
            Ok(n) if (1..=10_000).contains(&n) => out.push(n),
            _ => {
                return Err(Error::usage(format!(
                    "--connections takes counts from 1 to 10000 separated by commas (e.g. 100,500,1000), not '{text}'"
                )))
            }
        }
    }
    Ok(out)
}

/// The database of this workload: DATA_DIR/orders.sqlite rather than TPC-C's file, and a managed
/// MariaDB with performance_schema (wait counts) and room for MEMORY tables.
pub(crate) fn orders_spec(mut spec: DbSpec) -> DbSpec {
    spec = spec.for_workload("orders", SQLITE_ORDERS_FILE);
    if spec.engine == Engine::Mariadb {
        // The user's --server-setting come after, so that theirs win.
        let user = std::mem::take(&mut spec.server_settings);
        spec.server_settings = vec![
            ("performance_schema".into(), "ON".into()),
            (
                "performance_schema_instrument".into(),
                "wait/synch/%=ON".into(),
            ),
            (
                "max_heap_table_size".into(),
                MEMORY_TABLE_MAX_BYTES.to_string(),
            ),
        ];
        spec.server_settings.extend(user);
    }
    spec
}

/// The database, opened: where the workload's connections go.
pub(crate) enum OrdersTarget {
    Sqlite(SqliteTarget),
    Server(ServerTarget),
}

impl OrdersTarget {
    fn of(spec: &DbSpec, db: &target::Db, tables: Tables) -> OrdersTarget {
        match (spec.engine, &db.url) {
            (Engine::Sqlite, _) | (_, None) => OrdersTarget::Sqlite(SqliteTarget {
                path: spec.sqlite_path.clone().expect("sqlite has a path"),
                tables,
                cache_bytes: spec.buffer_pool_bytes,
                vfs: None,
                synchronous: "FULL",
            }),
            (engine, Some(url)) => OrdersTarget::Server(ServerTarget {
                dialect: if engine == Engine::Postgres {
                    Dialect::Postgres
                } else {
                    Dialect::Mysql
                },
                url: url.clone(),
            }),
        }
    }

    fn read_meta(&self) -> Result<Option<Meta>> {
        match self {
            OrdersTarget::Sqlite(t) => osq::read_meta(&osq::open_file(&t.path)?),
            OrdersTarget::Server(t) => server::read_meta(t),
        }
    }

    fn inconsistent_orders(&self) -> Result<u64> {
        match self {
            OrdersTarget::Sqlite(t) => osq::inconsistent_orders(&osq::open_file(&t.path)?),
            OrdersTarget::Server(t) => server::inconsistent_orders(t),
        }
    }
}

/// Refuses, with the command that makes one, a database that is not there yet.
fn require_existing(spec: &DbSpec) -> Result<()> {
    let missing = match spec.engine {
        Engine::Sqlite => !spec.sqlite_path.as_ref().is_some_and(|p| p.exists()),
        _ => spec.managed && !spec.data_dir.join(spec.engine.name()).exists(),
    };
    if missing {
        return Err(Error::usage(format!(
            "{} holds no order-entry database: create one with `oltplab load orders --engine {} --data-dir {}` first",
            spec.location(),
            spec.engine.name(),
            spec.data_dir.display()
        )));
    }
    Ok(())
}

/// Opens the database of `spec` for `connections` connections (plus the wait probe's).
fn open_db(spec: &DbSpec, how: Open, connections: u32) -> Result<target::Db> {
    open_captured(spec, how, connections, None)
}

/// [`open_db`] under a capture: a managed server started with the shim.
fn open_captured(
    spec: &DbSpec,
    how: Open,
    connections: u32,
    capture: Option<&Capture>,
) -> Result<target::Db> {
    let env = capture.map(Capture::server_env).unwrap_or_default();
    target::open(spec, how, connections as usize + 2, None, env)
}

/// Every connection is a socket (or, for SQLite, file descriptors): raises the soft open-files
/// limit to the hard one, and refuses a count that still does not fit.
fn ensure_open_files(connections: u32, engine: Engine) -> Result<()> {
    // SQLite: the database, its WAL and shared memory per connection; servers: one socket.
    let per_connection: u64 = if engine == Engine::Sqlite { 3 } else { 1 };
    let needed = connections as u64 * per_connection + 64;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return Ok(());
        }
        if lim.rlim_cur < needed && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
    if lim.rlim_max < needed {
        return Err(Error::usage(format!(
            "--connections {connections} needs about {needed} open files, but this process may open {}: lower --connections, or raise the limit (ulimit -Hn, /etc/security/limits.conf)",
            lim.rlim_max
        )));
    }
    Ok(())
}

/// An external server must allow the run's connections: refused before anything starts.
fn check_external_limit(spec: &DbSpec, connections: u32) -> Result<()> {
    let Some(url) = &spec.url else {
        return Ok(());
    };
    let info = connect_check(url)?;
    let needed = connections + 1;
    let available = info.connections_available();
    if needed > available {
        return Err(Error::usage(format!(
            "the {} server allows {available} more connections (max_connections {}), but --connections {connections} needs {needed} (one samples the waits): lower --connections, or raise the server's max_connections",
            info.kind.product(),
            info.max_connections
        )));
    }
    Ok(())
}

/// A validated `load orders`.
#[derive(Clone, Debug, Serialize)]
pub struct OrdersLoadConfig {
    pub db: DbSpec,
    pub tables: Tables,
    pub scale: Scale,
    pub seed: u64,
    pub force: bool,
    #[serde(skip)]
    pub quiet: bool,
}

impl OrdersLoadConfig {
    fn from_args(args: CommonLoadArgs, o: &OrdersLoadArgs) -> Result<OrdersLoadConfig> {
        let scale = Scale {
            customers: o.customers.unwrap_or(10_000),
            products: o.products.unwrap_or(1_000),
            orders: o.initial_orders.unwrap_or(10_000),
        };
        wl::validate_scale(&scale)?;
        Ok(OrdersLoadConfig {
            db: orders_spec(args.db.spec()?),
            tables: o
                .tables
                .as_deref()
                .and_then(Tables::parse)
                .unwrap_or(Tables::Disk),
            scale,
            seed: args.seed,
            force: args.force,
            quiet: crate::output::quiet(),
        })
    }
}

/// What a load did.
#[derive(Clone, Debug, Serialize)]
pub struct OrdersLoadOutcome {
    pub rows: u64,
    pub elapsed_s: f64,
    pub engine_version: String,
}

/// Creates the order-entry tables and fills them. A managed server that a TPC-C load made in the
/// same data directory is reused (both workloads' tables live side by side).
pub fn load_with(cfg: &OrdersLoadConfig, stop: &AtomicBool) -> Result<OrdersLoadOutcome> {
    let reuse = cfg.db.managed && cfg.db.data_dir.join(cfg.db.engine.name()).exists();
    let how = if reuse {
        Open::Existing
    } else {
        Open::Load { force: cfg.force }
    };
    let db = open_db(&cfg.db, how, 1)?;
    let meta = Meta {
        tables: cfg.tables,
        scale: cfg.scale,
        seed: cfg.seed,
        loaded_at: oltplab_metrics::schema::now_rfc3339(),
    };
    let total = wl::total_rows(&cfg.scale);
    if !cfg.quiet {
        eprintln!(
            "oltplab load orders — {} customers, {} products, {} orders × 5 lines, {} tables, into {} ({})",
            format_count(cfg.scale.customers as f64),
            format_count(cfg.scale.products as f64),
            format_count(cfg.scale.orders as f64),
            cfg.tables.name(),
            cfg.db.location(),
            db.version
        );
    }
    let bar = (!cfg.quiet).then(|| Progress::new(total, "loading [{bar:30}] {msg}"));
    let progress = |done: u64| {
        if let Some(bar) = &bar {
            bar.set(
                done,
                format!(
                    "{} of {} rows",
                    format_count(done as f64),
                    format_count(total as f64)
                ),
            );
        }
    };
    let started = std::time::Instant::now();
    let location = cfg.db.location();
    let result = match OrdersTarget::of(&cfg.db, &db, cfg.tables) {
        OrdersTarget::Sqlite(t) => (|| {
            let conn = oltplab_dbs::sqlite::open(
                &t.path,
                &oltplab_dbs::sqlite::SqliteOptions {
                    journal_mode: "OFF",
                    synchronous: "OFF",
                    create: true,
                    cache_bytes: cfg.db.buffer_pool_bytes.max(64 << 20),
                    ..Default::default()
                },
            )?;
            osq::load(&conn, &meta, cfg.force, &location, &progress, stop)?;
            conn.execute_batch("PRAGMA journal_mode = WAL")
                .map_err(|e| Error::failed(format!("cannot switch the database to WAL: {e}")))
        })(),
        OrdersTarget::Server(t) => server::load(&t, &meta, cfg.force, &location, &progress, stop),
    };
    if let Some(bar) = &bar {
        bar.finish();
    }
    if let Err(e) = result {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        return Err(e);
    }
    let elapsed_s = started.elapsed().as_secs_f64();
    if !cfg.quiet {
        eprintln!(
            "loaded {} rows in {elapsed_s:.1} s ({} rows/s)",
            format_count(total as f64),
            format_count(total as f64 / elapsed_s.max(1e-9))
        );
        if cfg.tables == Tables::Memory {
            eprintln!("note: {}", durability_caveat(cfg.db.engine));
        }
    }
    let version = db.version.clone();
    db.close()?;
    Ok(OrdersLoadOutcome {
        rows: total,
        elapsed_s,
        engine_version: version,
    })
}

/// What memory tables give up, per engine.
pub fn durability_caveat(engine: Engine) -> &'static str {
    match engine {
        Engine::Postgres => "UNLOGGED tables are not written to the WAL: a crash (or an immediate shutdown) empties them, and they are not replicated",
        Engine::Mariadb | Engine::Galera => "MEMORY tables live only in the server's memory and use table locks without transactions: every restart empties them (oltplab refills them from the load's recipe before a run), and a crash loses what was committed",
        Engine::Sqlite => "the in-memory database lives only in the oltplab process: it is filled with the loaded rows (regenerated from the load's seed and scale) when each point starts and gone when it ends",
    }
}

/// A validated `run orders`.
#[derive(Clone, Debug, Serialize)]
pub struct OrdersRunConfig {
    pub workload: &'static str,
    pub db: DbSpec,
    pub mode: Mode,
    /// Expected table kind; None: as loaded.
    pub tables: Option<Tables>,
    pub connections: Vec<u32>,
    pub tx_per_connection: u64,
    /// Transactions of each connection count in all (`--tx-per-point`), instead of
    /// `tx_per_connection`.
    pub tx_per_point: Option<u64>,
    pub warmup_tx_per_connection: u64,
    pub max_retries: u32,
    pub seed: u64,
    pub report_interval_s: f64,
    /// `--emulate`, `--trace`, `--backing`.
    #[serde(flatten)]
    pub capture: CaptureConfig,
    /// `--json`, `--out`, `--force`; whether it saves and prints.
    #[serde(flatten)]
    pub output: OutputConfig,
}

impl OrdersRunConfig {
    /// Transactions each of `connections` connections runs.
    pub fn tx_per_connection_at(&self, connections: u32) -> u64 {
        match self.tx_per_point {
            Some(n) => n.div_ceil(u64::from(connections.max(1))),
            None => self.tx_per_connection,
        }
    }

    fn from_args(args: CommonRunArgs, o: &OrdersRunArgs) -> Result<OrdersRunConfig> {
        if args.report_interval < std::time::Duration::from_secs(1) {
            return Err(Error::usage("--report-interval must be at least 1 s"));
        }
        if let Some(json) = &args.json {
            crate::output::check_json_path(json, args.force)?;
        }
        let connections = parse_connections(o.connections.as_deref().unwrap_or("100"))?;
        if (args.emulate.is_some() || args.trace.is_some()) && connections.len() > 1 {
            return Err(Error::usage(
                "--emulate and --trace measure one connection count: give --connections one number, and run the others in turn",
            ));
        }
        Ok(OrdersRunConfig {
            workload: "orders",
            db: orders_spec(args.db.spec()?),
            mode: o
                .mode
                .as_deref()
                .and_then(Mode::parse)
                .unwrap_or(Mode::Insert),
            tables: o.tables.as_deref().and_then(Tables::parse),
            connections,
            tx_per_connection: o.tx_per_connection.unwrap_or(1000),
            tx_per_point: o.tx_per_point,
            warmup_tx_per_connection: o.warmup_tx.unwrap_or(10),
            max_retries: args.max_retries,
            seed: args.seed,
            report_interval_s: args.report_interval.as_secs_f64().round(),
            capture: args.capture_config(),
            output: args.output_config(),
        })
    }
}

/// `oltplab check orders`: every order has five lines and its total is their sum.
pub(crate) fn check_command(db: DbArgs) -> Result<()> {
    let spec = orders_spec(db.spec()?);
    require_existing(&spec)?;
    let db = open_db(&spec, Open::Existing, 1)?;
    let target = OrdersTarget::of(&spec, &db, Tables::Disk);
    let result = (|| {
        let meta = target.read_meta()?.ok_or_else(|| not_loaded(&spec))?;
        if meta.tables == Tables::Memory && matches!(target, OrdersTarget::Sqlite(_)) {
            crate::output::note!(
                "note: the in-memory database of a run is gone; checking the loaded file"
            );
        }
        target.inconsistent_orders()
    })();
    db.close()?;
    let bad = result?;
    if bad > 0 {
        return Err(Error::failed(format!(
            "{bad} orders do not have exactly five lines or do not total their lines"
        )));
    }
    crate::output::note!("every order has five lines and totals them: consistent");
    Ok(())
}

fn not_loaded(spec: &DbSpec) -> Error {
    Error::usage(format!(
        "{} holds no complete order-entry load: load it with `oltplab load orders --engine {}`",
        spec.location(),
        spec.engine.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_lists() {
        assert_eq!(parse_connections("100").unwrap(), vec![100]);
        assert_eq!(
            parse_connections("100, 500,1000").unwrap(),
            vec![100, 500, 1000]
        );
        for bad in ["", "0", "10001", "a,b", "100,"] {
            assert_eq!(parse_connections(bad).unwrap_err().exit_code(), 2, "{bad}");
        }
    }
}
