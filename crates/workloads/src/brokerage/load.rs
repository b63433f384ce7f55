//! The loader: create the schema, load the chunks of [`gen::plan`] ([`crate::bulk`]), then the
//! brokers with their sums, build the indexes, record the load.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use oltplab_core::Result;

use crate::bulk::LoadTimes;

use super::gen::{self, Chunk, Totals};
use super::{schema, Scale};
use crate::sql::db_failed;
use crate::sql::{Connector, Purpose, TxMode};

#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub scale: Scale,
    pub threads: usize,
    pub seed: u64,
    /// Drop existing tables of the workload's names instead of refusing.
    pub force: bool,
    /// Where the database is, for messages.
    pub location: String,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadReport {
    pub scale: Scale,
    pub trades: i64,
    #[serde(flatten)]
    pub times: LoadTimes,
}

/// Rows the load makes, for progress.
pub fn planned_rows(scale: &Scale) -> u64 {
    gen::plan(scale).iter().map(|c| c.rows(scale)).sum()
}

pub fn load(
    connector: &dyn Connector,
    opts: &LoadOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
    stop: &AtomicBool,
) -> Result<LoadReport> {
    let started = Instant::now();
    let dialect = connector.dialect();
    let mut main = connector.connect(Purpose::Load)?;
    crate::bulk::fresh_tables(
        main.as_mut(),
        &opts.location,
        opts.force,
        "brokerage",
        &schema::drop_tables(),
        &schema::create_tables(dialect),
    )?;
    let scale = opts.scale;
    let loaded_at = oltplab_metrics::schema::now_rfc3339();
    main.batch(&format!(
        "INSERT INTO {} (name, value) VALUES ('customers', '{}'), ('days', '{}'), ('seed', '{}'), \
         ('loaded_at', '{loaded_at}'), ('complete', '0')",
        schema::META_TABLE,
        scale.customers,
        scale.days,
        opts.seed
    ))
    .map_err(|e| db_failed("cannot record the load", e))?;

    let totals = Totals::new(&scale);
    let plan = gen::plan(&scale);
    let mut rows = crate::bulk::load_chunks(
        connector,
        main.as_mut(),
        &plan,
        |c: &Chunk| c.rows(&scale),
        |chunk| gen::generate(chunk, &scale, opts.seed, &totals),
        opts.threads,
        progress,
        stop,
    )?;
    let brokers = gen::brokers(&scale, &totals);
    main.begin(TxMode::Write)
        .and_then(|_| main.load(&brokers))
        .and_then(|_| main.commit())
        .map_err(|e| db_failed("cannot load the brokers", e))?;
    rows += brokers.rows() as u64;

    let index_start = Instant::now();
    crate::bulk::index_and_analyze(
        connector,
        main.as_mut(),
        &schema::create_indexes(dialect),
        &schema::TABLES,
        opts.threads,
        stop,
    )?;
    main.batch(&format!(
        "INSERT INTO {} (name, value) VALUES ('balance_cents', '{}')",
        schema::META_TABLE,
        totals.balance_cents.load(Ordering::Relaxed)
    ))
    .map_err(|e| db_failed("cannot record the load", e))?;
    crate::bulk::mark_complete(connector, main.as_mut(), schema::META_TABLE)?;
    Ok(LoadReport {
        scale,
        trades: scale.last_loaded_trade(),
        times: LoadTimes::new(rows, started, index_start),
    })
}
