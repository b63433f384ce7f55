//! The I/O buffers of one job: one block per queue slot, aligned for O_DIRECT, filled with random
//! bytes so that writes do not compress.

use std::alloc::{alloc_zeroed, dealloc, Layout};

use rand::{RngCore, SeedableRng};

/// Alignment that satisfies O_DIRECT on every Linux file system and device we target.
pub const ALIGN_BYTES: usize = 4096;

pub struct IoBuffers {
    ptr: *mut u8,
    layout: Layout,
    block_size_bytes: usize,
    slots: usize,
}

// The buffers are plain memory owned by one job; the kernel reads/writes them only while an I/O the
// job submitted is in flight.
unsafe impl Send for IoBuffers {}

impl IoBuffers {
    pub fn new(block_size_bytes: usize, slots: usize, seed: u64) -> Self {
        let size = (block_size_bytes * slots).max(1);
        let layout = Layout::from_size_align(size, ALIGN_BYTES)
            .expect("block size × queue depth is bounded by the config");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let mut buffers = Self {
            ptr,
            layout,
            block_size_bytes,
            slots,
        };
        rand::rngs::SmallRng::seed_from_u64(seed).fill_bytes(buffers.as_mut_slice());
        buffers
    }

    pub fn block_size_bytes(&self) -> usize {
        self.block_size_bytes
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The buffer of queue slot `slot`.
    #[inline]
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        debug_assert!((slot as usize) < self.slots);
        // SAFETY: slot < slots, so the pointer stays inside the allocation.
        unsafe { self.ptr.add(slot as usize * self.block_size_bytes) }
    }

    /// The whole area, for registering it with io_uring.
    pub fn iovec(&self) -> libc::iovec {
        libc::iovec {
            iov_base: self.ptr.cast(),
            iov_len: self.layout.size(),
        }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr points to layout.size() initialised (zeroed) bytes we own.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for IoBuffers {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout; the runner drains every I/O before dropping.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}
