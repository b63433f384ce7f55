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

mod client;
mod load;
mod run;
mod session;
mod waits;

pub use load::{inconsistent_orders, load, read_meta, refill_if_empty, MEMORY_TABLE_MAX_BYTES};
pub use run::run_point;

use oltplab_core::{Error, Result};

use super::Dialect;

/// A server to run on.
#[derive(Clone, Debug)]
pub struct ServerTarget {
    pub dialect: Dialect,
    /// With password: never printed (see [`redact_url`](oltplab_dbs::server::redact_url)).
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
