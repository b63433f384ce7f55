//! The loader: create the schema, generate the chunks of [`gen::plan`] on `threads` threads, commit
//! each chunk as one transaction, build the secondary indexes, record the load. Servers load a chunk
//! per thread and connection (COPY / multi-row INSERT); SQLite, which admits one writer, gets its
//! chunks from generator threads through a bounded channel into one writing connection.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use oltplab_core::{Error, Result};

use super::gen::{self, Chunk};
use super::random::{Constants, TpccRng};
use super::{db_failed, inspect, schema, Connector, DbState, Purpose};
use crate::sql::{Batch, Conn, TxMode};

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
    pub rows: u64,
    pub data_s: f64,
    pub index_s: f64,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
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
    let total: u64 = plan.iter().map(Chunk::rows).sum();
    let done = AtomicU64::new(0);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    // Whole seconds: the timestamp is sent a million times and the spec needs no finer one.
    let now_us = crate::sql::now_us() / 1_000_000 * 1_000_000;
    let threads = opts.threads.max(1);
    let fail = |e: Error| {
        failed.store(true, Ordering::SeqCst);
        let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
    };
    let take = || -> Option<Chunk> {
        if failed.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
            return None;
        }
        plan.get(next.fetch_add(1, Ordering::Relaxed)).copied()
    };
    let commit_chunk = |conn: &mut dyn Conn, batches: &[Batch]| -> Result<u64> {
        conn.begin(TxMode::Write)
            .map_err(|e| db_failed("cannot begin a load transaction", e))?;
        let mut rows = 0;
        for b in batches {
            conn.load(b)
                .map_err(|e| db_failed(&format!("cannot load {}", b.table), e))?;
            rows += b.rows() as u64;
        }
        conn.commit()
            .map_err(|e| db_failed("cannot commit a load transaction", e))?;
        Ok(rows)
    };

    std::thread::scope(|scope| {
        if connector.single_writer() {
            // Generators → bounded channel → this thread's one connection.
            let (tx, rx) = mpsc::sync_channel::<Vec<Batch>>(threads * 2);
            for _ in 0..threads {
                let tx = tx.clone();
                let take = &take;
                scope.spawn(move || {
                    while let Some(chunk) = take() {
                        let batches = gen::generate(chunk, opts.seed, &constants, now_us);
                        if tx.send(batches).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            for batches in rx {
                if failed.load(Ordering::Relaxed) {
                    continue; // drain so the generators can finish
                }
                match commit_chunk(main.as_mut(), &batches) {
                    Ok(rows) => {
                        let d = done.fetch_add(rows, Ordering::Relaxed) + rows;
                        progress(d, total);
                    }
                    Err(e) => fail(e),
                }
            }
        } else {
            for _ in 0..threads {
                scope.spawn(|| {
                    let mut conn = match connector.connect(Purpose::Load) {
                        Ok(c) => c,
                        Err(e) => return fail(e),
                    };
                    while let Some(chunk) = take() {
                        let batches = gen::generate(chunk, opts.seed, &constants, now_us);
                        match commit_chunk(conn.as_mut(), &batches) {
                            Ok(rows) => {
                                let d = done.fetch_add(rows, Ordering::Relaxed) + rows;
                                progress(d, total);
                            }
                            Err(e) => return fail(e),
                        }
                    }
                });
            }
        }
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    let data_s = started.elapsed().as_secs_f64();

    let index_start = Instant::now();
    let indexes = schema::create_indexes(dialect);
    if connector.single_writer() || threads == 1 {
        for sql in &indexes {
            main.batch(sql)
                .map_err(|e| db_failed("cannot build an index", e))?;
        }
    } else {
        // One index per connection at a time: PostgreSQL builds them in parallel.
        let next = AtomicUsize::new(0);
        let errors: Mutex<Option<Error>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..threads.min(indexes.len()) {
                scope.spawn(|| {
                    let mut conn = match connector.connect(Purpose::Load) {
                        Ok(c) => c,
                        Err(e) => {
                            *errors.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                            return;
                        }
                    };
                    while let Some(sql) = indexes.get(next.fetch_add(1, Ordering::Relaxed)) {
                        if let Err(e) = conn.batch(sql) {
                            *errors.lock().unwrap_or_else(|p| p.into_inner()) =
                                Some(db_failed("cannot build an index", e));
                            return;
                        }
                    }
                });
            }
        });
        if let Some(e) = errors.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
    }
    if dialect != crate::sql::Dialect::Mysql {
        main.batch("ANALYZE")
            .map_err(|e| db_failed("cannot analyze the tables", e))?;
    }
    main.batch(&format!(
        "UPDATE {} SET value = '1' WHERE name = 'complete'",
        schema::META_TABLE
    ))
    .map_err(|e| db_failed("cannot record the load", e))?;
    connector.after_load(main.as_mut())?;
    let index_s = index_start.elapsed().as_secs_f64();
    let elapsed_s = started.elapsed().as_secs_f64();
    let rows = done.load(Ordering::Relaxed);
    Ok(LoadReport {
        warehouses: opts.warehouses,
        rows,
        data_s,
        index_s,
        elapsed_s,
        rows_per_s: rows as f64 / elapsed_s.max(1e-9),
        load_constants: constants,
    })
}
