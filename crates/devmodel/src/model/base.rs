//! What every model uses: state words handed out at compile time, the per-call context, the
//! [`Model`] a composition calls its members and backing devices through, and the earliest free
//! of a set of units. Below every other model module; it imports none of them.

use crate::state::St;
use crate::IoKind;

/// Hands out state words at compile time.
pub(crate) struct Alloc {
    pub next: usize,
}

impl Alloc {
    pub(crate) fn take(&mut self, words: usize) -> usize {
        let at = self.next;
        self.next += words;
        at
    }
}

/// Per-call context: the state and the usage share of the seek stroke.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub st: St<'a>,
    /// Share of every device's capacity in use; seeks over that share span the full stroke.
    pub usage: f64,
}

/// A node of the tree as a composition (RAID, a cache) sees what is below it.
pub(crate) trait Model {
    /// Reserves what the I/O occupies; when it completes.
    fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64;
    /// When everything submitted so far is done.
    fn idle_at(&self, st: St) -> u64;
}

/// The unit of `n` (their busy-until words from `base`) that is free first.
pub(crate) fn earliest(st: St, base: usize, n: usize) -> usize {
    (0..n).min_by_key(|&i| st.get(base + i)).unwrap_or(0)
}

/// Busy runs a [`Timeline`] remembers. Back-to-back bookings merge into one run, so only gaps
/// cost a slot; past that many, the run that ended first is forgotten.
const TIMELINE_SLOTS: usize = 16;

/// A unit that carries short transfers (a channel, the host link) and serves whichever is ready
/// first: a transfer takes the earliest free gap at or after it is ready, so a command held up
/// (by its die, or a stall) does not hold the transfers of commands ready before it — an NCQ or
/// NVMe device completes out of order. It keeps its busy runs as (start, end) words; (0, 0) is
/// a free slot.
#[derive(Clone, Copy)]
pub(crate) struct Timeline {
    base: usize,
}

impl Timeline {
    pub(crate) fn new(alloc: &mut Alloc) -> Timeline {
        Timeline {
            base: alloc.take(2 * TIMELINE_SLOTS),
        }
    }

    fn run(&self, st: St, i: usize) -> (u64, u64) {
        (st.get(self.base + 2 * i), st.get(self.base + 2 * i + 1))
    }

    fn set_run(&self, st: St, i: usize, (start, end): (u64, u64)) {
        st.set(self.base + 2 * i, start);
        st.set(self.base + 2 * i + 1, end);
    }

    /// Books `len_ns` at the earliest gap from `ready`; when the transfer ends.
    pub(crate) fn book(&self, st: St, ready: u64, len_ns: u64) -> u64 {
        let mut at = ready;
        // Each run can push the start past its end once, so this ends within SLOTS passes.
        loop {
            let mut moved = false;
            for i in 0..TIMELINE_SLOTS {
                let (s, e) = self.run(st, i);
                if s < at + len_ns.max(1) && e > at {
                    at = e;
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
        // Merge the runs the booking touches into it, freeing their slots.
        let (mut start, mut end) = (at, at + len_ns);
        for i in 0..TIMELINE_SLOTS {
            let (s, e) = self.run(st, i);
            if e > 0 && s <= end && e >= start {
                (start, end) = (start.min(s), end.max(e));
                self.set_run(st, i, (0, 0));
            }
        }
        let slot = (0..TIMELINE_SLOTS)
            .min_by_key(|&i| self.run(st, i).1)
            .unwrap_or(0);
        self.set_run(st, slot, (start, end));
        at + len_ns
    }

    /// When the last booking ends.
    pub(crate) fn busy_until(&self, st: St) -> u64 {
        (0..TIMELINE_SLOTS)
            .map(|i| self.run(st, i).1)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn a_timeline_fills_gaps_and_never_books_twice() {
        let words: Vec<AtomicU64> = (0..64).map(|_| AtomicU64::new(0)).collect();
        let st = St::new(&words);
        let line = Timeline::new(&mut Alloc { next: 0 });
        // One ready late, then one ready earlier: the earlier goes first, in the gap.
        assert_eq!(line.book(st, 1_000, 10), 1_010);
        assert_eq!(line.book(st, 100, 10), 110);
        // A gap too short for a transfer is skipped.
        assert_eq!(line.book(st, 995, 10), 1_020);
        // Back to back past the slots: runs merge, so none is forgotten and none overlaps.
        let ends: Vec<u64> = (0..100).map(|_| line.book(st, 2_000, 10)).collect();
        assert_eq!(ends, (1..=100).map(|i| 2_000 + 10 * i).collect::<Vec<_>>());
        assert_eq!(line.book(st, 105, 10), 120);
        assert_eq!(line.busy_until(st), 3_000);
    }
}
