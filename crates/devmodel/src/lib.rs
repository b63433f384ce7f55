//! Device models and live emulation.
//!
//! A device spec (`hdd-15k`, `raid5(4,sas-ssd-2012)`, `wbcache(raid10(16,hdd-15k),size=1g)`) is
//! parsed against the [`catalogue`] into a [`Spec`]; an [`Emulator`] compiles it into a model whose
//! state lives in this process or in a shared-memory file, and turns each I/O into a modelled
//! completion time. The caller does the real I/O, then [`Emulator::wait_until`] the completion time,
//! and reports what it realised for the [`Fidelity`] figures. The model is pure and deterministic
//! for a seed: the same submits give the same completion times.

pub mod catalogue;
pub mod diskvalid;
pub mod durability;
mod emulator;
mod model;
pub mod params;
pub mod parser;
pub mod sim;
pub mod spec;
mod state;
pub mod undo;
pub mod validation;

pub use catalogue::{catalogue, CatalogueEntry, DeviceKind, Param};
pub use durability::Durability;
pub use emulator::{
    fine_timer_slack, lateness_tolerance_ns, now_ns, run_delay_ns, slot, slot_device,
    spin_margin_ns, thread_spin_ns, wait_until, DeviceCounts, Emulator, Fidelity, KindLatency,
    FILE_SLOT_BYTES, LATE_TARGET_PCT, OFF_TARGET_PCT, P99_OFF_TARGET_PCT, SLOT_DEVICE_SHIFT,
};
pub use params::{CacheMode, DeviceParams, MissingParam};
pub use parser::{parse_spec, SpecError};
pub use spec::{RaidLevel, Role, Spec, LAYOUT_DEVICES_MAX};

/// What an I/O does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoKind {
    Read,
    Write,
    /// fsync/fdatasync: completes when what was written before is durable.
    Flush,
}
