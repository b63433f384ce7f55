//! The device models. A spec compiles into a tree of nodes; each node owns a few words of state
//! (busy-until times, head position, cache tables) in the emulator's region. `submit` turns one I/O
//! (time, kind, address, length) into its completion time and reserves what the I/O occupies, so
//! queueing and saturation come out of the model itself.
//!
//! Everything is deterministic for a seed and a sequence of submits.

use crate::catalogue::DeviceKind;
use crate::spec::{param, RaidLevel, Spec};
use crate::state::St;
use crate::IoKind;

/// Hands out state words at compile time.
pub(crate) struct Alloc {
    pub next: usize,
}

impl Alloc {
    fn take(&mut self, words: usize) -> usize {
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

pub(crate) enum Node {
    Host,
    Hdd(Box<Hdd>),
    Flash(Box<Flash>),
    Ram(Ram),
    Raid(Box<Raid>),
    WbCache(Box<WriteBack>),
    ReadCache(Box<ReadCache>),
    PageCache(Box<PageCache>),
}

/// Checks a catalogue device's parameters (after overrides) for values no model can use.
pub(crate) fn check_device(spec: &Spec) -> Result<(), String> {
    let Spec::Device { entry, overrides } = spec else {
        return Ok(());
    };
    let v = |k: &str| param(entry, overrides, k);
    let positive = |keys: &[&str]| -> Result<(), String> {
        for k in keys {
            if v(k) <= 0.0 {
                return Err(format!("{} needs {k} > 0", entry.name));
            }
        }
        Ok(())
    };
    match entry.kind {
        DeviceKind::Host => Ok(()),
        DeviceKind::Hdd => {
            positive(&[
                "capacity_gb",
                "rpm",
                "seek_track_ms",
                "seek_avg_ms",
                "seek_full_ms",
                "media_outer_mb_s",
                "media_inner_mb_s",
                "queue_max",
                "link_mb_s",
            ])?;
            if v("write_cache") != 0.0 && v("write_cache") != 1.0 {
                return Err(format!("{}: write_cache is on or off (1 or 0)", entry.name));
            }
            if v("media_inner_mb_s") > v("media_outer_mb_s") {
                return Err(format!("{}: media_inner_mb_s must not exceed media_outer_mb_s (the outer zone is the fastest)", entry.name));
            }
            if v("queue_max") > 256.0 {
                return Err(format!("{}: queue_max is at most 256", entry.name));
            }
            if !(1.0..=HDD_SEGMENTS as f64).contains(&v("cache_segments").round()) {
                return Err(format!(
                    "{}: cache_segments is 1 to {HDD_SEGMENTS}",
                    entry.name
                ));
            }
            SeekCurve::fit(v("seek_track_ms"), v("seek_avg_ms"), v("seek_full_ms")).map(|_| ())
        }
        DeviceKind::Flash => {
            positive(&[
                "capacity_gb",
                "channels",
                "dies_per_channel",
                "page_kib",
                "read_us",
                "program_us",
                "waf_random",
                "channel_mb_s",
                "link_mb_s",
                "cmd_occupancy_us",
                "controllers",
            ])?;
            if v("channels") * v("dies_per_channel") > 1024.0 || v("controllers") > 64.0 {
                return Err(format!(
                    "{}: at most 1024 dies and 64 controllers are modelled",
                    entry.name
                ));
            }
            Ok(())
        }
        DeviceKind::Ram => {
            positive(&["capacity_gb", "bandwidth_mb_s", "units"])?;
            if v("units") > 64.0 {
                return Err(format!("{}: at most 64 units", entry.name));
            }
            Ok(())
        }
    }
}

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
const HDD_SEGMENTS: usize = 16;
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
    fn new(spec: &Spec, alloc: &mut Alloc) -> Hdd {
        let Spec::Device { entry, overrides } = spec else {
            unreachable!()
        };
        let v = |k: &str| param(entry, overrides, k);
        let queue_max = v("queue_max").round().clamp(1.0, 256.0) as usize;
        let cache_bytes = v("cache_mib") * 1024.0 * 1024.0;
        let segments = (v("cache_segments").round() as usize).clamp(1, HDD_SEGMENTS);
        let outer_bpns = v("media_outer_mb_s") * 1e6 / 1e9;
        let inner_bpns = v("media_inner_mb_s") * 1e6 / 1e9;
        Hdd {
            base: alloc.take(HDD_RING + 3 * (queue_max - 1)),
            capacity: v("capacity_gb") * 1e9,
            period_ns: 60e9 / v("rpm"),
            inv_period: v("rpm") / 60e9,
            overhead_ns: v("overhead_us") * 1e3,
            hit_ns: v("hit_overhead_us") * 1e3,
            write_hit_ns: v("write_hit_overhead_us") * 1e3,
            settle_ns: v("write_settle_ms") * 1e6,
            queue_max,
            seek: SeekCurve::fit(v("seek_track_ms"), v("seek_avg_ms"), v("seek_full_ms"))
                .expect("checked when parsed"),
            outer_bpns,
            inner_bpns,
            link_bpns: v("link_mb_s") * 1e6 / 1e9,
            write_cache: v("write_cache") >= 0.5,
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

    fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
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

    fn idle_at(&self, st: St) -> u64 {
        st.get(self.base + HDD_BUSY)
    }

    /// Mean service time of a random read of `len` bytes at queue depth 1, from the parameters.
    pub fn expected_random_read_ns(&self, len: u64) -> f64 {
        let mean_rate = (self.outer_bpns + self.inner_bpns) / 2.0;
        self.overhead_ns + self.seek.mean_ns() + self.period_ns / 2.0 + len as f64 / mean_rate
    }

    fn init(&self, st: St, seed: u64) {
        st.set(
            self.w(HDD_PHASE),
            ((seed >> 11) as f64 / (1u64 << 53) as f64).to_bits(),
        );
    }
}

/// A flash device: controllers, channels × dies, one host link and a write buffer.
pub(crate) struct Flash {
    ctrl: usize,
    dies: usize,
    chans: usize,
    link: usize,
    misc: usize,
    reads: Streams,
    writes: Streams,
    n_ctrl: usize,
    n_dies: usize,
    n_chans: usize,
    page: u64,
    read_ns: f64,
    program_ns: f64,
    waf_random: f64,
    chan_bpns: f64,
    link_bpns: f64,
    read_overhead_ns: f64,
    occupancy_ns: f64,
    /// Controller time per write command (`write_occupancy_us`; the read's when not given).
    write_occupancy_ns: f64,
    buffer_window_ns: f64,
    write_ack_ns: f64,
    /// A flush's own time, after the buffer it must drain (`flush_us`).
    flush_ns: f64,
    protected: bool,
    half_program_ns: f64,
    /// Bytes per ns a read-ahead stream can deliver: every die reading pages, bounded by the
    /// channels and the link.
    seq_read_bpns: f64,
}

// Flash misc words.
const FL_LAST_PROGRAM: usize = 0;
/// Sequential streams a controller follows, for reads and for writes each.
const FL_STREAMS: usize = 8;
/// Recent accesses that continued no stream, each of which a next access may continue.
const FL_CANDIDATES: usize = 32;

/// The sequential streams a controller follows, detected as firmware detects them: an access
/// that continues the end of a recent one. Each stream and candidate is two words (next address,
/// time of the last access); accesses that continue nothing only enter a ring of candidates, so
/// random I/O interleaved with a stream (other threads' I/O, more of it when more threads run at
/// once) does not make the controller forget the stream — the order of independent threads' I/O
/// changes little of what the device does.
#[derive(Clone, Copy)]
struct Streams {
    base: usize,
}

impl Streams {
    const WORDS: usize = 2 * FL_STREAMS + 2 * FL_CANDIDATES + 1;

    fn new(alloc: &mut Alloc) -> Streams {
        Streams {
            base: alloc.take(Self::WORDS),
        }
    }

    fn stream(&self, i: usize) -> usize {
        self.base + 2 * i
    }

    fn candidate(&self, i: usize) -> usize {
        self.base + 2 * FL_STREAMS + 2 * i
    }

    /// The stream `addr` continues (a candidate it continues becomes one, in place of the
    /// stream used longest ago): the index of its words (next address, time).
    fn find(&self, st: St, addr: u64) -> Option<usize> {
        if addr == 0 {
            return None;
        }
        if let Some(s) = (0..FL_STREAMS)
            .map(|i| self.stream(i))
            .find(|&s| st.get(s) == addr)
        {
            return Some(s);
        }
        let c = (0..FL_CANDIDATES)
            .map(|i| self.candidate(i))
            .find(|&c| st.get(c) == addr)?;
        let s = (0..FL_STREAMS)
            .map(|i| self.stream(i))
            .min_by_key(|&s| st.get(s + 1))
            .expect("streams");
        st.set(s, st.get(c));
        st.set(s + 1, st.get(c + 1));
        st.set(c, 0);
        Some(s)
    }

    /// An access that continued no stream: a candidate, replacing the oldest.
    fn note(&self, st: St, next: u64, t: u64) {
        let cursor = self.base + Self::WORDS - 1;
        let i = st.get(cursor) as usize % FL_CANDIDATES;
        st.set(self.candidate(i), next);
        st.set(self.candidate(i) + 1, t);
        st.set(cursor, (i + 1) as u64);
    }
}

fn earliest(st: St, base: usize, n: usize) -> usize {
    (0..n).min_by_key(|&i| st.get(base + i)).unwrap_or(0)
}

impl Flash {
    fn new(spec: &Spec, alloc: &mut Alloc) -> Flash {
        let Spec::Device { entry, overrides } = spec else {
            unreachable!()
        };
        let v = |k: &str| param(entry, overrides, k);
        let n_chans = v("channels").round().max(1.0) as usize;
        let n_dies = n_chans * v("dies_per_channel").round().max(1.0) as usize;
        let n_ctrl = v("controllers").round().max(1.0) as usize;
        let page = (v("page_kib") * 1024.0).round().max(512.0) as u64;
        let program_ns = v("program_us") * 1e3;
        // Bytes the dies program per ns; the buffer hides a backlog of this many ns of programming.
        let program_bpns = n_dies as f64 * page as f64 / program_ns;
        let buffer_bytes = v("write_buffer_mib") * 1024.0 * 1024.0;
        Flash {
            ctrl: alloc.take(n_ctrl),
            dies: alloc.take(2 * n_dies),
            chans: alloc.take(n_chans),
            link: alloc.take(1),
            misc: alloc.take(1),
            reads: Streams::new(alloc),
            writes: Streams::new(alloc),
            n_ctrl,
            n_dies,
            n_chans,
            page,
            read_ns: v("read_us") * 1e3,
            program_ns,
            waf_random: v("waf_random").max(1.0),
            chan_bpns: v("channel_mb_s") * 1e6 / 1e9,
            link_bpns: v("link_mb_s") * 1e6 / 1e9,
            read_overhead_ns: v("read_overhead_us") * 1e3,
            occupancy_ns: v("cmd_occupancy_us") * 1e3,
            write_occupancy_ns: if v("write_occupancy_us") > 0.0 {
                v("write_occupancy_us") * 1e3
            } else {
                v("cmd_occupancy_us") * 1e3
            },
            buffer_window_ns: buffer_bytes / program_bpns,
            write_ack_ns: v("write_ack_us") * 1e3,
            flush_ns: v("flush_us") * 1e3,
            protected: v("power_loss_protected") >= 0.5,
            half_program_ns: program_ns * v("waf_random").max(1.0) / 2.0,
            seq_read_bpns: (n_dies as f64 * page as f64
                / (v("read_us") * 1e3 + page as f64 / (v("channel_mb_s") * 1e-3)))
                .min(n_chans as f64 * v("channel_mb_s") * 1e-3)
                .min(v("link_mb_s") * 1e-3),
        }
    }

    /// The controller accepts the command: it is pipelined, so its occupancy bounds the rate of
    /// commands but only queueing behind others adds to the latency.
    fn command(&self, st: St, t: u64) -> u64 {
        self.command_for(st, t, self.occupancy_ns)
    }

    /// [`Flash::command`] with the controller time `occupancy_ns` (a write's may differ).
    fn command_for(&self, st: St, t: u64, occupancy_ns: f64) -> u64 {
        let c = self.ctrl + earliest(st, self.ctrl, self.n_ctrl);
        let start = t.max(st.get(c));
        st.set(c, start + occupancy_ns as u64);
        start
    }

    fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let st = cx.st;
        let len = len.max(1);
        match kind {
            IoKind::Flush => {
                let start = self.command(st, t);
                // A protected or unbuffered drive has nothing to drain; an unprotected one waits
                // for the programs its buffer holds. Then the flush's own time.
                if self.protected || self.buffer_window_ns == 0.0 {
                    start + (self.flush_ns as u64).max(1_000)
                } else {
                    start.max(st.get(self.misc + FL_LAST_PROGRAM)) + self.flush_ns as u64
                }
            }
            IoKind::Read => {
                if let Some(s) = self.reads.find(st, addr) {
                    return self.streamed_read(st, t, s, len);
                }
                let start = self.command(st, t) + self.read_overhead_ns as u64;
                let mut ready = start;
                let first = addr / self.page;
                let last = (addr + len - 1) / self.page;
                for p in first..=last {
                    let bytes =
                        (((p + 1) * self.page).min(addr + len) - (p * self.page).max(addr)) as f64;
                    let die = (p % self.n_dies as u64) as usize;
                    let ch = die % self.n_chans;
                    let mut die_start = start.max(st.get(self.dies + die));
                    // Reads go before queued programs but wait for the one in progress: on
                    // average half of one.
                    let programming = st.get(self.prog_horizon(die));
                    if programming > die_start {
                        die_start += (programming - die_start).min(self.half_program_ns as u64);
                    }
                    let sensed = die_start + self.read_ns as u64;
                    let xfer_start = sensed.max(st.get(self.chans + ch));
                    let xfer_end = xfer_start + (bytes / self.chan_bpns) as u64;
                    st.set(self.chans + ch, xfer_end);
                    st.set(self.dies + die, xfer_end);
                    ready = ready.max(xfer_end);
                }
                let link_start = ready.max(st.get(self.link));
                let done = link_start + (len as f64 / self.link_bpns) as u64;
                st.set(self.link, done);
                // Any read may be the start of a stream.
                self.reads.note(st, addr + len, ready);
                done
            }
            IoKind::Write => {
                let start = self.command_for(st, t, self.write_occupancy_ns);
                let link_start = start.max(st.get(self.link));
                let received = link_start + (len as f64 / self.link_bpns) as u64;
                st.set(self.link, received);
                let sequential = match self.writes.find(st, addr) {
                    Some(s) => {
                        st.set(s, addr + len);
                        st.set(s + 1, t);
                        true
                    }
                    None => {
                        self.writes.note(st, addr + len, t);
                        false
                    }
                };
                let factor = if sequential { 1.0 } else { self.waf_random };
                let mut programmed = received;
                let first = addr / self.page;
                let last = (addr + len - 1) / self.page;
                for p in first..=last {
                    let bytes =
                        (((p + 1) * self.page).min(addr + len) - (p * self.page).max(addr)) as f64;
                    // The flash translation layer writes out of place, to whichever die is free first.
                    let die = earliest(st, self.dies + self.n_dies, self.n_dies);
                    let ch = die % self.n_chans;
                    let xfer_start = received.max(st.get(self.chans + ch));
                    let xfer_end = xfer_start + (bytes / self.chan_bpns) as u64;
                    st.set(self.chans + ch, xfer_end);
                    // Writes are packed into pages, so programming costs in proportion to the bytes.
                    let prog_start = xfer_end
                        .max(st.get(self.prog_horizon(die)))
                        .max(st.get(self.dies + die));
                    let prog_end =
                        prog_start + (self.program_ns * factor * bytes / self.page as f64) as u64;
                    st.set(self.prog_horizon(die), prog_end);
                    programmed = programmed.max(prog_end);
                }
                let lp = self.misc + FL_LAST_PROGRAM;
                st.set(lp, st.get(lp).max(programmed));
                if self.buffer_window_ns > 0.0 {
                    // The buffer acknowledges at once while the backlog of programming it holds fits.
                    let acked = received + self.write_ack_ns as u64;
                    acked.max(programmed.saturating_sub(self.buffer_window_ns as u64))
                } else {
                    programmed
                }
            }
        }
    }

    /// A read that continues a stream the controller follows. Having seen the stream, the
    /// controller reads ahead: the pages come off the dies at the streaming rate while the host
    /// consumes the ones before, so the read pays neither the firmware's lookup nor the array
    /// read on its own path — only the command and the link, unless it outruns the read-ahead.
    /// (SSDs of 2010–2012 read sequentially at QD 1 several times faster than at random.)
    fn streamed_read(&self, st: St, t: u64, s: usize, len: u64) -> u64 {
        let addr = st.get(s);
        let start = self.command(st, t);
        let ready = start.max(st.get(s + 1) + (len as f64 / self.seq_read_bpns) as u64);
        let link_start = (ready + self.occupancy_ns as u64).max(st.get(self.link));
        let done = link_start + (len as f64 / self.link_bpns) as u64;
        st.set(self.link, done);
        st.set(s, addr + len);
        st.set(s + 1, ready);
        done
    }

    fn idle_at(&self, st: St) -> u64 {
        st.get(self.link)
            .max(st.get(self.ctrl + earliest(st, self.ctrl, self.n_ctrl)))
    }

    /// The word holding when die `die` finishes the programs queued on it.
    fn prog_horizon(&self, die: usize) -> usize {
        self.dies + self.n_dies + die
    }
}

/// Memory: a fixed latency and a copy bandwidth per unit.
pub(crate) struct Ram {
    units: usize,
    n: usize,
    latency_ns: f64,
    bpns: f64,
}

impl Ram {
    fn new(spec: &Spec, alloc: &mut Alloc) -> Ram {
        let Spec::Device { entry, overrides } = spec else {
            unreachable!()
        };
        let v = |k: &str| param(entry, overrides, k);
        let n = v("units").round().clamp(1.0, 64.0) as usize;
        Ram {
            units: alloc.take(n),
            n,
            latency_ns: v("latency_us") * 1e3,
            bpns: v("bandwidth_mb_s") * 1e6 / 1e9,
        }
    }

    fn submit(&self, st: St, t: u64, kind: IoKind, len: u64) -> u64 {
        if let IoKind::Flush = kind {
            return t;
        }
        let u = self.units + earliest(st, self.units, self.n);
        let start = t.max(st.get(u));
        let done = start + (self.latency_ns + len as f64 / self.bpns) as u64;
        st.set(u, done);
        done
    }

    fn idle_at(&self, st: St) -> u64 {
        st.get(self.units + earliest(st, self.units, self.n))
    }
}

/// A RAID set of identical members.
pub(crate) struct Raid {
    level: RaidLevel,
    members: Vec<Node>,
    stripe: u64,
}

/// One piece of an I/O on one member.
#[derive(Clone, Copy, Debug)]
struct Part {
    member: usize,
    addr: u64,
    len: u64,
    /// raid5: the stripe row and the parity member of that row.
    row: u64,
    parity: usize,
}

impl Raid {
    /// Splits [addr, addr+len) into pieces per data chunk; `data_members` chunks per stripe row.
    fn split(
        &self,
        addr: u64,
        len: u64,
        data_members: u64,
        mut place: impl FnMut(u64) -> (usize, usize),
    ) -> Vec<Part> {
        let mut parts = Vec::new();
        let mut at = addr;
        let end = addr + len.max(1);
        while at < end {
            let chunk = at / self.stripe;
            let within = at % self.stripe;
            let n = (self.stripe - within).min(end - at);
            let row = chunk / data_members;
            let (member, parity) = place(chunk);
            parts.push(Part {
                member,
                addr: row * self.stripe + within,
                len: n,
                row,
                parity,
            });
            at += n;
        }
        parts
    }

    fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let n = self.members.len();
        if let IoKind::Flush = kind {
            return self
                .members
                .iter()
                .map(|m| m.submit(cx, t, kind, 0, 0))
                .max()
                .unwrap_or(t);
        }
        match self.level {
            RaidLevel::Raid0 => self
                .split(addr, len, n as u64, |c| ((c % n as u64) as usize, 0))
                .iter()
                .map(|p| self.members[p.member].submit(cx, t, kind, p.addr, p.len))
                .max()
                .unwrap_or(t),
            RaidLevel::Raid1 => self.mirror(cx, t, kind, &(0..n).collect::<Vec<_>>(), addr, len),
            RaidLevel::Raid10 => {
                let pairs = (n / 2) as u64;
                self.split(addr, len, pairs, |c| ((c % pairs) as usize, 0))
                    .iter()
                    .map(|p| {
                        self.mirror(
                            cx,
                            t,
                            kind,
                            &[2 * p.member, 2 * p.member + 1],
                            p.addr,
                            p.len,
                        )
                    })
                    .max()
                    .unwrap_or(t)
            }
            RaidLevel::Raid5 => self.raid5(cx, t, kind, addr, len),
        }
    }

    /// Reads go to the mirror that is free first; writes go to all.
    fn mirror(&self, cx: Ctx, t: u64, kind: IoKind, set: &[usize], addr: u64, len: u64) -> u64 {
        match kind {
            IoKind::Read => {
                let m = *set
                    .iter()
                    .min_by_key(|&&m| self.members[m].idle_at(cx.st))
                    .expect("mirror sets are not empty");
                self.members[m].submit(cx, t, kind, addr, len)
            }
            _ => set
                .iter()
                .map(|&m| self.members[m].submit(cx, t, kind, addr, len))
                .max()
                .unwrap_or(t),
        }
    }

    fn raid5(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let n = self.members.len();
        let data = (n - 1) as u64;
        // Left-symmetric layout: parity rotates from the last member to the first, data follows it.
        let parts = self.split(addr, len, data, |c| {
            let row = c / data;
            let parity = (n - 1) - (row % n as u64) as usize;
            let member = (parity + 1 + (c % data) as usize) % n;
            (member, parity)
        });
        if let IoKind::Read = kind {
            return parts
                .iter()
                .map(|p| self.members[p.member].submit(cx, t, kind, p.addr, p.len))
                .max()
                .unwrap_or(t);
        }
        let mut done = t;
        let mut i = 0;
        while i < parts.len() {
            let row = parts[i].row;
            let j = parts[i..]
                .iter()
                .position(|p| p.row != row)
                .map_or(parts.len(), |k| i + k);
            let in_row = &parts[i..j];
            let parity = in_row[0].parity;
            let full_row =
                in_row.len() as u64 == data && in_row.iter().all(|p| p.len == self.stripe);
            let lo = in_row.iter().map(|p| p.addr).min().unwrap_or(0);
            let hi = in_row.iter().map(|p| p.addr + p.len).max().unwrap_or(0);
            // A small write reads the old data and the old parity, then writes both back. Each
            // member does its read before its write (one queue per member); the write is done when
            // the reads it depends on and the writes are. Submitting the writes at the reads'
            // completion instead would reserve the members' future and stall everything after it.
            let mut reads = t;
            if !full_row {
                for p in in_row {
                    reads = reads.max(self.members[p.member].submit(
                        cx,
                        t,
                        IoKind::Read,
                        p.addr,
                        p.len,
                    ));
                }
                reads = reads.max(self.members[parity].submit(cx, t, IoKind::Read, lo, hi - lo));
            }
            done = done.max(reads);
            for p in in_row {
                done = done.max(self.members[p.member].submit(cx, t, IoKind::Write, p.addr, p.len));
            }
            done = done.max(self.members[parity].submit(cx, t, IoKind::Write, lo, hi - lo));
            i = j;
        }
        done
    }

    fn idle_at(&self, st: St) -> u64 {
        self.members
            .iter()
            .map(|m| m.idle_at(st))
            .max()
            .unwrap_or(0)
    }
}

/// A set-associative table of blocks with LRU replacement, in the state region.
pub(crate) struct Table {
    base: usize,
    sets: u64,
    ways: u64,
    pub block: u64,
}

const TABLE_WAYS: u64 = 8;
/// Entries of a table; larger caches get larger blocks so the state stays ≤ 16 MiB.
const TABLE_ENTRIES_MAX: u64 = 1 << 20;
const META_CACHED: u64 = 1 << 63;
const META_COUNT_SHIFT: u32 = 56;
const META_TICK_MASK: u64 = (1 << 56) - 1;

impl Table {
    fn new(alloc: &mut Alloc, entries_wanted: u64, mut block: u64) -> Table {
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

    fn set_of(&self, block_no: u64) -> u64 {
        (block_no.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17) % self.sets
    }

    fn slot(&self, set: u64, way: u64) -> usize {
        self.base + 1 + ((set * self.ways + way) * 2) as usize
    }

    fn tick(&self, st: St) -> u64 {
        let t = st.get(self.base) + 1;
        st.set(self.base, t);
        t & META_TICK_MASK
    }

    /// The slot holding `block_no`, touched as most recently used.
    fn find(&self, st: St, block_no: u64) -> Option<usize> {
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

    fn is_cached(&self, st: St, slot: usize) -> bool {
        st.get(slot + 1) & META_CACHED != 0
    }

    fn count(&self, st: St, slot: usize) -> u64 {
        (st.get(slot + 1) >> META_COUNT_SHIFT) & 0x7f
    }

    fn set_meta(&self, st: St, slot: usize, cached: bool, count: u64) {
        let meta = (if cached { META_CACHED } else { 0 })
            | (count.min(0x7f) << META_COUNT_SHIFT)
            | self.tick(st);
        st.set(slot + 1, meta);
    }

    /// Puts `block_no` in its set, replacing the least recently used entry that is not cached if
    /// `keep_cached_max` cached entries are already there, else the least recently used of all.
    fn insert(&self, st: St, block_no: u64, cached: bool, keep_cached_max: u64) -> usize {
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

    fn index_of(&self, slot: usize) -> u64 {
        ((slot - self.base - 1) / 2) as u64
    }
}

/// Dirty data waiting to be written to the backing device, oldest first.
pub(crate) struct DirtyRing {
    base: usize,
    cap: u64,
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
const DESTAGE_MERGE_MAX: u64 = 1 << 20;

impl DirtyRing {
    fn new(alloc: &mut Alloc) -> DirtyRing {
        DirtyRing {
            base: alloc.take(DR_ENTRIES + 2 * DIRTY_RING_CAP as usize),
            cap: DIRTY_RING_CAP,
        }
    }

    fn len(&self, st: St) -> u64 {
        st.get(self.base + DR_TAIL) - st.get(self.base + DR_HEAD)
    }

    fn bytes(&self, st: St) -> u64 {
        st.get(self.base + DR_BYTES)
    }

    fn push(&self, st: St, addr: u64, len: u64) {
        let tail = st.get(self.base + DR_TAIL);
        let e = self.base + DR_ENTRIES + 2 * (tail % self.cap) as usize;
        st.set(e, addr);
        st.set(e + 1, len);
        st.set(self.base + DR_TAIL, tail + 1);
        st.set(self.base + DR_BYTES, self.bytes(st) + len);
    }

    /// The oldest extent, merged with the contiguous ones after it.
    fn pop(&self, st: St) -> Option<(u64, u64)> {
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
    fn destage_idle(&self, cx: Ctx, backing: &Node, t: u64) {
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
    fn destage_until(
        &self,
        cx: Ctx,
        backing: &Node,
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

/// A RAID controller's battery-backed cache (`wbcache`): writes are acknowledged from the cache
/// while the dirty data fits; it is written to the backing device when that is idle, a batch at a
/// time sorted by address with contiguous pieces merged (write coalescing and command reordering),
/// or at once when the cache is full (writers then wait for destaging). With read-ahead, a read
/// that continues the one before starts a stream: the controller reads ahead of it in chunks
/// (`readahead` bytes, a full stripe with `readahead=on`), keeping `RA_AHEAD` chunks in flight,
/// and the stream's reads are served from the cache once their chunk has arrived. Reads are not
/// kept otherwise ("direct I/O"). Cache hits, acknowledged writes and flushes cost the
/// controller's command time (a serial resource) plus their bytes over its host link.
pub(crate) struct WriteBack {
    backing: Node,
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

impl WriteBack {
    fn new(backing: Node, size: u64, readahead: u64, alloc: &mut Alloc) -> WriteBack {
        let c = crate::catalogue::controller_param;
        WriteBack {
            backing,
            ring: DirtyRing::new(alloc),
            size,
            cmd_ns: (c("cmd_us") * 1e3) as u64,
            link_bytes_per_ns: c("link_mb_s") * 1e6 / 1e9,
            readahead,
            base: alloc.take(WB_WORDS),
        }
    }

    fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
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

/// An SSD read cache in front of a slower device: blocks read `PROMOTE_AFTER` times are copied to
/// the cache device; reads of cached blocks go there; writes go through to the backing device (and
/// update a cached copy).
pub(crate) struct ReadCache {
    backing: Node,
    cache: Node,
    table: Table,
    cache_capacity: u64,
    cached_per_set_max: u64,
    /// Two words: reads, and reads served wholly from the cache.
    stats: usize,
}

/// What the read caches of a device did: reads and the reads served from the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CacheStats {
    pub reads: u64,
    pub hits: u64,
}

const READCACHE_BLOCK: u64 = 64 << 10;
const PROMOTE_AFTER: u64 = 2;

impl ReadCache {
    fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
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

/// The operating system's page cache: reads of cached pages cost a memory copy; writes land in
/// memory and are written back when the device is idle or when dirty data passes its limit; a flush
/// writes back everything.
pub(crate) struct PageCache {
    backing: Node,
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

impl PageCache {
    fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
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

impl Node {
    pub fn compile(spec: &Spec, alloc: &mut Alloc) -> Node {
        match spec {
            Spec::Device { entry, .. } => match entry.kind {
                DeviceKind::Host => Node::Host,
                DeviceKind::Hdd => Node::Hdd(Box::new(Hdd::new(spec, alloc))),
                DeviceKind::Flash => Node::Flash(Box::new(Flash::new(spec, alloc))),
                DeviceKind::Ram => Node::Ram(Ram::new(spec, alloc)),
            },
            Spec::Raid {
                level,
                disks,
                member,
                stripe_bytes,
            } => Node::Raid(Box::new(Raid {
                level: *level,
                members: (0..*disks).map(|_| Node::compile(member, alloc)).collect(),
                stripe: *stripe_bytes,
            })),
            Spec::WbCache {
                backing,
                size_bytes,
                readahead_bytes,
                ..
            } => {
                let backing = Node::compile(backing, alloc);
                Node::WbCache(Box::new(WriteBack::new(
                    backing,
                    *size_bytes,
                    *readahead_bytes,
                    alloc,
                )))
            }
            Spec::ReadCache {
                backing,
                cache,
                size_bytes,
            } => {
                let stats = alloc.take(2);
                let backing = Node::compile(backing, alloc);
                let cache_node = Node::compile(cache, alloc);
                // Twice the cached blocks: half the entries count reads of blocks not yet promoted.
                let table = Table::new(
                    alloc,
                    2 * (size_bytes / READCACHE_BLOCK).max(1),
                    READCACHE_BLOCK,
                );
                Node::ReadCache(Box::new(ReadCache {
                    backing,
                    cache: cache_node,
                    cached_per_set_max: table.ways / 2,
                    table,
                    cache_capacity: *size_bytes,
                    stats,
                }))
            }
            Spec::PageCache {
                backing,
                size_bytes,
            } => Node::PageCache(Box::new(PageCache {
                backing: Node::compile(backing, alloc),
                table: Table::new(alloc, (size_bytes / PAGE_BYTES).max(1), PAGE_BYTES),
                ring: DirtyRing::new(alloc),
                dirty_limit: ((*size_bytes as f64) * DIRTY_RATIO) as u64,
            })),
            // The emulator compiles each device of a layout on its own (`Spec::devices`).
            Spec::Layout { devices, .. } => Node::compile(&devices[0], alloc),
        }
    }

    /// Seeds each random generator from the emulator's seed and the node's place in the tree.
    pub fn init(&self, st: St, seed: &mut u64) {
        match self {
            Node::Hdd(h) => {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                h.init(st, *seed);
            }
            Node::Raid(r) => r.members.iter().for_each(|m| m.init(st, seed)),
            Node::WbCache(c) => c.backing.init(st, seed),
            Node::PageCache(c) => c.backing.init(st, seed),
            Node::ReadCache(c) => {
                c.backing.init(st, seed);
                c.cache.init(st, seed);
            }
            Node::Host | Node::Flash(_) | Node::Ram(_) => {}
        }
    }

    pub fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        match self {
            Node::Host => t,
            Node::Hdd(h) => h.submit(cx, t, kind, addr, len),
            Node::Flash(f) => f.submit(cx, t, kind, addr, len),
            Node::Ram(r) => r.submit(cx.st, t, kind, len),
            Node::Raid(r) => r.submit(cx, t, kind, addr, len),
            Node::WbCache(c) => c.submit(cx, t, kind, addr, len),
            Node::ReadCache(c) => c.submit(cx, t, kind, addr, len),
            Node::PageCache(c) => c.submit(cx, t, kind, addr, len),
        }
    }

    pub fn idle_at(&self, st: St) -> u64 {
        match self {
            Node::Host => 0,
            Node::Hdd(h) => h.idle_at(st),
            Node::Flash(f) => f.idle_at(st),
            Node::Ram(r) => r.idle_at(st),
            Node::Raid(r) => r.idle_at(st),
            Node::WbCache(c) => c.backing.idle_at(st),
            Node::PageCache(c) => c.backing.idle_at(st),
            Node::ReadCache(c) => c.backing.idle_at(st),
        }
    }

    /// The read caches' figures anywhere in this device, summed.
    pub(crate) fn cache_stats(&self, st: St) -> CacheStats {
        let sum = |a: CacheStats, b: CacheStats| CacheStats {
            reads: a.reads + b.reads,
            hits: a.hits + b.hits,
        };
        match self {
            Node::Raid(r) => r
                .members
                .iter()
                .map(|m| m.cache_stats(st))
                .fold(CacheStats::default(), sum),
            Node::WbCache(c) => c.backing.cache_stats(st),
            Node::PageCache(c) => c.backing.cache_stats(st),
            Node::ReadCache(c) => sum(
                CacheStats {
                    reads: st.get(c.stats),
                    hits: st.get(c.stats + 1),
                },
                c.backing.cache_stats(st),
            ),
            Node::Host | Node::Hdd(_) | Node::Flash(_) | Node::Ram(_) => CacheStats::default(),
        }
    }

    /// The HDD at the root, if the spec is a single HDD (for datasheet checks).
    pub fn as_hdd(&self) -> Option<&Hdd> {
        match self {
            Node::Hdd(h) => Some(h),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three points the DiskSim validation traces brought into the HDD model (issue 31).
    #[test]
    fn hdd_interface_bound_buffer_segments_and_write_hit_time() {
        let emu = |spec: &str| {
            crate::Emulator::new(&crate::parse_spec(spec).unwrap(), 1).expect("spec compiles")
        };
        let t = 1_000_000_000u64;
        // A media read no sooner than its positioning plus its bytes at the interface rate: the
        // same read (same seed, same platter) 64 KiB at 5 MB/s instead of the media's ~120 MB/s.
        let slow = emu("hdd-10k{link_mb_s=5}").submit(t, IoKind::Read, 300 << 30, 64 << 10) - t;
        let fast = emu("hdd-10k").submit(t, IoKind::Read, 300 << 30, 64 << 10) - t;
        let wire = (65536.0 / 5e6 * 1e9) as u64;
        assert!(
            slow >= wire && slow > fast + wire - 1_000_000,
            "{slow} {fast}"
        );
        // A buffered write is acknowledged after its own command time.
        let w = emu("hdd-10k{write_cache=on,write_hit_overhead_us=500}");
        let acked = w.submit(t, IoKind::Write, 5 << 30, 4096) - t;
        let expect = 500_000.0 + 4096.0 / 600e6 * 1e9;
        assert!((acked as f64 - expect).abs() < 1_000.0, "{acked}");
        // With one segment, a read elsewhere takes the buffer; with 16 what the first read read
        // ahead stays.
        let ahead = |spec: &str| {
            let e = emu(spec);
            let gap = 100_000_000;
            e.submit(t, IoKind::Read, 1 << 30, 8192);
            e.submit(t + gap, IoKind::Read, 200 << 30, 8192);
            e.submit(t + 2 * gap, IoKind::Read, (1 << 30) + (64 << 10), 8192) - (t + 2 * gap)
        };
        assert!(ahead("hdd-10k") < 200_000, "a buffer hit");
        assert!(
            ahead("hdd-10k{cache_segments=1}") > 1_000_000,
            "a media read"
        );
        assert!(crate::parse_spec("hdd-10k{cache_segments=17}").is_err());
    }

    /// The RAID controller of S2 and S4 (issue 31, item 4): read-ahead serves a sequential 16 KiB
    /// stream at QD 1 from the cache, far faster than one revolution per read, and a write burst
    /// up to the cache size is acknowledged at the controller's speed, then at the destage rate.
    #[test]
    fn controller_reads_ahead_and_absorbs_a_burst_up_to_its_cache() {
        let seq = |spec: &str, kind: IoKind, n: u64| -> Vec<u64> {
            let e = crate::Emulator::new(&crate::parse_spec(spec).unwrap(), 1).unwrap();
            let mut t = 1_000_000_000u64;
            (0..n)
                .map(|i| {
                    let done = e.submit(t, kind, (100 << 30) + i * (16 << 10), 16 << 10);
                    let lat = done - t;
                    t = done;
                    lat
                })
                .collect()
        };
        let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
        let rev_ns = 60e9 / 15_000.0;
        // The drive with no buffer of its own: every 16 KiB read waits about a turn.
        let bare = mean(&seq("hdd-15k{cache_mib=0}", IoKind::Read, 400)[10..]);
        assert!(bare > 0.8 * rev_ns, "bare drive {bare}");
        // Behind the controller's read-ahead: the stream runs at the media rate (~200 MB/s at
        // the outer zone: ~80 µs per 16 KiB) and no slower than the controller's command time.
        let ra = seq(
            "wbcache(hdd-15k{cache_mib=0},size=1g,readahead=on)",
            IoKind::Read,
            4000,
        );
        let ra = mean(&ra[100..]);
        assert!(ra < rev_ns / 20.0, "read-ahead {ra} vs a turn {rev_ns}");
        let media = 16384.0
            / (crate::catalogue::lookup("hdd-15k")
                .unwrap()
                .param("media_outer_mb_s")
                .unwrap()
                * 1e6)
            * 1e9;
        assert!(
            ra > 0.9 * media,
            "no faster than the platter: {ra} vs {media}"
        );
        // Without read-ahead the controller passes reads through.
        let off = mean(&seq("wbcache(hdd-15k{cache_mib=0},size=1g)", IoKind::Read, 400)[10..]);
        assert!(off > 0.8 * rev_ns, "no read-ahead {off}");

        // Writes: a 16 MiB cache takes 1,024 16 KiB writes at the controller's speed, then they
        // run at the rate the drive takes the destaged (coalesced, sequential) data.
        let w = seq("wbcache(hdd-15k,size=16m)", IoKind::Write, 4000);
        let cmd = crate::catalogue::controller_param("cmd_us") * 1e3;
        let burst = mean(&w[..900]);
        assert!(
            burst < 1.5 * cmd + 10_000.0,
            "burst {burst} vs command {cmd}"
        );
        let sustained = mean(&w[2000..]);
        assert!(
            sustained > 0.8 * media && sustained < 2.0 * media,
            "sustained {sustained} vs media {media}"
        );
        // The drive alone, write cache off: one write per turn.
        let alone = mean(&seq("hdd-15k", IoKind::Write, 200)[10..]);
        assert!(alone > 0.8 * rev_ns, "{alone}");
        eprintln!("bare {bare:.0} ra {ra:.0} off {off:.0} media {media:.0} burst {burst:.0} sustained {sustained:.0} alone {alone:.0}");
    }

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
