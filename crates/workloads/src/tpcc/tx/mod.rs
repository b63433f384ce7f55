//! The five TPC-C transactions (spec 2.4–2.8): their inputs, drawn as the spec says, and their SQL,
//! written once for every dialect. Engines with `UPDATE … RETURNING` (SQLite, PostgreSQL) read and
//! change a row in one round trip; MariaDB/MySQL read with `FOR UPDATE`, then write.

mod delivery;
mod exec;
mod input;
mod new_order;
mod order_status;
mod payment;
pub mod procedures;
mod statements;
mod stock_level;

pub use exec::{execute, Scratch};
pub use input::{CustomerSel, Home, Input, InputGen, Line};
pub use statements::Statements;

use super::random::TpccRng;

/// 90 % of deferred Delivery executions complete within this many seconds of their queueing
/// (spec 2.7.2.2).
pub const DELIVERY_DEFERRED_P90_LIMIT_S: f64 = 80.0;

/// The transaction types, in the order of the tags the tracing VFS stamps on I/O (1..=5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TxType {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TxType {
    pub const ALL: [TxType; 5] = [
        TxType::NewOrder,
        TxType::Payment,
        TxType::OrderStatus,
        TxType::Delivery,
        TxType::StockLevel,
    ];

    /// The types' names, in [`TxType::ALL`] order (the driver's kinds).
    pub const NAMES: [&'static str; 5] = [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// The tag of this type's I/O in a trace (0 means "no transaction").
    pub fn tag(self) -> u8 {
        self as u8 + 1
    }

    /// Keying time in seconds (spec 5.2.5.7).
    pub fn keying_s(self) -> f64 {
        match self {
            TxType::NewOrder => 18.0,
            TxType::Payment => 3.0,
            _ => 2.0,
        }
    }

    /// The limit on the 90th-percentile response time in seconds (spec 5.2.5.3; Delivery's is
    /// for queueing the request, its deferred execution has [`DELIVERY_DEFERRED_P90_LIMIT_S`]).
    pub fn p90_limit_s(self) -> f64 {
        match self {
            TxType::StockLevel => 20.0,
            _ => 5.0,
        }
    }

    /// Mean think time in seconds (spec 5.2.5.7).
    pub fn think_mean_s(self) -> f64 {
        match self {
            TxType::NewOrder | TxType::Payment => 12.0,
            TxType::OrderStatus => 10.0,
            _ => 5.0,
        }
    }
}

/// The per-terminal card deck (spec 5.2.4.2): 10 New-Order, 10 Payment and one each of the
/// others, shuffled, dealt, reshuffled when empty. It keeps Payment ≥ 43 % and the others ≥ 4 %
/// over every 23 transactions, not only on average.
pub struct Deck {
    cards: [TxType; 23],
    next: usize,
}

impl Default for Deck {
    fn default() -> Self {
        let mut cards = [TxType::NewOrder; 23];
        for c in cards.iter_mut().skip(10).take(10) {
            *c = TxType::Payment;
        }
        cards[20] = TxType::OrderStatus;
        cards[21] = TxType::Delivery;
        cards[22] = TxType::StockLevel;
        Self { cards, next: 23 }
    }
}

impl Deck {
    pub fn deal(&mut self, rng: &mut TpccRng) -> TxType {
        if self.next == self.cards.len() {
            rng.shuffle(&mut self.cards);
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

/// How a transaction ended, when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// New-Order's intended 1 % rollback.
    RolledBack,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_over_100000_draws() {
        let mut rng = TpccRng::new(11);
        let mut deck = Deck::default();
        let mut counts = [0u32; 5];
        let n = 100_000;
        for _ in 0..n {
            counts[deck.deal(&mut rng).index()] += 1;
        }
        let share = |t: TxType| counts[t.index()] as f64 / n as f64;
        // Spec 5.2.3: Payment ≥ 43 %, the three small ones ≥ 4 % each; New-Order the rest (≈ 45 %).
        assert!(share(TxType::Payment) >= 0.43, "{counts:?}");
        for t in [TxType::OrderStatus, TxType::Delivery, TxType::StockLevel] {
            assert!(share(t) >= 0.04, "{t:?}: {counts:?}");
        }
        assert!(
            (0.43..0.46).contains(&share(TxType::NewOrder)),
            "{counts:?}"
        );
        // A deck guarantees the mix within every 23 cards, not only on average.
        let mut window = [0u32; 5];
        for _ in 0..23 {
            window[deck.deal(&mut rng).index()] += 1;
        }
        assert_eq!(window.iter().sum::<u32>(), 23);
    }
}
