//! The brokerage workload on the driver ([`crate::driver`]): terminals (customers) draw the eight
//! customer transactions with EGen's weights; the driver's workers run the Trade-Results and
//! Market-Feeds the market emulator makes of their orders (its background work, whose queueing
//! counts in their response time). The clock, warm-up, retries and statistics are the driver's.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use oltplab_core::Result;

use super::market::{Job, Market};
use super::procedures::{self, Procedures};
use super::tx::{
    execute, Input, LookupBy, Order, OrderInput, Outcome, Scratch, Statements, TxType, WatchBy,
};
use super::{gen, symbol_string, Meta, DAILY_MARKET_DAYS, DAY_US, FIRST_TRADING_DAY};
use crate::driver::{self, Background, Event};
use crate::random::Rng;
use crate::sql::{Conn, Connector, DbResult, Purpose, StmtBuilder};

#[derive(Clone, Debug)]
pub struct DriverConfig {
    pub terminals: usize,
    pub duration: Duration,
    /// The warm-up; with `warmup_auto`, the longest it may take.
    pub warmup: Duration,
    /// Warm up until Trade-Result's rate is steady (the one driver's auto warm-up).
    pub warmup_auto: bool,
    pub seed: u64,
    pub max_retries: u32,
    /// Keep a [`TxSpan`] of every measured transaction (to tie a server's trace to them).
    pub record_spans: bool,
    /// Keep the trade ids of every Trade-Order and Trade-Result whose COMMIT returned (what a
    /// power cut is checked against: `DriverOutcome::trades_ordered`, `trades_completed`).
    pub record_trades: bool,
    /// Run each transaction as one round trip, the multi-statement ones as server-side functions
    /// ([`procedures`]; PostgreSQL).
    pub procedures: bool,
}

/// Market workers for `terminals` customers: one per two, at least two, so that the market keeps
/// up with the orders (its backlog is reported).
pub fn market_workers(terminals: usize) -> usize {
    terminals.div_ceil(2).max(2)
}

/// What the driver measured ([`driver::Outcome`]: its `tx`, `seconds` and `committed_all` in
/// [`TxType::ALL`] order, its `workers` the market's, its `backlog_at_end` the market's jobs
/// still queued when the run ended — dropped, their trades stay submitted), with the market's own
/// figures.
#[derive(Clone, Debug, Default)]
pub struct DriverOutcome {
    pub run: driver::Outcome,
    /// Limit orders Market-Feed triggered, whole run.
    pub triggered_all: u64,
    /// With `record_trades`: the trade id of every Trade-Order acknowledged as committed (its
    /// `trade` row exists from then on).
    pub trades_ordered: Vec<i64>,
    /// With `record_trades`: the trade id of every Trade-Result acknowledged as committed (its
    /// `settlement` row exists from then on).
    pub trades_completed: Vec<i64>,
}

/// The acknowledged commits a run keeps when asked: (ordered, completed) trade ids.
#[derive(Default)]
struct Acknowledged {
    ordered: Vec<i64>,
    completed: Vec<i64>,
}

/// Draws the customers' transactions.
pub struct InputGen {
    pub meta: Meta,
}

impl InputGen {
    /// A customer, skewed towards some as TPC-E's tiers are (NURand over the customers).
    fn customer(&self, rng: &mut Rng) -> i64 {
        let n = self.meta.scale.customers;
        let a = ((n / 4).max(1) as u64).next_power_of_two() as i64 - 1;
        rng.nurand(a, 1, n, 0)
    }

    fn account(&self, rng: &mut Rng) -> i64 {
        (self.customer(rng) - 1) * super::ACCOUNTS_PER_CUSTOMER
            + rng.uniform(1, super::ACCOUNTS_PER_CUSTOMER)
    }

    fn symbol(&self, rng: &mut Rng) -> String {
        symbol_string(rng.uniform(1, self.meta.scale.securities()))
    }

    /// A time inside the initial history, at least `span` µs before its end.
    fn history_time(&self, span: i64, rng: &mut Rng) -> i64 {
        let (start, end) = self.meta.scale.history_us();
        rng.uniform(start, (end - span).max(start))
    }

    /// A customer transaction type with EGen's weights.
    pub fn draw_type(rng: &mut Rng) -> TxType {
        let total: u32 = TxType::CUSTOMER.iter().map(|t| t.weight_per_mille()).sum();
        let mut x = rng.uniform(1, total as i64) as u32;
        for t in TxType::CUSTOMER {
            if x <= t.weight_per_mille() {
                return t;
            }
            x -= t.weight_per_mille();
        }
        TxType::TradeStatus
    }

    pub fn draw(&self, kind: TxType, rng: &mut Rng) -> Input {
        let scale = &self.meta.scale;
        match kind {
            TxType::BrokerVolume => {
                let first = rng.uniform(1, scale.brokers());
                Input::BrokerVolume {
                    sector: rng.uniform(1, 12),
                    first_broker: first,
                    last_broker: first + rng.uniform(19, 39),
                }
            }
            TxType::CustomerPosition => Input::CustomerPosition {
                customer: self.customer(rng),
                by_tax_id: rng.percent(50),
                history: rng.percent(50),
                account_index: rng.uniform(0, 4) as usize,
            },
            TxType::MarketWatch => Input::MarketWatch(match rng.uniform(1, 100) {
                1..=35 => WatchBy::Customer(self.customer(rng)),
                36..=95 => WatchBy::Industry(rng.uniform(1, 102)),
                _ => WatchBy::Account(self.account(rng)),
            }),
            TxType::SecurityDetail => Input::SecurityDetail {
                symbol: self.symbol(rng),
                start_day: rng.uniform(
                    FIRST_TRADING_DAY - DAILY_MARKET_DAYS,
                    FIRST_TRADING_DAY - 20,
                ),
                days: rng.uniform(5, 20),
            },
            TxType::TradeLookup | TxType::TradeUpdate => {
                let update = kind == TxType::TradeUpdate;
                let frame = rng.uniform(1, 100);
                let (ids, account, security) = if update { (33, 66, 100) } else { (30, 60, 90) };
                let by = if frame <= ids {
                    let last = scale.last_loaded_trade().max(1);
                    LookupBy::Ids((0..20).map(|_| rng.uniform(1, last)).collect())
                } else if frame <= account {
                    let from = self.history_time(30 * DAY_US, rng);
                    LookupBy::Account {
                        account: self.account(rng),
                        from,
                        to: from + 30 * DAY_US,
                    }
                } else if frame <= security {
                    let from = self.history_time(DAY_US, rng);
                    LookupBy::Security {
                        symbol: self.symbol(rng),
                        from,
                        to: from + DAY_US,
                    }
                } else {
                    LookupBy::HoldingHistory {
                        account: self.account(rng),
                        from: self.history_time(DAY_US, rng),
                    }
                };
                Input::Lookup { by, update }
            }
            TxType::TradeOrder => Input::TradeOrder(OrderInput {
                account: self.account(rng),
                buy_symbol: self.symbol(rng),
                trade_type: gen::draw_trade_type(rng),
                qty: rng.uniform(1, 8) * 100,
                is_cash: rng.percent(85),
                lifo: rng.percent(35),
                limit_offset_bp: rng.uniform(-100, 100),
                pick: rng.unit(),
                roll_back: rng.percent(1),
            }),
            TxType::TradeStatus => Input::TradeStatus {
                account: self.account(rng),
            },
            TxType::TradeResult | TxType::MarketFeed => {
                unreachable!("the market makes Trade-Result and Market-Feed inputs")
            }
        }
    }
}

/// The first id the run's new trades take: after every trade in the database.
fn first_new_trade_id(conn: &mut dyn Conn) -> Result<i64> {
    let rows = conn
        .query("SELECT COALESCE(MAX(t_id), 0) FROM trade")
        .map_err(|e| crate::sql::db_failed("cannot read the last trade id", e))?;
    Ok(rows.get(0, 0).i64() + 1)
}

/// The brokerage as the driver runs it; the market is its background work.
struct Brokerage {
    st: Statements,
    /// `--procedures`: the calls that replace the statements.
    procedures: Option<Procedures>,
    gen: InputGen,
    market: Market,
    next_trade_id: AtomicI64,
    /// Limit orders Market-Feed triggered, whole run.
    triggered: AtomicU64,
    /// With `record_trades`: the trades whose Trade-Order or Trade-Result COMMIT returned.
    acknowledged: Option<std::sync::Mutex<Acknowledged>>,
}

impl driver::Workload for Brokerage {
    type Input = Input;
    type Output = Outcome;
    type Terminal = ();
    type Scratch = Scratch;

    fn kinds(&self) -> &'static [&'static str] {
        &TxType::NAMES
    }

    fn tag(&self, kind: usize) -> u8 {
        TxType::ALL[kind].tag()
    }

    /// tpsE-like counts Trade-Results.
    fn headline(&self) -> usize {
        TxType::TradeResult.index()
    }

    fn terminal(&self, _i: usize, _terminals: usize) {}

    fn next(&self, _t: &mut (), rng: &mut Rng) -> (usize, Input) {
        let kind = InputGen::draw_type(rng);
        (kind.index(), self.gen.draw(kind, rng))
    }

    fn execute(&self, conn: &mut dyn Conn, input: &Input, s: &mut Scratch) -> DbResult<Outcome> {
        let next_id = || self.next_trade_id.fetch_add(1, Ordering::Relaxed);
        let out = match &self.procedures {
            Some(p) => procedures::execute(conn, p, &self.st, input, &next_id, s)?,
            None => execute(conn, &self.st, input, &next_id, s)?,
        };
        // `execute` returns once COMMIT did: the trade is acknowledged.
        if let Some(ack) = &self.acknowledged {
            let mut ack = ack.lock().unwrap_or_else(|e| e.into_inner());
            match (input, &out) {
                (_, Outcome::Submitted(Order { t_id, .. }) | Outcome::Pending { t_id, .. }) => {
                    ack.ordered.push(*t_id)
                }
                (Input::TradeResult(o), Outcome::Executed(_)) => ack.completed.push(o.t_id),
                _ => {}
            }
        }
        Ok(out)
    }

    fn rolled_back(&self, out: &Outcome) -> bool {
        *out == Outcome::RolledBack
    }

    fn workers(&self, terminals: usize) -> usize {
        market_workers(terminals)
    }

    fn background(&self) -> Option<&dyn Background<Input>> {
        Some(self)
    }

    fn completed(&self, _kind: usize, out: &Outcome, measured: bool, measuring: bool) {
        match out {
            Outcome::Submitted(order) => self.market.submit(order.clone(), measuring),
            Outcome::Pending { t_id, symbol } => self.market.pending(*t_id, symbol.clone()),
            Outcome::Executed(tick) => self.market.executed(tick.clone(), measured),
            Outcome::Triggered(orders) => {
                self.triggered
                    .fetch_add(orders.len() as u64, Ordering::Relaxed);
                self.market.triggered(orders.clone(), measured);
            }
            _ => {}
        }
    }
}

impl Background<Input> for Brokerage {
    fn next(&self) -> Option<driver::Job<Input>> {
        let q = self.market.next()?;
        let (kind, input) = match q.job {
            Job::Result(o) => (TxType::TradeResult, Input::TradeResult(o)),
            Job::Feed(t) => (TxType::MarketFeed, Input::MarketFeed(t)),
        };
        Some(driver::Job {
            kind: kind.index(),
            input,
            queued_at: q.queued_at,
        })
    }

    fn abandon(&self) -> usize {
        let backlog = self.market.backlog();
        self.market.abandon();
        backlog
    }
}

/// Runs the workload: `warmup`, then `duration` measured (or until `stop`). `on_second` hears each
/// measured second as it ends, `on_event` the start and end of the measured window.
pub fn drive(
    connector: &dyn Connector,
    meta: &Meta,
    cfg: &DriverConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&driver::Second),
    on_event: &mut dyn FnMut(Event),
) -> Result<DriverOutcome> {
    // A check connection: a run connection would take the first host's turn (several hosts, a
    // cluster's nodes), and terminal 1 would land on the second.
    let first_id = first_new_trade_id(connector.connect(Purpose::Check)?.as_mut())?;
    if cfg.procedures {
        let mut conn = connector.connect(Purpose::Check)?;
        procedures::install(conn.as_mut()).map_err(|e| {
            oltplab_core::Error::failed(format!(
                "cannot create the brokerage's server-side functions for --procedures: {e} (the run's user needs the right to create functions in the database)"
            ))
        })?;
    }
    // One numbering for the statements and the calls: a connection prepares each by its number.
    let mut numbers = StmtBuilder::new(connector.dialect());
    let st = Statements::numbered_by(&mut numbers);
    let w = Brokerage {
        st,
        procedures: if cfg.procedures {
            Procedures::new(&mut numbers)
        } else {
            None
        },
        gen: InputGen { meta: meta.clone() },
        market: Market::new(cfg.seed, meta.scale.securities()),
        next_trade_id: AtomicI64::new(first_id),
        triggered: AtomicU64::new(0),
        acknowledged: cfg.record_trades.then(Default::default),
    };
    let driver_cfg = driver::DriverConfig {
        terminals: cfg.terminals,
        duration: cfg.duration,
        warmup: cfg.warmup,
        warmup_auto: cfg.warmup_auto,
        seed: cfg.seed,
        max_retries: cfg.max_retries,
        record_spans: cfg.record_spans,
        start_at: None,
        work: None,
        threads: None,
    };
    let run = driver::drive(&w, connector, &driver_cfg, stop, on_second, on_event)?;
    let ack = w
        .acknowledged
        .map(|a| a.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_default();
    Ok(DriverOutcome {
        run,
        triggered_all: w.triggered.load(Ordering::Relaxed),
        trades_ordered: ack.ordered,
        trades_completed: ack.completed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_customer_mix_follows_egen_weights() {
        let mut rng = Rng::new(3);
        let mut counts = [0u32; TxType::ALL.len()];
        let n = 200_000;
        for _ in 0..n {
            counts[InputGen::draw_type(&mut rng).index()] += 1;
        }
        for t in TxType::CUSTOMER {
            let share = counts[t.index()] as f64 / n as f64;
            let want = t.weight_per_mille() as f64 / 890.0;
            assert!(
                (share - want).abs() < 0.005,
                "{}: {share} vs {want}",
                t.name()
            );
        }
        assert_eq!(counts[TxType::TradeResult.index()], 0);
    }
}
