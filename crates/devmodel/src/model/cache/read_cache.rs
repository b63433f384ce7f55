//! An SSD read cache in front of a slower device (`readcache`).

use super::super::base::{Alloc, Ctx, Model};
use super::blocks::Table;
use crate::state::St;
use crate::IoKind;

/// An SSD read cache in front of a slower device: blocks read `PROMOTE_AFTER` times are copied to
/// the cache device; reads of cached blocks go there; writes go through to the backing device (and
/// update a cached copy).
pub(crate) struct ReadCache<M> {
    pub(crate) backing: M,
    pub(crate) cache: M,
    table: Table,
    cache_capacity: u64,
    cached_per_set_max: u64,
    /// Two words: reads, and reads served wholly from the cache.
    pub(crate) stats: usize,
}

/// What the read caches of a device did: reads and the reads served from the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CacheStats {
    pub reads: u64,
    pub hits: u64,
}

const READCACHE_BLOCK: u64 = 64 << 10;
const PROMOTE_AFTER: u64 = 2;

impl<M: Model> ReadCache<M> {
    /// `stats` are two words taken before the devices below were compiled.
    pub(crate) fn new(
        stats: usize,
        backing: M,
        cache: M,
        size_bytes: u64,
        alloc: &mut Alloc,
    ) -> ReadCache<M> {
        // Twice the cached blocks: half the entries count reads of blocks not yet promoted.
        let table = Table::new(
            alloc,
            2 * (size_bytes / READCACHE_BLOCK).max(1),
            READCACHE_BLOCK,
        );
        ReadCache {
            backing,
            cache,
            cached_per_set_max: table.ways / 2,
            table,
            cache_capacity: size_bytes,
            stats,
        }
    }

    pub(crate) fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let st = cx.st;
        let block = self.table.block;
        let first = addr / block;
        let last = (addr + len.max(1) - 1) / block;
        match kind {
            IoKind::Flush => self
                .backing
                .submit(cx, t, kind, 0, 0)
                .max(self.cache.submit(cx, t, kind, 0, 0)),
            IoKind::Read => {
                let slots: Vec<Option<usize>> =
                    (first..=last).map(|b| self.table.find(st, b)).collect();
                st.set(self.stats, st.get(self.stats) + 1);
                if slots
                    .iter()
                    .all(|s| s.is_some_and(|s| self.table.is_cached(st, s)))
                {
                    st.set(self.stats + 1, st.get(self.stats + 1) + 1);
                    let s = slots[0].expect("all cached");
                    let at = self.cache_addr(s) + addr % block;
                    return self.cache.submit(cx, t, kind, at, len);
                }
                let done = self.backing.submit(cx, t, kind, addr, len);
                for (b, slot) in (first..=last).zip(slots) {
                    let slot = slot.unwrap_or_else(|| {
                        self.table.insert(st, b, false, self.cached_per_set_max)
                    });
                    if self.table.is_cached(st, slot) {
                        continue;
                    }
                    let count = self.table.count(st, slot) + 1;
                    if count >= PROMOTE_AFTER {
                        // Promote: the copy happens in the background after the read.
                        let slot = self.promote(st, b, slot);
                        self.cache
                            .submit(cx, t, IoKind::Write, self.cache_addr(slot), block);
                    } else {
                        self.table.set_meta(st, slot, false, count);
                    }
                }
                done
            }
            IoKind::Write => {
                let mut done = self.backing.submit(cx, t, kind, addr, len);
                for b in first..=last {
                    if let Some(s) = self
                        .table
                        .find(st, b)
                        .filter(|&s| self.table.is_cached(st, s))
                    {
                        let at = self.cache_addr(s) + addr.max(b * block) % block;
                        let n = ((b + 1) * block).min(addr + len) - addr.max(b * block);
                        done = done.max(self.cache.submit(cx, t, kind, at, n));
                    }
                }
                done
            }
        }
    }

    fn promote(&self, st: St, block_no: u64, slot: usize) -> usize {
        // Keep at most half of each set cached, so the other half can count candidates.
        let set = self.table.set_of(block_no);
        let cached_in_set = (0..self.table.ways)
            .filter(|&w| self.table.is_cached(st, self.table.slot(set, w)))
            .count() as u64;
        if cached_in_set >= self.cached_per_set_max {
            st.set(slot, 0);
            return self
                .table
                .insert(st, block_no, true, self.cached_per_set_max);
        }
        self.table.set_meta(st, slot, true, 0);
        slot
    }

    fn cache_addr(&self, slot: usize) -> u64 {
        (self.table.index_of(slot) / 2 * self.table.block) % self.cache_capacity.max(1)
    }
}
