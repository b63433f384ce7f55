//! The loader: create the schema, load the chunks of [`gen::plan`] ([`crate::bulk`]), build the
//! secondary indexes, record the load.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use oltplab_core::{Error, Result};

use crate::bulk::LoadTimes;

use super::gen::{self, Chunk};
use super::random::{Constants, TpccRng};
use super::{db_failed, inspect, schema, Connector, DbState, Purpose};
use crate::sql::Conn;

#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub warehouses: i64,
    pub threads: usize,
    pub seed: u64,
    /// Drop existing TPC-C tables instead of refusing.
    pub force: bool,
    /// Where the database is, for messages (a path or a URL without password).
    pub location: String,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadReport {
    pub warehouses: i64,
    #[serde(flatten)]
    pub times: LoadTimes,
    pub load_constants: Constants,
}

/// Refuses a database that already holds tables, unless `force`: then TPC-C's tables are dropped
/// (tables of other applications are left alone).
pub fn prepare(conn: &mut dyn Conn, opts: &LoadOptions) -> Result<DbState> {
    let state = inspect(conn)?;
    if !state.is_empty() && !opts.force {
        let what = if !state.tpcc_tables.is_empty() {
            if state.meta.is_some() {
                "a TPC-C database".to_string()
            } else {
                "TPC-C tables oltplab did not create".to_string()
            }
        } else {
            format!(
                "other tables ({})",
                state
                    .other_tables
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(Error::usage(format!(
            "{} already holds {what}: use it with `oltplab run tpcc`, choose another database, or add --force to drop and reload TPC-C's tables",
            opts.location
        )));
    }
    for sql in schema::drop_tables() {
        conn.batch(&sql)
            .map_err(|e| db_failed("cannot drop the old TPC-C tables", e))?;
    }
    Ok(state)
}

/// Loads `opts.warehouses` into an empty database. `progress(rows_done, rows_total)` hears every
/// committed chunk; `stop` ends the load early with [`Error::Interrupted`].
pub fn load(
    connector: &dyn Connector,
    opts: &LoadOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
    stop: &AtomicBool,
) -> Result<LoadReport> {
    let started = Instant::now();
    let dialect = connector.dialect();
    let mut main = connector.connect(Purpose::Load)?;
    prepare(main.as_mut(), opts)?;
    for sql in schema::create_tables(dialect) {
        main.batch(&sql)
            .map_err(|e| db_failed("cannot create the TPC-C tables", e))?;
    }
    let mut rng = TpccRng::new(opts.seed ^ 0x7070_6363);
    let constants = Constants::for_load(&mut rng);
    let loaded_at = oltplab_metrics::schema::now_rfc3339();
    main.batch(&format!(
        "INSERT INTO {} (name, value) VALUES ('warehouses', '{}'), ('c_last', '{}'), ('c_id', '{}'), \
         ('ol_i_id', '{}'), ('seed', '{}'), ('loaded_at', '{loaded_at}'), ('complete', '0')",
        schema::META_TABLE,
        opts.warehouses,
        constants.c_last,
        constants.c_id,
        constants.ol_i_id,
        opts.seed
    ))
    .map_err(|e| db_failed("cannot record the load", e))?;

    let plan = gen::plan(opts.warehouses);
    // Whole seconds: the timestamp is sent a million times and the spec needs no finer one.
    let now_us = crate::sql::now_us() / 1_000_000 * 1_000_000;
    let rows = crate::bulk::load_chunks(
        connector,
        main.as_mut(),
        &plan,
        Chunk::rows,
        |chunk| gen::generate(chunk, opts.seed, &constants, now_us),
        opts.threads,
        progress,
        stop,
    )?;

    let index_start = Instant::now();
    crate::bulk::index_and_analyze(
        connector,
        main.as_mut(),
        &schema::create_indexes(dialect),
        &schema::TABLES,
        opts.threads,
        stop,
    )?;
    crate::bulk::mark_complete(connector, main.as_mut(), schema::META_TABLE)?;
    Ok(LoadReport {
        warehouses: opts.warehouses,
        times: LoadTimes::new(rows, started, index_start),
        load_constants: constants,
    })
}
