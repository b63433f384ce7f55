//! What one measurement point does. A sweep or a profile list is several points on one target.

use std::sync::Arc;
use std::time::Duration;

use oltplab_devmodel::Emulator;
use serde::Serialize;

use crate::engine::EngineKind;

/// The access pattern: how large each I/O is, how many are reads, how many are random, and
/// whether writes are flushed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Mix {
    pub block_size_bytes: u32,
    /// Share of reads, 0–100.
    pub read_pct: u8,
    /// Share of I/Os at a random offset, 0–100; the others continue sequentially from the last one
    /// (IOmeter's definition).
    pub random_pct: u8,
    /// Flush the file after every N writes, as fio's `fsync=N` / `fdatasync=N`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush: Option<Flush>,
}

/// fio's `fsync=N` / `fdatasync=N`: after every `every_writes` writes a job waits for them to
/// complete, flushes the file, and waits for the flush before it writes again — a database's
/// commit (log write, then fsync) at the job's queue depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Flush {
    pub every_writes: u32,
    pub kind: FlushKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FlushKind {
    /// fsync(2): data and all metadata.
    Fsync,
    /// fdatasync(2): data and the metadata needed to read it back (what databases use for logs).
    Fdatasync,
}

// Here, beside the kind, so that the engine (below the job) does not import the job back.
impl From<FlushKind> for crate::engine::Op {
    fn from(kind: FlushKind) -> crate::engine::Op {
        match kind {
            FlushKind::Fsync => crate::engine::Op::Fsync,
            FlushKind::Fdatasync => crate::engine::Op::Fdatasync,
        }
    }
}

/// Named access patterns of `--rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    RandRead,
    RandWrite,
    RandRw,
    Read,
    Write,
    Rw,
}

impl Rw {
    pub const NAMES: [&'static str; 6] = ["randread", "randwrite", "randrw", "read", "write", "rw"];

    pub fn parse(name: &str) -> Option<Rw> {
        Some(match name {
            "randread" => Rw::RandRead,
            "randwrite" => Rw::RandWrite,
            "randrw" => Rw::RandRw,
            "read" => Rw::Read,
            "write" => Rw::Write,
            "rw" | "readwrite" => Rw::Rw,
            _ => return None,
        })
    }

    /// The pattern's `--rw` name (as in JSON).
    pub fn name(self) -> &'static str {
        match self {
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::RandRw => "randrw",
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::Rw => "rw",
        }
    }

    /// True for the patterns that mix reads and writes, where `--rwmix-read` applies.
    pub fn is_mixed(self) -> bool {
        matches!(self, Rw::RandRw | Rw::Rw)
    }

    /// (read %, random %) of this pattern; `rwmix_read_pct` is used by the mixed ones.
    pub fn shares(self, rwmix_read_pct: u8) -> (u8, u8) {
        match self {
            Rw::RandRead => (100, 100),
            Rw::RandWrite => (0, 100),
            Rw::RandRw => (rwmix_read_pct, 100),
            Rw::Read => (100, 0),
            Rw::Write => (0, 0),
            Rw::Rw => (rwmix_read_pct, 0),
        }
    }
}

/// One measurement point: a mix at a queue depth, run by `jobs` threads for `runtime` after `ramp`.
#[derive(Clone, Debug, Serialize)]
pub struct JobSpec {
    pub mix: Mix,
    /// I/Os in flight per job.
    pub queue_depth: u32,
    pub jobs: u32,
    /// I/O offsets fall in `[0, region_bytes)` of the target.
    pub region_bytes: u64,
    pub runtime: Duration,
    pub ramp: Duration,
    /// Per job, as fio's `rate_iops`; latency is then measured from each I/O's intended start.
    pub rate_iops: Option<u64>,
    pub engine: EngineKind,
    pub direct: bool,
    /// The target is open O_DSYNC (fio's `sync=1`): every write is durable when it completes.
    pub dsync: bool,
    pub seed: u64,
    /// Keep every measured I/O's latency for a raw log (costs memory; for checking and debugging).
    pub keep_latency_log: bool,
    /// I/O buffers on a 2 MiB huge page where the kernel allows (else 4 KiB pages, as fio's).
    pub huge_pages: bool,
    /// Run on this emulated device: the I/O is real, its completion comes at the modelled time.
    #[serde(skip)]
    pub emulator: Option<Arc<Emulator>>,
}

impl JobSpec {
    /// Blocks of `block_size_bytes` in the region.
    pub fn blocks(&self) -> u64 {
        self.region_bytes / self.mix.block_size_bytes as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rw_names_round_trip() {
        for name in Rw::NAMES {
            assert_eq!(Rw::parse(name).map(Rw::name), Some(name));
        }
    }
}
