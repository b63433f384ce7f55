//! The server's own account of where its sessions waited in the measured window, so that the
//! study names measured waits instead of inferring them from what I/O and CPU leave over:
//! PostgreSQL's wait events, sampled from `pg_stat_activity`; InnoDB's row-lock waits, from the
//! difference of `SHOW GLOBAL STATUS` at the window's edges; a Galera cluster's replication
//! counters on every node, the same way.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::workload::cluster::WsrepSampler;
use oltplab_schema::ServerWaits;
use oltplab_workloads::sql::{Conn, Dialect};
use oltplab_workloads::tpcc::{Connector, Purpose};

/// PostgreSQL's sampling interval: often enough for a 10 s window to give hundreds of samples,
/// rarely enough that the sampler's queries cost the server little.
const SAMPLE_EVERY: Duration = Duration::from_millis(50);

/// Started at the measured window's start, finished at its end.
pub enum WaitSampler {
    Postgres {
        stop: Arc<AtomicBool>,
        thread: JoinHandle<BTreeMap<String, u64>>,
    },
    Mariadb {
        conn: Box<dyn Conn>,
        at_start: (u64, f64),
        /// A Galera cluster's nodes' replication counters.
        wsrep: Option<WsrepSampler>,
    },
}

impl WaitSampler {
    /// `None` for SQLite (its writer lock is measured by the driver) or when the server refuses
    /// the extra connection (the run goes on without the figures).
    pub fn start(connector: &dyn Connector, node_urls: &[String]) -> Option<WaitSampler> {
        match connector.dialect() {
            Dialect::Postgres => {
                let mut conn = connector.connect(Purpose::Check).ok()?;
                let stop = Arc::new(AtomicBool::new(false));
                let flag = stop.clone();
                let thread = std::thread::spawn(move || {
                    let mut counts = BTreeMap::new();
                    while !flag.load(Ordering::Relaxed) {
                        sample_postgres(conn.as_mut(), &mut counts);
                        std::thread::sleep(SAMPLE_EVERY);
                    }
                    counts
                });
                Some(WaitSampler::Postgres { stop, thread })
            }
            Dialect::Mysql => {
                let mut conn = connector.connect(Purpose::Check).ok()?;
                let at_start = innodb_row_locks(conn.as_mut())?;
                let wsrep = (!node_urls.is_empty())
                    .then(|| WsrepSampler::start(node_urls))
                    .flatten();
                Some(WaitSampler::Mariadb {
                    conn,
                    at_start,
                    wsrep,
                })
            }
            Dialect::Sqlite => None,
        }
    }

    pub fn finish(self) -> Option<ServerWaits> {
        match self {
            WaitSampler::Postgres { stop, thread } => {
                stop.store(true, Ordering::Relaxed);
                let counts = thread.join().ok()?;
                let total: u64 = counts.values().sum();
                Some(ServerWaits {
                    source: "pg_stat_activity".into(),
                    backend_samples: Some(total),
                    share_by_event: counts
                        .into_iter()
                        .map(|(k, n)| (k, n as f64 / total.max(1) as f64))
                        .collect(),
                    ..ServerWaits::default()
                })
            }
            WaitSampler::Mariadb {
                mut conn,
                at_start,
                wsrep,
            } => {
                // On a cluster whose node 1 died in the window the other nodes still answer.
                let at_end = innodb_row_locks(conn.as_mut());
                let wsrep_nodes = wsrep.map(WsrepSampler::finish).unwrap_or_default();
                if at_end.is_none() && wsrep_nodes.is_empty() {
                    return None;
                }
                Some(ServerWaits {
                    source: "innodb_status".into(),
                    row_lock_waits: at_end.map(|e| e.0.saturating_sub(at_start.0)),
                    row_lock_wait_s: at_end.map(|e| (e.1 - at_start.1).max(0.0)),
                    wsrep_nodes,
                    ..ServerWaits::default()
                })
            }
        }
    }
}

/// Adds one sample of the active client backends' wait events (other than the sampler's own).
fn sample_postgres(conn: &mut dyn Conn, counts: &mut BTreeMap<String, u64>) {
    const SQL: &str = "SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') \
        FROM pg_stat_activity WHERE backend_type = 'client backend' AND state = 'active' \
        AND pid <> pg_backend_pid()";
    if let Ok(rows) = conn.query(SQL) {
        for r in 0..rows.len() {
            *counts.entry(rows.get(r, 0).str().to_string()).or_default() += 1;
        }
    }
}

/// InnoDB's row-lock waits so far and the seconds they took (`Innodb_row_lock_time` is in ms).
fn innodb_row_locks(conn: &mut dyn Conn) -> Option<(u64, f64)> {
    let rows = conn
        .query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time')")
        .ok()?;
    let (mut waits, mut ms) = (None, None);
    for r in 0..rows.len() {
        match rows.get(r, 0).str() {
            "Innodb_row_lock_waits" => waits = Some(rows.get(r, 1).i64().max(0) as u64),
            "Innodb_row_lock_time" => ms = Some(rows.get(r, 1).f64()),
            _ => {}
        }
    }
    Some((waits?, ms? / 1e3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_share_from_either_server() {
        let pg = ServerWaits {
            source: "pg_stat_activity".into(),
            backend_samples: Some(100),
            share_by_event: [
                ("Lock:transactionid".to_string(), 0.3),
                ("Lock:tuple".to_string(), 0.1),
                ("IO:WalSync".to_string(), 0.2),
                ("CPU".to_string(), 0.4),
            ]
            .into(),
            ..ServerWaits::default()
        };
        assert!((pg.lock_share(0.0).unwrap() - 0.4).abs() < 1e-12);
        let maria = ServerWaits {
            source: "innodb_status".into(),
            row_lock_waits: Some(12),
            row_lock_wait_s: Some(5.0),
            ..ServerWaits::default()
        };
        assert_eq!(maria.lock_share(20.0), Some(0.25));
        assert_eq!(maria.lock_share(0.0), None);
    }
}
