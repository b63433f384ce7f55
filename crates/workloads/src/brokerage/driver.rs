//! The driver: terminals (customers) as threads, each with its own connection, drawing the eight
//! customer transactions with EGen's weights; market workers running the Trade-Results and
//! Market-Feeds the market emulator makes of their orders; warm-up excluded; retries bounded and
//! counted by kind; one HdrHistogram per type; a per-second sample.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use oltplab_core::Result;
use oltplab_metrics::cpu::CpuTime;

use super::market::{Job, Market};
use super::tx::{
    execute, Input, LookupBy, OrderInput, Outcome, Scratch, Statements, TxType, WatchBy,
};
use super::{gen, symbol_string, Meta, DAILY_MARKET_DAYS, DAY_US, FIRST_TRADING_DAY};
use crate::attempt::{Attempt, Retry, TxSpan};
use crate::sql::{Conn, Connector, ErrorKind, Purpose};
use crate::tpcc::driver::{backend_tid, TxStats};
use crate::tpcc::random::TpccRng;

#[derive(Clone, Debug)]
pub struct DriverConfig {
    pub terminals: usize,
    pub duration: Duration,
    pub warmup: Duration,
    pub seed: u64,
    pub max_retries: u32,
    /// Keep a [`TxSpan`] of every measured transaction (to tie a server's trace to them).
    pub record_spans: bool,
}

/// Market workers for `terminals` customers: one per two, at least two, so that the market keeps
/// up with the orders (its backlog is reported).
pub fn market_workers(terminals: usize) -> usize {
    terminals.div_ceil(2).max(2)
}

const TYPES: usize = 10;
const PHASE_WARMUP: u8 = 0;
const PHASE_MEASURE: u8 = 1;
const PHASE_DONE: u8 = 2;
/// A thread that fails this many transactions in a row stops: something is broken, not busy.
const CONSECUTIVE_ERRORS_MAX: u32 = 100;

/// One second of the measured window.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Second {
    pub t_s: f64,
    /// Completed transactions of each type ([`TxType::ALL`] order).
    pub counts: [u64; TYPES],
    pub errors: u64,
    pub retries: u64,
}

#[derive(Clone, Debug, Default)]
pub struct DriverOutcome {
    pub tx: [TxStats; TYPES],
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    pub retries_by_kind: BTreeMap<ErrorKind, u64>,
    pub seconds: Vec<Second>,
    pub measured_s: f64,
    pub warmup_s: f64,
    pub terminals: usize,
    pub market_workers: usize,
    pub first_error: Option<String>,
    pub in_tx_cpu: CpuTime,
    pub interrupted: bool,
    pub spans: Vec<TxSpan>,
    pub terminals_without_backend: usize,
    pub measure_started_at: Option<SystemTime>,
    /// Transactions that committed over the whole run, warm-up and after the window included
    /// (what the tables grew by).
    pub committed_all: [u64; TYPES],
    /// Trade-Orders that rolled back as intended, whole run.
    pub rolled_back_all: u64,
    /// Limit orders Market-Feed triggered, whole run.
    pub triggered_all: u64,
    /// Jobs the market still had queued when the run ended (dropped: their trades stay submitted).
    pub market_backlog_at_end: usize,
}

#[derive(Default)]
struct Shared {
    out: DriverOutcome,
    second: [u64; TYPES],
    second_errors: u64,
    second_retries: u64,
}

#[derive(Clone, Copy)]
struct Ctx<'a> {
    st: &'a Statements,
    cfg: &'a DriverConfig,
    phase: &'a AtomicU8,
    done: &'a AtomicBool,
    shared: &'a Mutex<Shared>,
    market: &'a Market,
    next_trade_id: &'a AtomicI64,
}

impl Ctx<'_> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn measuring(&self) -> bool {
        self.phase.load(Ordering::Relaxed) == PHASE_MEASURE
    }
}

/// Draws the customers' transactions.
pub struct InputGen {
    pub meta: Meta,
}

impl InputGen {
    /// A customer, skewed towards some as TPC-E's tiers are (NURand over the customers).
    fn customer(&self, rng: &mut TpccRng) -> i64 {
        let n = self.meta.scale.customers;
        let a = ((n / 4).max(1) as u64).next_power_of_two() as i64 - 1;
        rng.nurand(a, 1, n, 0)
    }

    fn account(&self, rng: &mut TpccRng) -> i64 {
        (self.customer(rng) - 1) * super::ACCOUNTS_PER_CUSTOMER
            + rng.uniform(1, super::ACCOUNTS_PER_CUSTOMER)
    }

    fn symbol(&self, rng: &mut TpccRng) -> String {
        symbol_string(rng.uniform(1, self.meta.scale.securities()))
    }

    /// A time inside the initial history, at least `span` µs before its end.
    fn history_time(&self, span: i64, rng: &mut TpccRng) -> i64 {
        let (start, end) = self.meta.scale.history_us();
        rng.uniform(start, (end - span).max(start))
    }

    /// A customer transaction type with EGen's weights.
    pub fn draw_type(rng: &mut TpccRng) -> TxType {
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

    pub fn draw(&self, kind: TxType, rng: &mut TpccRng) -> Input {
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
        .map_err(|e| crate::tpcc::db_failed("cannot read the last trade id", e))?;
    Ok(rows.get(0, 0).i64() + 1)
}

fn attempt(
    conn: &mut dyn Conn,
    kind: TxType,
    input: &Input,
    scratch: &mut Scratch,
    rng: &mut TpccRng,
    ctx: Ctx,
    with_span: bool,
) -> Attempt<Outcome> {
    let next_id = || ctx.next_trade_id.fetch_add(1, Ordering::Relaxed);
    let retry = Retry {
        max: ctx.cfg.max_retries,
        give_up: ctx.done,
    };
    crate::attempt::attempt(conn, kind.tag(), retry, rng, with_span, |c| {
        execute(c, ctx.st, input, &next_id, scratch)
    })
}

/// Books an attempt: its type's figures when measured, the whole-run counts always. Returns
/// whether the thread should stop (a broken connection, or too many failures in a row).
fn book(
    ctx: Ctx,
    kind: TxType,
    a: &Attempt<Outcome>,
    extra_latency_ns: u64,
    measured: bool,
    tid: Option<u32>,
    consecutive_errors: &mut u32,
) -> bool {
    let mut s = ctx.lock();
    let i = kind.index();
    if let Ok(o) = &a.result {
        if *o == Outcome::RolledBack {
            s.out.rolled_back_all += 1;
        } else {
            s.out.committed_all[i] += 1;
        }
        if let Outcome::Triggered(t) = o {
            s.out.triggered_all += t.len() as u64;
        }
    }
    if measured {
        let t = &mut s.out.tx[i];
        t.retries += a.retries.len() as u64;
        t.writer_lock_wait_ns += a.lock_wait_ns;
        t.cpu_ns += a.cpu_ns;
        match &a.result {
            Ok(o) => {
                t.count += 1;
                if *o == Outcome::RolledBack {
                    t.rollbacks += 1;
                }
                t.latency.record(a.latency_ns + extra_latency_ns);
            }
            Err(_) => t.errors += 1,
        }
        for k in &a.retries {
            *s.out.retries_by_kind.entry(*k).or_default() += 1;
        }
        if let Err(e) = &a.result {
            *s.out.errors_by_kind.entry(e.kind).or_default() += 1;
        }
        s.out.in_tx_cpu = s.out.in_tx_cpu.plus(&a.cpu);
        s.out.spans.extend(a.tx_span(tid));
    }
    match &a.result {
        Ok(_) => s.second[i] += 1,
        Err(_) => s.second_errors += 1,
    }
    s.second_retries += a.retries.len() as u64;
    match &a.result {
        Err(e) => {
            if s.out.first_error.is_none() {
                s.out.first_error = Some(format!("{} failed: {e}", kind.name()));
            }
            *consecutive_errors += 1;
            e.kind == ErrorKind::Connection || *consecutive_errors >= CONSECUTIVE_ERRORS_MAX
        }
        Ok(_) => {
            *consecutive_errors = 0;
            false
        }
    }
}

fn terminal(conn: &mut dyn Conn, gen: &InputGen, seed: u64, ctx: Ctx) {
    let mut rng = TpccRng::new(seed);
    let mut scratch = Scratch::default();
    let tid = if ctx.cfg.record_spans {
        backend_tid(conn)
    } else {
        None
    };
    if ctx.cfg.record_spans && tid.is_none() {
        ctx.lock().out.terminals_without_backend += 1;
    }
    let mut errors = 0;
    while !ctx.done.load(Ordering::Relaxed) {
        let kind = InputGen::draw_type(&mut rng);
        let input = gen.draw(kind, &mut rng);
        let at_start = ctx.measuring();
        let a = attempt(
            conn,
            kind,
            &input,
            &mut scratch,
            &mut rng,
            ctx,
            tid.is_some(),
        );
        let measured = at_start && ctx.measuring();
        match &a.result {
            Ok(Outcome::Submitted(order)) => ctx.market.submit(order.clone(), ctx.measuring()),
            Ok(Outcome::Pending { t_id, symbol }) => ctx.market.pending(*t_id, symbol.clone()),
            _ => {}
        }
        if book(ctx, kind, &a, 0, measured, tid, &mut errors) {
            break;
        }
    }
}

fn market_worker(conn: &mut dyn Conn, seed: u64, ctx: Ctx) {
    let mut rng = TpccRng::new(seed);
    let mut scratch = Scratch::default();
    let tid = if ctx.cfg.record_spans {
        backend_tid(conn)
    } else {
        None
    };
    let mut errors = 0;
    while let Some(q) = ctx.market.next() {
        let (kind, input) = match q.job {
            Job::Result(o) => (TxType::TradeResult, Input::TradeResult(o)),
            Job::Feed(t) => (TxType::MarketFeed, Input::MarketFeed(t)),
        };
        let waited_ns = q.queued_at.elapsed().as_nanos() as u64;
        let at_start = ctx.measuring();
        let a = attempt(
            conn,
            kind,
            &input,
            &mut scratch,
            &mut rng,
            ctx,
            tid.is_some(),
        );
        let measured = at_start && ctx.measuring();
        match &a.result {
            Ok(Outcome::Executed(tick)) => ctx.market.executed(tick.clone(), measured),
            Ok(Outcome::Triggered(orders)) => ctx.market.triggered(orders.clone(), measured),
            _ => {}
        }
        if book(ctx, kind, &a, waited_ns, measured, tid, &mut errors) {
            break;
        }
    }
}

/// Runs the workload: `warmup`, then `duration` measured (or until `stop`). `on_second` hears each
/// measured second as it ends; `on_event(true)` comes at the start of the measured window,
/// `on_event(false)` at its end.
pub fn drive(
    connector: &dyn Connector,
    meta: &Meta,
    cfg: &DriverConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
    on_event: &mut dyn FnMut(bool),
) -> Result<DriverOutcome> {
    let st = Statements::new(connector.dialect());
    let gen = InputGen { meta: meta.clone() };
    let workers = market_workers(cfg.terminals);
    let mut conns: Vec<Box<dyn Conn>> = Vec::with_capacity(cfg.terminals + workers);
    for _ in 0..cfg.terminals + workers {
        conns.push(connector.connect(Purpose::Run)?);
    }
    let next_trade_id = AtomicI64::new(first_new_trade_id(conns[0].as_mut())?);
    let market = Market::new(cfg.seed, meta.scale.securities());
    let shared = Mutex::new(Shared::default());
    let phase = AtomicU8::new(PHASE_WARMUP);
    let done = AtomicBool::new(false);
    let alive = AtomicUsize::new(cfg.terminals);
    let ctx = Ctx {
        st: &st,
        cfg,
        phase: &phase,
        done: &done,
        shared: &shared,
        market: &market,
        next_trade_id: &next_trade_id,
    };
    let mut measured_s = 0.0;
    let mut seconds = Vec::new();
    let mut measure_started_at = None;
    let warmup_started = Instant::now();
    let mut warmup_s = 0.0;
    std::thread::scope(|scope| {
        let mut terminals = Vec::new();
        for (i, mut conn) in conns.into_iter().enumerate() {
            let (gen, alive) = (&gen, &alive);
            let seed = cfg.seed.wrapping_add(i as u64 * 0x9E37_79B9);
            if i < cfg.terminals {
                terminals.push(
                    std::thread::Builder::new()
                        .name(format!("customer-{i}"))
                        .spawn_scoped(scope, move || {
                            terminal(conn.as_mut(), gen, seed, ctx);
                            alive.fetch_sub(1, Ordering::SeqCst);
                        })
                        .expect("spawning a terminal thread"),
                );
            } else {
                std::thread::Builder::new()
                    .name(format!("market-{}", i - cfg.terminals))
                    .spawn_scoped(scope, move || market_worker(conn.as_mut(), seed, ctx))
                    .expect("spawning a market thread");
            }
        }
        let running = || !stop.load(Ordering::Relaxed) && alive.load(Ordering::Relaxed) > 0;
        let warmup_end = Instant::now() + cfg.warmup;
        while Instant::now() < warmup_end && running() {
            std::thread::sleep((warmup_end - Instant::now()).min(Duration::from_millis(100)));
        }
        warmup_s = warmup_started.elapsed().as_secs_f64();
        if running() {
            {
                let mut s = ctx.lock();
                s.second = [0; TYPES];
                s.second_errors = 0;
                s.second_retries = 0;
            }
            on_event(true);
            measure_started_at = Some(SystemTime::now());
            let start = Instant::now();
            phase.store(PHASE_MEASURE, Ordering::SeqCst);
            let end = start + cfg.duration;
            let mut tick = 1u64;
            loop {
                let next = (start + Duration::from_secs(tick)).min(end);
                while Instant::now() < next && running() {
                    std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
                }
                let now = Instant::now();
                let sample = {
                    let mut s = ctx.lock();
                    let sample = Second {
                        t_s: now.duration_since(start).as_secs_f64(),
                        counts: std::mem::take(&mut s.second),
                        errors: std::mem::take(&mut s.second_errors),
                        retries: std::mem::take(&mut s.second_retries),
                    };
                    if now >= end || !running() {
                        phase.store(PHASE_DONE, Ordering::SeqCst);
                    }
                    sample
                };
                on_second(&sample);
                seconds.push(sample);
                if phase.load(Ordering::SeqCst) == PHASE_DONE {
                    measured_s = now.duration_since(start).as_secs_f64();
                    break;
                }
                tick += 1;
            }
            on_event(false);
        }
        done.store(true, Ordering::SeqCst);
        for t in terminals {
            let _ = t.join();
        }
        // The customers have stopped; what the market still holds is dropped.
        let backlog = market.backlog();
        market.abandon();
        ctx.lock().out.market_backlog_at_end = backlog;
    });
    let mut out = shared.into_inner().unwrap_or_else(|p| p.into_inner()).out;
    out.seconds = seconds;
    out.measured_s = measured_s;
    out.warmup_s = warmup_s;
    out.terminals = cfg.terminals;
    out.market_workers = workers;
    out.measure_started_at = measure_started_at;
    out.interrupted = stop.load(Ordering::Relaxed);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_customer_mix_follows_egen_weights() {
        let mut rng = TpccRng::new(3);
        let mut counts = [0u32; TYPES];
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
