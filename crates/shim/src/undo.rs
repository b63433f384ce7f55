//! The undo log of a run that may be cut (`oltplab crash --engine postgres`): before a write to a
//! file on a device whose cache can lose it proceeds, what it replaces is appended to the log
//! every process of the server shares (what it writes is in the file); after a flush completes,
//! its record.
//! The format and its reader are `oltplab_devmodel::undo`; the cache modes are
//! `oltplab_devmodel::durability`'s, asked here only which devices need a record at all.
//!
//! The log is opened once per process (a forked child opens its own descriptor, so that nothing
//! depends on the server keeping an inherited one), with `O_APPEND`: one `writev` per record keeps
//! the records of concurrent processes whole.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use libc::{c_int, iovec};
use oltplab_devmodel::durability::CrashLog;
use oltplab_devmodel::undo::{flush_record, write_header};
use oltplab_devmodel::{slot, slot_device, Spec};

use crate::files::FileTable;

/// How long a data write is: its buffer's length, or its vector (summed only if recorded).
#[derive(Clone, Copy)]
pub(crate) enum Src {
    Len(usize),
    Iov(*const iovec, c_int),
}

impl Src {
    fn len(self) -> usize {
        match self {
            Src::Len(n) => n,
            Src::Iov(iov, cnt) => (0..cnt.max(0) as usize)
                // SAFETY: the caller's vector of `cnt` entries.
                .map(|i| unsafe { (*iov.add(i)).iov_len })
                .sum(),
        }
    }
}

pub(crate) struct Undo {
    /// The log's path, NUL-terminated.
    path: Vec<u8>,
    /// Per layout device: whether its cache can lose a write (`CrashLog::keeps`).
    keeps: Vec<bool>,
}

/// This process's descriptor of the log: (fork generation << 32) | fd, 0 when not open.
static LOG: AtomicU64 = AtomicU64::new(0);
static FAILED: AtomicBool = AtomicBool::new(false);

impl Undo {
    pub fn new(mut path: Vec<u8>, spec: &Spec) -> Undo {
        path.push(0);
        let log = CrashLog::new(spec);
        let keeps = (0..spec.devices().len().max(1) as u8)
            .map(|d| log.keeps(slot(d, 0)))
            .collect();
        Undo { path, keeps }
    }

    /// True if writes to the file in `number` need a record.
    #[inline]
    pub fn keeps(&self, number: u32) -> bool {
        self.keeps
            .get(slot_device(number) as usize)
            .copied()
            .unwrap_or(false)
    }

    /// Before a write of `src` at `offset` (None: the descriptor's position) of `fd`.
    pub fn record_write(
        &self,
        files: &FileTable,
        fd: c_int,
        number: u32,
        offset: Option<i64>,
        src: Src,
    ) {
        let len = src.len();
        if len == 0 || len > u32::MAX as usize {
            return;
        }
        // SAFETY: fcntl and fstat on the caller's descriptor, into a zeroed struct we own.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if flags < 0 || unsafe { libc::fstat(fd, &mut st) } != 0 {
            return;
        }
        let offset = match offset {
            Some(o) if o >= 0 => o as u64,
            _ if flags & libc::O_APPEND != 0 => st.st_size as u64,
            // SAFETY: lseek only reads the position.
            _ => unsafe { libc::lseek64(fd, 0, libc::SEEK_CUR) }.max(0) as u64,
        };
        let old = read_old(fd, flags, offset, len);
        let seq = files.next_seq();
        let header = write_header(seq, number, st.st_dev, st.st_ino, offset, len as u32);
        let iov = [
            iovec {
                iov_base: header.as_ptr() as *mut _,
                iov_len: header.len(),
            },
            iovec {
                iov_base: old.as_ptr() as *mut _,
                iov_len: len,
            },
        ];
        self.append(&iov);
    }

    /// The sequence number a flush beginning now takes, if its device keeps records.
    pub fn flush_seq(&self, files: &FileTable, number: u32) -> Option<u64> {
        self.keeps(number).then(|| files.next_seq())
    }

    /// After a flush of `number`'s device, begun at `seq`, completed.
    pub fn record_flush(&self, seq: u64, number: u32) {
        let rec = flush_record(seq, number);
        self.append(&[iovec {
            iov_base: rec.as_ptr() as *mut _,
            iov_len: rec.len(),
        }]);
    }

    fn append(&self, iov: &[iovec]) {
        let Some(fd) = self.fd() else {
            return;
        };
        let want: usize = iov.iter().map(|v| v.iov_len).sum();
        // SAFETY: writev of buffers that live until it returns, on our own descriptor.
        let wrote =
            unsafe { libc::syscall(libc::SYS_writev, fd, iov.as_ptr(), iov.len() as c_int) };
        if wrote != want as i64 && !FAILED.swap(true, Ordering::Relaxed) {
            crate::complain(
                "cannot append to the undo log: the crash states of this run are incomplete",
            );
        }
    }

    fn fd(&self) -> Option<c_int> {
        let gen = crate::fork::generation() & 0xFFFF_FFFF;
        let v = LOG.load(Ordering::Acquire);
        if v != 0 && v >> 32 == gen {
            return Some((v & 0xFFFF_FFFF) as c_int);
        }
        // SAFETY: a raw open of a NUL-terminated path (the hooked open must not see it).
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat,
                libc::AT_FDCWD,
                self.path.as_ptr(),
                libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC,
            )
        } as c_int;
        if fd < 0 {
            if !FAILED.swap(true, Ordering::Relaxed) {
                crate::complain(
                    "cannot open the undo log: the crash states of this run are incomplete",
                );
            }
            return None;
        }
        let mine = (gen << 32) | fd as u64;
        match LOG.compare_exchange(v, mine, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Some(fd),
            Err(now) => {
                // Another thread opened it first.
                // SAFETY: our own descriptor, just opened.
                unsafe { libc::syscall(libc::SYS_close, fd) };
                (now != 0 && now >> 32 == gen).then_some((now & 0xFFFF_FFFF) as c_int)
            }
        }
    }
}

/// The server closed or replaced descriptor `fd`: if it was the log's, open the log again.
pub(crate) fn forget_fd(fd: c_int) {
    let v = LOG.load(Ordering::Acquire);
    if v != 0 && fd >= 0 && (v & 0xFFFF_FFFF) as c_int == fd {
        let _ = LOG.compare_exchange(v, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// What `len` bytes at `offset` of `fd` hold now; zeros past its end. An `O_DIRECT` descriptor
/// reads aligned blocks; a write-only one through a second, read-only descriptor.
fn read_old(fd: c_int, flags: c_int, offset: u64, len: usize) -> Vec<u8> {
    let mut old = vec![0u8; len];
    let direct = flags & libc::O_DIRECT != 0;
    if flags & libc::O_ACCMODE == libc::O_WRONLY || !read_at(fd, direct, &mut old, offset) {
        let mut link = format!("/proc/self/fd/{fd}").into_bytes();
        link.push(0);
        // SAFETY: a raw open of a NUL-terminated path, closed below.
        let ro = unsafe {
            libc::syscall(
                libc::SYS_openat,
                libc::AT_FDCWD,
                link.as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            )
        } as c_int;
        if ro >= 0 {
            old.fill(0);
            read_at(ro, false, &mut old, offset);
            // SAFETY: our own descriptor.
            unsafe { libc::syscall(libc::SYS_close, ro) };
        }
    }
    old
}

fn pread(fd: c_int, buf: *mut u8, n: usize, at: u64) -> isize {
    // SAFETY: the caller hands a buffer of at least `n` bytes it owns.
    unsafe { libc::syscall(libc::SYS_pread64, fd, buf, n, at as i64) as isize }
}

/// Fills `out` from `offset` of `fd` (zeros past the end); false if the descriptor cannot read.
fn read_at(fd: c_int, direct: bool, out: &mut [u8], offset: u64) -> bool {
    const ALIGN: u64 = 4096;
    let len = out.len();
    if !direct {
        let mut done = 0usize;
        while done < len {
            let got = pread(
                fd,
                out[done..].as_mut_ptr(),
                len - done,
                offset + done as u64,
            );
            if got <= 0 {
                return got == 0 || done > 0;
            }
            done += got as usize;
        }
        return true;
    }
    let start = offset / ALIGN * ALIGN;
    let end = (offset + len as u64).div_ceil(ALIGN) * ALIGN;
    let size = (end - start) as usize;
    let Ok(layout) = std::alloc::Layout::from_size_align(size, ALIGN as usize) else {
        return false;
    };
    // SAFETY: a fresh aligned allocation of non-zero size, freed below.
    let buf = unsafe { std::alloc::alloc_zeroed(layout) };
    if buf.is_null() {
        return false;
    }
    let got = pread(fd, buf, size, start);
    if got >= 0 {
        let skip = (offset - start) as usize;
        let have = (got as usize).saturating_sub(skip).min(len);
        // SAFETY: both ranges lie inside their buffers.
        unsafe { std::ptr::copy_nonoverlapping(buf.add(skip), out.as_mut_ptr(), have) };
    }
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(buf, layout) };
    got >= 0
}
