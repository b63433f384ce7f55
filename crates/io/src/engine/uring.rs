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
    pub fn new(fd: RawFd, buffers: &IoBuffers) -> Result<Self> {
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
