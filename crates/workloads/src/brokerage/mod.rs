//! A TPC-E-like brokerage workload ("tpsE-like"; not comparable with audited TPC-E results): the
//! customer, broker and market tables of TPC-E, an initial trade history generated here (no EGen
//! code or files), the ten transactions with EGen's mix, a market emulator that turns submitted
//! orders into Trade-Results and triggers limit orders through Market-Feed, and the invariants a
//! run must keep. docs/brokerage.md says what is kept from TPC-E and what is simplified.

pub mod check;
pub mod driver;
pub mod gen;
pub mod load;
pub mod market;
pub mod procedures;
pub mod schema;
pub mod tx;

use oltplab_core::{Error, Result};

use crate::sql::db_failed;
use crate::sql::Conn;

/// Customers come in load units of this many (TPC-E 2.6.1).
pub const LOAD_UNIT: i64 = 1000;
pub const ACCOUNTS_PER_CUSTOMER: i64 = 5;
/// Securities per load unit (TPC-E: 685 per 1,000 customers).
pub const SECURITIES_PER_UNIT: i64 = 685;
/// Daily market rows per security (five years of trading days).
pub const DAILY_MARKET_DAYS: i64 = 1305;
/// Initial trades per customer over TPC-E's 300 trading days.
pub const TRADES_PER_CUSTOMER_300_DAYS: i64 = 17_280;
/// Customers per broker (TPC-E: 10 brokers per load unit).
pub const CUSTOMERS_PER_BROKER: i64 = 100;
/// The first trading day of the initial history: 2025-01-06 (a Monday), as a day number.
pub const FIRST_TRADING_DAY: i64 = 20_094;
/// Trading hours of a day (TPC-E: 8), from 09:00 UTC.
pub const TRADING_HOURS: i64 = 8;
pub const DAY_US: i64 = 86_400_000_000;
pub const HOUR_US: i64 = 3_600_000_000;

/// What a load made: customers (a multiple of [`LOAD_UNIT`]) and trading days of history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Scale {
    pub customers: i64,
    pub days: i64,
}

impl Scale {
    pub fn accounts(&self) -> i64 {
        self.customers * ACCOUNTS_PER_CUSTOMER
    }

    pub fn securities(&self) -> i64 {
        self.customers * SECURITIES_PER_UNIT / LOAD_UNIT
    }

    pub fn brokers(&self) -> i64 {
        (self.customers / CUSTOMERS_PER_BROKER).max(1)
    }

    /// Initial trades of each account: 17,280 per customer per 300 days, over five accounts.
    pub fn trades_per_account(&self) -> i64 {
        TRADES_PER_CUSTOMER_300_DAYS * self.days / 300 / ACCOUNTS_PER_CUSTOMER
    }

    /// The last trade id of the initial history (ids run from 1, account after account).
    pub fn last_loaded_trade(&self) -> i64 {
        self.accounts() * self.trades_per_account()
    }

    /// When the initial history starts and ends (µs since the epoch).
    pub fn history_us(&self) -> (i64, i64) {
        let start = FIRST_TRADING_DAY * DAY_US;
        (start, start + self.days * DAY_US)
    }
}

/// Security number `n` (1-based) as its symbol.
pub fn symbol(n: i64, out: &mut String) {
    out.push('S');
    let digits = itoa::Buffer::new().format(n).len();
    for _ in digits..7 {
        out.push('0');
    }
    out.push_str(itoa::Buffer::new().format(n));
}

pub fn symbol_string(n: i64) -> String {
    let mut s = String::with_capacity(8);
    symbol(n, &mut s);
    s
}

/// The account's broker: spread over the brokers, fixed for the account.
pub fn broker_of(account: i64, brokers: i64) -> i64 {
    (account.wrapping_mul(0x9E37_79B9) >> 7).rem_euclid(brokers) + 1
}

/// The customer's tier (1–3: 20 %, 60 %, 20 %), which sets its charge and commission rate.
pub fn tier_of(customer: i64) -> i64 {
    match customer.wrapping_mul(0x2545_F491).rem_euclid(10) {
        0 | 1 => 1,
        8 | 9 => 3,
        _ => 2,
    }
}

/// Charge per trade in cents by tier (TPC-E's charge table, simplified to one per tier).
pub fn charge_cents(tier: i64) -> i64 {
    match tier {
        1 => 1000,
        2 => 750,
        _ => 500,
    }
}

/// Commission in cents of a trade worth `value_cents`, by tier (0.40 %, 0.30 %, 0.20 %).
pub fn commission_cents(tier: i64, value_cents: i64) -> i64 {
    let per_10k = match tier {
        1 => 40,
        2 => 30,
        _ => 20,
    };
    value_cents * per_10k / 10_000
}

/// What a settlement or cash transaction moves for a completed trade: a sell credits the value less
/// charge and commission, a buy debits the value plus them.
pub fn settlement_cents(is_buy: bool, value_cents: i64, charge: i64, comm: i64) -> i64 {
    if is_buy {
        -(value_cents + charge + comm)
    } else {
        value_cents - charge - comm
    }
}

/// `se_cash_type` of a cash and a margin trade.
pub const CASH_ACCOUNT: &str = "Cash Account";
pub const MARGIN: &str = "Margin";

/// oltplab's record of a load, in [`schema::META_TABLE`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Meta {
    pub scale: Scale,
    pub seed: u64,
    /// The sum of all account balances right after the load, in cents.
    pub balance_cents_at_load: i64,
    pub complete: bool,
    pub loaded_at: String,
}

/// Reads oltplab's record of the load; None when the database holds no brokerage load.
pub fn read_meta(conn: &mut dyn Conn) -> Result<Option<Meta>> {
    let tables = crate::sql::table_names(conn)?;
    if !tables
        .iter()
        .any(|t| t.eq_ignore_ascii_case(schema::META_TABLE))
    {
        return Ok(None);
    }
    let map = crate::sql::name_values(conn, schema::META_TABLE)
        .map_err(|e| db_failed("cannot read oltplab's load record", e))?;
    let num = |k: &str| map.get(k).and_then(|v| v.parse::<i64>().ok());
    Ok(
        match (num("customers"), num("days"), num("balance_cents")) {
            (Some(customers), Some(days), Some(balance)) => Some(Meta {
                scale: Scale { customers, days },
                seed: num("seed").unwrap_or(0) as u64,
                balance_cents_at_load: balance,
                complete: map.get("complete").is_some_and(|v| v == "1"),
                loaded_at: map.get("loaded_at").cloned().unwrap_or_default(),
            }),
            _ => None,
        },
    )
}

/// The load record of a database a run or check may use, or a sentence saying why not.
pub fn require_loaded(conn: &mut dyn Conn, where_: &str) -> Result<Meta> {
    match read_meta(conn)? {
        Some(m) if m.complete => Ok(m),
        Some(_) => Err(Error::usage(format!(
            "the brokerage load of {where_} did not finish: load it again with `oltplab load brokerage --force`"
        ))),
        None => Err(Error::usage(format!(
            "{where_} holds no brokerage database: create one with `oltplab load brokerage` first"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_follows_tpc_e_per_load_unit() {
        let s = Scale {
            customers: 1000,
            days: 300,
        };
        assert_eq!(s.accounts(), 5000);
        assert_eq!(s.securities(), 685);
        assert_eq!(s.brokers(), 10);
        assert_eq!(s.trades_per_account() * 5, 17_280);
        assert_eq!(s.last_loaded_trade(), 17_280_000);
    }

    #[test]
    fn the_history_starts_on_a_monday_in_2025() {
        let (y, m, d, ..) = crate::sql::civil(FIRST_TRADING_DAY * DAY_US);
        assert_eq!((y, m, d), (2025, 1, 6));
        // 1970-01-01 was a Thursday: day numbers ≡ 4 (mod 7) are Mondays.
        assert_eq!((FIRST_TRADING_DAY + 3) % 7, 0);
    }

    #[test]
    fn symbols_are_fixed_width() {
        assert_eq!(symbol_string(1), "S0000001");
        assert_eq!(symbol_string(685), "S0000685");
    }

    #[test]
    fn settlements_balance() {
        assert_eq!(settlement_cents(true, 10_000, 500, 20), -10_520);
        assert_eq!(settlement_cents(false, 10_000, 500, 20), 9_480);
        assert_eq!(commission_cents(1, 1_000_000), 4_000);
    }
}
