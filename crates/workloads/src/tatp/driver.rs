//! TATP on the driver ([`crate::driver`]): each terminal draws the seven transactions with the
//! mix's weights and their subscribers non-uniformly (TATP 3.1), no keying or think times. The
//! headline kind is GET_SUBSCRIBER_DATA only for the automatic warm-up; TATP's figure of merit,
//! MQTh, counts every successful transaction.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use oltplab_core::Result;

use super::tx::{execute, Input, Outcome, Statements, TxType};
use super::{nurand_a, sub_nbr_string, Meta};
use crate::driver::{self, Event};
use crate::random::Rng;
use crate::sql::{Conn, Connector, DbResult, Rows};

/// Draws the transactions' inputs (TATP 4.1–4.7).
pub struct InputGen {
    pub subscribers: i64,
}

impl InputGen {
    /// A subscriber id, non-uniform: (rand(0, A) | rand(1, P)) mod P + 1.
    pub fn s_id(&self, rng: &mut Rng) -> i64 {
        rng.nurand(nurand_a(self.subscribers), 1, self.subscribers, 0)
    }

    /// A transaction type with the mix's weights.
    pub fn draw_type(rng: &mut Rng) -> TxType {
        let mut x = rng.uniform(1, 100) as u32;
        for t in TxType::ALL {
            if x <= t.mix_pct() {
                return t;
            }
            x -= t.mix_pct();
        }
        TxType::DeleteCallForwarding
    }

    pub fn draw(&self, kind: TxType, rng: &mut Rng) -> Input {
        let s_id = self.s_id(rng);
        let start_time = 8 * rng.uniform(0, 2);
        match kind {
            TxType::GetSubscriberData => Input::GetSubscriberData { s_id },
            TxType::GetNewDestination => Input::GetNewDestination {
                s_id,
                sf_type: rng.uniform(1, 4),
                start_time,
                end_time: rng.uniform(1, 24),
            },
            TxType::GetAccessData => Input::GetAccessData {
                s_id,
                ai_type: rng.uniform(1, 4),
            },
            TxType::UpdateSubscriberData => Input::UpdateSubscriberData {
                s_id,
                sf_type: rng.uniform(1, 4),
                bit_1: rng.uniform(0, 1),
                data_a: rng.uniform(0, 255),
            },
            TxType::UpdateLocation => Input::UpdateLocation {
                sub_nbr: sub_nbr_string(s_id),
                vlr_location: rng.uniform(1, i64::from(u32::MAX)),
            },
            TxType::InsertCallForwarding => Input::InsertCallForwarding {
                sub_nbr: sub_nbr_string(s_id),
                sf_type: rng.uniform(1, 4),
                start_time,
                end_time: rng.uniform(1, 24),
                numberx: {
                    let mut n = String::with_capacity(15);
                    rng.nstring(15, 15, &mut n);
                    n
                },
            },
            TxType::DeleteCallForwarding => Input::DeleteCallForwarding {
                sub_nbr: sub_nbr_string(s_id),
                sf_type: rng.uniform(1, 4),
                start_time,
            },
        }
    }
}

/// TATP as the driver runs it.
struct Tatp {
    st: Statements,
    gen: InputGen,
}

impl driver::Workload for Tatp {
    type Input = Input;
    type Output = Outcome;
    type Terminal = ();
    type Scratch = Rows;

    fn kinds(&self) -> &'static [&'static str] {
        &TxType::NAMES
    }

    fn tag(&self, kind: usize) -> u8 {
        TxType::ALL[kind].tag()
    }

    fn headline(&self) -> usize {
        TxType::GetSubscriberData.index()
    }

    fn terminal(&self, _i: usize, _terminals: usize) {}

    fn next(&self, _t: &mut (), rng: &mut Rng) -> (usize, Input) {
        let kind = InputGen::draw_type(rng);
        (kind.index(), self.gen.draw(kind, rng))
    }

    fn execute(&self, conn: &mut dyn Conn, input: &Input, rows: &mut Rows) -> DbResult<Outcome> {
        execute(conn, &self.st, input, rows)
    }

    /// An unsuccessful transaction rolled back, as TATP expects of some.
    fn rolled_back(&self, out: &Outcome) -> bool {
        *out == Outcome::Unsuccessful
    }
}

/// Runs TATP on the driver; the outcome's `rollbacks` per kind are the unsuccessful ones.
pub fn drive(
    connector: &dyn Connector,
    meta: &Meta,
    cfg: &driver::DriverConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&driver::Second),
    on_event: &mut dyn FnMut(Event),
) -> Result<driver::Outcome> {
    let w = Tatp {
        st: Statements::new(connector.dialect()),
        gen: InputGen {
            subscribers: meta.subscribers,
        },
    };
    driver::drive(&w, connector, cfg, stop, on_second, on_event)
}

/// Each kind's successful and unsuccessful counts of the measured window, by name.
pub fn outcomes(o: &driver::Outcome) -> BTreeMap<&'static str, (u64, u64)> {
    TxType::ALL
        .iter()
        .map(|t| {
            let s = &o.tx[t.index()];
            (t.name(), (s.count - s.rollbacks, s.rollbacks))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_over_100000_draws() {
        let mut rng = Rng::new(5);
        let mut counts = [0u32; 7];
        let n = 100_000;
        for _ in 0..n {
            counts[InputGen::draw_type(&mut rng).index()] += 1;
        }
        for t in TxType::ALL {
            let share = 100.0 * counts[t.index()] as f64 / n as f64;
            assert!(
                (share - t.mix_pct() as f64).abs() < 0.5,
                "{}: {share:.2} % vs {} %",
                t.name(),
                t.mix_pct()
            );
        }
    }

    #[test]
    fn subscribers_are_skewed_and_in_range() {
        let gen = InputGen { subscribers: 1000 };
        let mut rng = Rng::new(9);
        let mut hits = vec![0u32; 1001];
        for _ in 0..100_000 {
            let s = gen.s_id(&mut rng);
            assert!((1..=1000).contains(&s));
            hits[s as usize] += 1;
        }
        // (a | b) sets bits: ids with many one bits come up far more often than uniform.
        let max = *hits.iter().max().unwrap();
        assert!(max > 300, "the most drawn subscriber came up {max} times");
    }
}
