//! Bulk loading shared by the workloads: generate a plan's chunks on `threads` threads and commit
//! each as one transaction, then build the secondary indexes. Servers load a chunk per thread and
//! connection (COPY / multi-row INSERT); SQLite, which admits one writer, gets its chunks from
//! generator threads through a bounded channel into one writing connection.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use oltplab_core::{Error, Result};

use crate::sql::{Batch, Conn, Connector, DbError, Dialect, Purpose, TxMode};

/// What a load loaded and how long its parts took.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadTimes {
    pub rows: u64,
    /// Creating the tables and loading the rows.
    pub data_s: f64,
    /// Building the indexes, gathering statistics, recording the load.
    pub index_s: f64,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
}

impl LoadTimes {
    /// The times of a load that started at `started` and began its indexes at `index_start`.
    pub fn new(rows: u64, started: Instant, index_start: Instant) -> LoadTimes {
        let elapsed_s = started.elapsed().as_secs_f64();
        LoadTimes {
            rows,
            data_s: index_start.duration_since(started).as_secs_f64(),
            index_s: index_start.elapsed().as_secs_f64(),
            elapsed_s,
            rows_per_s: rows as f64 / elapsed_s.max(1e-9),
        }
    }
}

fn failed(context: &str, e: DbError) -> Error {
    Error::failed(format!("{context}: {e}"))
}

/// Generates and commits every chunk of `plan`; `main` is the single writer where the engine has
/// one. `progress(rows_done, rows_total)` hears every committed chunk; `stop` ends the load early
/// with [`Error::Interrupted`]. Returns the rows loaded.
#[allow(clippy::too_many_arguments)]
pub fn load_chunks<C: Copy + Send + Sync>(
    connector: &dyn Connector,
    main: &mut dyn Conn,
    plan: &[C],
    rows_of: impl Fn(&C) -> u64,
    generate: impl Fn(C) -> Vec<Batch> + Sync,
    threads: usize,
    progress: &(dyn Fn(u64, u64) + Sync),
    stop: &AtomicBool,
) -> Result<u64> {
    let total: u64 = plan.iter().map(rows_of).sum();
    let done = AtomicU64::new(0);
    let next = AtomicUsize::new(0);
    let failed_flag = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let threads = threads.max(1);
    let fail = |e: Error| {
        failed_flag.store(true, Ordering::SeqCst);
        let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
    };
    let take = || -> Option<C> {
        if failed_flag.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
            return None;
        }
        plan.get(next.fetch_add(1, Ordering::Relaxed)).copied()
    };
    let commit_chunk = |conn: &mut dyn Conn, batches: &[Batch]| -> Result<u64> {
        conn.begin(TxMode::Write)
            .map_err(|e| failed("cannot begin a load transaction", e))?;
        let mut rows = 0;
        for b in batches.iter().filter(|b| b.rows() > 0) {
            conn.load(b)
                .map_err(|e| failed(&format!("cannot load {}", b.table), e))?;
            rows += b.rows() as u64;
        }
        conn.commit()
            .map_err(|e| failed("cannot commit a load transaction", e))?;
        Ok(rows)
    };
    let committed = |rows: u64| {
        let d = done.fetch_add(rows, Ordering::Relaxed) + rows;
        progress(d, total);
    };
    std::thread::scope(|scope| {
        if connector.single_writer() {
            // Generators → bounded channel → this thread's one connection.
            let (tx, rx) = mpsc::sync_channel::<Vec<Batch>>(threads * 2);
            for _ in 0..threads {
                let (tx, take, generate) = (tx.clone(), &take, &generate);
                scope.spawn(move || {
                    while let Some(chunk) = take() {
                        if tx.send(generate(chunk)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            for batches in rx {
                if failed_flag.load(Ordering::Relaxed) {
                    continue; // drain so the generators can finish
                }
                match commit_chunk(main, &batches) {
                    Ok(rows) => committed(rows),
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
                        match commit_chunk(conn.as_mut(), &generate(chunk)) {
                            Ok(rows) => committed(rows),
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
    Ok(done.load(Ordering::Relaxed))
}

/// A load's first step: a database that already holds tables is refused unless `force` (then
/// `drop` removes the `workload`'s old tables), and `create` makes the workload's tables.
pub fn fresh_tables(
    main: &mut dyn Conn,
    location: &str,
    force: bool,
    workload: &str,
    drop: &[String],
    create: &[String],
) -> Result<()> {
    if !crate::sql::table_names(main)?.is_empty() && !force {
        return Err(Error::usage(format!(
            "{location} already holds tables: choose another database, or add --force to drop and reload the {workload} tables"
        )));
    }
    for sql in drop {
        main.batch(sql)
            .map_err(|e| failed(&format!("cannot drop the old {workload} tables"), e))?;
    }
    for sql in create {
        main.batch(sql)
            .map_err(|e| failed(&format!("cannot create the {workload} tables"), e))?;
    }
    Ok(())
}

/// After the rows: the indexes (as [`build_indexes`]), then, unless `stop` was set meanwhile, fresh
/// planner statistics for `tables`. InnoDB recalculates its own only in the background, after the
/// load: a managed server stopped right after a fast load kept the empty tables' statistics (2
/// rows in `item`), and MariaDB then scanned the whole item table for every New-Order.
pub fn index_and_analyze(
    connector: &dyn Connector,
    main: &mut dyn Conn,
    indexes: &[String],
    tables: &[&str],
    threads: usize,
    stop: &AtomicBool,
) -> Result<()> {
    build_indexes(connector, main, indexes, threads)?;
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    let sql = match connector.dialect() {
        Dialect::Mysql => format!("ANALYZE TABLE {}", tables.join(", ")),
        _ => "ANALYZE".to_string(),
    };
    main.batch(&sql)
        .map_err(|e| failed("cannot analyze the tables", e))?;
    Ok(())
}

/// The load's last step: the `complete` row of its meta table set (`run` refuses a load that
/// never got there), then the engine's own after-load work.
pub fn mark_complete(
    connector: &dyn Connector,
    main: &mut dyn Conn,
    meta_table: &str,
) -> Result<()> {
    main.batch(&format!(
        "UPDATE {meta_table} SET value = '1' WHERE name = 'complete'"
    ))
    .map_err(|e| failed("cannot record the load", e))?;
    connector.after_load(main)
}

/// Runs each statement of `indexes` once: on `main` for a single writer or one thread, else one
/// index per connection at a time (PostgreSQL and InnoDB then build them in parallel).
pub fn build_indexes(
    connector: &dyn Connector,
    main: &mut dyn Conn,
    indexes: &[String],
    threads: usize,
) -> Result<()> {
    if connector.single_writer() || threads <= 1 {
        for sql in indexes {
            main.batch(sql)
                .map_err(|e| failed("cannot build an index", e))?;
        }
        return Ok(());
    }
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
                            Some(failed("cannot build an index", e));
                        return;
                    }
                }
            });
        }
    });
    match errors.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
