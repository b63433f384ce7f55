//! The wait probes: what sessions waited on during the measured work (the figures: see mod.rs).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oltplab_core::Result;

use super::client::{db_failed, Client};
use super::ServerTarget;
use crate::orders::driver::Waits;
use crate::orders::Dialect;

/// PostgreSQL samples of `pg_stat_activity` per second.
const PG_SAMPLES_PER_S: u64 = 10;

/// Samples or counts the engine's waits over the measured work.
pub(super) enum WaitProbe {
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
pub(super) struct Counter {
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
    pub(super) async fn start(target: &ServerTarget) -> Result<WaitProbe> {
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

    pub(super) async fn finish(self, target: &ServerTarget, elapsed_s: f64) -> Result<Waits> {
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
}
