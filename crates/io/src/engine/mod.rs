//! The engine interface, after fio's `ioengine_ops`: queue I/Os, submit them and wait for
//! completions. The runner is generic over it, so the hot loop has no dynamic dispatch.

mod emulated;
mod null;
mod psync;
mod uring;

use std::os::fd::RawFd;
use std::time::Duration;

use oltplab_core::Result;
use serde::Serialize;

pub use emulated::EmulatedEngine;
pub use null::NullEngine;
pub use psync::PsyncEngine;
pub use uring::{probe_io_uring, UringEngine};

use crate::buffers::IoBuffers;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// Asynchronous I/O through io_uring with registered buffers and file; the default.
    IoUring,
    /// One synchronous pread/pwrite at a time per job, as fio's psync.
    Psync,
    /// No I/O at all: every I/O completes at once. Measures the tool's own cost per I/O.
    Null,
}

impl EngineKind {
    pub const NAMES: [&'static str; 3] = ["io_uring", "psync", "null"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "io_uring" | "uring" => Some(Self::IoUring),
            "psync" => Some(Self::Psync),
            "null" => Some(Self::Null),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::IoUring => "io_uring",
            Self::Psync => "psync",
            Self::Null => "null",
        }
    }

    /// True if the engine can keep more than one I/O in flight per job.
    pub fn is_async(self) -> bool {
        self != Self::Psync
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// fsync of the whole file; the offset is ignored and the result is 0 on success.
    Fsync,
    /// fdatasync of the whole file; the offset is ignored and the result is 0 on success.
    Fdatasync,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
        }
    }

    pub fn is_flush(self) -> bool {
        matches!(self, Op::Fsync | Op::Fdatasync)
    }
}

/// A finished I/O: the queue slot it used and the byte count, or a negative errno.
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    pub slot: u32,
    pub result: i32,
}

pub trait IoEngine {
    /// Queues one I/O of the buffers' block size between slot `slot`'s buffer and `offset`. The
    /// caller never has more slots queued or in flight than the queue depth.
    fn queue(&mut self, slot: u32, op: Op, offset: u64) -> Result<()>;

    /// Submits what is queued, then waits until at least `min_complete` I/Os have completed or
    /// `timeout` has passed, and appends the completions to `out`.
    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> Result<()>;
}

/// One engine of any kind, owned by one job thread.
pub enum AnyEngine {
    IoUring(Box<UringEngine>),
    Psync(PsyncEngine),
    Null(NullEngine),
    /// Any of the above with its completions released at an emulated device's modelled times.
    Emulated(Box<EmulatedEngine<AnyEngine>>),
}

impl AnyEngine {
    /// Opens an engine for `fd` (opened with O_DIRECT if `direct`) using `buffers`; the buffers must
    /// outlive the engine.
    pub fn open(kind: EngineKind, fd: RawFd, buffers: &IoBuffers, direct: bool) -> Result<Self> {
        Ok(match kind {
            EngineKind::IoUring => {
                AnyEngine::IoUring(Box::new(UringEngine::new(fd, buffers, direct)?))
            }
            EngineKind::Psync => AnyEngine::Psync(PsyncEngine::new(fd, buffers)),
            EngineKind::Null => AnyEngine::Null(NullEngine::new(buffers)),
        })
    }
}

impl IoEngine for AnyEngine {
    fn queue(&mut self, slot: u32, op: Op, offset: u64) -> Result<()> {
        match self {
            AnyEngine::IoUring(e) => e.queue(slot, op, offset),
            AnyEngine::Psync(e) => e.queue(slot, op, offset),
            AnyEngine::Null(e) => e.queue(slot, op, offset),
            AnyEngine::Emulated(e) => e.queue(slot, op, offset),
        }
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> Result<()> {
        match self {
            AnyEngine::IoUring(e) => e.submit_and_wait(min_complete, timeout, out),
            AnyEngine::Psync(e) => e.submit_and_wait(min_complete, timeout, out),
            AnyEngine::Null(e) => e.submit_and_wait(min_complete, timeout, out),
            AnyEngine::Emulated(e) => e.submit_and_wait(min_complete, timeout, out),
        }
    }
}
