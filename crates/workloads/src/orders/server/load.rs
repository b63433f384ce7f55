//! The tables on a server: created and filled, their load record read, refilled, checked.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use oltplab_core::{Error, Result};

use super::client::{db_failed, Client};
use super::{runtime, ServerTarget};
use crate::orders::{generate, now_us, schema, Chunk, Dialect, Meta, TABLES};

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
        Ok(crate::orders::total_rows(&meta.scale))
    })
}

/// Orders whose lines are not five or whose total is not the sum of its lines (0 = consistent).
pub fn inconsistent_orders(target: &ServerTarget) -> Result<u64> {
    runtime()?.block_on(async {
        let mut client = Client::connect(target).await?;
        client
            .count(crate::orders::CHECK_SQL)
            .await
            .map_err(|e| db_failed(target, "the consistency query failed", e))
    })
}
