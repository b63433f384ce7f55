//! The fallback replay engine, for kernels without io_uring: one thread per lane, one blocking
//! system call per operation — what the traced threads themselves did.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use oltplab_core::{Error, Result};

use super::acc::Acc;
use super::plan::PlanOp;
use super::target::ReplayFile;
use super::uring::{check, errno, pace_until, sleep_until};
use super::{needs_buffered, Clock, LaneBuffers, Pacing};
use crate::Op;

pub struct PsyncLane<'a> {
    pub ops: &'a [PlanOp],
    pub files: &'a [ReplayFile],
    pub direct: bool,
    pub align_bytes: u64,
    pub pacing: &'a Pacing,
    pub clock: Clock,
    pub stop: &'a AtomicBool,
    pub done_ops: &'a AtomicU64,
}

impl PsyncLane<'_> {
    pub fn run(self) -> Result<Acc> {
        let mut acc = Acc::default();
        let buffers = LaneBuffers::new(&[self.ops]);
        let buf = buffers.lane_ptr(0);
        for op in self.ops {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            if let Some(due) = self.pacing.due_ns(op) {
                pace_until(&self.clock, due, self.stop);
                if self.stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            let f = &self.files[op.file as usize];
            let unaligned = needs_buffered(op, self.direct, self.align_bytes);
            acc.unaligned_ops += unaligned as u64;
            let fd = match (&f.direct, unaligned) {
                (Some(d), false) => d.as_raw_fd(),
                _ => f.buffered.as_raw_fd(),
            };
            let issued = self.clock.now_ns();
            let deadline = self.pacing.model_deadline_ns(op, issued, &self.clock);
            let res = if self.pacing.model_only(op) {
                0
            } else {
                syscall(fd, op, buf)
            };
            if let Some(e) = check(op, res, f, &mut acc) {
                return Err(e);
            }
            if let Some(d) = deadline {
                sleep_until(&self.clock, d);
            }
            let end = self.clock.now_ns();
            if let Some(d) = deadline {
                self.pacing
                    .record_realised(d.saturating_sub(issued), end - issued);
            }
            acc.complete(op, end, end - issued, res.max(0) as u64);
            self.done_ops.fetch_add(1, Ordering::Relaxed);
        }
        Ok(acc)
    }
}

/// One blocking call; the result as io_uring reports it (bytes, or a negative errno).
fn syscall(fd: i32, op: &PlanOp, buf: *mut u8) -> i32 {
    loop {
        // SAFETY: buf holds at least op.len bytes (sized from the lane's largest op); fd is open.
        let rc: i64 = unsafe {
            match op.op {
                Op::Read => libc::pread(fd, buf.cast(), op.len as usize, op.offset as i64) as i64,
                Op::Write => libc::pwrite(fd, buf.cast(), op.len as usize, op.offset as i64) as i64,
                Op::Fsync => libc::fsync(fd) as i64,
                Op::Fdatasync => libc::fdatasync(fd) as i64,
                Op::SyncRange => libc::sync_file_range(
                    fd,
                    op.offset as i64,
                    op.len as i64,
                    libc::SYNC_FILE_RANGE_WRITE,
                ) as i64,
                Op::Trim => libc::fallocate(
                    fd,
                    libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                    op.offset as i64,
                    op.len as i64,
                ) as i64,
                Op::Fallocate => libc::fallocate(fd, 0, op.offset as i64, op.len as i64) as i64,
                Op::Truncate => libc::ftruncate(fd, op.offset as i64) as i64,
            }
        };
        if rc >= 0 {
            return rc.min(i32::MAX as i64) as i32;
        }
        let e = errno();
        if e != libc::EINTR {
            return -e;
        }
    }
}

/// Runs each lane on its own thread.
pub fn run_lanes(lanes: Vec<PsyncLane<'_>>) -> Result<Acc> {
    let results: Vec<Result<Acc>> = std::thread::scope(|scope| {
        let handles: Vec<_> = lanes
            .into_iter()
            .enumerate()
            .map(|(i, lane)| {
                std::thread::Builder::new()
                    .name(format!("oltplab-lane{i}"))
                    .stack_size(256 << 10)
                    .spawn_scoped(scope, move || lane.run())
                    .map_err(|e| Error::failed(format!("cannot start a replay thread: {e}")))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(Error::failed("a replay thread panicked"))),
                Err(e) => Err(e),
            })
            .collect()
    });
    let mut total = Acc::default();
    for r in results {
        total.merge(&r?);
    }
    Ok(total)
}
