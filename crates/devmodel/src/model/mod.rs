//! The device models. A spec compiles into a tree of nodes; each node owns a few words of state
//! (busy-until times, head position, cache tables) in the emulator's region. `submit` turns one I/O
//! (time, kind, address, length) into its completion time and reserves what the I/O occupies, so
//! queueing and saturation come out of the model itself.
//!
//! Everything is deterministic for a seed and a sequence of submits.
//!
//! The tree's levels, each a module: `drive` (a single HDD, flash device or memory: the leaves),
//! `raid` (a set of identical members) and `cache` (write-back, read and page caches in front of
//! a device); `base` holds what they all use. Compositions reach what is below them through
//! `base::Model`, which `Node` implements, so no level imports this one.

mod base;
mod cache;
mod drive;
mod raid;

use base::Model;
pub(crate) use base::{Alloc, Ctx};
use cache::page_cache::PageCache;
use cache::read_cache::{CacheStats, ReadCache};
use cache::write_back::WriteBack;
use drive::flash::Flash;
use drive::hdd::{Hdd, SeekCurve, HDD_SEGMENTS};
use drive::ram::Ram;
use raid::Raid;

use crate::catalogue::DeviceKind;
use crate::params::DeviceParams;
use crate::spec::Spec;
use crate::state::St;
use crate::IoKind;

pub(crate) enum Node {
    Host,
    Hdd(Box<Hdd>),
    Flash(Box<Flash>),
    Ram(Ram),
    Raid(Box<Raid<Node>>),
    WbCache(Box<WriteBack<Node>>),
    ReadCache(Box<ReadCache<Node>>),
    PageCache(Box<PageCache<Node>>),
}

/// Checks a catalogue device's parameters (after overrides): each one its model reads is there,
/// with a value the model can use.
pub(crate) fn check_device(spec: &Spec) -> Result<(), String> {
    let Spec::Device { entry, overrides } = spec else {
        return Ok(());
    };
    let params = DeviceParams::of(entry, overrides).map_err(|e| e.to_string())?;
    let positive = |values: &[(&str, f64)]| -> Result<(), String> {
        for (k, v) in values {
            if *v <= 0.0 {
                return Err(format!("{} needs {k} > 0", entry.name));
            }
        }
        Ok(())
    };
    match params {
        DeviceParams::Host => Ok(()),
        DeviceParams::Hdd(p) => {
            positive(&[
                ("capacity_gb", p.capacity_gb),
                ("rpm", p.rpm),
                ("seek_track_ms", p.seek_track_ms),
                ("seek_avg_ms", p.seek_avg_ms),
                ("seek_full_ms", p.seek_full_ms),
                ("media_outer_mb_s", p.media_outer_mb_s),
                ("media_inner_mb_s", p.media_inner_mb_s),
                ("queue_max", p.queue_max),
                ("link_mb_s", p.link_mb_s),
            ])?;
            if p.write_cache != 0.0 && p.write_cache != 1.0 {
                return Err(format!("{}: write_cache is on or off (1 or 0)", entry.name));
            }
            if p.media_inner_mb_s > p.media_outer_mb_s {
                return Err(format!("{}: media_inner_mb_s must not exceed media_outer_mb_s (the outer zone is the fastest)", entry.name));
            }
            if p.queue_max > 256.0 {
                return Err(format!("{}: queue_max is at most 256", entry.name));
            }
            if !(1.0..=HDD_SEGMENTS as f64).contains(&p.cache_segments.round()) {
                return Err(format!(
                    "{}: cache_segments is 1 to {HDD_SEGMENTS}",
                    entry.name
                ));
            }
            SeekCurve::fit(p.seek_track_ms, p.seek_avg_ms, p.seek_full_ms).map(|_| ())
        }
        DeviceParams::Flash(p) => {
            positive(&[
                ("capacity_gb", p.capacity_gb),
                ("channels", p.channels),
                ("dies_per_channel", p.dies_per_channel),
                ("page_kib", p.page_kib),
                ("read_us", p.read_us),
                ("program_us", p.program_us),
                ("waf_random", p.waf_random),
                ("channel_mb_s", p.channel_mb_s),
                ("link_mb_s", p.link_mb_s),
                ("cmd_occupancy_us", p.cmd_occupancy_us),
                ("controllers", p.controllers),
            ])?;
            if p.channels * p.dies_per_channel > 1024.0 || p.controllers > 64.0 {
                return Err(format!(
                    "{}: at most 1024 dies and 64 controllers are modelled",
                    entry.name
                ));
            }
            Ok(())
        }
        DeviceParams::Ram(p) => {
            positive(&[
                ("capacity_gb", p.capacity_gb),
                ("bandwidth_mb_s", p.bandwidth_mb_s),
                ("units", p.units),
            ])?;
            if p.units > 64.0 {
                return Err(format!("{}: at most 64 units", entry.name));
            }
            Ok(())
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
                Node::ReadCache(Box::new(ReadCache::new(
                    stats,
                    backing,
                    cache_node,
                    *size_bytes,
                    alloc,
                )))
            }
            Spec::PageCache {
                backing,
                size_bytes,
            } => {
                let backing = Node::compile(backing, alloc);
                Node::PageCache(Box::new(PageCache::new(backing, *size_bytes, alloc)))
            }
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
            // Only a device that draws takes a seed, so trees without one keep their numbers.
            Node::Flash(f) if f.draws() => {
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                f.init(st, *seed);
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

impl Model for Node {
    fn submit(&self, cx: Ctx, t: u64, kind: IoKind, addr: u64, len: u64) -> u64 {
        Node::submit(self, cx, t, kind, addr, len)
    }

    fn idle_at(&self, st: St) -> u64 {
        Node::idle_at(self, st)
    }
}
