//! The initial data, deterministic for a seed: customers and their five accounts with an initial
//! trade history of [`Scale::days`] trading days (trades, their status history, settlements, cash
//! transactions, the open holding lots, holding summaries and holding history, all made by the same
//! lot-keeping rules Trade-Result applies in a run), and the securities with their last trade and
//! five years of daily market. Brokers' trade counts and commissions are summed over the generated
//! completed trades and loaded last.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, Ordering};

use super::schema::*;
use super::*;
use crate::random::{last_name, Rng};
use crate::sql::Batch;

/// A unit of the load: some customers with everything of theirs, or some securities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunk {
    Customers { first: i64, count: i64 },
    Securities { first: i64, count: i64 },
}

/// Rows a chunk makes at most about this many: a few MB of batches per chunk in flight.
const CHUNK_ROWS: i64 = 200_000;
const SECURITIES_PER_CHUNK: i64 = 50;
/// Each account trades these many securities of its own in the initial history (TPC-E: about ten
/// holding summaries per account).
pub const PORTFOLIO: usize = 10;

impl Chunk {
    /// Rows the chunk loads, for progress (trades: about six rows each with their companions).
    pub fn rows(&self, scale: &Scale) -> u64 {
        match *self {
            Chunk::Customers { count, .. } => {
                (count * (1 + ACCOUNTS_PER_CUSTOMER * (1 + 6 * scale.trades_per_account()))) as u64
            }
            Chunk::Securities { count, .. } => (count * (2 + DAILY_MARKET_DAYS)) as u64,
        }
    }
}

/// The load's chunks: securities first (they are small), then customers.
pub fn plan(scale: &Scale) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut first = 1;
    while first <= scale.securities() {
        let count = SECURITIES_PER_CHUNK.min(scale.securities() - first + 1);
        out.push(Chunk::Securities { first, count });
        first += count;
    }
    let per_customer = ACCOUNTS_PER_CUSTOMER * (1 + 6 * scale.trades_per_account());
    let step = (CHUNK_ROWS / per_customer.max(1)).clamp(1, 100);
    let mut first = 1;
    while first <= scale.customers {
        let count = step.min(scale.customers - first + 1);
        out.push(Chunk::Customers { first, count });
        first += count;
    }
    out
}

/// Sums the generated rows feed into rows loaded after them: each broker's completed trades and
/// commission, and the balance total.
pub struct Totals {
    pub broker_trades: Vec<AtomicI64>,
    pub broker_comm_cents: Vec<AtomicI64>,
    pub balance_cents: AtomicI64,
}

impl Totals {
    pub fn new(scale: &Scale) -> Totals {
        let n = scale.brokers() as usize;
        Totals {
            broker_trades: (0..n).map(|_| AtomicI64::new(0)).collect(),
            broker_comm_cents: (0..n).map(|_| AtomicI64::new(0)).collect(),
            balance_cents: AtomicI64::new(0),
        }
    }
}

/// The price of security `n` the history moves around, in cents ($20–$30, as TPC-E's range).
pub fn base_price_cents(n: i64) -> i64 {
    2000 + (n.wrapping_mul(0x5851_F42D) >> 5).rem_euclid(1000)
}

/// The security number of a symbol made by [`symbol`].
pub fn symbol_number(symb: &str) -> i64 {
    symb.get(1..).and_then(|d| d.parse().ok()).unwrap_or(1)
}

pub fn generate(chunk: Chunk, scale: &Scale, seed: u64, totals: &Totals) -> Vec<Batch> {
    match chunk {
        Chunk::Securities { first, count } => securities(first, count, scale, seed),
        Chunk::Customers { first, count } => customers(first, count, scale, seed, totals),
    }
}

fn pad(rng: &mut Rng, len: usize, out: &mut String) {
    // Printable filler: a few random letters repeated, cheap and not compressible to nothing.
    let seed = rng.uniform(0, 25) as u8;
    for i in 0..len {
        out.push((b'a' + (seed + (i as u8 % 7) * 3) % 26) as char);
    }
}

fn securities(first: i64, count: i64, scale: &Scale, seed: u64) -> Vec<Batch> {
    let mut rng = Rng::new(seed ^ 0x5ec0_0000 ^ first as u64);
    let mut sec = Batch::new("security", SECURITY_COLS, count as usize);
    let mut lt = Batch::new("last_trade", LAST_TRADE_COLS, count as usize);
    let mut dm = Batch::new(
        "daily_market",
        DAILY_MARKET_COLS,
        (count * DAILY_MARKET_DAYS) as usize,
    );
    let (_, history_end) = scale.history_us();
    for n in first..first + count {
        let base = base_price_cents(n);
        sec.str_with(|s| symbol(n, s));
        sec.str_with(|s| {
            s.push_str("Company ");
            last_name(n % 1000, s);
            s.push_str(" Inc.");
        });
        sec.int((n - 1) % 12 + 1);
        sec.int((n - 1) % 102 + 1);
        sec.int(rng.uniform(4_000_000, 9_500_000_000));
        sec.money(rng.uniform(100, 12_000) as f64 / 100.0);
        sec.money(rng.uniform(0, 2_000) as f64 / 100.0);
        sec.money(rng.uniform(0, 1_200) as f64 / 100.0);
        // Stands in for the company, financial and news rows Security-Detail reads in TPC-E.
        let len = rng.uniform(400, 600) as usize;
        sec.str_with(|s| pad(&mut rng, len, s));

        lt.str_with(|s| symbol(n, s));
        lt.time(history_end);
        lt.money(base as f64 / 100.0);
        lt.money(base as f64 / 100.0);
        lt.int(0);

        let mut close = base;
        for d in 0..DAILY_MARKET_DAYS {
            close = (close + rng.uniform(-40, 40)).clamp(base / 2, base * 2);
            dm.str_with(|s| symbol(n, s));
            dm.int(FIRST_TRADING_DAY - DAILY_MARKET_DAYS + d);
            dm.money(close as f64 / 100.0);
            dm.money((close + rng.uniform(0, 60)) as f64 / 100.0);
            dm.money((close - rng.uniform(0, 60)).max(1) as f64 / 100.0);
            dm.int(rng.uniform(1_000, 2_000_000));
        }
    }
    vec![sec, lt, dm]
}

/// Trade types: market buy/sell, limit buy/sell, stop-loss; and their share of Trade-Orders in %.
pub const TRADE_TYPES: [(&str, i64); 5] = [
    ("TMB", 30),
    ("TMS", 30),
    ("TLB", 20),
    ("TLS", 10),
    ("TSL", 10),
];

pub fn is_buy(tt: &str) -> bool {
    tt == "TMB" || tt == "TLB"
}

pub fn is_market(tt: &str) -> bool {
    tt == "TMB" || tt == "TMS"
}

/// A trade type drawn with [`TRADE_TYPES`]' shares.
pub fn draw_trade_type(rng: &mut Rng) -> &'static str {
    let mut x = rng.uniform(1, 100);
    for (tt, pct) in TRADE_TYPES {
        if x <= pct {
            return tt;
        }
        x -= pct;
    }
    "TMB"
}

/// One open lot of a holding.
#[derive(Clone, Copy, Debug)]
pub struct Lot {
    pub t_id: i64,
    pub qty: i64,
}

/// The lots a trade of `qty` (positive: buy, negative: sell) touches, taken from `lots` (oldest
/// first) from the newest end when `lifo`: each lot's quantity before and after, and the quantity
/// left for a new lot of the trade's own (0 if none). Buys close short lots, sells long ones.
pub fn match_lots(lots: &[Lot], qty: i64, lifo: bool) -> (Vec<(usize, i64, i64)>, i64) {
    let mut left = qty;
    let mut touched = Vec::new();
    let order: Box<dyn Iterator<Item = usize>> = if lifo {
        Box::new((0..lots.len()).rev())
    } else {
        Box::new(0..lots.len())
    };
    for i in order {
        if left == 0 {
            break;
        }
        let lot = lots[i];
        // A lot on the other side of the trade is closed (in part).
        if lot.qty.signum() == -left.signum() {
            let take = lot.qty.abs().min(left.abs()) * left.signum();
            touched.push((i, lot.qty, lot.qty + take));
            left -= take;
        }
    }
    (touched, left)
}

fn customers(first: i64, count: i64, scale: &Scale, seed: u64, totals: &Totals) -> Vec<Batch> {
    let mut rng = Rng::new(seed ^ 0xc057_0000 ^ (first as u64) << 8);
    let tpa = scale.trades_per_account();
    let trades = (count * ACCOUNTS_PER_CUSTOMER * tpa) as usize;
    let mut cust = Batch::new("customer", CUSTOMER_COLS, count as usize);
    let mut acct = Batch::new(
        "customer_account",
        ACCOUNT_COLS,
        (count * ACCOUNTS_PER_CUSTOMER) as usize,
    );
    let mut trade = Batch::new("trade", TRADE_COLS, trades);
    let mut th = Batch::new("trade_history", TRADE_HISTORY_COLS, trades * 12 / 5);
    let mut se = Batch::new("settlement", SETTLEMENT_COLS, trades);
    let mut ct = Batch::new("cash_transaction", CASH_COLS, trades);
    let mut hold = Batch::new("holding", HOLDING_COLS, trades / 10);
    let mut hs = Batch::new("holding_summary", &["hs_ca_id", "hs_s_symb", "hs_qty"], 0);
    let mut hh = Batch::new("holding_history", HOLDING_HISTORY_COLS, trades * 3 / 2);
    let (history_start, _) = scale.history_us();
    let securities = scale.securities();
    for c in first..first + count {
        let tier = tier_of(c);
        cust.int(c);
        cust.str_with(|s| {
            s.push_str("TAX");
            s.push_str(itoa::Buffer::new().format(c));
        });
        cust.str("ACTV");
        cust.str_with(|s| last_name(rng.uniform(0, 999), s));
        cust.str_with(|s| last_name(rng.uniform(0, 999), s));
        cust.int(tier);
        cust.int(rng.uniform(-18_000, 11_000));
        cust.str_with(|s| {
            last_name(c % 1000, s);
            s.push_str("@example.com");
        });
        let len = rng.uniform(100, 150) as usize;
        cust.str_with(|s| pad(&mut rng, len, s));
        for k in 0..ACCOUNTS_PER_CUSTOMER {
            let ca = (c - 1) * ACCOUNTS_PER_CUSTOMER + k + 1;
            let broker = broker_of(ca, scale.brokers());
            let bal = rng.uniform(1_000_000, 10_000_000);
            totals.balance_cents.fetch_add(bal, Ordering::Relaxed);
            acct.int(ca);
            acct.int(broker);
            acct.int(c);
            acct.str_with(|s| {
                s.push_str("Account ");
                s.push_str(itoa::Buffer::new().format(ca));
            });
            acct.int(rng.uniform(0, 2));
            acct.money(bal as f64 / 100.0);
            let portfolio: Vec<i64> = (0..PORTFOLIO).map(|_| rng.uniform(1, securities)).collect();
            let mut lots: Vec<VecDeque<(Lot, i64, i64)>> = vec![VecDeque::new(); PORTFOLIO];
            let (mut done, mut comm_sum) = (0i64, 0i64);
            for j in 0..tpa {
                let t_id = (ca - 1) * tpa + j + 1;
                let day = j * scale.days / tpa.max(1);
                let dts = history_start
                    + day * DAY_US
                    + 9 * HOUR_US
                    + rng.uniform(60_000_000, TRADING_HOURS * HOUR_US - 1);
                let p = rng.uniform(0, PORTFOLIO as i64 - 1) as usize;
                let sec = portfolio[p];
                let qty = rng.uniform(1, 8) * 100;
                let held: i64 = lots[p].iter().map(|(l, ..)| l.qty).sum();
                let mut tt = draw_trade_type(&mut rng);
                if !is_buy(tt) && held < qty {
                    // Nothing (enough) to sell: the customer buys instead.
                    tt = if is_market(tt) { "TMB" } else { "TLB" };
                }
                let canceled = !is_market(tt) && rng.percent(5);
                let base = base_price_cents(sec);
                let price = base + rng.uniform(-base / 20, base / 20);
                let value = price * qty;
                let is_cash = rng.percent(85);
                let lifo = rng.percent(35);
                let charge = charge_cents(tier);
                let comm = if canceled {
                    0
                } else {
                    commission_cents(tier, value)
                };
                trade.int(t_id);
                trade.time(dts);
                trade.str(if canceled { "CNCL" } else { "CMPT" });
                trade.str(tt);
                trade.int(is_cash as i64);
                trade.str_with(|s| symbol(sec, s));
                trade.int(qty);
                trade.money(price as f64 / 100.0);
                trade.int(ca);
                trade.str_with(|s| {
                    last_name(rng.uniform(0, 999), s);
                    s.push(' ');
                    last_name(rng.uniform(0, 999), s);
                });
                if canceled {
                    trade.null();
                } else {
                    trade.money(price as f64 / 100.0);
                }
                trade.money(charge as f64 / 100.0);
                trade.money(comm as f64 / 100.0);
                trade.money(0.0);
                trade.int(lifo as i64);
                let statuses: &[(&str, i64)] = match (is_market(tt), canceled) {
                    (true, _) => &[("SBMT", 1_000_000), ("CMPT", 0)],
                    (false, false) => &[("PNDG", 60_000_000), ("SBMT", 1_000_000), ("CMPT", 0)],
                    (false, true) => &[("PNDG", 60_000_000), ("CNCL", 0)],
                };
                for (st, before) in statuses {
                    th.int(t_id);
                    th.time(dts - before);
                    th.str(st);
                }
                if canceled {
                    continue;
                }
                done += 1;
                comm_sum += comm;
                let amt = settlement_cents(is_buy(tt), value, charge, comm);
                se.int(t_id);
                se.str(if is_cash { CASH_ACCOUNT } else { MARGIN });
                se.int(dts / DAY_US + 2);
                se.money(amt as f64 / 100.0);
                if is_cash {
                    ct.int(t_id);
                    ct.time(dts);
                    ct.money(amt as f64 / 100.0);
                    ct.str_with(|s| {
                        s.push_str(tt);
                        s.push(' ');
                        s.push_str(itoa::Buffer::new().format(qty));
                        s.push_str(" shares of ");
                        symbol(sec, s);
                    });
                }
                // The holding lots, as Trade-Result keeps them.
                let signed = if is_buy(tt) { qty } else { -qty };
                let open: Vec<Lot> = lots[p].iter().map(|(l, ..)| *l).collect();
                let (touched, left) = match_lots(&open, signed, lifo);
                for &(i, before, after) in &touched {
                    hh.int(open[i].t_id);
                    hh.int(t_id);
                    hh.int(before);
                    hh.int(after);
                    lots[p][i].0.qty = after;
                }
                lots[p].retain(|(l, ..)| l.qty != 0);
                if left != 0 {
                    hh.int(t_id);
                    hh.int(t_id);
                    hh.int(0);
                    hh.int(left);
                    lots[p].push_back((Lot { t_id, qty: left }, dts, price));
                }
            }
            let b = (broker - 1) as usize;
            totals.broker_trades[b].fetch_add(done, Ordering::Relaxed);
            totals.broker_comm_cents[b].fetch_add(comm_sum, Ordering::Relaxed);
            // Several portfolio slots may hold one security: one summary per security.
            let mut summary: Vec<(i64, i64)> = Vec::new();
            for (p, lots) in lots.iter().enumerate() {
                for (lot, dts, price) in lots {
                    hold.int(lot.t_id);
                    hold.int(ca);
                    hold.str_with(|s| symbol(portfolio[p], s));
                    hold.time(*dts);
                    hold.money(*price as f64 / 100.0);
                    hold.int(lot.qty);
                    match summary.iter_mut().find(|(s, _)| *s == portfolio[p]) {
                        Some((_, q)) => *q += lot.qty,
                        None => summary.push((portfolio[p], lot.qty)),
                    }
                }
            }
            summary.sort_unstable();
            for (sec, qty) in summary.into_iter().filter(|(_, q)| *q != 0) {
                hs.int(ca);
                hs.str_with(|s| symbol(sec, s));
                hs.int(qty);
            }
        }
    }
    vec![cust, acct, trade, th, se, ct, hold, hs, hh]
}

/// The brokers, with the sums of the completed trades of their accounts.
pub fn brokers(scale: &Scale, totals: &Totals) -> Batch {
    let n = scale.brokers();
    let mut b = Batch::new("broker", BROKER_COLS, n as usize);
    for id in 1..=n {
        b.int(id);
        b.str("ACTV");
        b.str_with(|s| {
            s.push_str("Broker ");
            last_name((id - 1) % 1000, s);
            s.push(' ');
            s.push_str(itoa::Buffer::new().format(id));
        });
        b.int(totals.broker_trades[(id - 1) as usize].load(Ordering::Relaxed));
        b.money(totals.broker_comm_cents[(id - 1) as usize].load(Ordering::Relaxed) as f64 / 100.0);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lots_close_oldest_or_newest_first_and_the_rest_opens_a_lot() {
        let lots = [Lot { t_id: 1, qty: 100 }, Lot { t_id: 2, qty: 300 }];
        // FIFO sell of 200: lot 1 closed, lot 2 down to 200.
        assert_eq!(
            match_lots(&lots, -200, false),
            (vec![(0, 100, 0), (1, 300, 200)], 0)
        );
        // LIFO sell of 500: lot 2 then lot 1 closed, 100 short.
        assert_eq!(
            match_lots(&lots, -500, true),
            (vec![(1, 300, 0), (0, 100, 0)], -100)
        );
        // A buy does not touch long lots.
        assert_eq!(match_lots(&lots, 100, false), (vec![], 100));
    }

    #[test]
    fn generation_is_deterministic_and_holdings_add_up() {
        let scale = Scale {
            customers: 1000,
            days: 2,
        };
        let gen = |seed| {
            let totals = Totals::new(&scale);
            let b = generate(
                Chunk::Customers { first: 1, count: 3 },
                &scale,
                seed,
                &totals,
            );
            (b, totals.balance_cents.load(Ordering::Relaxed))
        };
        let (a, bal_a) = gen(7);
        let (b, bal_b) = gen(7);
        assert!(a == b && bal_a == bal_b);
        assert!(gen(8).0 != a);
        let trades = &a[2];
        assert_eq!(trades.rows() as i64, 3 * 5 * scale.trades_per_account());
        // Holding summaries are the sums of the lots.
        let (hold, hs) = (&a[6], &a[7]);
        for r in 0..hs.rows() {
            let (ca, symb, qty) = (hs.value(r, 0), hs.value(r, 1), hs.value(r, 2));
            let sum: i64 = (0..hold.rows())
                .filter(|&h| hold.value(h, 1) == ca && hold.value(h, 2) == symb)
                .map(|h| match hold.value(h, 5) {
                    crate::sql::P::I(q) => q,
                    _ => 0,
                })
                .sum();
            assert_eq!(crate::sql::P::I(sum), qty);
        }
        assert!(hs.rows() > 0 && hold.rows() >= hs.rows());
    }

    #[test]
    fn the_plan_covers_every_customer_and_security_once() {
        let scale = Scale {
            customers: 3000,
            days: 300,
        };
        let plan = plan(&scale);
        let (mut c, mut s) = (0, 0);
        for chunk in &plan {
            match *chunk {
                Chunk::Customers { first, count } => {
                    assert_eq!(first, c + 1);
                    c += count;
                }
                Chunk::Securities { first, count } => {
                    assert_eq!(first, s + 1);
                    s += count;
                }
            }
        }
        assert_eq!((c, s), (3000, scale.securities()));
    }
}
