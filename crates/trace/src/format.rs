//! The on-disk layout, version 2 (version 1 without kind 6, which this reads too). All integers
//! are little-endian.
//!
//! ```text
//! header (64 bytes)
//!   0  magic "OLTPTRCE"
//!   8  version u16 = 2 (1: no CPU records)   10 header_bytes u16 = 64   12 record_bytes u16 = 32
//!  14  flags u16 (bit 0: finished)
//!  16  start_ns u64   CLOCK_MONOTONIC at capture start (records are relative to it)
//!  24  start_unix_ns u64   wall clock at capture start
//!  32  records u64    total records          (valid when finished)
//!  40  end_bytes u64  length of the trace     (valid when finished)
//!  48  reserved, zero (12 bytes)             60  crc32 of bytes 0..60
//! chunks, each: magic "OLTC", kind u8, 3 zero bytes, payload_bytes u32, crc32 u32 of bytes 4..12
//!   of the chunk header and the payload; then the payload:
//!   kind 1 meta:    JSON (TraceMeta)
//!   kind 2 files:   entries of id u16, path_bytes u16, UTF-8 path
//!   kind 3 records: payload_bytes / 32 records (see encode_record)
//!   kind 4 places:  entries of id u16, device_slot u32: where the run's emulator placed the file
//!                   (slot × 1 GiB on the emulated device), so that a replay places it there too
//!   kind 5 tables:  JSON array of TableExtent: the table each file, or each byte range of a file
//!                   (SQLite's pages), held when the run ended, so that I/O per table needs no
//!                   database
//!   kind 6 records with CPU (version 2): payload_bytes / 36 records, each the 32-byte record
//!                   followed by cpu u32, the CPU the call was issued on (0xFFFF_FFFF: not known)
//! ```
//! A trace whose records carry no CPU is written as version 1 (kind 3 records), which older
//! oltplab builds read; a version-2 trace names itself as such to them instead of failing on an
//! unknown chunk kind.
//! Chunks are written whole with one positioned write each, so a writer that dies leaves a header
//! saying "not finished" and a prefix of whole chunks that [`crate::TraceReader`] can still read.
//! A finished trace must end exactly at `end_bytes`; anything else is reported as corruption.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Op, Record};

pub const MAGIC: &[u8; 8] = b"OLTPTRCE";
/// The version written when the trace holds CPU records (kind 6).
pub const VERSION: u16 = 2;
/// The version written when it does not; this build reads both.
pub const VERSION_WITHOUT_CPUS: u16 = 1;
pub const HEADER_BYTES: usize = 64;
pub const RECORD_BYTES: usize = 32;
/// A record of a kind-6 chunk: the 32-byte record and the CPU.
pub const CPU_RECORD_BYTES: usize = RECORD_BYTES + 4;
/// The CPU field of a record whose CPU is not known.
pub const NO_CPU: u32 = u32::MAX;
pub const CHUNK_MAGIC: &[u8; 4] = b"OLTC";
pub const CHUNK_HEADER_BYTES: usize = 16;
/// Upper bound of one chunk's payload; a larger length field is corruption, not a big chunk.
pub const CHUNK_PAYLOAD_MAX_BYTES: usize = 64 << 20;
pub const FLAG_FINISHED: u16 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ChunkKind {
    Meta = 1,
    Files = 2,
    Records = 3,
    Places = 4,
    Tables = 5,
    CpuRecords = 6,
}

impl ChunkKind {
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            1 => Some(Self::Meta),
            2 => Some(Self::Files),
            3 => Some(Self::Records),
            4 => Some(Self::Places),
            5 => Some(Self::Tables),
            6 => Some(Self::CpuRecords),
            _ => None,
        }
    }
}

/// The table a file's bytes belong to, from `from_bytes` up to the next extent of the same file
/// (a server's file is one table's from byte 0; SQLite's single file is a run of extents, one per
/// run of pages of one b-tree). Files of no table carry their kind in brackets: `(wal)`, `(temp)`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TableExtent {
    pub file: u16,
    pub from_bytes: u64,
    pub table: String,
}

/// The name I/O per table gives the data files its table map does not cover.
pub const OTHER_FILES: &str = "(other files)";

/// Whether a name in I/O per table is a table's, not a kind of file that belongs to none (the
/// bracketed `(wal)`, `(temp)`, [`OTHER_FILES`] …).
pub fn names_a_table(name: &str) -> bool {
    !name.starts_with('(')
}

/// Who wrote a trace and under which conditions; stored as JSON in the first chunk.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceMeta {
    /// e.g. `oltplab 0.1.0`.
    pub tool: String,
    /// What captured it: `sqlite-vfs`, `shim`, `merge`, `fio-iolog-v3`, `blkparse`, `msr-csv` …
    pub source: String,
    /// The emulated device spec the run used, if any (`host` = none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// RFC 3339 start time, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Anything else worth keeping (workload, engine, terminals …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, String>,
}

impl TraceMeta {
    /// Whether the capture recorded each thread's own blocking calls (oltplab's shim and SQLite
    /// VFS, and merges of their parts), so that a thread's operations never overlap; converted
    /// traces (fio, blkparse, MSR) may hold a thread's asynchronous, overlapping I/O.
    pub fn captures_blocking_calls(&self) -> bool {
        matches!(self.source.as_str(), "shim" | "sqlite-vfs")
    }

    /// Meta for a trace captured by `source`, with this tool's version.
    pub fn new(source: impl Into<String>) -> Self {
        Self {
            tool: format!("oltplab {}", env!("CARGO_PKG_VERSION")),
            source: source.into(),
            ..Self::default()
        }
    }
}

/// The fixed header's fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// [`VERSION`], or [`VERSION_WITHOUT_CPUS`] for a trace without kind-6 chunks.
    pub version: u16,
    pub flags: u16,
    pub start_ns: u64,
    pub start_unix_ns: u64,
    pub records: u64,
    pub end_bytes: u64,
}

impl Header {
    pub fn finished(&self) -> bool {
        self.flags & FLAG_FINISHED != 0
    }

    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[0..8].copy_from_slice(MAGIC);
        b[8..10].copy_from_slice(&self.version.to_le_bytes());
        b[10..12].copy_from_slice(&(HEADER_BYTES as u16).to_le_bytes());
        b[12..14].copy_from_slice(&(RECORD_BYTES as u16).to_le_bytes());
        b[14..16].copy_from_slice(&self.flags.to_le_bytes());
        b[16..24].copy_from_slice(&self.start_ns.to_le_bytes());
        b[24..32].copy_from_slice(&self.start_unix_ns.to_le_bytes());
        b[32..40].copy_from_slice(&self.records.to_le_bytes());
        b[40..48].copy_from_slice(&self.end_bytes.to_le_bytes());
        let crc = crc32fast::hash(&b[0..60]);
        b[60..64].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes a header; the error says what is wrong (the caller adds the file and offset).
    pub fn decode(b: &[u8]) -> Result<Header, String> {
        let n = b.len().min(MAGIC.len());
        if b[..n] != MAGIC[..n] {
            return Err("it does not start with the oltplab trace magic \"OLTPTRCE\"".into());
        }
        if b.len() < HEADER_BYTES {
            return Err(format!(
                "the file is {} bytes long, shorter than the {HEADER_BYTES}-byte header",
                b.len()
            ));
        }
        let version = u16_at(b, 8);
        if !(VERSION_WITHOUT_CPUS..=VERSION).contains(&version) {
            return Err(format!(
                "it is trace format version {version}, and this oltplab reads versions {VERSION_WITHOUT_CPUS} to {VERSION}: use a matching oltplab"
            ));
        }
        let stored = u32_at(b, 60);
        if crc32fast::hash(&b[0..60]) != stored {
            return Err(
                "the header checksum does not match (the first 64 bytes are damaged)".into(),
            );
        }
        if u16_at(b, 10) as usize != HEADER_BYTES || u16_at(b, 12) as usize != RECORD_BYTES {
            return Err("the header declares an unknown header or record size".into());
        }
        Ok(Header {
            version,
            flags: u16_at(b, 14),
            start_ns: u64_at(b, 16),
            start_unix_ns: u64_at(b, 24),
            records: u64_at(b, 32),
            end_bytes: u64_at(b, 40),
        })
    }
}

/// Fills the first [`CHUNK_HEADER_BYTES`] of `buf` (which holds the payload after them) so that
/// `buf` is one complete chunk.
pub fn seal_chunk(kind: ChunkKind, buf: &mut [u8]) {
    let payload = (buf.len() - CHUNK_HEADER_BYTES) as u32;
    buf[0..4].copy_from_slice(CHUNK_MAGIC);
    buf[4] = kind as u8;
    buf[5..8].fill(0);
    buf[8..12].copy_from_slice(&payload.to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&buf[4..12]);
    crc.update(&buf[CHUNK_HEADER_BYTES..]);
    let crc = crc.finalize();
    buf[12..16].copy_from_slice(&crc.to_le_bytes());
}

/// A whole chunk holding `payload`.
pub fn chunk(kind: ChunkKind, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; CHUNK_HEADER_BYTES + payload.len()];
    buf[CHUNK_HEADER_BYTES..].copy_from_slice(payload);
    seal_chunk(kind, &mut buf);
    buf
}

/// A chunk header's fields: kind byte, payload length, checksum.
pub fn decode_chunk_header(b: &[u8]) -> Result<(u8, usize, u32), String> {
    if &b[0..4] != CHUNK_MAGIC {
        return Err("no chunk starts here (expected \"OLTC\")".into());
    }
    if b[5..8] != [0, 0, 0] {
        return Err("the chunk header has non-zero reserved bytes".into());
    }
    let len = u32_at(b, 8) as usize;
    if len > CHUNK_PAYLOAD_MAX_BYTES {
        return Err(format!(
            "the chunk claims {len} bytes, more than any writer produces"
        ));
    }
    Ok((b[4], len, u32_at(b, 12)))
}

pub fn chunk_crc(header: &[u8], payload: &[u8]) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header[4..12]);
    crc.update(payload);
    crc.finalize()
}

/// Files chunk payload for `(id, path)` entries.
pub fn encode_files<'a>(entries: impl IntoIterator<Item = (u16, &'a str)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, path) in entries {
        // Paths longer than 64 KiB do not exist on Linux (PATH_MAX is 4096); cut rather than fail.
        let bytes = &path.as_bytes()[..path.len().min(u16::MAX as usize)];
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

pub fn decode_files(payload: &[u8]) -> Result<Vec<(u16, String)>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < payload.len() {
        if payload.len() - at < 4 {
            return Err("a file-table entry is cut off".into());
        }
        let id = u16_at(payload, at);
        let n = u16_at(payload, at + 2) as usize;
        at += 4;
        if payload.len() - at < n {
            return Err("a file-table path is cut off".into());
        }
        let path = std::str::from_utf8(&payload[at..at + n])
            .map_err(|_| "a file-table path is not UTF-8".to_string())?;
        out.push((id, path.to_string()));
        at += n;
    }
    Ok(out)
}

/// Places chunk payload for `(file id, device slot)` entries.
pub fn encode_places(entries: impl IntoIterator<Item = (u16, u32)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (id, slot) in entries {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&slot.to_le_bytes());
    }
    out
}

pub fn decode_places(payload: &[u8]) -> Result<Vec<(u16, u32)>, String> {
    if !payload.len().is_multiple_of(6) {
        return Err("a places entry is cut off".into());
    }
    Ok(payload
        .chunks_exact(6)
        .map(|e| (u16_at(e, 0), u32::from_le_bytes([e[2], e[3], e[4], e[5]])))
        .collect())
}

/// ```text
///  0 submit_ns u64   8 latency_ns u32   12 len u32   16 offset u64   24 tid u32
/// 28 file u16       30 op u8           31 tag u8
/// ```
#[inline]
pub fn encode_record(r: &Record, b: &mut [u8]) {
    b[0..8].copy_from_slice(&r.submit_ns.to_le_bytes());
    b[8..12].copy_from_slice(&r.latency_ns.to_le_bytes());
    b[12..16].copy_from_slice(&r.len.to_le_bytes());
    b[16..24].copy_from_slice(&r.offset.to_le_bytes());
    b[24..28].copy_from_slice(&r.tid.to_le_bytes());
    b[28..30].copy_from_slice(&r.file.to_le_bytes());
    b[30] = r.op;
    b[31] = r.tag;
}

/// A kind-6 record: [`encode_record`] and the CPU ([`NO_CPU`] when not known) after it.
#[inline]
pub fn encode_cpu_record(r: &Record, b: &mut [u8]) {
    encode_record(r, &mut b[..RECORD_BYTES]);
    b[32..36].copy_from_slice(&r.cpu.unwrap_or(NO_CPU).to_le_bytes());
}

/// Decodes a kind-6 record; `Err` carries the unknown op byte.
#[inline]
pub fn decode_cpu_record(b: &[u8]) -> Result<Record, u8> {
    let cpu = u32_at(b, 32);
    Ok(Record {
        cpu: (cpu != NO_CPU).then_some(cpu),
        ..decode_record(&b[..RECORD_BYTES])?
    })
}

/// Decodes one record of `bytes` bytes ([`RECORD_BYTES`] or [`CPU_RECORD_BYTES`]).
#[inline]
pub fn decode_sized_record(b: &[u8], bytes: usize) -> Result<Record, u8> {
    if bytes == CPU_RECORD_BYTES {
        decode_cpu_record(b)
    } else {
        decode_record(b)
    }
}

/// Decodes one record; `Err` carries the unknown op byte. The CPU is not known (`None`).
#[inline]
pub fn decode_record(b: &[u8]) -> Result<Record, u8> {
    let op = Op::from_u8(b[30]).ok_or(b[30])? as u8;
    Ok(Record {
        submit_ns: u64_at(b, 0),
        latency_ns: u32_at(b, 8),
        len: u32_at(b, 12),
        offset: u64_at(b, 16),
        tid: u32_at(b, 24),
        file: u16_at(b, 28),
        op,
        tag: b[31],
        cpu: None,
    })
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_is_32_bytes_and_round_trips() {
        let r = Record {
            submit_ns: 0x0102_0304_0506_0708,
            latency_ns: 0x0a0b_0c0d,
            offset: 0x1122_3344_5566_7788,
            len: 4096 + 24,
            file: 513,
            op: Op::Fdatasync as u8,
            tag: 5,
            tid: 77_777,
            cpu: None,
        };
        let mut b = [0u8; RECORD_BYTES];
        encode_record(&r, &mut b);
        assert_eq!(decode_record(&b), Ok(r));
        assert_eq!(&b[0..8], &0x0102_0304_0506_0708u64.to_le_bytes());
        b[30] = 200;
        assert_eq!(decode_record(&b), Err(200));
    }

    #[test]
    fn a_cpu_record_is_36_bytes_and_keeps_the_cpu_or_its_absence() {
        for cpu in [Some(0), Some(63), Some(NO_CPU - 1), None] {
            let r = Record {
                submit_ns: 9,
                latency_ns: 8,
                offset: 4096,
                len: 512,
                file: 2,
                op: Op::Write as u8,
                tag: 1,
                tid: 3,
                cpu,
            };
            let mut b = [0u8; CPU_RECORD_BYTES];
            encode_cpu_record(&r, &mut b);
            assert_eq!(decode_cpu_record(&b), Ok(r));
            assert_eq!(decode_sized_record(&b, CPU_RECORD_BYTES), Ok(r));
            // The first 32 bytes are the version-1 record.
            assert_eq!(
                decode_record(&b[..RECORD_BYTES]),
                Ok(Record { cpu: None, ..r })
            );
        }
    }

    #[test]
    fn header_round_trip_and_checksum() {
        let h = Header {
            version: VERSION,
            flags: FLAG_FINISHED,
            start_ns: 5,
            start_unix_ns: 6,
            records: 7,
            end_bytes: 8,
        };
        let mut b = h.encode();
        assert_eq!(Header::decode(&b), Ok(h));
        b[33] ^= 1;
        assert!(Header::decode(&b).unwrap_err().contains("checksum"));
        assert!(Header::decode(b"OLTPTRCE").unwrap_err().contains("shorter"));
        let v1 = Header {
            version: VERSION_WITHOUT_CPUS,
            ..h
        };
        assert_eq!(Header::decode(&v1.encode()), Ok(v1));
        let v3 = Header { version: 3, ..h };
        assert!(Header::decode(&v3.encode())
            .unwrap_err()
            .contains("version 3"));
    }

    #[test]
    fn files_round_trip() {
        let payload = encode_files([(0, "/a/b.db"), (7, "/a/b.db-wal")]);
        assert_eq!(
            decode_files(&payload).unwrap(),
            vec![(0, "/a/b.db".to_string()), (7, "/a/b.db-wal".to_string())]
        );
        assert!(decode_files(&payload[..payload.len() - 1]).is_err());
        let places = encode_places([(0, 3), (7, 70_000)]);
        assert_eq!(decode_places(&places).unwrap(), vec![(0, 3), (7, 70_000)]);
        assert!(decode_places(&places[..places.len() - 1]).is_err());
    }
}
