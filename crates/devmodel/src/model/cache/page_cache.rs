//! The operating system's page cache (`pagecache`).

use super::super::base::{Alloc, Ctx, Model};
use super::blocks::{DirtyRing, Table, TABLE_WAYS};
use crate::IoKind;

/// The operating system's page cache: reads of cached pages cost a memory copy; writes land in
/// memory and are written back when the device is idle or when dirty data passes its limit; a flush
/// writes back everything.
pub(crate) struct PageCache<M> {
    pub(crate) backing: M,
    table: Table,
    ring: DirtyRing,
    dirty_limit: u64,
}

const PAGE_BYTES: u64 = 4096;
/// Linux's vm.dirty_ratio default: writers are throttled above 20 % dirty memory.
const DIRTY_RATIO: f64 = 0.20;

fn memcpy_ns(len: u64) -> u64 {
    // ~1 µs per call plus ~10 GB/s copy.
    1_000 + len / 10
}

impl<M: Model> PageCache<M> {
    pub(crate) fn new(backing: M, size_bytes: u64, alloc: &mut Alloc) -> PageCache<M> {
        PageCache {
            backing,
            table: Table::new(alloc, (size_bytes / PAGE_BYTES).max(1), PAGE_BYTES),
            ring: DirtyRing::new(alloc),
            dirty_limit: ((size_bytes as f64) * DIRTY_RATIO) as u64,
        }
    }

    pub(crate) fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let st = cx.st;
        self.ring.destage_idle(cx, &self.backing, t);
        let page = self.table.block;
        let first = addr / page;
        let last = (addr + len.max(1) - 1) / page;
        match kind {
            IoKind::Flush => {
                let written = self
                    .ring
                    .destage_until(cx, &self.backing, t, |bytes, _| bytes == 0);
                written.max(self.backing.submit(cx, t, kind, 0, 0))
            }
            IoKind::Read => {
                let mut hit = true;
                for b in first..=last {
                    if self.table.find(st, b).is_none() {
                        hit = false;
                        self.table.insert(st, b, true, TABLE_WAYS);
                    }
                }
                if hit {
                    t + memcpy_ns(len)
                } else {
                    self.backing.submit(cx, t, kind, addr, len) + memcpy_ns(len)
                }
            }
            IoKind::Write => {
                for b in first..=last {
                    if self.table.find(st, b).is_none() {
                        self.table.insert(st, b, true, TABLE_WAYS);
                    }
                }
                let limit = self.dirty_limit;
                let cap = self.ring.cap;
                let room = self.ring.destage_until(cx, &self.backing, t, |bytes, n| {
                    bytes + len <= limit && n < cap
                });
                self.ring.push(st, addr, len);
                (t + memcpy_ns(len)).max(room)
            }
        }
    }
}
