//! The driver: terminals as threads, each with its own connection, card deck and generator; an
//! optional keying and think time around each transaction; Delivery deferred to a queue served by
//! workers with their own connections (spec 2.7.2); warm-up excluded; retries of serialization
//! failures, deadlocks and busy databases, bounded and counted by kind; one HdrHistogram per
//! transaction type; a per-second sample for the result's intervals.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use oltplab_core::{Error, Result};
use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::LatencyHistogram;

use super::random::{Constants, TpccRng};
use super::tx::{execute, Deck, Home, Input, InputGen, Outcome, Scratch, Statements, TxType};
use super::{Connector, Meta, Purpose};
pub use crate::attempt::TxSpan;
use crate::attempt::{Attempt, Retry};
use crate::sql::{Conn, Dialect, ErrorKind};

#[derive(Clone, Debug)]
pub struct DriverConfig {
    pub terminals: usize,
    pub duration: Duration,
    /// The warm-up; with `warmup_auto`, the longest it may take.
    pub warmup: Duration,
    /// Warm up until the New-Order rate is steady (see [`rate_is_steady`]), at most `warmup`.
    pub warmup_auto: bool,
    pub keying_think: bool,
    pub seed: u64,
    /// Attempts after the first for a retryable error.
    pub max_retries: u32,
    /// Keep a [`TxSpan`] of every measured transaction, to tie a server's I/O trace to them.
    pub record_spans: bool,
    /// The terminals' home warehouses, first and last (1-based, inclusive); None: all. Remote
    /// order lines and payments still reach every warehouse (spec 2.4.1.5, 2.5.1.2), so several
    /// drivers with disjoint ranges together run one database's workload.
    pub home_warehouses: Option<(i64, i64)>,
    /// When the warm-up starts (wall clock), so that drivers on several machines measure the same
    /// window: the measured window then starts at `start_at + warmup`, even if connecting took
    /// longer than the time left (the warm-up is then shorter). None: at once.
    pub start_at: Option<SystemTime>,
    /// Keep the key of every New-Order whose COMMIT returned (warm-up included), for a check of
    /// durability after a power cut.
    pub record_new_orders: bool,
}

/// A terminal that fails this many transactions in a row stops: something is broken, not busy.
const CONSECUTIVE_ERRORS_MAX: u32 = 100;

const PHASE_WARMUP: u8 = 0;
const PHASE_MEASURE: u8 = 1;
const PHASE_DONE: u8 = 2;

/// Counts and latencies of one transaction type.
#[derive(Clone, Debug, Default)]
pub struct TxStats {
    /// Transactions that completed (committed, or rolled back as intended).
    pub count: u64,
    /// Transactions that failed for good.
    pub errors: u64,
    /// New-Order's intended rollbacks (included in `count`).
    pub rollbacks: u64,
    /// Retries (each a re-run of the whole transaction).
    pub retries: u64,
    pub latency: LatencyHistogram,
    /// Time spent waiting for the database-wide writer lock (SQLite), summed over transactions.
    pub writer_lock_wait_ns: u64,
    /// The terminal thread's CPU time inside transactions, less the device emulator's spin in it
    /// (SQLite: the engine's own work).
    pub cpu_ns: u64,
}

/// The deferred Delivery executions of requests queued in the measured window (spec 2.7.2):
/// drained after the window, so every one is counted.
#[derive(Clone, Debug, Default)]
pub struct DeferredDelivery {
    /// Requests the terminals queued.
    pub queued: u64,
    /// Executions that committed.
    pub executed: u64,
    /// Executions that failed for good.
    pub errors: u64,
    pub retries: u64,
    /// Districts found with no undelivered order, over all executions (ten per execution).
    pub skipped_districts: u64,
    /// From the request's queueing to its execution's commit (the spec's limit: 90 % within 80 s).
    pub latency: LatencyHistogram,
}

/// One second of the measured window.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Second {
    pub t_s: f64,
    /// Completed transactions of each type in that second.
    pub counts: [u64; 5],
    pub errors: u64,
    pub retries: u64,
    pub new_order_lat_ns_p99: u64,
    pub new_order_lat_ns_mean: f64,
}

#[derive(Default)]
struct Shared {
    tx: [TxStats; 5],
    errors_by_kind: BTreeMap<ErrorKind, u64>,
    retries_by_kind: BTreeMap<ErrorKind, u64>,
    second: [u64; 5],
    second_errors: u64,
    second_retries: u64,
    second_no: LatencyHistogram,
    first_error: Option<String>,
    /// CPU time terminal threads spent inside measured transactions (SQLite: the engine's work).
    in_tx_cpu: CpuTime,
    spans: Vec<TxSpan>,
    terminals_without_backend: usize,
    deferred: DeferredDelivery,
    new_orders: Vec<(i64, i64, i64)>,
}

/// What the driver measured.
#[derive(Clone, Debug, Default)]
pub struct DriverOutcome {
    pub tx: [TxStats; 5],
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    pub retries_by_kind: BTreeMap<ErrorKind, u64>,
    pub seconds: Vec<Second>,
    pub measured_s: f64,
    pub terminals: usize,
    pub run_constants: Constants,
    pub first_error: Option<String>,
    /// CPU time the terminals spent inside measured transactions: for embedded SQLite, the
    /// engine's share of the process's CPU.
    pub in_tx_cpu: CpuTime,
    /// True when `stop` ended the run before its duration.
    pub interrupted: bool,
    /// With `record_spans`: every measured transaction of terminals whose server thread is known.
    pub spans: Vec<TxSpan>,
    /// With `record_spans`: terminals whose server thread could not be found (their I/O stays
    /// untagged).
    pub terminals_without_backend: usize,
    /// Wall-clock start of the measured window (None if it never started): `Second::t_s` counts
    /// from here, and `oltplab merge` puts several drivers' seconds on one clock with it.
    pub measure_started_at: Option<SystemTime>,
    /// Delivery's deferred executions ([`TxStats`] of Delivery count the terminals' requests).
    pub deferred: DeferredDelivery,
    /// Workers that executed the deferred Deliveries, each with its own connection.
    pub delivery_workers: usize,
    /// The warm-up as it ran (with `warmup_auto`, until the rate was steady).
    pub warmup_s: f64,
    /// With `warmup_auto`: whether the rate became steady before the warm-up's limit.
    pub warmup_steady: Option<bool>,
    /// With `record_new_orders`: (w, d, o_id) of every New-Order acknowledged as committed.
    pub new_orders: Vec<(i64, i64, i64)>,
}

/// A Delivery request waiting for a worker.
struct Queued {
    input: Input,
    queued_at: Instant,
    /// Queued in the measured window: its execution is counted.
    measured: bool,
}

/// The deferred Delivery queue (spec 2.7.2.1: the terminal's request is queued and acknowledged,
/// the execution follows later and is recorded on its own).
#[derive(Default)]
struct DeliveryQueue {
    items: Mutex<VecDeque<Queued>>,
    ready: Condvar,
}

/// One Delivery worker per ten terminals (a warehouse's worth under keying times), at least one.
pub fn delivery_workers(terminals: usize) -> usize {
    terminals.div_ceil(10).max(1)
}

/// Moments the caller may want to sample (CPU, device counters) exactly at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    MeasureStart,
    MeasureEnd,
}

/// Sleeps `d`, waking early when `done` is set.
fn sleep_unless(d: Duration, done: &AtomicBool) {
    let until = Instant::now() + d;
    while !done.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= until {
            break;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(100)));
    }
}

/// The home of terminal `i` among the home warehouses `first..=last` (see [`Home`]): terminals
/// are spread evenly over them.
pub fn home_of(i: usize, terminals: usize, (first, last): (i64, i64), keying_think: bool) -> Home {
    let w = (last - first + 1) as usize;
    if keying_think {
        Home {
            w: Some((i / 10 % w) as i64 + first),
            d: Some((i % 10) as i64 + 1),
        }
    } else if terminals >= w {
        Home {
            w: Some((i % w) as i64 + first),
            d: None,
        }
    } else {
        Home { w: None, d: None }
    }
}

/// Sleeps until the wall-clock time `t` (at once if it has passed); false if `stop` came first.
fn wait_until(t: SystemTime, stop: &AtomicBool) -> bool {
    while let Ok(left) = t.duration_since(SystemTime::now()) {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
    !stop.load(Ordering::Relaxed)
}

/// Runs the workload: `warmup`, then `duration` measured (or until `stop`). `on_second` hears each
/// measured second as it ends, `on_event` the start and end of the measured window.
pub fn drive(
    connector: &dyn Connector,
    meta: &Meta,
    cfg: &DriverConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second, &[TxStats; 5]),
    on_event: &mut dyn FnMut(Event),
) -> Result<DriverOutcome> {
    let mut rng = TpccRng::new(cfg.seed ^ 0x5255_4e00);
    let run_constants = Constants::for_run(&meta.load_constants, &mut rng);
    let statements = Statements::new(connector.dialect());
    let homes = cfg.home_warehouses.unwrap_or((1, meta.warehouses));
    assert!(
        1 <= homes.0 && homes.0 <= homes.1 && homes.1 <= meta.warehouses,
        "home warehouses {homes:?} outside 1..={}: the caller checks the range",
        meta.warehouses
    );
    let gen = InputGen {
        warehouses: meta.warehouses,
        home_warehouses: homes,
        c: run_constants,
    };
    // Connect every terminal before the clock starts; a refused connection is a usage error.
    let mut conns: Vec<Box<dyn Conn>> = Vec::with_capacity(cfg.terminals);
    for _ in 0..cfg.terminals {
        conns.push(connector.connect(Purpose::Run)?);
    }
    let workers = delivery_workers(cfg.terminals);
    let mut worker_conns: Vec<Box<dyn Conn>> = Vec::with_capacity(workers);
    for _ in 0..workers {
        worker_conns.push(connector.connect(Purpose::Run)?);
    }
    let queue = DeliveryQueue::default();
    let shared = Mutex::new(Shared::default());
    let phase = AtomicU8::new(PHASE_WARMUP);
    let done = AtomicBool::new(false);
    let alive = AtomicUsize::new(cfg.terminals);
    let lock = || shared.lock().unwrap_or_else(|p| p.into_inner());

    let mut outcome = DriverOutcome {
        terminals: cfg.terminals,
        run_constants,
        delivery_workers: workers,
        ..Default::default()
    };
    if let Some(t) = cfg.start_at {
        if !wait_until(t, stop) {
            return Err(Error::Interrupted);
        }
    }
    std::thread::scope(|scope| {
        let ctx = Ctx {
            statements: &statements,
            cfg,
            phase: &phase,
            done: &done,
            alive: &alive,
            shared: &shared,
            queue: &queue,
        };
        for (i, mut conn) in conns.into_iter().enumerate() {
            let gen = &gen;
            let home = home_of(i, cfg.terminals, homes, cfg.keying_think);
            let seed = cfg.seed.wrapping_add(i as u64 * 0x9E37_79B9);
            std::thread::Builder::new()
                .name(format!("terminal-{i}"))
                .spawn_scoped(scope, move || {
                    terminal(conn.as_mut(), gen, home, seed, ctx);
                    ctx.alive.fetch_sub(1, Ordering::SeqCst);
                    // A worker waiting for requests learns that no more will come.
                    ctx.queue.ready.notify_all();
                })
                .expect("spawning a terminal thread");
        }
        for (i, mut conn) in worker_conns.into_iter().enumerate() {
            let seed = cfg.seed.wrapping_add(0xD311_0000 + i as u64);
            std::thread::Builder::new()
                .name(format!("delivery-{i}"))
                .spawn_scoped(scope, move || delivery_worker(conn.as_mut(), seed, ctx))
                .expect("spawning a delivery worker thread");
        }

        // The clock: warm-up, then one sample per second of the measured window.
        let measure_start = match cfg.start_at {
            Some(t) => {
                let left = (t + cfg.warmup)
                    .duration_since(SystemTime::now())
                    .unwrap_or_default();
                Instant::now() + left
            }
            None => Instant::now() + cfg.warmup,
        };
        let warmup_started = Instant::now();
        if cfg.warmup_auto {
            // New-Orders of each second of the warm-up, until the last two 10 s agree.
            let mut per_second: Vec<u64> = Vec::new();
            let mut next = warmup_started;
            while Instant::now() < measure_start
                && !stop.load(Ordering::Relaxed)
                && alive.load(Ordering::Relaxed) > 0
            {
                next += Duration::from_secs(1);
                while Instant::now() < next && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep((next - Instant::now()).min(Duration::from_millis(100)));
                }
                per_second.push(std::mem::take(&mut lock().second[TxType::NewOrder.index()]));
                if rate_is_steady(&per_second) {
                    break;
                }
            }
            outcome.warmup_steady = Some(rate_is_steady(&per_second));
        }
        while !cfg.warmup_auto
            && Instant::now() < measure_start
            && !stop.load(Ordering::Relaxed)
            && alive.load(Ordering::Relaxed) > 0
        {
            std::thread::sleep((measure_start - Instant::now()).min(Duration::from_millis(100)));
        }
        outcome.warmup_s = warmup_started.elapsed().as_secs_f64();
        if !stop.load(Ordering::Relaxed) && alive.load(Ordering::Relaxed) > 0 {
            {
                // Discard what the warm-up put into the per-second counters.
                let mut s = lock();
                s.second = [0; 5];
                s.second_errors = 0;
                s.second_retries = 0;
                s.second_no.reset();
            }
            on_event(Event::MeasureStart);
            let measure_start = Instant::now();
            outcome.measure_started_at = Some(SystemTime::now());
            phase.store(PHASE_MEASURE, Ordering::SeqCst);
            let end = measure_start + cfg.duration;
            let mut tick = 1u64;
            loop {
                let next = (measure_start + Duration::from_secs(tick)).min(end);
                while Instant::now() < next
                    && !stop.load(Ordering::Relaxed)
                    && alive.load(Ordering::Relaxed) > 0
                {
                    std::thread::sleep((next - Instant::now()).min(Duration::from_millis(50)));
                }
                let now = Instant::now();
                let last = now >= end
                    || stop.load(Ordering::Relaxed)
                    || alive.load(Ordering::Relaxed) == 0;
                if last {
                    phase.store(PHASE_DONE, Ordering::SeqCst);
                    outcome.measured_s = (now - measure_start).as_secs_f64();
                    on_event(Event::MeasureEnd);
                }
                let mut s = lock();
                let stats = s.second_no.stats();
                let second = Second {
                    t_s: (now - measure_start).as_secs_f64(),
                    counts: s.second,
                    errors: s.second_errors,
                    retries: s.second_retries,
                    new_order_lat_ns_p99: stats.p99,
                    new_order_lat_ns_mean: stats.mean,
                };
                s.second = [0; 5];
                s.second_errors = 0;
                s.second_retries = 0;
                s.second_no.reset();
                let totals = s.tx.clone();
                drop(s);
                on_second(&second, &totals);
                outcome.seconds.push(second);
                if last {
                    break;
                }
                tick += 1;
            }
        }
        phase.store(PHASE_DONE, Ordering::SeqCst);
        done.store(true, Ordering::SeqCst);
    });
    let s = shared.into_inner().unwrap_or_else(|p| p.into_inner());
    outcome.tx = s.tx;
    outcome.errors_by_kind = s.errors_by_kind;
    outcome.retries_by_kind = s.retries_by_kind;
    outcome.first_error = s.first_error;
    outcome.in_tx_cpu = s.in_tx_cpu;
    outcome.spans = s.spans;
    outcome.terminals_without_backend = s.terminals_without_backend;
    outcome.deferred = s.deferred;
    outcome.new_orders = s.new_orders;
    outcome.interrupted = stop.load(Ordering::Relaxed);
    if outcome.tx.iter().all(|t| t.count == 0) {
        if let Some(e) = &outcome.first_error {
            return Err(Error::failed(format!(
                "every transaction failed; the first error was: {e}"
            )));
        }
    }
    Ok(outcome)
}

/// What terminals and Delivery workers share.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    statements: &'a Statements,
    cfg: &'a DriverConfig,
    phase: &'a AtomicU8,
    done: &'a AtomicBool,
    /// Terminals still running.
    alive: &'a AtomicUsize,
    shared: &'a Mutex<Shared>,
    queue: &'a DeliveryQueue,
}

impl Ctx<'_> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs `input` with retries, stopping them once `give_up` is set (terminals: the run ended;
/// the Delivery workers never give up, so that the queue drains).
#[allow(clippy::too_many_arguments)]
fn attempt(
    conn: &mut dyn Conn,
    kind: TxType,
    input: &Input,
    scratch: &mut Scratch,
    rng: &mut TpccRng,
    ctx: Ctx,
    give_up: &AtomicBool,
    with_span: bool,
) -> Attempt<Outcome> {
    let retry = Retry {
        max: ctx.cfg.max_retries,
        give_up,
    };
    crate::attempt::attempt(conn, kind.tag(), retry, rng, with_span, |c| {
        execute(c, ctx.statements, input, scratch)
    })
}

fn terminal(conn: &mut dyn Conn, gen: &InputGen, home: Home, seed: u64, ctx: Ctx) {
    let (cfg, phase, done) = (ctx.cfg, ctx.phase, ctx.done);
    let mut rng = TpccRng::new(seed);
    let mut deck = Deck::default();
    let mut scratch = Scratch::default();
    let mut consecutive_errors = 0u32;
    let mut in_tx_cpu = CpuTime::default();
    let backend_tid = if cfg.record_spans {
        backend_tid(conn)
    } else {
        None
    };
    let mut spans = Vec::new();
    let mut new_orders = Vec::new();
    while !done.load(Ordering::Relaxed) {
        let kind = deck.deal(&mut rng);
        if cfg.keying_think {
            sleep_unless(Duration::from_secs_f64(kind.keying_s()), done);
            if done.load(Ordering::Relaxed) {
                break;
            }
        }
        let input = gen.draw(kind, home, &mut rng);
        let phase_at_start = phase.load(Ordering::Relaxed);
        let a = if kind == TxType::Delivery {
            // Queued for a worker; the terminal's response time is the queueing (2.7.2).
            let started = Instant::now();
            ctx.queue
                .items
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push_back(Queued {
                    input,
                    queued_at: started,
                    measured: phase_at_start == PHASE_MEASURE,
                });
            ctx.queue.ready.notify_one();
            Attempt::done(Ok(Outcome::Committed), started.elapsed().as_nanos() as u64)
        } else {
            attempt(
                conn,
                kind,
                &input,
                &mut scratch,
                &mut rng,
                ctx,
                done,
                backend_tid.is_some(),
            )
        };
        if cfg.record_new_orders && kind == TxType::NewOrder && a.result.is_ok() {
            new_orders.extend(scratch.committed_order());
        }
        let measured =
            phase_at_start == PHASE_MEASURE && phase.load(Ordering::Relaxed) == PHASE_MEASURE;
        if measured {
            in_tx_cpu = in_tx_cpu.plus(&a.cpu);
            spans.extend(a.tx_span(backend_tid));
        }
        let fatal = match &a.result {
            Err(e) => {
                consecutive_errors += 1;
                e.kind == ErrorKind::Connection || consecutive_errors >= CONSECUTIVE_ERRORS_MAX
            }
            Ok(_) => {
                consecutive_errors = 0;
                false
            }
        };
        {
            let mut s = ctx.lock();
            if measured {
                let t = &mut s.tx[kind.index()];
                t.retries += a.retries.len() as u64;
                t.writer_lock_wait_ns += a.lock_wait_ns;
                t.cpu_ns += a.cpu_ns;
                match &a.result {
                    Ok(o) => {
                        t.count += 1;
                        if *o == Outcome::RolledBack {
                            t.rollbacks += 1;
                        }
                        t.latency.record(a.latency_ns);
                    }
                    Err(_) => t.errors += 1,
                }
                if kind == TxType::Delivery {
                    s.deferred.queued += 1;
                }
                for k in &a.retries {
                    *s.retries_by_kind.entry(*k).or_default() += 1;
                }
                if let Err(e) = &a.result {
                    *s.errors_by_kind.entry(e.kind).or_default() += 1;
                }
            }
            // The per-second counters run through the warm-up too (the clock clears them).
            match &a.result {
                Ok(_) => {
                    s.second[kind.index()] += 1;
                    if kind == TxType::NewOrder {
                        s.second_no.record(a.latency_ns);
                    }
                }
                Err(_) => s.second_errors += 1,
            }
            s.second_retries += a.retries.len() as u64;
            if let Err(e) = &a.result {
                if s.first_error.is_none() {
                    s.first_error = Some(format!("{} failed: {e}", kind.name()));
                }
            }
        }
        if fatal {
            break;
        }
        if cfg.keying_think {
            // Negative-exponential think time, capped at 10× its mean (spec 5.2.5.4).
            let mean = kind.think_mean_s();
            let think = (-(1.0 - rng.unit()).ln() * mean).min(10.0 * mean);
            sleep_unless(Duration::from_secs_f64(think), done);
        }
    }
    let mut s = ctx.lock();
    s.in_tx_cpu = s.in_tx_cpu.plus(&in_tx_cpu);
    s.spans.append(&mut spans);
    s.new_orders.append(&mut new_orders);
    if cfg.record_spans && backend_tid.is_none() {
        s.terminals_without_backend += 1;
    }
}

/// Executes queued Deliveries until the terminals have stopped and the queue is empty: requests
/// queued in the measured window are executed and counted even after it (the queue drains).
fn delivery_worker(conn: &mut dyn Conn, seed: u64, ctx: Ctx) {
    let mut rng = TpccRng::new(seed);
    let mut scratch = Scratch::default();
    let mut in_tx_cpu = CpuTime::default();
    let backend_tid = if ctx.cfg.record_spans {
        backend_tid(conn)
    } else {
        None
    };
    let mut spans = Vec::new();
    let mut broken = false;
    loop {
        let next = {
            let mut items = ctx.queue.items.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if let Some(q) = items.pop_front() {
                    break Some(q);
                }
                if ctx.alive.load(Ordering::SeqCst) == 0 {
                    break None;
                }
                items = ctx
                    .queue
                    .ready
                    .wait_timeout(items, Duration::from_millis(100))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
        };
        let Some(q) = next else {
            break;
        };
        if broken {
            // The connection broke: the request fails, but the queue still drains.
            if q.measured {
                ctx.lock().deferred.errors += 1;
            }
            continue;
        }
        let a = attempt(
            conn,
            TxType::Delivery,
            &q.input,
            &mut scratch,
            &mut rng,
            ctx,
            &AtomicBool::new(false),
            backend_tid.is_some(),
        );
        if let Err(e) = &a.result {
            broken = e.kind == ErrorKind::Connection;
        }
        if !q.measured {
            continue;
        }
        in_tx_cpu = in_tx_cpu.plus(&a.cpu);
        spans.extend(a.tx_span(backend_tid));
        let mut s = ctx.lock();
        let t = &mut s.tx[TxType::Delivery.index()];
        t.writer_lock_wait_ns += a.lock_wait_ns;
        t.cpu_ns += a.cpu_ns;
        let d = &mut s.deferred;
        d.retries += a.retries.len() as u64;
        match &a.result {
            Ok(_) => {
                d.executed += 1;
                d.skipped_districts += u64::from(scratch.skipped_districts());
                d.latency.record(q.queued_at.elapsed().as_nanos() as u64);
            }
            Err(_) => d.errors += 1,
        }
        for k in &a.retries {
            *s.retries_by_kind.entry(*k).or_default() += 1;
        }
        if let Err(e) = &a.result {
            *s.errors_by_kind.entry(e.kind).or_default() += 1;
            if s.first_error.is_none() {
                s.first_error = Some(format!("delivery (deferred) failed: {e}"));
            }
        }
    }
    let mut s = ctx.lock();
    s.in_tx_cpu = s.in_tx_cpu.plus(&in_tx_cpu);
    s.spans.append(&mut spans);
}

/// Whether per-second New-Order counts have levelled off: at least 20 s, and the last 10 s
/// differ from the 10 s before by at most 5 % or twice the Poisson noise of such counts
/// (paced runs complete only a few New-Orders a second).
pub fn rate_is_steady(per_second: &[u64]) -> bool {
    let n = per_second.len();
    if n < 20 {
        return false;
    }
    let before: u64 = per_second[n - 20..n - 10].iter().sum();
    let last: u64 = per_second[n - 10..].iter().sum();
    let diff = (last as f64 - before as f64).abs();
    last > 0 && diff <= (0.05 * last as f64).max(2.0 * ((last + before) as f64).sqrt())
}

/// The server thread or process serving `conn`, as the kernel numbers it (what a trace records):
/// PostgreSQL's backend pid; MariaDB's connection thread (information_schema.PROCESSLIST's TID,
/// or performance_schema when that is on). None for SQLite (in-process: the VFS tags its I/O
/// itself) or when the server does not tell.
pub fn backend_tid(conn: &mut dyn Conn) -> Option<u32> {
    let queries: &[&str] = match conn.dialect() {
        Dialect::Postgres => &["SELECT pg_backend_pid()"],
        Dialect::Mysql => &[
            "SELECT TID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()",
            "SELECT THREAD_OS_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()",
        ],
        Dialect::Sqlite => &[],
    };
    queries.iter().find_map(|q| {
        let rows = conn.query(q).ok()?;
        if rows.is_empty() {
            return None;
        }
        Some(rows.get(0, 0).i64())
            .filter(|&t| t > 0)
            .map(|t| t as u32)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tpcc::tx::Input;

    #[test]
    fn a_rate_is_steady_once_two_ten_second_windows_agree() {
        let rising: Vec<u64> = (0..30).map(|i| 100 + 20 * i).collect();
        assert!(!rate_is_steady(&rising));
        let mut level = rising.clone();
        level.extend([700; 20]);
        assert!(rate_is_steady(&level));
        assert!(!rate_is_steady(&[700; 19]), "at least 20 s");
        // A paced run's few New-Orders a second: Poisson noise is not a trend.
        let paced = [2, 0, 3, 1, 2, 4, 1, 2, 2, 3, 1, 3, 2, 2, 0, 3, 2, 1, 4, 2];
        assert!(rate_is_steady(&paced));
        assert!(!rate_is_steady(&[0; 25]), "nothing completes");
    }

    #[test]
    fn terminals_spread_over_the_home_range() {
        // 6 terminals on warehouses 3–5 of 8: two each, in order.
        let homes: Vec<i64> = (0..6)
            .map(|i| home_of(i, 6, (3, 5), false).w.unwrap())
            .collect();
        assert_eq!(homes, [3, 4, 5, 3, 4, 5]);
        // Keying/think: 10 per warehouse, each with its own district.
        let h = home_of(13, 20, (7, 8), true);
        assert_eq!((h.w, h.d), (Some(8), Some(4)));
        // Fewer terminals than warehouses: the home is drawn per transaction, inside the range.
        assert!(home_of(0, 2, (2, 6), false).w.is_none());
    }

    #[test]
    fn homes_stay_in_the_range_and_remote_warehouses_do_not() {
        let gen = InputGen {
            warehouses: 10,
            home_warehouses: (4, 5),
            c: Constants::default(),
        };
        let mut rng = TpccRng::new(7);
        let free = Home { w: None, d: None };
        let (mut homes, mut remote) = (std::collections::BTreeSet::new(), 0);
        for _ in 0..20_000 {
            if let Input::Payment { w, c_w, .. } = gen.draw(TxType::Payment, free, &mut rng) {
                homes.insert(w);
                if !(4..=5).contains(&c_w) {
                    remote += 1;
                }
            }
        }
        assert_eq!(homes.into_iter().collect::<Vec<_>>(), [4, 5]);
        // 15 % of payments are remote, 8 of the 9 other warehouses lie outside the range.
        assert!(
            remote > 2000,
            "only {remote} payments reached other warehouses"
        );
    }
}
