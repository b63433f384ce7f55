//! The five transactions as server-side code (`run tpcc --procedures`): PostgreSQL functions
//! (procedures.sql), each call sent alone as an implicit transaction, and MariaDB
//! stored procedures (procedures_mysql.sql), each CALL sent with its COMMIT in one query. The
//! driver waits once per transaction instead of two to eight times. The server-side code does
//! what the client-side transactions do; the client draws the same inputs and keeps the same
//! records (the acknowledged New-Order, Delivery's skipped districts).

use super::{CustomerSel, Input, Outcome, Scratch};
use crate::sql::{
    call_transaction, Conn, DbError, DbResult, Dialect, Stmt, StmtBuilder, TxMode, P,
};

/// The functions and procedures, created (or replaced) by [`install`].
const POSTGRES_SQL: &str = include_str!("procedures.sql");
const MYSQL_SQL: &str = include_str!("procedures_mysql.sql");

/// The calls, prepared once per connection.
pub struct Procedures {
    dialect: Dialect,
    new_order: Stmt,
    payment: Stmt,
    order_status: Stmt,
    delivery: Stmt,
    stock_level: Stmt,
}

impl Procedures {
    /// The calls in `dialect`; None on SQLite, which has no server to run them.
    pub fn new(dialect: Dialect) -> Option<Self> {
        let mut b = StmtBuilder::new(dialect);
        let (call, new_order_lines) = match dialect {
            Dialect::Postgres => ("SELECT", "?::int4[], ?::int4[], ?::int4[]"),
            // The lines as one JSON array of [item, supplying warehouse, quantity].
            Dialect::Mysql => ("CALL", "?"),
            Dialect::Sqlite => return None,
        };
        Some(Self {
            dialect,
            new_order: b.make(&format!(
                "{call} oltplab_tpcc_new_order(?, ?, ?, {new_order_lines}, ?)"
            )),
            payment: b.make(&format!(
                "{call} oltplab_tpcc_payment(?, ?, ?, ?, ?, ?, ?, ?)"
            )),
            order_status: b.make(&format!("{call} oltplab_tpcc_order_status(?, ?, ?, ?)")),
            delivery: b.make(&format!("{call} oltplab_tpcc_delivery(?, ?, ?)")),
            stock_level: b.make(&format!("{call} oltplab_tpcc_stock_level(?, ?, ?)")),
        })
    }
}

/// Creates or replaces the functions or procedures in the database `conn` is connected to.
pub fn install(conn: &mut dyn Conn) -> DbResult<()> {
    match conn.dialect() {
        Dialect::Postgres => conn.batch(POSTGRES_SQL),
        Dialect::Mysql => conn.batch(MYSQL_SQL),
        Dialect::Sqlite => Err(DbError::other(
            "SQLite runs TPC-C in-process: it has no server-side procedures",
        )),
    }
}

/// A customer by id, or by last name: the functions' (id, last name) pair.
fn by(customer: &CustomerSel) -> (P<'_>, P<'_>) {
    match customer {
        CustomerSel::Id(id) => (P::I(*id), P::Null),
        CustomerSel::Last(last) => (P::Null, P::S(last)),
    }
}

/// Runs one transaction as one call, BEGIN and COMMIT with it. On an error the caller rolls back
/// (the COMMIT sent along already ended the transaction; the extra ROLLBACK is harmless).
pub fn execute(
    conn: &mut dyn Conn,
    p: &Procedures,
    input: &Input,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let now = crate::sql::now_us();
    s.committed_order = None;
    s.skipped_districts = 0;
    let (stmt, mode) = match input {
        Input::NewOrder { .. } => (&p.new_order, TxMode::Write),
        Input::Payment { .. } => (&p.payment, TxMode::Write),
        // A STABLE function's call (PostgreSQL; MariaDB's is a Read): its one snapshot.
        Input::OrderStatus { .. } => (&p.order_status, TxMode::ReadStatement),
        Input::Delivery { .. } => (&p.delivery, TxMode::Write),
        Input::StockLevel { .. } => (&p.stock_level, TxMode::ReadStatement),
    };
    let [items, supply, quantity] = &mut s.stock[..3] else {
        unreachable!("four stock arrays")
    };
    let params: Vec<P> = match input {
        Input::NewOrder { w, d, c, lines, .. } if p.dialect == Dialect::Postgres => {
            items.clear();
            supply.clear();
            quantity.clear();
            for l in lines {
                items.push(l.i_id);
                supply.push(l.supply_w);
                quantity.push(l.quantity);
            }
            vec![
                P::I(*w),
                P::I(*d),
                P::I(*c),
                P::Ints(items),
                P::Ints(supply),
                P::Ints(quantity),
                P::T(now),
            ]
        }
        Input::NewOrder { w, d, c, lines, .. } => {
            use std::fmt::Write;
            let text = &mut s.text;
            text.clear();
            text.push('[');
            for (k, l) in lines.iter().enumerate() {
                let comma = if k == 0 { "" } else { "," };
                let _ = write!(text, "{comma}[{},{},{}]", l.i_id, l.supply_w, l.quantity);
            }
            text.push(']');
            vec![P::I(*w), P::I(*d), P::I(*c), P::S(text), P::T(now)]
        }
        Input::Payment {
            w,
            d,
            c_w,
            c_d,
            customer,
            amount_cents,
        } => {
            let (id, last) = by(customer);
            vec![
                P::I(*w),
                P::I(*d),
                P::I(*c_w),
                P::I(*c_d),
                id,
                last,
                P::F(*amount_cents as f64 / 100.0),
                P::T(now),
            ]
        }
        Input::OrderStatus { w, d, customer } => {
            let (id, last) = by(customer);
            vec![P::I(*w), P::I(*d), id, last]
        }
        Input::Delivery { w, carrier } => vec![P::I(*w), P::I(*carrier), P::T(now)],
        Input::StockLevel { w, d, threshold } => vec![P::I(*w), P::I(*d), P::I(*threshold)],
    };
    if !call_transaction(conn, mode, stmt, &params, &mut s.rows)? {
        return Ok(Outcome::RolledBack);
    }
    let value = (!s.rows.is_empty()).then(|| s.rows.get(0, 0).i64());
    match (input, value) {
        (Input::NewOrder { w, d, .. }, Some(o_id)) => s.committed_order = Some((*w, *d, o_id)),
        (Input::Delivery { .. }, Some(skipped)) => s.skipped_districts = skipped as u32,
        (_, None) => return Err(DbError::other("a TPC-C function returned no row")),
        _ => {}
    }
    Ok(Outcome::Committed)
}
