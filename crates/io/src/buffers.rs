//! The I/O buffers of one job: one block per queue slot, aligned for O_DIRECT, filled with random
//! bytes so that writes do not compress.
//!
//! The area sits on a 2 MiB transparent huge page where the kernel allows it. A block on 4 KiB pages
//! is, in physical memory, up to `block / 4 KiB` separate pieces, and each I/O then reaches the
//! device as that many memory segments; a virtual disk (virtio) serves those measurably more slowly
//! (16 KiB random reads on this project's VM: ~40k IOPS on 4 KiB pages, ~55k on a huge page, the
//! same as fio with `--mem=shmhuge`). fio's default buffers get whatever malloc gives, which is why
//! its figures on such disks jump between bands from run to run.

use std::alloc::{alloc, dealloc, Layout};

use rand::{RngCore, SeedableRng};

/// Alignment that satisfies O_DIRECT on every Linux file system and device we target.
pub const ALIGN_BYTES: usize = 4096;

/// A transparent huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE_BYTES: usize = 2 << 20;

pub struct IoBuffers {
    ptr: *mut u8,
    layout: Layout,
    block_size_bytes: usize,
    slots: usize,
    huge_pages: bool,
}

// The buffers are plain memory owned by one job; the kernel reads/writes them only while an I/O the
// job submitted is in flight.
unsafe impl Send for IoBuffers {}

impl IoBuffers {
    pub fn new(block_size_bytes: usize, slots: usize, seed: u64) -> Self {
        let size = (block_size_bytes * slots).max(1).div_ceil(HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES;
        let layout = Layout::from_size_align(size, HUGE_PAGE_BYTES)
            .expect("block size × queue depth is bounded by the config");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // Before the first touch, so that the fill below faults in huge pages. Where transparent
        // huge pages are off this fails or is ignored, and the buffers stay on 4 KiB pages.
        // SAFETY: [ptr, ptr + size) is one allocation of ours.
        unsafe { libc::madvise(ptr.cast(), size, libc::MADV_HUGEPAGE) };
        let mut buffers = Self {
            ptr,
            layout,
            block_size_bytes,
            slots,
            huge_pages: false,
        };
        rand::rngs::SmallRng::seed_from_u64(seed).fill_bytes(buffers.as_mut_slice());
        buffers.huge_pages = std::fs::read_to_string("/proc/self/smaps")
            .map(|smaps| huge_bytes_at(&smaps, ptr as usize) >= size)
            .unwrap_or(false);
        buffers
    }

    pub fn block_size_bytes(&self) -> usize {
        self.block_size_bytes
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Whether the whole area is on huge pages, so that each block is one piece of physical memory.
    pub fn huge_pages(&self) -> bool {
        self.huge_pages
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
        // SAFETY: ptr points to layout.size() bytes we own; every byte is written before it is read
        // (fill_bytes writes them all).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for IoBuffers {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout; the runner drains every I/O before dropping.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// The `AnonHugePages` bytes of the mapping in `smaps` (the text of /proc/self/smaps) that holds
/// address `addr`; 0 if no mapping holds it.
fn huge_bytes_at(smaps: &str, addr: usize) -> usize {
    let mut inside = false;
    for line in smaps.lines() {
        // A mapping's header: "start-end perms offset dev inode [path]", addresses in hex.
        if let Some((range, _)) = line.split_once(' ') {
            if let Some((start, end)) = range.split_once('-') {
                if let (Ok(start), Ok(end)) = (
                    usize::from_str_radix(start, 16),
                    usize::from_str_radix(end, 16),
                ) {
                    inside = (start..end).contains(&addr);
                    continue;
                }
            }
        }
        if inside {
            if let Some(kb) = line.strip_prefix("AnonHugePages:") {
                let kb = kb.trim().trim_end_matches("kB").trim();
                return kb.parse::<usize>().unwrap_or(0) * 1024;
            }
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_for_direct_io_and_filled() {
        let b = IoBuffers::new(16384, 32, 7);
        assert_eq!(b.iovec().iov_base as usize % HUGE_PAGE_BYTES, 0);
        assert!(b.iovec().iov_len >= 16384 * 32);
        for slot in 0..32 {
            assert_eq!(b.slot_ptr(slot) as usize % ALIGN_BYTES, 0);
        }
        // SAFETY: slot 31 is inside the area and was filled.
        let last = unsafe { std::slice::from_raw_parts(b.slot_ptr(31), 16384) };
        assert!(
            last.iter().filter(|&&x| x == 0).count() < 16384 / 64,
            "random, not zero"
        );
    }

    #[test]
    fn smaps_huge_page_bytes_of_the_mapping_that_holds_an_address() {
        let smaps = "\
55d0a0000000-55d0a0021000 rw-p 00000000 00:00 0 [heap]
Size:                132 kB
AnonHugePages:         0 kB
7f1200000000-7f1200600000 rw-p 00000000 00:00 0
Size:               6144 kB
Rss:                4096 kB
AnonHugePages:      4096 kB
7f1300000000-7f1300001000 r--p 00000000 08:01 42 /usr/lib/libc.so.6
AnonHugePages:         0 kB
";
        assert_eq!(huge_bytes_at(smaps, 0x7f12_0020_0000), 4096 * 1024);
        assert_eq!(huge_bytes_at(smaps, 0x55d0_a000_0010), 0);
        assert_eq!(huge_bytes_at(smaps, 0x1000), 0);
    }
}
