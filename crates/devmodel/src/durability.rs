//! What a power cut leaves on an emulated device: the durability side of a device model.
//!
//! A device's write cache is one of four kinds ([`CacheMode`], a device parameter in `params`); what a cut may lose follows from
//! it, from the cache's size and from the device's atomic unit (its sector). The timing model is
//! not involved: it keeps following the catalogue's `write_cache` / `power_loss_protected`, which
//! also give each device's default cache mode here, so that a catalogue device means one drive.
//!
//! [`CrashLog`] keeps, for every write since the device's last durable point, the contents the
//! write replaced and the contents it wrote. At a cut, [`CrashLog::states`] draws on-disk states
//! the model allows: everything made durable stays; of the rest, any subset is lost, and a write
//! that survives may survive only in some of its sectors (torn). The draw is deterministic for a
//! seed, and one cut gives as many different states as asked for.

use std::collections::VecDeque;

use serde::Serialize;

use crate::emulator::slot_device;
use crate::params::{device_params, CacheMode, DeviceParams, CACHE_KEY, SECTOR_KEY};
use crate::spec::Spec;

/// Every catalogue device's default atomic unit: the 512-byte logical sector they were formatted
/// with; a drive promises that one logical sector is written whole or not at all, and no more.
pub const DEFAULT_SECTOR_BYTES: u64 = 512;

/// What a power cut can do to one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Durability {
    pub cache: CacheMode,
    /// Most data the cache holds that the media does not (what a cut can lose at most).
    pub cache_bytes: u64,
    /// The atomic unit: a write is torn only at multiples of it.
    pub sector_bytes: u64,
}

impl Durability {
    /// A device that loses nothing.
    pub const DURABLE: Durability = Durability {
        cache: CacheMode::Off,
        cache_bytes: 0,
        sector_bytes: DEFAULT_SECTOR_BYTES,
    };

    /// The durability of one device of `spec` (a layout's device `index`; else the spec).
    pub fn of(spec: &Spec, index: u8) -> Durability {
        match spec {
            Spec::Layout { devices, .. } => devices
                .get(index as usize)
                .map_or(Durability::DURABLE, |d| Durability::of(d, 0)),
            Spec::Device { entry, overrides } => {
                let given = |k: &str| overrides.iter().find(|(o, _)| *o == k).map(|(_, v)| *v);
                let mib = |x: f64| (x * 1024.0 * 1024.0) as u64;
                let (default, cache_bytes) = match device_params(entry, overrides) {
                    DeviceParams::Hdd(p) if p.write_cache >= 0.5 => {
                        (CacheMode::Volatile, mib(p.cache_mib))
                    }
                    DeviceParams::Hdd(p) => (CacheMode::Off, mib(p.cache_mib)),
                    DeviceParams::Flash(p) if p.power_loss_protected >= 0.5 => {
                        (CacheMode::Battery, mib(p.write_buffer_mib))
                    }
                    DeviceParams::Flash(p) if p.write_buffer_mib > 0.0 => {
                        (CacheMode::Volatile, mib(p.write_buffer_mib))
                    }
                    DeviceParams::Flash(_) | DeviceParams::Ram(_) | DeviceParams::Host => {
                        (CacheMode::Off, 0)
                    }
                };
                Durability {
                    cache: given(CACHE_KEY).map_or(default, CacheMode::from_code),
                    cache_bytes,
                    sector_bytes: given(SECTOR_KEY).map_or(DEFAULT_SECTOR_BYTES, |s| s as u64),
                }
            }
            // The members' caches together; a cut hits every member at once.
            Spec::Raid { disks, member, .. } => {
                let m = Durability::of(member, 0);
                Durability {
                    cache_bytes: m.cache_bytes.saturating_mul(*disks as u64),
                    ..m
                }
            }
            // The controller's cache decides: behind a battery the controller runs the drives with
            // their caches off (as S1's and S2's controllers did).
            Spec::WbCache {
                backing,
                size_bytes,
                cache,
                ..
            } => {
                let b = Durability::of(backing, 0);
                Durability {
                    cache: *cache,
                    cache_bytes: *size_bytes,
                    sector_bytes: b.sector_bytes,
                }
            }
            // Writes go through to the backing; the cache device holds copies only.
            Spec::ReadCache { backing, .. } => Durability::of(backing, 0),
            // The operating system's page cache honours fsync.
            Spec::PageCache {
                backing,
                size_bytes,
            } => Durability {
                cache: CacheMode::Volatile,
                cache_bytes: *size_bytes,
                sector_bytes: Durability::of(backing, 0).sector_bytes,
            },
        }
    }

    /// One line on what a cut does, e.g. `cache=volatile (16m), sector=512: a cut loses the
    /// writes not yet flushed, at most 16m`.
    pub fn describe(&self) -> String {
        let size = crate::spec::format_size(self.cache_bytes);
        let what = match self.cache {
            CacheMode::Off => "a write is durable when it completes".to_string(),
            CacheMode::Battery => "the cache survives a cut: nothing is lost".to_string(),
            CacheMode::Volatile => {
                format!("a cut loses the writes not yet flushed, at most {size}")
            }
            CacheMode::Lying => {
                format!(
                    "flushes make nothing durable: a cut loses the newest writes, at most {size}"
                )
            }
        };
        let cache = if self.cache_bytes > 0 {
            format!("cache={} ({size})", self.cache)
        } else {
            format!("cache={}", self.cache)
        };
        format!(
            "{cache}, sector={}: {what}",
            crate::spec::format_size(self.sector_bytes)
        )
    }
}

/// One write a cut may still lose.
#[derive(Clone, Debug)]
struct Pending {
    file: u32,
    offset: u64,
    /// What the write replaced (zeros past the end of the file).
    old: Vec<u8>,
    new: Vec<u8>,
    device: u8,
}

/// A change to the files as they were at the cut; applied in order, they give a crash state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// The file's slot (as the emulator places it).
    pub file: u32,
    pub offset: u64,
    pub data: Vec<u8>,
}

/// One on-disk state a cut may leave.
#[derive(Clone, Debug, Default)]
pub struct CrashState {
    /// The draw that made it (the state is a function of the log and this).
    pub seed: u64,
    /// Writes the cut could lose: acknowledged, not yet durable.
    pub pending_writes: u64,
    /// Of those, lost entirely.
    pub lost_writes: u64,
    /// Of those, on the media only in some of their sectors.
    pub torn_writes: u64,
    pub patches: Vec<Patch>,
}

/// Every write since each device's last durable point, with what it replaced: enough to produce
/// any state a power cut may leave. Writes only enter it on devices whose cache can lose them.
#[derive(Clone, Debug)]
pub struct CrashLog {
    devices: Vec<Durability>,
    /// Oldest first, over all devices (the order writes reached the files).
    pending: VecDeque<Pending>,
    /// New bytes pending per device (what its cache holds).
    pending_bytes: Vec<u64>,
}

impl CrashLog {
    /// A log for every device of `spec`.
    pub fn new(spec: &Spec) -> CrashLog {
        let n = spec.devices().len().max(1);
        CrashLog {
            devices: (0..n as u8).map(|i| Durability::of(spec, i)).collect(),
            pending: VecDeque::new(),
            pending_bytes: vec![0; n],
        }
    }

    /// The durability of device `index` (the first for an unknown index).
    pub fn durability(&self, device: u8) -> Durability {
        self.devices
            .get(device as usize)
            .copied()
            .unwrap_or(self.devices[0])
    }

    /// True if a write to the file in `slot` must be logged with what it replaces.
    pub fn keeps(&self, slot: u32) -> bool {
        self.durability(slot_device(slot)).cache.loses_writes()
            && self.durability(slot_device(slot)).cache_bytes > 0
    }

    /// A write of `new` at `offset` of the file in `slot`, which replaced `old` (as long as `new`).
    pub fn write(&mut self, slot: u32, offset: u64, old: Vec<u8>, new: Vec<u8>) {
        if !self.keeps(slot) {
            return;
        }
        let device = slot_device(slot);
        let d = self.durability(device);
        let di = (device as usize).min(self.pending_bytes.len() - 1);
        self.pending_bytes[di] += new.len() as u64;
        self.pending.push_back(Pending {
            file: slot,
            offset,
            old,
            new,
            device,
        });
        // A full cache has written its oldest data to the media to take the new (the cache may
        // destage in any order, but never holds more than its size).
        while self.pending_bytes[di] > d.cache_bytes {
            let Some(i) = self.pending.iter().position(|p| p.device == device) else {
                break;
            };
            let p = self.pending.remove(i).expect("a position found above");
            self.pending_bytes[di] -= p.new.len() as u64;
        }
    }

    /// A flush (fsync, FUA) of `device` completed: a volatile cache has made every earlier write
    /// durable; a lying one has not.
    pub fn flush(&mut self, device: u8) {
        if self.durability(device).cache == CacheMode::Lying {
            return;
        }
        self.pending.retain(|p| p.device != device);
        let di = (device as usize).min(self.pending_bytes.len() - 1);
        self.pending_bytes[di] = 0;
    }

    /// The file in `slot` was cut to `size` bytes: its pending writes past that end went with it
    /// (file sizes are metadata, which is not modelled); those before it can still be lost.
    /// SQLite truncates the database to its size at the end of every full checkpoint, so this
    /// must keep what lies below the new end.
    pub fn truncate(&mut self, slot: u32, size: u64) {
        let n = self.pending_bytes.len();
        let mut freed = vec![0u64; n];
        self.pending.retain_mut(|p| {
            if p.file != slot || p.offset + p.new.len() as u64 <= size {
                return true;
            }
            let keep = size.saturating_sub(p.offset) as usize;
            freed[(p.device as usize).min(n - 1)] += (p.new.len() - keep) as u64;
            p.new.truncate(keep);
            p.old.truncate(keep);
            keep > 0
        });
        for (b, f) in self.pending_bytes.iter_mut().zip(freed) {
            *b -= f;
        }
    }

    /// The file in `slot` was deleted: file system metadata, which is not modelled, so its writes
    /// count as durable from here (none of them can be restored into a file that is gone).
    pub fn forget_file(&mut self, slot: u32) {
        let n = self.pending_bytes.len();
        let mut freed = vec![0u64; n];
        self.pending.retain(|p| {
            let gone = p.file == slot;
            if gone {
                freed[(p.device as usize).min(n - 1)] += p.new.len() as u64;
            }
            !gone
        });
        for (b, f) in self.pending_bytes.iter_mut().zip(freed) {
            *b -= f;
        }
    }

    /// Writes a cut would find not yet durable.
    pub fn pending_writes(&self) -> u64 {
        self.pending.len() as u64
    }

    /// `n` states a cut now may leave, each drawn from `seed` and its index: every write made
    /// durable is kept; each pending write is lost with a probability drawn per state (so that
    /// states range from losing little to losing most), and a kept write of several sectors is
    /// torn — some of its sectors lost — in a quarter of cases.
    pub fn states(&self, seed: u64, n: usize) -> Vec<CrashState> {
        (0..n as u64)
            .map(|k| self.state(seed.wrapping_add(k.wrapping_mul(0x9E37_79B9_7F4A_7C15))))
            .collect()
    }

    fn state(&self, seed: u64) -> CrashState {
        let mut rng = SplitMix(seed);
        let p_lost = 0.1 + 0.8 * rng.unit();
        let mut st = CrashState {
            seed,
            pending_writes: self.pending.len() as u64,
            ..Default::default()
        };
        // Back to the last durable point: undo every pending write, newest first.
        for p in self.pending.iter().rev() {
            st.patches.push(Patch {
                file: p.file,
                offset: p.offset,
                data: p.old.clone(),
            });
        }
        // Then what reached the media, in the order it was written (a later write to the same
        // sector replaced an earlier one in the cache).
        for p in &self.pending {
            if rng.unit() < p_lost {
                st.lost_writes += 1;
                continue;
            }
            let sector = self.durability(p.device).sector_bytes.max(1);
            let end = p.offset + p.new.len() as u64;
            let pieces: Vec<(u64, u64)> = {
                let mut v = Vec::new();
                let mut at = p.offset;
                while at < end {
                    let next = ((at / sector) + 1) * sector;
                    v.push((at, next.min(end)));
                    at = next.min(end);
                }
                v
            };
            if pieces.len() > 1 && rng.unit() < 0.25 {
                let kept: Vec<bool> = pieces.iter().map(|_| rng.unit() < 0.5).collect();
                if kept.iter().all(|k| *k) {
                    st.patches.push(whole(p));
                    continue;
                }
                st.torn_writes += 1;
                for (&(a, b), k) in pieces.iter().zip(kept) {
                    if k {
                        let from = (a - p.offset) as usize;
                        let to = (b - p.offset) as usize;
                        st.patches.push(Patch {
                            file: p.file,
                            offset: a,
                            data: p.new[from..to].to_vec(),
                        });
                    }
                }
            } else {
                st.patches.push(whole(p));
            }
        }
        st
    }
}

fn whole(p: &Pending) -> Patch {
    Patch {
        file: p.file,
        offset: p.offset,
        data: p.new.clone(),
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): small, and the same draws for the same seed everywhere.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::slot;
    use crate::parser::parse_spec;

    fn of(text: &str) -> Durability {
        Durability::of(&parse_spec(text).unwrap(), 0)
    }

    #[test]
    fn each_catalogue_device_has_the_cache_it_shipped_with() {
        let mib = |m: u64| m << 20;
        for (name, cache, bytes) in [
            ("hdd-15k", CacheMode::Off, mib(16)),
            ("sata-ssd-2010", CacheMode::Volatile, mib(16)),
            ("sas-ssd-2012", CacheMode::Battery, mib(32)),
            ("pcie-flash-2012", CacheMode::Battery, mib(64)),
            ("nvme-gen4", CacheMode::Battery, mib(256)),
            ("ram", CacheMode::Off, 0),
        ] {
            let d = of(name);
            assert_eq!((d.cache, d.cache_bytes), (cache, bytes), "{name}");
            assert_eq!(d.sector_bytes, 512, "{name}");
        }
        // The timing model's switch gives the default; cache= overrides it.
        assert_eq!(of("hdd-10k{write_cache=on}").cache, CacheMode::Volatile);
        assert_eq!(
            of("sata-ssd-2010{power_loss_protected=1}").cache,
            CacheMode::Battery
        );
        assert_eq!(of("wbcache(raid5(4,hdd-15k))").cache, CacheMode::Battery);
        let raid = of("wbcache(raid5(4,hdd-15k),size=512m,cache=volatile)");
        assert_eq!(
            (raid.cache, raid.cache_bytes),
            (CacheMode::Volatile, mib(512))
        );
        assert_eq!(of("raid10(4,sata-ssd-2010)").cache_bytes, mib(64));
        assert_eq!(of("pagecache(hdd-15k,size=4g)").cache, CacheMode::Volatile);
        let layout = parse_spec("data=hdd-15k,log=sata-ssd-2010{cache=lying}").unwrap();
        assert_eq!(Durability::of(&layout, 1).cache, CacheMode::Lying);
        assert_eq!(Durability::of(&layout, 0).cache, CacheMode::Off);
    }

    #[test]
    fn cache_and_sector_parse_name_and_round_trip() {
        for (text, canonical) in [
            (
                "pcie-flash-2012{cache=lying}",
                "pcie-flash-2012{cache=lying}",
            ),
            (
                "hdd-15k{sector=4096,cache=volatile}",
                "hdd-15k{cache=volatile,sector=4k}",
            ),
            (
                "hdd-15k{sector=4k,rpm=10000}",
                "hdd-15k{rpm=10000,sector=4k}",
            ),
            (
                "wbcache(hdd-15k,cache=lying,size=256m)",
                "wbcache(hdd-15k,size=256m,cache=lying)",
            ),
            ("wbcache(hdd-15k,cache=battery)", "wbcache(hdd-15k,size=1g)"),
        ] {
            let spec = parse_spec(text).unwrap();
            assert_eq!(spec.name(), canonical, "{text}");
            assert_eq!(parse_spec(canonical).unwrap(), spec, "{canonical}");
        }
        let d = of("hdd-15k{cache=lying,sector=4k}");
        assert_eq!((d.cache, d.sector_bytes), (CacheMode::Lying, 4096));
        for (text, says) in [
            (
                "hdd-15k{cache=maybe}",
                "unknown cache mode 'maybe'; use off, volatile, lying or battery",
            ),
            ("hdd-15k{sector=1k}", "a sector is 512 or 4k"),
            ("hdd-15k{cache=off,cache=lying}", "given twice"),
            ("host{cache=lying}", "host is the real device"),
            ("ram{cache=volatile}", "no write cache to lose"),
            ("wbcache(hdd-15k,cache=off)", "cannot be off"),
            (
                "wbcache(hdd-15k,cache=sometimes)",
                "battery, volatile or lying",
            ),
        ] {
            let e = parse_spec(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    /// A synthetic writer: `files` in memory, each write fills its range with its own number, so
    /// every byte of a crash state tells which write put it there.
    struct Writer {
        files: Vec<Vec<u8>>,
        log: CrashLog,
        /// (file, offset, len, write number, durable when the cut came)
        writes: Vec<(usize, u64, u64, u8, bool)>,
    }

    impl Writer {
        fn new(spec: &str) -> Writer {
            Writer {
                files: vec![vec![0; 256 << 10]; 2],
                log: CrashLog::new(&parse_spec(spec).unwrap()),
                writes: Vec::new(),
            }
        }
        fn write(&mut self, file: usize, offset: u64, len: u64) {
            let n = self.writes.len() as u8 + 1;
            let range = offset as usize..(offset + len) as usize;
            let old = self.files[file][range.clone()].to_vec();
            self.files[file][range].fill(n);
            self.log
                .write(slot(0, file as u32), offset, old, vec![n; len as usize]);
            self.writes.push((file, offset, len, n, false));
        }
        fn flush(&mut self) {
            self.log.flush(0);
            for w in &mut self.writes {
                w.4 = true;
            }
        }
        fn apply(&self, st: &CrashState) -> Vec<Vec<u8>> {
            let mut files = self.files.clone();
            for p in &st.patches {
                let f = (p.file & ((1 << crate::emulator::SLOT_DEVICE_SHIFT) - 1)) as usize;
                files[f][p.offset as usize..p.offset as usize + p.data.len()]
                    .copy_from_slice(&p.data);
            }
            files
        }
    }

    /// Three rounds of writes, each ending in a flush but the last; sector-aligned, some of
    /// several sectors, some overwriting earlier ones.
    fn run(w: &mut Writer) {
        for round in 0..3u64 {
            for i in 0..8u64 {
                let offset = (round * 3 + i * 5) % 24 * 1024;
                w.write((i % 2) as usize, offset, 512 * (1 + i % 4));
            }
            if round < 2 {
                w.flush();
            }
        }
    }

    #[test]
    fn a_cut_keeps_every_flushed_write_and_an_allowed_subset_of_the_rest() {
        let mut w = Writer::new("sata-ssd-2010");
        run(&mut w);
        let states = w.log.states(7, 16);
        assert_eq!(states.len(), 16);
        let (mut lost, mut kept) = (0, 0);
        for st in &states {
            assert_eq!(st.pending_writes, 8, "the last round is not flushed");
            let files = w.apply(st);
            for (f, file) in files.iter().enumerate() {
                for (x, &b) in file[..32 << 10].iter().enumerate() {
                    let x = x as u64;
                    let covering = |&&(wf, o, l, _, _): &&(usize, u64, u64, u8, bool)| {
                        wf == f && o <= x && x < o + l
                    };
                    // The newest durable write here, and every pending one after it.
                    let durable = w.writes.iter().filter(covering).rfind(|w| w.4);
                    let floor = durable.map_or(0, |d| d.3);
                    let allowed: Vec<u8> = std::iter::once(floor)
                        .chain(
                            w.writes
                                .iter()
                                .filter(covering)
                                .filter(|w| !w.4)
                                .map(|w| w.3),
                        )
                        .collect();
                    assert!(
                        allowed.contains(&b),
                        "file {f} byte {x}: {b} is from neither the durable write {floor} nor a pending one ({allowed:?})"
                    );
                }
            }
            lost += st.lost_writes;
            kept += st.pending_writes - st.lost_writes;
        }
        assert!(
            lost > 0 && kept > 0,
            "16 states lose some and keep some: lost {lost}, kept {kept}"
        );
        // Deterministic for the seed; another seed draws other states.
        let again = w.log.states(7, 16);
        assert!(states
            .iter()
            .zip(&again)
            .all(|(a, b)| a.patches == b.patches));
        let other = w.log.states(8, 16);
        assert!(states
            .iter()
            .zip(&other)
            .any(|(a, b)| a.patches != b.patches));
        // Several different states from one cut.
        let distinct: std::collections::BTreeSet<Vec<Vec<u8>>> =
            states.iter().map(|s| w.apply(s)).collect();
        assert!(
            distinct.len() > 4,
            "only {} distinct states of 16",
            distinct.len()
        );
    }

    #[test]
    fn a_flushed_honest_or_durable_device_loses_nothing() {
        for spec in [
            "sata-ssd-2010",
            "pcie-flash-2012",
            "hdd-15k",
            "wbcache(hdd-15k)",
        ] {
            let mut w = Writer::new(spec);
            run(&mut w);
            w.flush();
            for st in w.log.states(1, 4) {
                assert_eq!((st.pending_writes, st.patches.len()), (0, 0), "{spec}");
            }
        }
        // Unflushed writes on a device without a volatile cache are durable too.
        let mut w = Writer::new("pcie-flash-2012");
        run(&mut w);
        assert_eq!(w.log.pending_writes(), 0);
    }

    #[test]
    fn a_lying_cache_loses_flushed_writes() {
        let mut w = Writer::new("sata-ssd-2010{cache=lying}");
        run(&mut w);
        w.flush();
        assert_eq!(
            w.log.pending_writes(),
            24,
            "the flushes made nothing durable"
        );
        let flushed_lost = w.log.states(3, 8).iter().any(|st| {
            let files = w.apply(st);
            // Some flushed write is neither on the media nor overwritten by a later write.
            w.writes.iter().enumerate().any(|(i, &(f, o, l, n, _))| {
                let later = |x: u64| {
                    w.writes[i + 1..]
                        .iter()
                        .any(|&(f2, o2, l2, _, _)| f2 == f && o2 <= x && x < o2 + l2)
                };
                (o..o + l).any(|x| files[f][x as usize] != n && !later(x))
            })
        });
        assert!(
            flushed_lost,
            "no state of a lying cache lost a flushed write"
        );
        // Its size bounds the loss: a 4 KiB cache holds the newest writes that fit, no more.
        let mut small = Writer::new("sata-ssd-2010{cache=lying,write_buffer_mib=0.00390625}");
        run(&mut small);
        let newest: u64 = small
            .writes
            .iter()
            .rev()
            .scan(0, |sum, w| {
                *sum += w.2;
                (*sum <= 4096).then_some(1)
            })
            .sum();
        assert_eq!(small.log.pending_writes(), newest);
    }

    #[test]
    fn a_truncation_keeps_the_pending_writes_below_the_new_end() {
        let mut w = Writer::new("sata-ssd-2010{cache=lying}");
        w.write(0, 0, 4096);
        w.write(0, 8192, 4096);
        w.write(1, 0, 4096);
        // SQLite's checkpoint cuts the database to its size: here through the second write.
        w.log.truncate(slot(0, 0), 10240);
        assert_eq!(w.log.pending_writes(), 3);
        let undo: Vec<(u64, usize)> = w.log.states(1, 1)[0]
            .patches
            .iter()
            .take(3)
            .map(|p| (p.offset, p.data.len()))
            .collect();
        assert_eq!(undo, [(0, 4096), (8192, 2048), (0, 4096)]);
        w.log.truncate(slot(0, 0), 0);
        assert_eq!(w.log.pending_writes(), 1, "file 1's write stays");
        w.log.forget_file(slot(0, 1));
        assert_eq!(w.log.pending_writes(), 0);
    }

    #[test]
    fn writes_tear_only_at_sector_boundaries() {
        for (spec, sector) in [
            ("sata-ssd-2010", 512u64),
            ("sata-ssd-2010{sector=4k}", 4096),
        ] {
            let mut w = Writer::new(spec);
            // Non-overlapping writes of 8 sectors each, none flushed.
            for i in 0..6u64 {
                w.write(0, i * 8 * sector, 8 * sector);
            }
            let mut torn = 0;
            for st in w.log.states(11, 64) {
                torn += st.torn_writes;
                let files = w.apply(&st);
                for chunk in files[0][..(48 * sector) as usize].chunks(sector as usize) {
                    assert!(
                        chunk.iter().all(|&b| b == chunk[0]),
                        "{spec}: a sector holds bytes of two writes"
                    );
                }
                // Some state tears inside a write (not all its sectors alike).
            }
            assert!(torn > 0, "{spec}: 64 states tore no write");
        }
    }
}
