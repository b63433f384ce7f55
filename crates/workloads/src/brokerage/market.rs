//! The market emulator (TPC-E's MEE, in process): it takes the market orders Trade-Order submits
//! and the limit orders Market-Feed triggers, executes each at its security's current price as a
//! Trade-Result, and turns every executed trade into a ticker entry that moves the price, with one
//! artificial entry beside it (as EGen's ticker tape adds, so that Market-Feed comes once per ten
//! Trade-Results) for a security on its book — the oldest pending limit order's, in turn — or a
//! random one when the book is empty, so that a pending order's price moves at a pace that does
//! not depend on how many securities there are; each 20 entries become one Market-Feed. Its workers, each with its own connection, run these two
//! transaction types, so their rates follow from the customers' orders as in TPC-E.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::gen::{base_price_cents, symbol_number};
use super::tx::{Order, Tick};
use crate::random::Rng;

/// Ticker entries per Market-Feed (TPC-E: 20).
pub const TICKS_PER_FEED: usize = 20;

/// Work for a market worker.
#[derive(Clone, Debug)]
pub enum Job {
    Result(Order),
    Feed(Vec<Tick>),
}

/// A job and when it was queued (its wait counts in the Trade-Result's response time, as the
/// MEE's delay does in TPC-E).
#[derive(Debug)]
pub struct Queued {
    pub job: Job,
    pub queued_at: Instant,
    pub measured: bool,
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Queued>,
    ticks: Vec<Tick>,
    /// The market's price of each security that traded, in cents.
    prices: HashMap<String, i64>,
    /// Pending limit orders (trade id, security), oldest first: the artificial entries visit them
    /// in turn.
    book: VecDeque<(i64, String)>,
    closed: bool,
}

pub struct Market {
    state: Mutex<State>,
    ready: Condvar,
    rng: Mutex<Rng>,
    securities: i64,
}

impl Market {
    /// A market of `securities` securities (numbered from 1).
    pub fn new(seed: u64, securities: i64) -> Market {
        Market {
            state: Mutex::new(State::default()),
            ready: Condvar::new(),
            rng: Mutex::new(Rng::new(seed ^ 0x3ee0_0000)),
            securities: securities.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A market order to execute at the security's market price (the order's price is the last
    /// trade the customer saw, where the market has no price of its own yet).
    pub fn submit(&self, mut order: Order, measured: bool) {
        let mut s = self.lock();
        order.price_cents = *s
            .prices
            .entry(order.symbol.clone())
            .or_insert(order.price_cents);
        s.jobs.push_back(Queued {
            job: Job::Result(order),
            queued_at: Instant::now(),
            measured,
        });
        drop(s);
        self.ready.notify_one();
    }

    /// A limit order now pending on `symbol`.
    pub fn pending(&self, t_id: i64, symbol: String) {
        self.lock().book.push_back((t_id, symbol));
    }

    /// Limit orders a Market-Feed triggered: they execute at the price that triggered them.
    pub fn triggered(&self, orders: Vec<Order>, measured: bool) {
        if orders.is_empty() {
            return;
        }
        let mut s = self.lock();
        s.book.retain(|(t, _)| !orders.iter().any(|o| o.t_id == *t));
        let now = Instant::now();
        for order in orders {
            s.jobs.push_back(Queued {
                job: Job::Result(order),
                queued_at: now,
                measured,
            });
        }
        drop(s);
        self.ready.notify_all();
    }

    /// An executed trade: its security's price moves by up to ±1 %, pulled back towards the
    /// base price, and so does a random security's; both entries join the next Market-Feed.
    pub fn executed(&self, tick: Tick, measured: bool) {
        let (steps, other, other_qty) = {
            let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
            (
                [rng.uniform(-100, 100), rng.uniform(-100, 100)],
                rng.uniform(1, self.securities),
                rng.uniform(1, 8) * 100,
            )
        };
        let mut s = self.lock();
        // The next order on the book goes to the back: each is visited in turn.
        let symbol = match s.book.pop_front() {
            Some(order) => {
                let symbol = order.1.clone();
                s.book.push_back(order);
                symbol
            }
            None => super::symbol_string(other),
        };
        let artificial = Tick {
            price_cents: base_price_cents(symbol_number(&symbol)),
            symbol,
            qty: other_qty,
        };
        for (tick, step) in [tick, artificial].into_iter().zip(steps) {
            let base = base_price_cents(symbol_number(&tick.symbol));
            let price = s
                .prices
                .entry(tick.symbol.clone())
                .or_insert(tick.price_cents);
            *price = (*price + *price * step / 10_000 + (base - *price) / 50).max(100);
            let entry = Tick {
                price_cents: *price,
                ..tick
            };
            s.ticks.push(entry);
        }
        if s.ticks.len() >= TICKS_PER_FEED {
            let mut feed = std::mem::take(&mut s.ticks);
            // One order of locks for every feed: concurrent feeds cannot deadlock.
            feed.sort_by(|a, b| a.symbol.cmp(&b.symbol));
            s.jobs.push_back(Queued {
                job: Job::Feed(feed),
                queued_at: Instant::now(),
                measured,
            });
            drop(s);
            self.ready.notify_one();
        }
    }

    /// The next job; None once [`Market::close`] was called and nothing is left.
    pub fn next(&self) -> Option<Queued> {
        let mut s = self.lock();
        loop {
            if let Some(q) = s.jobs.pop_front() {
                return Some(q);
            }
            if s.closed {
                return None;
            }
            s = self
                .ready
                .wait_timeout(s, Duration::from_millis(100))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// No more orders will come: the workers finish the queued jobs and stop. Ticker entries short
    /// of a full feed are dropped (as at the end of a TPC-E run).
    pub fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// Drops every queued job (the run was interrupted): the workers stop after their current one.
    pub fn abandon(&self) {
        let mut s = self.lock();
        s.jobs.clear();
        s.closed = true;
        drop(s);
        self.ready.notify_all();
    }

    /// Jobs waiting now.
    pub fn backlog(&self) -> usize {
        self.lock().jobs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(t_id: i64) -> Order {
        Order {
            t_id,
            symbol: "S0000001".into(),
            qty: 100,
            price_cents: 2500,
        }
    }

    #[test]
    fn ten_executed_trades_make_one_feed() {
        let m = Market::new(1, 685);
        m.submit(order(1), true);
        match m.next().unwrap().job {
            Job::Result(o) => assert_eq!(o.t_id, 1),
            j => panic!("{j:?}"),
        }
        for i in 0..TICKS_PER_FEED / 2 {
            m.executed(
                Tick {
                    symbol: format!("S{:07}", 20 - i),
                    price_cents: 2500,
                    qty: 100,
                },
                true,
            );
        }
        match m.next().unwrap().job {
            Job::Feed(ticks) => {
                // Ten trades and ten artificial entries.
                assert_eq!(ticks.len(), TICKS_PER_FEED);
                assert!(ticks.windows(2).all(|w| w[0].symbol <= w[1].symbol));
                assert!(ticks.iter().all(|t| (1900..=3100).contains(&t.price_cents)));
            }
            j => panic!("{j:?}"),
        }
        m.close();
        assert!(m.next().is_none());
    }

    #[test]
    fn artificial_entries_visit_the_pending_orders_in_turn() {
        let m = Market::new(1, 685);
        m.pending(7, "S0000300".into());
        m.pending(8, "S0000400".into());
        let trade = |n: i64| Tick {
            symbol: format!("S{n:07}"),
            price_cents: 2500,
            qty: 100,
        };
        for n in 1..=10 {
            m.executed(trade(n), true);
        }
        let Job::Feed(ticks) = m.next().unwrap().job else {
            panic!("a feed")
        };
        let count = |s: &str| ticks.iter().filter(|t| t.symbol == s).count();
        assert_eq!((count("S0000300"), count("S0000400")), (5, 5));
        // Triggered orders leave the book: the entries go to random securities again.
        m.triggered(
            vec![
                Order {
                    t_id: 7,
                    symbol: "S0000300".into(),
                    qty: 100,
                    price_cents: 2500,
                },
                Order {
                    t_id: 8,
                    symbol: "S0000400".into(),
                    qty: 100,
                    price_cents: 2500,
                },
            ],
            true,
        );
        assert!(m.lock().book.is_empty());
    }

    #[test]
    fn orders_execute_at_the_market_price_once_it_has_one() {
        let m = Market::new(1, 685);
        m.executed(
            Tick {
                symbol: "S0000001".into(),
                price_cents: 3000,
                qty: 100,
            },
            false,
        );
        m.submit(order(2), false);
        match m.next().unwrap().job {
            Job::Result(o) => assert!((2900..=3100).contains(&o.price_cents), "{o:?}"),
            j => panic!("{j:?}"),
        }
    }
}
