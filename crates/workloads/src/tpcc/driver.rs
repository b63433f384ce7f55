//! The driver: terminals as threads, each with its own connection, card deck and generator; an
//! optional keying and think time around each transaction; warm-up excluded; retries of
//! serialization failures, deadlocks and busy databases, bounded and counted by kind; one
//! HdrHistogram per transaction type; a per-second sample for the result's intervals.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use oltplab_core::{Error, Result};
use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::LatencyHistogram;

use super::random::{Constants, TpccRng};
use super::tx::{execute, Deck, Home, InputGen, Outcome, Scratch, Statements, TxType};
use super::{Connector, Meta, Purpose};
use crate::sql::{Conn, Dialect, ErrorKind};

#[derive(Clone, Debug)]
pub struct DriverConfig {
    pub terminals: usize,
    pub duration: Duration,
    pub warmup: Duration,
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
}

/// When one measured transaction ran, on which server process or thread: a server's I/O trace
/// records the caller's thread id, so its records inside a span belong to that transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxSpan {
    /// The server's thread (MariaDB) or process (PostgreSQL) serving the terminal's connection.
    pub backend_tid: u32,
    /// CLOCK_MONOTONIC ([`oltplab_trace::monotonic_ns`]), retries included.
    pub start_ns: u64,
    pub end_ns: u64,
    pub tx: TxType,
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
    let shared = Mutex::new(Shared::default());
    let phase = AtomicU8::new(PHASE_WARMUP);
    let done = AtomicBool::new(false);
    let alive = AtomicUsize::new(cfg.terminals);
    let lock = || shared.lock().unwrap_or_else(|p| p.into_inner());

    let mut outcome = DriverOutcome {
        terminals: cfg.terminals,
        run_constants,
        ..Default::default()
    };
    if let Some(t) = cfg.start_at {
        if !wait_until(t, stop) {
            return Err(Error::Interrupted);
        }
    }
    std::thread::scope(|scope| {
        for (i, mut conn) in conns.into_iter().enumerate() {
            let (statements, gen, phase, done, alive, shared) =
                (&statements, &gen, &phase, &done, &alive, &shared);
            let home = home_of(i, cfg.terminals, homes, cfg.keying_think);
            let seed = cfg.seed.wrapping_add(i as u64 * 0x9E37_79B9);
            std::thread::Builder::new()
                .name(format!("terminal-{i}"))
                .spawn_scoped(scope, move || {
                    terminal(
                        conn.as_mut(),
                        statements,
                        gen,
                        home,
                        seed,
                        cfg,
                        phase,
                        done,
                        shared,
                    );
                    alive.fetch_sub(1, Ordering::SeqCst);
                })
                .expect("spawning a terminal thread");
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
        while Instant::now() < measure_start
            && !stop.load(Ordering::Relaxed)
            && alive.load(Ordering::Relaxed) > 0
        {
            std::thread::sleep((measure_start - Instant::now()).min(Duration::from_millis(100)));
        }
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

#[allow(clippy::too_many_arguments)]
fn terminal(
    conn: &mut dyn Conn,
    statements: &Statements,
    gen: &InputGen,
    home: Home,
    seed: u64,
    cfg: &DriverConfig,
    phase: &AtomicU8,
    done: &AtomicBool,
    shared: &Mutex<Shared>,
) {
    let lock = || shared.lock().unwrap_or_else(|p| p.into_inner());
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
        let cpu_before = CpuTime::thread();
        let spin_before = oltplab_dbs::vfs::thread_spin_ns();
        let lock_wait_before = conn.writer_lock_wait_ns();
        let started = Instant::now();
        let started_ns = backend_tid.map_or(0, |_| oltplab_trace::monotonic_ns());
        oltplab_dbs::vfs::set_thread_tag(kind.tag());
        let mut retries: Vec<ErrorKind> = Vec::new();
        let result = loop {
            match execute(conn, statements, &input, &mut scratch) {
                Ok(o) => break Ok(o),
                Err(e) => {
                    let _ = conn.rollback();
                    if e.kind.retryable()
                        && (retries.len() as u32) < cfg.max_retries
                        && !done.load(Ordering::Relaxed)
                    {
                        retries.push(e.kind);
                        // A short, growing pause lets the winner of the conflict finish.
                        std::thread::sleep(Duration::from_micros(
                            50 * retries.len() as u64 + rng.uniform(0, 100) as u64,
                        ));
                        continue;
                    }
                    break Err(e);
                }
            }
        };
        oltplab_dbs::vfs::set_thread_tag(0);
        let latency_ns = started.elapsed().as_nanos() as u64;
        let lock_wait_ns = conn.writer_lock_wait_ns() - lock_wait_before;
        let measured =
            phase_at_start == PHASE_MEASURE && phase.load(Ordering::Relaxed) == PHASE_MEASURE;
        let tx_cpu = CpuTime::thread().since(&cpu_before);
        if measured {
            in_tx_cpu = in_tx_cpu.plus(&tx_cpu);
            if let Some(tid) = backend_tid {
                spans.push(TxSpan {
                    backend_tid: tid,
                    start_ns: started_ns,
                    end_ns: oltplab_trace::monotonic_ns(),
                    tx: kind,
                });
            }
        }
        let fatal = match &result {
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
            let mut s = lock();
            if measured {
                let t = &mut s.tx[kind.index()];
                t.retries += retries.len() as u64;
                t.writer_lock_wait_ns += lock_wait_ns;
                // Without the emulator's spin in this thread (SQLite's VFS waits here).
                let spin_ns = oltplab_dbs::vfs::thread_spin_ns() - spin_before;
                t.cpu_ns += ((tx_cpu.total_s() * 1e9) as u64).saturating_sub(spin_ns);
                match &result {
                    Ok(o) => {
                        t.count += 1;
                        if *o == Outcome::RolledBack {
                            t.rollbacks += 1;
                        }
                        t.latency.record(latency_ns);
                    }
                    Err(_) => t.errors += 1,
                }
                for k in &retries {
                    *s.retries_by_kind.entry(*k).or_default() += 1;
                }
                if let Err(e) = &result {
                    *s.errors_by_kind.entry(e.kind).or_default() += 1;
                }
            }
            // The per-second counters run through the warm-up too (the clock clears them).
            match &result {
                Ok(_) => {
                    s.second[kind.index()] += 1;
                    if kind == TxType::NewOrder {
                        s.second_no.record(latency_ns);
                    }
                }
                Err(_) => s.second_errors += 1,
            }
            s.second_retries += retries.len() as u64;
            if let Err(e) = &result {
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
    let mut s = lock();
    s.in_tx_cpu = s.in_tx_cpu.plus(&in_tx_cpu);
    s.spans.append(&mut spans);
    if cfg.record_spans && backend_tid.is_none() {
        s.terminals_without_backend += 1;
    }
}

/// The server thread or process serving `conn`, as the kernel numbers it (what a trace records):
/// PostgreSQL's backend pid; MariaDB's connection thread (information_schema.PROCESSLIST's TID,
/// or performance_schema when that is on). None for SQLite (in-process: the VFS tags its I/O
/// itself) or when the server does not tell.
fn backend_tid(conn: &mut dyn Conn) -> Option<u32> {
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
