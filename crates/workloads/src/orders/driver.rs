//! What both engines' paths share: the point's configuration, the per-second lines and the
//! outcome of one point (one connection count). SQLite runs on the one driver
//! ([`crate::driver`], with [`super::workload`]); the servers' async path (`server/`, for
//! thousands of connections) keeps its own loop with the recorder and ticker here.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::latency::LatencyHistogram;
use serde::Serialize;

use super::{Mode, Scale, TxError};

/// One point of a run: this many connections, each running a fixed number of transactions.
#[derive(Clone, Debug)]
pub struct PointConfig {
    pub connections: u32,
    /// Measured transactions each connection runs; None: until the run is halted (a power cut
    /// ends `oltplab crash`'s).
    pub tx_per_connection: Option<u64>,
    /// Transactions each connection runs before the measured work; excluded from every figure.
    pub warmup_tx_per_connection: u64,
    pub mode: Mode,
    /// The loaded scale: update transactions pick among its orders.
    pub scale: Scale,
    pub max_retries: u32,
    pub seed: u64,
    /// Keep the id of every inserted order whose COMMIT returned (what a power cut is checked
    /// against: `PointOutcome::acknowledged_orders`). SQLite only.
    pub record_orders: bool,
}

/// The edges of the measured work, for sampling CPU and waits exactly there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Every connection has finished its warm-up; the measured work starts now.
    MeasureStart,
    /// The last connection has finished its measured work.
    MeasureEnd,
}

/// One second of the measured work.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Second {
    /// End of this second since the measured work started (the last one may be shorter).
    pub t_s: f64,
    pub tx: u64,
    pub errors: u64,
    pub retries: u64,
    pub lat_ns_mean: f64,
    pub lat_ns_p99: u64,
    /// Connections still working at the end of the second: the tail of a fixed-work run.
    pub active_connections: u32,
}

/// Waits of the engine during the measured work.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Waits {
    /// Per kind; what a figure means is in `unit`.
    pub per_s: BTreeMap<String, f64>,
    /// Per kind: the average number of sessions (threads, connections) waiting — summed wait time
    /// over elapsed time, or PostgreSQL's samples.
    pub sessions: BTreeMap<String, f64>,
    /// The individual wait events with the most waiting sessions, highest first (at most ten).
    pub top: Vec<(String, f64)>,
    /// `waits_per_s` (real counts per second) or `waiting_sessions` (average number of sessions
    /// seen waiting, from sampling).
    pub unit: &'static str,
    /// Where the figures come from.
    pub source: String,
    /// Why there are none, if there are none.
    pub missing: Option<String>,
}

/// Everything measured at one connection count.
#[derive(Clone, Debug)]
pub struct PointOutcome {
    pub connections: u32,
    pub tx: u64,
    pub errors: u64,
    pub retries: u64,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub retries_by_kind: BTreeMap<String, u64>,
    pub latency: LatencyHistogram,
    /// From the start of the measured work until the last connection finished it.
    pub elapsed_s: f64,
    /// Opening the connections (not measured).
    pub connect_s: f64,
    /// The warm-up (not measured).
    pub warmup_s: f64,
    pub seconds: Vec<Second>,
    pub waits: Waits,
    pub first_error: Option<String>,
    pub interrupted: bool,
    /// CPU of the threads that ran the engine in-process (SQLite) during the measured work.
    pub engine_cpu: Option<CpuTime>,
    /// With `record_orders`: the id of every order inserted and acknowledged, warm-up included.
    pub acknowledged_orders: Vec<i64>,
}

#[derive(Default)]
struct Acc {
    total: LatencyHistogram,
    second: LatencyHistogram,
    second_counts: (u64, u64, u64),
    tx: u64,
    errors: u64,
    retries: u64,
    errors_by_kind: BTreeMap<String, u64>,
    retries_by_kind: BTreeMap<String, u64>,
    first_error: Option<String>,
}

/// Where connections report their transactions. One lock per transaction: a few thousand a second
/// on a small machine, far below what a mutex costs.
#[derive(Default)]
pub struct Recorder {
    acc: Mutex<Acc>,
    /// Connections that have not finished their measured work.
    pub active: AtomicU32,
    /// With `PointConfig::record_orders`: the orders acknowledged so far.
    acknowledged: Mutex<Vec<i64>>,
}

impl Recorder {
    pub fn new(connections: u32) -> Recorder {
        Recorder {
            active: AtomicU32::new(connections),
            ..Default::default()
        }
    }

    /// One finished transaction: part of the measured work or of the warm-up, its latency (retries
    /// included), the kinds of the retries it needed, and the error it ended with, if any.
    pub fn record(
        &self,
        measured: bool,
        latency_ns: u64,
        retries: &[&'static str],
        error: Option<&TxError>,
    ) {
        let mut acc = self.acc.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = error {
            if acc.first_error.is_none() {
                acc.first_error = Some(e.message.clone());
            }
        }
        if !measured {
            return;
        }
        for kind in retries {
            acc.retries += 1;
            acc.second_counts.2 += 1;
            *acc.retries_by_kind.entry(kind.to_string()).or_default() += 1;
        }
        match error {
            Some(e) => {
                acc.errors += 1;
                acc.second_counts.1 += 1;
                *acc.errors_by_kind
                    .entry(e.retry_kind.unwrap_or("failed").to_string())
                    .or_default() += 1;
            }
            None => {
                acc.tx += 1;
                acc.second_counts.0 += 1;
                acc.total.record(latency_ns);
                acc.second.record(latency_ns);
            }
        }
    }

    /// An inserted order whose COMMIT returned (kept only with `PointConfig::record_orders`).
    pub fn acknowledge(&self, o_id: i64) {
        self.acknowledged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(o_id);
    }

    /// Closes the current second.
    pub fn take_second(&self, t_s: f64) -> Second {
        let mut acc = self.acc.lock().unwrap_or_else(|p| p.into_inner());
        let stats = acc.second.stats();
        let (tx, errors, retries) = std::mem::take(&mut acc.second_counts);
        acc.second.reset();
        Second {
            t_s,
            tx,
            errors,
            retries,
            lat_ns_mean: stats.mean,
            lat_ns_p99: stats.p99,
            active_connections: self.active.load(Ordering::Relaxed),
        }
    }

    /// The point's outcome from what was recorded; the caller fills in times and waits.
    pub fn outcome(&self, connections: u32) -> PointOutcome {
        let acc = self.acc.lock().unwrap_or_else(|p| p.into_inner());
        PointOutcome {
            connections,
            tx: acc.tx,
            errors: acc.errors,
            retries: acc.retries,
            errors_by_kind: acc.errors_by_kind.clone(),
            retries_by_kind: acc.retries_by_kind.clone(),
            latency: acc.total.clone(),
            elapsed_s: 0.0,
            connect_s: 0.0,
            warmup_s: 0.0,
            seconds: Vec::new(),
            waits: Waits::default(),
            first_error: acc.first_error.clone(),
            interrupted: false,
            engine_cpu: None,
            acknowledged_orders: self
                .acknowledged
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }
}

/// Runs one transaction with retries: `attempt` is called until it succeeds, fails for good, or
/// the retries run out. Returns the latency of the whole, the retry kinds and the final error.
pub fn retry_loop<F>(max_retries: u32, mut attempt: F) -> (u64, Vec<&'static str>, Option<TxError>)
where
    F: FnMut() -> Result<(), TxError>,
{
    let started = Instant::now();
    let mut retries = Vec::new();
    loop {
        match attempt() {
            Ok(()) => return (started.elapsed().as_nanos() as u64, retries, None),
            Err(e) => match e.retry_kind {
                Some(kind) if (retries.len() as u32) < max_retries => retries.push(kind),
                _ => return (started.elapsed().as_nanos() as u64, retries, Some(e)),
            },
        }
    }
}

/// Per-second lines of the measured work: call [`Ticker::due`] often, it closes each second.
pub struct Ticker {
    start: Instant,
    next_s: u64,
    pub seconds: Vec<Second>,
}

impl Ticker {
    pub fn new(start: Instant) -> Ticker {
        Ticker {
            start,
            next_s: 1,
            seconds: Vec::new(),
        }
    }

    /// The instant the current second ends.
    pub fn next_deadline(&self) -> Instant {
        self.start + std::time::Duration::from_secs(self.next_s)
    }

    /// Closes every second that has ended.
    pub fn due(&mut self, recorder: &Recorder, on_second: &mut dyn FnMut(&Second)) {
        while Instant::now() >= self.next_deadline() {
            let s = recorder.take_second(self.next_s as f64);
            on_second(&s);
            self.seconds.push(s);
            self.next_s += 1;
        }
    }

    /// Closes the last, partial second at `end`.
    pub fn finish(
        &mut self,
        recorder: &Recorder,
        end: Instant,
        on_second: &mut dyn FnMut(&Second),
    ) {
        let t = end.duration_since(self.start).as_secs_f64();
        if t > (self.next_s - 1) as f64 + 1e-3 {
            let s = recorder.take_second(t);
            on_second(&s);
            self.seconds.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_stop_at_the_limit_and_count_by_kind() {
        let mut n = 0;
        let (_, retries, err) = retry_loop(2, || {
            n += 1;
            Err(TxError {
                retry_kind: Some("deadlock"),
                message: "x".into(),
            })
        });
        assert_eq!(n, 3);
        assert_eq!(retries, vec!["deadlock", "deadlock"]);
        assert!(err.is_some());
        let (_, retries, err) = retry_loop(2, || Err(TxError::fatal("no")));
        assert!(retries.is_empty() && err.is_some());
    }

    #[test]
    fn warmup_is_not_recorded() {
        let r = Recorder::new(2);
        r.record(false, 1000, &[], None);
        r.record(true, 2000, &["busy"], None);
        r.record(true, 5000, &[], Some(&TxError::fatal("boom")));
        let s = r.take_second(1.0);
        assert_eq!((s.tx, s.errors, s.retries), (1, 1, 1));
        let o = r.outcome(2);
        assert_eq!((o.tx, o.errors, o.retries), (1, 1, 1));
        assert_eq!(o.retries_by_kind["busy"], 1);
        assert_eq!(o.errors_by_kind["failed"], 1);
        assert_eq!(o.first_error.as_deref(), Some("boom"));
        assert_eq!(o.latency.count(), 1);
    }
}
