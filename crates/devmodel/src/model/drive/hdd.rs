//! A hard disk drive: one actuator over a rotating platter, its queue and buffer.

use super::super::base::{Alloc, Ctx};
use crate::params::{device_params, DeviceParams};
use crate::spec::Spec;
use crate::state::St;
use crate::IoKind;

/// Seek time against distance (a share of the full stroke), after Ruemmler & Wilkes: the arm
/// accelerates for short seeks (time grows like the square root of the distance) and coasts for
/// long ones (linear). Fitted so that track-to-track, the average over random pairs, and the full
/// stroke match the datasheet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeekCurve {
    track_ns: f64,
    /// sqrt part: track + a·√d for d < b; linear part c + e·d above.
    a: f64,
    b: f64,
    c: f64,
    e: f64,
}

impl SeekCurve {
    pub fn fit(track_ms: f64, avg_ms: f64, full_ms: f64) -> Result<SeekCurve, String> {
        let (t, full) = (track_ms * 1e6, full_ms * 1e6);
        let span = full - t;
        if !(t < avg_ms * 1e6 && avg_ms * 1e6 < full) {
            return Err(format!("the seek times must grow from track-to-track ({track_ms} ms) over average ({avg_ms} ms) to full stroke ({full_ms} ms)"));
        }
        // With the curve's shape, the mean over random pairs lies between t + span/3 (all linear)
        // and t + 8/15·span (all square root).
        let share = (avg_ms * 1e6 - t) / span;
        if !(0.34..=0.53).contains(&share) {
            return Err(format!(
                "an average seek of {avg_ms} ms cannot come from a seek curve between {track_ms} ms and {full_ms} ms: it must lie between {:.2} and {:.2} ms",
                (t + span * 0.34) / 1e6,
                (t + span * 0.53) / 1e6
            ));
        }
        let make = |b: f64| {
            let a = span / (b.sqrt() / 2.0 + 1.0 / (2.0 * b.sqrt()));
            let e = a / (2.0 * b.sqrt());
            let c = t + a * b.sqrt() / 2.0;
            SeekCurve {
                track_ns: t,
                a,
                b,
                c,
                e,
            }
        };
        let (mut lo, mut hi) = (1e-6, 1.0);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if make(mid).mean_ns() < avg_ms * 1e6 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(make((lo + hi) / 2.0))
    }

    pub fn seek_ns(&self, d: f64) -> f64 {
        if d <= 0.0 {
            0.0
        } else if d < self.b {
            self.track_ns + self.a * d.sqrt()
        } else {
            self.c + self.e * d.min(1.0)
        }
    }

    /// Mean seek over random pairs of positions (distance density 2(1 − d)).
    pub fn mean_ns(&self) -> f64 {
        const STEPS: usize = 4000;
        let mut sum = 0.0;
        for i in 0..STEPS {
            let d = (i as f64 + 0.5) / STEPS as f64;
            sum += self.seek_ns(d) * 2.0 * (1.0 - d);
        }
        sum / STEPS as f64
    }
}

/// One HDD: one actuator over a platter whose angle follows time, a command queue the drive
/// reorders (shortest positioning time first over the requests actually queued), a segmented
/// buffer that reads ahead, and a write cache that is off unless the spec turns it on.
pub(crate) struct Hdd {
    base: usize,
    capacity: f64,
    period_ns: f64,
    inv_period: f64,
    overhead_ns: f64,
    hit_ns: f64,
    write_hit_ns: f64,
    settle_ns: f64,
    queue_max: usize,
    seek: SeekCurve,
    outer_bpns: f64,
    inner_bpns: f64,
    link_bpns: f64,
    write_cache: bool,
    segment_bytes: u64,
    segments: usize,
    /// Write cache on: how far (ns of media work) the acknowledgements may run ahead of the media.
    cache_window_ns: f64,
}

// HDD state words.
const HDD_BUSY: usize = 0;
/// Byte address under the head when the media is next free.
const HDD_HEAD: usize = 1;
/// The platter's angle at time 0 (f64 bits, in revolutions): differs per seed and per drive.
const HDD_PHASE: usize = 2;
const HDD_RING_POS: usize = 3;
const HDD_LAST_WRITE: usize = 4;
/// 1 + the buffer segment the drive is reading ahead into, 0 if none.
const HDD_RA: usize = 5;
/// When that read-ahead began: the end of the media read it follows.
const HDD_RA_FROM: usize = 6;
const HDD_TICK: usize = 7;
const HDD_SEGS: usize = 8;
/// Buffer segments: (lowest cached address, end of the cached bytes, last use). The state holds
/// this many; a drive uses its `cache_segments` of them (DiskSim's validated drives have 1–10).
pub(crate) const HDD_SEGMENTS: usize = 16;
const HDD_RING: usize = HDD_SEGS + 3 * HDD_SEGMENTS;
/// A sector this close (ns) to passing under the head counts as under it: rounding, not a turn.
const ROTATION_SLACK_NS: f64 = 2_000.0;

/// The fractional part, in [0, 1). By an integer cast: `floor` is a library call on CPUs
/// without SSE4.1's rounding instruction, and this runs for every queued request.
#[inline]
fn frac(x: f64) -> f64 {
    let f = x - (x as i64) as f64;
    if f < 0.0 {
        f + 1.0
    } else {
        f
    }
}

/// What positioning toward any queued request needs, worked out once per service.
struct Aim {
    head: u64,
    /// The platter's angle when the positioning starts.
    angle: f64,
    track_bytes: f64,
    inv_stroke: f64,
    settle_ns: f64,
}

/// Where the drive's next service goes and what it costs.
struct Service {
    positioning_ns: f64,
    addr: u64,
}

impl Hdd {
    pub(crate) fn new(spec: &Spec, alloc: &mut Alloc) -> Hdd {
        let Spec::Device { entry, overrides } = spec else {
            unreachable!()
        };
        let DeviceParams::Hdd(p) = device_params(entry, overrides) else {
            unreachable!("an HDD's entry")
        };
        let queue_max = p.queue_max.round().clamp(1.0, 256.0) as usize;
        let cache_bytes = p.cache_mib * 1024.0 * 1024.0;
        let segments = (p.cache_segments.round() as usize).clamp(1, HDD_SEGMENTS);
        let outer_bpns = p.media_outer_mb_s * 1e6 / 1e9;
        let inner_bpns = p.media_inner_mb_s * 1e6 / 1e9;
        Hdd {
            base: alloc.take(HDD_RING + 3 * (queue_max - 1)),
            capacity: p.capacity_gb * 1e9,
            period_ns: 60e9 / p.rpm,
            inv_period: p.rpm / 60e9,
            overhead_ns: p.overhead_us * 1e3,
            hit_ns: p.hit_overhead_us * 1e3,
            write_hit_ns: p.write_hit_overhead_us * 1e3,
            settle_ns: p.write_settle_ms * 1e6,
            queue_max,
            seek: SeekCurve::fit(p.seek_track_ms, p.seek_avg_ms, p.seek_full_ms)
                .expect("checked when parsed"),
            outer_bpns,
            inner_bpns,
            link_bpns: p.link_mb_s * 1e6 / 1e9,
            write_cache: p.write_cache >= 0.5,
            segment_bytes: (cache_bytes / segments as f64) as u64,
            segments,
            cache_window_ns: cache_bytes / 2.0 / ((outer_bpns + inner_bpns) / 2.0),
        }
    }

    fn w(&self, i: usize) -> usize {
        self.base + i
    }

    fn stroke(&self, cx: Ctx) -> f64 {
        (self.capacity * cx.usage).max(1.0)
    }

    /// Revolutions the platter turns while the head reads from address 0 to `a`. The media rate
    /// falls linearly from the outer to the inner edge (zoned recording), so a revolution holds
    /// fewer bytes further in; integrating gives a logarithm. The angle of a sector is the
    /// fractional part, and the time to transfer a range is the difference times the period: the
    /// two agree, so a stream that keeps up with the platter never waits for it.
    fn revs(&self, a: f64, stroke: f64) -> f64 {
        let outer = self.outer_bpns * self.period_ns;
        let inner = self.inner_bpns * self.period_ns;
        let within = a.min(stroke);
        let k = (outer - inner) / stroke;
        let r = if k * stroke <= 1e-9 * outer {
            within / outer
        } else {
            -(-k * within / outer).ln_1p() / k
        };
        r + (a - within).max(0.0) / inner
    }

    /// Media time of `len` bytes from `addr`: at the rate of their middle, which differs from the
    /// exact integral by nanoseconds (well inside `ROTATION_SLACK_NS`) at a fraction of its cost.
    fn transfer_ns(&self, addr: u64, len: u64, stroke: f64) -> f64 {
        len as f64 / self.rate_at(addr + len / 2, stroke)
    }

    fn angle_at(&self, st: St, t: f64) -> f64 {
        frac(t * self.inv_period + f64::from_bits(st.get(self.w(HDD_PHASE))))
    }

    /// Media bytes per ns under address `a`.
    fn rate_at(&self, a: u64, stroke: f64) -> f64 {
        let x = (a as f64 / stroke).min(1.0);
        self.outer_bpns - (self.outer_bpns - self.inner_bpns) * x
    }

    /// Seek, settle and rotation from where `aim` starts to the sector at `addr` (at `angle`).
    #[inline]
    fn positioning_ns(&self, aim: &Aim, addr: u64, angle: f64) -> f64 {
        let dist = aim.head.abs_diff(addr) as f64;
        // Within one track's bytes the head stays on its cylinder: no seek.
        let seek = if dist < aim.track_bytes {
            0.0
        } else {
            self.seek.seek_ns((dist * aim.inv_stroke).min(1.0)) + aim.settle_ns
        };
        let wait = frac(angle - aim.angle - seek * self.inv_period) * self.period_ns;
        seek + if wait > self.period_ns - ROTATION_SLACK_NS {
            0.0
        } else {
            wait
        }
    }

    pub(crate) fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let st = cx.st;
        match kind {
            // With the cache off every write is on the media when it completes; with it on the
            // flush waits for the media. Either way it is a command of its own.
            IoKind::Flush => (t + self.hit_ns as u64).max(st.get(self.w(HDD_LAST_WRITE))),
            IoKind::Read => self
                .buffered_read(cx, t, addr, len)
                .unwrap_or_else(|| self.media(cx, t, kind, addr, len)),
            IoKind::Write => {
                let on_media = self.media(cx, t, kind, addr, len);
                if self.write_cache {
                    // A write the buffer takes is a command of its own kind: drives spend longer
                    // on it than on a read hit (DiskSim's extracted drives: 0.1–1.0 ms against
                    // 0.07–0.37), so it has its own overhead.
                    let acked = t + (self.write_hit_ns + len as f64 / self.link_bpns) as u64;
                    acked.max(on_media.saturating_sub(self.cache_window_ns as u64))
                } else {
                    on_media
                }
            }
        }
    }

    fn seg(&self, i: usize) -> usize {
        self.w(HDD_SEGS + 3 * i)
    }

    fn touch(&self, st: St, i: usize) {
        let tick = st.get(self.w(HDD_TICK)) + 1;
        st.set(self.w(HDD_TICK), tick);
        st.set(self.seg(i) + 2, tick);
    }

    /// The bytes past the segment's end that the drive has read ahead by `t`, if it is idle.
    fn read_ahead_bytes(&self, st: St, t: u64, hi: u64, stroke: f64) -> u64 {
        let from = st.get(self.w(HDD_RA_FROM));
        let ran = t.saturating_sub(from) as f64 * self.rate_at(hi, stroke);
        (ran as u64).min(self.segment_bytes)
    }

    /// A read served from the buffer: cached earlier, read ahead since, or coming off the
    /// platter now as the continuation of the stream the drive is reading ahead on.
    fn buffered_read(&self, cx: Ctx, t: u64, addr: u64, len: u64) -> Option<u64> {
        let st = cx.st;
        let stroke = self.stroke(cx);
        let end = addr + len;
        let from_buffer = t + (self.hit_ns + len as f64 / self.link_bpns) as u64;
        let ra = st.get(self.w(HDD_RA)) as usize;
        if ra > 0 {
            let s = self.seg(ra - 1);
            let (lo, hi) = (st.get(s), st.get(s + 1));
            let from = st.get(self.w(HDD_RA_FROM));
            let ahead = self.read_ahead_bytes(st, t, hi, stroke);
            // Past a full segment the read-ahead has stopped; a later read there is a media access.
            let reachable = end <= hi + self.segment_bytes || t <= from;
            if lo <= addr && addr <= hi + ahead && reachable {
                let ready = from + self.transfer_ns(hi, end.saturating_sub(hi), stroke) as u64;
                if end > hi {
                    st.set(s + 1, end);
                    st.set(s, lo.max(end.saturating_sub(self.segment_bytes)));
                    st.set(self.w(HDD_RA_FROM), ready);
                    st.set(self.w(HDD_HEAD), end);
                    let busy = self.w(HDD_BUSY);
                    st.set(busy, st.get(busy).max(ready));
                }
                self.touch(st, ra - 1);
                return Some(from_buffer.max(ready));
            }
        }
        let hit = (0..self.segments).find(|&i| {
            let s = self.seg(i);
            st.get(s) <= addr && end <= st.get(s + 1)
        })?;
        self.touch(st, hit);
        Some(from_buffer)
    }

    /// Stops the read-ahead at `start`, when the media turns to another command.
    fn stop_read_ahead(&self, cx: Ctx, start: u64) {
        let st = cx.st;
        let ra = st.get(self.w(HDD_RA)) as usize;
        if ra == 0 {
            return;
        }
        let s = self.seg(ra - 1);
        let hi = st.get(s + 1);
        let ahead = self.read_ahead_bytes(st, start, hi, self.stroke(cx));
        st.set(s + 1, hi + ahead);
        st.set(
            s,
            st.get(s)
                .max((hi + ahead).saturating_sub(self.segment_bytes)),
        );
        st.set(self.w(HDD_HEAD), hi + ahead);
        st.set(self.w(HDD_RA), 0);
    }

    /// One command served from the media.
    fn media(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let st = cx.st;
        let stroke = self.stroke(cx);
        let write = matches!(kind, IoKind::Write);
        let busy = st.get(self.w(HDD_BUSY));
        let start = t.max(busy);
        self.stop_read_ahead(cx, start);
        // A command that waits in the queue is decoded while the drive serves the one before.
        let s = start as f64 + if busy > t { 0.0 } else { self.overhead_ns };
        let head = st.get(self.w(HDD_HEAD));
        let angle = frac(self.revs(addr as f64, stroke));
        let aim = Aim {
            head,
            angle: self.angle_at(st, s),
            track_bytes: self.rate_at(head, stroke) * self.period_ns,
            inv_stroke: 1.0 / stroke,
            settle_ns: if write { self.settle_ns } else { 0.0 },
        };
        // Shortest positioning time first over the commands queued at the drive: this one and
        // the others still in flight. Their positions are the real ones, so the gain depends on
        // the span and the depth as on a drive. (Completion times are given out in arrival
        // order, so each service takes the best of the queue and the positions stand as samples
        // of where the queued requests are.)
        let mut best = Service {
            positioning_ns: self.positioning_ns(&aim, addr, angle),
            addr,
        };
        let others = self.queue_max - 1;
        // An idle drive has nothing else queued: every earlier command is done by `busy`.
        let queued = if busy > t { others } else { 0 };
        for i in 0..queued {
            if best.positioning_ns == 0.0 {
                break; // nothing beats a request the head is already at
            }
            let e = self.w(HDD_RING + 3 * i);
            if st.get(e) <= t {
                continue;
            }
            let other = st.get(e + 1);
            let p = self.positioning_ns(&aim, other, f64::from_bits(st.get(e + 2)));
            if p < best.positioning_ns {
                best = Service {
                    positioning_ns: p,
                    addr: other,
                };
            }
        }
        let done =
            (s + best.positioning_ns + self.transfer_ns(best.addr, len, stroke) + 0.5) as u64;
        st.set(self.w(HDD_BUSY), done);
        st.set(self.w(HDD_HEAD), best.addr + len);
        if others > 0 {
            // The ring keeps the newest queue_max − 1 commands: with this one, what the drive holds.
            let pos = st.get(self.w(HDD_RING_POS)) as usize % others;
            let e = self.w(HDD_RING + 3 * pos);
            st.set(e, done);
            st.set(e + 1, addr);
            st.set(e + 2, angle.to_bits());
            st.set(self.w(HDD_RING_POS), ((pos + 1) % others) as u64);
        }
        let end = addr + len;
        if write {
            let lw = self.w(HDD_LAST_WRITE);
            st.set(lw, st.get(lw).max(done));
            // The buffer's copies of what was overwritten are dropped.
            for i in 0..self.segments {
                let g = self.seg(i);
                if st.get(g) < end && addr < st.get(g + 1) {
                    st.set(g, 0);
                    st.set(g + 1, 0);
                }
            }
        } else {
            // The data stays in a segment; continuing a stream keeps its segment, else the least
            // recently used one is taken.
            let (mut seg, mut oldest) = (0, u64::MAX);
            for i in 0..self.segments {
                let g = self.seg(i);
                if st.get(g + 1) == addr && addr > 0 {
                    seg = i;
                    break;
                }
                let used = st.get(g + 2);
                if used < oldest {
                    (seg, oldest) = (i, used);
                }
            }
            let g = self.seg(seg);
            let continues = st.get(g + 1) == addr && addr > 0;
            let lo = if continues {
                st.get(g).max(end.saturating_sub(self.segment_bytes))
            } else {
                addr
            };
            st.set(g, lo);
            st.set(g + 1, end);
            self.touch(st, seg);
            // The drive reads ahead from where the head stops, if the head stops at this read. A
            // stream it recognises (this read continues a segment) gets a minimum prefetch before
            // the head turns to another command, so interleaved streams each keep their own.
            if best.addr == addr && self.segment_bytes > 0 {
                let mut from = done;
                if continues {
                    let prefetch = self.segment_bytes / 4;
                    from += self.transfer_ns(end, prefetch, stroke) as u64;
                    st.set(g + 1, end + prefetch);
                    st.set(
                        g,
                        lo.max((end + prefetch).saturating_sub(self.segment_bytes)),
                    );
                    st.set(self.w(HDD_BUSY), from);
                    st.set(self.w(HDD_HEAD), end + prefetch);
                }
                st.set(self.w(HDD_RA), seg as u64 + 1);
                st.set(self.w(HDD_RA_FROM), from);
            }
        }
        // The bytes also cross the host interface: a read's from its first sector on, as they
        // come off the platter; a write's before the head can write them. Whichever is slower
        // bounds the command. On every catalogue drive the interface outruns the media, so this
        // changes nothing there; on the 1990s drives of DiskSim's validation traces the SCSI
        // transfer (about 0.1 ms a sector) is most of a short read's time.
        let bus = len as f64 / self.link_bpns;
        let bus_done = if write {
            s + bus
        } else {
            s + best.positioning_ns + bus
        };
        done.max((bus_done + 0.5) as u64)
    }

    pub(crate) fn idle_at(&self, st: St) -> u64 {
        st.get(self.base + HDD_BUSY)
    }

    /// Mean service time of a random read of `len` bytes at queue depth 1, from the parameters.
    pub fn expected_random_read_ns(&self, len: u64) -> f64 {
        let mean_rate = (self.outer_bpns + self.inner_bpns) / 2.0;
        self.overhead_ns + self.seek.mean_ns() + self.period_ns / 2.0 + len as f64 / mean_rate
    }

    pub(crate) fn init(&self, st: St, seed: u64) {
        st.set(
            self.w(HDD_PHASE),
            ((seed >> 11) as f64 / (1u64 << 53) as f64).to_bits(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seek_curve_matches_its_three_datasheet_points() {
        let c = SeekCurve::fit(0.2, 3.4, 6.6).unwrap();
        assert!((c.mean_ns() / 1e6 - 3.4).abs() < 0.01, "{}", c.mean_ns());
        assert!((c.seek_ns(1.0) / 1e6 - 6.6).abs() < 0.01);
        assert!((c.seek_ns(1e-9) / 1e6 - 0.2).abs() < 0.01);
        // Short seeks grow like √d, long ones linearly: the curve is concave and increasing.
        let mut last = 0.0;
        for i in 1..=100 {
            let s = c.seek_ns(i as f64 / 100.0);
            assert!(s > last);
            last = s;
        }
        assert!(c.seek_ns(0.04) - c.seek_ns(0.01) > c.seek_ns(0.94) - c.seek_ns(0.91));
        assert!(SeekCurve::fit(1.0, 9.5, 10.0).is_err());
        assert!(SeekCurve::fit(1.0, 2.0, 10.0).is_err());
    }
}
