//! Live emulation: the model's state in this process or in shared memory, completion times for
//! I/Os, exact waiting, and the fidelity of what was realised against what was modelled.

use std::cell::Cell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use oltplab_core::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::model::{Alloc, Ctx, Node};
use crate::spec::{parse_spec, Spec};
use crate::state::{self, Region, St};
use crate::IoKind;

/// Each file gets its own 1 GiB of the device's address space (PostgreSQL's segment size), in the
/// order files are numbered; files past the capacity wrap around.
pub const FILE_SLOT_BYTES: u64 = 1 << 30;
/// The longest I/O the model takes; longer ones are modelled at this length.
pub const IO_BYTES_MAX: u64 = 1 << 30;

/// The current CLOCK_MONOTONIC time in nanoseconds: the same clock in every process.
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A file's slot (where the emulator places it, see [`Emulator::place`]) carries the layout device
/// that holds the file in its top byte and the file's number below: one u32 in the shim's tables
/// and in a trace's places chunk, so a replay puts each file on the same device of the layout.
pub const SLOT_DEVICE_SHIFT: u32 = 24;
const SLOT_NUMBER_MASK: u32 = (1 << SLOT_DEVICE_SHIFT) - 1;
/// A device address carries its layout device in the top byte, so one u64 names the device too.
const ADDR_DEVICE_SHIFT: u32 = 56;
const ADDR_MASK: u64 = (1 << ADDR_DEVICE_SHIFT) - 1;

/// The slot of file `file_number` on layout device `device`.
pub fn slot(device: u8, file_number: u32) -> u32 {
    ((device as u32) << SLOT_DEVICE_SHIFT) | (file_number & SLOT_NUMBER_MASK)
}

/// The layout device of a slot.
pub fn slot_device(slot: u32) -> u8 {
    (slot >> SLOT_DEVICE_SHIFT) as u8
}

/// An emulated device — or a layout of several, each with its own model state in one region: its
/// spec, the models, and their state.
pub struct Emulator {
    spec: Spec,
    /// One per device of the spec (a layout's, in its order), capacity worked out once.
    devices: Vec<Device>,
    region: Region,
    path: Option<PathBuf>,
}

struct Device {
    node: Node,
    capacity_bytes: u64,
    /// First of its [`DEVICE_WORDS`] counters in the region.
    counters: usize,
}

// Each device's counters, updated under the model's lock: what went to it, and how long it was busy.
const D_BUSY_UNTIL: usize = 0;
const D_BUSY_NS: usize = 1;
const D_READS: usize = 2;
const D_WRITES: usize = 3;
const D_FLUSHES: usize = 4;
const D_READ_BYTES: usize = 5;
const D_WRITTEN_BYTES: usize = 6;
const DEVICE_WORDS: usize = 7;

/// What one device of an emulator did so far, from the model: subtract two readings for a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCounts {
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// Time with at least one I/O submitted and not yet completed on the model (iostat's %util
    /// over a window): the device's own busy time, whatever the trace saw.
    pub busy_ns: u64,
    /// Reads that reached an SSD read cache (`readcache(…)`) in the device, and those it served.
    pub cache_reads: u64,
    pub cache_hits: u64,
}

impl DeviceCounts {
    /// What happened between `earlier` and this reading.
    pub fn since(&self, earlier: &DeviceCounts) -> DeviceCounts {
        DeviceCounts {
            reads: self.reads - earlier.reads,
            writes: self.writes - earlier.writes,
            flushes: self.flushes - earlier.flushes,
            read_bytes: self.read_bytes - earlier.read_bytes,
            written_bytes: self.written_bytes - earlier.written_bytes,
            busy_ns: self.busy_ns.saturating_sub(earlier.busy_ns),
            cache_reads: self.cache_reads - earlier.cache_reads,
            cache_hits: self.cache_hits - earlier.cache_hits,
        }
    }
}

impl fmt::Debug for Emulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Emulator")
            .field("spec", &self.spec.name())
            .field("shared", &self.path)
            .finish()
    }
}

/// How closely the realised latencies followed the model.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Fidelity {
    pub ios: u64,
    pub modelled_lat_ns_mean: f64,
    pub realised_lat_ns_mean: f64,
    pub modelled_lat_ns_p99: u64,
    pub realised_lat_ns_p99: u64,
    /// (realised mean − modelled mean) / modelled mean, in percent.
    pub off_pct: f64,
    /// How late waits woke up after their deadline.
    pub wake_late_ns_mean: f64,
    pub wake_late_ns_max: u64,
    /// The calibrated early wake-up: sleeps end this long before a deadline, then spin.
    pub wake_early_ns: u64,
    /// CPU time the waits spent spinning to their deadlines, in the database's own threads: the
    /// emulator's cost, to be taken out of the database's CPU.
    pub spin_cpu_s: f64,
    /// Mean time per I/O by which a wait ended before the modelled completion, paying back the
    /// same thread's earlier lateness (see [`Emulator::complete`]).
    pub credit_ns_mean: f64,
}

/// Realised mean latency further than this from the model's is off target.
pub const OFF_TARGET_PCT: f64 = 5.0;

impl Fidelity {
    pub fn off_target(&self) -> bool {
        self.ios > 0 && self.off_pct.abs() > OFF_TARGET_PCT
    }
}

/// The models of the spec's devices over one region's words, and how many words they take.
fn compile(spec: &Spec) -> (Vec<Device>, usize) {
    let mut alloc = Alloc {
        next: state::MODEL_BASE,
    };
    let devices = spec
        .devices()
        .into_iter()
        .map(|d| {
            let counters = alloc.next;
            alloc.next += DEVICE_WORDS;
            Device {
                node: Node::compile(d, &mut alloc),
                capacity_bytes: d.capacity_bytes().max(1),
                counters,
            }
        })
        .collect();
    (devices, alloc.next)
}

impl Emulator {
    /// An emulator whose state lives in this process.
    pub fn new(spec: &Spec, seed: u64) -> Result<Emulator> {
        let (devices, words) = compile(spec);
        let region = Region::heap(words);
        let e = Emulator {
            spec: spec.clone(),
            devices,
            region,
            path: None,
        };
        e.init(seed)?;
        Ok(e)
    }

    /// An emulator whose state lives in a new shared-memory file at `path` (e.g. under /dev/shm),
    /// for other processes to attach to with [`Emulator::open_shared`]. The caller removes the file.
    pub fn create_shared(spec: &Spec, seed: u64, path: &Path) -> Result<Emulator> {
        let (devices, words) = compile(spec);
        let region = Region::create_file(path, words).map_err(|e| {
            Error::usage(format!(
                "cannot create the emulated device's shared state {}: {e}; remove a stale file or choose another place",
                path.display()
            ))
        })?;
        let e = Emulator {
            spec: spec.clone(),
            devices,
            region,
            path: Some(path.to_path_buf()),
        };
        if let Err(err) = e.init(seed) {
            let _ = std::fs::remove_file(path);
            return Err(err);
        }
        Ok(e)
    }

    /// Attaches to the shared state another process created.
    pub fn open_shared(path: &Path) -> Result<Emulator> {
        let bad = |why: &str| {
            Error::failed(format!(
                "{} is not an emulated device's shared state ({why}); it may be stale or from another oltplab version",
                path.display()
            ))
        };
        let region = Region::open_file(path).map_err(|e| bad(&e.to_string()))?;
        let w = region.words();
        if w[state::H_MAGIC].load(Ordering::Acquire) != state::MAGIC {
            return Err(bad("wrong magic number"));
        }
        if w[state::H_VERSION].load(Ordering::Relaxed) != state::VERSION {
            return Err(bad("another layout version"));
        }
        let len = w[state::H_SPEC_LEN].load(Ordering::Relaxed) as usize;
        if len > state::SPEC_BYTES_MAX {
            return Err(bad("spec too long"));
        }
        let bytes: Vec<u8> = (0..len)
            .map(|i| (w[state::H_SPEC + i / 8].load(Ordering::Relaxed) >> (8 * (i % 8))) as u8)
            .collect();
        let text = String::from_utf8(bytes).map_err(|_| bad("spec is not text"))?;
        let spec = parse_spec(&text).map_err(|e| bad(&e.to_string()))?;
        let (devices, words) = compile(&spec);
        if w[state::H_WORDS].load(Ordering::Relaxed) as usize != words || w.len() < words {
            return Err(bad("size does not match its spec"));
        }
        Ok(Emulator {
            spec,
            devices,
            region,
            path: Some(path.to_path_buf()),
        })
    }

    fn init(&self, seed: u64) -> Result<()> {
        let w = self.region.words();
        let name = self.spec.name();
        if name.len() > state::SPEC_BYTES_MAX {
            return Err(Error::usage(format!(
                "the device spec is {} characters long in canonical form; at most {} fit the shared state",
                name.len(),
                state::SPEC_BYTES_MAX
            )));
        }
        for (i, chunk) in name.as_bytes().chunks(8).enumerate() {
            let mut word = 0u64;
            for (j, b) in chunk.iter().enumerate() {
                word |= (*b as u64) << (8 * j);
            }
            w[state::H_SPEC + i].store(word, Ordering::Relaxed);
        }
        w[state::H_SPEC_LEN].store(name.len() as u64, Ordering::Relaxed);
        w[state::H_VERSION].store(state::VERSION, Ordering::Relaxed);
        w[state::H_WORDS].store(w.len() as u64, Ordering::Relaxed);
        w[state::H_SEED].store(seed, Ordering::Relaxed);
        w[state::H_USAGE].store(1f64.to_bits(), Ordering::Relaxed);
        let mut s = seed ^ 0x5DEE_CE66_D1CE_4E5B;
        for d in &self.devices {
            d.node.init(St::new(w), &mut s);
        }
        // Last, so that a process attaching early sees an incomplete region as foreign.
        w[state::H_MAGIC].store(state::MAGIC, Ordering::Release);
        Ok(())
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The shared-memory file, if the state is shared.
    pub fn shared_path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Says that only `span_bytes` of the device's address space is in use and that seeks over it
    /// stand for the full stroke: a benchmark region of 1 GiB then behaves like the whole disk, as
    /// S1 measured its raw devices. By default the whole capacity is the stroke.
    pub fn set_span_bytes(&self, span_bytes: u64) {
        let usage = (span_bytes as f64 / self.spec.capacity_bytes() as f64).clamp(1e-12, 1.0);
        self.region.words()[state::H_USAGE].store(usage.to_bits(), Ordering::Relaxed);
    }

    /// True for `host`: no model, the real device's timing.
    fn is_host(&self) -> bool {
        matches!(self.devices[0].node, Node::Host)
    }

    /// The device address of byte `offset` of the file in `slot` (see [`slot`]): many files share
    /// one device, file number N at N GiB; a layout's device index rides in the address's top byte.
    /// A slot naming a device the spec lacks (a layout's trace replayed on one device) is on the
    /// first.
    pub fn place(&self, slot: u32, offset: u64) -> u64 {
        let device = (slot_device(slot) as usize).min(self.devices.len() - 1);
        let number = (slot & SLOT_NUMBER_MASK) as u64;
        let capacity = self.devices[device].capacity_bytes;
        ((device as u64) << ADDR_DEVICE_SHIFT)
            | ((number * FILE_SLOT_BYTES).wrapping_add(offset) % capacity)
    }

    /// The modelled completion time (ns, CLOCK_MONOTONIC) of an I/O submitted at `submit_ns` at
    /// `device_offset` (of the first device, or as [`Emulator::place`] gives it); the device's units
    /// are reserved for it. `host` returns `submit_ns`.
    pub fn submit(&self, submit_ns: u64, kind: IoKind, device_offset: u64, len: u64) -> u64 {
        if self.is_host() {
            return submit_ns;
        }
        let w = self.region.words();
        let usage = f64::from_bits(w[state::H_USAGE].load(Ordering::Relaxed));
        let index = ((device_offset >> ADDR_DEVICE_SHIFT) as usize).min(self.devices.len() - 1);
        let device = &self.devices[index];
        let capacity = device.capacity_bytes;
        let addr = (device_offset & ADDR_MASK) % capacity;
        // Longer I/Os are modelled as 1 GiB: the model's work grows with the length, and no database
        // moves more in one call. This also keeps address arithmetic far from overflow.
        let len = len.min(capacity).min(IO_BYTES_MAX);
        let _guard = state::lock(w);
        let cx = Ctx {
            st: St::new(w),
            usage,
        };
        let done = device.node.submit(cx, submit_ns, kind, addr, len);
        let c = &w[device.counters..device.counters + DEVICE_WORDS];
        let add =
            |i: usize, n: u64| c[i].store(c[i].load(Ordering::Relaxed) + n, Ordering::Relaxed);
        match kind {
            IoKind::Read => {
                add(D_READS, 1);
                add(D_READ_BYTES, len);
            }
            IoKind::Write => {
                add(D_WRITES, 1);
                add(D_WRITTEN_BYTES, len);
            }
            IoKind::Flush => add(D_FLUSHES, 1),
        }
        // The union of [submit, done) over the device's I/Os: the part past what is counted.
        let until = c[D_BUSY_UNTIL].load(Ordering::Relaxed);
        if done > until {
            add(D_BUSY_NS, done - submit_ns.max(until));
            c[D_BUSY_UNTIL].store(done, Ordering::Relaxed);
        }
        done
    }

    /// Each device's counts up to `at_ns` (now, for live emulation; a virtual replay's clock), a
    /// layout's in its order, over every process on the device.
    pub fn device_counts(&self, at_ns: u64) -> Vec<DeviceCounts> {
        let w = self.region.words();
        let _guard = state::lock(w);
        self.devices
            .iter()
            .map(|d| {
                let c = |i: usize| w[d.counters + i].load(Ordering::Relaxed);
                let cache = d.node.cache_stats(St::new(w));
                DeviceCounts {
                    cache_reads: cache.reads,
                    cache_hits: cache.hits,
                    reads: c(D_READS),
                    writes: c(D_WRITES),
                    flushes: c(D_FLUSHES),
                    read_bytes: c(D_READ_BYTES),
                    written_bytes: c(D_WRITTEN_BYTES),
                    // Busy time still ahead of now (modelled completions to come) is not yet spent.
                    busy_ns: c(D_BUSY_NS).saturating_sub(c(D_BUSY_UNTIL).saturating_sub(at_ns)),
                }
            })
            .collect()
    }

    /// When a blocking call the calling thread began at `start_ns` reaches the device: then, or
    /// when the thread's previous call completed on the model if that is later. A thread paying
    /// back lateness ([`Credit`]) gets its previous call back before the device finished it, but
    /// its next call depends on that one, so the device cannot see it earlier: a disk would
    /// otherwise take the next sequential write as already queued and skip the turn it costs.
    pub fn arrival_ns(&self, start_ns: u64) -> u64 {
        start_ns.max(NOT_BEFORE_NS.try_with(Cell::get).unwrap_or(0))
    }

    /// Sleeps until `deadline_ns` (CLOCK_MONOTONIC) with a calibrated early wake-up, then spins the
    /// rest, so that it returns a few microseconds after the deadline at most.
    pub fn wait_until(&self, deadline_ns: u64) {
        let waited = wait_timed(deadline_ns);
        let w = self.region.words();
        if let Some(late) = waited.late_ns {
            w[state::F_WAKES].fetch_add(1, Ordering::Relaxed);
            w[state::F_WAKE_LATE_SUM].fetch_add(late, Ordering::Relaxed);
            w[state::F_WAKE_LATE_MAX].fetch_max(late, Ordering::Relaxed);
        }
        if waited.spin_ns > 0 {
            w[state::F_SPIN_SUM].fetch_add(waited.spin_ns, Ordering::Relaxed);
        }
    }

    /// Holds the calling thread until an I/O it began at `start_ns`, which the model completes at
    /// `deadline_ns`, is done for it, and records the I/O. Each thread carries its own [`Credit`].
    ///
    /// Returns the I/O's end for a trace: the device's, i.e. the modelled completion — a thread
    /// paying back lateness may get an I/O back before the device finished it, and a trace that
    /// said so would show the I/O overlapping the thread's next one, which the device never did.
    /// On `host` (no model) the real end.
    pub fn complete(&self, start_ns: u64, deadline_ns: u64) -> u64 {
        if !self.is_host() {
            let _ = NOT_BEFORE_NS.try_with(|n| n.set(deadline_ns));
        }
        let mut credit = CREDIT.try_with(Cell::get).unwrap_or_default();
        // Never back before the call reached the device (`start_ns`, its arrival): a trace record
        // would then begin after the thread had moved on, and be tied to the wrong transaction.
        self.wait_until(credit.due_ns(deadline_ns).max(start_ns));
        let end_ns = now_ns();
        credit.settle(deadline_ns, end_ns);
        let _ = CREDIT.try_with(|c| c.set(credit));
        self.record_realised(
            deadline_ns.saturating_sub(start_ns),
            end_ns.saturating_sub(start_ns),
        );
        if self.is_host() {
            end_ns
        } else {
            deadline_ns
        }
    }

    /// Records one I/O's modelled and realised latency for [`Emulator::fidelity`].
    pub fn record_realised(&self, modelled_latency_ns: u64, realised_latency_ns: u64) {
        let w = self.region.words();
        w[state::F_IOS].fetch_add(1, Ordering::Relaxed);
        w[state::F_MODELLED_SUM].fetch_add(modelled_latency_ns, Ordering::Relaxed);
        w[state::F_REALISED_SUM].fetch_add(realised_latency_ns, Ordering::Relaxed);
        if realised_latency_ns < modelled_latency_ns {
            // Only a wait paying back a [`Credit`] ends before the model's completion.
            w[state::F_CREDIT_SUM]
                .fetch_add(modelled_latency_ns - realised_latency_ns, Ordering::Relaxed);
        }
        w[state::F_HIST_MODELLED + state::bucket(modelled_latency_ns)]
            .fetch_add(1, Ordering::Relaxed);
        w[state::F_HIST_REALISED + state::bucket(realised_latency_ns)]
            .fetch_add(1, Ordering::Relaxed);
    }

    /// A copy of the device as it is now, with its state in this process: for asking the model
    /// what it would do next without disturbing the device (the copy's fidelity starts empty).
    pub fn snapshot(&self) -> Emulator {
        let w = self.region.words();
        let region = Region::heap(w.len());
        {
            let _guard = state::lock(w);
            for (to, from) in region.words().iter().zip(w) {
                to.store(from.load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }
        region.words()[state::H_LOCK].store(0, Ordering::Relaxed);
        let copy = Emulator {
            spec: self.spec.clone(),
            devices: compile(&self.spec).0,
            region,
            path: None,
        };
        copy.reset_fidelity();
        copy
    }

    /// Clears the fidelity counters (e.g. after a warm-up).
    pub fn reset_fidelity(&self) {
        let w = self.region.words();
        for word in &w[state::F_IOS..state::MODEL_BASE] {
            word.store(0, Ordering::Relaxed);
        }
    }

    /// Modelled against realised latency so far, over every process sharing the state.
    pub fn fidelity(&self) -> Fidelity {
        let w = self.region.words();
        let ios = w[state::F_IOS].load(Ordering::Relaxed);
        let p99 = |base: usize| {
            let counts: Vec<u64> = (0..state::HIST_BUCKETS)
                .map(|i| w[base + i].load(Ordering::Relaxed))
                .collect();
            let total: u64 = counts.iter().sum();
            if total == 0 {
                return 0;
            }
            let want = (total as f64 * 0.99).ceil() as u64;
            let mut seen = 0;
            for (b, c) in counts.iter().enumerate() {
                seen += c;
                if seen >= want {
                    return state::bucket_value(b);
                }
            }
            0
        };
        let mean = |sum: usize| {
            if ios == 0 {
                0.0
            } else {
                w[sum].load(Ordering::Relaxed) as f64 / ios as f64
            }
        };
        let modelled = mean(state::F_MODELLED_SUM);
        let realised = mean(state::F_REALISED_SUM);
        let wakes = w[state::F_WAKES].load(Ordering::Relaxed);
        Fidelity {
            ios,
            modelled_lat_ns_mean: modelled,
            realised_lat_ns_mean: realised,
            modelled_lat_ns_p99: p99(state::F_HIST_MODELLED),
            realised_lat_ns_p99: p99(state::F_HIST_REALISED),
            off_pct: if modelled > 0.0 {
                (realised - modelled) / modelled * 100.0
            } else {
                0.0
            },
            wake_late_ns_mean: if wakes == 0 {
                0.0
            } else {
                w[state::F_WAKE_LATE_SUM].load(Ordering::Relaxed) as f64 / wakes as f64
            },
            wake_late_ns_max: w[state::F_WAKE_LATE_MAX].load(Ordering::Relaxed),
            wake_early_ns: early_wake_ns(),
            spin_cpu_s: w[state::F_SPIN_SUM].load(Ordering::Relaxed) as f64 / 1e9,
            credit_ns_mean: mean(state::F_CREDIT_SUM),
        }
    }

    /// Mean random-read service time of a single HDD spec at queue depth 1, from its parameters.
    pub fn datasheet_random_read_ns(&self, len: u64) -> Option<f64> {
        self.devices[0]
            .node
            .as_hdd()
            .map(|h| h.expected_random_read_ns(len))
    }
}

/// How long before a deadline a sleep must end: the kernel's wake-up overshoot here. Measured once
/// per process at start (90th percentile of short sleeps, with a margin), then adapted to every
/// sleep's overshoot, because a loaded machine wakes sleepers later than an idle one.
pub fn early_wake_ns() -> u64 {
    let now = EARLY_NS.load(Ordering::Relaxed);
    if now != 0 {
        return now;
    }
    static CALIBRATED: OnceLock<()> = OnceLock::new();
    CALIBRATED.get_or_init(|| {
        let mut over: Vec<u64> = (0..15)
            .map(|_| {
                let target = now_ns() + 200_000;
                sleep_abs(target);
                now_ns().saturating_sub(target)
            })
            .collect();
        over.sort_unstable();
        let p90 = over[over.len() * 9 / 10];
        EARLY_NS.store(
            (p90 + p90 / 2).clamp(EARLY_MIN_NS, EARLY_MAX_NS),
            Ordering::Relaxed,
        );
    });
    EARLY_NS.load(Ordering::Relaxed)
}

static EARLY_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
const EARLY_MIN_NS: u64 = 20_000;
const EARLY_MAX_NS: u64 = 2_000_000;

fn adapt_early(overshoot_ns: u64) {
    let early = EARLY_NS.load(Ordering::Relaxed);
    let want = (overshoot_ns + overshoot_ns / 2).clamp(EARLY_MIN_NS, EARLY_MAX_NS);
    // Up fast, down slowly: the estimate settles near the 90th percentile of recent overshoots,
    // and one preempted sleep does not make every later wait spin for milliseconds.
    let next = if want > early {
        early + (want - early) / 8
    } else {
        early - (early - want) / 64
    };
    EARLY_NS.store(next, Ordering::Relaxed);
}

fn sleep_abs(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    // A signal (a server's SIGALRM, SIGUSR1 …) ends the sleep early with EINTR; sleeping again to
    // the same absolute time keeps the rest of the wait from becoming a spin of milliseconds.
    loop {
        // SAFETY: clock_nanosleep only reads the timespec we own.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            break;
        }
    }
}

/// Waits until `deadline_ns`; returns how late it woke, or None if the deadline had passed already.
pub fn wait_until(deadline_ns: u64) -> Option<u64> {
    wait_timed(deadline_ns).late_ns
}

/// Lateness a waiter (a database thread, an I/O engine) has not yet paid back.
///
/// On a busy machine a wait can end late (the thread was not scheduled at once) and a real call can
/// take longer than the model; that lateness would become time the database spends on I/O that the
/// device did not. A waiter carries it as credit and ends its next waits early by it, down to the
/// moment its real call returned: the mean latency it sees is the model's, and its tail is what was
/// realised. Only the waiter's wait is shortened: the model keeps the device busy until each
/// modelled completion, so the device's throughput never exceeds the model's.
#[derive(Clone, Copy, Debug, Default)]
pub struct Credit {
    ns: u64,
}

impl Credit {
    /// Lateness beyond this is dropped: a waiter descheduled for long would otherwise get many
    /// instant I/Os in a row. Under the cap, the mean holds; the fidelity figures show the rest.
    const MAX_NS: u64 = 20_000_000;

    /// When a wait for a completion modelled at `deadline_ns` may end.
    #[inline]
    pub fn due_ns(&self, deadline_ns: u64) -> u64 {
        deadline_ns.saturating_sub(self.ns)
    }

    /// After a wait for `deadline_ns` ended at `end_ns` (never before [`Credit::due_ns`]).
    #[inline]
    pub fn settle(&mut self, deadline_ns: u64, end_ns: u64) {
        self.ns = (self.ns + end_ns)
            .saturating_sub(deadline_ns)
            .min(Self::MAX_NS);
    }
}

thread_local! {
    /// Each database thread's credit, for [`Emulator::complete`].
    static CREDIT: Cell<Credit> = const { Cell::new(Credit { ns: 0 }) };
    /// The modelled completion of each thread's last blocking call, for [`Emulator::arrival_ns`].
    static NOT_BEFORE_NS: Cell<u64> = const { Cell::new(0) };
    /// Each thread's spin so far, for [`thread_spin_ns`].
    static SPIN_NS: Cell<u64> = const { Cell::new(0) };
}

/// CPU time this thread has spent spinning to emulated completions: part of its CPU time that is
/// the emulator's, not the database's.
pub fn thread_spin_ns() -> u64 {
    SPIN_NS.try_with(Cell::get).unwrap_or(0)
}

struct Waited {
    late_ns: Option<u64>,
    spin_ns: u64,
}

fn wait_timed(deadline_ns: u64) -> Waited {
    let now = now_ns();
    if now >= deadline_ns {
        return Waited {
            late_ns: None,
            spin_ns: 0,
        };
    }
    let early = early_wake_ns();
    if deadline_ns - now > early {
        let wake = deadline_ns - early;
        sleep_abs(wake);
        adapt_early(now_ns().saturating_sub(wake));
    }
    let mut t = now_ns();
    // The spin's CPU time, not its wall time: on a busy machine a spinning thread is descheduled
    // too, and those moments are other threads' CPU.
    let cpu_from = (t < deadline_ns).then(|| clock_ns(libc::CLOCK_THREAD_CPUTIME_ID));
    while t < deadline_ns {
        std::hint::spin_loop();
        t = now_ns();
    }
    let spin_ns = cpu_from.map_or(0, |from| {
        clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(from)
    });
    let _ = SPIN_NS.try_with(|s| s.set(s.get() + spin_ns));
    Waited {
        late_ns: Some(t - deadline_ns),
        spin_ns,
    }
}
