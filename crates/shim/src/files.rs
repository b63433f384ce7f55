//! The file table shared by every process of an emulated command: a file (device and inode) gets
//! the next file number the first time any process opens it, so that all processes place it at the
//! same spot of the emulated device and files are laid out in the order they were first used.
//!
//! Layout (little-endian u64 words, a fixed-size file under the session directory):
//! ```text
//! word 0  magic "OLTPFIL1"        word 1  next file number
//! word 2  processes attached (loaded the library or forked from one that did)
//! word 3  the undo log's sequence counter (see oltplab_devmodel::undo)
//! then SLOTS × (key, number + 1)  open addressing; key = mix(dev, ino) | 1, never 0
//! ```
//! `oltplab emulate` reads word 2 to tell whether the shim was loaded at all.

use std::sync::atomic::{AtomicU64, Ordering};

pub const MAGIC: u64 = u64::from_le_bytes(*b"OLTPFIL1");
pub const SLOTS: usize = 8192;
const HEADER_WORDS: usize = 4;
pub const TABLE_BYTES: usize = (HEADER_WORDS + 2 * SLOTS) * 8;
pub const W_NEXT: usize = 1;
pub const W_ATTACHED: usize = 2;
pub const W_SEQ: usize = 3;

pub struct FileTable {
    words: &'static [AtomicU64],
}

impl FileTable {
    /// Maps the table at `path` (NUL-terminated), creating it if this is the first process. Only
    /// raw system calls: this runs inside the hooked process before anything else is safe.
    pub fn map(path: &[u8]) -> Option<FileTable> {
        // SAFETY: raw system calls on a NUL-terminated path; the mapping is checked for failure
        // and lives for the rest of the process.
        unsafe {
            let fd = libc::syscall(
                libc::SYS_openat,
                libc::AT_FDCWD,
                path.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC,
                0o600,
            ) as libc::c_int;
            if fd < 0 {
                return None;
            }
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0 {
                libc::syscall(libc::SYS_close, fd);
                return None;
            }
            // Growing to the same size from several processes at once is harmless.
            if (st.st_size as usize) < TABLE_BYTES
                && libc::syscall(libc::SYS_ftruncate, fd, TABLE_BYTES as libc::off_t) != 0
            {
                libc::syscall(libc::SYS_close, fd);
                return None;
            }
            let p = libc::mmap(
                std::ptr::null_mut(),
                TABLE_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            libc::syscall(libc::SYS_close, fd);
            if p == libc::MAP_FAILED {
                return None;
            }
            let words = std::slice::from_raw_parts(p as *const AtomicU64, TABLE_BYTES / 8);
            let _ = words[0].compare_exchange(0, MAGIC, Ordering::AcqRel, Ordering::Acquire);
            if words[0].load(Ordering::Acquire) != MAGIC {
                return None;
            }
            Some(FileTable { words })
        }
    }

    pub fn attach(&self) {
        self.words[W_ATTACHED].fetch_add(1, Ordering::Relaxed);
    }

    /// The next number of the undo log's one order over every process.
    pub fn next_seq(&self) -> u64 {
        self.words[W_SEQ].fetch_add(1, Ordering::AcqRel)
    }

    /// The file number of (dev, ino): the existing one, or the next free one. Lock-free.
    pub fn number(&self, dev: u64, ino: u64) -> u32 {
        let key = mix(dev, ino) | 1;
        let home = (key >> 1) as usize % SLOTS;
        for i in 0..SLOTS {
            let slot = (home + i) % SLOTS;
            let k = &self.words[HEADER_WORDS + 2 * slot];
            let n = &self.words[HEADER_WORDS + 2 * slot + 1];
            let mut cur = k.load(Ordering::Acquire);
            if cur == 0 {
                match k.compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        let number = self.words[W_NEXT].fetch_add(1, Ordering::Relaxed);
                        n.store(number + 1, Ordering::Release);
                        return number as u32;
                    }
                    Err(now) => cur = now,
                }
            }
            if cur == key {
                // Another process claimed the slot and is about to store the number.
                for _ in 0..1_000_000 {
                    let v = n.load(Ordering::Acquire);
                    if v != 0 {
                        return (v - 1) as u32;
                    }
                    std::hint::spin_loop();
                }
                return slot as u32;
            }
        }
        // Full (more than SLOTS distinct files): share numbers by hash.
        home as u32
    }
}

fn mix(dev: u64, ino: u64) -> u64 {
    let mut x = ino ^ dev.rotate_left(32) ^ 0x9E37_79B9_7F4A_7C15;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_dense_stable_and_shared() {
        let path = format!("/tmp/oltplab-shim-files-{}\0", std::process::id());
        let a = FileTable::map(path.as_bytes()).unwrap();
        let b = FileTable::map(path.as_bytes()).unwrap();
        assert_eq!(a.number(1, 100), 0);
        assert_eq!(a.number(1, 200), 1);
        assert_eq!(
            b.number(1, 100),
            0,
            "a second mapping sees the same numbers"
        );
        assert_eq!(b.number(2, 100), 2, "another device is another file");
        assert_eq!(a.number(1, 200), 1);
        a.attach();
        b.attach();
        assert_eq!(a.words[W_ATTACHED].load(Ordering::Relaxed), 2);
        std::fs::remove_file(path.trim_end_matches('\0')).unwrap();
    }
}
