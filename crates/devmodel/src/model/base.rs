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
