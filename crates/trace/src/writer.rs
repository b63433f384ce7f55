//! Capture: [`TraceWriter`] takes records from any number of database threads without stalling
//! them. Each thread appends to its own buffer (an uncontended lock that only `finish` ever
//! competes for); a full buffer becomes one chunk written with one `pwrite` at an offset reserved by
//! an atomic add, so threads never wait for each other's writes. Buffers older than a second are
//! written too, so a crashed run leaves most of its trace behind.
//!
//! Inside an LD_PRELOAD shim the writer must not call the functions the shim interposes: file
//! writes and syncs go through raw system calls. After `fork`, the child must create its own
//! writer (its own part file); the parent's is not safe to use there.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use oltplab_core::safety::io_usage;
use oltplab_core::{Error, Result};
use serde::Serialize;

use crate::format::{
    self, ChunkKind, Header, TraceMeta, CHUNK_HEADER_BYTES, CPU_RECORD_BYTES, FLAG_FINISHED,
    HEADER_BYTES, RECORD_BYTES,
};
use crate::{monotonic_ns, Record};

/// Records per thread buffer (72 KiB with their CPUs): big sequential writes, bounded memory per
/// thread. A capture writes records with their CPU (kind 6), so its traces are version 2.
pub const RECORDS_PER_CHUNK: usize = 2048;
/// A buffer holding records older than this is written even if not full.
const FLUSH_AGE_NS: u64 = 1_000_000_000;
/// The file-table id given to files beyond the 65,535th.
pub const OVERFLOW_FILE_ID: u16 = u16::MAX;

static NEXT_WRITER_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's buffer in each live writer, by writer id.
    static LOCAL: RefCell<Vec<(u64, Arc<Shard>)>> = const { RefCell::new(Vec::new()) };
    /// The buffer this thread used last, and its writer's id: the per-record fast path. The
    /// pointer stays valid while that writer lives (`LOCAL` and the writer both hold the buffer),
    /// and writer ids are never reused, so a matching id means a live writer.
    static LAST: Cell<(u64, *const Shard)> = const { Cell::new((0, std::ptr::null())) };
}

/// What a finished capture holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TraceSummary {
    pub path: PathBuf,
    pub records: u64,
    /// Records that arrived after `finish` began or could not be written.
    pub dropped_records: u64,
    pub files: u64,
    pub size_bytes: u64,
    /// From the trace's start to the end of its last operation.
    pub duration_ns: u64,
}

/// Writes one trace file from any number of threads. `Send + Sync`: share it by reference or `Arc`.
pub struct TraceWriter {
    inner: Arc<Inner>,
}

struct Inner {
    id: u64,
    path: PathBuf,
    file: File,
    start_ns: u64,
    start_unix_ns: u64,
    next_offset: AtomicU64,
    records: AtomicU64,
    dropped: AtomicU64,
    closed: AtomicBool,
    files: Mutex<FileTable>,
    shards: Mutex<Vec<Arc<Shard>>>,
    /// Used when a thread's local storage is gone (a record from a thread-exit destructor).
    fallback: Arc<Shard>,
    first_error: Mutex<Option<String>>,
    summary: Mutex<Option<TraceSummary>>,
}

#[derive(Default)]
struct FileTable {
    by_path: HashMap<String, u16>,
    placed: std::collections::HashSet<u16>,
}

struct Shard {
    buf: Mutex<ShardBuf>,
}

struct ShardBuf {
    /// Chunk header space followed by `n` encoded records.
    bytes: Vec<u8>,
    n: usize,
    oldest_submit_ns: u64,
    last_end_ns: u64,
}

impl Shard {
    fn new() -> Arc<Self> {
        Arc::new(Shard {
            buf: Mutex::new(ShardBuf {
                bytes: vec![0u8; CHUNK_HEADER_BYTES + RECORDS_PER_CHUNK * CPU_RECORD_BYTES],
                n: 0,
                oldest_submit_ns: 0,
                last_end_ns: 0,
            }),
        })
    }
}

/// A poisoned lock only means another thread panicked while holding it; the data is plain bytes.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl TraceWriter {
    /// Creates `path` (which must not exist) and writes the header and `meta`.
    pub fn create(path: &Path, meta: TraceMeta) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    Error::usage(format!(
                        "{} already exists: choose a new trace file name (oltplab never overwrites a trace)",
                        path.display()
                    ))
                } else {
                    io_usage(path, "create the trace file", &e)
                }
            })?;
        let start_ns = monotonic_ns();
        let start_unix_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let header = Header {
            version: format::VERSION,
            flags: 0,
            start_ns,
            start_unix_ns,
            records: 0,
            end_bytes: 0,
        };
        let meta_json = serde_json::to_vec(&meta).expect("meta serialises");
        let meta_chunk = format::chunk(ChunkKind::Meta, &meta_json);
        let mut first = header.encode().to_vec();
        first.extend_from_slice(&meta_chunk);
        pwrite_all(&file, &first, 0).map_err(|e| io_usage(path, "write the trace file", &e))?;
        let inner = Inner {
            id: NEXT_WRITER_ID.fetch_add(1, Ordering::Relaxed),
            path: path.to_path_buf(),
            file,
            start_ns,
            start_unix_ns,
            next_offset: AtomicU64::new(first.len() as u64),
            records: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            files: Mutex::new(FileTable::default()),
            shards: Mutex::new(Vec::new()),
            fallback: Shard::new(),
            first_error: Mutex::new(None),
            summary: Mutex::new(None),
        };
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// CLOCK_MONOTONIC (ns) when the trace was created; `Record::submit_ns` is relative to it.
    pub fn start_ns(&self) -> u64 {
        self.inner.start_ns
    }

    /// Nanoseconds since the trace's start: the `submit_ns` of an operation starting now.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.inner.start_ns)
    }

    /// The id of `path` in the file table, registering it (and writing its entry at once) the first
    /// time. Call it when a file is opened, not per I/O: it takes a lock.
    pub fn file_id(&self, path: &str) -> u16 {
        let inner = &*self.inner;
        let mut table = lock(&inner.files);
        if let Some(&id) = table.by_path.get(path) {
            return id;
        }
        let id = table.by_path.len();
        let (id, name) = if id < OVERFLOW_FILE_ID as usize {
            (id as u16, path)
        } else {
            // One entry stands for every further file; 65,535 distinct files is far beyond a database.
            (OVERFLOW_FILE_ID, "(more files)")
        };
        if id == OVERFLOW_FILE_ID && table.by_path.values().any(|&v| v == OVERFLOW_FILE_ID) {
            return id;
        }
        table.by_path.insert(path.to_string(), id);
        // Written while the table lock is held, so an entry is on disk before any record using it.
        let chunk = format::chunk(ChunkKind::Files, &format::encode_files([(id, name)]));
        inner.write_chunk(&chunk);
        id
    }

    /// Registers `path` as [`TraceWriter::file_id`] does and records that the run's emulator placed
    /// it at `device_slot`, so that a replay puts it at the same device offsets.
    pub fn placed_file_id(&self, path: &str, device_slot: u32) -> u16 {
        let id = self.file_id(path);
        let inner = &*self.inner;
        let mut table = lock(&inner.files);
        if id != OVERFLOW_FILE_ID && table.placed.insert(id) {
            let chunk = format::chunk(
                ChunkKind::Places,
                &format::encode_places([(id, device_slot)]),
            );
            inner.write_chunk(&chunk);
        }
        id
    }

    /// Adds one record. Never blocks on another database thread.
    #[inline]
    pub fn record(&self, rec: Record) {
        let inner = &*self.inner;
        if let Ok((id, shard)) = LAST.try_with(Cell::get) {
            if id == inner.id {
                // SAFETY: see `LAST`; `self` being alive keeps the writer alive.
                inner.push(unsafe { &*shard }, &rec);
                return;
            }
        }
        let pushed = LOCAL.try_with(|local| {
            let mut local = local.borrow_mut();
            let shard = match local.iter().find(|(id, _)| *id == inner.id) {
                Some((_, shard)) => Arc::clone(shard),
                None => {
                    // Forget buffers of writers that have finished (the writer dropped its handle).
                    local.retain(|(_, s)| Arc::strong_count(s) > 1);
                    let shard = Shard::new();
                    lock(&inner.shards).push(Arc::clone(&shard));
                    local.push((inner.id, Arc::clone(&shard)));
                    shard
                }
            };
            drop(local);
            let _ = LAST.try_with(|last| last.set((inner.id, Arc::as_ptr(&shard))));
            inner.push(&shard, &rec);
        });
        if pushed.is_err() {
            inner.push(&inner.fallback, &rec);
        }
    }

    /// Writes every thread's buffer and the final header; records arriving later are dropped and
    /// counted. Idempotent, so a shim holding the writer in a `static` can call it at exit.
    pub fn close(&self) -> Result<TraceSummary> {
        self.inner.close()
    }

    /// [`close`](Self::close), consuming the writer.
    pub fn finish(self) -> Result<TraceSummary> {
        self.inner.close()
    }
}

impl Drop for TraceWriter {
    fn drop(&mut self) {
        let _ = self.inner.close();
    }
}

impl Inner {
    #[inline]
    fn push(&self, shard: &Shard, rec: &Record) {
        let mut b = lock(&shard.buf);
        // Checked under the buffer lock: `close` sets `closed` before taking each buffer's lock,
        // so a record either lands before the final flush or is counted as dropped.
        // A record the reader refuses (unknown op, range or end past 2^64) would make the whole
        // trace unreadable: drop that record instead.
        if self.closed.load(Ordering::SeqCst) || rec.defect().is_some() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let at = CHUNK_HEADER_BYTES + b.n * CPU_RECORD_BYTES;
        format::encode_cpu_record(rec, &mut b.bytes[at..at + CPU_RECORD_BYTES]);
        if b.n == 0 {
            b.oldest_submit_ns = rec.submit_ns;
        }
        b.n += 1;
        b.last_end_ns = b.last_end_ns.max(rec.end_ns());
        if b.n == RECORDS_PER_CHUNK
            || rec.submit_ns.saturating_sub(b.oldest_submit_ns) > FLUSH_AGE_NS
        {
            self.flush(&mut b);
        }
    }

    fn flush(&self, b: &mut ShardBuf) {
        if b.n == 0 {
            return;
        }
        let n = b.n;
        let len = CHUNK_HEADER_BYTES + n * CPU_RECORD_BYTES;
        format::seal_chunk(ChunkKind::CpuRecords, &mut b.bytes[..len]);
        if self.write_chunk(&b.bytes[..len]) {
            self.records.fetch_add(n as u64, Ordering::Relaxed);
        } else {
            self.dropped.fetch_add(n as u64, Ordering::Relaxed);
        }
        b.n = 0;
    }

    /// Reserves space and writes a sealed chunk; false (and the error kept) if the write failed.
    fn write_chunk(&self, chunk: &[u8]) -> bool {
        let at = self
            .next_offset
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        match pwrite_all(&self.file, chunk, at) {
            Ok(()) => true,
            Err(e) => {
                let mut first = lock(&self.first_error);
                if first.is_none() {
                    *first = Some(format!(
                        "cannot write the trace {}: {e}",
                        self.path.display()
                    ));
                }
                false
            }
        }
    }

    fn close(&self) -> Result<TraceSummary> {
        let mut summary = lock(&self.summary);
        if let Some(done) = summary.as_ref() {
            return Ok(done.clone());
        }
        self.closed.store(true, Ordering::SeqCst);
        // Cloned, not taken: the buffers must outlive the writer's users (see `LAST`).
        let shards: Vec<Arc<Shard>> = lock(&self.shards).clone();
        let mut last_end_ns = 0;
        for shard in shards.iter().chain(std::iter::once(&self.fallback)) {
            let mut b = lock(&shard.buf);
            last_end_ns = last_end_ns.max(b.last_end_ns);
            self.flush(&mut b);
        }
        drop(shards);
        if let Some(e) = lock(&self.first_error).take() {
            return Err(Error::failed(e));
        }
        let end_bytes = self.next_offset.load(Ordering::SeqCst);
        let records = self.records.load(Ordering::SeqCst);
        let header = Header {
            version: format::VERSION,
            flags: FLAG_FINISHED,
            start_ns: self.start_ns,
            start_unix_ns: self.start_unix_ns,
            records,
            end_bytes,
        };
        // Data first, then the header that declares it complete.
        let sync = |what: &str| fsync(&self.file).map_err(|e| io_usage(&self.path, what, &e));
        sync("sync the trace file")?;
        pwrite_all(&self.file, &header.encode(), 0)
            .map_err(|e| io_usage(&self.path, "write the trace header", &e))?;
        sync("sync the trace file")?;
        let done = TraceSummary {
            path: self.path.clone(),
            records,
            dropped_records: self.dropped.load(Ordering::SeqCst),
            files: lock(&self.files).by_path.len() as u64,
            size_bytes: end_bytes,
            duration_ns: last_end_ns,
        };
        *summary = Some(done.clone());
        Ok(done)
    }
}

/// `pwrite` until everything is written, through the raw system call so that an LD_PRELOAD shim
/// interposing `pwrite` never sees the trace's own writes.
fn pwrite_all(file: &File, mut buf: &[u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: buf is a valid slice for its length; the fd is open for writing.
        let n = unsafe {
            libc::syscall(
                libc::SYS_pwrite64,
                file.as_raw_fd(),
                buf.as_ptr(),
                buf.len(),
                offset as libc::off_t,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::Error::from_raw_os_error(libc::EIO));
        }
        buf = &buf[n as usize..];
        offset += n as u64;
    }
    Ok(())
}

fn fsync(file: &File) -> std::io::Result<()> {
    // SAFETY: fsync on an fd we own.
    if unsafe { libc::syscall(libc::SYS_fsync, file.as_raw_fd()) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl crate::TraceData {
    /// Writes this trace as an oltplab trace file at `path` (replacing it). Here, not in the
    /// reader that defines the type, so that the reader does not import the writer.
    pub fn save(&self, path: &Path) -> Result<TraceSummary> {
        write_trace(path, self)
    }
}

/// Writes a whole trace in one go, time-sorted: for converters, `merge` and tests.
pub fn write_trace(path: &Path, trace: &crate::TraceData) -> Result<TraceSummary> {
    let crate::TraceData {
        files,
        tables,
        records,
        ..
    } = trace;
    if files.len() > u16::MAX as usize {
        return Err(Error::usage(format!(
            "the trace names {} files, more than the format's 65,535",
            files.len()
        )));
    }
    // Checked before the file is touched: a trace the reader would refuse must not be written.
    for (i, r) in records.iter().enumerate() {
        let defect = r.defect().or_else(|| {
            (r.file as usize >= files.len()).then(|| {
                format!(
                    "the record names file {} but the file table has {} entries",
                    r.file,
                    files.len()
                )
            })
        });
        if let Some(defect) = defect {
            return Err(Error::usage(format!(
                "cannot write {}: in record {}, {defect}, which a trace cannot hold; fix the program that produced the records",
                path.display(),
                i + 1
            )));
        }
    }
    if let Some(e) = tables.iter().find(|e| e.file as usize >= files.len()) {
        return Err(Error::usage(format!(
            "cannot write {}: the table map names file {} but the file table has {} entries; fix the program that produced it",
            path.display(),
            e.file,
            files.len()
        )));
    }
    refuse_foreign(path)?;
    // Written beside it and renamed over it at the end, so that a trace being rewritten (a run's
    // own, given its table map) is never lost half-written: a full disk or a kill leaves the old.
    let mut partial = path.as_os_str().to_owned();
    partial.push(".oltplab-partial");
    let partial = std::path::PathBuf::from(partial);
    let written = write_chunks(path, &partial, trace).and_then(|summary| {
        std::fs::rename(&partial, path).map_err(|e| io_usage(path, "replace", &e))?;
        Ok(summary)
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// [`write_trace`]'s chunks into `partial`; errors name `path`, the file the user asked for.
fn write_chunks(path: &Path, partial: &Path, trace: &crate::TraceData) -> Result<TraceSummary> {
    use std::io::Write;
    let crate::TraceData {
        meta,
        start_ns,
        start_unix_ns,
        files,
        places,
        tables,
        records,
        complete: _,
    } = trace;
    let (start_ns, start_unix_ns) = (*start_ns, *start_unix_ns);
    let out = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(partial)
        .map_err(|e| io_usage(path, "create", &e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, out);
    let werr = |e: std::io::Error| io_usage(path, "write", &e);
    let mut written = 0u64;
    w.write_all(&[0u8; HEADER_BYTES]).map_err(werr)?;
    written += HEADER_BYTES as u64;
    let mut put = |w: &mut std::io::BufWriter<File>, c: Vec<u8>| -> Result<()> {
        w.write_all(&c).map_err(werr)?;
        written += c.len() as u64;
        Ok(())
    };
    put(
        &mut w,
        format::chunk(
            ChunkKind::Meta,
            &serde_json::to_vec(meta).expect("meta serialises"),
        ),
    )?;
    if !files.is_empty() {
        let entries = files
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u16, p.as_str()));
        put(
            &mut w,
            format::chunk(ChunkKind::Files, &format::encode_files(entries)),
        )?;
    }
    if !places.is_empty() {
        let entries = places.iter().map(|(&id, &slot)| (id, slot));
        put(
            &mut w,
            format::chunk(ChunkKind::Places, &format::encode_places(entries)),
        )?;
    }
    if !tables.is_empty() {
        put(
            &mut w,
            format::chunk(
                ChunkKind::Tables,
                &serde_json::to_vec(tables).expect("a table map serialises"),
            ),
        )?;
    }
    let mut duration_ns = 0;
    // Records with their CPUs (version 2) if any record has one; otherwise version 1, which older
    // builds read.
    let with_cpus = records.iter().any(|r| r.cpu.is_some());
    let (kind, bytes, version) = if with_cpus {
        (ChunkKind::CpuRecords, CPU_RECORD_BYTES, format::VERSION)
    } else {
        (
            ChunkKind::Records,
            RECORD_BYTES,
            format::VERSION_WITHOUT_CPUS,
        )
    };
    for part in records.chunks(RECORDS_PER_CHUNK) {
        let mut buf = vec![0u8; CHUNK_HEADER_BYTES + part.len() * bytes];
        for (i, r) in part.iter().enumerate() {
            let at = CHUNK_HEADER_BYTES + i * bytes;
            if with_cpus {
                format::encode_cpu_record(r, &mut buf[at..at + bytes]);
            } else {
                format::encode_record(r, &mut buf[at..at + bytes]);
            }
            duration_ns = duration_ns.max(r.end_ns());
        }
        format::seal_chunk(kind, &mut buf);
        put(&mut w, buf)?;
    }
    let header = Header {
        version,
        flags: FLAG_FINISHED,
        start_ns,
        start_unix_ns,
        records: records.len() as u64,
        end_bytes: written,
    };
    let mut file = w.into_inner().map_err(|e| werr(e.into_error()))?;
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(0)).map_err(werr)?;
    file.write_all(&header.encode()).map_err(werr)?;
    file.sync_all().map_err(werr)?;
    Ok(TraceSummary {
        path: path.to_path_buf(),
        records: records.len() as u64,
        dropped_records: 0,
        files: files.len() as u64,
        size_bytes: written,
        duration_ns,
    })
}

/// Refuses to replace a file that is not an oltplab trace (someone's data under that name).
pub fn refuse_foreign(path: &Path) -> Result<()> {
    use std::io::Read;
    if path.is_dir() {
        return Err(Error::usage(format!(
            "{} is a directory: give a file name for the trace",
            path.display()
        )));
    }
    let Ok(mut f) = File::open(path) else {
        return Ok(());
    };
    let mut magic = [0u8; 8];
    let is_trace = f.read_exact(&mut magic).is_ok() && &magic == format::MAGIC;
    let empty = f.metadata().map(|m| m.len() == 0).unwrap_or(false);
    if !is_trace && !empty {
        return Err(Error::usage(format!(
            "{} exists and is not an oltplab trace: choose another output file name",
            path.display()
        )));
    }
    Ok(())
}
