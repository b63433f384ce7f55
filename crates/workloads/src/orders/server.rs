//! Order entry on PostgreSQL and MariaDB/MySQL servers. Thousands of connections on a small
//! machine: every connection is a task on one tokio runtime (as many worker threads as cores),
//! speaking the wire protocol asynchronously (tokio-postgres, mysql_async) — not one OS thread each.
//!
//! Waits, the analogue of S5's latch waits per second:
//! - PostgreSQL has no cumulative wait counters (15 and earlier), so a separate connection samples
//!   `pg_stat_activity` ten times a second; a kind's figure is the average number of client sessions
//!   seen waiting on it (`unit: waiting_sessions`).
//! - MariaDB's performance_schema counts and times every instrumented wait
//!   (`events_waits_summary_global_by_event_name`), plus `Innodb_row_lock_waits` and
//!   `Table_locks_waited`; the difference over the measured work divided by its length gives real
//!   waits per second, and the summed wait time divided by it the average number of waiting threads
//!   (`sessions`), the figure comparable with PostgreSQL's samples.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};
use mysql_async::prelude::Queryable;
use oltplab_core::{Error, Result};
use oltplab_dbs::server::connect::pg_error;
use oltplab_dbs::server::redact_url;
use rand::Rng;
use tokio::task::JoinSet;

use super::driver::{Event, PointConfig, PointOutcome, Recorder, Second, Ticker, Waits};
use super::{
    connection_rng, generate, now_us, schema, Chunk, Dialect, Meta, Mode, NewOrder, TxError,
    LINES_PER_ORDER, TABLES,
};

/// Connections opened at the same time while setting up a point.
const CONNECT_PARALLELISM: usize = 16;

/// PostgreSQL samples of `pg_stat_activity` per second.
const PG_SAMPLES_PER_S: u64 = 10;

/// A server to run on.
#[derive(Clone, Debug)]
pub struct ServerTarget {
    pub dialect: Dialect,
    /// With password: never printed (see [`redact_url`]).
    pub url: String,
}

/// The runtime every server operation runs on: one worker thread per core.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .enable_all()
        .build()
        .map_err(|e| Error::failed(format!("cannot start the async runtime: {e}")))
}

/// One connection, either engine.
enum Client {
    Pg(tokio_postgres::Client),
    My(mysql_async::Conn),
}

fn my_error(url: &str, e: &mysql_async::Error) -> Error {
    let shown = redact_url(url);
    match e {
        mysql_async::Error::Server(s) => match s.code {
            1040 | 1203 => Error::usage(format!(
                "the MySQL server at {shown} has no free connections ({}): lower --connections, or raise its max_connections",
                s.message
            )),
            1045 | 1698 => Error::usage(format!(
                "the MySQL server at {shown} refused the credentials ({}): check the user name and password in --url",
                s.message
            )),
            1049 => Error::usage(format!(
                "the MySQL server at {shown} has no such database ({}): create it or name an existing one in --url",
                s.message
            )),
            _ => Error::failed(format!("MySQL at {shown}: {} (error {})", s.message, s.code)),
        },
        mysql_async::Error::Url(u) => Error::usage(format!(
            "'{shown}' is not a valid MySQL URL ({u}): write mysql://USER@HOST:PORT/DB"
        )),
        mysql_async::Error::Io(_) | mysql_async::Error::Driver(_) => Error::usage(format!(
            "cannot reach the MySQL server at {shown} ({e}): check that it runs and that host and port in --url are right"
        )),
        other => Error::failed(format!("MySQL at {shown}: {other}")),
    }
}

impl Client {
    async fn connect(target: &ServerTarget) -> Result<Client> {
        let url = &target.url;
        match target.dialect {
            Dialect::Postgres => {
                let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
                    Error::usage(format!(
                        "'{}' is not a valid PostgreSQL URL ({e}): write postgres://USER@HOST:PORT/DB",
                        redact_url(url)
                    ))
                })?;
                if config.get_connect_timeout().is_none() {
                    config.connect_timeout(Duration::from_secs(30));
                }
                let (client, connection) = config
                    .connect(tokio_postgres::NoTls)
                    .await
                    .map_err(|e| pg_error(url, &e))?;
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                Ok(Client::Pg(client))
            }
            _ => {
                let opts = mysql_async::Opts::from_url(url).map_err(|e| {
                    Error::usage(format!(
                        "'{}' is not a valid MySQL URL ({e}): write mysql://USER@HOST:PORT/DB",
                        redact_url(url)
                    ))
                })?;
                let opts = mysql_async::OptsBuilder::from_opts(opts)
                    .stmt_cache_size(Some(32))
                    .prefer_socket(true);
                let conn = mysql_async::Conn::new(opts)
                    .await
                    .map_err(|e| my_error(url, &e))?;
                Ok(Client::My(conn))
            }
        }
    }

    async fn batch(&mut self, sql: &str) -> std::result::Result<(), String> {
        match self {
            Client::Pg(c) => c.batch_execute(sql).await.map_err(|e| pg_text(&e)),
            Client::My(c) => c.query_drop(sql).await.map_err(|e| e.to_string()),
        }
    }

    /// Rows of a query whose columns are all text (cast them in SQL).
    async fn text_rows(&mut self, sql: &str) -> std::result::Result<Vec<Vec<String>>, String> {
        match self {
            Client::Pg(c) => {
                let rows = c.simple_query(sql).await.map_err(|e| pg_text(&e))?;
                Ok(rows
                    .into_iter()
                    .filter_map(|m| match m {
                        tokio_postgres::SimpleQueryMessage::Row(r) => Some(
                            (0..r.len())
                                .map(|i| r.get(i).unwrap_or("").to_string())
                                .collect(),
                        ),
                        _ => None,
                    })
                    .collect())
            }
            Client::My(c) => {
                let rows: Vec<mysql_async::Row> = c.query(sql).await.map_err(|e| e.to_string())?;
                Ok(rows
                    .into_iter()
                    .map(|r| {
                        r.unwrap()
                            .into_iter()
                            .map(|v| match v {
                                mysql_async::Value::Bytes(b) => {
                                    String::from_utf8_lossy(&b).into_owned()
                                }
                                mysql_async::Value::NULL => String::new(),
                                other => other.as_sql(true).trim_matches('\'').to_string(),
                            })
                            .collect()
                    })
                    .collect())
            }
        }
    }

    async fn count(&mut self, sql: &str) -> std::result::Result<u64, String> {
        let rows = self.text_rows(sql).await?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }
}

/// The innermost message of a PostgreSQL error (the server's text, not "db error").
fn pg_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    }
}

fn db_failed(target: &ServerTarget, context: &str, detail: String) -> Error {
    Error::failed(format!(
        "{context} on {}: {detail}",
        redact_url(&target.url)
    ))
}

async fn existing_tables(client: &mut Client) -> std::result::Result<Vec<String>, String> {
    let schema = match client {
        Client::Pg(_) => "current_schema()",
        Client::My(_) => "DATABASE()",
    };
    let rows = client
        .text_rows(&format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = {schema} AND table_name LIKE 'oe\\_%'"
        ))
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| r.into_iter().next())
        .filter(|n| TABLES.contains(&n.as_str()))
        .collect())
}

/// MEMORY tables may grow to this size (the server's default is 16 MiB).
pub const MEMORY_TABLE_MAX_BYTES: u64 = 8 << 30;

/// Creates the schema and fills it; `force` drops this workload's tables first.
pub fn load(
    target: &ServerTarget,
    meta: &Meta,
    force: bool,
    location: &str,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<()> {
    runtime()?.block_on(async {
        let mut client = Client::connect(target).await?;
        let fail = |context: &str| {
            let context = context.to_string();
            move |e: String| db_failed(target, &context, e)
        };
        let present = existing_tables(&mut client)
            .await
            .map_err(fail("cannot list the tables"))?;
        if !present.is_empty() {
            if !force {
                return Err(Error::usage(format!(
                    "{location} already holds the order-entry tables ({}): run on them with `oltplab run orders`, or add --force to replace them",
                    present.join(", ")
                )));
            }
            client
                .batch(&format!("DROP TABLE IF EXISTS {}", present.join(", ")))
                .await
                .map_err(fail("cannot drop the old tables"))?;
        }
        if target.dialect == Dialect::Mysql {
            client
                .batch(&format!(
                    "SET SESSION max_heap_table_size = {MEMORY_TABLE_MAX_BYTES}"
                ))
                .await
                .map_err(fail("cannot size MEMORY tables"))?;
        }
        for ddl in schema(target.dialect, meta.tables) {
            client.batch(&ddl).await.map_err(fail("cannot create the schema"))?;
        }
        fill(target, &mut client, meta, progress, stop).await?;
        let values: Vec<String> = meta
            .rows()
            .into_iter()
            .map(|(k, v)| format!("('{k}', '{v}')"))
            .collect();
        client
            .batch(&format!(
                "INSERT INTO oe_meta (name, value) VALUES {}",
                values.join(", ")
            ))
            .await
            .map_err(fail("cannot record the load"))?;
        let analyze = match target.dialect {
            Dialect::Postgres => "ANALYZE oe_customers, oe_products, oe_orders, oe_order_lines",
            _ => "ANALYZE TABLE oe_customers, oe_products, oe_orders, oe_order_lines",
        };
        client.batch(analyze).await.map_err(fail("cannot analyze"))?;
        Ok(())
    })
}

/// Inserts the initial data (multi-row INSERTs, one transaction per chunk) and moves the order id
/// sequence past it.
async fn fill(
    target: &ServerTarget,
    client: &mut Client,
    meta: &Meta,
    progress: &(dyn Fn(u64) + Sync),
    stop: &AtomicBool,
) -> Result<()> {
    let fail = |e: String| db_failed(target, "cannot load the data", e);
    let mut rows = 0;
    for chunk in generate(meta.scale, meta.seed, 1000) {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let mut sql = String::from("BEGIN;");
        match &chunk {
            Chunk::Customers(v) | Chunk::Products(v) => {
                let table = if matches!(chunk, Chunk::Customers(_)) {
                    "oe_customers"
                } else {
                    "oe_products"
                };
                let values: Vec<String> = v
                    .iter()
                    .map(|(id, name, n)| format!("({id}, '{name}', {n})"))
                    .collect();
                sql.push_str(&format!(
                    "INSERT INTO {table} VALUES {};",
                    values.join(", ")
                ));
            }
            Chunk::Orders(v) => {
                let entry = now_us();
                let orders: Vec<String> = v
                    .iter()
                    .map(|(id, o)| format!("({id}, {}, {entry}, 0, {})", o.c_id, o.total_cents()))
                    .collect();
                let lines: Vec<String> = v
                    .iter()
                    .flat_map(|(id, o)| {
                        o.lines.iter().enumerate().map(move |(n, l)| {
                            format!(
                                "({id}, {}, {}, {}, {})",
                                n + 1,
                                l.p_id,
                                l.qty,
                                l.amount_cents()
                            )
                        })
                    })
                    .collect();
                sql.push_str(&format!(
                    "INSERT INTO oe_orders (o_id, o_c_id, o_entry_us, o_status, o_total_cents) VALUES {};\
                     INSERT INTO oe_order_lines VALUES {};",
                    orders.join(", "),
                    lines.join(", ")
                ));
            }
        }
        sql.push_str("COMMIT");
        match client {
            Client::Pg(_) => client.batch(&sql).await.map_err(fail)?,
            // mysql_async runs one statement per call unless multi-statements are on.
            Client::My(_) => {
                for statement in sql.split(';') {
                    client.batch(statement).await.map_err(fail)?;
                }
            }
        }
        rows += chunk.rows();
        progress(rows);
    }
    if target.dialect == Dialect::Postgres {
        client
            .batch("SELECT setval(pg_get_serial_sequence('oe_orders', 'o_id'), (SELECT max(o_id) FROM oe_orders))")
            .await
            .map_err(fail)?;
    }
    Ok(())
}

/// The load's record, if the database holds a complete load.
pub fn read_meta(target: &ServerTarget) -> Result<Option<Meta>> {
    runtime()?.block_on(async {
        let mut client = Client::connect(target).await?;
        let fail = |e: String| db_failed(target, "cannot read oe_meta", e);
        if !existing_tables(&mut client)
            .await
            .map_err(fail)?
            .iter()
            .any(|t| t == "oe_meta")
        {
            return Ok(None);
        }
        let rows: BTreeMap<String, String> = client
            .text_rows("SELECT name, value FROM oe_meta")
            .await
            .map_err(fail)?
            .into_iter()
            .filter_map(|r| Some((r.first()?.clone(), r.get(1)?.clone())))
            .collect();
        Ok(Meta::from_rows(&rows))
    })
}

/// Refills memory tables that lost their rows (a MariaDB restart empties MEMORY tables; a crash
/// truncates PostgreSQL's UNLOGGED tables). Returns the rows put back (0: nothing was lost).
pub fn refill_if_empty(target: &ServerTarget, meta: &Meta, stop: &AtomicBool) -> Result<u64> {
    runtime()?.block_on(async {
        let mut client = Client::connect(target).await?;
        let fail = |e: String| db_failed(target, "cannot refill the memory tables", e);
        if client
            .count("SELECT COUNT(*) FROM oe_customers")
            .await
            .map_err(fail)?
            > 0
        {
            return Ok(0);
        }
        if target.dialect == Dialect::Mysql {
            client
                .batch(&format!(
                    "SET SESSION max_heap_table_size = {MEMORY_TABLE_MAX_BYTES}"
                ))
                .await
                .map_err(fail)?;
        }
        for t in ["oe_order_lines", "oe_orders", "oe_products", "oe_customers"] {
            client
                .batch(&format!("DELETE FROM {t}"))
                .await
                .map_err(fail)?;
        }
        fill(target, &mut client, meta, &|_| {}, stop).await?;
        Ok(super::total_rows(&meta.scale))
    })
}

/// Orders whose lines are not five or whose total is not the sum of its lines (0 = consistent).
pub fn inconsistent_orders(target: &ServerTarget) -> Result<u64> {
    runtime()?.block_on(async {
        let mut client = Client::connect(target).await?;
        client
            .count(super::CHECK_SQL)
            .await
            .map_err(|e| db_failed(target, "the consistency query failed", e))
    })
}

/// A connection of the run with its prepared statements and random choices.
struct Session {
    client: Client,
    statements: Statements,
    rng: rand::rngs::SmallRng,
}

enum Statements {
    Pg {
        insert_order: tokio_postgres::Statement,
        insert_lines: tokio_postgres::Statement,
        update_lines: tokio_postgres::Statement,
        update_order: tokio_postgres::Statement,
    },
    My {
        insert_order: mysql_async::Statement,
        insert_lines: mysql_async::Statement,
        update_lines: mysql_async::Statement,
        update_order: mysql_async::Statement,
    },
}

fn insert_lines_sql(dialect: Dialect) -> String {
    let rows: Vec<String> = (0..LINES_PER_ORDER)
        .map(|n| match dialect {
            Dialect::Mysql => format!("(?, {}, ?, ?, ?)", n + 1),
            _ => format!(
                "($1, {}, ${}, ${}, ${})",
                n + 1,
                3 * n + 2,
                3 * n + 3,
                3 * n + 4
            ),
        })
        .collect();
    format!(
        "INSERT INTO oe_order_lines (ol_o_id, ol_number, ol_p_id, ol_qty, ol_amount_cents) VALUES {}",
        rows.join(", ")
    )
}

const INSERT_ORDER_PG: &str = "INSERT INTO oe_orders (o_c_id, o_entry_us, o_status, o_total_cents) VALUES ($1, $2, 0, $3) RETURNING o_id";
const INSERT_ORDER_MY: &str =
    "INSERT INTO oe_orders (o_c_id, o_entry_us, o_status, o_total_cents) VALUES (?, ?, 0, ?)";

fn pg_tx_error(e: tokio_postgres::Error) -> TxError {
    use tokio_postgres::error::SqlState;
    let retry_kind = match e.code() {
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE => Some("serialization"),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED => Some("deadlock"),
        Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE => Some("lock_timeout"),
        _ => None,
    };
    TxError {
        retry_kind,
        message: format!("PostgreSQL: {}", pg_text(&e)),
    }
}

fn my_tx_error(e: mysql_async::Error) -> TxError {
    let retry_kind = match &e {
        mysql_async::Error::Server(s) if s.code == 1213 => Some("deadlock"),
        mysql_async::Error::Server(s) if s.code == 1205 => Some("lock_timeout"),
        _ => None,
    };
    TxError {
        retry_kind,
        message: format!("MySQL: {e}"),
    }
}

impl Session {
    async fn open(target: &ServerTarget, index: u32, seed: u64) -> Result<Session> {
        let mut client = Client::connect(target).await?;
        let fail = |e: String| db_failed(target, "cannot prepare the statements", e);
        let statements = match &mut client {
            Client::Pg(c) => {
                let mut prepared = Vec::new();
                for sql in [
                    INSERT_ORDER_PG.to_string(),
                    insert_lines_sql(Dialect::Postgres),
                    super::update_lines_sql(Dialect::Postgres).to_string(),
                    super::update_order_sql(Dialect::Postgres).to_string(),
                ] {
                    prepared.push(c.prepare(&sql).await.map_err(|e| fail(pg_text(&e)))?);
                }
                let mut s = prepared.into_iter();
                let mut next = || s.next().expect("four statements");
                Statements::Pg {
                    insert_order: next(),
                    insert_lines: next(),
                    update_lines: next(),
                    update_order: next(),
                }
            }
            Client::My(c) => {
                c.query_drop("SET autocommit = 0")
                    .await
                    .map_err(|e| fail(e.to_string()))?;
                let mut statements = Vec::new();
                for sql in [
                    INSERT_ORDER_MY.to_string(),
                    insert_lines_sql(Dialect::Mysql),
                    super::update_lines_sql(Dialect::Mysql).to_string(),
                    super::update_order_sql(Dialect::Mysql).to_string(),
                ] {
                    statements.push(c.prep(sql).await.map_err(|e| fail(e.to_string()))?);
                }
                let mut s = statements.into_iter();
                let mut next = || s.next().expect("four statements");
                Statements::My {
                    insert_order: next(),
                    insert_lines: next(),
                    update_lines: next(),
                    update_order: next(),
                }
            }
        };
        Ok(Session {
            client,
            statements,
            rng: connection_rng(seed, index),
        })
    }

    /// True if the connection is gone: its remaining transactions are abandoned.
    fn broken(&self, e: &TxError) -> bool {
        match &self.client {
            Client::Pg(c) => c.is_closed(),
            Client::My(_) => {
                e.message.starts_with("MySQL: Input/output")
                    || e.message.starts_with("MySQL: Driver")
            }
        }
    }

    async fn transaction(&mut self, cfg: &PointConfig) -> std::result::Result<(), TxError> {
        let order = match cfg.mode {
            Mode::Insert => Some(NewOrder::random(&mut self.rng, &cfg.scale)),
            Mode::Update => None,
        };
        let o_id = self.rng.random_range(1..=cfg.scale.orders as i64);
        match (&mut self.client, &self.statements) {
            (
                Client::Pg(c),
                Statements::Pg {
                    insert_order,
                    insert_lines,
                    update_lines,
                    update_order,
                },
            ) => {
                let tx = c.transaction().await.map_err(pg_tx_error)?;
                match order {
                    Some(o) => {
                        let row = tx
                            .query_one(
                                insert_order,
                                &[&(o.c_id as i32), &now_us(), &o.total_cents()],
                            )
                            .await
                            .map_err(pg_tx_error)?;
                        let o_id: i64 = row.get(0);
                        let values: Vec<(i32, i32, i64)> = o
                            .lines
                            .iter()
                            .map(|l| (l.p_id as i32, l.qty as i32, l.amount_cents()))
                            .collect();
                        let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> =
                            vec![&o_id];
                        for (p, q, a) in &values {
                            params.push(p);
                            params.push(q);
                            params.push(a);
                        }
                        tx.execute(insert_lines, &params)
                            .await
                            .map_err(pg_tx_error)?;
                    }
                    None => {
                        tx.execute(update_lines, &[&o_id])
                            .await
                            .map_err(pg_tx_error)?;
                        tx.execute(update_order, &[&o_id])
                            .await
                            .map_err(pg_tx_error)?;
                    }
                }
                tx.commit().await.map_err(pg_tx_error)
            }
            (
                Client::My(c),
                Statements::My {
                    insert_order,
                    insert_lines,
                    update_lines,
                    update_order,
                },
            ) => {
                let result = async {
                    match order {
                        Some(o) => {
                            c.exec_drop(insert_order, (o.c_id, now_us(), o.total_cents()))
                                .await?;
                            let o_id = c.last_insert_id().unwrap_or(0);
                            let mut params: Vec<mysql_async::Value> = Vec::with_capacity(20);
                            for l in &o.lines {
                                params.extend([
                                    o_id.into(),
                                    l.p_id.into(),
                                    l.qty.into(),
                                    l.amount_cents().into(),
                                ]);
                            }
                            c.exec_drop(insert_lines, mysql_async::Params::Positional(params))
                                .await?;
                        }
                        None => {
                            c.exec_drop(update_lines, (o_id,)).await?;
                            c.exec_drop(update_order, (o_id, o_id)).await?;
                        }
                    }
                    c.query_drop("COMMIT").await
                }
                .await;
                if result.is_err() {
                    let _ = c.query_drop("ROLLBACK").await;
                }
                result.map_err(my_tx_error)
            }
            _ => unreachable!("statements are prepared for their own client"),
        }
    }

    /// Runs `n` transactions with retries, reporting each to `recorder`.
    async fn run(
        &mut self,
        n: u64,
        measured: bool,
        cfg: &PointConfig,
        recorder: &Recorder,
        halt: &AtomicBool,
    ) {
        for _ in 0..n {
            if halt.load(Ordering::Relaxed) {
                return;
            }
            let started = Instant::now();
            let mut retries = Vec::new();
            let error = loop {
                match self.transaction(cfg).await {
                    Ok(()) => break None,
                    Err(e) => match e.retry_kind {
                        Some(kind) if (retries.len() as u32) < cfg.max_retries => {
                            retries.push(kind)
                        }
                        _ => break Some(e),
                    },
                }
            };
            recorder.record(
                measured,
                started.elapsed().as_nanos() as u64,
                &retries,
                error.as_ref(),
            );
            if let Some(e) = &error {
                if self.broken(e) {
                    return;
                }
            }
        }
    }
}

/// Samples or counts the engine's waits over the measured work.
enum WaitProbe {
    Pg {
        totals: Arc<Mutex<(u64, BTreeMap<String, u64>)>>,
        done: Arc<AtomicBool>,
        task: tokio::task::JoinHandle<()>,
    },
    My {
        client: Client,
        before: BTreeMap<String, Counter>,
        missing: Option<String>,
    },
}

/// A cumulative wait counter: how many waits and how long they took in all.
#[derive(Clone, Copy, Debug, Default)]
struct Counter {
    count: u64,
    wait_s: f64,
}

const MY_WAITS_SQL: &str = "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT FROM performance_schema.events_waits_summary_global_by_event_name WHERE COUNT_STAR > 0 AND EVENT_NAME NOT LIKE 'wait/io/socket/%' AND EVENT_NAME <> 'idle'";
const MY_STATUS_SQL: &str = "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time', 'Table_locks_waited')";

/// Cumulative wait counters of a MariaDB/MySQL server, by event name.
async fn my_counters(
    client: &mut Client,
    with_schema: bool,
) -> std::result::Result<BTreeMap<String, Counter>, String> {
    let mut out = BTreeMap::new();
    if with_schema {
        for r in client.text_rows(MY_WAITS_SQL).await? {
            if let [name, count, picoseconds] = r.as_slice() {
                out.insert(
                    name.clone(),
                    Counter {
                        count: count.parse().unwrap_or(0),
                        wait_s: picoseconds.parse::<f64>().unwrap_or(0.0) / 1e12,
                    },
                );
            }
        }
    }
    let status: BTreeMap<String, f64> = client
        .text_rows(MY_STATUS_SQL)
        .await?
        .into_iter()
        .filter_map(|r| Some((r.first()?.clone(), r.get(1)?.parse().ok()?)))
        .collect();
    let get = |k: &str| status.get(k).copied().unwrap_or(0.0);
    out.insert(
        "status/innodb_row_lock".into(),
        Counter {
            count: get("Innodb_row_lock_waits") as u64,
            wait_s: get("Innodb_row_lock_time") / 1e3,
        },
    );
    out.insert(
        "status/table_lock".into(),
        Counter {
            count: get("Table_locks_waited") as u64,
            wait_s: 0.0,
        },
    );
    Ok(out)
}

/// `wait/synch/mutex/innodb/…` → `synch/mutex`; `status/innodb_row_lock` → `innodb_row_lock`.
fn my_kind(event: &str) -> String {
    if let Some(k) = event.strip_prefix("status/") {
        return k.to_string();
    }
    let parts: Vec<&str> = event.trim_start_matches("wait/").split('/').collect();
    parts[..parts.len().min(2)].join("/")
}

const PG_WAITS_SQL: &str = "SELECT wait_event_type, wait_event, count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active' AND wait_event IS NOT NULL AND pid <> pg_backend_pid() GROUP BY 1, 2";

impl WaitProbe {
    async fn start(target: &ServerTarget) -> Result<WaitProbe> {
        let mut client = Client::connect(target).await?;
        match target.dialect {
            Dialect::Postgres => {
                let totals = Arc::new(Mutex::new((0u64, BTreeMap::new())));
                let done = Arc::new(AtomicBool::new(false));
                let (t, d) = (totals.clone(), done.clone());
                let task = tokio::spawn(async move {
                    let mut tick =
                        tokio::time::interval(Duration::from_millis(1000 / PG_SAMPLES_PER_S));
                    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                    while !d.load(Ordering::Relaxed) {
                        tick.tick().await;
                        let Ok(rows) = client.text_rows(PG_WAITS_SQL).await else {
                            continue;
                        };
                        let mut t = t.lock().unwrap_or_else(|p| p.into_inner());
                        t.0 += 1;
                        for r in rows {
                            if let [kind, event, n] = r.as_slice() {
                                *t.1.entry(format!("{kind}/{event}")).or_default() +=
                                    n.parse::<u64>().unwrap_or(0);
                            }
                        }
                    }
                });
                Ok(WaitProbe::Pg { totals, done, task })
            }
            _ => {
                let on = client
                    .count("SELECT @@performance_schema")
                    .await
                    .unwrap_or(0)
                    == 1;
                let missing = (!on).then(|| {
                    "performance_schema is OFF on this server, so only InnoDB row-lock and table-lock waits are counted: start it with performance_schema=ON (oltplab's managed MariaDB does)".to_string()
                });
                let before = my_counters(&mut client, on)
                    .await
                    .map_err(|e| db_failed(target, "cannot read the wait counters", e))?;
                Ok(WaitProbe::My {
                    client,
                    before,
                    missing,
                })
            }
        }
    }

    async fn finish(self, target: &ServerTarget, elapsed_s: f64) -> Result<Waits> {
        let elapsed_s = elapsed_s.max(1e-9);
        // Per event: (per second, average sessions waiting).
        let mut by_event: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        let mut waits = match self {
            WaitProbe::Pg { totals, done, task } => {
                done.store(true, Ordering::Relaxed);
                let _ = task.await;
                let (samples, counts) = totals.lock().unwrap_or_else(|p| p.into_inner()).clone();
                for (event, n) in counts {
                    let sessions = n as f64 / samples.max(1) as f64;
                    by_event.insert(event, (sessions, sessions));
                }
                Waits {
                    unit: "waiting_sessions",
                    source: format!(
                        "pg_stat_activity sampled {PG_SAMPLES_PER_S} times a second ({samples} samples): the average number of active client sessions seen waiting on each kind; PostgreSQL 15 counts no waits, so these are not waits per second"
                    ),
                    missing: (samples == 0)
                        .then(|| "no pg_stat_activity sample completed".to_string()),
                    ..Default::default()
                }
            }
            WaitProbe::My {
                mut client,
                before,
                missing,
            } => {
                let after = my_counters(&mut client, missing.is_none())
                    .await
                    .map_err(|e| db_failed(target, "cannot read the wait counters", e))?;
                for (event, c) in after {
                    let b = before.get(&event).copied().unwrap_or_default();
                    let count = c.count.saturating_sub(b.count);
                    if count > 0 {
                        let wait_s = (c.wait_s - b.wait_s).max(0.0);
                        by_event.insert(event, (count as f64 / elapsed_s, wait_s / elapsed_s));
                    }
                }
                Waits {
                    unit: "waits_per_s",
                    source: "performance_schema.events_waits_summary_global_by_event_name (socket and idle waits left out; every instrumented acquisition counts, contended or not, and its time goes into waiting_sessions) and the status counters Innodb_row_lock_waits/_time and Table_locks_waited, over the measured work".into(),
                    missing,
                    ..Default::default()
                }
            }
        };
        for (event, (per_s, sessions)) in &by_event {
            let kind = match target.dialect {
                Dialect::Postgres => event.split('/').next().unwrap_or(event).to_string(),
                _ => my_kind(event),
            };
            *waits.per_s.entry(kind.clone()).or_default() += per_s;
            *waits.sessions.entry(kind).or_default() += sessions;
        }
        let mut top: Vec<(String, f64)> = by_event
            .into_iter()
            .map(|(event, (_, sessions))| (event, sessions))
            .collect();
        top.sort_by(|a, b| b.1.total_cmp(&a.1));
        top.truncate(10);
        waits.top = top;
        Ok(waits)
    }
}

/// Runs one point: opens the connections (not measured), runs each one's warm-up, then — all
/// together — each one's fixed work, while per-second lines and the waits are taken.
pub fn run_point(
    target: &ServerTarget,
    cfg: &PointConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
    on_event: &mut dyn FnMut(Event),
) -> Result<PointOutcome> {
    let rt = runtime()?;
    rt.block_on(async {
        let connect_started = Instant::now();
        let mut opened = stream::iter(0..cfg.connections)
            .map(|i| Session::open(target, i, cfg.seed))
            .buffer_unordered(CONNECT_PARALLELISM);
        let mut sessions = Vec::with_capacity(cfg.connections as usize);
        while let Some(s) = opened.next().await {
            sessions.push(s?);
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
        }
        drop(opened);
        let connect_s = connect_started.elapsed().as_secs_f64();

        let recorder = Arc::new(Recorder::new(cfg.connections));
        let barrier = Arc::new(tokio::sync::Barrier::new(sessions.len() + 1));
        let halt = Arc::new(AtomicBool::new(false));
        let last_finish: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
        // After the warm-up, every connection waits until the waits have been snapshotted.
        let (go, gate) = tokio::sync::watch::channel(false);
        let warmup_started = Instant::now();
        let mut set = JoinSet::new();
        for mut s in sessions {
            let (recorder, barrier, halt, last_finish) = (
                recorder.clone(),
                barrier.clone(),
                halt.clone(),
                last_finish.clone(),
            );
            let mut gate = gate.clone();
            let cfg = cfg.clone();
            set.spawn(async move {
                s.run(cfg.warmup_tx_per_connection, false, &cfg, &recorder, &halt)
                    .await;
                barrier.wait().await;
                let _ = gate.wait_for(|open| *open).await;
                s.run(cfg.tx_per_connection, true, &cfg, &recorder, &halt)
                    .await;
                let now = Instant::now();
                recorder.active.fetch_sub(1, Ordering::Relaxed);
                let mut last = last_finish.lock().unwrap_or_else(|p| p.into_inner());
                *last = Some(last.map_or(now, |l| l.max(now)));
                // Kept open until the measured work has been sampled: a closed connection's
                // backend process takes its CPU time with it.
                s
            });
        }
        // The warm-up: wait at the barrier, passing Ctrl-C on to the connections.
        {
            let wait = barrier.wait();
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    _ = &mut wait => break,
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {
                        if stop.load(Ordering::Relaxed) {
                            halt.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
        }
        let warmup_s = warmup_started.elapsed().as_secs_f64();
        let probe = WaitProbe::start(target).await?;
        on_event(Event::MeasureStart);
        let start = Instant::now();
        let _ = go.send(true);
        let mut ticker = Ticker::new(start);
        let mut finished = Vec::with_capacity(cfg.connections as usize);
        loop {
            let deadline = tokio::time::Instant::from_std(ticker.next_deadline())
                .min(tokio::time::Instant::now() + Duration::from_millis(100));
            tokio::select! {
                joined = set.join_next() => match joined {
                    None => break,
                    Some(Ok(session)) => finished.push(session),
                    Some(Err(_)) => return Err(Error::failed("a connection task panicked")),
                },
                _ = tokio::time::sleep_until(deadline) => {
                    ticker.due(&recorder, on_second);
                    if stop.load(Ordering::Relaxed) {
                        halt.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        let end = last_finish
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(Instant::now);
        on_event(Event::MeasureEnd);
        drop(finished);
        let elapsed_s = end.duration_since(start).as_secs_f64();
        let waits = probe.finish(target, elapsed_s).await?;
        ticker.finish(&recorder, end, on_second);
        let mut outcome = recorder.outcome(cfg.connections);
        outcome.elapsed_s = elapsed_s;
        outcome.connect_s = connect_s;
        outcome.warmup_s = warmup_s;
        outcome.seconds = std::mem::take(&mut ticker.seconds);
        outcome.waits = waits;
        outcome.interrupted = stop.load(Ordering::Relaxed);
        Ok(outcome)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mariadb_wait_kinds() {
        assert_eq!(my_kind("wait/synch/mutex/innodb/lock_mutex"), "synch/mutex");
        assert_eq!(my_kind("wait/io/file/innodb/innodb_log_file"), "io/file");
        assert_eq!(my_kind("wait/lock/table/sql/handler"), "lock/table");
        assert_eq!(my_kind("status/innodb_row_lock"), "innodb_row_lock");
    }

    #[test]
    fn five_lines_per_insert() {
        let pg = insert_lines_sql(Dialect::Postgres);
        assert!(pg.ends_with("($1, 5, $14, $15, $16)"), "{pg}");
        assert_eq!(insert_lines_sql(Dialect::Mysql).matches('?').count(), 20);
    }
}
