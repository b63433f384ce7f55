//! A flash device: controllers with their sequential-stream detection, channels × dies, the host
//! link and the write buffer.

use super::super::base::{earliest, Alloc, Ctx, Timeline};
use crate::params::{device_params, DeviceParams};
use crate::spec::Spec;
use crate::state::St;
use crate::IoKind;

/// A flash device: controllers, channels × dies, one host link and a write buffer.
pub(crate) struct Flash {
    ctrl: usize,
    dies: usize,
    chans: Vec<Timeline>,
    link: Timeline,
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
    /// σ of the lognormal factor on each command's own time (`service_cv`; 0: none).
    spread_sigma: f64,
    /// The chance that a command stalls (`stall_pct` / 100) and a stall's mean length
    /// (`stall_us`, exponential).
    stall_chance: f64,
    stall_ns: f64,
    /// The word counting the factors drawn (seeded per device by [`Flash::init`]).
    draw_word: usize,
    /// The device's pauses (`pause_pct`, `pause_us`, `pause_speed_pct`): the chance that an
    /// epoch of [`PAUSE_EPOCH_MEANS`] mean pauses holds one, a pause's mean length, the share of
    /// its speed the device keeps in one, and the word holding the seed their schedule is drawn
    /// from.
    pause_chance: f64,
    pause_ns: f64,
    pause_speed: f64,
    pause_seed_word: usize,
    protected: bool,
    half_program_ns: f64,
    /// Bytes per ns a read-ahead stream can deliver: every die reading pages, bounded by the
    /// channels and the link.
    seq_read_bpns: f64,
}

// Flash misc words.
const FL_LAST_PROGRAM: usize = 0;
/// Pauses are scheduled per epoch of this many mean pause lengths: at most one in each, at a
/// uniform offset, so that a pause share up to 100 / this % is possible.
const PAUSE_EPOCH_MEANS: f64 = 4.0;
/// A pause is cut at this many mean lengths, so that a command looks back a bounded number of
/// epochs for one it started inside.
const PAUSE_MAX_MEANS: f64 = 8.0;
/// Epochs a command's time in the device is searched for pauses one by one; past them (a queue
/// of many pauses' length) it meets pauses in proportion to their share of the time.
const PAUSE_SCAN_EPOCHS: u64 = 64;
/// A pause keeps at most this share of the device's speed (a pause at full speed is none).
const MAX_PAUSE_SPEED: f64 = 0.95;
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

impl Flash {
    pub(crate) fn new(spec: &Spec, alloc: &mut Alloc) -> Flash {
        let Spec::Device { entry, overrides } = spec else {
            unreachable!()
        };
        let DeviceParams::Flash(p) = device_params(entry, overrides) else {
            unreachable!("a flash device's entry")
        };
        let n_chans = p.channels.round().max(1.0) as usize;
        let n_dies = n_chans * p.dies_per_channel.round().max(1.0) as usize;
        let n_ctrl = p.controllers.round().max(1.0) as usize;
        let page = (p.page_kib * 1024.0).round().max(512.0) as u64;
        let program_ns = p.program_us * 1e3;
        // Bytes the dies program per ns; the buffer hides a backlog of this many ns of programming.
        let program_bpns = n_dies as f64 * page as f64 / program_ns;
        let buffer_bytes = p.write_buffer_mib * 1024.0 * 1024.0;
        Flash {
            ctrl: alloc.take(n_ctrl),
            dies: alloc.take(2 * n_dies),
            chans: (0..n_chans).map(|_| Timeline::new(alloc)).collect(),
            link: Timeline::new(alloc),
            misc: alloc.take(1),
            draw_word: alloc.take(1),
            pause_chance: (p.pause_pct / 100.0 * PAUSE_EPOCH_MEANS).clamp(0.0, 1.0),
            pause_ns: p.pause_us.max(0.0) * 1e3,
            pause_speed: (p.pause_speed_pct / 100.0).clamp(0.0, MAX_PAUSE_SPEED),
            pause_seed_word: alloc.take(1),
            reads: Streams::new(alloc),
            writes: Streams::new(alloc),
            n_ctrl,
            n_dies,
            n_chans,
            page,
            read_ns: p.read_us * 1e3,
            program_ns,
            waf_random: p.waf_random.max(1.0),
            chan_bpns: p.channel_mb_s * 1e6 / 1e9,
            link_bpns: p.link_mb_s * 1e6 / 1e9,
            read_overhead_ns: p.read_overhead_us * 1e3,
            occupancy_ns: p.cmd_occupancy_us * 1e3,
            write_occupancy_ns: if p.write_occupancy_us > 0.0 {
                p.write_occupancy_us * 1e3
            } else {
                p.cmd_occupancy_us * 1e3
            },
            buffer_window_ns: buffer_bytes / program_bpns,
            write_ack_ns: p.write_ack_us * 1e3,
            flush_ns: p.flush_us * 1e3,
            spread_sigma: (1.0 + p.service_cv.max(0.0).powi(2)).ln().sqrt(),
            stall_chance: (p.stall_pct / 100.0).clamp(0.0, 1.0),
            stall_ns: p.stall_us.max(0.0) * 1e3,
            protected: p.power_loss_protected >= 0.5,
            half_program_ns: program_ns * p.waf_random.max(1.0) / 2.0,
            seq_read_bpns: (n_dies as f64 * page as f64
                / (p.read_us * 1e3 + page as f64 / (p.channel_mb_s * 1e-3)))
                .min(n_chans as f64 * p.channel_mb_s * 1e-3)
                .min(p.link_mb_s * 1e-3),
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

    /// What varies in this command's own time: a factor (1 without `service_cv`; else
    /// lognormal with mean 1, Box–Muller on two hashed draws) and a stall added to it (none
    /// without `stall_pct`; else, that often, exponential with mean `stall_us`). Drawn from the
    /// device's counter, so a seed and a sequence of submits give the same times.
    fn spread(&self, st: St) -> (f64, u64) {
        if !self.draws() {
            return (1.0, 0);
        }
        let n = st.get(self.draw_word);
        st.set(self.draw_word, n.wrapping_add(4));
        let unit = |k: u64| ((mix64(k) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let factor = if self.spread_sigma > 0.0 {
            let z = (-2.0 * unit(n).ln()).sqrt() * (std::f64::consts::TAU * unit(n + 1)).cos();
            (self.spread_sigma * z - self.spread_sigma * self.spread_sigma / 2.0).exp()
        } else {
            1.0
        };
        let stall = if unit(n + 2) < self.stall_chance {
            (-unit(n + 3).ln() * self.stall_ns) as u64
        } else {
            0
        };
        (factor, stall)
    }

    /// Seeds the draws of [`Flash::spread`] and the pauses' schedule; a device without a spread,
    /// stalls or pauses draws nothing.
    pub(crate) fn init(&self, st: St, seed: u64) {
        st.set(self.draw_word, seed);
        st.set(self.pause_seed_word, mix64(seed ^ 0x7061_7573_6573));
    }

    /// Whether the device draws random numbers (and so takes a seed of its own).
    pub(crate) fn draws(&self) -> bool {
        self.spread_sigma > 0.0 || (self.stall_chance > 0.0 && self.stall_ns > 0.0) || self.pauses()
    }

    fn pauses(&self) -> bool {
        self.pause_chance > 0.0 && self.pause_ns > 0.0
    }

    /// The share of the time the device is paused: the epochs' chance of one, times a pause's
    /// mean length (exponential, cut at [`PAUSE_MAX_MEANS`]) over an epoch's.
    fn pause_share(&self) -> f64 {
        self.pause_chance * (1.0 - (-PAUSE_MAX_MEANS).exp()) / PAUSE_EPOCH_MEANS
    }

    /// The pause epoch `k` holds, if any: its start and end (ns). A function of the seed and `k`
    /// alone, so every command sees the same schedule whatever order they reach the model in.
    fn pause_in(&self, seed: u64, k: u64) -> Option<(u64, u64)> {
        let unit = |i: u64| {
            ((mix64(seed ^ mix64(k.wrapping_mul(3).wrapping_add(i))) >> 11) as f64 + 0.5)
                / (1u64 << 53) as f64
        };
        if unit(0) >= self.pause_chance {
            return None;
        }
        let epoch_ns = self.pause_ns * PAUSE_EPOCH_MEANS;
        let start = ((k as f64 + unit(1)) * epoch_ns) as u64;
        let len = (-unit(2).ln()).min(PAUSE_MAX_MEANS) * self.pause_ns;
        Some((start, start + len as u64))
    }

    /// When a command in the device from `t` and done at `done` without pauses is done. In a
    /// pause the whole device runs at `pause_speed` of its speed (0: it stops), so every command
    /// in it then — queued or in service — takes longer by what the pause holds back of its
    /// time, and one arriving during a stopping pause starts at its end. Unlike stalls, which
    /// hold single commands, pauses slow every command at once: a real drive's housekeeping, or
    /// a virtual disk's host, shows its slow I/Os bunched in time. A pause that keeps part of
    /// the speed lets a closed loop's threads go on submitting through it, slowly, as they do on
    /// this machine's disk (docs/devices.md).
    fn after_pauses(&self, st: St, t: u64, done: u64) -> u64 {
        if !self.pauses() {
            return done;
        }
        let seed = st.get(self.pause_seed_word);
        let epoch_ns = ((self.pause_ns * PAUSE_EPOCH_MEANS) as u64).max(1);
        let back = (PAUSE_MAX_MEANS / PAUSE_EPOCH_MEANS).ceil() as u64 + 1;
        let speed = self.pause_speed;
        // The command's own time still to go at full speed (ns), from `at` on.
        let mut work = (done - t) as f64;
        let mut at = t;
        let first = (t / epoch_ns).saturating_sub(back);
        let mut k = first;
        // Pauses in time order: each one met stretches the rest, which may reach the next.
        while k <= (at + work as u64) / epoch_ns {
            if k - first == PAUSE_SCAN_EPOCHS {
                // Far ahead: the pauses' share of the time, on average.
                let lost = self.pause_share() * (1.0 - speed);
                return at + (work / (1.0 - lost)) as u64;
            }
            if let Some((from, to)) = self.pause_in(seed, k).filter(|&(_, to)| to > at) {
                // A command that arrives in a pause is in it even with no time of its own.
                let inside = from < at;
                let from = from.max(at);
                let before = (from - at) as f64;
                if inside || before < work {
                    work -= before;
                    // In the pause, the command gets `speed` of each ns.
                    let held = (to - from) as f64;
                    if speed > 0.0 && work <= held * speed {
                        return from + (work / speed) as u64;
                    }
                    work -= held * speed;
                    at = to;
                }
            }
            k += 1;
        }
        at + work as u64
    }

    pub(crate) fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let done = self.serve(cx, t, kind, addr, len);
        self.after_pauses(cx.st, t, done)
    }

    /// A command's completion on the device without its pauses.
    fn serve(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        let st = cx.st;
        let len = len.max(1);
        match kind {
            IoKind::Flush => {
                let start = self.command(st, t);
                let (f, stall) = self.spread(st);
                let own_ns = (self.flush_ns * f) as u64 + stall;
                // A protected or unbuffered drive has nothing to drain; an unprotected one waits
                // for the programs its buffer holds. Then the flush's own time.
                if self.protected || self.buffer_window_ns == 0.0 {
                    start + own_ns.max(1_000)
                } else {
                    start.max(st.get(self.misc + FL_LAST_PROGRAM)) + own_ns
                }
            }
            IoKind::Read => {
                if let Some(s) = self.reads.find(st, addr) {
                    return self.streamed_read(st, t, s, len);
                }
                let (f, stall) = self.spread(st);
                let start = self.command(st, t) + (self.read_overhead_ns * f) as u64;
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
                    let sensed = die_start + (self.read_ns * f) as u64 + stall;
                    let xfer_end = self.chans[ch].book(st, sensed, (bytes / self.chan_bpns) as u64);
                    st.set(self.dies + die, xfer_end);
                    ready = ready.max(xfer_end);
                }
                let done = self
                    .link
                    .book(st, ready, (len as f64 / self.link_bpns) as u64);
                // Any read may be the start of a stream.
                self.reads.note(st, addr + len, ready);
                done
            }
            IoKind::Write => {
                let (f, stall) = self.spread(st);
                let start = self.command_for(st, t, self.write_occupancy_ns);
                let received = self
                    .link
                    .book(st, start, (len as f64 / self.link_bpns) as u64);
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
                    let xfer_end =
                        self.chans[ch].book(st, received, (bytes / self.chan_bpns) as u64);
                    // Writes are packed into pages, so programming costs in proportion to the bytes.
                    let prog_start = xfer_end
                        .max(st.get(self.prog_horizon(die)))
                        .max(st.get(self.dies + die));
                    let prog_end = prog_start
                        + (self.program_ns * factor * f * bytes / self.page as f64) as u64;
                    st.set(self.prog_horizon(die), prog_end);
                    programmed = programmed.max(prog_end);
                }
                let lp = self.misc + FL_LAST_PROGRAM;
                st.set(lp, st.get(lp).max(programmed));
                if self.buffer_window_ns > 0.0 {
                    // The buffer acknowledges at once while the backlog of programming it holds fits.
                    let acked = received + (self.write_ack_ns * f) as u64;
                    acked.max(programmed.saturating_sub(self.buffer_window_ns as u64)) + stall
                } else {
                    programmed + stall
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
        let done = self.link.book(
            st,
            ready + self.occupancy_ns as u64,
            (len as f64 / self.link_bpns) as u64,
        );
        st.set(s, addr + len);
        st.set(s + 1, ready);
        done
    }

    pub(crate) fn idle_at(&self, st: St) -> u64 {
        self.link
            .busy_until(st)
            .max(st.get(self.ctrl + earliest(st, self.ctrl, self.n_ctrl)))
    }

    /// The word holding when die `die` finishes the programs queued on it.
    fn prog_horizon(&self, die: usize) -> usize {
        self.dies + self.n_dies + die
    }
}

/// SplitMix64's finaliser: a well-mixed 64-bit value of `x`.
fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
