//! The device spec language: a catalogue name with optional overrides, or a composition.
//!
//! ```text
//! spec    := name [ '{' key '=' number { ',' key '=' number } '}' ] [ '(' args ')' ]
//! raid0(N,SPEC[,stripe=64k])  raid1(N,SPEC)  raid10(N,SPEC[,stripe=64k])  raid5(N,SPEC[,stripe=64k])
//! wbcache(SPEC[,size=1g][,readahead=on|off|SIZE][,cache=battery|volatile|lying])  readcache(BACKING,CACHE[,size=…])  pagecache(SPEC,size=…)
//! name{cache=off|volatile|lying|battery,sector=512|4k}: what a power cut can lose (durability.rs)
//! layout  := role '=' spec { ',' role '=' spec }     role := data | log | temp | table:NAME
//! ```
//! A layout puts a database's kinds of files on different devices (`data=raid10(16,hdd-15k),
//! log=pcie-flash-2012`); roles given the same spec share one device, as S3's log and tempdb shared
//! one card. Files of roles not named are on the data device.
//! This module is the parsed tree, [`Spec`], with its canonical name; the parser, which checks
//! each device against its model, is `parser.rs`, above the models that read the tree.

use std::fmt;

use crate::catalogue::{CatalogueEntry, DeviceKind};
use crate::params::{device_params, CacheMode, CACHE_KEY, SECTOR_KEY};

/// Most physical devices one spec may contain (bounds the shared state).
pub const LEAVES_MAX: u64 = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaidLevel {
    Raid0,
    Raid1,
    Raid10,
    Raid5,
}

impl RaidLevel {
    pub fn name(self) -> &'static str {
        match self {
            RaidLevel::Raid0 => "raid0",
            RaidLevel::Raid1 => "raid1",
            RaidLevel::Raid10 => "raid10",
            RaidLevel::Raid5 => "raid5",
        }
    }
}

/// A parsed, validated device spec.
#[derive(Clone, Debug, PartialEq)]
pub enum Spec {
    /// A catalogue device, with any parameter overrides (in catalogue order).
    Device {
        entry: &'static CatalogueEntry,
        overrides: Vec<(&'static str, f64)>,
    },
    Raid {
        level: RaidLevel,
        disks: u32,
        member: Box<Spec>,
        stripe_bytes: u64,
    },
    /// A RAID controller's battery-backed cache: write back, and read-ahead of sequential streams
    /// in chunks of `readahead_bytes` (0: no read-ahead).
    WbCache {
        backing: Box<Spec>,
        size_bytes: u64,
        readahead_bytes: u64,
        /// What a power cut does to the cache: battery-backed unless the spec says otherwise.
        cache: CacheMode,
    },
    /// An SSD read cache that promotes frequently read blocks.
    ReadCache {
        backing: Box<Spec>,
        cache: Box<Spec>,
        size_bytes: u64,
    },
    /// The operating system's page cache.
    PageCache { backing: Box<Spec>, size_bytes: u64 },
    /// Several devices, each holding some of a database's files: only at the top of a spec.
    Layout {
        /// Each role given, in the order given, with the index of its device.
        roles: Vec<(Role, u8)>,
        /// The distinct devices, in the order of their first role (data's is first).
        devices: Vec<Spec>,
    },
}

/// What a database keeps on a device of a [`Spec::Layout`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Everything not placed elsewhere: tables, indexes, catalogs.
    Data,
    /// The write-ahead (redo) log.
    Log,
    /// Temporary files: sorts, hashes, temporary tables.
    Temp,
    /// One table with its indexes.
    Table(String),
}

impl Role {
    pub fn name(&self) -> String {
        match self {
            Role::Data => "data".into(),
            Role::Log => "log".into(),
            Role::Temp => "temp".into(),
            Role::Table(t) => format!("table:{t}"),
        }
    }
}

/// Most devices in one layout (the device index lives in a file's slot number's top byte).
pub const LAYOUT_DEVICES_MAX: usize = 8;
pub const DEFAULT_STRIPE_BYTES: u64 = 64 << 10;
pub const DEFAULT_WBCACHE_BYTES: u64 = 1 << 30;

impl Spec {
    /// The canonical text of the spec: parsing it gives the same spec.
    pub fn name(&self) -> String {
        match self {
            Spec::Device { entry, overrides } => {
                if overrides.is_empty() {
                    entry.name.to_string()
                } else {
                    let list: Vec<String> = overrides
                        .iter()
                        .map(|(k, v)| match *k {
                            CACHE_KEY => format!("{k}={}", CacheMode::from_code(*v)),
                            SECTOR_KEY => format!("{k}={}", format_size(*v as u64)),
                            _ => format!("{k}={}", format_number(*v)),
                        })
                        .collect();
                    format!("{}{{{}}}", entry.name, list.join(","))
                }
            }
            Spec::Raid {
                level,
                disks,
                member,
                stripe_bytes,
            } => match level {
                RaidLevel::Raid1 => format!("raid1({disks},{})", member.name()),
                _ => format!(
                    "{}({disks},{},stripe={})",
                    level.name(),
                    member.name(),
                    format_size(*stripe_bytes)
                ),
            },
            Spec::WbCache {
                backing,
                size_bytes,
                readahead_bytes,
                cache,
            } => format!(
                "wbcache({},size={}{}{})",
                backing.name(),
                format_size(*size_bytes),
                if *readahead_bytes > 0 {
                    format!(",readahead={}", format_size(*readahead_bytes))
                } else {
                    String::new()
                },
                if *cache != CacheMode::Battery {
                    format!(",cache={cache}")
                } else {
                    String::new()
                }
            ),
            Spec::ReadCache {
                backing,
                cache,
                size_bytes,
            } => format!(
                "readcache({},{},size={})",
                backing.name(),
                cache.name(),
                format_size(*size_bytes)
            ),
            Spec::PageCache {
                backing,
                size_bytes,
            } => format!(
                "pagecache({},size={})",
                backing.name(),
                format_size(*size_bytes)
            ),
            Spec::Layout { roles, devices } => roles
                .iter()
                .map(|(role, d)| format!("{}={}", role.name(), devices[*d as usize].name()))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// The devices: a layout's, or the spec itself.
    pub fn devices(&self) -> Vec<&Spec> {
        match self {
            Spec::Layout { devices, .. } => devices.iter().collect(),
            _ => vec![self],
        }
    }

    /// The device (index into [`Spec::devices`]) that holds `role`'s files: the data device unless
    /// the layout places the role elsewhere.
    pub fn device_of(&self, role: &Role) -> u8 {
        match self {
            Spec::Layout { roles, .. } => {
                roles.iter().find(|(r, _)| r == role).map_or(0, |(_, d)| *d)
            }
            _ => 0,
        }
    }

    /// The roles a layout names (none for a single device).
    pub fn roles(&self) -> &[(Role, u8)] {
        match self {
            Spec::Layout { roles, .. } => roles,
            _ => &[],
        }
    }

    /// How results name device `index`: its roles and its spec, e.g. `log+temp=pcie-flash-2012`;
    /// a single device by its spec.
    pub fn device_label(&self, index: u8) -> String {
        match self {
            Spec::Layout { roles, devices } => {
                let names: Vec<String> = roles
                    .iter()
                    .filter(|(_, d)| *d == index)
                    .map(|(r, _)| r.name())
                    .collect();
                let spec = devices
                    .get(index as usize)
                    .map_or_else(|| "?".to_string(), Spec::name);
                format!("{}={spec}", names.join("+"))
            }
            _ => self.name(),
        }
    }

    /// True for `host`: no emulation at all.
    pub fn is_host(&self) -> bool {
        matches!(self, Spec::Device { entry, .. } if entry.kind == DeviceKind::Host)
    }

    /// True for a layout of several roles.
    pub fn is_layout(&self) -> bool {
        matches!(self, Spec::Layout { .. })
    }

    /// Bytes the device can address.
    pub fn capacity_bytes(&self) -> u64 {
        match self {
            Spec::Device { entry, overrides } => {
                match device_params(entry, overrides).capacity_gb() {
                    Some(gb) => (gb * 1e9) as u64,
                    // The host: the real device's size is the bound, not a model's.
                    None => u64::MAX / 2,
                }
            }
            Spec::Raid {
                level,
                disks,
                member,
                ..
            } => {
                let m = member.capacity_bytes();
                let data_disks = match level {
                    RaidLevel::Raid0 => *disks,
                    RaidLevel::Raid1 => 1,
                    RaidLevel::Raid10 => disks / 2,
                    RaidLevel::Raid5 => disks - 1,
                };
                m.saturating_mul(data_disks as u64)
            }
            Spec::WbCache { backing, .. }
            | Spec::ReadCache { backing, .. }
            | Spec::PageCache { backing, .. } => backing.capacity_bytes(),
            Spec::Layout { devices, .. } => devices[0].capacity_bytes(),
        }
    }

    /// The data of one full stripe of an array (a stripe unit times its data disks; a mirror's
    /// and a single drive's: one default stripe unit): what `readahead=on` reads ahead at a time.
    pub fn full_stripe_bytes(&self) -> u64 {
        match self {
            Spec::Raid {
                level,
                disks,
                stripe_bytes,
                ..
            } => match level {
                RaidLevel::Raid0 => stripe_bytes * *disks as u64,
                RaidLevel::Raid1 => DEFAULT_STRIPE_BYTES,
                RaidLevel::Raid10 => stripe_bytes * (*disks as u64 / 2),
                RaidLevel::Raid5 => stripe_bytes * (*disks as u64 - 1),
            },
            Spec::WbCache { backing, .. }
            | Spec::ReadCache { backing, .. }
            | Spec::PageCache { backing, .. } => backing.full_stripe_bytes(),
            Spec::Layout { devices, .. } => devices[0].full_stripe_bytes(),
            Spec::Device { .. } => DEFAULT_STRIPE_BYTES,
        }
        .min(64 << 20)
    }

    /// Physical devices in the spec.
    pub fn leaves(&self) -> u64 {
        match self {
            Spec::Device { .. } => 1,
            Spec::Raid { disks, member, .. } => (*disks as u64).saturating_mul(member.leaves()),
            Spec::WbCache { backing, .. } | Spec::PageCache { backing, .. } => backing.leaves(),
            Spec::ReadCache { backing, cache, .. } => backing.leaves() + cache.leaves(),
            Spec::Layout { devices, .. } => devices.iter().map(Spec::leaves).sum(),
        }
    }

    /// True if every physical device is an HDD (so a real disk can keep up as the backing store).
    pub fn is_all_hdd(&self) -> bool {
        match self {
            Spec::Device { entry, .. } => entry.kind == DeviceKind::Hdd,
            Spec::Raid { member, .. } => member.is_all_hdd(),
            Spec::WbCache { .. } | Spec::PageCache { .. } | Spec::ReadCache { .. } => false,
            Spec::Layout { devices, .. } => devices.iter().all(Spec::is_all_hdd),
        }
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A spec in a result is its canonical text, which parses back to it.
impl serde::Serialize for Spec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

/// An override's value as the parser reads it back exactly: `10000`, `0.5`, and `1e300` rather
/// than its 301 digits, so that a canonical name stays within `parser::SPEC_TEXT_MAX`.
fn format_number(v: f64) -> String {
    let plain = v.to_string();
    let exp = format!("{v:e}");
    if plain.len() <= 12 || plain.len() <= exp.len() {
        plain
    } else {
        exp
    }
}

/// `65536` → `64k`, `1073741824` → `1g`; the largest unit that divides exactly.
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1u64 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}
