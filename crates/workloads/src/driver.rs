//! The one driver every clock-driven workload runs on (after BenchBase's `Worker`): terminals as
//! threads, each with its own connection and generator; keying and think times around each
//! transaction when the workload has them; the warm-up (fixed, or until the headline rate is
//! steady); the measured window with one sample a second; retries (bounded, with a random pause,
//! counted by kind); spans for tying a server's trace to the transactions; `--start-at`; requests
//! deferred to workers (TPC-C's Delivery) or background work a workload makes of committed
//! transactions (the brokerage market). A workload only says what its transaction kinds are, draws
//! the next input of a terminal and executes one input ([`Workload`]).
//!
//! Fixed work instead of a window ([`FixedWork`], order entry): each terminal runs its warm-up
//! transactions, the window opens once every terminal has, and closes when the last terminal has
//! run its measured ones. Terminals may share threads ([`DriverConfig::threads`]), each thread
//! taking turns over its terminals one transaction at a time (thousands of embedded connections
//! on a few cores).
//!
//! The window: the phase turns [`Phase::Measure`] when the warm-up ends and [`Phase::Done`] at
//! the instant the last sample is taken, both under the statistics' lock, and a transaction is
//! measured when it started in the window and is booked (under that lock) before it closes — so
//! the per-second samples add up to the totals exactly. [`Event::MeasureStart`] comes just before
//! the window opens and [`Event::MeasureEnd`] just after it closes (before the last second is
//! handed on), so edge samples (CPU, device counters, the capture) sit as close to the window as
//! they can. A run in which every transaction failed is an error, whatever the workload.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use oltplab_core::{Error, Result};
use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::LatencyHistogram;

pub use crate::attempt::TxSpan;
use crate::attempt::{Attempt, Retry};
use crate::random::Rng;
use crate::sql::{Conn, Connector, DbResult, Dialect, ErrorKind, Purpose};

/// Where a run is. Transactions count only when they start and end in `Measure`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    Warmup = 0,
    Measure = 1,
    Done = 2,
}

struct PhaseCell(AtomicU8);

impl PhaseCell {
    fn get(&self) -> Phase {
        match self.0.load(Ordering::Relaxed) {
            0 => Phase::Warmup,
            1 => Phase::Measure,
            _ => Phase::Done,
        }
    }

    fn set(&self, p: Phase) {
        self.0.store(p as u8, Ordering::SeqCst);
    }
}

/// Moments the caller may want to sample (CPU, device counters, the capture) exactly at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    MeasureStart,
    MeasureEnd,
}

/// How the driver runs a workload; what the workload draws is its own configuration.
#[derive(Clone, Debug)]
pub struct DriverConfig {
    pub terminals: usize,
    pub duration: Duration,
    /// The warm-up; with `warmup_auto`, the longest it may take.
    pub warmup: Duration,
    /// Warm up until the headline kind's rate is steady (see [`rate_is_steady`]), at most `warmup`.
    pub warmup_auto: bool,
    pub seed: u64,
    /// Attempts after the first for a retryable error.
    pub max_retries: u32,
    /// Keep a [`TxSpan`] of every measured transaction, to tie a server's I/O trace to them.
    pub record_spans: bool,
    /// When the warm-up starts (wall clock), so that drivers on several machines measure the same
    /// window: the measured window then starts at `start_at + warmup`, even if connecting took
    /// longer than the time left (the warm-up is then shorter). None: at once.
    pub start_at: Option<SystemTime>,
    /// A fixed number of transactions per terminal instead of `warmup` and `duration`.
    pub work: Option<FixedWork>,
    /// Threads the terminals are shared out over, each taking turns over its terminals (for a
    /// workload without keying or think times). None: a thread per terminal.
    pub threads: Option<usize>,
}

/// Each terminal's work when it is fixed: `warmup_tx` transactions, then — once every terminal
/// has run its warm-up — `tx` measured ones (None: until the run is stopped).
#[derive(Clone, Copy, Debug)]
pub struct FixedWork {
    pub warmup_tx: u64,
    pub tx: Option<u64>,
}

/// A terminal (or worker) that fails this many transactions in a row stops: something is broken,
/// not busy.
pub const CONSECUTIVE_ERRORS_MAX: u32 = 100;

/// Counts and latencies of one transaction kind.
#[derive(Clone, Debug, Default)]
pub struct TxStats {
    /// Transactions that completed (committed, or rolled back as intended).
    pub count: u64,
    /// Transactions that failed for good.
    pub errors: u64,
    /// Intended rollbacks (included in `count`).
    pub rollbacks: u64,
    /// Retries (each a re-run of the whole transaction).
    pub retries: u64,
    pub latency: LatencyHistogram,
    /// Time spent waiting for the database-wide writer lock (SQLite), summed over transactions.
    pub writer_lock_wait_ns: u64,
    /// The thread's CPU time inside transactions, less the device emulator's spin in it (SQLite:
    /// the engine's own work).
    pub cpu_ns: u64,
    /// The COMMIT round trip of each completed write transaction (`sql::CommitTime`), deferred
    /// executions' included.
    pub commit_latency: LatencyHistogram,
    /// Of those, the commits whose round trip carried the transaction's last statement too.
    pub commits_with_statement: u64,
}

impl TxStats {
    fn record_commit(&mut self, c: Option<crate::sql::CommitTime>) {
        if let Some(c) = c {
            self.commit_latency.record(c.ns);
            self.commits_with_statement += u64::from(c.with_statement);
        }
    }
}

/// The executions of requests deferred to workers and queued in the measured window: drained
/// after the window, so every one is counted.
#[derive(Clone, Debug, Default)]
pub struct Deferred {
    /// Requests the terminals queued.
    pub queued: u64,
    /// Executions that committed.
    pub executed: u64,
    /// Executions that failed for good.
    pub errors: u64,
    pub retries: u64,
    /// The workload's own count over executions ([`Workload::deferred_detail`]).
    pub detail: u64,
    /// From the request's queueing to its execution's commit.
    pub latency: LatencyHistogram,
}

/// One second of the measured window.
#[derive(Clone, Debug, Default)]
pub struct Second {
    pub t_s: f64,
    /// Completed transactions of each kind in that second.
    pub counts: Vec<u64>,
    pub errors: u64,
    pub retries: u64,
    /// The headline kind's latency in that second.
    pub headline_lat_ns_p99: u64,
    pub headline_lat_ns_mean: f64,
    /// Terminals still running at its end (with fixed work: the tail of the run).
    pub active_terminals: usize,
}

/// What the driver measured.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Per kind, in [`Workload::kinds`] order.
    pub tx: Vec<TxStats>,
    pub errors_by_kind: BTreeMap<ErrorKind, u64>,
    pub retries_by_kind: BTreeMap<ErrorKind, u64>,
    pub seconds: Vec<Second>,
    pub measured_s: f64,
    /// The warm-up as it ran (with `warmup_auto`, until the rate was steady).
    pub warmup_s: f64,
    /// With `warmup_auto`: whether the rate became steady before the warm-up's limit.
    pub warmup_steady: Option<bool>,
    pub terminals: usize,
    /// Threads serving deferred requests or background work, each with its own connection.
    pub workers: usize,
    pub first_error: Option<String>,
    /// CPU time terminals and workers spent inside measured transactions (without
    /// [`Workload::tx_cpu`]: the terminals' threads over the window): for embedded SQLite, the
    /// engine's share of the process's CPU.
    pub in_tx_cpu: CpuTime,
    /// True when `stop` ended the run before its duration.
    pub interrupted: bool,
    /// With `record_spans`: every measured transaction of threads whose server thread is known.
    pub spans: Vec<TxSpan>,
    /// With `record_spans`: terminals whose server thread could not be found.
    pub terminals_without_backend: usize,
    /// Wall-clock start of the measured window (None if it never started).
    pub measure_started_at: Option<SystemTime>,
    pub deferred: Deferred,
    /// Transactions of each kind that committed over the whole run, warm-up and after the
    /// window included (what the tables grew by).
    pub committed_all: Vec<u64>,
    /// Intended rollbacks over the whole run.
    pub rolled_back_all: u64,
    /// Background jobs still queued when the terminals stopped (dropped).
    pub backlog_at_end: usize,
}

/// Work a background worker runs: a transaction the workload made of others.
pub struct Job<I> {
    pub kind: usize,
    pub input: I,
    /// Its wait counts in its response time.
    pub queued_at: Instant,
}

/// Where background workers take their jobs from (the brokerage's market).
pub trait Background<I>: Sync {
    /// The next job, waiting for one; None once [`Background::abandon`] was called.
    fn next(&self) -> Option<Job<I>>;
    /// The terminals have stopped: drop what is queued and return how much that was.
    fn abandon(&self) -> usize;
}

/// A workload as the driver sees it.
pub trait Workload: Sync {
    /// One transaction's input, drawn by a terminal (or made by the background).
    type Input: Send;
    /// What a transaction that did not fail returns.
    type Output;
    /// A terminal's own state (its card deck, its home).
    type Terminal: Send;
    /// A thread's reusable buffers.
    type Scratch: Default;

    /// The transaction kinds' names, in index order.
    fn kinds(&self) -> &'static [&'static str];
    /// The trace tag of kind `kind`'s I/O.
    fn tag(&self, kind: usize) -> u8;
    /// The kind whose rate decides the automatic warm-up and whose latency each second reports.
    fn headline(&self) -> usize;
    /// Terminal `i` of `terminals`.
    fn terminal(&self, i: usize, terminals: usize) -> Self::Terminal;
    /// The terminal's next transaction: its kind and input.
    fn next(&self, t: &mut Self::Terminal, rng: &mut Rng) -> (usize, Self::Input);
    /// Runs one transaction from its begin to its commit (or intended rollback); the driver
    /// rolls back after an error and retries.
    fn execute(
        &self,
        conn: &mut dyn Conn,
        input: &Self::Input,
        scratch: &mut Self::Scratch,
    ) -> DbResult<Self::Output>;
    /// Whether each transaction's CPU is measured (`TxStats::cpu_ns`); without, the terminals'
    /// threads are measured over the window instead (`Outcome::in_tx_cpu`: short transactions
    /// would pay much of their time for the measuring).
    fn tx_cpu(&self) -> bool {
        true
    }
    /// Whether the output is an intended rollback.
    fn rolled_back(&self, _out: &Self::Output) -> bool {
        false
    }
    /// Keying time before kind `kind` (None: none).
    fn keying(&self, _kind: usize) -> Option<Duration> {
        None
    }
    /// Think time after kind `kind` (None: none).
    fn think(&self, _kind: usize, _rng: &mut Rng) -> Option<Duration> {
        None
    }
    /// Whether terminals queue kind `kind` for a worker instead of running it (the terminal's
    /// response time is the queueing; the execution is booked in [`Outcome::deferred`]).
    fn deferred(&self, _kind: usize) -> bool {
        false
    }
    /// The workload's own count of a deferred execution (TPC-C: districts skipped).
    fn deferred_detail(&self, _out: &Self::Output) -> u64 {
        0
    }
    /// Worker threads, each with its own connection, for `terminals` terminals.
    fn workers(&self, _terminals: usize) -> usize {
        0
    }
    /// Background work, if the workers take it from the workload rather than from deferred
    /// requests.
    fn background(&self) -> Option<&dyn Background<Self::Input>> {
        None
    }
    /// Hears every transaction that did not fail, terminals' and workers': `measured` when it
    /// started and ended in the window, `measuring` whether the window is open now.
    fn completed(&self, _kind: usize, _out: &Self::Output, _measured: bool, _measuring: bool) {}
}

/// Per-second counters and totals, under one lock (one per transaction: a few thousand a second
/// on a small machine, far below what a mutex costs).
struct Shared {
    out: Outcome,
    second: Vec<u64>,
    second_errors: u64,
    second_retries: u64,
    second_headline: LatencyHistogram,
}

impl Shared {
    fn clear_second(&mut self) {
        self.second.iter_mut().for_each(|c| *c = 0);
        self.second_errors = 0;
        self.second_retries = 0;
        self.second_headline.reset();
    }
}

struct Queued<I> {
    kind: usize,
    input: I,
    queued_at: Instant,
    /// Queued in the measured window: its execution is counted.
    measured: bool,
}

/// Deferred requests waiting for a worker.
struct Queue<I> {
    items: Mutex<VecDeque<Queued<I>>>,
    ready: Condvar,
}

/// What terminals and workers share.
struct Ctx<'a, W: Workload> {
    w: &'a W,
    cfg: &'a DriverConfig,
    phase: &'a PhaseCell,
    done: &'a AtomicBool,
    /// Terminals still running.
    alive: &'a AtomicUsize,
    shared: &'a Mutex<Shared>,
    queue: &'a Queue<W::Input>,
    fixed: &'a Fixed,
}

/// With fixed work: the terminals that have run their warm-up, the window's opening, which
/// the warmed terminals wait for, and when the last terminal finished its work.
#[derive(Default)]
struct Fixed {
    warmed: AtomicUsize,
    open: Mutex<bool>,
    opened: Condvar,
    last_finish: Mutex<Option<Instant>>,
}

impl Fixed {
    fn is_open(&self) -> bool {
        *self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn open(&self) {
        *self.open.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.opened.notify_all();
    }

    /// Waits (a while at most) for the window to open.
    fn wait_open(&self) {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if !*open {
            let _ = self
                .opened
                .wait_timeout(open, Duration::from_millis(50))
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    fn finished_at(&self, t: Instant) {
        let mut last = self.last_finish.lock().unwrap_or_else(|p| p.into_inner());
        *last = Some(last.map_or(t, |l| l.max(t)));
    }
}

impl<W: Workload> Clone for Ctx<'_, W> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<W: Workload> Copy for Ctx<'_, W> {}

impl<W: Workload> Ctx<'_, W> {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn measuring(&self) -> bool {
        self.phase.get() == Phase::Measure
    }

    fn attempt(
        &self,
        conn: &mut dyn Conn,
        kind: usize,
        input: &W::Input,
        local: &mut Local<W>,
        give_up: &AtomicBool,
    ) -> Attempt<W::Output> {
        let retry = Retry {
            max: self.cfg.max_retries,
            give_up,
        };
        let with_span = local.backend_tid.is_some();
        let scratch = &mut local.scratch;
        crate::attempt::attempt(
            conn,
            self.w.tag(kind),
            retry,
            &mut local.rng,
            (with_span, self.w.tx_cpu()),
            |c| self.w.execute(c, input, scratch),
        )
    }

    /// Books an attempt of kind `kind` that started in phase `at_start`: its figures when it is
    /// measured, which is decided here under the lock (the clock moves the phase under it, so a
    /// transaction is in a second's sample exactly when it is in the totals), the whole-run counts
    /// always. `extra_latency_ns` is a background job's wait. Returns whether the thread should
    /// stop (a broken connection, or too many failures in a row) and whether it was measured.
    fn book(
        &self,
        kind: usize,
        a: &Attempt<W::Output>,
        extra_latency_ns: u64,
        at_start: Phase,
        consecutive_errors: &mut u32,
    ) -> (bool, bool) {
        let mut s = self.lock();
        let now = self.phase.get();
        let measured = at_start == Phase::Measure && now == Phase::Measure;
        if let Ok(o) = &a.result {
            if self.w.rolled_back(o) {
                s.out.rolled_back_all += 1;
            } else {
                s.out.committed_all[kind] += 1;
            }
        }
        if measured {
            let t = &mut s.out.tx[kind];
            t.retries += a.retries.len() as u64;
            t.writer_lock_wait_ns += a.lock_wait_ns;
            t.cpu_ns += a.cpu_ns;
            match &a.result {
                Ok(o) => {
                    t.count += 1;
                    if self.w.rolled_back(o) {
                        t.rollbacks += 1;
                    }
                    t.latency.record(a.latency_ns + extra_latency_ns);
                    t.record_commit(a.commit);
                }
                Err(_) => t.errors += 1,
            }
            for k in &a.retries {
                *s.out.retries_by_kind.entry(*k).or_default() += 1;
            }
            if let Err(e) = &a.result {
                *s.out.errors_by_kind.entry(e.kind).or_default() += 1;
            }
        }
        // The per-second counters: the window's measured transactions, and the warm-up's for
        // `warmup_auto` (the clock clears them when the window opens).
        if measured || now == Phase::Warmup {
            match &a.result {
                Ok(_) => {
                    s.second[kind] += 1;
                    if kind == self.w.headline() {
                        s.second_headline.record(a.latency_ns + extra_latency_ns);
                    }
                }
                Err(_) => s.second_errors += 1,
            }
            s.second_retries += a.retries.len() as u64;
        }
        let fatal = match &a.result {
            Err(e) => {
                if s.out.first_error.is_none() {
                    s.out.first_error = Some(format!("{} failed: {e}", self.w.kinds()[kind]));
                }
                *consecutive_errors += 1;
                e.kind == ErrorKind::Connection || *consecutive_errors >= CONSECUTIVE_ERRORS_MAX
            }
            Ok(_) => {
                *consecutive_errors = 0;
                false
            }
        };
        (fatal, measured)
    }

    /// Adds a thread's CPU and spans at its end.
    fn finish_thread(&self, mut local: Local<W>) {
        let mut s = self.lock();
        s.out.in_tx_cpu = s.out.in_tx_cpu.plus(&local.in_tx_cpu);
        s.out.spans.append(&mut local.spans);
    }
}

/// What one terminal or worker thread keeps: its generator and buffers, its server thread, and
/// the CPU and spans of its measured transactions.
struct Local<W: Workload> {
    rng: Rng,
    scratch: W::Scratch,
    backend_tid: Option<u32>,
    in_tx_cpu: CpuTime,
    spans: Vec<TxSpan>,
}

impl<W: Workload> Local<W> {
    fn new(conn: &mut dyn Conn, seed: u64, record_spans: bool) -> Self {
        Local {
            rng: Rng::new(seed),
            scratch: W::Scratch::default(),
            backend_tid: if record_spans {
                backend_tid(conn)
            } else {
                None
            },
            in_tx_cpu: CpuTime::default(),
            spans: Vec::new(),
        }
    }

    /// Keeps a measured transaction's CPU and span.
    fn measured(&mut self, a: &Attempt<W::Output>) {
        self.in_tx_cpu = self.in_tx_cpu.plus(&a.cpu);
        self.spans.extend(a.tx_span(self.backend_tid));
    }
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

/// One terminal as its thread keeps it: its connection, its own state and generator, and how
/// far its fixed work has come.
struct Slot<W: Workload> {
    conn: Box<dyn Conn>,
    term: W::Terminal,
    local: Local<W>,
    consecutive_errors: u32,
    /// Transactions it ran (fixed work: the warm-up's included).
    ran: u64,
    warmed: bool,
    finished: bool,
}

/// What one turn of a terminal came to.
enum Turn {
    Ran,
    /// A broken connection or too many failures in a row: the terminal stops.
    Fatal,
    /// The run ended during its keying time.
    Ended,
}

/// Runs the terminals of one thread, taking turns over them one transaction at a time (one
/// terminal: its loop), until the run ends or each has finished its work.
fn terminal_thread<W: Workload>(terminals: Vec<(Box<dyn Conn>, W::Terminal, u64)>, ctx: Ctx<W>) {
    let done = ctx.done;
    let mut slots: Vec<Slot<W>> = terminals
        .into_iter()
        .map(|(mut conn, term, seed)| Slot {
            local: Local::new(conn.as_mut(), seed, ctx.cfg.record_spans),
            conn,
            term,
            consecutive_errors: 0,
            ran: 0,
            warmed: false,
            finished: false,
        })
        .collect();
    for s in &slots {
        if ctx.cfg.record_spans && s.local.backend_tid.is_none() {
            ctx.lock().out.terminals_without_backend += 1;
        }
    }
    // Without each transaction's CPU: the thread's from its first measured transaction on.
    let mut window_cpu: Option<CpuTime> = None;
    while !done.load(Ordering::Relaxed) {
        if window_cpu.is_none() && !ctx.w.tx_cpu() && ctx.measuring() {
            window_cpu = Some(CpuTime::thread());
        }
        let (mut ran, mut waiting) = (false, false);
        for s in slots.iter_mut().filter(|s| !s.finished) {
            if done.load(Ordering::Relaxed) {
                break;
            }
            if let Some(work) = &ctx.cfg.work {
                if !s.warmed && s.ran >= work.warmup_tx {
                    s.warmed = true;
                    ctx.fixed.warmed.fetch_add(1, Ordering::SeqCst);
                }
                if s.warmed && !ctx.fixed.is_open() {
                    waiting = true;
                    continue;
                }
            }
            ran = true;
            match turn(s, ctx) {
                Turn::Ran => s.ran += 1,
                Turn::Fatal => {
                    finish_slot(s, ctx, false);
                    continue;
                }
                Turn::Ended => break,
            }
            if let Some(work) = &ctx.cfg.work {
                if work
                    .tx
                    .is_some_and(|tx| s.ran >= work.warmup_tx.saturating_add(tx))
                {
                    finish_slot(s, ctx, true);
                }
            }
        }
        if slots.iter().all(|s| s.finished) {
            break;
        }
        if waiting && !ran {
            ctx.fixed.wait_open();
        }
    }
    if let Some(before) = window_cpu {
        let mut s = ctx.lock();
        s.out.in_tx_cpu = s.out.in_tx_cpu.plus(&CpuTime::thread().since(&before));
    }
    for mut s in slots {
        if !s.finished {
            finish_slot(&mut s, ctx, false);
        }
        ctx.finish_thread(s.local);
    }
}

/// A terminal stops: one fewer alive, and with its fixed work done, perhaps the last finish.
fn finish_slot<W: Workload>(s: &mut Slot<W>, ctx: Ctx<W>, work_done: bool) {
    s.finished = true;
    if work_done {
        ctx.fixed.finished_at(Instant::now());
    }
    ctx.alive.fetch_sub(1, Ordering::SeqCst);
    // A worker waiting for requests learns that no more may come.
    ctx.queue.ready.notify_all();
}

/// One transaction of a terminal: drawn, keyed, run (or queued for a worker), booked, thought.
fn turn<W: Workload>(s: &mut Slot<W>, ctx: Ctx<W>) -> Turn {
    let (w, done) = (ctx.w, ctx.done);
    let (kind, input) = w.next(&mut s.term, &mut s.local.rng);
    if let Some(k) = w.keying(kind) {
        sleep_unless(k, done);
        if done.load(Ordering::Relaxed) {
            return Turn::Ended;
        }
    }
    let at_start = ctx.phase.get();
    let fatal = if w.deferred(kind) {
        // Queued for a worker; the terminal's response time is the queueing.
        let started = Instant::now();
        ctx.queue
            .items
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back(Queued {
                kind,
                input,
                queued_at: started,
                measured: at_start == Phase::Measure,
            });
        ctx.queue.ready.notify_one();
        let latency_ns = started.elapsed().as_nanos() as u64;
        s.consecutive_errors = 0;
        book_deferred_request(ctx, kind, latency_ns, at_start);
        false
    } else {
        let a = ctx.attempt(s.conn.as_mut(), kind, &input, &mut s.local, done);
        let (fatal, measured) = ctx.book(kind, &a, 0, at_start, &mut s.consecutive_errors);
        if measured {
            s.local.measured(&a);
        }
        if let Ok(o) = &a.result {
            w.completed(kind, o, measured, ctx.measuring());
        }
        fatal
    };
    if fatal {
        return Turn::Fatal;
    }
    if let Some(t) = w.think(kind, &mut s.local.rng) {
        sleep_unless(t, done);
    }
    Turn::Ran
}

/// Books a deferred request's acknowledgement as the terminal's transaction of its kind.
fn book_deferred_request<W: Workload>(ctx: Ctx<W>, kind: usize, latency_ns: u64, at_start: Phase) {
    let mut s = ctx.lock();
    let now = ctx.phase.get();
    let measured = at_start == Phase::Measure && now == Phase::Measure;
    if measured {
        let t = &mut s.out.tx[kind];
        t.count += 1;
        t.latency.record(latency_ns);
        s.out.deferred.queued += 1;
    }
    if measured || now == Phase::Warmup {
        s.second[kind] += 1;
        if kind == ctx.w.headline() {
            s.second_headline.record(latency_ns);
        }
    }
}

/// Executes deferred requests until the terminals have stopped and the queue is empty: requests
/// queued in the measured window are executed and counted even after it (the queue drains).
fn deferred_worker<W: Workload>(conn: &mut dyn Conn, seed: u64, ctx: Ctx<W>) {
    let mut local = Local::<W>::new(conn, seed, ctx.cfg.record_spans);
    let mut broken = false;
    let never = AtomicBool::new(false);
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
                ctx.lock().out.deferred.errors += 1;
            }
            continue;
        }
        // Deferred executions never give up their retries, so that the queue drains.
        let a = ctx.attempt(conn, q.kind, &q.input, &mut local, &never);
        if let Err(e) = &a.result {
            broken = e.kind == ErrorKind::Connection;
        }
        if let Ok(o) = &a.result {
            ctx.w.completed(q.kind, o, q.measured, ctx.measuring());
        }
        if !q.measured {
            continue;
        }
        local.measured(&a);
        let mut s = ctx.lock();
        let t = &mut s.out.tx[q.kind];
        t.writer_lock_wait_ns += a.lock_wait_ns;
        t.cpu_ns += a.cpu_ns;
        t.record_commit(a.commit);
        let d = &mut s.out.deferred;
        d.retries += a.retries.len() as u64;
        match &a.result {
            Ok(o) => {
                d.executed += 1;
                d.detail += ctx.w.deferred_detail(o);
                d.latency.record(q.queued_at.elapsed().as_nanos() as u64);
            }
            Err(_) => d.errors += 1,
        }
        for k in &a.retries {
            *s.out.retries_by_kind.entry(*k).or_default() += 1;
        }
        if let Err(e) = &a.result {
            *s.out.errors_by_kind.entry(e.kind).or_default() += 1;
            if s.out.first_error.is_none() {
                s.out.first_error =
                    Some(format!("{} (deferred) failed: {e}", ctx.w.kinds()[q.kind]));
            }
        }
    }
    ctx.finish_thread(local);
}

/// Runs the workload's background jobs until it has none left (after the terminals stop, the
/// driver abandons what is queued). A job's wait counts in its response time.
fn background_worker<W: Workload>(
    conn: &mut dyn Conn,
    bg: &dyn Background<W::Input>,
    seed: u64,
    ctx: Ctx<W>,
) {
    let mut local = Local::<W>::new(conn, seed, ctx.cfg.record_spans);
    let mut errors = 0;
    while let Some(job) = bg.next() {
        let waited_ns = job.queued_at.elapsed().as_nanos() as u64;
        let at_start = ctx.phase.get();
        let a = ctx.attempt(conn, job.kind, &job.input, &mut local, ctx.done);
        let (fatal, measured) = ctx.book(job.kind, &a, waited_ns, at_start, &mut errors);
        if measured {
            local.measured(&a);
        }
        if let Ok(o) = &a.result {
            ctx.w.completed(job.kind, o, measured, ctx.measuring());
        }
        if fatal {
            break;
        }
    }
    ctx.finish_thread(local);
}

/// Runs `w`: the warm-up, then `duration` measured (or until `stop`, or until every terminal
/// has stopped). `on_second` hears each measured second as it ends, `on_event` the start and end
/// of the measured window.
pub fn drive<W: Workload>(
    w: &W,
    connector: &dyn Connector,
    cfg: &DriverConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
    on_event: &mut dyn FnMut(Event),
) -> Result<Outcome> {
    let kinds = w.kinds().len();
    let workers = w.workers(cfg.terminals);
    // Connect every thread before the clock starts; a refused connection is a usage error.
    let mut conns: Vec<Box<dyn Conn>> = Vec::with_capacity(cfg.terminals + workers);
    for _ in 0..cfg.terminals + workers {
        conns.push(connector.connect(Purpose::Run)?);
    }
    let queue = Queue {
        items: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
    };
    let shared = Mutex::new(Shared {
        out: Outcome {
            tx: vec![TxStats::default(); kinds],
            committed_all: vec![0; kinds],
            terminals: cfg.terminals,
            workers,
            ..Default::default()
        },
        second: vec![0; kinds],
        second_errors: 0,
        second_retries: 0,
        second_headline: LatencyHistogram::default(),
    });
    let phase = PhaseCell(AtomicU8::new(Phase::Warmup as u8));
    let done = AtomicBool::new(false);
    let alive = AtomicUsize::new(cfg.terminals);
    let fixed = Fixed::default();
    let ctx = Ctx {
        w,
        cfg,
        phase: &phase,
        done: &done,
        alive: &alive,
        shared: &shared,
        queue: &queue,
        fixed: &fixed,
    };
    if let Some(t) = cfg.start_at {
        if !wait_until(t, stop) {
            return Err(Error::Interrupted);
        }
    }
    let mut clock = Clock {
        measured_s: 0.0,
        warmup_s: 0.0,
        warmup_steady: None,
        measure_started_at: None,
        seconds: Vec::new(),
    };
    // Terminal i runs on thread i mod threads.
    let threads = cfg
        .threads
        .unwrap_or(cfg.terminals)
        .clamp(1, cfg.terminals.max(1));
    let mut shares: Vec<Vec<_>> = (0..threads).map(|_| Vec::new()).collect();
    let mut worker_conns = Vec::with_capacity(workers);
    for (i, conn) in conns.into_iter().enumerate() {
        if i < cfg.terminals {
            let seed = cfg.seed.wrapping_add(i as u64 * 0x9E37_79B9);
            shares[i % threads].push((conn, w.terminal(i, cfg.terminals), seed));
        } else {
            worker_conns.push(conn);
        }
    }
    std::thread::scope(|scope| {
        let mut terminals = Vec::with_capacity(threads);
        for (i, slots) in shares.into_iter().enumerate() {
            terminals.push(
                std::thread::Builder::new()
                    .name(format!("terminal-{i}"))
                    .spawn_scoped(scope, move || terminal_thread(slots, ctx))
                    .expect("spawning a terminal thread"),
            );
        }
        for (n, mut conn) in worker_conns.into_iter().enumerate() {
            let seed = cfg.seed.wrapping_add(0xD311_0000 + n as u64);
            std::thread::Builder::new()
                .name(format!("worker-{n}"))
                .spawn_scoped(scope, move || match ctx.w.background() {
                    Some(bg) => background_worker(conn.as_mut(), bg, seed, ctx),
                    None => deferred_worker(conn.as_mut(), seed, ctx),
                })
                .expect("spawning a worker thread");
        }
        clock.run(ctx, stop, on_second, on_event);
        phase.set(Phase::Done);
        done.store(true, Ordering::SeqCst);
        for t in terminals {
            let _ = t.join();
        }
        // The terminals have stopped; what the background still holds is dropped.
        if let Some(bg) = w.background() {
            let backlog = bg.abandon();
            ctx.lock().out.backlog_at_end = backlog;
        }
    });
    let mut out = shared.into_inner().unwrap_or_else(|p| p.into_inner()).out;
    out.seconds = clock.seconds;
    out.measured_s = clock.measured_s;
    out.warmup_s = clock.warmup_s;
    out.warmup_steady = clock.warmup_steady;
    out.measure_started_at = clock.measure_started_at;
    out.interrupted = stop.load(Ordering::Relaxed);
    if out.tx.iter().all(|t| t.count == 0) {
        if let Some(e) = &out.first_error {
            return Err(Error::failed(format!(
                "every transaction failed; the first error was: {e}"
            )));
        }
    }
    Ok(out)
}

/// The clock's figures.
struct Clock {
    measured_s: f64,
    warmup_s: f64,
    warmup_steady: Option<bool>,
    measure_started_at: Option<SystemTime>,
    seconds: Vec<Second>,
}

impl Clock {
    /// The warm-up, then one sample per second of the measured window.
    fn run<W: Workload>(
        &mut self,
        ctx: Ctx<W>,
        stop: &AtomicBool,
        on_second: &mut dyn FnMut(&Second),
        on_event: &mut dyn FnMut(Event),
    ) {
        let cfg = ctx.cfg;
        let running = || !stop.load(Ordering::Relaxed) && ctx.alive.load(Ordering::Relaxed) > 0;
        let fixed = cfg.work.is_some();
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
        if fixed {
            // Until every terminal still running has run its warm-up transactions.
            while running()
                && ctx.fixed.warmed.load(Ordering::SeqCst) < ctx.alive.load(Ordering::SeqCst)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
        } else if cfg.warmup_auto {
            // The headline kind's completions in each second of the warm-up, until the last two
            // 10 s agree.
            let mut per_second: Vec<u64> = Vec::new();
            let mut next = warmup_started;
            while Instant::now() < measure_start && running() {
                next += Duration::from_secs(1);
                while Instant::now() < next && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep((next - Instant::now()).min(Duration::from_millis(100)));
                }
                per_second.push(std::mem::take(&mut ctx.lock().second[ctx.w.headline()]));
                if rate_is_steady(&per_second) {
                    break;
                }
            }
            self.warmup_steady = Some(rate_is_steady(&per_second));
        }
        while !fixed && !cfg.warmup_auto && Instant::now() < measure_start && running() {
            std::thread::sleep((measure_start - Instant::now()).min(Duration::from_millis(100)));
        }
        self.warmup_s = warmup_started.elapsed().as_secs_f64();
        if !running() {
            return;
        }
        on_event(Event::MeasureStart);
        let start = {
            // Under the lock: what the warm-up put into the per-second counters goes, and every
            // transaction booked from now on sees the window open.
            let mut s = ctx.lock();
            s.clear_second();
            ctx.phase.set(Phase::Measure);
            Instant::now()
        };
        self.measure_started_at = Some(SystemTime::now());
        if fixed {
            ctx.fixed.open();
        }
        // Fixed work: the window ends when the last terminal finishes, noticed within 5 ms.
        let (end, poll) = match fixed {
            true => (None, Duration::from_millis(5)),
            false => (Some(start + cfg.duration), Duration::from_millis(50)),
        };
        let mut tick = 1u64;
        loop {
            let mut next = start + Duration::from_secs(tick);
            if let Some(end) = end {
                next = next.min(end);
            }
            while Instant::now() < next && running() {
                std::thread::sleep((next - Instant::now()).min(poll));
            }
            let (second, last) = {
                let mut s = ctx.lock();
                let mut now = Instant::now();
                let last = end.is_some_and(|end| now >= end) || !running();
                if last {
                    // Under the lock: no transaction is booked between the last second and the
                    // window's end.
                    ctx.phase.set(Phase::Done);
                    if fixed && !stop.load(Ordering::Relaxed) {
                        // The work's end is the last terminal's finish.
                        let finish = *ctx
                            .fixed
                            .last_finish
                            .lock()
                            .unwrap_or_else(|p| p.into_inner());
                        now = finish.unwrap_or(now).max(start);
                    }
                    self.measured_s = (now - start).as_secs_f64();
                }
                let stats = s.second_headline.stats();
                let second = Second {
                    active_terminals: ctx.alive.load(Ordering::SeqCst),
                    t_s: (now - start).as_secs_f64(),
                    counts: s.second.clone(),
                    errors: s.second_errors,
                    retries: s.second_retries,
                    headline_lat_ns_p99: stats.p99,
                    headline_lat_ns_mean: stats.mean,
                };
                s.clear_second();
                (second, last)
            };
            if last {
                on_event(Event::MeasureEnd);
            }
            on_second(&second);
            self.seconds.push(second);
            if last {
                break;
            }
            tick += 1;
        }
    }
}

/// Whether per-second counts have levelled off: at least 20 s, and the last 10 s differ from the
/// 10 s before by at most 5 % or twice the Poisson noise of such counts (paced runs complete only
/// a few transactions a second).
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
    use crate::sql::{Batch, DbError, Rows, Stmt, TxMode, P};

    /// A connection that does nothing: the test workloads never touch the database.
    struct NoDb;

    impl Conn for NoDb {
        fn dialect(&self) -> Dialect {
            Dialect::Sqlite
        }
        fn begin(&mut self, _: TxMode) -> DbResult<()> {
            Ok(())
        }
        fn commit(&mut self) -> DbResult<()> {
            Ok(())
        }
        fn rollback(&mut self) -> DbResult<()> {
            Ok(())
        }
        fn run(&mut self, _: &Stmt, _: &[P], _: &mut Rows) -> DbResult<u64> {
            Ok(0)
        }
        fn batch(&mut self, _: &str) -> DbResult<()> {
            Ok(())
        }
        fn query(&mut self, _: &str) -> DbResult<Rows> {
            Ok(Rows::default())
        }
        fn load(&mut self, _: &Batch) -> DbResult<()> {
            Ok(())
        }
    }

    impl Connector for NoDb {
        fn dialect(&self) -> Dialect {
            Dialect::Sqlite
        }
        fn connect(&self, _: Purpose) -> Result<Box<dyn Conn>> {
            Ok(Box::new(NoDb))
        }
    }

    /// Two kinds, each a 1 ms sleep; kind 1 deferred to workers when `defer`; every
    /// transaction fails when `fail`.
    struct Sleeper {
        defer: bool,
        fail: bool,
    }

    impl Workload for Sleeper {
        type Input = ();
        type Output = ();
        type Terminal = ();
        type Scratch = ();

        fn kinds(&self) -> &'static [&'static str] {
            &["a", "b"]
        }
        fn tag(&self, kind: usize) -> u8 {
            kind as u8 + 100
        }
        fn headline(&self) -> usize {
            0
        }
        fn terminal(&self, _: usize, _: usize) {}
        fn next(&self, _: &mut (), rng: &mut Rng) -> (usize, ()) {
            (rng.uniform(0, 1) as usize, ())
        }
        fn execute(&self, _: &mut dyn Conn, _: &(), _: &mut ()) -> DbResult<()> {
            std::thread::sleep(Duration::from_millis(1));
            if self.fail {
                return Err(DbError::other("no such table"));
            }
            Ok(())
        }
        fn deferred(&self, kind: usize) -> bool {
            self.defer && kind == 1
        }
        fn workers(&self, _: usize) -> usize {
            usize::from(self.defer)
        }
    }

    fn config() -> DriverConfig {
        DriverConfig {
            terminals: 2,
            duration: Duration::from_millis(2500),
            warmup: Duration::from_millis(300),
            warmup_auto: false,
            seed: 1,
            max_retries: 0,
            record_spans: false,
            start_at: None,
            work: None,
            threads: None,
        }
    }

    /// Fixed work on shared threads: every terminal runs its warm-up, then its measured
    /// transactions, five terminals taking turns on two threads; the window closes at the last
    /// one's finish, and its seconds add up to the totals.
    #[test]
    fn fixed_work_runs_each_terminals_transactions_on_shared_threads() {
        let w = Sleeper {
            defer: false,
            fail: false,
        };
        let cfg = DriverConfig {
            terminals: 5,
            work: Some(FixedWork {
                warmup_tx: 3,
                tx: Some(40),
            }),
            threads: Some(2),
            ..config()
        };
        let (mut events, mut active) = (Vec::new(), Vec::new());
        let o = drive(
            &w,
            &NoDb,
            &cfg,
            &AtomicBool::new(false),
            &mut |s| active.push(s.active_terminals),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(events, [Event::MeasureStart, Event::MeasureEnd]);
        let measured: u64 = o.tx.iter().map(|t| t.count).sum();
        assert_eq!(measured, 5 * 40);
        assert_eq!(
            o.committed_all.iter().sum::<u64>(),
            5 * 43,
            "warm-up included"
        );
        let per_second: u64 = o.seconds.iter().flat_map(|s| &s.counts).sum();
        assert_eq!(per_second, measured);
        // Two threads of 1 ms transactions: 200 of them take about 100 ms, nowhere near the
        // timed window's 2.5 s.
        assert!(
            o.measured_s > 0.05 && o.measured_s < 1.0,
            "{}",
            o.measured_s
        );
        assert_eq!(active.last(), Some(&0), "{active:?}");
    }

    #[test]
    fn the_seconds_add_up_to_the_totals() {
        let w = Sleeper {
            defer: false,
            fail: false,
        };
        let (mut events, mut heard) = (Vec::new(), 0);
        let o = drive(
            &w,
            &NoDb,
            &config(),
            &AtomicBool::new(false),
            &mut |_| heard += 1,
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(events, [Event::MeasureStart, Event::MeasureEnd]);
        assert_eq!(heard, o.seconds.len());
        assert_eq!(o.seconds.len(), 3, "two whole seconds and the last half");
        for k in 0..2 {
            let per_second: u64 = o.seconds.iter().map(|s| s.counts[k]).sum();
            assert_eq!(per_second, o.tx[k].count, "kind {k}");
            assert!(o.tx[k].count > 100, "{:?}", o.tx[k].count);
        }
        assert!((o.measured_s - 2.5).abs() < 0.2, "{}", o.measured_s);
        assert!(
            o.committed_all[0] >= o.tx[0].count,
            "the warm-up's count too"
        );
    }

    #[test]
    fn deferred_requests_are_all_executed_after_the_window() {
        let w = Sleeper {
            defer: true,
            fail: false,
        };
        let o = drive(
            &w,
            &NoDb,
            &config(),
            &AtomicBool::new(false),
            &mut |_| {},
            &mut |_| {},
        )
        .unwrap();
        let d = &o.deferred;
        assert!(d.queued > 100, "{d:?}");
        assert_eq!(d.queued, o.tx[1].count);
        assert_eq!(d.executed + d.errors, d.queued, "the queue drains");
        assert_eq!(d.latency.count(), d.executed);
    }

    #[test]
    fn a_run_in_which_every_transaction_fails_is_an_error() {
        let w = Sleeper {
            defer: false,
            fail: true,
        };
        let Err(e) = drive(
            &w,
            &NoDb,
            &config(),
            &AtomicBool::new(false),
            &mut |_| {},
            &mut |_| {},
        ) else {
            panic!("a run without one completed transaction succeeded");
        };
        let msg = e.to_string();
        assert!(msg.contains("every transaction failed"), "{msg}");
        assert!(msg.contains("no such table"), "{msg}");
    }

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
}
