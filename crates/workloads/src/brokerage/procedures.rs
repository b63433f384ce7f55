//! The brokerage's transactions as server-side code (`run brokerage --procedures`): the
//! multi-statement ones as PostgreSQL functions (procedures.sql) or MariaDB stored procedures
//! (procedures_mysql.sql), Broker-Volume and Market-Watch as their one statement. On PostgreSQL
//! each transaction goes alone as an implicit transaction (the readers are STABLE functions or
//! one SELECT: one snapshot, as a READ ONLY transaction's); on MariaDB each CALL goes with its
//! COMMIT in one query. The driver waits for one answer per transaction instead of two to twenty
//! (its CPU is its wake-ups: docs/brokerage.md). The functions do what [`super::tx`]
//! does; the client draws the same inputs and hands the market the same outcomes.

use super::tx::{
    watch_day, Input, LookupBy, Order, OrderInput, Outcome, Scratch, Statements, Tick,
};
use crate::sql::{
    call_transaction, Conn, DbError, DbResult, Dialect, Stmt, StmtBuilder, TxMode, P,
};

/// The functions and procedures, created (or replaced) by [`install`].
const POSTGRES_SQL: &str = include_str!("procedures.sql");
const MYSQL_SQL: &str = include_str!("procedures_mysql.sql");

/// The calls, prepared once per connection.
pub struct Procedures {
    dialect: Dialect,
    customer_position: Stmt,
    security_detail: Stmt,
    trade_status: Stmt,
    trade_lookup: Stmt,
    trade_update: Stmt,
    trade_order: Stmt,
    trade_result: Stmt,
    market_feed: Stmt,
}

impl Procedures {
    /// The calls, numbered by `b` after the [`Statements`] the one-statement transactions use;
    /// None on SQLite, which has no server to run them.
    pub fn new(b: &mut StmtBuilder) -> Option<Self> {
        let dialect = b.dialect?;
        // Trade-Lookup's ids and Market-Feed's ticks: PostgreSQL arrays, MariaDB JSON text.
        let (lookup, update, feed) = match dialect {
            Dialect::Postgres => (
                "SELECT oltplab_bk_trade_lookup(?, ?::int8[], ?, ?, ?, ?)",
                "SELECT oltplab_bk_trade_update(?, ?::int8[], ?, ?, ?, ?)",
                "SELECT * FROM oltplab_bk_market_feed(?, ?::int8[], ?::int8[], ?)",
            ),
            Dialect::Mysql => (
                "CALL oltplab_bk_trade_lookup(?, ?, ?, ?, ?, ?, 0)",
                "CALL oltplab_bk_trade_lookup(?, ?, ?, ?, ?, ?, 1)",
                "CALL oltplab_bk_market_feed(?, ?)",
            ),
            Dialect::Sqlite => return None,
        };
        // A PostgreSQL function is read as a table (one row, or the rows it returns).
        let call = |name: &str, params: &str| match dialect {
            Dialect::Postgres => format!("SELECT * FROM {name}({params})"),
            _ => format!("CALL {name}({params})"),
        };
        Some(Self {
            dialect,
            customer_position: b.make(&call("oltplab_bk_customer_position", "?, ?, ?, ?")),
            security_detail: b.make(&call("oltplab_bk_security_detail", "?, ?, ?")),
            trade_status: b.make(&call("oltplab_bk_trade_status", "?")),
            trade_lookup: b.make(lookup),
            trade_update: b.make(update),
            trade_order: b.make(&call(
                "oltplab_bk_trade_order",
                "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?",
            )),
            trade_result: b.make(&call("oltplab_bk_trade_result", "?, ?, ?")),
            market_feed: b.make(feed),
        })
    }
}

/// Creates or replaces the functions or procedures in the database `conn` is connected to.
pub fn install(conn: &mut dyn Conn) -> DbResult<()> {
    match conn.dialect() {
        Dialect::Postgres => conn.batch(POSTGRES_SQL),
        Dialect::Mysql => conn.batch(MYSQL_SQL),
        Dialect::Sqlite => Err(DbError::other(
            "SQLite runs the brokerage in-process: it has no server-side procedures",
        )),
    }
}

fn flag(b: bool) -> P<'static> {
    P::I(b as i64)
}

/// Runs one transaction as one call (or its one statement) in one round trip
/// ([`call_transaction`]); `next_trade_id` hands out Trade-Order's id. On an error the caller
/// rolls back (an extra ROLLBACK after a transaction that ended is harmless).
pub fn execute(
    conn: &mut dyn Conn,
    p: &Procedures,
    st: &Statements,
    input: &Input,
    next_trade_id: &dyn Fn() -> i64,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let now = crate::sql::now_us();
    let mode = match input {
        Input::TradeOrder(_)
        | Input::TradeResult(_)
        | Input::MarketFeed(_)
        | Input::Lookup { update: true, .. } => TxMode::Write,
        // One SELECT, or a call of a STABLE function: its one snapshot.
        _ => TxMode::ReadStatement,
    };
    // Trade-Order's id is drawn here, as the client-side transaction draws it.
    let mut t_id = 0;
    let (text, ints, more) = (&mut s.text, &mut s.ids, &mut s.more_ids);
    let (stmt, params): (&Stmt, Vec<P>) = match input {
        Input::BrokerVolume {
            sector,
            first_broker,
            last_broker,
        } => (
            st.broker_volume(),
            vec![P::I(*sector), P::I(*first_broker), P::I(*last_broker)],
        ),
        Input::CustomerPosition {
            customer,
            by_tax_id,
            history,
            account_index,
        } => (
            &p.customer_position,
            vec![
                P::I(*customer),
                flag(*by_tax_id),
                flag(*history),
                P::I(*account_index as i64),
            ],
        ),
        Input::MarketWatch(by) => {
            let (stmt, key) = st.market_watch(by);
            (stmt, vec![P::I(watch_day()), P::I(key)])
        }
        Input::SecurityDetail {
            symbol,
            start_day,
            days,
        } => (
            &p.security_detail,
            vec![P::S(symbol), P::I(*start_day), P::I(*days)],
        ),
        Input::Lookup { by, update } => {
            ints.clear();
            text.clear();
            let (frame, account, symbol, from, to) = match by {
                LookupBy::Ids(ids) => {
                    ints.extend(ids);
                    json_array(ids.iter().map(|t| t.to_string()), text);
                    (1, P::Null, P::Null, P::Null, P::Null)
                }
                LookupBy::Account { account, from, to } => {
                    (2, P::I(*account), P::Null, P::T(*from), P::T(*to))
                }
                LookupBy::Security { symbol, from, to } => {
                    (3, P::Null, P::S(symbol), P::T(*from), P::T(*to))
                }
                LookupBy::HoldingHistory { account, from } => {
                    (4, P::I(*account), P::Null, P::T(*from), P::Null)
                }
            };
            let ids_param = match (p.dialect, frame) {
                (Dialect::Postgres, _) => P::Ints(ints),
                (_, 1) => P::S(text),
                _ => P::Null,
            };
            (
                if *update {
                    &p.trade_update
                } else {
                    &p.trade_lookup
                },
                vec![P::I(frame), ids_param, account, symbol, from, to],
            )
        }
        Input::TradeOrder(o) => {
            t_id = next_trade_id();
            (&p.trade_order, order_params(o, t_id, now))
        }
        Input::TradeStatus { account } => (&p.trade_status, vec![P::I(*account)]),
        Input::TradeResult(o) => (
            &p.trade_result,
            vec![P::I(o.t_id), P::I(o.price_cents), P::T(now)],
        ),
        Input::MarketFeed(ticks) if p.dialect == Dialect::Mysql => {
            text.clear();
            json_array(
                ticks
                    .iter()
                    .map(|t| format!("[\"{}\",{},{}]", t.symbol, t.price_cents, t.qty)),
                text,
            );
            (&p.market_feed, vec![P::S(text), P::T(now)])
        }
        Input::MarketFeed(ticks) => {
            text.clear();
            ints.clear();
            more.clear();
            for (k, t) in ticks.iter().enumerate() {
                if k > 0 {
                    text.push(',');
                }
                text.push_str(&t.symbol);
                ints.push(t.price_cents);
                more.push(t.qty);
            }
            (
                &p.market_feed,
                vec![P::S(text), P::Ints(ints), P::Ints(more), P::T(now)],
            )
        }
    };
    if !call_transaction(conn, mode, stmt, &params, &mut s.rows)? {
        return Ok(Outcome::RolledBack);
    }
    let rows = &s.rows;
    Ok(match input {
        Input::TradeOrder(_) => {
            if rows.is_empty() {
                return Err(DbError::other("Trade-Order's function returned no row"));
            }
            let (tt, symbol, qty, price_cents) = (
                rows.get(0, 0).str().to_string(),
                rows.get(0, 1).str().to_string(),
                rows.get(0, 2).i64(),
                rows.get(0, 3).i64(),
            );
            if super::gen::is_market(&tt) {
                Outcome::Submitted(Order {
                    t_id,
                    symbol,
                    qty,
                    price_cents,
                })
            } else {
                Outcome::Pending { t_id, symbol }
            }
        }
        // No row: the trade was completed already (never by oltplab's market).
        Input::TradeResult(o) if !rows.is_empty() => Outcome::Executed(Tick {
            symbol: rows.get(0, 0).str().to_string(),
            price_cents: o.price_cents,
            qty: rows.get(0, 1).i64(),
        }),
        Input::MarketFeed(ticks) => Outcome::Triggered(
            (0..rows.len())
                .map(|r| {
                    let tick = &ticks[(rows.get(r, 2).i64() - 1) as usize];
                    Order {
                        t_id: rows.get(r, 0).i64(),
                        symbol: tick.symbol.clone(),
                        qty: rows.get(r, 1).i64(),
                        price_cents: tick.price_cents,
                    }
                })
                .collect(),
        ),
        _ => Outcome::Committed,
    })
}

/// `items` as a JSON array into `out`.
fn json_array(items: impl Iterator<Item = String>, out: &mut String) {
    out.push('[');
    for (k, item) in items.enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(&item);
    }
    out.push(']');
}

fn order_params(o: &OrderInput, t_id: i64, now: i64) -> Vec<P<'_>> {
    vec![
        P::I(o.account),
        P::S(&o.buy_symbol),
        P::S(o.trade_type),
        P::I(o.qty),
        flag(o.is_cash),
        flag(o.lifo),
        P::I(o.limit_offset_bp),
        P::F(o.pick),
        flag(o.roll_back),
        P::I(t_id),
        P::T(now),
    ]
}
