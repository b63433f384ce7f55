//! Reading traces. [`TraceReader::open`] checks the whole file once (header, every chunk's
//! checksum, every record's op and file id) and reports the first problem with its byte offset.
//! A trace whose writer never finished (the process died) is read up to its last whole chunk and
//! flagged as incomplete rather than refused: that prefix is all there is.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use oltplab_core::safety::io_usage;
use oltplab_core::{Error, Result};

use crate::format::{
    self, ChunkKind, Header, TableExtent, TraceMeta, CHUNK_HEADER_BYTES, CPU_RECORD_BYTES,
    HEADER_BYTES, RECORD_BYTES,
};
use crate::Record;

/// A validated trace file; records are read again from disk on demand.
#[derive(Clone, Debug)]
pub struct TraceReader {
    path: PathBuf,
    header: Header,
    meta: TraceMeta,
    /// File id → path.
    files: BTreeMap<u16, String>,
    /// File id → the run's device slot, where the capture recorded one.
    places: BTreeMap<u16, u32>,
    /// Sorted by file and offset.
    tables: Vec<TableExtent>,
    /// Offset of each records chunk's payload, its record count and its record size
    /// ([`RECORD_BYTES`], or [`CPU_RECORD_BYTES`] for records with their CPU).
    chunks: Vec<(u64, usize, usize)>,
    records: u64,
    readable_bytes: u64,
    file_bytes: u64,
}

impl TraceReader {
    /// Opens and validates `path`. Corrupt or truncated input is a usage error naming the byte.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| io_usage(path, "open the trace", &e))?;
        let file_bytes = file
            .metadata()
            .map_err(|e| io_usage(path, "read the trace", &e))?
            .len();
        let mut input = BufReader::with_capacity(1 << 20, file);
        let bad = |offset: u64, what: &str| {
            Error::usage(format!(
                "{} is not a valid oltplab trace: at byte {offset}, {what}",
                path.display()
            ))
        };
        let mut head = vec![0u8; HEADER_BYTES.min(file_bytes as usize)];
        input
            .read_exact(&mut head)
            .map_err(|e| io_usage(path, "read the trace", &e))?;
        let header = Header::decode(&head).map_err(|e| bad(0, &e))?;
        if header.finished() && file_bytes < header.end_bytes {
            return Err(Error::usage(format!(
                "{} is truncated: it ends at byte {file_bytes} but its header says the trace ends at byte {}; copy the whole file again",
                path.display(),
                header.end_bytes
            )));
        }
        let end = if header.finished() {
            header.end_bytes
        } else {
            file_bytes
        };

        let mut reader = TraceReader {
            path: path.to_path_buf(),
            header,
            meta: TraceMeta::default(),
            files: BTreeMap::new(),
            places: BTreeMap::new(),
            tables: Vec::new(),
            chunks: Vec::new(),
            records: 0,
            readable_bytes: HEADER_BYTES as u64,
            file_bytes,
        };
        let mut have_meta = false;
        let mut offset = HEADER_BYTES as u64;
        let mut chunk_head = [0u8; CHUNK_HEADER_BYTES];
        let mut payload = Vec::new();
        // For an unfinished trace, the first damaged chunk ends the readable prefix.
        let unfinished = !header.finished();
        while offset < end {
            let step = (|| -> std::result::Result<(ChunkKind, usize), (u64, String)> {
                if end - offset < CHUNK_HEADER_BYTES as u64 {
                    return Err((
                        offset,
                        format!(
                            "the file ends {} bytes into a chunk header (truncated)",
                            end - offset
                        ),
                    ));
                }
                input
                    .read_exact(&mut chunk_head)
                    .map_err(|e| (offset, format!("reading failed: {e}")))?;
                let (kind, len, crc) =
                    format::decode_chunk_header(&chunk_head).map_err(|e| (offset, e))?;
                let kind = ChunkKind::from_u8(kind)
                    .ok_or_else(|| (offset, format!("unknown chunk kind {kind}")))?;
                let body_at = offset + CHUNK_HEADER_BYTES as u64;
                if end - body_at < len as u64 {
                    return Err((
                        offset,
                        format!(
                            "the chunk needs {len} bytes but the file ends after {} (truncated)",
                            end - body_at
                        ),
                    ));
                }
                payload.resize(len, 0);
                input
                    .read_exact(&mut payload)
                    .map_err(|e| (body_at, format!("reading failed: {e}")))?;
                if format::chunk_crc(&chunk_head, &payload) != crc {
                    return Err((
                        offset,
                        "the chunk's checksum does not match its contents".into(),
                    ));
                }
                Ok((kind, len))
            })();
            let (kind, len) = match step {
                Ok(v) => v,
                Err(_) if unfinished && have_meta => break,
                Err((at, what)) => return Err(bad(at, &what)),
            };
            let body_at = offset + CHUNK_HEADER_BYTES as u64;
            match kind {
                ChunkKind::Meta => {
                    reader.meta = serde_json::from_slice(&payload)
                        .map_err(|e| bad(body_at, &format!("the metadata is not valid: {e}")))?;
                    have_meta = true;
                }
                ChunkKind::Files => {
                    for (id, name) in
                        format::decode_files(&payload).map_err(|e| bad(body_at, &e))?
                    {
                        reader.files.insert(id, name);
                    }
                }
                ChunkKind::Places => {
                    for (id, slot) in
                        format::decode_places(&payload).map_err(|e| bad(body_at, &e))?
                    {
                        reader.places.insert(id, slot);
                    }
                }
                ChunkKind::Tables => {
                    let extents: Vec<TableExtent> = serde_json::from_slice(&payload)
                        .map_err(|e| bad(body_at, &format!("the table map is not valid: {e}")))?;
                    if let Some(e) = extents.iter().find(|e| !reader.files.contains_key(&e.file)) {
                        return Err(bad(
                            body_at,
                            &format!(
                                "the table map names file {} that the file table before it does not list",
                                e.file
                            ),
                        ));
                    }
                    reader.tables.extend(extents);
                }
                ChunkKind::Records | ChunkKind::CpuRecords => {
                    let size = if kind == ChunkKind::CpuRecords {
                        if header.version < format::VERSION {
                            return Err(bad(offset, &format!(
                                "a chunk of records with their CPUs (kind 6) is in a trace of format version {}, which has none",
                                header.version
                            )));
                        }
                        CPU_RECORD_BYTES
                    } else {
                        RECORD_BYTES
                    };
                    if len % size != 0 {
                        return Err(bad(offset, &format!(
                            "a records chunk of {len} bytes is not a whole number of {size}-byte records"
                        )));
                    }
                    for (i, rec) in payload.chunks_exact(size).enumerate() {
                        let at = body_at + (i * size) as u64;
                        let r = format::decode_sized_record(rec, size).map_err(|op| {
                            bad(at, &format!("a record has the unknown op code {op}"))
                        })?;
                        if let Some(defect) = r.defect() {
                            return Err(bad(at, &defect));
                        }
                        if !reader.files.contains_key(&r.file) {
                            return Err(bad(at, &format!(
                                "a record names file {} that the file table before it does not list",
                                r.file
                            )));
                        }
                    }
                    reader.chunks.push((body_at, len / size, size));
                    reader.records += (len / size) as u64;
                }
            }
            offset = body_at + len as u64;
            reader.readable_bytes = offset;
        }
        if !have_meta {
            return Err(bad(HEADER_BYTES as u64, "the metadata chunk is missing"));
        }
        // Sorted once, whatever the chunks' order: lookups search it by file and offset.
        reader.tables.sort();
        if header.finished() && reader.records != header.records {
            return Err(bad(
                0,
                &format!(
                    "the header says {} records but the chunks hold {}",
                    header.records, reader.records
                ),
            ));
        }
        Ok(reader)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    /// File id → path, as recorded.
    pub fn files(&self) -> &BTreeMap<u16, String> {
        &self.files
    }

    /// File id → the device slot the run's emulator placed it at, as recorded.
    pub fn places(&self) -> &BTreeMap<u16, u32> {
        &self.places
    }

    /// The table map, as recorded (sorted by file and offset).
    pub fn tables(&self) -> &[TableExtent] {
        &self.tables
    }

    pub fn file_path(&self, id: u16) -> Option<&str> {
        self.files.get(&id).map(String::as_str)
    }

    pub fn record_count(&self) -> u64 {
        self.records
    }

    /// CLOCK_MONOTONIC ns at capture start.
    pub fn start_ns(&self) -> u64 {
        self.header.start_ns
    }

    pub fn start_unix_ns(&self) -> u64 {
        self.header.start_unix_ns
    }

    /// False if the writer never finished (it crashed or was killed): the records are a prefix.
    pub fn is_complete(&self) -> bool {
        self.header.finished()
    }

    /// Bytes of the file that hold whole chunks; for an incomplete trace, where the prefix ends.
    pub fn readable_bytes(&self) -> u64 {
        self.readable_bytes
    }

    pub fn file_bytes(&self) -> u64 {
        self.file_bytes
    }

    /// The trace format version of the file (1: records without CPUs).
    pub fn version(&self) -> u16 {
        self.header.version
    }

    /// Calls `f` with every record, in file order (time order within each writer thread's chunk,
    /// not across them). The file was validated at open; a change since then is an error.
    pub fn for_each(&self, mut f: impl FnMut(&Record)) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let file =
            File::open(&self.path).map_err(|e| io_usage(&self.path, "open the trace", &e))?;
        let mut buf = Vec::new();
        for &(at, n, size) in &self.chunks {
            buf.resize(n * size, 0);
            file.read_exact_at(&mut buf, at)
                .map_err(|e| io_usage(&self.path, "read the trace", &e))?;
            for rec in buf.chunks_exact(size) {
                let r = format::decode_sized_record(rec, size).map_err(|_| {
                    Error::usage(format!(
                        "{} changed while it was being read: open it again",
                        self.path.display()
                    ))
                })?;
                f(&r);
            }
        }
        Ok(())
    }

    /// Every record, sorted by submit time (ties keep file order).
    pub fn read_sorted(&self) -> Result<Vec<Record>> {
        let mut out = Vec::with_capacity(self.records as usize);
        self.for_each(|r| out.push(*r))?;
        out.sort_by_key(|r| r.submit_ns);
        Ok(out)
    }

    /// The whole trace in memory.
    pub fn load(&self) -> Result<TraceData> {
        let max_id = self.files.keys().next_back().map_or(0, |&k| k as usize + 1);
        let mut files = vec![String::new(); max_id];
        for (&id, path) in &self.files {
            files[id as usize] = path.clone();
        }
        Ok(TraceData {
            meta: self.meta.clone(),
            start_ns: self.header.start_ns,
            start_unix_ns: self.header.start_unix_ns,
            files,
            places: self.places.clone(),
            tables: self.tables.clone(),
            records: self.read_sorted()?,
            complete: self.is_complete(),
        })
    }
}

/// A trace in memory: what converters produce and consume.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceData {
    pub meta: TraceMeta,
    pub start_ns: u64,
    pub start_unix_ns: u64,
    /// Index = file id.
    pub files: Vec<String>,
    /// File id → the slot of the emulated device the run placed the file at (the emulator puts
    /// slot N at N GiB). Files without an entry are placed by their id, as converted traces are.
    pub places: BTreeMap<u16, u32>,
    /// The table each file or byte range belongs to, sorted by file and offset; empty when the
    /// capture knew no tables (converted traces, `oltplab emulate`).
    pub tables: Vec<TableExtent>,
    /// Sorted by `submit_ns`.
    pub records: Vec<Record>,
    pub complete: bool,
}

impl TraceData {
    pub fn load(path: &Path) -> Result<Self> {
        TraceReader::open(path)?.load()
    }

    /// The table the byte at `offset` of file `id` belongs to, from the table map.
    pub fn table_of(&self, id: u16, offset: u64) -> Option<&str> {
        let after = self
            .tables
            .partition_point(|e| (e.file, e.from_bytes) <= (id, offset));
        let e = self.tables[..after].last()?;
        (e.file == id).then_some(e.table.as_str())
    }

    /// How many records carry the CPU they were issued on (none in traces of format version 1,
    /// and in those converted from formats without CPUs).
    pub fn records_with_cpu(&self) -> usize {
        self.records.iter().filter(|r| r.cpu.is_some()).count()
    }

    /// The device slot of file `id`: where the run placed it, or its id.
    pub fn device_slot(&self, id: u16) -> u32 {
        self.places.get(&id).copied().unwrap_or(id as u32)
    }

    /// The id of `path`, adding it to the table if new.
    pub fn file_id(&mut self, path: &str) -> u16 {
        if let Some(i) = self.files.iter().position(|f| f == path) {
            return i as u16;
        }
        self.files.push(path.to_string());
        (self.files.len() - 1) as u16
    }
}
