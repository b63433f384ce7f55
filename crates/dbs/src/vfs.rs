//! The oltplab SQLite VFS: a thin layer over SQLite's default (unix) VFS that sees every read,
//! write and sync SQLite does on its database, WAL and journal files. It counts them, records them
//! into an I/O trace, and — with a device emulator — holds each one until the emulated device would
//! have completed it. Being in-process, it knows which thread (terminal) and which transaction type
//! (see [`set_thread_tag`]) caused each I/O.
//!
//! Under emulation the emulated path sees every read and write as a device I/O (as with O_DIRECT on
//! a raw device); the operating system's page cache only serves as fast backing storage. A sync
//! is not passed to the real disk then: its cost is the model's, not this machine's disk's.

use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::size_of;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use oltplab_core::{Error, Result};
use oltplab_devmodel::durability::{CrashLog, CrashState};
use oltplab_devmodel::{slot, slot_device, Emulator, IoKind, Role, Spec};
use oltplab_trace::{Op, Record, TraceWriter};
use rusqlite::ffi;
use serde::Serialize;

thread_local! {
    /// What the current thread is doing (0 none, 1..=5 a TPC-C transaction type), stamped on each
    /// traced I/O so that I/O can be counted per transaction type.
    pub static TAG: Cell<u8> = const { Cell::new(0) };
    static TID: u32 = unsafe { libc::gettid() } as u32;
}

/// The emulator's spin so far in this thread (the VFS waits in the caller's thread).
pub use oltplab_devmodel::thread_spin_ns;

/// Stamps this thread's following I/Os with `tag`.
pub fn set_thread_tag(tag: u8) {
    TAG.with(|t| t.set(tag))
}

/// What the VFS does besides passing I/O on.
#[derive(Clone, Default)]
pub struct VfsOptions {
    /// Record every I/O here.
    pub trace: Option<Arc<TraceWriter>>,
    /// Hold every I/O until this emulated device completes it (`host` means no emulation).
    pub emulator: Option<Arc<Emulator>>,
    /// Database files (full paths, as SQLite names them) that go on another device of the
    /// layout than the data's: the files of placed tables.
    pub placed_files: Vec<(String, u8)>,
    /// Keep what a power cut could lose, and let the caller cut the power ([`CrashCapture`]).
    pub crash: Option<Arc<CrashCapture>>,
}

/// A power cut on the emulated device: the log of writes a cut could lose (with what each
/// replaced, read before it is overwritten), and the cut itself. After [`CrashCapture::cut`] no
/// I/O reaches the files and every call fails, as if the process had died at that instant; the
/// files then hold every write that completed before it, and [`CrashCapture::states`] says what
/// the device would have kept of them.
pub struct CrashCapture {
    /// Writes take it around their real call, so a cut falls between two writes, never in one.
    log: Mutex<CrashLog>,
    cut: std::sync::atomic::AtomicBool,
}

impl CrashCapture {
    pub fn new(spec: &Spec) -> Arc<CrashCapture> {
        Arc::new(CrashCapture {
            log: Mutex::new(CrashLog::new(spec)),
            cut: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn log(&self) -> std::sync::MutexGuard<'_, CrashLog> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Cuts the power: no later I/O reaches the files.
    pub fn cut(&self) {
        let _log = self.log();
        self.cut.store(true, Ordering::SeqCst);
    }

    pub fn is_cut(&self) -> bool {
        self.cut.load(Ordering::SeqCst)
    }

    /// Writes a cut now would find not yet durable.
    pub fn pending_writes(&self) -> u64 {
        self.log().pending_writes()
    }

    /// `n` states the device may have left (see [`CrashLog::states`]).
    pub fn states(&self, seed: u64, n: usize) -> Vec<CrashState> {
        self.log().states(seed, n)
    }
}

/// I/O the VFS saw, since it was registered.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct VfsCounts {
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
}

/// One thread's share of the counts. Threads count into their own cache line (by thread id), so that
/// terminals on different cores do not bounce one line back and forth on every I/O.
#[derive(Default)]
#[repr(align(128))]
struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    syncs: AtomicU64,
    read_bytes: AtomicU64,
    written_bytes: AtomicU64,
}

const COUNTER_SLOTS: usize = 16;

struct State {
    base: *mut ffi::sqlite3_vfs,
    options: VfsOptions,
    /// Emulating a device other than `host`: syncs go to the model, not to the real disk.
    emulating: bool,
    counters: [Counters; COUNTER_SLOTS],
    /// File name → index, for the emulator's placement of files on the device.
    files: Mutex<HashMap<String, u32>>,
    /// I/Os the real file system refused.
    errors: AtomicU32,
    /// The [`TraceWindow`] in atomics, read on every I/O: whether any I/O is traced, from when,
    /// and until when if the window has an end yet.
    trace_on: AtomicBool,
    trace_from_ns: AtomicU64,
    trace_bounded: AtomicBool,
    trace_until_ns: AtomicU64,
}

/// Which I/Os go into the trace, by their submission time (CLOCK_MONOTONIC ns): the measured
/// window, without the warm-up or what happens after it (closing connections checkpoints the WAL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceWindow {
    pub from_ns: u64,
    /// None: the window has no end yet.
    pub until_ns: Option<u64>,
}

impl TraceWindow {
    /// Every I/O from the start on (a new VFS's window).
    pub const ALL: TraceWindow = TraceWindow {
        from_ns: 0,
        until_ns: None,
    };

    pub fn contains(&self, t_ns: u64) -> bool {
        t_ns >= self.from_ns && self.until_ns.is_none_or(|u| t_ns < u)
    }
}

// SAFETY: `base` points to SQLite's static default VFS, valid for the process's lifetime; all other
// fields are thread-safe.
unsafe impl Send for State {}
unsafe impl Sync for State {}

impl State {
    fn trace_window(&self) -> Option<TraceWindow> {
        if !self.trace_on.load(Ordering::Relaxed) {
            return None;
        }
        Some(TraceWindow {
            from_ns: self.trace_from_ns.load(Ordering::Relaxed),
            until_ns: (self.trace_bounded.load(Ordering::Relaxed))
                .then(|| self.trace_until_ns.load(Ordering::Relaxed)),
        })
    }
}

/// A registered VFS. Open connections with `name()`; drop it only after they are closed.
pub struct Vfs {
    name: CString,
    vfs: *mut ffi::sqlite3_vfs,
    state: Arc<State>,
}

// SAFETY: the raw VFS is only unregistered and freed in Drop; SQLite serialises registration.
unsafe impl Send for Vfs {}
unsafe impl Sync for Vfs {}

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

impl Vfs {
    /// Registers a new VFS (not the default one) wrapping SQLite's default VFS.
    pub fn register(options: VfsOptions) -> Result<Vfs> {
        // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS (initialising SQLite if needed).
        let base = unsafe {
            ffi::sqlite3_initialize();
            ffi::sqlite3_vfs_find(ptr::null())
        };
        if base.is_null() {
            return Err(Error::failed("SQLite has no default VFS to wrap"));
        }
        let emulating = options
            .emulator
            .as_ref()
            .is_some_and(|e| !e.spec().is_host());
        let state = Arc::new(State {
            base,
            options,
            emulating,
            counters: Default::default(),
            files: Mutex::new(HashMap::new()),
            errors: AtomicU32::new(0),
            trace_on: AtomicBool::new(true),
            trace_from_ns: AtomicU64::new(TraceWindow::ALL.from_ns),
            trace_bounded: AtomicBool::new(false),
            trace_until_ns: AtomicU64::new(0),
        });
        let name = CString::new(format!(
            "oltplab-{}-{}",
            std::process::id(),
            NEXT_ID.fetch_add(1, Ordering::Relaxed)
        ))
        .expect("no NUL in the name");
        // SAFETY: copying the default VFS and replacing what we wrap; unix VFS methods other than
        // xOpen ignore their VFS argument, so they may be called with ours.
        let mut vfs: ffi::sqlite3_vfs = unsafe { ptr::read(base) };
        vfs.szOsFile = (size_of::<OlFile>() as c_int) + unsafe { (*base).szOsFile };
        vfs.pNext = ptr::null_mut();
        vfs.zName = name.as_ptr();
        vfs.pAppData = Arc::as_ptr(&state) as *mut c_void;
        vfs.xOpen = Some(x_open);
        vfs.xDelete = Some(x_delete);
        let vfs = Box::into_raw(Box::new(vfs));
        // SAFETY: `vfs` is a valid, fully initialised VFS that outlives its registration.
        let rc = unsafe { ffi::sqlite3_vfs_register(vfs, 0) };
        if rc != ffi::SQLITE_OK {
            // SAFETY: not registered, so nobody else holds it.
            drop(unsafe { Box::from_raw(vfs) });
            return Err(Error::failed(format!(
                "registering the SQLite VFS failed (code {rc})"
            )));
        }
        Ok(Vfs { name, vfs, state })
    }

    /// The name to open connections with.
    pub fn name(&self) -> &str {
        self.name.to_str().expect("ASCII name")
    }

    /// I/O seen so far.
    pub fn counts(&self) -> VfsCounts {
        let sum = |field: fn(&Counters) -> &AtomicU64| {
            let slots = self.state.counters.iter();
            slots.map(|c| field(c).load(Ordering::Relaxed)).sum()
        };
        VfsCounts {
            reads: sum(|c| &c.reads),
            writes: sum(|c| &c.writes),
            syncs: sum(|c| &c.syncs),
            read_bytes: sum(|c| &c.read_bytes),
            written_bytes: sum(|c| &c.written_bytes),
        }
    }

    /// Traces only I/Os submitted in `window`; None: none at all (before the measured window).
    pub fn trace_window(&self, window: Option<TraceWindow>) {
        let s = &self.state;
        match window {
            None => s.trace_on.store(false, Ordering::Relaxed),
            Some(w) => {
                s.trace_from_ns.store(w.from_ns, Ordering::Relaxed);
                s.trace_until_ns
                    .store(w.until_ns.unwrap_or(0), Ordering::Relaxed);
                s.trace_bounded
                    .store(w.until_ns.is_some(), Ordering::Relaxed);
                s.trace_on.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The window set last (None: nothing is traced).
    pub fn traced_window(&self) -> Option<TraceWindow> {
        self.state.trace_window()
    }

    /// I/Os the real file system refused.
    pub fn failed_ios(&self) -> u32 {
        self.state.errors.load(Ordering::Relaxed)
    }

    /// Every file opened through this VFS (as SQLite named it) with its slot on the device.
    pub fn files(&self) -> Vec<(String, u32)> {
        let files = self.state.files.lock().unwrap_or_else(|p| p.into_inner());
        files.iter().map(|(p, s)| (p.clone(), *s)).collect()
    }
}

impl Drop for Vfs {
    fn drop(&mut self) {
        // SAFETY: registered in `register`; the caller has closed every connection using it.
        unsafe {
            ffi::sqlite3_vfs_unregister(self.vfs);
            drop(Box::from_raw(self.vfs));
        }
    }
}

/// Our file: SQLite's base struct first (so SQLite can use it as a `sqlite3_file`), then what we
/// need, then the wrapped VFS's own file struct.
#[repr(C)]
struct OlFile {
    base: ffi::sqlite3_file,
    state: *const State,
    real: *mut ffi::sqlite3_file,
    file_index: u32,
    trace_file: u16,
}

fn now_ns() -> u64 {
    oltplab_devmodel::now_ns()
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let state = &*((*vfs).pAppData as *const State);
    let ol = file as *mut OlFile;
    // The wrapped file struct lives right after ours; SQLite allocated szOsFile bytes.
    let real = (file as *mut u8).add(size_of::<OlFile>()) as *mut ffi::sqlite3_file;
    (*ol).base.pMethods = ptr::null();
    let rc = ((*state.base).xOpen.expect("default VFS has xOpen"))(
        state.base, name, real, flags, out_flags,
    );
    if rc != ffi::SQLITE_OK || (*real).pMethods.is_null() {
        return rc;
    }
    let path = if name.is_null() {
        "<temporary>".to_string()
    } else {
        CStr::from_ptr(name).to_string_lossy().into_owned()
    };
    // On a layout, the file's role picks its device: the database, its log, or temporary files.
    let role = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        Role::Data
    } else if flags & (ffi::SQLITE_OPEN_WAL | ffi::SQLITE_OPEN_MAIN_JOURNAL) != 0 {
        Role::Log
    } else {
        Role::Temp
    };
    let placed = (role == Role::Data)
        .then(|| state.options.placed_files.iter().find(|(p, _)| *p == path))
        .flatten();
    let device = match placed {
        Some((_, device)) => *device,
        None => (state.options.emulator.as_ref()).map_or(0, |e| e.spec().device_of(&role)),
    };
    let file_index = {
        let mut files = state.files.lock().unwrap_or_else(|p| p.into_inner());
        let next = files.len() as u32;
        *files.entry(path.clone()).or_insert(slot(device, next))
    };
    let trace_file =
        (state.options.trace.as_ref()).map_or(0, |t| t.placed_file_id(&path, file_index));
    (*ol).state = state;
    (*ol).real = real;
    (*ol).file_index = file_index;
    (*ol).trace_file = trace_file;
    (*ol).base.pMethods = methods_for((*real).pMethods);
    rc
}

/// Deleting a file is file system metadata, which a cut does not model: its pending writes count as
/// durable. After a cut nothing is deleted.
unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    let state = &*((*vfs).pAppData as *const State);
    if let Some(crash) = state.options.crash.as_ref() {
        let mut log = crash.log();
        if crash.is_cut() {
            return ffi::SQLITE_IOERR_DELETE;
        }
        if !name.is_null() {
            let path = CStr::from_ptr(name).to_string_lossy();
            let files = state.files.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(slot) = files.get(path.as_ref()) {
                log.forget_file(*slot);
            }
        }
        return ((*state.base).xDelete.expect("default VFS has xDelete"))(
            state.base, name, sync_dir,
        );
    }
    ((*state.base).xDelete.expect("default VFS has xDelete"))(state.base, name, sync_dir)
}

/// Our method table, of the same version as the wrapped one (SQLite checks iVersion before
/// calling the shared-memory and memory-map methods).
fn methods_for(real: *const ffi::sqlite3_io_methods) -> *const ffi::sqlite3_io_methods {
    static METHODS: [ffi::sqlite3_io_methods; 3] =
        [method_table(1), method_table(2), method_table(3)];
    // SAFETY: `real` is the wrapped file's valid method table.
    let version = unsafe { (*real).iVersion }.clamp(1, 3);
    &METHODS[version as usize - 1]
}

const fn method_table(version: c_int) -> ffi::sqlite3_io_methods {
    ffi::sqlite3_io_methods {
        iVersion: version,
        xClose: Some(x_close),
        xRead: Some(x_read),
        xWrite: Some(x_write),
        xTruncate: Some(x_truncate),
        xSync: Some(x_sync),
        xFileSize: Some(x_file_size),
        xLock: Some(x_lock),
        xUnlock: Some(x_unlock),
        xCheckReservedLock: Some(x_check_reserved_lock),
        xFileControl: Some(x_file_control),
        xSectorSize: Some(x_sector_size),
        xDeviceCharacteristics: Some(x_device_characteristics),
        xShmMap: if version >= 2 { Some(x_shm_map) } else { None },
        xShmLock: if version >= 2 { Some(x_shm_lock) } else { None },
        xShmBarrier: if version >= 2 {
            Some(x_shm_barrier)
        } else {
            None
        },
        xShmUnmap: if version >= 2 {
            Some(x_shm_unmap)
        } else {
            None
        },
        xFetch: if version >= 3 { Some(x_fetch) } else { None },
        xUnfetch: if version >= 3 { Some(x_unfetch) } else { None },
    }
}

/// The wrapped file and its methods.
unsafe fn real(
    file: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    let real = (*(file as *mut OlFile)).real;
    (real, &*(*real).pMethods)
}

/// Does one I/O: the real call, then (emulating) the wait for the modelled completion, then the
/// counting and the trace record.
unsafe fn timed_io(
    file: *mut ffi::sqlite3_file,
    kind: IoKind,
    offset: u64,
    len: u64,
    real_call: impl FnOnce() -> c_int,
) -> c_int {
    let ol = &*(file as *mut OlFile);
    let state = &*ol.state;
    let start_ns = now_ns();
    // The CPU the call is issued on, for `--order btreplay` (bunches per CPU, as btrecord's).
    let cpu = state
        .options
        .trace
        .as_ref()
        .and_then(|_| oltplab_trace::current_cpu());
    let rc = real_call();
    if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_IOERR_SHORT_READ {
        state.errors.fetch_add(1, Ordering::Relaxed);
    }
    // Emulating, the trace gets the device's end of the I/O (see `Emulator::complete`).
    let (start_ns, end_ns) = match state.options.emulator.as_ref().filter(|_| state.emulating) {
        Some(emulator) => {
            let address = emulator.place(ol.file_index, offset);
            let done_ns = emulator.submit(start_ns, kind, address, len);
            (start_ns, emulator.complete(kind, start_ns, done_ns))
        }
        None => (start_ns, now_ns()),
    };
    let tid = TID.with(|t| *t);
    let c = &state.counters[tid as usize % COUNTER_SLOTS];
    let op = match kind {
        IoKind::Read => {
            c.reads.fetch_add(1, Ordering::Relaxed);
            c.read_bytes.fetch_add(len, Ordering::Relaxed);
            Op::Read
        }
        IoKind::Write => {
            c.writes.fetch_add(1, Ordering::Relaxed);
            c.written_bytes.fetch_add(len, Ordering::Relaxed);
            Op::Write
        }
        IoKind::Flush => {
            c.syncs.fetch_add(1, Ordering::Relaxed);
            Op::Fsync
        }
    };
    let trace = state.options.trace.as_ref();
    let in_window = |t: u64| state.trace_window().is_some_and(|w| w.contains(t));
    if let Some(trace) = trace.filter(|_| in_window(start_ns)) {
        trace.record(Record {
            submit_ns: start_ns.saturating_sub(trace.start_ns()),
            latency_ns: end_ns.saturating_sub(start_ns).min(u32::MAX as u64) as u32,
            offset,
            len: len as u32,
            file: ol.trace_file,
            op: op as u8,
            tag: TAG.with(|t| t.get()),
            tid,
            cpu,
        });
    }
    rc
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, m) = real(file);
    let rc = (m.xClose.expect("xClose"))(real);
    (*(file as *mut OlFile)).base.pMethods = ptr::null();
    rc
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let (real, m) = real(file);
    if crash_of(file).is_some_and(|c| c.is_cut()) {
        return ffi::SQLITE_IOERR_READ;
    }
    timed_io(file, IoKind::Read, offset as u64, amount as u64, || {
        (m.xRead.expect("xRead"))(real, buf, amount, offset)
    })
}

/// The power-cut capture of `file`'s VFS, if any.
unsafe fn crash_of<'a>(file: *mut ffi::sqlite3_file) -> Option<&'a CrashCapture> {
    let state = &*(*(file as *mut OlFile)).state;
    state.options.crash.as_deref()
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    let (real, m) = real(file);
    let Some(crash) = crash_of(file) else {
        return timed_io(file, IoKind::Write, offset as u64, amount as u64, || {
            (m.xWrite.expect("xWrite"))(real, buf, amount, offset)
        });
    };
    let slot = (*(file as *mut OlFile)).file_index;
    let rc = timed_io(file, IoKind::Write, offset as u64, amount as u64, || {
        let mut log = crash.log();
        if crash.is_cut() {
            return ffi::SQLITE_IOERR_WRITE;
        }
        // What the write replaces, read before it does (zeros past the end of the file: the unix
        // VFS fills a short read with them).
        let old = if log.keeps(slot) && amount > 0 {
            let mut old = vec![0u8; amount as usize];
            let rc = (m.xRead.expect("xRead"))(real, old.as_mut_ptr().cast(), amount, offset);
            if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_IOERR_SHORT_READ {
                return rc;
            }
            Some(old)
        } else {
            None
        };
        let rc = (m.xWrite.expect("xWrite"))(real, buf, amount, offset);
        if let (Some(old), ffi::SQLITE_OK) = (old, rc) {
            let new = std::slice::from_raw_parts(buf.cast::<u8>(), amount as usize).to_vec();
            log.write(slot, offset as u64, old, new);
        }
        rc
    });
    // A write still on its way to the device when the power went did not complete.
    if crash.is_cut() {
        return ffi::SQLITE_IOERR_WRITE;
    }
    rc
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let (real, m) = real(file);
    let emulating = (*(*(file as *mut OlFile)).state).emulating;
    let crash = crash_of(file);
    if crash.is_some_and(|c| c.is_cut()) {
        return ffi::SQLITE_IOERR_FSYNC;
    }
    let rc = timed_io(file, IoKind::Flush, 0, 0, || {
        if emulating {
            ffi::SQLITE_OK
        } else {
            (m.xSync.expect("xSync"))(real, flags)
        }
    });
    // The flush is durable when the device completes it, if the power was still on then.
    if let Some(crash) = crash {
        let mut log = crash.log();
        if crash.is_cut() {
            return ffi::SQLITE_IOERR_FSYNC;
        }
        if rc == ffi::SQLITE_OK {
            log.flush(slot_device((*(file as *mut OlFile)).file_index));
        }
    }
    rc
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    let (real, m) = real(file);
    if let Some(crash) = crash_of(file) {
        let mut log = crash.log();
        if crash.is_cut() {
            return ffi::SQLITE_IOERR_TRUNCATE;
        }
        // File sizes are metadata, not modelled: pending writes past the new end go with it.
        let rc = (m.xTruncate.expect("xTruncate"))(real, size);
        if rc == ffi::SQLITE_OK {
            log.truncate((*(file as *mut OlFile)).file_index, size.max(0) as u64);
        }
        return rc;
    }
    (m.xTruncate.expect("xTruncate"))(real, size)
}

unsafe extern "C" fn x_file_size(file: *mut ffi::sqlite3_file, size: *mut i64) -> c_int {
    let (real, m) = real(file);
    (m.xFileSize.expect("xFileSize"))(real, size)
}

unsafe extern "C" fn x_lock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let (real, m) = real(file);
    (m.xLock.expect("xLock"))(real, level)
}

unsafe extern "C" fn x_unlock(file: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    let (real, m) = real(file);
    (m.xUnlock.expect("xUnlock"))(real, level)
}

unsafe extern "C" fn x_check_reserved_lock(file: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let (real, m) = real(file);
    (m.xCheckReservedLock.expect("xCheckReservedLock"))(real, out)
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let (real, m) = real(file);
    (m.xFileControl.expect("xFileControl"))(real, op, arg)
}

unsafe extern "C" fn x_sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, m) = real(file);
    (m.xSectorSize.expect("xSectorSize"))(real)
}

unsafe extern "C" fn x_device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let (real, m) = real(file);
    (m.xDeviceCharacteristics.expect("xDeviceCharacteristics"))(real)
}

unsafe extern "C" fn x_shm_map(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (real, m) = real(file);
    (m.xShmMap.expect("xShmMap"))(real, region, size, extend, out)
}

unsafe extern "C" fn x_shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    let (real, m) = real(file);
    (m.xShmLock.expect("xShmLock"))(real, offset, n, flags)
}

unsafe extern "C" fn x_shm_barrier(file: *mut ffi::sqlite3_file) {
    let (real, m) = real(file);
    (m.xShmBarrier.expect("xShmBarrier"))(real)
}

unsafe extern "C" fn x_shm_unmap(file: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let (real, m) = real(file);
    (m.xShmUnmap.expect("xShmUnmap"))(real, delete)
}

/// Memory-mapped reads would bypass the VFS (and so the trace and the emulated device): say "not
/// mapped", and SQLite falls back to xRead.
unsafe extern "C" fn x_fetch(
    _file: *mut ffi::sqlite3_file,
    _offset: i64,
    _amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    *out = ptr::null_mut();
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_unfetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    page: *mut c_void,
) -> c_int {
    let (real, m) = real(file);
    (m.xUnfetch.expect("xUnfetch"))(real, offset, page)
}
