//! Order entry on embedded SQLite. `disk`: the database file in WAL mode with a sync per commit;
//! `memory`: an in-memory database (SQLite's memdb VFS, shared by every connection of the process)
//! filled with the load's rows (regenerated from its seed and scale) when a point starts, gone when
//! it ends.
//!
//! SQLite executes a statement on the calling thread, so thousands of connections are a few OS
//! threads of the driver ([`crate::driver`], its transactions [`OrderEntry`]), each taking turns
//! over its share of the connections: at most one transaction per thread is in flight. Writers exclude each other (`BEGIN IMMEDIATE`); a connection that finds the write
//! lock taken waits in SQLite's busy handler, and those waits are what `waits_per_s.busy` counts.

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use oltplab_core::{Error, Result};
use oltplab_dbs::sqlite::{self as sq, SqliteOptions};
use rusqlite::{params, Connection, OpenFlags};

use super::driver::{Event, PointConfig, PointOutcome, Second, Waits};
use super::workload::{self, OrderEntry};
use super::{generate, now_us, schema, Chunk, Dialect, Meta, Tables, TABLES};
use crate::driver;
use crate::sql::sqlite::SqliteConn;
use crate::sql::{Conn, Connector, Purpose};

/// Busy-handler calls of every connection in this process (SQLite's lock waits), and their sleep.
static BUSY_WAITS: AtomicU64 = AtomicU64::new(0);
static BUSY_SLEEP_US: AtomicU64 = AtomicU64::new(0);

/// Waits for the write lock with a growing sleep (20 µs … 2 ms); gives up after about 60 s, when
/// SQLite returns SQLITE_BUSY and the transaction is retried.
fn busy_handler(attempt: i32) -> bool {
    BUSY_WAITS.fetch_add(1, Ordering::Relaxed);
    let sleep_us = (20u64 << attempt.clamp(0, 7)).min(2000);
    BUSY_SLEEP_US.fetch_add(sleep_us, Ordering::Relaxed);
    std::thread::sleep(Duration::from_micros(sleep_us));
    attempt < 30_000
}

/// Where the run's connections go.
#[derive(Clone, Debug)]
pub struct SqliteTarget {
    /// The loaded database file.
    pub path: PathBuf,
    pub tables: Tables,
    /// Page cache shared out over the connections (disk tables).
    pub cache_bytes: u64,
    /// A registered VFS the connections open through (oltplab's, to trace and emulate).
    pub vfs: Option<String>,
    /// SQLite's `synchronous` for disk tables: `FULL` (a sync per commit) unless a power cut
    /// asks what `NORMAL` or `OFF` lose.
    pub synchronous: &'static str,
}

/// Tables of this workload present in the database.
pub fn existing_tables(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare("SELECT DISTINCT name FROM pragma_table_list WHERE schema <> 'temp' AND type = 'table' AND name LIKE 'oe\\_%' ESCAPE '\\'")
        .map_err(failed("cannot list the tables"))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(failed("cannot list the tables"))?
        .filter_map(|r| r.ok())
        .filter(|n| TABLES.contains(&n.as_str()))
        .collect();
    Ok(names)
}

fn failed(context: &'static str) -> impl Fn(rusqlite::Error) -> Error {
    move |e| Error::failed(format!("SQLite: {context}: {e}"))
}

/// Creates the schema and fills it; `force` drops this workload's tables first.
pub fn load(
    conn: &Connection,
    meta: &Meta,
    force: bool,
    location: &str,
    progress: &dyn Fn(u64),
    stop: &AtomicBool,
) -> Result<()> {
    let present = existing_tables(conn)?;
    if !present.is_empty() {
        if !force {
            return Err(Error::usage(format!(
                "{location} already holds the order-entry tables ({}): run on them with `oltplab run orders`, or add --force to replace them",
                present.join(", ")
            )));
        }
        for t in &present {
            conn.execute_batch(&format!("DROP TABLE {t}"))
                .map_err(failed("cannot drop an old table"))?;
        }
    }
    for ddl in schema(Dialect::Sqlite, meta.tables) {
        conn.execute_batch(&ddl)
            .map_err(failed("cannot create the schema"))?;
    }
    fill(conn, meta, progress, stop)?;
    let tx = conn
        .unchecked_transaction()
        .map_err(failed("cannot begin"))?;
    for (k, v) in meta.rows() {
        tx.execute(
            "INSERT INTO oe_meta (name, value) VALUES (?1, ?2)",
            params![k, v],
        )
        .map_err(failed("cannot record the load"))?;
    }
    tx.commit().map_err(failed("cannot commit"))
}

/// Inserts the initial data, one transaction per chunk.
fn fill(conn: &Connection, meta: &Meta, progress: &dyn Fn(u64), stop: &AtomicBool) -> Result<()> {
    let mut rows = 0;
    for chunk in generate(meta.scale, meta.seed, 5000) {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let tx = conn
            .unchecked_transaction()
            .map_err(failed("cannot begin"))?;
        match &chunk {
            Chunk::Customers(v) => {
                let mut s = tx
                    .prepare_cached("INSERT INTO oe_customers VALUES (?1, ?2, ?3)")
                    .map_err(failed("cannot prepare"))?;
                for (id, name, balance) in v {
                    s.execute(params![id, name, balance])
                        .map_err(failed("cannot insert"))?;
                }
            }
            Chunk::Products(v) => {
                let mut s = tx
                    .prepare_cached("INSERT INTO oe_products VALUES (?1, ?2, ?3)")
                    .map_err(failed("cannot prepare"))?;
                for (id, name, price) in v {
                    s.execute(params![id, name, price])
                        .map_err(failed("cannot insert"))?;
                }
            }
            Chunk::Orders(v) => {
                let mut so = tx
                    .prepare_cached("INSERT INTO oe_orders VALUES (?1, ?2, ?3, 0, ?4)")
                    .map_err(failed("cannot prepare"))?;
                let mut sl = tx
                    .prepare_cached("INSERT INTO oe_order_lines VALUES (?1, ?2, ?3, ?4, ?5)")
                    .map_err(failed("cannot prepare"))?;
                let entry = now_us();
                for (id, o) in v {
                    so.execute(params![id, o.c_id, entry, o.total_cents()])
                        .map_err(failed("cannot insert"))?;
                    for (n, l) in o.lines.iter().enumerate() {
                        sl.execute(params![id, n as i64 + 1, l.p_id, l.qty, l.amount_cents()])
                            .map_err(failed("cannot insert"))?;
                    }
                }
            }
        }
        tx.commit().map_err(failed("cannot commit"))?;
        rows += chunk.rows();
        progress(rows);
    }
    Ok(())
}

/// The load's record, if the database holds a complete load.
pub fn read_meta(conn: &Connection) -> Result<Option<Meta>> {
    if !existing_tables(conn)?.iter().any(|t| t == "oe_meta") {
        return Ok(None);
    }
    let mut stmt = conn
        .prepare("SELECT name, value FROM oe_meta")
        .map_err(failed("cannot read oe_meta"))?;
    let rows: BTreeMap<String, String> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(failed("cannot read oe_meta"))?
        .filter_map(|r| r.ok())
        .collect();
    Ok(Meta::from_rows(&rows))
}

/// Orders whose lines are not five or whose total is not the sum of its lines (0 = consistent).
pub fn inconsistent_orders(conn: &Connection) -> Result<u64> {
    conn.query_row(super::CHECK_SQL, [], |r| r.get::<_, i64>(0))
        .map(|n| n as u64)
        .map_err(failed("the consistency query failed"))
}

/// A process-private in-memory database filled with the loaded data, and kept alive by the
/// returned connection (memdb frees the database when its last connection closes).
fn memory_database(meta: &Meta, stop: &AtomicBool) -> Result<(Connection, String)> {
    static N: AtomicU64 = AtomicU64::new(0);
    let uri = format!(
        "file:/oltplab-orders-{}-{}?vfs=memdb",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let conn = open_memory(&uri)?;
    for ddl in schema(Dialect::Sqlite, Tables::Memory) {
        conn.execute_batch(&ddl)
            .map_err(failed("cannot create the schema"))?;
    }
    fill(&conn, meta, &|_| {}, stop)?;
    Ok((conn, uri))
}

fn open_memory(uri: &str) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags)
        .map_err(|e| Error::failed(format!("cannot open SQLite's in-memory database: {e}")))?;
    // A rollback journal in memory: transactions still roll back; nothing is synced.
    conn.execute_batch("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF;")
        .map_err(failed("cannot set up the in-memory database"))?;
    Ok(conn)
}

/// Threads driving the connections: more than the cores only adds waiting for the write lock.
pub fn driver_threads(connections: u32) -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    connections.clamp(1, 2 * cores)
}

/// The connections opened for a point, handed to the driver's terminals in order.
struct Opened(Mutex<VecDeque<Connection>>);

impl Connector for Opened {
    fn dialect(&self) -> crate::sql::Dialect {
        crate::sql::Dialect::Sqlite
    }

    fn connect(&self, _: Purpose) -> Result<Box<dyn Conn>> {
        let conn = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front()
            .ok_or_else(|| Error::failed("order entry: more terminals than opened connections"))?;
        // No in-process writer lock: writers meet at SQLite's, in the busy handler.
        Ok(Box::new(SqliteConn::new(conn, None)))
    }
}

/// Runs one point on the driver. For `memory`, the in-memory database is made and filled first
/// (not measured).
pub fn run_point(
    target: &SqliteTarget,
    meta: &Meta,
    cfg: &PointConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
    on_event: &mut dyn FnMut(Event),
) -> Result<PointOutcome> {
    let connect_started = Instant::now();
    let memory = match target.tables {
        Tables::Memory => Some(memory_database(meta, stop)?),
        Tables::Disk => None,
    };
    let open = || -> Result<Connection> {
        let conn = match &memory {
            Some((_, uri)) => open_memory(uri)?,
            None => sq::open(
                &target.path,
                &SqliteOptions {
                    cache_bytes: (target.cache_bytes / cfg.connections.max(1) as u64)
                        .max(256 << 10),
                    vfs: target.vfs.clone(),
                    synchronous: target.synchronous,
                    ..SqliteOptions::default()
                },
            )?,
        };
        conn.busy_handler(Some(busy_handler))
            .map_err(failed("cannot set the busy handler"))?;
        conn.set_prepared_statement_cache_capacity(16);
        Ok(conn)
    };
    let mut conns = VecDeque::with_capacity(cfg.connections as usize);
    for _ in 0..cfg.connections {
        conns.push_back(open()?);
    }
    let connect_s = connect_started.elapsed().as_secs_f64();

    let threads = driver_threads(cfg.connections);
    let w = OrderEntry::new(crate::sql::Dialect::Sqlite, cfg);
    let busy_now = || {
        (
            BUSY_WAITS.load(Ordering::Relaxed),
            BUSY_SLEEP_US.load(Ordering::Relaxed),
        )
    };
    let (mut busy_start, mut busy_end) = ((0, 0), None);
    // The driver hands on the last second after the window's end.
    let ended = Cell::new(false);
    let mut on_driver_event = |e: driver::Event| match e {
        driver::Event::MeasureStart => {
            busy_start = busy_now();
            on_event(Event::MeasureStart);
        }
        driver::Event::MeasureEnd => {
            ended.set(true);
            on_event(Event::MeasureEnd);
            busy_end = Some(busy_now());
        }
    };
    let mut seconds = Vec::new();
    let mut on_driver_second = |s: &driver::Second| {
        let s = workload::second(s, seconds.len() as u64 + 1, ended.get());
        on_second(&s);
        seconds.push(s);
    };
    let out = driver::drive(
        &w,
        &Opened(Mutex::new(conns)),
        &workload::driver_config(cfg, threads as usize),
        stop,
        &mut on_driver_second,
        &mut on_driver_event,
    )?;
    drop(memory);
    let busy_end = busy_end.unwrap_or_else(busy_now);
    let busy = busy_end.0 - busy_start.0;
    let busy_s = (busy_end.1 - busy_start.1) as f64 / 1e6;
    let mut outcome = workload::point_outcome(cfg, &w, out, seconds, connect_s);
    let per_s = busy as f64 / outcome.elapsed_s.max(1e-9);
    let sessions = busy_s / outcome.elapsed_s.max(1e-9);
    outcome.waits = Waits {
        per_s: [("busy".to_string(), per_s)].into(),
        sessions: [("busy".to_string(), sessions)].into(),
        top: vec![("busy (write lock taken)".to_string(), sessions)],
        unit: "waits_per_s",
        source: format!(
            "SQLite busy-handler calls: a connection found the write lock taken and slept 20 µs to 2 ms (its sleep goes into waiting_sessions; {threads} driver threads)"
        ),
        missing: None,
    };
    Ok(outcome)
}

/// Opens the loaded file for inspection (run start, check).
pub fn open_file(path: &Path) -> Result<Connection> {
    sq::open(path, &SqliteOptions::default())
}
