//! The interposed libc functions.
//!
//! A file descriptor is tracked if, when it was opened, it named a regular file or directory under
//! the emulated directory; `FDS[fd]` then holds its shared file number + 1. Every hook first looks
//! there; an untracked descriptor goes straight to libc.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering};

use libc::{c_char, c_int, c_uint, c_void, iovec, mode_t, off64_t, off_t, size_t, ssize_t};
use oltplab_devmodel::{now_ns, IoKind};
use oltplab_trace::{Op, Record, TraceMeta, TraceWriter};

use crate::fork;
use crate::real::{self, errno, f, set_errno, OpenKind};
use crate::undo::{self, Src};
use crate::{files, Shim, SHIM};

/// Descriptors above this are never tracked (databases stay far below it).
const MAX_FDS: usize = 1 << 16;
static FDS: [AtomicU32; MAX_FDS] = [const { AtomicU32::new(0) }; MAX_FDS];
/// Tracked descriptors opened O_DSYNC (or O_SYNC): each completed write is also a flush.
static DSYNC: [AtomicBool; MAX_FDS] = [const { AtomicBool::new(false) }; MAX_FDS];
/// Whether a tracked descriptor is O_DIRECT, whose transfers reach the device: 0 not known yet
/// (read at its first transfer: InnoDB sets O_DIRECT with fcntl after the open), 1 no, 2 yes.
static DIRECT: [AtomicU8; MAX_FDS] = [const { AtomicU8::new(0) }; MAX_FDS];

thread_local! {
    /// Set while the shim itself does work, so that its own I/O is never emulated.
    static BUSY: Cell<bool> = const { Cell::new(false) };
    /// This thread's id and the fork generation it was read in.
    static TID: Cell<(u64, u32)> = const { Cell::new((0, 0)) };
    /// The CPU this thread's current hooked call was issued on, for its trace record.
    static CALL_CPU: Cell<Option<u32>> = const { Cell::new(None) };
    /// This thread's run-queue time when its current hooked call began, when the trace is to
    /// leave it out (see [`call_start`]).
    static CALL_QUEUED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The start of a hooked call: its time, and (when tracing) the CPU it is issued on
/// (`sched_getcpu` at the call, as blktrace files a request under the CPU that queued it).
///
/// On `host`, a call that reaches the device (`device_bound`: a sync, or a transfer on an
/// O_DIRECT or O_DSYNC descriptor) also reads the thread's run-queue time, so that its trace record can
/// leave out the wait for a core after the device completed it — the record then times the
/// device, as an emulated run's records give the model's end, and a spec fitted to the trace is
/// not charged the machine's load twice (docs/trace.md). Two reads of ~1 µs each against an I/O of
/// tens of µs or more; a buffered transfer, which may take a µs, reads nothing.
#[inline]
fn call_start(device_bound: impl FnOnce() -> bool) -> u64 {
    if let Some(shim) = SHIM.get().filter(|s| s.trace_dir.is_some()) {
        let _ = CALL_CPU.try_with(|c| c.set(oltplab_trace::current_cpu()));
        if shim.host {
            let queued = device_bound()
                .then(oltplab_devmodel::run_delay_ns)
                .flatten();
            let _ = CALL_QUEUED.try_with(|c| c.set(queued));
        }
    }
    now_ns()
}

/// The end of a call that began at `t0` and returned at `t1` for its trace record: on `host`, less
/// the time its thread queued for a core during it (see [`call_start`]).
#[inline]
fn device_end(t0: u64, t1: u64) -> u64 {
    let queued = CALL_QUEUED
        .try_with(|c| c.take())
        .ok()
        .flatten()
        .and_then(|from| Some(oltplab_devmodel::run_delay_ns()?.saturating_sub(from)));
    t1 - queued.unwrap_or(0).min(t1.saturating_sub(t0))
}

#[inline]
fn tracked(fd: c_int) -> Option<u32> {
    if fd < 0 || fd as usize >= MAX_FDS {
        return None;
    }
    match FDS[fd as usize].load(Ordering::Relaxed) {
        0 => None,
        v => Some(v - 1),
    }
}

fn set_tracked(fd: c_int, number: Option<u32>) {
    if fd >= 0 && (fd as usize) < MAX_FDS {
        FDS[fd as usize].store(number.map_or(0, |n| n + 1), Ordering::Relaxed);
        if number.is_none() {
            DSYNC[fd as usize].store(false, Ordering::Relaxed);
        }
        DIRECT[fd as usize].store(0, Ordering::Relaxed);
    }
}

fn dsync(fd: c_int) -> bool {
    fd >= 0 && (fd as usize) < MAX_FDS && DSYNC[fd as usize].load(Ordering::Relaxed)
}

fn direct(fd: c_int) -> bool {
    if fd < 0 || fd as usize >= MAX_FDS {
        return false;
    }
    match DIRECT[fd as usize].load(Ordering::Relaxed) {
        0 => {
            // SAFETY: fcntl on a tracked descriptor; errno is the caller's to keep.
            let saved = errno();
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
            set_errno(saved);
            let on = flags >= 0 && flags & libc::O_DIRECT != 0;
            DIRECT[fd as usize].store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
        v => v == 2,
    }
}

fn set_dsync(fd: c_int, on: bool) {
    if fd >= 0 && (fd as usize) < MAX_FDS {
        DSYNC[fd as usize].store(on, Ordering::Relaxed);
    }
}

/// Runs `work` unless the shim is already working on this thread; restores errno afterwards.
#[inline]
pub(crate) fn guarded(work: impl FnOnce()) {
    let saved = errno();
    let entered = BUSY
        .try_with(|b| {
            if b.get() {
                false
            } else {
                b.set(true);
                true
            }
        })
        .unwrap_or(false);
    if entered {
        work();
        let _ = BUSY.try_with(|b| b.set(false));
    }
    set_errno(saved);
}

/// `/proc/self/fd/N` resolved into `buf`; the length of the path.
fn fd_path(fd: c_int, buf: &mut [u8; 4096]) -> Option<usize> {
    let mut link = *b"/proc/self/fd/\0\0\0\0\0\0\0\0\0\0\0\0";
    let mut digits = [0u8; 10];
    let mut n = fd as u32;
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        link[14 + i] = digits[len - 1 - i];
    }
    // SAFETY: link is NUL-terminated (zero-filled tail); buf is ours.
    let got = unsafe { libc::readlink(link.as_ptr().cast(), buf.as_mut_ptr().cast(), buf.len()) };
    (got > 0 && (got as usize) < buf.len()).then_some(got as usize)
}

fn under(path: &[u8], dir: &[u8]) -> bool {
    path.starts_with(dir) && (path.len() == dir.len() || path[dir.len()] == b'/' || dir == b"/")
}

/// The layout device of `path`: the longest matching place's, or the first device.
fn device_of(shim: &Shim, path: &[u8]) -> u8 {
    shim.places
        .iter()
        .filter(|p| {
            if p.prefix {
                path.starts_with(&p.path)
            } else {
                under(path, &p.path)
            }
        })
        .max_by_key(|p| p.path.len())
        .map_or(0, |p| p.device)
}

/// Decides whether a newly opened descriptor is tracked.
fn classify(fd: c_int) {
    if fd < 0 {
        return;
    }
    set_tracked(fd, None); // the number may have been reused without our close hook seeing it
    let Some(shim) = SHIM.get() else {
        return;
    };
    guarded(|| {
        let mut buf = [0u8; 4096];
        let Some(len) = fd_path(fd, &mut buf) else {
            return;
        };
        if !under(&buf[..len], &shim.dir) {
            return;
        }
        // SAFETY: fstat into a zeroed struct we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return;
        }
        let kind = st.st_mode & libc::S_IFMT;
        if kind != libc::S_IFREG && kind != libc::S_IFDIR {
            return;
        }
        // The slot carries the layout device: the emulator places the file on it.
        let number = oltplab_devmodel::slot(
            device_of(shim, &buf[..len]),
            shim.files.number(st.st_dev, st.st_ino),
        );
        set_tracked(fd, Some(number));
        // SAFETY: fcntl on a descriptor we just checked.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        set_dsync(fd, flags >= 0 && flags & libc::O_DSYNC != 0);
        if shim.ram && kind == libc::S_IFREG {
            // The backing is the page cache: O_DIRECT would send the I/O to the real disk.
            // SAFETY: fcntl on a descriptor we just checked.
            unsafe {
                let flags = libc::fcntl(fd, libc::F_GETFL);
                if flags >= 0 && flags & libc::O_DIRECT != 0 {
                    libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_DIRECT);
                }
            }
        }
    });
}

/// After a real data transfer of `ret` bytes at `offset` that started at `t0`: wait until the
/// emulated device would have completed it, and record it.
#[inline]
fn emulate_data(fd: c_int, number: u32, write: bool, offset: u64, t0: u64, ret: isize) {
    if ret <= 0 {
        return;
    }
    let Some(shim) = SHIM.get() else {
        return;
    };
    guarded(|| {
        let len = ret as u64;
        let kind = if write { IoKind::Write } else { IoKind::Read };
        let deadline = shim
            .emu
            .submit(t0, kind, shim.emu.place(number, offset), len);
        let t1 = device_end(t0, shim.emu.complete(kind, t0, deadline));
        let op = if write { Op::Write } else { Op::Read };
        trace(shim, fd, number, op, offset, len, t0, t1);
        // An O_DSYNC write returns once the device made it (and what came before) durable.
        if write && dsync(fd) {
            if let Some(u) = &shim.undo {
                if let Some(seq) = u.flush_seq(&shim.files, number) {
                    u.record_flush(seq, number);
                }
            }
        }
    });
}

/// Before a data write proceeds: its undo record, if the run keeps them and its device can lose
/// it. `offset` None: the descriptor's position.
#[inline]
fn before_write(fd: c_int, number: u32, offset: Option<i64>, src: Src) {
    let Some(shim) = SHIM.get() else {
        return;
    };
    let Some(u) = shim.undo.as_ref().filter(|u| u.keeps(number)) else {
        return;
    };
    guarded(|| u.record_write(&shim.files, fd, number, offset, src));
}

/// After a successful real (or, with RAM backing, skipped) sync.
fn emulate_flush(fd: c_int, number: u32, op: Op, t0: u64) {
    let Some(shim) = SHIM.get() else {
        return;
    };
    guarded(|| {
        let deadline = shim
            .emu
            .submit(t0, IoKind::Flush, shim.emu.place(number, 0), 0);
        let t1 = device_end(t0, shim.emu.complete(IoKind::Flush, t0, deadline));
        trace(shim, fd, number, op, 0, 0, t0, t1);
    });
}

// ---- per-process trace writer ------------------------------------------------------------------

static WRITER: AtomicPtr<TraceWriter> = AtomicPtr::new(std::ptr::null_mut());
static WRITER_GEN: AtomicU64 = AtomicU64::new(0);
static WRITER_LOCK: AtomicBool = AtomicBool::new(false);
static TRACE_FAILED: AtomicBool = AtomicBool::new(false);
static PARTS: AtomicU64 = AtomicU64::new(0);
/// Trace file id + 1 of each shared file number, tagged with the generation it was registered in.
static TRACE_IDS: [AtomicU64; files::SLOTS] = [const { AtomicU64::new(0) }; files::SLOTS];

pub extern "C" fn after_fork_child() {
    fork::next_generation();
    // A forked child (a PostgreSQL backend) is one more process on the device.
    if let Some(shim) = SHIM.get() {
        shim.files.attach();
    }
    // Only the forking thread exists in the child; a creation in progress elsewhere never ends.
    WRITER_LOCK.store(false, Ordering::Release);
}

pub extern "C" fn at_exit() {
    let p = WRITER.load(Ordering::Acquire);
    if !p.is_null() && WRITER_GEN.load(Ordering::Acquire) == fork::generation() {
        guarded(|| {
            // SAFETY: p is this process's leaked writer; close is idempotent.
            let _ = unsafe { &*p }.close();
        });
    }
}

/// This process's writer, created on first use. The parent's writer (inherited through fork) is
/// never used or dropped here: dropping it would write the parent's buffers a second time.
fn writer(shim: &Shim) -> Option<&'static TraceWriter> {
    let dir = shim.trace_dir.as_ref()?;
    let gen = fork::generation();
    loop {
        let p = WRITER.load(Ordering::Acquire);
        if !p.is_null() && WRITER_GEN.load(Ordering::Acquire) == gen {
            // SAFETY: writers are leaked, so the pointer stays valid.
            return Some(unsafe { &*p });
        }
        if TRACE_FAILED.load(Ordering::Relaxed) {
            return None;
        }
        if WRITER_LOCK
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            break;
        }
        std::thread::yield_now();
    }
    // Re-check under the lock: another thread may have just made it.
    let p = WRITER.load(Ordering::Acquire);
    if !p.is_null() && WRITER_GEN.load(Ordering::Acquire) == gen {
        WRITER_LOCK.store(false, Ordering::Release);
        // SAFETY: as above.
        return Some(unsafe { &*p });
    }
    let pid = std::process::id();
    let n = PARTS.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("part-{pid}-{}-{n}.trace", now_ns()));
    let mut meta = TraceMeta::new("shim");
    meta.device = Some(shim.emu.spec().name());
    meta.pid = Some(pid);
    meta.extra.insert(
        "dir".into(),
        String::from_utf8_lossy(&shim.dir).into_owned(),
    );
    let made = match TraceWriter::create(&path, meta) {
        Ok(w) => {
            let w = Box::into_raw(Box::new(w));
            WRITER.store(w, Ordering::Release);
            WRITER_GEN.store(gen, Ordering::Release);
            // SAFETY: just leaked.
            Some(unsafe { &*w })
        }
        Err(e) => {
            TRACE_FAILED.store(true, Ordering::Relaxed);
            crate::complain(&format!("{e}; this process's I/O is not traced"));
            None
        }
    };
    WRITER_LOCK.store(false, Ordering::Release);
    made
}

#[allow(clippy::too_many_arguments)]
fn trace(shim: &Shim, fd: c_int, number: u32, op: Op, offset: u64, len: u64, t0: u64, t1: u64) {
    let Some(w) = writer(shim) else {
        return;
    };
    let gen = fork::generation();
    let slot = &TRACE_IDS[number as usize % files::SLOTS];
    let v = slot.load(Ordering::Relaxed);
    let file = if v >> 17 == gen && v & 0x1_FFFF != 0 {
        ((v & 0x1_FFFF) - 1) as u16
    } else {
        let mut buf = [0u8; 4096];
        let name = match fd_path(fd, &mut buf) {
            Some(len) if under(&buf[..len], &shim.dir) => {
                let rel = &buf[shim.dir.len()..len];
                String::from_utf8_lossy(rel.strip_prefix(b"/").unwrap_or(rel)).into_owned()
            }
            _ => format!("file-{number}"),
        };
        // The shared file number is where the emulator put this file: the replay puts it there too.
        let id = w.placed_file_id(&name, number);
        slot.store((gen << 17) | (id as u64 + 1), Ordering::Relaxed);
        id
    };
    let tid = TID
        .try_with(|c| {
            let (g, t) = c.get();
            if g == gen {
                t
            } else {
                let t = oltplab_trace::current_tid();
                c.set((gen, t));
                t
            }
        })
        .unwrap_or(0);
    w.record(Record {
        submit_ns: t0.saturating_sub(w.start_ns()),
        latency_ns: t1.saturating_sub(t0).min(u32::MAX as u64) as u32,
        offset,
        len: len.min(u32::MAX as u64) as u32,
        file,
        op: op as u8,
        tag: 0,
        tid,
        cpu: CALL_CPU.try_with(Cell::get).ok().flatten(),
    });
}

/// The position after a `read`/`write` of `ret` bytes, minus `ret`: where it happened.
fn offset_before(fd: c_int, ret: isize) -> u64 {
    // SAFETY: lseek is not hooked; it only reads the descriptor's position.
    let pos = unsafe { libc::lseek64(fd, 0, libc::SEEK_CUR) };
    (pos.max(0) as u64).saturating_sub(ret.max(0) as u64)
}

// ---- open family ---------------------------------------------------------------------------------

#[inline]
unsafe fn hooked_open(
    kind: OpenKind,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    // SAFETY: forwarding the caller's arguments.
    let fd = unsafe { real::open(kind, dirfd, path, flags, mode) };
    if fd >= 0 {
        classify(fd);
    }
    fd
}

// The mode argument is variadic in libc. On x86-64 and AArch64 Linux a variadic int travels in the
// same register as a fixed one, so declaring it fixed reads the caller's value (and only matters
// with O_CREAT or O_TMPFILE, when the caller passed it).
#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    unsafe { hooked_open(OpenKind::Open, libc::AT_FDCWD, path, flags, mode) }
}
#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    unsafe { hooked_open(OpenKind::Open64, libc::AT_FDCWD, path, flags, mode) }
}
#[no_mangle]
pub unsafe extern "C" fn openat(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    unsafe { hooked_open(OpenKind::Openat, dirfd, path, flags, mode) }
}
#[no_mangle]
pub unsafe extern "C" fn openat64(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    unsafe { hooked_open(OpenKind::Openat64, dirfd, path, flags, mode) }
}
#[no_mangle]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    unsafe { hooked_open(OpenKind::Open2, libc::AT_FDCWD, path, flags, 0) }
}
#[no_mangle]
pub unsafe extern "C" fn __open64_2(path: *const c_char, flags: c_int) -> c_int {
    unsafe { hooked_open(OpenKind::Open64_2, libc::AT_FDCWD, path, flags, 0) }
}
#[no_mangle]
pub unsafe extern "C" fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    unsafe { hooked_open(OpenKind::Openat2, dirfd, path, flags, 0) }
}
#[no_mangle]
pub unsafe extern "C" fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    unsafe { hooked_open(OpenKind::Openat64_2, dirfd, path, flags, 0) }
}
#[no_mangle]
pub unsafe extern "C" fn creat(path: *const c_char, mode: mode_t) -> c_int {
    let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
    unsafe { hooked_open(OpenKind::Open, libc::AT_FDCWD, path, flags, mode) }
}
#[no_mangle]
pub unsafe extern "C" fn creat64(path: *const c_char, mode: mode_t) -> c_int {
    let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
    unsafe { hooked_open(OpenKind::Open64, libc::AT_FDCWD, path, flags, mode) }
}

// ---- close and dup -----------------------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    set_tracked(fd, None);
    undo::forget_fd(fd);
    unsafe { f::close(fd) }
}

#[no_mangle]
pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
    let new = unsafe { f::dup(fd) };
    if new >= 0 {
        set_tracked(new, tracked(fd));
        set_dsync(new, dsync(fd));
    }
    new
}

#[no_mangle]
pub unsafe extern "C" fn dup2(fd: c_int, new: c_int) -> c_int {
    undo::forget_fd(new);
    let r = unsafe { f::dup2(fd, new) };
    if r >= 0 {
        set_tracked(r, tracked(fd));
        set_dsync(r, dsync(fd));
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn dup3(fd: c_int, new: c_int, flags: c_int) -> c_int {
    undo::forget_fd(new);
    let r = unsafe { f::dup3(fd, new, flags) };
    if r >= 0 {
        set_tracked(r, tracked(fd));
        set_dsync(r, dsync(fd));
    }
    r
}

// ---- data transfer ---------------------------------------------------------------------------------

/// A positional transfer: `$call` is the real call, `$off` its offset, `$write` its direction.
/// `$before`, given the file's number, runs after the call's start is taken: a write's undo
/// record is the emulator's own bookkeeping, spent inside the modelled time, not added to it.
macro_rules! positional {
    ($fd:expr, $off:expr, $write:expr, $call:expr) => {
        positional!($fd, $off, $write, $call, |_| ())
    };
    ($fd:expr, $off:expr, $write:expr, $call:expr, $before:expr) => {{
        match tracked($fd) {
            None => unsafe { $call },
            Some(number) => {
                let t0 = call_start(|| direct($fd) || dsync($fd));
                ($before)(number);
                let ret = unsafe { $call };
                emulate_data($fd, number, $write, $off as u64, t0, ret as isize);
                ret
            }
        }
    }};
}

/// A transfer at the current file position.
macro_rules! sequential {
    ($fd:expr, $write:expr, $call:expr) => {
        sequential!($fd, $write, $call, |_| ())
    };
    ($fd:expr, $write:expr, $call:expr, $before:expr) => {{
        match tracked($fd) {
            None => unsafe { $call },
            Some(number) => {
                let t0 = call_start(|| direct($fd) || dsync($fd));
                ($before)(number);
                let ret = unsafe { $call };
                if ret > 0 {
                    let saved = errno();
                    let offset = offset_before($fd, ret as isize);
                    set_errno(saved);
                    emulate_data($fd, number, $write, offset, t0, ret as isize);
                }
                ret
            }
        }
    }};
}

#[no_mangle]
pub unsafe extern "C" fn read(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t {
    sequential!(fd, false, f::read(fd, buf, n))
}
#[no_mangle]
pub unsafe extern "C" fn __read_chk(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    buflen: size_t,
) -> ssize_t {
    sequential!(fd, false, f::read_chk(fd, buf, n, buflen))
}
#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t {
    sequential!(fd, true, f::write(fd, buf, n), |number| before_write(
        fd,
        number,
        None,
        Src::Len(n)
    ))
}
#[no_mangle]
pub unsafe extern "C" fn pread(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t {
    positional!(fd, off, false, f::pread(fd, buf, n, off))
}
#[no_mangle]
pub unsafe extern "C" fn pread64(fd: c_int, buf: *mut c_void, n: size_t, off: off64_t) -> ssize_t {
    positional!(fd, off, false, f::pread64(fd, buf, n, off))
}
#[no_mangle]
pub unsafe extern "C" fn __pread_chk(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    off: off_t,
    buflen: size_t,
) -> ssize_t {
    positional!(fd, off, false, f::pread_chk(fd, buf, n, off, buflen))
}
#[no_mangle]
pub unsafe extern "C" fn __pread64_chk(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    off: off64_t,
    buflen: size_t,
) -> ssize_t {
    positional!(fd, off, false, f::pread64_chk(fd, buf, n, off, buflen))
}
#[no_mangle]
pub unsafe extern "C" fn pwrite(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t {
    positional!(fd, off, true, f::pwrite(fd, buf, n, off), |number| {
        before_write(fd, number, Some(off), Src::Len(n))
    })
}
#[no_mangle]
pub unsafe extern "C" fn pwrite64(
    fd: c_int,
    buf: *const c_void,
    n: size_t,
    off: off64_t,
) -> ssize_t {
    positional!(fd, off, true, f::pwrite64(fd, buf, n, off), |number| {
        before_write(fd, number, Some(off), Src::Len(n))
    })
}
#[no_mangle]
pub unsafe extern "C" fn preadv(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t {
    positional!(fd, off, false, f::preadv(fd, iov, cnt, off))
}
#[no_mangle]
pub unsafe extern "C" fn preadv64(
    fd: c_int,
    iov: *const iovec,
    cnt: c_int,
    off: off64_t,
) -> ssize_t {
    positional!(fd, off, false, f::preadv64(fd, iov, cnt, off))
}
#[no_mangle]
pub unsafe extern "C" fn pwritev(fd: c_int, iov: *const iovec, cnt: c_int, off: off_t) -> ssize_t {
    positional!(fd, off, true, f::pwritev(fd, iov, cnt, off), |number| {
        before_write(fd, number, Some(off), Src::Iov(iov, cnt))
    })
}
#[no_mangle]
pub unsafe extern "C" fn pwritev64(
    fd: c_int,
    iov: *const iovec,
    cnt: c_int,
    off: off64_t,
) -> ssize_t {
    positional!(fd, off, true, f::pwritev64(fd, iov, cnt, off), |number| {
        before_write(fd, number, Some(off), Src::Iov(iov, cnt))
    })
}

/// preadv2/pwritev2 with offset -1 use (and move) the current position.
macro_rules! v2 {
    ($fd:expr, $off:expr, $write:expr, $call:expr) => {
        v2!($fd, $off, $write, $call, |_| ())
    };
    ($fd:expr, $off:expr, $write:expr, $call:expr, $before:expr) => {{
        if $off == -1 {
            sequential!($fd, $write, $call, $before)
        } else {
            positional!($fd, $off, $write, $call, $before)
        }
    }};
}

#[no_mangle]
pub unsafe extern "C" fn preadv2(
    fd: c_int,
    iov: *const iovec,
    cnt: c_int,
    off: off_t,
    flags: c_int,
) -> ssize_t {
    v2!(fd, off, false, f::preadv2(fd, iov, cnt, off, flags))
}
#[no_mangle]
pub unsafe extern "C" fn preadv64v2(
    fd: c_int,
    iov: *const iovec,
    cnt: c_int,
    off: off64_t,
    flags: c_int,
) -> ssize_t {
    v2!(fd, off, false, f::preadv64v2(fd, iov, cnt, off, flags))
}
#[no_mangle]
pub unsafe extern "C" fn pwritev2(
    fd: c_int,
    iov: *const iovec,
    cnt: c_int,
    off: off_t,
    flags: c_int,
) -> ssize_t {
    v2!(
        fd,
        off,
        true,
        f::pwritev2(fd, iov, cnt, off, flags),
        |number| before_write(fd, number, Some(off), Src::Iov(iov, cnt))
    )
}
#[no_mangle]
pub unsafe extern "C" fn pwritev64v2(
    fd: c_int,
    iov: *const iovec,
    cnt: c_int,
    off: off64_t,
    flags: c_int,
) -> ssize_t {
    v2!(
        fd,
        off,
        true,
        f::pwritev64v2(fd, iov, cnt, off, flags),
        |number| before_write(fd, number, Some(off), Src::Iov(iov, cnt))
    )
}

// ---- syncs ---------------------------------------------------------------------------------------

macro_rules! flush {
    ($fd:expr, $op:expr, $call:expr) => {{
        match (tracked($fd), SHIM.get()) {
            (Some(number), Some(shim)) => {
                let t0 = call_start(|| true);
                // Numbered when it begins: it makes durable the writes issued before it.
                let seq = shim
                    .undo
                    .as_ref()
                    .and_then(|u| u.flush_seq(&shim.files, number));
                // With RAM backing the page cache is the medium: nothing to make durable.
                let ret = if shim.ram { 0 } else { unsafe { $call } };
                if ret == 0 {
                    emulate_flush($fd, number, $op, t0);
                    if let (Some(u), Some(seq)) = (&shim.undo, seq) {
                        guarded(|| u.record_flush(seq, number));
                    }
                }
                ret
            }
            _ => unsafe { $call },
        }
    }};
}

#[no_mangle]
pub unsafe extern "C" fn fsync(fd: c_int) -> c_int {
    flush!(fd, Op::Fsync, f::fsync(fd))
}
#[no_mangle]
pub unsafe extern "C" fn fdatasync(fd: c_int) -> c_int {
    flush!(fd, Op::Fdatasync, f::fdatasync(fd))
}

/// Traced but not delayed: PostgreSQL and InnoDB use it to start write-back early, and in the model
/// every write already reached the device when its call returned. Nor a flush for the undo log:
/// it writes the page cache out but does not flush the drive's cache (sync_file_range(2)).
#[no_mangle]
pub unsafe extern "C" fn sync_file_range(
    fd: c_int,
    off: off64_t,
    n: off64_t,
    flags: c_uint,
) -> c_int {
    match (tracked(fd), SHIM.get()) {
        (Some(number), Some(shim)) => {
            let t0 = call_start(|| false);
            let ret = if shim.ram {
                0
            } else {
                unsafe { f::sync_file_range(fd, off, n, flags) }
            };
            if ret == 0 {
                guarded(|| {
                    let t1 = now_ns();
                    trace(
                        shim,
                        fd,
                        number,
                        Op::SyncRange,
                        off.max(0) as u64,
                        n.max(0) as u64,
                        t0,
                        t1,
                    );
                });
            }
            ret
        }
        _ => unsafe { f::sync_file_range(fd, off, n, flags) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_directory() {
        assert!(under(b"/data/x", b"/data"));
        assert!(under(b"/data", b"/data"));
        assert!(!under(b"/database/x", b"/data"));
        assert!(!under(b"/other", b"/data"));
        assert!(under(b"/anything", b"/"));
    }

    /// On `host`, a traced call's end leaves out the time its thread queued for a core during it:
    /// a thread that shares a core with three busy ones for 100 ms queues most of that time.
    #[test]
    fn a_host_calls_trace_end_leaves_out_its_wait_for_a_core() {
        if oltplab_devmodel::run_delay_ns().is_none() {
            oltplab_core::testing::skip(
                oltplab_core::testing::Need::Kernel,
                "the kernel's run-queue account (/proc/thread-self/schedstat, CONFIG_SCHED_INFO)",
            );
            return;
        }
        let busy = oltplab_core::testing::BusyCore::new(3);
        let (t0, t1, end, again) = std::thread::spawn(|| {
            oltplab_core::testing::pin_to_cpu0();
            CALL_QUEUED.with(|c| c.set(oltplab_devmodel::run_delay_ns()));
            let t0 = now_ns();
            while now_ns() < t0 + 100_000_000 {
                std::hint::spin_loop();
            }
            let t1 = now_ns();
            (t0, t1, device_end(t0, t1), device_end(t0, t1))
        })
        .join()
        .unwrap();
        drop(busy);
        // A share of the 100 ms, and never more than the call took.
        let queued_ms = (t1 - end) as f64 / 1e6;
        assert!(
            queued_ms >= 20.0,
            "{queued_ms} ms of {} ms",
            (t1 - t0) / 1_000_000
        );
        assert!(end >= t0);
        // The start is taken once: a later call without one keeps its own end.
        assert_eq!(again, t1);
    }

    #[test]
    fn fd_paths_resolve() {
        let mut buf = [0u8; 4096];
        // fd 0..2 may be anything; open a known file.
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        use std::os::fd::AsRawFd;
        let len = fd_path(file.as_raw_fd(), &mut buf).unwrap();
        assert!(
            buf[..len].starts_with(b"/proc/"),
            "{:?}",
            String::from_utf8_lossy(&buf[..len])
        );
    }
}
