//! Running one transaction: the terminal's buffers, the dispatch to the five, shared helpers.

use std::collections::HashMap;

use super::delivery::delivery;
use super::new_order::new_order;
use super::order_status::order_status;
use super::payment::payment;
use super::stock_level::stock_level;
use super::{Input, Outcome, Statements};
use crate::sql::{Conn, DbError, DbResult, Rows, Stmt, P};

/// Reusable buffers of one terminal.
#[derive(Default)]
pub struct Scratch {
    pub(super) rows: Rows,
    /// More statements' rows, for statements sent together ([`Conn::pipeline`]).
    pub(super) rows2: Rows,
    pub(super) rows3: Rows,
    /// Delivery's rows of its ten districts' statements sent together.
    pub(super) dl_rows: Vec<Rows>,
    /// New-Order's item prices by id.
    pub(super) items: HashMap<i64, f64>,
    pub(super) ids: Vec<i64>,
    pub(super) text: String,
    pub(super) order: Vec<usize>,
    pub(super) dist_info: Vec<String>,
    pub(super) amounts: Vec<f64>,
    /// New-Order's stock arrays for PostgreSQL: supply warehouse, item, quantity, remote.
    pub(super) stock: [Vec<i64>; 4],
    /// Delivery on MariaDB: (district, order, customer, amount) of each delivered order.
    pub(super) delivered: Vec<(i64, i64, i64, f64)>,
    /// Districts the last Delivery found no undelivered order in (spec 2.7.4.2, reported per
    /// 5.4.5).
    pub(super) skipped_districts: u32,
    /// The last New-Order's key (w, d, o_id), once its COMMIT returned.
    pub(super) committed_order: Option<(i64, i64, i64)>,
}

impl Scratch {
    /// Districts the last Delivery skipped: they had no undelivered order.
    pub fn skipped_districts(&self) -> u32 {
        self.skipped_districts
    }

    /// The order (w, d, o_id) of the last New-Order whose COMMIT returned, once: what the
    /// terminal saw acknowledged (None after the intended rollback, a failure, or a take).
    pub fn take_committed_order(&mut self) -> Option<(i64, i64, i64)> {
        self.committed_order.take()
    }
}

/// Runs one transaction from BEGIN to COMMIT (or the intended rollback). On an error the caller
/// rolls back.
pub fn execute(
    conn: &mut dyn Conn,
    st: &Statements,
    input: &Input,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    match input {
        Input::NewOrder {
            w,
            d,
            c,
            lines,
            rollback: _,
        } => new_order(conn, st, *w, *d, *c, lines, s),
        Input::Payment {
            w,
            d,
            c_w,
            c_d,
            customer,
            amount_cents,
        } => payment(conn, st, *w, *d, *c_w, *c_d, customer, *amount_cents, s),
        Input::OrderStatus { w, d, customer } => order_status(conn, st, *w, *d, customer, s),
        Input::Delivery { w, carrier } => delivery(conn, st, *w, *carrier, s),
        Input::StockLevel { w, d, threshold } => stock_level(conn, st, *w, *d, *threshold, s),
    }
}

pub(super) fn missing(what: &str) -> DbError {
    DbError::other(format!(
        "{what} is missing: the database does not hold a complete TPC-C load; load it again"
    ))
}

/// The customer in the middle of those with `last`, ordered by first name (spec 2.5.2.2).
pub(super) fn by_name(
    conn: &mut dyn Conn,
    stmt: &Stmt,
    w: i64,
    d: i64,
    last: &str,
    rows: &mut Rows,
) -> DbResult<Option<usize>> {
    conn.run(stmt, &[P::I(w), P::I(d), P::S(last)], rows)?;
    if rows.is_empty() {
        return Ok(None);
    }
    Ok(Some((rows.len() - 1) / 2))
}
