//! TPC-C on the driver ([`crate::driver`]): a terminal deals its transactions from a card deck,
//! keys and thinks around each with keying/think times on, and queues Delivery for workers with
//! their own connections (spec 2.7.2); New-Order is the headline kind (tpmC, the automatic
//! warm-up). This module says only that; the clock, warm-up, retries and statistics are the
//! driver's.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime};

use oltplab_core::Result;

use super::random::{Constants, TpccRng};
use super::tx::procedures::{self, Procedures};
use super::tx::{execute, Deck, Home, Input, InputGen, Outcome, Scratch, Statements, TxType};
use super::{Connector, Meta};
use crate::driver::{self, Event};
use crate::random::Rng;
use crate::sql::{Conn, DbResult, Purpose};

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
    /// Keep a [`driver::TxSpan`] of every measured transaction, to tie a server's I/O trace to them.
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
    /// Run each transaction as one call of a server-side function ([`procedures`]; PostgreSQL),
    /// created or replaced before the terminals start.
    pub procedures: bool,
}

/// What the driver measured ([`driver::Outcome`]: its `tx` and `seconds` in [`TxType`] order,
/// its `workers` the Delivery workers, its `deferred.detail` the districts a Delivery found no
/// undelivered order in, over all executions), with TPC-C's own figures.
#[derive(Clone, Debug, Default)]
pub struct DriverOutcome {
    pub run: driver::Outcome,
    pub run_constants: Constants,
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
    /// `--procedures`: the calls that replace the statements.
    procedures: Option<Procedures>,
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
        let outcome = match &self.procedures {
            Some(p) => procedures::execute(conn, p, input, s)?,
            None => execute(conn, &self.statements, input, s)?,
        };
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
    on_second: &mut dyn FnMut(&driver::Second),
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
    if cfg.procedures {
        let mut conn = connector.connect(Purpose::Run)?;
        procedures::install(conn.as_mut()).map_err(|e| {
            oltplab_core::Error::failed(format!(
                "cannot create TPC-C's server-side procedures for --procedures: {e} (the run's user needs the right to create functions or procedures in the database)"
            ))
        })?;
    }
    let w = Tpcc {
        statements: Statements::new(connector.dialect()),
        procedures: if cfg.procedures {
            Procedures::new(connector.dialect())
        } else {
            None
        },
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
    let run = driver::drive(&w, connector, &driver_cfg, stop, on_second, on_event)?;
    Ok(DriverOutcome {
        run,
        run_constants,
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
