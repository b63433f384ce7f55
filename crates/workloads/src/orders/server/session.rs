//! A connection of the run: its prepared statements, one transaction, and its retries.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use mysql_async::prelude::Queryable;
use oltplab_core::Result;
use rand::Rng;

use super::client::{db_failed, pg_text, Client};
use super::ServerTarget;
use crate::orders::driver::{PointConfig, Recorder};
use crate::orders::{connection_rng, now_us, Dialect, Mode, NewOrder, TxError, LINES_PER_ORDER};

/// A connection of the run with its prepared statements and random choices.
pub(super) struct Session {
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
    pub(super) async fn open(target: &ServerTarget, index: u32, seed: u64) -> Result<Session> {
        let mut client = Client::connect(target).await?;
        let fail = |e: String| db_failed(target, "cannot prepare the statements", e);
        let statements = match &mut client {
            Client::Pg(c) => {
                let mut prepared = Vec::new();
                for sql in [
                    INSERT_ORDER_PG.to_string(),
                    insert_lines_sql(Dialect::Postgres),
                    crate::orders::update_lines_sql(Dialect::Postgres).to_string(),
                    crate::orders::update_order_sql(Dialect::Postgres).to_string(),
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
                    crate::orders::update_lines_sql(Dialect::Mysql).to_string(),
                    crate::orders::update_order_sql(Dialect::Mysql).to_string(),
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

    /// Runs one transaction; the inserted order's id once its COMMIT returned.
    async fn transaction(
        &mut self,
        cfg: &PointConfig,
    ) -> std::result::Result<Option<i64>, TxError> {
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
                let inserted = match order {
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
                        Some(o_id)
                    }
                    None => {
                        tx.execute(update_lines, &[&o_id])
                            .await
                            .map_err(pg_tx_error)?;
                        tx.execute(update_order, &[&o_id])
                            .await
                            .map_err(pg_tx_error)?;
                        None
                    }
                };
                tx.commit().await.map_err(pg_tx_error)?;
                Ok(inserted)
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
                    let inserted = match order {
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
                            Some(o_id as i64)
                        }
                        None => {
                            c.exec_drop(update_lines, (o_id,)).await?;
                            c.exec_drop(update_order, (o_id, o_id)).await?;
                            None
                        }
                    };
                    c.query_drop("COMMIT").await.map(|_| inserted)
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

    /// Runs `n` transactions (None: until `halt`) with retries, reporting each to `recorder`.
    pub(super) async fn run(
        &mut self,
        n: Option<u64>,
        measured: bool,
        cfg: &PointConfig,
        recorder: &Recorder,
        halt: &AtomicBool,
    ) {
        let mut ran = 0u64;
        while n.is_none_or(|n| ran < n) {
            ran += 1;
            if halt.load(Ordering::Relaxed) {
                return;
            }
            let started = Instant::now();
            let mut retries = Vec::new();
            let error = loop {
                match self.transaction(cfg).await {
                    Ok(inserted) => {
                        if let (true, Some(o_id)) = (cfg.record_orders, inserted) {
                            recorder.acknowledge(o_id);
                        }
                        break None;
                    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_lines_per_insert() {
        let pg = insert_lines_sql(Dialect::Postgres);
        assert!(pg.ends_with("($1, 5, $14, $15, $16)"), "{pg}");
        assert_eq!(insert_lines_sql(Dialect::Mysql).matches('?').count(), 20);
    }
}
