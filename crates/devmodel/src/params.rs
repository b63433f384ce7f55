//! A device's parameters as typed structs, one per kind of model. Each field is named as its
//! parameter's key and read once from the spec: its overrides, then the catalogue entry, then the
//! kind's optional parameters. A parameter found in none of them is an error naming it, never a 0.
//! A device's cache mode and atomic unit (`cache=`, `sector=`) are parameters too, kept here
//! below the spec parser that reads them and the durability model that uses them.

use std::fmt;

use serde::Serialize;

use crate::catalogue::{self, CatalogueEntry, DeviceKind};

/// A parameter a model needs that a device (or the RAID controller) does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingParam {
    /// The catalogue device, or `the RAID controller`.
    pub device: &'static str,
    pub key: &'static str,
}

impl fmt::Display for MissingParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} has no parameter '{}', which its model needs: this oltplab's catalogue entry is incomplete (a bug, please report it); use another device",
            self.device, self.key
        )
    }
}

impl std::error::Error for MissingParam {}

/// A struct of `f64` parameters whose field names are the keys, and a reader that names the first
/// key it cannot find.
macro_rules! params {
    ($(#[$doc:meta])* $name:ident { $($field:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name {
            $(pub $field: f64),+
        }

        impl $name {
            /// Every key, in the order of the fields.
            pub const KEYS: &'static [&'static str] = &[$(stringify!($field)),+];

            fn read(
                device: &'static str,
                get: impl Fn(&'static str) -> Option<f64>,
            ) -> Result<$name, MissingParam> {
                Ok($name {
                    $($field: get(stringify!($field)).ok_or(MissingParam {
                        device,
                        key: stringify!($field),
                    })?),+
                })
            }
        }
    };
}

params! {
    /// An HDD: one actuator, seek curve, rotation, zoned media, command queue and buffer.
    HddParams {
        capacity_gb, rpm, seek_track_ms, seek_avg_ms, seek_full_ms, write_settle_ms,
        media_outer_mb_s, media_inner_mb_s, overhead_us, queue_max, link_mb_s, cache_mib,
        cache_segments, hit_overhead_us, write_hit_overhead_us, write_cache,
    }
}

params! {
    /// Flash (or 3D XPoint): channels × dies, a controller, a host link and a write buffer.
    FlashParams {
        capacity_gb, channels, dies_per_channel, page_kib, read_us, program_us, waf_random,
        channel_mb_s, link_mb_s, read_overhead_us, cmd_occupancy_us, controllers,
        write_buffer_mib, write_ack_us, power_loss_protected, write_occupancy_us, flush_us,
        service_cv, stall_pct, stall_us, pause_pct, pause_us, pause_speed_pct,
    }
}

params! {
    /// Memory: a fixed latency and a copy bandwidth per unit.
    RamParams { capacity_gb, latency_us, bandwidth_mb_s, units }
}

params! {
    /// The RAID controller of `wbcache(…)` (`catalogue::controller`).
    ControllerParams {
        size_mib, cmd_us, link_mb_s, destage_round, readahead_chunks, readahead_streams,
    }
}

/// `key`'s value for `entry` with `overrides` applied: the override, else the catalogue's,
/// else the kind's optional default; None when the kind has no such parameter.
pub fn param_value(
    entry: &CatalogueEntry,
    overrides: &[(&'static str, f64)],
    key: &str,
) -> Option<f64> {
    overrides
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .or_else(|| entry.param(key))
        .or_else(|| {
            optional_params(entry.kind)
                .iter()
                .find(|p| p.key == key)
                .map(|p| p.value)
        })
}

/// A catalogue device's parameters after its spec's overrides, by kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceParams {
    /// No emulation: no parameters.
    Host,
    Hdd(HddParams),
    Flash(FlashParams),
    Ram(RamParams),
}

impl DeviceParams {
    /// `entry`'s parameters with `overrides` applied, or the first one that is missing.
    pub fn of(
        entry: &CatalogueEntry,
        overrides: &[(&'static str, f64)],
    ) -> Result<DeviceParams, MissingParam> {
        let get = |key: &str| param_value(entry, overrides, key);
        Ok(match entry.kind {
            DeviceKind::Host => DeviceParams::Host,
            DeviceKind::Hdd => DeviceParams::Hdd(HddParams::read(entry.name, get)?),
            DeviceKind::Flash => DeviceParams::Flash(FlashParams::read(entry.name, get)?),
            DeviceKind::Ram => DeviceParams::Ram(RamParams::read(entry.name, get)?),
        })
    }

    /// Decimal GB the device holds (None: the host's, which no model bounds).
    pub fn capacity_gb(&self) -> Option<f64> {
        match self {
            DeviceParams::Host => None,
            DeviceParams::Hdd(p) => Some(p.capacity_gb),
            DeviceParams::Flash(p) => Some(p.capacity_gb),
            DeviceParams::Ram(p) => Some(p.capacity_gb),
        }
    }
}

impl ControllerParams {
    /// The controller's parameters from the catalogue.
    pub fn of_catalogue() -> Result<ControllerParams, MissingParam> {
        ControllerParams::read("the RAID controller", |key| {
            crate::catalogue::controller()
                .iter()
                .find(|p| p.key == key)
                .map(|p| p.value)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{catalogue, Param};

    /// Every catalogue device and the controller give their model every parameter it reads, and
    /// a kind's entries list nothing its model ignores (so a renamed field shows here).
    #[test]
    fn every_catalogue_device_has_its_models_parameters() {
        for entry in catalogue() {
            let params = DeviceParams::of(entry, &[]).unwrap_or_else(|e| panic!("{e}"));
            let keys = match params {
                DeviceParams::Host => &[][..],
                DeviceParams::Hdd(_) => HddParams::KEYS,
                DeviceParams::Flash(_) => FlashParams::KEYS,
                DeviceParams::Ram(_) => RamParams::KEYS,
            };
            for p in entry.params {
                assert!(
                    keys.contains(&p.key),
                    "{}: {} is read by no model",
                    entry.name,
                    p.key
                );
            }
        }
        let c = ControllerParams::of_catalogue().unwrap();
        assert!(c.cmd_us > 0.0 && c.link_mb_s > 0.0, "{c:?}");
    }

    /// A parameter the entry lacks is named, not read as 0; an override counts as having it.
    #[test]
    fn a_missing_parameter_is_named() {
        const INCOMPLETE: &[Param] = &[Param {
            key: "capacity_gb",
            value: 1.0,
            about: "",
            source: "",
        }];
        static ENTRY: CatalogueEntry = CatalogueEntry {
            name: "ram-incomplete",
            kind: DeviceKind::Ram,
            summary: "",
            params: INCOMPLETE,
        };
        let e = DeviceParams::of(&ENTRY, &[]).unwrap_err();
        assert_eq!(
            e,
            MissingParam {
                device: "ram-incomplete",
                key: "latency_us"
            }
        );
        assert!(e.to_string().contains("'latency_us'"), "{e}");
        let given = [
            ("latency_us", 0.5),
            ("bandwidth_mb_s", 100.0),
            ("units", 2.0),
        ];
        let Ok(DeviceParams::Ram(p)) = DeviceParams::of(&ENTRY, &given) else {
            panic!("overrides complete it")
        };
        assert_eq!((p.capacity_gb, p.latency_us, p.units), (1.0, 0.5, 2.0));
    }
}

/// A parsed device's parameters. Every `Spec::Device` comes from `spec::parse_spec`, which refuses a
/// device whose parameters do not all read (`model::check_device`), so this finds them all.
pub(crate) fn device_params(
    entry: &CatalogueEntry,
    overrides: &[(&'static str, f64)],
) -> DeviceParams {
    DeviceParams::of(entry, overrides).expect("checked when parsed")
}

/// Parameters every device of a kind accepts in a spec although its catalogue entry does not
/// list them: their default keeps the model as the catalogue describes it. `oltplab devices fit`
/// sets them where a measured device needs them.
pub fn optional_params(kind: DeviceKind) -> &'static [catalogue::Param] {
    const FLASH: &[catalogue::Param] = &[
        catalogue::Param {
            key: "write_occupancy_us",
            value: 0.0,
            about: "controller time per write command, when it differs from a read's (0: cmd_occupancy_us)",
            source: "fitted by `oltplab devices fit` to a measured device; the catalogue's devices use cmd_occupancy_us",
        },
        catalogue::Param {
            key: "flush_us",
            value: 0.0,
            about: "time a flush command takes beyond draining the write buffer (the cache flush itself; on a virtual disk the host's fsync)",
            source: "fitted by `oltplab devices fit` to a measured device's commits after small and large writes; the catalogue's devices: 0",
        },
        catalogue::Param {
            key: "service_cv",
            value: 0.0,
            about: "spread of each command's own time: the coefficient of variation of a factor (lognormal, mean 1) drawn per command for a read's overhead and array time, a write's acknowledgement and programming, a flush's time (0: every command takes exactly its time)",
            source: "fitted by `oltplab devices fit --trace` to a real run's latency quantiles, which steady points' means cannot tell; the catalogue's devices: 0",
        },
        catalogue::Param {
            key: "stall_pct",
            value: 0.0,
            about: "share of commands (%) that stall: each of them waits an extra time, exponential with mean stall_us, on top of its own (0: none)",
            source: "fitted by `oltplab devices fit --trace` to a real run's latency quantiles; the catalogue's devices: 0",
        },
        catalogue::Param {
            key: "stall_us",
            value: 0.0,
            about: "mean length of a stall (see stall_pct)",
            source: "fitted by `oltplab devices fit --trace` with stall_pct; the catalogue's devices: 0",
        },
        catalogue::Param {
            key: "pause_pct",
            value: 0.0,
            about: "share of the device's time (%, up to 25) spent in pauses, during which every command in the device waits: slow I/Os bunched in time, as a drive's housekeeping or a virtual disk's host makes them (0: none)",
            source: "fitted by `oltplab devices fit --trace` to a trace dense enough to show how its slow I/Os bunch (its quantiles alone cannot tell pauses from stalls; docs/devices.md), or set by hand; the catalogue's devices: 0",
        },
        catalogue::Param {
            key: "pause_us",
            value: 0.0,
            about: "mean length of a pause (exponential, cut at 8 means; see pause_pct)",
            source: "fitted by `oltplab devices fit --trace` with pause_pct, or set by hand; the catalogue's devices: 0",
        },
        catalogue::Param {
            key: "pause_speed_pct",
            value: 0.0,
            about: "the device's speed in a pause, % of its own (up to 95): every command in a pause takes 100 / pause_speed_pct times as long there (0: the device stops, and a command arriving in a pause starts at its end)",
            source: "fitted by `oltplab devices fit --trace` with pause_pct (this machine's disk keeps about a third of its speed in its slow moments; docs/devices.md), or set by hand; the catalogue's devices: 0",
        },
    ];
    match kind {
        DeviceKind::Flash => FLASH,
        _ => &[],
    }
}

/// A device's (or controller's) write cache, as a power cut sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// No write cache: a write is on the media when it completes.
    Off,
    /// A write-back cache that loses what was not flushed: a flush (or FUA) makes every earlier
    /// write durable.
    Volatile,
    /// A write-back cache that acknowledges flushes without making anything durable (what
    /// diskchecker.pl catches): only the cache's size bounds what a cut loses.
    Lying,
    /// A write-back cache that survives the cut (battery, capacitor or flash backing): durable.
    Battery,
}

impl CacheMode {
    pub const NAMES: [&'static str; 4] = ["off", "volatile", "lying", "battery"];

    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Off => "off",
            CacheMode::Volatile => "volatile",
            CacheMode::Lying => "lying",
            CacheMode::Battery => "battery",
        }
    }

    pub fn from_name(name: &str) -> Option<CacheMode> {
        match name {
            "off" => Some(CacheMode::Off),
            "volatile" => Some(CacheMode::Volatile),
            "lying" => Some(CacheMode::Lying),
            "battery" => Some(CacheMode::Battery),
            _ => None,
        }
    }

    /// The code a device override stores (overrides are numbers).
    pub(crate) fn code(self) -> f64 {
        match self {
            CacheMode::Off => 0.0,
            CacheMode::Volatile => 1.0,
            CacheMode::Lying => 2.0,
            CacheMode::Battery => 3.0,
        }
    }

    pub(crate) fn from_code(code: f64) -> CacheMode {
        match code as u32 {
            1 => CacheMode::Volatile,
            2 => CacheMode::Lying,
            3 => CacheMode::Battery,
            _ => CacheMode::Off,
        }
    }

    /// True if a cut can lose writes the device acknowledged.
    pub fn loses_writes(self) -> bool {
        matches!(self, CacheMode::Volatile | CacheMode::Lying)
    }
}

impl fmt::Display for CacheMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The spec key of a device's cache mode (`hdd-15k{cache=volatile}`).
pub const CACHE_KEY: &str = "cache";
/// The spec key of a device's atomic unit (`sata-ssd-2010{sector=4k}`).
pub const SECTOR_KEY: &str = "sector";
/// The atomic units a spec may give.
pub const SECTOR_SIZES: [u64; 2] = [512, 4096];

/// Parses a spec's `sector=` value: 512 or 4k.
pub(crate) fn parse_sector(word: &str) -> Option<u64> {
    let v = oltplab_core::units::parse_size(word).ok()?;
    SECTOR_SIZES.contains(&v).then_some(v)
}
