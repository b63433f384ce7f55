//! I/O memory: the buffers of a device job (one block per queue slot) and the area under them and
//! under trace replay's lane buffers, aligned for O_DIRECT, filled with random bytes so that writes
//! do not compress.
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

/// An owned area of I/O memory: 2 MiB-aligned, on a huge page where the kernel allows it, filled
/// with random bytes. The device runner's [`IoBuffers`] and trace replay's lane buffers both sit on
/// one.
pub struct IoArea {
    ptr: *mut u8,
    layout: Layout,
    huge_pages: bool,
}

// Plain memory owned by one job or worker; the kernel reads/writes it only while an I/O that job
// submitted is in flight.
unsafe impl Send for IoArea {}

impl IoArea {
    /// At least `size_bytes` (rounded up to whole huge pages), filled from `seed`, on a huge page
    /// where the kernel allows.
    pub fn new(size_bytes: usize, seed: u64) -> Self {
        Self::with_pages(size_bytes, seed, true)
    }

    /// As [`IoArea::new`]; with `huge` false on 4 KiB pages, as malloc gives them (fio's default
    /// `iomem=malloc`), so that a block is several memory segments.
    pub fn with_pages(size_bytes: usize, seed: u64, huge: bool) -> Self {
        let size = size_bytes.max(1).div_ceil(HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES;
        let layout = Layout::from_size_align(size, HUGE_PAGE_BYTES)
            .expect("I/O buffer sizes are bounded by the config");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // Before the first touch, so that the fill below faults in huge pages. Where transparent
        // huge pages are off this fails or is ignored, and the area stays on 4 KiB pages.
        // SAFETY: [ptr, ptr + size) is one allocation of ours.
        let advice = if huge {
            libc::MADV_HUGEPAGE
        } else {
            libc::MADV_NOHUGEPAGE
        };
        unsafe { libc::madvise(ptr.cast(), size, advice) };
        // SAFETY: ptr holds `size` bytes we own; fill_bytes writes every one before any is read.
        let bytes = unsafe { std::slice::from_raw_parts_mut(ptr, size) };
        rand::rngs::SmallRng::seed_from_u64(seed).fill_bytes(bytes);
        let huge_pages = std::fs::read_to_string("/proc/self/smaps")
            .map(|smaps| huge_bytes_at(&smaps, ptr as usize) >= size)
            .unwrap_or(false);
        Self {
            ptr,
            layout,
            huge_pages,
        }
    }

    /// The byte at `offset`; the caller keeps `offset` within [`IoArea::len_bytes`].
    #[inline]
    pub fn ptr_at(&self, offset: usize) -> *mut u8 {
        assert!(offset <= self.layout.size(), "offset outside the I/O area");
        // SAFETY: offset lies inside the allocation or one past its end.
        unsafe { self.ptr.add(offset) }
    }

    pub fn len_bytes(&self) -> usize {
        self.layout.size()
    }

    /// Whether the whole area is on huge pages, so that each block is one piece of physical memory.
    pub fn huge_pages(&self) -> bool {
        self.huge_pages
    }

    /// The whole area, for registering it with io_uring.
    pub fn iovec(&self) -> libc::iovec {
        libc::iovec {
            iov_base: self.ptr.cast(),
            iov_len: self.layout.size(),
        }
    }
}

impl Drop for IoArea {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout; its owner drains every I/O before dropping.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// The buffers of one device job: one block per queue slot.
pub struct IoBuffers {
    area: IoArea,
    block_size_bytes: usize,
    slots: usize,
}

impl IoBuffers {
    pub fn new(block_size_bytes: usize, slots: usize, seed: u64) -> Self {
        Self::with_pages(block_size_bytes, slots, seed, true)
    }

    /// As [`IoBuffers::new`], on 4 KiB pages unless `huge` (see [`IoArea::with_pages`]).
    pub fn with_pages(block_size_bytes: usize, slots: usize, seed: u64, huge: bool) -> Self {
        Self {
            area: IoArea::with_pages(block_size_bytes * slots, seed, huge),
            block_size_bytes,
            slots,
        }
    }

    pub fn block_size_bytes(&self) -> usize {
        self.block_size_bytes
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Whether the buffers are on huge pages (see the module's comment).
    pub fn huge_pages(&self) -> bool {
        self.area.huge_pages()
    }

    /// The buffer of queue slot `slot`.
    #[inline]
    pub fn slot_ptr(&self, slot: u32) -> *mut u8 {
        debug_assert!((slot as usize) < self.slots);
        self.area.ptr_at(slot as usize * self.block_size_bytes)
    }

    /// The whole area, for registering it with io_uring.
    pub fn iovec(&self) -> libc::iovec {
        self.area.iovec()
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
