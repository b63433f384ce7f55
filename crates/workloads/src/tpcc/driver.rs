//! TPC-C on the driver ([`crate::driver`]): a terminal deals its transactions from a card deck,
//! keys and thinks around each with keying/think times on, and queues Delivery for workers with
//! their own connections (spec 2.7.2); New-Order is the headline kind (tpmC, the automatic
//! warm-up). This module says only that; the clock, warm-up, retries and statistics are the
//! driver's.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use oltplab_core::Result;
use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::LatencyHistogram;

use super::random::{Constants, TpccRng};
use super::tx::{execute, Deck, Home, Input, InputGen, Outcome, Scratch, Statements, TxType};
use super::{Connector, Meta};
use crate::driver::{self, Event, TxSpan, TxStats};
use crate::random::Rng;
use crate::sql::{Conn, DbResult, ErrorKind};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct DriverConfig {
    pub terminals: usize,
    pub duration: Duration,
    /// The warm-up; with `warmup_auto`, the longest it may take.
    pub warmup: Duration,
    /// Warm up until the New-Order rate is steady (see [`driver::rate_is_steady`]), at most
    /// `warmup`.
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
    /// window (see [`driver::DriverConfig::start_at`]). None: at once.
    pub start_at: Option<SystemTime>,
    /// Keep the key of every New-Order whose COMMIT returned (warm-up included), for a check of
    /// durability after a power cut (`oltplab crash`) or a cluster node's failure. The one
    /// record of acknowledged commits: [`Scratch::take_committed_order`] after each execution.
    pub record_new_orders: bool,
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

impl From<&driver::Second> for Second {
    fn from(s: &driver::Second) -> Second {
        let mut counts = [0; 5];
        counts.copy_from_slice(&s.counts);
        Second {
            t_s: s.t_s,
            counts,
            errors: s.errors,
            retries: s.retries,
            new_order_lat_ns_p99: s.headline_lat_ns_p99,
            new_order_lat_ns_mean: s.headline_lat_ns_mean,
        }
    }
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

/// One Delivery worker per ten terminals (a warehouse's worth under keying times), at least one.
pub fn delivery_workers(terminals: usize) -> usize {
    terminals.div_ceil(10).max(1)
}

/// A transaction that did not fail, and the districts a Delivery found nothing to deliver in.
pub struct Done {
    outcome: Outcome,
    skipped_districts: u32,
}

/// TPC-C as the driver runs it.
struct Tpcc {
    statements: Statements,
    gen: InputGen,
    homes: (i64, i64),
    keying_think: bool,
    /// With `record_new_orders`: every acknowledged New-Order's key.
    new_orders: Option<std::sync::Mutex<Vec<(i64, i64, i64)>>>,
}

impl driver::Workload for Tpcc {
    type Input = Input;
    type Output = Done;
    /// Its card deck and home.
    type Terminal = (Deck, Home);
    type Scratch = Scratch;

    fn kinds(&self) -> &'static [&'static str] {
        &TxType::NAMES
    }

    fn tag(&self, kind: usize) -> u8 {
        TxType::ALL[kind].tag()
    }

    fn headline(&self) -> usize {
        TxType::NewOrder.index()
    }

    fn terminal(&self, i: usize, terminals: usize) -> (Deck, Home) {
        (
            Deck::default(),
            home_of(i, terminals, self.homes, self.keying_think),
        )
    }

    fn next(&self, (deck, home): &mut (Deck, Home), rng: &mut Rng) -> (usize, Input) {
        let kind = deck.deal(rng);
        (kind.index(), self.gen.draw(kind, *home, rng))
    }

    fn execute(&self, conn: &mut dyn Conn, input: &Input, s: &mut Scratch) -> DbResult<Done> {
        let outcome = execute(conn, &self.statements, input, s)?;
        if let (Some(keys), Some(key)) = (&self.new_orders, s.take_committed_order()) {
            keys.lock().unwrap_or_else(|e| e.into_inner()).push(key);
        }
        Ok(Done {
            outcome,
            skipped_districts: s.skipped_districts(),
        })
    }

    fn rolled_back(&self, out: &Done) -> bool {
        out.outcome == Outcome::RolledBack
    }

    fn keying(&self, kind: usize) -> Option<Duration> {
        self.keying_think
            .then(|| Duration::from_secs_f64(TxType::ALL[kind].keying_s()))
    }

    fn think(&self, kind: usize, rng: &mut Rng) -> Option<Duration> {
        // Negative-exponential think time, capped at 10× its mean (spec 5.2.5.4).
        self.keying_think.then(|| {
            let mean = TxType::ALL[kind].think_mean_s();
            Duration::from_secs_f64((-(1.0 - rng.unit()).ln() * mean).min(10.0 * mean))
        })
    }

    fn deferred(&self, kind: usize) -> bool {
        kind == TxType::Delivery.index()
    }

    fn deferred_detail(&self, out: &Done) -> u64 {
        u64::from(out.skipped_districts)
    }

    fn workers(&self, terminals: usize) -> usize {
        delivery_workers(terminals)
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

/// Runs the workload: `warmup`, then `duration` measured (or until `stop`). `on_second` hears each
/// measured second as it ends, `on_event` the start and end of the measured window.
pub fn drive(
    connector: &dyn Connector,
    meta: &Meta,
    cfg: &DriverConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
    on_event: &mut dyn FnMut(Event),
) -> Result<DriverOutcome> {
    let mut rng = TpccRng::new(cfg.seed ^ 0x5255_4e00);
    let run_constants = Constants::for_run(&meta.load_constants, &mut rng);
    let homes = cfg.home_warehouses.unwrap_or((1, meta.warehouses));
    assert!(
        1 <= homes.0 && homes.0 <= homes.1 && homes.1 <= meta.warehouses,
        "home warehouses {homes:?} outside 1..={}: the caller checks the range",
        meta.warehouses
    );
    let w = Tpcc {
        statements: Statements::new(connector.dialect()),
        gen: InputGen {
            warehouses: meta.warehouses,
            home_warehouses: homes,
            c: run_constants,
        },
        homes,
        keying_think: cfg.keying_think,
        new_orders: cfg.record_new_orders.then(Default::default),
    };
    let driver_cfg = driver::DriverConfig {
        terminals: cfg.terminals,
        duration: cfg.duration,
        warmup: cfg.warmup,
        warmup_auto: cfg.warmup_auto,
        seed: cfg.seed,
        max_retries: cfg.max_retries,
        record_spans: cfg.record_spans,
        start_at: cfg.start_at,
        work: None,
        threads: None,
    };
    let o = driver::drive(
        &w,
        connector,
        &driver_cfg,
        stop,
        &mut |s| on_second(&Second::from(s)),
        on_event,
    )?;
    let d = o.deferred;
    Ok(DriverOutcome {
        tx: o.tx.try_into().expect("one TxStats per kind"),
        errors_by_kind: o.errors_by_kind,
        retries_by_kind: o.retries_by_kind,
        seconds: o.seconds.iter().map(Second::from).collect(),
        measured_s: o.measured_s,
        terminals: o.terminals,
        run_constants,
        first_error: o.first_error,
        in_tx_cpu: o.in_tx_cpu,
        interrupted: o.interrupted,
        spans: o.spans,
        terminals_without_backend: o.terminals_without_backend,
        measure_started_at: o.measure_started_at,
        deferred: DeferredDelivery {
            queued: d.queued,
            executed: d.executed,
            errors: d.errors,
            retries: d.retries,
            skipped_districts: d.detail,
            latency: d.latency,
        },
        delivery_workers: o.workers,
        warmup_s: o.warmup_s,
        warmup_steady: o.warmup_steady,
        new_orders: w
            .new_orders
            .map(|k| k.into_inner().unwrap_or_else(|e| e.into_inner()))
            .unwrap_or_default(),
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
