//! What the caches keep in the state region: a table of cached blocks and a ring of dirty
//! extents waiting to be written to the device below.

use super::super::base::{Alloc, Ctx, Model};
use crate::state::St;
use crate::IoKind;

/// A set-associative table of blocks with LRU replacement, in the state region.
pub(super) struct Table {
    base: usize,
    sets: u64,
    pub(super) ways: u64,
    pub(super) block: u64,
}

pub(super) const TABLE_WAYS: u64 = 8;
/// Entries of a table; larger caches get larger blocks so the state stays ≤ 16 MiB.
const TABLE_ENTRIES_MAX: u64 = 1 << 20;
const META_CACHED: u64 = 1 << 63;
const META_COUNT_SHIFT: u32 = 56;
const META_TICK_MASK: u64 = (1 << 56) - 1;

impl Table {
    pub(super) fn new(alloc: &mut Alloc, entries_wanted: u64, mut block: u64) -> Table {
        let mut entries = entries_wanted.max(TABLE_WAYS);
        while entries > TABLE_ENTRIES_MAX {
            entries = entries.div_ceil(2);
            block *= 2;
        }
        let sets = entries.div_ceil(TABLE_WAYS);
        let base = alloc.take(1 + (sets * TABLE_WAYS * 2) as usize);
        Table {
            base,
            sets,
            ways: TABLE_WAYS,
            block,
        }
    }

    pub(super) fn set_of(&self, block_no: u64) -> u64 {
        (block_no.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17) % self.sets
    }

    pub(super) fn slot(&self, set: u64, way: u64) -> usize {
        self.base + 1 + ((set * self.ways + way) * 2) as usize
    }

    pub(super) fn tick(&self, st: St) -> u64 {
        let t = st.get(self.base) + 1;
        st.set(self.base, t);
        t & META_TICK_MASK
    }

    /// The slot holding `block_no`, touched as most recently used.
    pub(super) fn find(&self, st: St, block_no: u64) -> Option<usize> {
        let set = self.set_of(block_no);
        for way in 0..self.ways {
            let s = self.slot(set, way);
            if st.get(s) == block_no + 1 {
                let meta = st.get(s + 1);
                st.set(s + 1, (meta & !META_TICK_MASK) | self.tick(st));
                return Some(s);
            }
        }
        None
    }

    pub(super) fn is_cached(&self, st: St, slot: usize) -> bool {
        st.get(slot + 1) & META_CACHED != 0
    }

    pub(super) fn count(&self, st: St, slot: usize) -> u64 {
        (st.get(slot + 1) >> META_COUNT_SHIFT) & 0x7f
    }

    pub(super) fn set_meta(&self, st: St, slot: usize, cached: bool, count: u64) {
        let meta = (if cached { META_CACHED } else { 0 })
            | (count.min(0x7f) << META_COUNT_SHIFT)
            | self.tick(st);
        st.set(slot + 1, meta);
    }

    /// Puts `block_no` in its set, replacing the least recently used entry that is not cached if
    /// `keep_cached_max` cached entries are already there, else the least recently used of all.
    pub(super) fn insert(
        &self,
        st: St,
        block_no: u64,
        cached: bool,
        keep_cached_max: u64,
    ) -> usize {
        let set = self.set_of(block_no);
        let slots: Vec<usize> = (0..self.ways).map(|w| self.slot(set, w)).collect();
        if let Some(&empty) = slots.iter().find(|&&s| st.get(s) == 0) {
            st.set(empty, block_no + 1);
            self.set_meta(st, empty, cached, 0);
            return empty;
        }
        let cached_now = slots.iter().filter(|&&s| self.is_cached(st, s)).count() as u64;
        let lru = |pred: &dyn Fn(usize) -> bool| {
            slots
                .iter()
                .copied()
                .filter(|&s| pred(s))
                .min_by_key(|&s| st.get(s + 1) & META_TICK_MASK)
        };
        let victim = if cached && cached_now >= keep_cached_max {
            lru(&|s| self.is_cached(st, s))
        } else {
            lru(&|s| !self.is_cached(st, s))
        }
        .or_else(|| lru(&|_| true))
        .expect("a set has ways");
        st.set(victim, block_no + 1);
        self.set_meta(st, victim, cached, 0);
        victim
    }

    pub(super) fn index_of(&self, slot: usize) -> u64 {
        ((slot - self.base - 1) / 2) as u64
    }
}

/// Dirty data waiting to be written to the backing device, oldest first.
pub(super) struct DirtyRing {
    base: usize,
    pub(super) cap: u64,
}

const DR_HEAD: usize = 0;
const DR_TAIL: usize = 1;
const DR_BYTES: usize = 2;
const DR_ENTRIES: usize = 4;
/// Dirty extents tracked at once; a cache with more outstanding waits as if full.
const DIRTY_RING_CAP: u64 = 1 << 16;
/// Destage writes issued at once in an idle gap (the controller sorts them, as the drive's queue would).
const DESTAGE_BATCH: usize = 32;
/// Contiguous dirty extents are merged up to this size on their way out.
pub(super) const DESTAGE_MERGE_MAX: u64 = 1 << 20;

impl DirtyRing {
    pub(super) fn new(alloc: &mut Alloc) -> DirtyRing {
        DirtyRing {
            base: alloc.take(DR_ENTRIES + 2 * DIRTY_RING_CAP as usize),
            cap: DIRTY_RING_CAP,
        }
    }

    pub(super) fn len(&self, st: St) -> u64 {
        st.get(self.base + DR_TAIL) - st.get(self.base + DR_HEAD)
    }

    pub(super) fn bytes(&self, st: St) -> u64 {
        st.get(self.base + DR_BYTES)
    }

    pub(super) fn push(&self, st: St, addr: u64, len: u64) {
        let tail = st.get(self.base + DR_TAIL);
        let e = self.base + DR_ENTRIES + 2 * (tail % self.cap) as usize;
        st.set(e, addr);
        st.set(e + 1, len);
        st.set(self.base + DR_TAIL, tail + 1);
        st.set(self.base + DR_BYTES, self.bytes(st) + len);
    }

    /// The oldest extent, merged with the contiguous ones after it.
    pub(super) fn pop(&self, st: St) -> Option<(u64, u64)> {
        let mut head = st.get(self.base + DR_HEAD);
        let tail = st.get(self.base + DR_TAIL);
        if head == tail {
            return None;
        }
        let entry = |i: u64| {
            let e = self.base + DR_ENTRIES + 2 * (i % self.cap) as usize;
            (st.get(e), st.get(e + 1))
        };
        let (addr, mut len) = entry(head);
        head += 1;
        while head < tail {
            let (a, l) = entry(head);
            if a != addr + len || len + l > DESTAGE_MERGE_MAX {
                break;
            }
            len += l;
            head += 1;
        }
        st.set(self.base + DR_HEAD, head);
        st.set(self.base + DR_BYTES, self.bytes(st).saturating_sub(len));
        Some((addr, len))
    }

    /// Writes dirty data to `backing` in the gaps when it is idle before `t`.
    pub(super) fn destage_idle(&self, cx: Ctx, backing: &impl Model, t: u64) {
        for _ in 0..64 {
            let at = backing.idle_at(cx.st);
            if at >= t || self.len(cx.st) == 0 {
                return;
            }
            for _ in 0..DESTAGE_BATCH {
                let Some((addr, len)) = self.pop(cx.st) else {
                    return;
                };
                backing.submit(cx, at, IoKind::Write, addr, len);
            }
        }
    }

    /// Writes dirty data at `t` until `fits` holds; returns when the last of those writes is done.
    pub(super) fn destage_until(
        &self,
        cx: Ctx,
        backing: &impl Model,
        t: u64,
        fits: impl Fn(u64, u64) -> bool,
    ) -> u64 {
        let mut done = t;
        while !fits(self.bytes(cx.st), self.len(cx.st)) {
            let Some((addr, len)) = self.pop(cx.st) else {
                break;
            };
            done = done.max(backing.submit(cx, t, IoKind::Write, addr, len));
        }
        done
    }
}
