//! The ten transactions, each written once for the three engines, with the access paths that
//! decide their I/O: Trade-Status reads an account's 50 latest trades, Customer-Position its
//! holdings and latest trades, Trade-Lookup and Trade-Update scan account or security time ranges,
//! Trade-Order writes a trade (and a request for a limit order), Trade-Result completes it (trade,
//! holdings, settlement, cash, history, broker and account rows), Market-Feed moves prices and
//! triggers limit orders.

use super::gen::{is_buy, is_market, match_lots, Lot};
use super::{
    charge_cents, commission_cents, settlement_cents, tier_of, CASH_ACCOUNT, DAY_US, MARGIN,
};
use crate::sql::{Conn, DbError, DbResult, Dialect, Rows, Stmt, StmtBuilder, TxMode, P};

/// The transaction types; the first eight are the customers' (terminals), the last two the
/// market's (the market emulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TxType {
    BrokerVolume,
    CustomerPosition,
    MarketWatch,
    SecurityDetail,
    TradeLookup,
    TradeOrder,
    TradeStatus,
    TradeUpdate,
    TradeResult,
    MarketFeed,
}

impl TxType {
    pub const ALL: [TxType; 10] = [
        TxType::BrokerVolume,
        TxType::CustomerPosition,
        TxType::MarketWatch,
        TxType::SecurityDetail,
        TxType::TradeLookup,
        TxType::TradeOrder,
        TxType::TradeStatus,
        TxType::TradeUpdate,
        TxType::TradeResult,
        TxType::MarketFeed,
    ];
    /// The types the terminals draw.
    pub const CUSTOMER: [TxType; 8] = [
        TxType::BrokerVolume,
        TxType::CustomerPosition,
        TxType::MarketWatch,
        TxType::SecurityDetail,
        TxType::TradeLookup,
        TxType::TradeOrder,
        TxType::TradeStatus,
        TxType::TradeUpdate,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    /// Its tag in traces (distinct from TPC-C's 1–5; named by [`oltplab_trace::tag_name`]).
    pub fn tag(self) -> u8 {
        self as u8 + oltplab_trace::BROKERAGE_FIRST_TAG
    }

    /// The types' names, in [`TxType::ALL`] order (the driver's kinds).
    pub const NAMES: [&'static str; 10] = [
        "broker_volume",
        "customer_position",
        "market_watch",
        "security_detail",
        "trade_lookup",
        "trade_order",
        "trade_status",
        "trade_update",
        "trade_result",
        "market_feed",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// EGen's mix, per 1,000 transactions (Trade-Result and Market-Feed follow from the orders).
    pub fn weight_per_mille(self) -> u32 {
        match self {
            TxType::BrokerVolume => 49,
            TxType::CustomerPosition => 130,
            TxType::MarketWatch => 180,
            TxType::SecurityDetail => 140,
            TxType::TradeLookup => 80,
            TxType::TradeOrder => 101,
            TxType::TradeStatus => 190,
            TxType::TradeUpdate => 20,
            TxType::TradeResult => 100,
            TxType::MarketFeed => 10,
        }
    }

    pub fn read_only(self) -> bool {
        !matches!(
            self,
            TxType::TradeOrder | TxType::TradeUpdate | TxType::TradeResult | TxType::MarketFeed
        )
    }
}

/// What a transaction works on, drawn by the driver.
#[derive(Clone, Debug)]
pub enum Input {
    BrokerVolume {
        sector: i64,
        first_broker: i64,
        last_broker: i64,
    },
    CustomerPosition {
        customer: i64,
        by_tax_id: bool,
        history: bool,
        account_index: usize,
    },
    MarketWatch(WatchBy),
    SecurityDetail {
        symbol: String,
        start_day: i64,
        days: i64,
    },
    /// Trade-Lookup, or with `update` Trade-Update.
    Lookup {
        by: LookupBy,
        update: bool,
    },
    TradeOrder(OrderInput),
    TradeStatus {
        account: i64,
    },
    TradeResult(Order),
    MarketFeed(Vec<Tick>),
}

#[derive(Clone, Debug)]
pub enum WatchBy {
    /// The securities the customer's accounts hold (TPC-E: the customer's watch list).
    Customer(i64),
    /// An industry's securities.
    Industry(i64),
    /// One account's holdings.
    Account(i64),
}

#[derive(Clone, Debug)]
pub enum LookupBy {
    /// Up to 20 trades by id.
    Ids(Vec<i64>),
    /// An account's trades in a time range (µs), at most 20.
    Account { account: i64, from: i64, to: i64 },
    /// A security's trades in a time range (µs), at most 20.
    Security { symbol: String, from: i64, to: i64 },
    /// An account's first trade after a time, and the holding history of its lots.
    HoldingHistory { account: i64, from: i64 },
}

#[derive(Clone, Debug)]
pub struct OrderInput {
    pub account: i64,
    /// Buy this security unless the account holds what it sells (drawn by the transaction).
    pub buy_symbol: String,
    pub trade_type: &'static str,
    pub qty: i64,
    pub is_cash: bool,
    pub lifo: bool,
    /// How far from the last price a limit order is set, in basis points.
    pub limit_offset_bp: i64,
    /// A uniform draw in [0, 1) that picks the holding a sell order sells.
    pub pick: f64,
    /// 1 % of orders roll back after all their work (TPC-E's roll_it_back).
    pub roll_back: bool,
}

/// A trade the market executes: its id, security, quantity, and the price it executes at.
#[derive(Clone, Debug, PartialEq)]
pub struct Order {
    pub t_id: i64,
    pub symbol: String,
    pub qty: i64,
    pub price_cents: i64,
}

/// A price change Market-Feed applies.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub symbol: String,
    pub price_cents: i64,
    pub qty: i64,
}

/// How a transaction ended, and what it hands to the market emulator.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Committed,
    /// Trade-Order's intended rollback.
    RolledBack,
    /// A Trade-Order of a market order committed: the market executes it.
    Submitted(Order),
    /// A Trade-Order of a limit order committed: pending on this security until Market-Feed
    /// triggers it.
    Pending {
        t_id: i64,
        symbol: String,
    },
    /// Market-Feed committed and triggered these limit orders.
    Triggered(Vec<Order>),
    /// Trade-Result committed: the trade moved its security's price.
    Executed(Tick),
}

/// Every statement, prepared once per connection.
pub struct Statements {
    bv: Stmt,
    cp_tax: Stmt,
    cp_customer: Stmt,
    cp_assets: Stmt,
    cp_history: Stmt,
    mw_customer: Stmt,
    mw_industry: Stmt,
    mw_account: Stmt,
    sd_security: Stmt,
    sd_days: Stmt,
    sd_last: Stmt,
    tl_details: Stmt,
    tl_history: Stmt,
    tl_account: Stmt,
    tl_security: Stmt,
    tl_first_after: Stmt,
    tl_hh: Stmt,
    tu_exec: Stmt,
    tu_settlement: Stmt,
    tu_cash: Stmt,
    ts_trades: Stmt,
    ts_names: Stmt,
    to_account: Stmt,
    to_customer: Stmt,
    to_broker: Stmt,
    to_security: Stmt,
    to_summaries: Stmt,
    to_lots: Stmt,
    to_insert: Stmt,
    to_request: Stmt,
    history_insert: Stmt,
    tr_trade: Stmt,
    tr_account: Stmt,
    tr_summary: Stmt,
    tr_lots: Stmt,
    tr_hh: Stmt,
    tr_lot_update: Stmt,
    tr_lot_delete: Stmt,
    tr_lot_insert: Stmt,
    tr_summary_insert: Stmt,
    tr_summary_update: Stmt,
    tr_summary_delete: Stmt,
    tr_complete: Stmt,
    tr_broker: Stmt,
    tr_settlement: Stmt,
    tr_balance: Stmt,
    tr_cash: Stmt,
    tr_read_balance: Stmt,
    mf_last: Stmt,
    mf_requests: Stmt,
    mf_submit: Stmt,
    mf_delete_request: Stmt,
}

impl Statements {
    pub fn new(dialect: Dialect) -> Statements {
        Self::numbered_by(&mut StmtBuilder::new(dialect))
    }

    /// The statements, numbered by `b` (which numbers what is made after them: `--procedures`).
    pub fn numbered_by(b: &mut StmtBuilder) -> Statements {
        let dialect = b.dialect.expect("builder has a dialect");
        let fu = dialect.for_update();
        // Trade-Lookup's and Trade-Update's trades: up to 20, padded with 0 (no trade).
        let ids = vec!["?"; LOOKUP_TRADES].join(", ");
        // Market-Watch: the securities' market value now and at the day's close, in one query.
        let watch = |which: &str| {
            format!(
                "SELECT COALESCE(SUM(lt_price * s_num_out), 0), COALESCE(SUM(dm_close * s_num_out), 0) FROM security \
                 JOIN last_trade ON lt_s_symb = s_symb LEFT JOIN daily_market ON dm_s_symb = s_symb AND dm_date = ? \
                 WHERE {which}"
            )
        };
        let lots = |order: &str| {
            format!(
                "SELECT h_t_id, h_qty FROM holding WHERE h_ca_id = ? AND h_s_symb = ? ORDER BY h_dts {order}, h_t_id {order}{fu}"
            )
        };
        Statements {
            bv: b.make(
                "SELECT tr_b_id, SUM(tr_qty * tr_bid_price) FROM trade_request JOIN security ON s_symb = tr_s_symb \
                 WHERE s_sector = ? AND tr_b_id BETWEEN ? AND ? GROUP BY tr_b_id ORDER BY 2 DESC",
            ),
            cp_tax: b.make("SELECT c_id FROM customer WHERE c_tax_id = ?"),
            cp_customer: b.make(
                "SELECT c_st_id, c_l_name, c_f_name, c_tier, c_dob, c_email FROM customer WHERE c_id = ?",
            ),
            cp_assets: b.make(
                "SELECT ca_id, ca_bal, COALESCE(SUM(hs_qty * lt_price), 0) FROM customer_account \
                 LEFT JOIN holding_summary ON hs_ca_id = ca_id LEFT JOIN last_trade ON lt_s_symb = hs_s_symb \
                 WHERE ca_c_id = ? GROUP BY ca_id, ca_bal ORDER BY 3 ASC LIMIT 10",
            ),
            cp_history: b.make(
                "SELECT t.t_id, t.t_s_symb, t.t_qty, th_st_id, th_dts FROM (SELECT t_id, t_s_symb, t_qty, t_dts \
                 FROM trade WHERE t_ca_id = ? ORDER BY t_dts DESC LIMIT 10) t JOIN trade_history ON th_t_id = t.t_id \
                 ORDER BY th_dts DESC LIMIT 30",
            ),
            mw_customer: b.make(&watch(
                "s_symb IN (SELECT hs_s_symb FROM holding_summary JOIN customer_account ON ca_id = hs_ca_id WHERE ca_c_id = ?)",
            )),
            mw_industry: b.make(&watch("s_industry = ?")),
            mw_account: b.make(&watch(
                "s_symb IN (SELECT hs_s_symb FROM holding_summary WHERE hs_ca_id = ?)",
            )),
            sd_security: b.make(
                "SELECT s_name, s_sector, s_industry, s_num_out, s_pe, s_dividend, s_yield, s_pad FROM security WHERE s_symb = ?",
            ),
            sd_days: b.make(
                "SELECT dm_date, dm_close, dm_high, dm_low, dm_vol FROM daily_market \
                 WHERE dm_s_symb = ? AND dm_date >= ? ORDER BY dm_date LIMIT ?",
            ),
            sd_last: b.make("SELECT lt_price, lt_open_price, lt_vol FROM last_trade WHERE lt_s_symb = ?"),
            tl_details: b.make(&format!(
                "SELECT t_id, t_bid_price, t_exec_name, t_is_cash, t_trade_price, se_amt, se_cash_due_date, se_cash_type, \
                 ct_amt, ct_dts, ct_name FROM trade LEFT JOIN settlement ON se_t_id = t_id \
                 LEFT JOIN cash_transaction ON ct_t_id = t_id WHERE t_id IN ({ids})"
            )),
            tl_history: b.make(&format!(
                "SELECT th_t_id, th_dts, th_st_id FROM trade_history WHERE th_t_id IN ({ids}) ORDER BY th_t_id, th_dts"
            )),
            tl_account: b.make(
                "SELECT t_id FROM trade \
                 WHERE t_ca_id = ? AND t_dts >= ? AND t_dts <= ? ORDER BY t_dts LIMIT 20",
            ),
            tl_security: b.make(
                "SELECT t_id FROM trade \
                 WHERE t_s_symb = ? AND t_dts >= ? AND t_dts <= ? ORDER BY t_dts LIMIT 20",
            ),
            tl_first_after: b.make(
                "SELECT t_id FROM trade WHERE t_ca_id = ? AND t_dts >= ? ORDER BY t_dts LIMIT 1",
            ),
            tl_hh: b.make(
                "SELECT hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty FROM holding_history \
                 WHERE hh_h_t_id IN (SELECT hh_h_t_id FROM holding_history WHERE hh_t_id = ?) LIMIT 20",
            ),
            // TPC-E swaps " X " and " " in the executor's name, the long and the short name of
            // the cash type, and here a suffix of the cash transaction's name.
            tu_exec: b.make(&format!(
                "UPDATE trade SET t_exec_name = CASE WHEN t_exec_name LIKE '% X %' THEN REPLACE(t_exec_name, ' X ', ' ') \
                 ELSE REPLACE(t_exec_name, ' ', ' X ') END WHERE t_id IN ({ids})"
            )),
            tu_settlement: b.make(&format!(
                "UPDATE settlement SET se_cash_type = CASE se_cash_type WHEN '{CASH_ACCOUNT}' THEN 'Cash' \
                 WHEN 'Cash' THEN '{CASH_ACCOUNT}' WHEN '{MARGIN}' THEN 'Margin Account' ELSE '{MARGIN}' END \
                 WHERE se_t_id IN ({ids})"
            )),
            tu_cash: b.make(&format!(
                "UPDATE cash_transaction SET ct_name = CASE WHEN ct_name LIKE '% (updated)' \
                 THEN SUBSTR(ct_name, 1, LENGTH(ct_name) - 10) ELSE CONCAT(ct_name, ' (updated)') END \
                 WHERE ct_t_id IN ({ids})"
            )),
            ts_trades: b.make(
                "SELECT t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_exec_name, s_name \
                 FROM trade JOIN security ON s_symb = t_s_symb WHERE t_ca_id = ? ORDER BY t_dts DESC LIMIT 50",
            ),
            ts_names: b.make(
                "SELECT c_l_name, c_f_name, b_name FROM customer_account JOIN customer ON c_id = ca_c_id \
                 JOIN broker ON b_id = ca_b_id WHERE ca_id = ?",
            ),
            to_account: b.make(
                "SELECT ca_name, ca_b_id, ca_c_id, ca_tax_st FROM customer_account WHERE ca_id = ?",
            ),
            to_customer: b.make("SELECT c_f_name, c_l_name, c_tier, c_tax_id FROM customer WHERE c_id = ?"),
            to_broker: b.make("SELECT b_name FROM broker WHERE b_id = ?"),
            to_security: b.make(
                "SELECT s_name, s_num_out, lt_price FROM security JOIN last_trade ON lt_s_symb = s_symb WHERE s_symb = ?",
            ),
            to_summaries: b.make(
                "SELECT hs_s_symb, hs_qty FROM holding_summary WHERE hs_ca_id = ? ORDER BY hs_s_symb",
            ),
            to_lots: b.make(
                "SELECT h_qty, h_price FROM holding WHERE h_ca_id = ? AND h_s_symb = ? ORDER BY h_dts DESC",
            ),
            to_insert: b.make(
                "INSERT INTO trade (t_id, t_dts, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_bid_price, t_ca_id, \
                 t_exec_name, t_trade_price, t_chrg, t_comm, t_tax, t_lifo) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, 0, ?)",
            ),
            to_request: b.make(
                "INSERT INTO trade_request (tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price, tr_b_id) VALUES (?, ?, ?, ?, ?, ?)",
            ),
            history_insert: b.make("INSERT INTO trade_history (th_t_id, th_dts, th_st_id) VALUES (?, ?, ?)"),
            tr_trade: b.make(&format!(
                "SELECT t_ca_id, t_tt_id, t_s_symb, t_qty, t_chrg, t_lifo, t_is_cash, t_st_id FROM trade WHERE t_id = ?{fu}"
            )),
            tr_account: b.make("SELECT ca_b_id, ca_c_id FROM customer_account WHERE ca_id = ?"),
            tr_summary: b.make(&format!(
                "SELECT hs_qty FROM holding_summary WHERE hs_ca_id = ? AND hs_s_symb = ?{fu}"
            )),
            // Oldest first; LIFO walks them from the end.
            tr_lots: b.make(&lots("ASC")),
            tr_hh: b.make(
                "INSERT INTO holding_history (hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty) VALUES (?, ?, ?, ?)",
            ),
            tr_lot_update: b.make("UPDATE holding SET h_qty = ? WHERE h_t_id = ?"),
            tr_lot_delete: b.make("DELETE FROM holding WHERE h_t_id = ?"),
            tr_lot_insert: b.make(
                "INSERT INTO holding (h_t_id, h_ca_id, h_s_symb, h_dts, h_price, h_qty) VALUES (?, ?, ?, ?, ?, ?)",
            ),
            // Two Trade-Results of one account and security may both find no summary (no row to
            // lock at read committed): the second adds to the first's.
            tr_summary_insert: b.make(&format!(
                "INSERT INTO holding_summary (hs_ca_id, hs_s_symb, hs_qty) VALUES (?, ?, ?) {}",
                match dialect {
                    Dialect::Mysql => "ON DUPLICATE KEY UPDATE hs_qty = hs_qty + VALUES(hs_qty)",
                    _ => "ON CONFLICT (hs_ca_id, hs_s_symb) DO UPDATE SET hs_qty = holding_summary.hs_qty + excluded.hs_qty",
                }
            )),
            tr_summary_update: b.make(
                "UPDATE holding_summary SET hs_qty = ? WHERE hs_ca_id = ? AND hs_s_symb = ?",
            ),
            tr_summary_delete: b.make(
                "DELETE FROM holding_summary WHERE hs_ca_id = ? AND hs_s_symb = ?",
            ),
            tr_complete: b.make(
                "UPDATE trade SET t_comm = ?, t_dts = ?, t_st_id = 'CMPT', t_trade_price = ? WHERE t_id = ?",
            ),
            tr_broker: b.make(
                "UPDATE broker SET b_comm_total = b_comm_total + ?, b_num_trades = b_num_trades + 1 WHERE b_id = ?",
            ),
            tr_settlement: b.make(
                "INSERT INTO settlement (se_t_id, se_cash_type, se_cash_due_date, se_amt) VALUES (?, ?, ?, ?)",
            ),
            tr_balance: b.make("UPDATE customer_account SET ca_bal = ca_bal + ? WHERE ca_id = ?"),
            tr_cash: b.make(
                "INSERT INTO cash_transaction (ct_t_id, ct_dts, ct_amt, ct_name) VALUES (?, ?, ?, ?)",
            ),
            tr_read_balance: b.make("SELECT ca_bal FROM customer_account WHERE ca_id = ?"),
            mf_last: b.make(
                "UPDATE last_trade SET lt_price = ?, lt_vol = lt_vol + ?, lt_dts = ? WHERE lt_s_symb = ?",
            ),
            mf_requests: b.make(&format!(
                "SELECT tr_t_id, tr_qty FROM trade_request WHERE tr_s_symb = ? AND \
                 ((tr_tt_id = 'TSL' AND tr_bid_price >= ?) OR (tr_tt_id = 'TLS' AND tr_bid_price <= ?) \
                 OR (tr_tt_id = 'TLB' AND tr_bid_price >= ?)) ORDER BY tr_t_id{fu}"
            )),
            mf_submit: b.make("UPDATE trade SET t_dts = ?, t_st_id = 'SBMT' WHERE t_id = ?"),
            mf_delete_request: b.make("DELETE FROM trade_request WHERE tr_t_id = ?"),
        }
    }
}

impl Statements {
    /// Broker-Volume's one statement (sector, first and last broker).
    pub(super) fn broker_volume(&self) -> &Stmt {
        &self.bv
    }

    /// Market-Watch's one statement and its key (the day and the key are its parameters).
    pub(super) fn market_watch(&self, by: &WatchBy) -> (&Stmt, i64) {
        match by {
            WatchBy::Customer(c) => (&self.mw_customer, *c),
            WatchBy::Industry(i) => (&self.mw_industry, *i),
            WatchBy::Account(a) => (&self.mw_account, *a),
        }
    }
}

/// Trades Trade-Lookup and Trade-Update look at (TPC-E: max_trades 20).
pub const LOOKUP_TRADES: usize = 20;

/// Reusable buffers of one terminal.
#[derive(Default)]
pub struct Scratch {
    pub(super) rows: Rows,
    more: Rows,
    pub(super) ids: Vec<i64>,
    pub(super) more_ids: Vec<i64>,
    pub(super) text: String,
}

fn missing(what: &str) -> DbError {
    DbError::other(format!(
        "{what} is missing: the database does not hold a complete brokerage load; load it again"
    ))
}

fn cents(v: &crate::sql::Val) -> i64 {
    (v.f64() * 100.0).round() as i64
}

fn money(c: i64) -> P<'static> {
    P::F(c as f64 / 100.0)
}

/// Runs one transaction from BEGIN to COMMIT (or the intended rollback); `next_trade_id` hands out
/// ids of new trades. On an error the caller rolls back.
pub fn execute(
    conn: &mut dyn Conn,
    st: &Statements,
    input: &Input,
    next_trade_id: &dyn Fn() -> i64,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let mode = match input {
        Input::TradeOrder(_)
        | Input::TradeResult(_)
        | Input::MarketFeed(_)
        | Input::Lookup { update: true, .. } => TxMode::Write,
        _ => TxMode::Read,
    };
    conn.begin(mode)?;
    let outcome = match input {
        Input::BrokerVolume {
            sector,
            first_broker,
            last_broker,
        } => {
            conn.run(
                st.broker_volume(),
                &[P::I(*sector), P::I(*first_broker), P::I(*last_broker)],
                &mut s.rows,
            )?;
            Outcome::Committed
        }
        Input::CustomerPosition {
            customer,
            by_tax_id,
            history,
            account_index,
        } => customer_position(conn, st, *customer, *by_tax_id, *history, *account_index, s)?,
        Input::MarketWatch(by) => market_watch(conn, st, by, s)?,
        Input::SecurityDetail {
            symbol,
            start_day,
            days,
        } => {
            conn.run(&st.sd_security, &[P::S(symbol)], &mut s.rows)?;
            if s.rows.is_empty() {
                return Err(missing(&format!("security {symbol}")));
            }
            conn.run(
                &st.sd_days,
                &[P::S(symbol), P::I(*start_day), P::I(*days)],
                &mut s.rows,
            )?;
            conn.run(&st.sd_last, &[P::S(symbol)], &mut s.rows)?;
            Outcome::Committed
        }
        Input::Lookup { by, update } => lookup(conn, st, by, *update, s)?,
        Input::TradeStatus { account } => {
            conn.run(&st.ts_trades, &[P::I(*account)], &mut s.rows)?;
            conn.run(&st.ts_names, &[P::I(*account)], &mut s.rows)?;
            if s.rows.is_empty() {
                return Err(missing(&format!("account {account}")));
            }
            Outcome::Committed
        }
        Input::TradeOrder(o) => trade_order(conn, st, o, next_trade_id, s)?,
        Input::TradeResult(o) => trade_result(conn, st, o, s)?,
        Input::MarketFeed(ticks) => market_feed(conn, st, ticks, s)?,
    };
    match outcome {
        Outcome::RolledBack => conn.rollback()?,
        _ => conn.commit()?,
    }
    Ok(outcome)
}

fn customer_position(
    conn: &mut dyn Conn,
    st: &Statements,
    customer: i64,
    by_tax_id: bool,
    history: bool,
    account_index: usize,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let mut c = customer;
    if by_tax_id {
        let tax = format!("TAX{customer}");
        conn.run(&st.cp_tax, &[P::S(&tax)], &mut s.rows)?;
        if s.rows.is_empty() {
            return Err(missing(&format!("customer with tax id {tax}")));
        }
        c = s.rows.get(0, 0).i64();
    }
    conn.run(&st.cp_customer, &[P::I(c)], &mut s.rows)?;
    conn.run(&st.cp_assets, &[P::I(c)], &mut s.rows)?;
    if s.rows.is_empty() {
        return Err(missing(&format!("the accounts of customer {c}")));
    }
    if history {
        let account = s.rows.get(account_index % s.rows.len(), 0).i64();
        conn.run(&st.cp_history, &[P::I(account)], &mut s.rows)?;
    }
    Ok(Outcome::Committed)
}

/// The day whose close Market-Watch compares with: the last of the daily market history.
pub(super) fn watch_day() -> i64 {
    super::FIRST_TRADING_DAY - 1
}

fn market_watch(
    conn: &mut dyn Conn,
    st: &Statements,
    by: &WatchBy,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let (stmt, key) = st.market_watch(by);
    conn.run(stmt, &[P::I(watch_day()), P::I(key)], &mut s.rows)?;
    Ok(Outcome::Committed)
}

/// Trade-Lookup (reads) and Trade-Update (the same frames, changing a field of each trade found:
/// the executor's name, the settlement's cash type, the cash transaction's name).
fn lookup(
    conn: &mut dyn Conn,
    st: &Statements,
    by: &LookupBy,
    update: bool,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    s.ids.clear();
    match by {
        LookupBy::Ids(ids) => s.ids.extend(ids),
        LookupBy::Account { account, from, to } => {
            conn.run(
                &st.tl_account,
                &[P::I(*account), P::T(*from), P::T(*to)],
                &mut s.rows,
            )?;
            s.ids
                .extend((0..s.rows.len()).map(|r| s.rows.get(r, 0).i64()));
        }
        LookupBy::Security { symbol, from, to } => {
            conn.run(
                &st.tl_security,
                &[P::S(symbol), P::T(*from), P::T(*to)],
                &mut s.rows,
            )?;
            s.ids
                .extend((0..s.rows.len()).map(|r| s.rows.get(r, 0).i64()));
        }
        LookupBy::HoldingHistory { account, from } => {
            conn.run(
                &st.tl_first_after,
                &[P::I(*account), P::T(*from)],
                &mut s.rows,
            )?;
            if !s.rows.is_empty() {
                let t = s.rows.get(0, 0).i64();
                conn.run(&st.tl_hh, &[P::I(t)], &mut s.rows)?;
            }
            return Ok(Outcome::Committed);
        }
    }
    if s.ids.is_empty() {
        return Ok(Outcome::Committed);
    }
    s.ids.resize(LOOKUP_TRADES, 0);
    let ids: Vec<P> = s.ids.iter().map(|&t| P::I(t)).collect();
    if update {
        let stmt = match by {
            LookupBy::Ids(_) => &st.tu_exec,
            LookupBy::Account { .. } => &st.tu_settlement,
            _ => &st.tu_cash,
        };
        conn.run(stmt, &ids, &mut s.more)?;
    }
    conn.run(&st.tl_details, &ids, &mut s.rows)?;
    conn.run(&st.tl_history, &ids, &mut s.more)?;
    Ok(Outcome::Committed)
}

fn trade_order(
    conn: &mut dyn Conn,
    st: &Statements,
    o: &OrderInput,
    next_trade_id: &dyn Fn() -> i64,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    conn.run(&st.to_account, &[P::I(o.account)], &mut s.rows)?;
    if s.rows.is_empty() {
        return Err(missing(&format!("account {}", o.account)));
    }
    let (broker, customer) = (s.rows.get(0, 1).i64(), s.rows.get(0, 2).i64());
    conn.run(&st.to_customer, &[P::I(customer)], &mut s.rows)?;
    let tier = if s.rows.is_empty() {
        tier_of(customer)
    } else {
        s.rows.get(0, 2).i64()
    };
    conn.run(&st.to_broker, &[P::I(broker)], &mut s.rows)?;
    let exec_name = if s.rows.is_empty() {
        String::from("Broker")
    } else {
        s.rows.get(0, 0).str().to_string()
    };
    // A sell sells what the account holds; with nothing held it becomes a buy.
    let mut tt = o.trade_type;
    let mut qty = o.qty;
    let mut symbol = o.buy_symbol.clone();
    if !is_buy(tt) {
        conn.run(&st.to_summaries, &[P::I(o.account)], &mut s.rows)?;
        let held: Vec<usize> = (0..s.rows.len())
            .filter(|&r| s.rows.get(r, 1).i64() >= 100)
            .collect();
        if held.is_empty() {
            tt = if is_market(tt) { "TMB" } else { "TLB" };
        } else {
            let r = held[((o.pick * held.len() as f64) as usize).min(held.len() - 1)];
            symbol = s.rows.get(r, 0).str().to_string();
            qty = qty.min(s.rows.get(r, 1).i64() / 100 * 100);
        }
    }
    conn.run(&st.to_security, &[P::S(&symbol)], &mut s.rows)?;
    if s.rows.is_empty() {
        return Err(missing(&format!("security {symbol}")));
    }
    let price = cents(s.rows.get(0, 2));
    // The lots of the security the account holds, as TPC-E reads them to estimate the tax.
    conn.run(&st.to_lots, &[P::I(o.account), P::S(&symbol)], &mut s.rows)?;
    let bid = if is_market(tt) {
        price
    } else {
        // A limit buy waits for the price to fall to the limit, a limit sell for it to rise, a
        // stop-loss for it to fall.
        let off = price * o.limit_offset_bp / 10_000;
        match tt {
            "TLB" => price - off,
            "TLS" => price + off,
            _ => price - off,
        }
        .max(1)
    };
    let charge = charge_cents(tier);
    let comm = commission_cents(tier, bid * qty);
    let t_id = next_trade_id();
    let now = crate::sql::now_us();
    let status = if is_market(tt) { "SBMT" } else { "PNDG" };
    conn.run(
        &st.to_insert,
        &[
            P::I(t_id),
            P::T(now),
            P::S(status),
            P::S(tt),
            P::I(o.is_cash as i64),
            P::S(&symbol),
            P::I(qty),
            money(bid),
            P::I(o.account),
            P::S(&exec_name),
            money(charge),
            money(comm),
            P::I(o.lifo as i64),
        ],
        &mut s.more,
    )?;
    if !is_market(tt) {
        conn.run(
            &st.to_request,
            &[
                P::I(t_id),
                P::S(tt),
                P::S(&symbol),
                P::I(qty),
                money(bid),
                P::I(broker),
            ],
            &mut s.more,
        )?;
    }
    conn.run(
        &st.history_insert,
        &[P::I(t_id), P::T(now), P::S(status)],
        &mut s.more,
    )?;
    Ok(if o.roll_back {
        Outcome::RolledBack
    } else if is_market(tt) {
        Outcome::Submitted(Order {
            t_id,
            symbol,
            qty,
            price_cents: price,
        })
    } else {
        Outcome::Pending { t_id, symbol }
    })
}

fn trade_result(
    conn: &mut dyn Conn,
    st: &Statements,
    o: &Order,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    conn.run(&st.tr_trade, &[P::I(o.t_id)], &mut s.rows)?;
    if s.rows.is_empty() {
        return Err(missing(&format!("trade {}", o.t_id)));
    }
    let account = s.rows.get(0, 0).i64();
    let tt = s.rows.get(0, 1).str().to_string();
    let symbol = s.rows.get(0, 2).str().to_string();
    let qty = s.rows.get(0, 3).i64();
    let charge = cents(s.rows.get(0, 4));
    let lifo = s.rows.get(0, 5).i64() == 1;
    let is_cash = s.rows.get(0, 6).i64() == 1;
    if s.rows.get(0, 7).str() != "SBMT" {
        // Completed already (never by oltplab's market, which executes each trade once).
        return Ok(Outcome::Committed);
    }
    conn.run(&st.tr_account, &[P::I(account)], &mut s.rows)?;
    if s.rows.is_empty() {
        return Err(missing(&format!("account {account}")));
    }
    let (broker, customer) = (s.rows.get(0, 0).i64(), s.rows.get(0, 1).i64());
    let now = crate::sql::now_us();

    // Holdings: close lots on the other side, open one with the rest (frames 2 and 3).
    conn.run(&st.tr_summary, &[P::I(account), P::S(&symbol)], &mut s.rows)?;
    let summary = (!s.rows.is_empty()).then(|| s.rows.get(0, 0).i64());
    let signed = if is_buy(&tt) { qty } else { -qty };
    conn.run(&st.tr_lots, &[P::I(account), P::S(&symbol)], &mut s.rows)?;
    let lots: Vec<Lot> = (0..s.rows.len())
        .map(|r| Lot {
            t_id: s.rows.get(r, 0).i64(),
            qty: s.rows.get(r, 1).i64(),
        })
        .collect();
    let (touched, left) = match_lots(&lots, signed, lifo);
    for (i, before, after) in touched {
        let lot = lots[i].t_id;
        conn.run(
            &st.tr_hh,
            &[P::I(lot), P::I(o.t_id), P::I(before), P::I(after)],
            &mut s.more,
        )?;
        if after == 0 {
            conn.run(&st.tr_lot_delete, &[P::I(lot)], &mut s.more)?;
        } else {
            conn.run(&st.tr_lot_update, &[P::I(after), P::I(lot)], &mut s.more)?;
        }
    }
    if left != 0 {
        conn.run(
            &st.tr_hh,
            &[P::I(o.t_id), P::I(o.t_id), P::I(0), P::I(left)],
            &mut s.more,
        )?;
        conn.run(
            &st.tr_lot_insert,
            &[
                P::I(o.t_id),
                P::I(account),
                P::S(&symbol),
                P::T(now),
                money(o.price_cents),
                P::I(left),
            ],
            &mut s.more,
        )?;
    }
    let key = [P::I(account), P::S(&symbol)];
    match summary {
        None => conn.run(
            &st.tr_summary_insert,
            &[key[0], key[1], P::I(signed)],
            &mut s.more,
        )?,
        Some(q) if q + signed == 0 => conn.run(&st.tr_summary_delete, &key, &mut s.more)?,
        Some(q) => conn.run(
            &st.tr_summary_update,
            &[P::I(q + signed), key[0], key[1]],
            &mut s.more,
        )?,
    };

    // The trade completes (frames 4 and 5), its settlement and cash follow (frame 6).
    let value = o.price_cents * qty;
    let comm = commission_cents(tier_of(customer), value);
    conn.run(
        &st.tr_complete,
        &[money(comm), P::T(now), money(o.price_cents), P::I(o.t_id)],
        &mut s.more,
    )?;
    conn.run(
        &st.history_insert,
        &[P::I(o.t_id), P::T(now), P::S("CMPT")],
        &mut s.more,
    )?;
    conn.run(&st.tr_broker, &[money(comm), P::I(broker)], &mut s.more)?;
    let amount = settlement_cents(is_buy(&tt), value, charge, comm);
    conn.run(
        &st.tr_settlement,
        &[
            P::I(o.t_id),
            P::S(if is_cash { CASH_ACCOUNT } else { MARGIN }),
            P::I(now / DAY_US + 2),
            money(amount),
        ],
        &mut s.more,
    )?;
    if is_cash {
        conn.run(&st.tr_balance, &[money(amount), P::I(account)], &mut s.more)?;
        let name = format!("{tt} {qty} shares of {symbol}");
        conn.run(
            &st.tr_cash,
            &[P::I(o.t_id), P::T(now), money(amount), P::S(&name)],
            &mut s.more,
        )?;
    }
    conn.run(&st.tr_read_balance, &[P::I(account)], &mut s.rows)?;
    Ok(Outcome::Executed(Tick {
        symbol,
        price_cents: o.price_cents,
        qty,
    }))
}

fn market_feed(
    conn: &mut dyn Conn,
    st: &Statements,
    ticks: &[Tick],
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let now = crate::sql::now_us();
    let mut triggered = Vec::new();
    for t in ticks {
        conn.run(
            &st.mf_last,
            &[
                money(t.price_cents),
                P::I(t.qty),
                P::T(now),
                P::S(&t.symbol),
            ],
            &mut s.more,
        )?;
        let p = money(t.price_cents);
        conn.run(&st.mf_requests, &[P::S(&t.symbol), p, p, p], &mut s.rows)?;
        s.ids.clear();
        s.ids.extend(
            (0..s.rows.len()).flat_map(|r| [s.rows.get(r, 0).i64(), s.rows.get(r, 1).i64()]),
        );
        for pair in s.ids.chunks(2) {
            let (t_id, qty) = (pair[0], pair[1]);
            conn.run(&st.mf_submit, &[P::T(now), P::I(t_id)], &mut s.more)?;
            conn.run(&st.mf_delete_request, &[P::I(t_id)], &mut s.more)?;
            conn.run(
                &st.history_insert,
                &[P::I(t_id), P::T(now), P::S("SBMT")],
                &mut s.more,
            )?;
            triggered.push(Order {
                t_id,
                symbol: t.symbol.clone(),
                qty,
                price_cents: t.price_cents,
            });
        }
    }
    Ok(Outcome::Triggered(triggered))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_tags_name_the_types() {
        for t in TxType::ALL {
            assert_eq!(oltplab_trace::tag_name(t.tag()), t.name());
        }
        let total: u32 = TxType::ALL.iter().map(|t| t.weight_per_mille()).sum();
        assert_eq!(total, 1000);
    }
}
