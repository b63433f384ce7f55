use std::os::fd::RawFd;
use std::time::Duration;

use oltplab_core::Result;

use super::{Completion, IoEngine, Op};
use crate::buffers::IoBuffers;

/// One blocking pread/pwrite per I/O, done when it is queued (fio's `psync`). Queue depth is 1.
pub struct PsyncEngine {
    fd: RawFd,
    base: *mut u8,
    block_size_bytes: usize,
    done: Vec<Completion>,
}

// The raw pointer is the job's own buffer area; the engine never leaves the job's thread while in use.
unsafe impl Send for PsyncEngine {}

impl PsyncEngine {
    pub fn new(fd: RawFd, buffers: &IoBuffers) -> Self {
        Self {
            fd,
            base: buffers.slot_ptr(0),
            block_size_bytes: buffers.block_size_bytes(),
            done: Vec::with_capacity(buffers.slots()),
        }
    }
}

impl IoEngine for PsyncEngine {
    fn queue(&mut self, slot: u32, op: Op, offset: u64) -> Result<()> {
        // SAFETY: slot < queue depth, so the buffer lies inside the job's allocation.
        let buf = unsafe { self.base.add(slot as usize * self.block_size_bytes) };
        let n = loop {
            // SAFETY: buf points to block_size_bytes bytes owned by this job.
            let n = unsafe {
                match op {
                    Op::Read => libc::pread(
                        self.fd,
                        buf.cast(),
                        self.block_size_bytes,
                        offset as libc::off_t,
                    ),
                    Op::Write => libc::pwrite(
                        self.fd,
                        buf.cast(),
                        self.block_size_bytes,
                        offset as libc::off_t,
                    ),
                    Op::Fsync => libc::fsync(self.fd) as isize,
                    Op::Fdatasync => libc::fdatasync(self.fd) as isize,
                }
            };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break n;
        };
        let result = if n < 0 {
            -std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO)
        } else {
            n as i32
        };
        self.done.push(Completion { slot, result });
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        _min: u32,
        _timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> Result<()> {
        out.append(&mut self.done);
        Ok(())
    }
}
