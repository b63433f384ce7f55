//! Live emulation: the model's state in this process or in shared memory, completion times for
//! I/Os, exact waiting, and the fidelity of what was realised against what was modelled.

use std::cell::Cell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use oltplab_core::units::format_ns;
use oltplab_core::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::model::{Alloc, Ctx, Node};
use crate::parser::parse_spec;
use crate::spec::Spec;
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

pub(crate) fn clock_ns(clock: libc::clockid_t) -> u64 {
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
/// The latest arrival the model has taken.
const D_LAST_ARRIVAL: usize = 7;
const DEVICE_WORDS: usize = 8;

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

/// How closely the realised latencies followed the model: the distributions, not only the means
/// (a mean can agree while the tail is far off), and what the waiting cost.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Fidelity {
    pub ios: u64,
    pub modelled_lat_ns_mean: f64,
    pub realised_lat_ns_mean: f64,
    #[serde(default)]
    pub modelled_lat_ns_p50: u64,
    #[serde(default)]
    pub modelled_lat_ns_p90: u64,
    pub modelled_lat_ns_p99: u64,
    #[serde(default)]
    pub modelled_lat_ns_p999: u64,
    #[serde(default)]
    pub realised_lat_ns_p50: u64,
    #[serde(default)]
    pub realised_lat_ns_p90: u64,
    pub realised_lat_ns_p99: u64,
    #[serde(default)]
    pub realised_lat_ns_p999: u64,
    /// (realised mean − modelled mean) / modelled mean, in percent.
    pub off_pct: f64,
    /// (realised p99 − modelled p99) / modelled p99, in percent: where a busy machine shows first.
    #[serde(default)]
    pub p99_off_pct: f64,
    /// Mean of |realised − modelled| over the I/Os: per-I/O error that no mean can cancel.
    #[serde(default)]
    pub abs_error_ns_mean: f64,
    /// Share of I/Os that ended later than the model by more than max(10 µs, 10 % of their
    /// modelled latency), and the share that ended that much earlier.
    #[serde(default)]
    pub late_pct: f64,
    #[serde(default)]
    pub early_pct: f64,
    /// How late waits woke up after their deadline.
    pub wake_late_ns_mean: f64,
    pub wake_late_ns_max: u64,
    /// The adaptive spin margin: sleeps end this long before a deadline, then spin.
    pub wake_early_ns: u64,
    /// CPU time the waits spent spinning to their deadlines, in the database's own threads: CPU the
    /// emulator took, which the database could not use.
    pub spin_cpu_s: f64,
    /// The window these figures cover (since the last [`Emulator::reset_fidelity`]), and the
    /// spin's share of the machine over it (spin CPU / (window × cores)).
    #[serde(default)]
    pub window_s: f64,
    #[serde(default)]
    pub spin_machine_pct: f64,
    /// Submissions stamped earlier than one the model had already taken (two threads racing to
    /// the model's lock), and their mean gap: the model takes each at the later arrival, so it
    /// never serves an I/O behind one that arrived after it.
    #[serde(default)]
    pub order_inversions: u64,
    #[serde(default)]
    pub order_inversion_ns_mean: f64,
    /// What the emulated device itself gave: each realised latency less the time its thread,
    /// woken for the completion, then queued for a free core past the modelled end — a wait it
    /// would have after a real device's completion too. These are the emulator's own error;
    /// the realised figures above are what the database saw. Equal to them where the kernel
    /// does not account run-queue time (/proc/thread-self/schedstat).
    #[serde(default)]
    pub emulated_lat_ns_mean: f64,
    #[serde(default)]
    pub emulated_lat_ns_p50: u64,
    #[serde(default)]
    pub emulated_lat_ns_p90: u64,
    #[serde(default)]
    pub emulated_lat_ns_p99: u64,
    #[serde(default)]
    pub emulated_lat_ns_p999: u64,
    #[serde(default)]
    pub emulated_off_pct: f64,
    #[serde(default)]
    pub emulated_p99_off_pct: f64,
    #[serde(default)]
    pub emulated_late_pct: f64,
    /// The time per I/O its thread queued for a core past the modelled completion, and the share
    /// of I/Os late only by that.
    #[serde(default)]
    pub cpu_queue_ns_mean: f64,
    #[serde(default)]
    pub cpu_queue_late_pct: f64,
    /// The realised latencies by the I/O's kind: what the database waited for its reads, writes
    /// and syncs, CPU queue included — the figures a trace of a real device gives per operation
    /// (`oltplab trace stat`). Empty for replays, whose traces hold them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub realised_by_kind: Vec<KindLatency>,
}

/// The realised latency distribution of one kind of I/O.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KindLatency {
    pub kind: IoKind,
    pub ios: u64,
    pub realised_lat_ns_p50: u64,
    pub realised_lat_ns_p90: u64,
    pub realised_lat_ns_p99: u64,
}

/// Realised mean latency further than this from the model's is off target.
pub const OFF_TARGET_PCT: f64 = 5.0;
/// Realised p99 further than this from the model's is off target.
pub const P99_OFF_TARGET_PCT: f64 = 25.0;
/// More I/Os than this ending late (or early) is off target.
pub const LATE_TARGET_PCT: f64 = 10.0;

/// Whether an I/O's realised latency is far enough from its modelled one to count as late or
/// early: max(10 µs, 10 % of the modelled latency).
pub fn lateness_tolerance_ns(modelled_latency_ns: u64) -> u64 {
    (modelled_latency_ns / 10).max(10_000)
}

impl Fidelity {
    /// Off target by its tail, its share of late or early I/Os, or its mean.
    pub fn off_target(&self) -> bool {
        self.problem().is_some()
    }

    /// What is off in the emulator's own timing (its CPU queue taken out), as a phrase naming the
    /// measured figures, e.g. "the emulated p99 latency was 3.57 ms against the model's 700 µs
    /// (+410 %); 23 % of I/Os ended late"; None when on target.
    pub fn problem(&self) -> Option<String> {
        if self.ios == 0 {
            return None;
        }
        let mut parts = Vec::new();
        if self.emulated_p99_off_pct.abs() > P99_OFF_TARGET_PCT {
            parts.push(format!(
                "the emulated p99 latency (the realised one less waits for a free core) was {} against the model's {} ({:+.0} %, more than ±{P99_OFF_TARGET_PCT:.0} %)",
                format_ns(self.emulated_lat_ns_p99 as f64),
                format_ns(self.modelled_lat_ns_p99 as f64),
                self.emulated_p99_off_pct
            ));
        }
        if self.emulated_late_pct > LATE_TARGET_PCT {
            parts.push(format!(
                "{:.0} % of I/Os ended late by more than max(10 µs, 10 %)",
                self.emulated_late_pct
            ));
        }
        if self.early_pct > LATE_TARGET_PCT {
            parts.push(format!(
                "{:.0} % of I/Os ended early by more than max(10 µs, 10 %)",
                self.early_pct
            ));
        }
        if self.emulated_off_pct.abs() > OFF_TARGET_PCT {
            parts.push(format!(
                "the emulated mean latency was {:+.1} % off the model's",
                self.emulated_off_pct
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// When the database saw a tail or a late share beyond the targets that its threads' waits
    /// for a free core (after the modelled completion) made: the machine's load, which a real
    /// device's completions would meet too — a phrase naming the figures; None otherwise.
    pub fn cpu_queue_problem(&self) -> Option<String> {
        let realised_off = self.p99_off_pct.abs() > P99_OFF_TARGET_PCT
            || self.late_pct > LATE_TARGET_PCT
            || self.off_pct.abs() > OFF_TARGET_PCT;
        (self.ios > 0 && realised_off && self.cpu_queue_late_pct > 0.0).then(|| {
            format!(
                "after {:.0} % of its I/Os completed the thread queued for a free core long enough to be late ({} per I/O on average), so the database saw a p99 latency of {} against the model's {} ({:+.0} %) and a mean {:+.1} % off; the emulated device's own p99 was {:+.0} % off",
                self.cpu_queue_late_pct,
                format_ns(self.cpu_queue_ns_mean),
                format_ns(self.realised_lat_ns_p99 as f64),
                format_ns(self.modelled_lat_ns_p99 as f64),
                self.p99_off_pct,
                self.off_pct,
                self.emulated_p99_off_pct
            )
        })
    }
}

impl fmt::Display for Fidelity {
    /// One line for the terminal: the two distributions' mean and p99, the per-I/O shares, and
    /// the spin.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "latency modelled mean {} p99 {}, emulated mean {} p99 {} ({:+.1} %, p99 {:+.0} %), realised with waits for a core mean {} p99 {} ({:+.1} %, p99 {:+.0} %); {:.1} % of I/Os late ({:.1} % only by waits for a core), {:.1} % early; waits woke {} late on average; their spin took {:.1} % of the machine",
            format_ns(self.modelled_lat_ns_mean),
            format_ns(self.modelled_lat_ns_p99 as f64),
            format_ns(self.emulated_lat_ns_mean),
            format_ns(self.emulated_lat_ns_p99 as f64),
            self.emulated_off_pct,
            self.emulated_p99_off_pct,
            format_ns(self.realised_lat_ns_mean),
            format_ns(self.realised_lat_ns_p99 as f64),
            self.off_pct,
            self.p99_off_pct,
            self.late_pct,
            self.cpu_queue_late_pct,
            self.early_pct,
            format_ns(self.wake_late_ns_mean),
            self.spin_machine_pct
        )
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
    /// are reserved for it. Arrivals reach each device in nondecreasing order: one stamped before
    /// an arrival the device already took is taken at that arrival (counted in
    /// [`Fidelity::order_inversions`]). `host` returns `submit_ns`.
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
        let c = &w[device.counters..device.counters + DEVICE_WORDS];
        // The model serves in the order it is called, from `max(arrival, busy)`: an I/O stamped
        // before one it already took (its thread lost the race to this lock) arrives after it.
        let last = c[D_LAST_ARRIVAL].load(Ordering::Relaxed);
        let submit_ns = if submit_ns < last {
            w[state::F_INVERSIONS].fetch_add(1, Ordering::Relaxed);
            w[state::F_INVERSION_SUM].fetch_add(last - submit_ns, Ordering::Relaxed);
            last
        } else {
            c[D_LAST_ARRIVAL].store(submit_ns, Ordering::Relaxed);
            submit_ns
        };
        let done = device.node.submit(cx, submit_ns, kind, addr, len);
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

    /// Sleeps until `deadline_ns` (CLOCK_MONOTONIC) less a small adaptive margin, then spins the
    /// rest (see [`wait_until`]); counts the lateness and the spin. Returns how long the thread
    /// queued for a free core during the wait (0 where the kernel does not say), for
    /// [`Emulator::record_realised`].
    pub fn wait_until(&self, deadline_ns: u64) -> u64 {
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
        w[state::F_MARGIN].store(MARGIN_NS.load(Ordering::Relaxed), Ordering::Relaxed);
        waited.cpu_queue_ns
    }

    /// Holds the calling thread until an I/O it began at `start_ns`, which the model completes at
    /// `deadline_ns`, is done, and records the I/O. Never returns before the modelled completion:
    /// lateness (a busy machine wakes threads late) is measured and reported, not paid back by
    /// ending later waits early — that kept the mean right by construction, but moved the error
    /// into the tail and made a thread's next I/O reach the device before its previous one had
    /// completed there (docs/emulate.md).
    ///
    /// Returns the I/O's end for a trace: the device's, i.e. the modelled completion, so that a
    /// causal replay sees the device's order, not the scheduler's; on `host` (no model) the real end.
    pub fn complete(&self, kind: IoKind, start_ns: u64, deadline_ns: u64) -> u64 {
        let cpu_queue_ns = self.wait_until(deadline_ns.max(start_ns));
        let end_ns = now_ns();
        self.region.words()
            [state::kind_hist(kind) + state::bucket(end_ns.saturating_sub(start_ns))]
        .fetch_add(1, Ordering::Relaxed);
        self.record_realised(
            deadline_ns.saturating_sub(start_ns),
            end_ns.saturating_sub(start_ns),
            cpu_queue_ns,
        );
        if self.is_host() {
            end_ns
        } else {
            deadline_ns
        }
    }

    /// Records one I/O's modelled and realised latency for [`Emulator::fidelity`], and how long
    /// its thread queued for a free core while it waited (`cpu_queue_ns`): the part of the
    /// lateness up to that is the machine's load, not the emulator's timing.
    pub fn record_realised(
        &self,
        modelled_latency_ns: u64,
        realised_latency_ns: u64,
        cpu_queue_ns: u64,
    ) {
        let w = self.region.words();
        let add = |i: usize, n: u64| {
            w[i].fetch_add(n, Ordering::Relaxed);
        };
        let queue_ns = cpu_queue_ns.min(realised_latency_ns.saturating_sub(modelled_latency_ns));
        let emulated_latency_ns = realised_latency_ns - queue_ns;
        add(state::F_IOS, 1);
        add(state::F_MODELLED_SUM, modelled_latency_ns);
        add(state::F_REALISED_SUM, realised_latency_ns);
        add(state::F_EMULATED_SUM, emulated_latency_ns);
        add(state::F_CPU_QUEUE_SUM, queue_ns);
        add(
            state::F_ABS_ERROR_SUM,
            realised_latency_ns.abs_diff(modelled_latency_ns),
        );
        let tolerance = lateness_tolerance_ns(modelled_latency_ns);
        let late = |latency_ns: u64| latency_ns > modelled_latency_ns + tolerance;
        if late(realised_latency_ns) {
            add(state::F_LATE, 1);
            if !late(emulated_latency_ns) {
                add(state::F_CPU_QUEUE_LATE, 1);
            }
        } else if realised_latency_ns + tolerance < modelled_latency_ns {
            add(state::F_EARLY, 1);
        }
        if late(emulated_latency_ns) {
            add(state::F_EMULATED_LATE, 1);
        }
        add(
            state::F_HIST_MODELLED + state::bucket(modelled_latency_ns),
            1,
        );
        add(
            state::F_HIST_REALISED + state::bucket(realised_latency_ns),
            1,
        );
        add(
            state::F_HIST_EMULATED + state::bucket(emulated_latency_ns),
            1,
        );
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
        w[state::F_RESET_AT].store(now_ns(), Ordering::Relaxed);
    }

    /// Modelled against realised latency so far, over every process sharing the state.
    pub fn fidelity(&self) -> Fidelity {
        let w = self.region.words();
        let load = |i: usize| w[i].load(Ordering::Relaxed);
        let ios = load(state::F_IOS);
        let histogram = |base: usize| -> Vec<u64> {
            (0..state::HIST_BUCKETS).map(|i| load(base + i)).collect()
        };
        let (modelled_hist, realised_hist, emulated_hist) = (
            histogram(state::F_HIST_MODELLED),
            histogram(state::F_HIST_REALISED),
            histogram(state::F_HIST_EMULATED),
        );
        let q = |counts: &[u64], quantile: f64| quantile_of(counts, quantile);
        let per_io = |sum: u64| {
            if ios == 0 {
                0.0
            } else {
                sum as f64 / ios as f64
            }
        };
        let pct = |n: u64| per_io(n) * 100.0;
        let off = |realised: f64, modelled: f64| {
            if modelled > 0.0 {
                (realised - modelled) / modelled * 100.0
            } else {
                0.0
            }
        };
        let modelled = per_io(load(state::F_MODELLED_SUM));
        let realised = per_io(load(state::F_REALISED_SUM));
        let wakes = load(state::F_WAKES);
        let reset_at = load(state::F_RESET_AT);
        let window_s = if reset_at == 0 {
            0.0
        } else {
            now_ns().saturating_sub(reset_at) as f64 / 1e9
        };
        let spin_cpu_s = load(state::F_SPIN_SUM) as f64 / 1e9;
        let inversions = load(state::F_INVERSIONS);
        let (modelled_p99, realised_p99) = (q(&modelled_hist, 0.99), q(&realised_hist, 0.99));
        let emulated_p99 = q(&emulated_hist, 0.99);
        let emulated = per_io(load(state::F_EMULATED_SUM));
        Fidelity {
            ios,
            modelled_lat_ns_mean: modelled,
            realised_lat_ns_mean: realised,
            modelled_lat_ns_p50: q(&modelled_hist, 0.5),
            modelled_lat_ns_p90: q(&modelled_hist, 0.9),
            modelled_lat_ns_p99: modelled_p99,
            modelled_lat_ns_p999: q(&modelled_hist, 0.999),
            realised_lat_ns_p50: q(&realised_hist, 0.5),
            realised_lat_ns_p90: q(&realised_hist, 0.9),
            realised_lat_ns_p99: realised_p99,
            realised_lat_ns_p999: q(&realised_hist, 0.999),
            off_pct: off(realised, modelled),
            p99_off_pct: off(realised_p99 as f64, modelled_p99 as f64),
            abs_error_ns_mean: per_io(load(state::F_ABS_ERROR_SUM)),
            late_pct: pct(load(state::F_LATE)),
            early_pct: pct(load(state::F_EARLY)),
            wake_late_ns_mean: if wakes == 0 {
                0.0
            } else {
                load(state::F_WAKE_LATE_SUM) as f64 / wakes as f64
            },
            wake_late_ns_max: load(state::F_WAKE_LATE_MAX),
            wake_early_ns: match load(state::F_MARGIN) {
                0 => spin_margin_ns(),
                margin => margin,
            },
            spin_cpu_s,
            window_s,
            spin_machine_pct: if window_s > 0.0 {
                spin_cpu_s / (window_s * cores()) * 100.0
            } else {
                0.0
            },
            order_inversions: inversions,
            order_inversion_ns_mean: if inversions == 0 {
                0.0
            } else {
                load(state::F_INVERSION_SUM) as f64 / inversions as f64
            },
            emulated_lat_ns_mean: emulated,
            emulated_lat_ns_p50: q(&emulated_hist, 0.5),
            emulated_lat_ns_p90: q(&emulated_hist, 0.9),
            emulated_lat_ns_p99: emulated_p99,
            emulated_lat_ns_p999: q(&emulated_hist, 0.999),
            emulated_off_pct: off(emulated, modelled),
            emulated_p99_off_pct: off(emulated_p99 as f64, modelled_p99 as f64),
            emulated_late_pct: pct(load(state::F_EMULATED_LATE)),
            cpu_queue_ns_mean: per_io(load(state::F_CPU_QUEUE_SUM)),
            cpu_queue_late_pct: pct(load(state::F_CPU_QUEUE_LATE)),
            realised_by_kind: [IoKind::Read, IoKind::Write, IoKind::Flush]
                .into_iter()
                .filter_map(|kind| {
                    let counts = histogram(state::kind_hist(kind));
                    let ios: u64 = counts.iter().sum();
                    (ios > 0).then(|| KindLatency {
                        kind,
                        ios,
                        realised_lat_ns_p50: q(&counts, 0.5),
                        realised_lat_ns_p90: q(&counts, 0.9),
                        realised_lat_ns_p99: q(&counts, 0.99),
                    })
                })
                .collect(),
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

/// The quantile `quantile` (0–1) of a histogram of [`state::bucket`]s, as its bucket's middle.
fn quantile_of(counts: &[u64], quantile: f64) -> u64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0;
    }
    let want = ((total as f64 * quantile).ceil() as u64).max(1);
    let mut seen = 0;
    for (b, c) in counts.iter().enumerate() {
        seen += c;
        if seen >= want {
            return state::bucket_value(b);
        }
    }
    0
}

/// The machine's online cores, for the spin's share of it.
fn cores() -> f64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()) as f64
}

/// How long before a deadline a sleep ends, to spin the rest: an estimate of the median of this
/// machine's timer overshoot (with 1 ns timer slack; the wait for a core after it left out, see
/// [`queued_since`]), kept between [`MARGIN_MIN_NS`] and [`MARGIN_MAX_NS`].
///
/// The trade: every nanosecond of margin a wait does not overshoot is spun, on a core the database
/// could use; every nanosecond of overshoot past the margin is lateness. At the median half the
/// waits end on time and the other half late by the overshoot's spread above its median (a few
/// µs on a quiet machine), and the spin per wait stays a few µs. The cap keeps a loaded machine,
/// whose overshoots grow, from turning every wait into a spin that loads it more: past it,
/// lateness shows in the fidelity figures instead (bench/emulator-timing measures the trade).
pub fn spin_margin_ns() -> u64 {
    let now = MARGIN_NS.load(Ordering::Relaxed);
    if now != 0 {
        return now;
    }
    static CALIBRATED: OnceLock<()> = OnceLock::new();
    CALIBRATED.get_or_init(|| {
        fine_timer_slack();
        let mut over: Vec<u64> = (0..15)
            .map(|_| {
                let queued_from = run_delay_ns();
                let target = now_ns() + 100_000;
                sleep_abs(target);
                let whole = now_ns().saturating_sub(target);
                whole.saturating_sub(queued_since(queued_from))
            })
            .collect();
        over.sort_unstable();
        MARGIN_NS.store(
            over[over.len() / 2].clamp(MARGIN_MIN_NS, MARGIN_MAX_NS),
            Ordering::Relaxed,
        );
    });
    MARGIN_NS.load(Ordering::Relaxed)
}

/// The time this thread queued for a core (run delay) since `from`, a [`run_delay_ns`] read
/// while it ran; 0 where the kernel does not say. Taken out of a sleep's overshoot, it leaves the
/// timer's own, which the margin is for: a real device's completion meets the same queue, so a
/// margin that covered it too would let the emulated thread skip a queue the real one pays.
fn queued_since(from: Option<u64>) -> u64 {
    from.zip(run_delay_ns())
        .map_or(0, |(from, to)| to.saturating_sub(from))
}

static MARGIN_NS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
const MARGIN_MIN_NS: u64 = 2_000;
const MARGIN_MAX_NS: u64 = 25_000;
/// The margin's step after each sleep: up when a sleep overshot it, down when not, which settles
/// where half the sleeps overshoot (the median).
const MARGIN_STEP_NS: u64 = 250;

fn adapt_margin(overshoot_ns: u64) {
    let margin = MARGIN_NS.load(Ordering::Relaxed);
    let next = if overshoot_ns > margin {
        margin + MARGIN_STEP_NS
    } else {
        margin.saturating_sub(MARGIN_STEP_NS)
    };
    MARGIN_NS.store(next.clamp(MARGIN_MIN_NS, MARGIN_MAX_NS), Ordering::Relaxed);
}

/// Sets the calling thread's timer slack to 1 ns, once per thread: with Linux's default 50 µs,
/// every sleep — and every timed wait, an io_uring one too — may end up to 50 µs late, which a
/// margin would have to spin away.
pub fn fine_timer_slack() {
    thread_local! {
        static SET: Cell<bool> = const { Cell::new(false) };
    }
    let _ = SET.try_with(|set| {
        if !set.get() {
            // SAFETY: PR_SET_TIMERSLACK takes a number and changes only this thread's timer slack.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
            set.set(true);
        }
    });
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

/// Waits until `deadline_ns`: sleeps with 1 ns timer slack to [`spin_margin_ns`] before it, then
/// spins; returns how late it woke, or None if the deadline had passed already.
pub fn wait_until(deadline_ns: u64) -> Option<u64> {
    wait_timed(deadline_ns).late_ns
}

thread_local! {
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
    /// How long the thread queued for a free core during the wait.
    cpu_queue_ns: u64,
}

fn wait_timed(deadline_ns: u64) -> Waited {
    let now = now_ns();
    if now >= deadline_ns {
        return Waited {
            late_ns: None,
            spin_ns: 0,
            cpu_queue_ns: 0,
        };
    }
    let queued_from = run_delay_ns();
    let margin = spin_margin_ns();
    let mut slept = None;
    if deadline_ns - now > margin {
        fine_timer_slack();
        let wake = deadline_ns - margin;
        sleep_abs(wake);
        slept = Some((wake, now_ns()));
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
    let late_ns = t - deadline_ns;
    // Read after the deadline, so that the read's µs are not lateness; and only where it is
    // needed: to say why a wait was late (on time, the queue cost nothing), or whether a sleep
    // that overshot the margin did so by the timer (within it, the queue cannot change that).
    let overshot = slept.is_some_and(|(wake, woke)| woke.saturating_sub(wake) > margin);
    let queued_ns = if late_ns > 0 || overshot {
        queued_since(queued_from)
    } else {
        0
    };
    if let Some((wake, woke)) = slept {
        adapt_margin(woke.saturating_sub(wake).saturating_sub(queued_ns));
    }
    let cpu_queue_ns = if late_ns > 0 { queued_ns } else { 0 };
    Waited {
        late_ns: Some(late_ns),
        spin_ns,
        cpu_queue_ns,
    }
}

/// The calling thread's time spent runnable but queued for a core, so far (ns): the second field
/// of /proc/thread-self/schedstat. None where the kernel keeps no such account (it then reads
/// three zeros) or the file cannot be read. Raw system calls: inside the LD_PRELOAD shim, libc's open
/// and pread are the shim's own hooks. One read costs ~1 µs.
pub fn run_delay_ns() -> Option<u64> {
    thread_local! {
        static SCHEDSTAT: Schedstat = Schedstat::open();
    }
    let fd = SCHEDSTAT.try_with(|f| f.0).ok().filter(|&fd| fd >= 0)?;
    let mut buf = [0u8; 96];
    // SAFETY: pread into a buffer we own, of its length.
    let n = unsafe {
        libc::syscall(
            libc::SYS_pread64,
            fd,
            buf.as_mut_ptr(),
            buf.len(),
            0 as libc::off_t,
        )
    };
    if n <= 0 {
        return None;
    }
    let text = std::str::from_utf8(&buf[..n as usize]).ok()?;
    let mut fields = text.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
    let (_cpu_ns, delay_ns, timeslices) = (fields.next()??, fields.next()??, fields.next()??);
    // A running thread has had at least one time slice; without the account all read 0.
    (timeslices > 0).then_some(delay_ns)
}

/// This thread's /proc/thread-self/schedstat, open while the thread lives (-1: unavailable).
struct Schedstat(i32);

impl Schedstat {
    fn open() -> Schedstat {
        let path = c"/proc/thread-self/schedstat";
        // SAFETY: openat with a NUL-terminated path we own; the result is checked.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat,
                libc::AT_FDCWD,
                path.as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            )
        };
        Schedstat(if fd < 0 { -1 } else { fd as i32 })
    }
}

impl Drop for Schedstat {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: closes the descriptor this thread opened and nothing else holds.
            unsafe { libc::syscall(libc::SYS_close, self.0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_core::testing::{pin_to_cpu0, BusyCore};

    /// Live: an idle-class sleeper on a core two busy threads hold queues for a core after most of
    /// its wake-ups (it does not preempt them). The whole overshoot then holds that queue; the
    /// timer's overshoot, which the spin margin follows, must not — else the margin would let the
    /// emulated thread join the queue early, ahead of where a real completion puts it.
    #[test]
    fn the_margin_s_overshoot_leaves_out_the_queue_for_a_core() {
        if run_delay_ns().is_none() {
            oltplab_core::testing::skip(
                oltplab_core::testing::Need::Kernel,
                "the kernel's run-queue account (/proc/thread-self/schedstat, CONFIG_SCHED_INFO)",
            );
            return;
        }
        let busy = BusyCore::new(2);
        let sleeper = std::thread::spawn(|| {
            pin_to_cpu0();
            // SAFETY: moves this thread (0: the caller) to SCHED_IDLE, which needs no privilege:
            // it then never preempts the busy threads when it wakes.
            unsafe {
                let param = libc::sched_param { sched_priority: 0 };
                assert_eq!(libc::sched_setscheduler(0, libc::SCHED_IDLE, &param), 0);
            }
            fine_timer_slack();
            let (mut whole, mut timer) = (Vec::new(), Vec::new());
            for _ in 0..60 {
                let queued_from = run_delay_ns();
                let wake = now_ns() + 200_000;
                sleep_abs(wake);
                let overshoot = now_ns() - wake;
                whole.push(overshoot);
                timer.push(overshoot.saturating_sub(queued_since(queued_from)));
            }
            whole.sort_unstable();
            timer.sort_unstable();
            (whole[30], timer[30])
        });
        let (whole_p50, timer_p50) = sleeper.join().unwrap();
        drop(busy);
        eprintln!("overshoot p50: whole {whole_p50} ns, timer {timer_p50} ns");
        assert!(
            whole_p50 > 200_000,
            "the sleeper never queued: {whole_p50} ns"
        );
        assert!(
            timer_p50 < whole_p50 / 4 && timer_p50 < 100_000,
            "the queue stayed in the timer's overshoot: {timer_p50} of {whole_p50} ns"
        );
    }
}
