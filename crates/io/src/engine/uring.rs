use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::{opcode, squeue, types, IoUring};
use oltplab_core::{Error, Result};

use super::{Completion, IoEngine, Op};
use crate::buffers::IoBuffers;

/// io_uring with the job's buffers and the target registered once, so each I/O skips the kernel's
/// per-call page pinning and file lookup — the main reason it costs less CPU than a plain ring.
pub struct UringEngine {
    ring: IoUring,
    base: *mut u8,
    block_size_bytes: u32,
    fixed_buffers: bool,
    fixed_file: bool,
    fd: RawFd,
    /// Submit each I/O as soon as it is queued (one io_uring_enter per I/O, as fio's default
    /// `iodepth_batch_submit=1`) rather than the whole refill at once. A batch goes to the device
    /// in one plug and one doorbell, and a virtual disk that serves its queue in passes (Firecracker's
    /// virtio-blk) then completes the batch together: the queue moves in lockstep, the device idles
    /// while the batch is refilled, and IOPS drop by up to a quarter (bench/README.md, "oltplab device
    /// vs fio"). Page-cache I/O never reaches a device queue, so it keeps the cheaper batches.
    submit_each: bool,
    /// Waits with a timeout need IORING_FEAT_EXT_ARG (Linux 5.11).
    timeout_wait: bool,
    in_flight: usize,
}

// Owned by one job thread for its whole life (the ring is created with SINGLE_ISSUER).
unsafe impl Send for UringEngine {}

/// Checks that this kernel lets us create an io_uring; the error says why not.
pub fn probe_io_uring() -> std::result::Result<(), String> {
    IoUring::new(2).map(|_| ()).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOSYS) => "the kernel has no io_uring".to_string(),
        Some(libc::EPERM) => {
            "io_uring is disabled for this process (sysctl kernel.io_uring_disabled or a seccomp filter)".to_string()
        }
        _ => format!("io_uring setup failed: {e}"),
    })
}

impl UringEngine {
    /// `direct`: the I/Os bypass the page cache and go to the device, so each is submitted on its own.
    pub fn new(fd: RawFd, buffers: &IoBuffers, direct: bool) -> Result<Self> {
        let entries = (buffers.slots() as u32).next_power_of_two().max(2);
        // Completions are only reaped by this thread inside io_uring_enter, which is exactly what
        // DEFER_TASKRUN optimises for; older kernels reject the flags, so fall back to a plain ring.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_coop_taskrun()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))
            .map_err(|e| {
                Error::failed(format!(
                    "cannot set up io_uring with {entries} entries: {e}"
                ))
            })?;
        let submitter = ring.submitter();
        // SAFETY: the buffers outlive the engine (the runner drops the engine first).
        let fixed_buffers = unsafe { submitter.register_buffers(&[buffers.iovec()]) }.is_ok();
        let fixed_file = submitter.register_files(&[fd]).is_ok();
        let timeout_wait = ring.params().is_feature_ext_arg();
        Ok(Self {
            ring,
            base: buffers.slot_ptr(0),
            block_size_bytes: buffers.block_size_bytes() as u32,
            fixed_buffers,
            fixed_file,
            fd,
            submit_each: direct,
            timeout_wait,
            in_flight: 0,
        })
    }

    #[inline]
    fn entry(&self, slot: u32, op: Op, offset: u64) -> squeue::Entry {
        // SAFETY: slot < queue depth, so the buffer lies inside the registered area.
        let buf = unsafe {
            self.base
                .add(slot as usize * self.block_size_bytes as usize)
        };
        let len = self.block_size_bytes;
        macro_rules! build {
            ($target:expr) => {
                match (op, self.fixed_buffers) {
                    (Op::Fsync, _) => opcode::Fsync::new($target).build(),
                    (Op::Fdatasync, _) => opcode::Fsync::new($target)
                        .flags(types::FsyncFlags::DATASYNC)
                        .build(),
                    (Op::Read, true) => opcode::ReadFixed::new($target, buf, len, 0)
                        .offset(offset)
                        .build(),
                    (Op::Write, true) => opcode::WriteFixed::new($target, buf, len, 0)
                        .offset(offset)
                        .build(),
                    (Op::Read, false) => {
                        opcode::Read::new($target, buf, len).offset(offset).build()
                    }
                    (Op::Write, false) => {
                        opcode::Write::new($target, buf, len).offset(offset).build()
                    }
                }
            };
        }
        let entry = if self.fixed_file {
            build!(types::Fixed(0))
        } else {
            build!(types::Fd(self.fd))
        };
        entry.user_data(slot as u64)
    }
}

impl IoEngine for UringEngine {
    #[inline]
    fn queue(&mut self, slot: u32, op: Op, offset: u64) -> Result<()> {
        let entry = self.entry(slot, op, offset);
        // SAFETY: the entry's buffer stays valid until its completion is reaped.
        unsafe { self.ring.submission().push(&entry) }.map_err(|_| {
            Error::failed(
                "io_uring submission queue overflow (more I/Os queued than the queue depth)",
            )
        })?;
        self.in_flight += 1;
        if self.submit_each {
            // The I/O stays queued either way: an error here (a full kernel queue, EAGAIN) is
            // retried, or reported, by the next wait's own submission.
            let _ = self.ring.submit();
        }
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> Result<()> {
        let submitter = self.ring.submitter();
        let submitted = match timeout {
            None => submitter.submit_and_wait(min_complete as usize),
            Some(t) if !self.timeout_wait => {
                // No timed wait on this kernel: submit, then nap briefly instead.
                let submitted = submitter.submit();
                std::thread::sleep(t.min(Duration::from_micros(200)));
                submitted
            }
            Some(t) => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                submitter.submit_with_args(min_complete as usize, &args)
            }
        };
        match submitted {
            Ok(_) => {}
            // A timeout, a signal, or a full completion queue: reap what is there and carry on.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                ) => {}
            Err(e) => return Err(Error::failed(format!("io_uring_enter failed: {e}"))),
        }
        let before = out.len();
        out.extend(self.ring.completion().map(|cqe| Completion {
            slot: cqe.user_data() as u32,
            result: cqe.result(),
        }));
        self.in_flight -= out.len() - before;
        Ok(())
    }
}

impl Drop for UringEngine {
    /// The kernel may still be reading into the job's buffers: wait for every I/O before they are
    /// freed (closing the ring alone does not wait).
    fn drop(&mut self) {
        for _ in 0..10_000 {
            if self.in_flight == 0 {
                return;
            }
            let _ = self.ring.submit_and_wait(1);
            let reaped = self.ring.completion().count();
            self.in_flight = self.in_flight.saturating_sub(reaped);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    use super::*;

    /// Direct I/O leaves the submission queue empty after each `queue` (the kernel has taken the
    /// entry); page-cache I/O keeps it for the next wait's batch. Both still complete.
    #[test]
    fn direct_io_is_submitted_when_queued_buffered_io_in_batches() {
        let path =
            std::env::temp_dir().join(format!("oltplab-uring-submit-{}", std::process::id()));
        std::fs::write(&path, vec![7u8; 4 * 4096]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        for (direct, left_queued) in [(true, 0), (false, 2)] {
            let buffers = IoBuffers::new(4096, 2, 1);
            let mut engine = UringEngine::new(file.as_raw_fd(), &buffers, direct).unwrap();
            engine.queue(0, Op::Read, 0).unwrap();
            engine.queue(1, Op::Read, 4096).unwrap();
            assert_eq!(
                engine.ring.submission().len(),
                left_queued,
                "direct: {direct}"
            );
            let mut done = Vec::new();
            while done.len() < 2 {
                engine.submit_and_wait(1, None, &mut done).unwrap();
            }
            assert!(done.iter().all(|c| c.result == 4096), "{done:?}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
