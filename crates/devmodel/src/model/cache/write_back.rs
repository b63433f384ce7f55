//! A RAID controller's battery-backed write-back cache with read-ahead (`wbcache`).

use super::super::base::{Alloc, Ctx, Model};
use super::blocks::{DirtyRing, DESTAGE_MERGE_MAX};
use crate::params::ControllerParams;
use crate::state::St;
use crate::IoKind;

/// A RAID controller's battery-backed cache (`wbcache`): writes are acknowledged from the cache
/// while the dirty data fits; it is written to the backing device when that is idle, a batch at a
/// time sorted by address with contiguous pieces merged (write coalescing and command reordering),
/// or at once when the cache is full (writers then wait for destaging). With read-ahead, a read
/// that continues the one before starts a stream: the controller reads ahead of it in chunks
/// (`readahead` bytes, a full stripe with `readahead=on`), keeping `RA_AHEAD` chunks in flight,
/// and the stream's reads are served from the cache once their chunk has arrived. Reads are not
/// kept otherwise ("direct I/O"). Cache hits, acknowledged writes and flushes cost the
/// controller's command time (a serial resource) plus their bytes over its host link.
pub(crate) struct WriteBack<M> {
    pub(crate) backing: M,
    ring: DirtyRing,
    size: u64,
    cmd_ns: u64,
    /// Host link, bytes per ns.
    link_bytes_per_ns: f64,
    /// Read-ahead chunk; 0: no read-ahead.
    readahead: u64,
    /// State: the controller's busy-until, the stream tick, the destage round's start, the last
    /// write's arrival, `RA_CANDIDATES` read ends (+1), then
    /// `RA_STREAMS` streams of `RA_STREAM_WORDS` words.
    base: usize,
}

/// Dirty extents in one destage round (catalogue: `destage_round`): small, so that a read waits
/// behind little, as controllers give reads precedence over destaging.
const DESTAGE_ROUND: usize = 8;
/// Streams followed at once (catalogue: `readahead_streams`).
const RA_STREAMS: usize = 8;
/// Ends of recent reads that started no stream: a read continuing one starts a stream.
const RA_CANDIDATES: usize = 32;
/// Chunks a stream keeps in flight beyond the one being read (catalogue: `readahead_chunks`).
const RA_AHEAD: u64 = 2;
/// Chunks a stream remembers (their arrival times).
const RA_CHUNKS: usize = 16;
/// A stream: first byte still kept (`lo`), chunks kept, last use (0: free), chunk arrival times.
const RA_STREAM_WORDS: usize = 3 + RA_CHUNKS;
const WB_BUSY: usize = 0;
const WB_TICK: usize = 1;
/// When the most recent destage round begins on the device (the work before it is done).
const WB_ROUND: usize = 2;
/// When the last write entered the cache: no destaging before it (the data was not there).
const WB_PUSHED: usize = 3;
const WB_CAND: usize = 4;
const WB_STREAMS: usize = WB_CAND + RA_CANDIDATES;
const WB_WORDS: usize = WB_STREAMS + RA_STREAMS * RA_STREAM_WORDS;

impl<M: Model> WriteBack<M> {
    pub(crate) fn new(backing: M, size: u64, readahead: u64, alloc: &mut Alloc) -> WriteBack<M> {
        // The catalogue's own list, which its test reads whole.
        let c = ControllerParams::of_catalogue().expect("the catalogue's controller is complete");
        WriteBack {
            backing,
            ring: DirtyRing::new(alloc),
            size,
            cmd_ns: (c.cmd_us * 1e3) as u64,
            link_bytes_per_ns: c.link_mb_s * 1e6 / 1e9,
            readahead,
            base: alloc.take(WB_WORDS),
        }
    }

    pub(crate) fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        self.destage_idle(cx, t);
        match kind {
            // Battery-backed: what is in the cache is durable.
            IoKind::Flush => self.hit(cx.st, t, 0),
            // Reads of several chunks each stream well enough on their own: passed through.
            IoKind::Read if self.readahead > 0 && len <= 4 * self.readahead => {
                self.read(cx, t, addr, len)
            }
            IoKind::Read => self.backing.submit(cx, t, kind, addr, len),
            IoKind::Write => {
                let size = self.size;
                let cap = self.ring.cap;
                let room = self.ring.destage_until(cx, &self.backing, t, |bytes, n| {
                    bytes + len <= size && n < cap
                });
                self.ring.push(cx.st, addr, len);
                cx.st.set(self.base + WB_PUSHED, t);
                self.hit(cx.st, t, len).max(room)
            }
        }
    }

    /// A command served by the controller from its cache, starting no sooner than `t`.
    fn hit(&self, st: St, t: u64, len: u64) -> u64 {
        let start = t.max(st.get(self.base + WB_BUSY));
        st.set(self.base + WB_BUSY, start + self.cmd_ns);
        start + self.cmd_ns + (len as f64 / self.link_bytes_per_ns) as u64
    }

    /// Writes dirty data to the backing device in the background until `t`: a round of the oldest
    /// extents at a time (at most `DESTAGE_ROUND` of them and about `DESTAGE_MERGE_MAX` bytes),
    /// sorted by address, contiguous ones merged. The next round is queued at the device as soon
    /// as it begins the one before, so the device streams; a read arriving waits behind two
    /// rounds at most.
    fn destage_idle(&self, cx: Ctx, t: u64) {
        let st = cx.st;
        for _ in 0..1024 {
            if self.ring.len(st) == 0 {
                return;
            }
            let busy = self.backing.idle_at(st);
            let round = st.get(self.base + WB_ROUND);
            let at = if round <= t && round < busy {
                round
            } else if busy < t {
                busy
            } else {
                return;
            }
            .max(st.get(self.base + WB_PUSHED));
            st.set(self.base + WB_ROUND, busy.max(at));
            let mut bytes = 0;
            let mut batch: Vec<(u64, u64)> = (0..DESTAGE_ROUND)
                .map_while(|_| {
                    if bytes >= DESTAGE_MERGE_MAX {
                        return None;
                    }
                    let e = self.ring.pop(cx.st)?;
                    bytes += e.1;
                    Some(e)
                })
                .collect();
            batch.sort_unstable();
            let mut merged: Vec<(u64, u64)> = Vec::with_capacity(batch.len());
            for (a, l) in batch {
                match merged.last_mut() {
                    Some((ma, ml)) if *ma + *ml == a && *ml + l <= DESTAGE_MERGE_MAX => *ml += l,
                    _ => merged.push((a, l)),
                }
            }
            for (a, l) in merged {
                self.backing.submit(cx, at, IoKind::Write, a, l);
            }
        }
    }

    fn stream(&self, i: usize) -> usize {
        self.base + WB_STREAMS + i * RA_STREAM_WORDS
    }

    fn tick(&self, st: St) -> u64 {
        let v = st.get(self.base + WB_TICK) + 1;
        st.set(self.base + WB_TICK, v);
        v
    }

    /// A read with read-ahead on.
    fn read(&self, cx: Ctx, t: u64, addr: u64, len: u64) -> u64 {
        let st = cx.st;
        let end = addr + len;
        // A stream whose kept data this read starts in (or right after).
        let found = (0..RA_STREAMS).map(|i| self.stream(i)).find(|&s| {
            let (lo, n) = (st.get(s), st.get(s + 1));
            st.get(s + 2) != 0 && addr >= lo && addr <= lo + n * self.readahead
        });
        if let Some(s) = found {
            let lo = st.get(s);
            // Too far ahead of what the stream can keep: read it as a miss, start over at its end.
            if (end - lo).div_ceil(self.readahead) + RA_AHEAD <= RA_CHUNKS as u64 {
                st.set(s + 2, self.tick(st));
                self.extend(cx, s, t, end);
                let lo = st.get(s);
                let first = (addr - lo) / self.readahead;
                let last = (end - 1 - lo) / self.readahead;
                let ready = (first..=last)
                    .map(|c| st.get(s + 3 + c as usize))
                    .max()
                    .unwrap_or(t);
                // The controller takes the command now; the bytes go to the host once
                // their chunk has arrived.
                let xfer = (len as f64 / self.link_bytes_per_ns) as u64;
                let done = self.hit(st, t, len).max(ready + xfer);
                self.consume(st, s, end);
                self.extend(cx, s, t, end);
                return done;
            }
            st.set(s + 2, 0);
        }
        let done = self.backing.submit(cx, t, IoKind::Read, addr, len);
        // Adaptive: a read that continues a recent one starts a stream at its end.
        let cand = (0..RA_CANDIDATES).find(|&i| st.get(self.base + WB_CAND + i) == addr + 1);
        if let Some(i) = cand {
            st.set(self.base + WB_CAND + i, 0);
            let s = (0..RA_STREAMS)
                .map(|i| self.stream(i))
                .min_by_key(|&s| st.get(s + 2))
                .expect("streams");
            st.set(s, end);
            st.set(s + 1, 0);
            st.set(s + 2, self.tick(st));
            self.extend(cx, s, t, end);
        } else {
            let i = (st.get(self.base + WB_TICK) as usize) % RA_CANDIDATES;
            st.set(self.base + WB_CAND + i, end + 1);
            self.tick(st);
        }
        done
    }

    /// Reads ahead until the stream holds `RA_AHEAD` chunks beyond the one `end` falls in.
    fn extend(&self, cx: Ctx, s: usize, t: u64, end: u64) {
        let st = cx.st;
        let lo = st.get(s);
        let want = (end.saturating_sub(lo)).div_ceil(self.readahead) + RA_AHEAD;
        let mut n = st.get(s + 1);
        while n < want.min(RA_CHUNKS as u64) {
            let at = lo + n * self.readahead;
            let ready = self.backing.submit(cx, t, IoKind::Read, at, self.readahead);
            st.set(s + 3 + n as usize, ready);
            n += 1;
        }
        st.set(s + 1, n);
    }

    /// Drops the stream's chunks wholly read (before `end`).
    fn consume(&self, st: St, s: usize, end: u64) {
        let lo = st.get(s);
        let n = st.get(s + 1);
        let done = ((end - lo) / self.readahead).min(n);
        if done == 0 {
            return;
        }
        for i in done..n {
            st.set(s + 3 + (i - done) as usize, st.get(s + 3 + i as usize));
        }
        st.set(s, lo + done * self.readahead);
        st.set(s + 1, n - done);
    }
}
