//! The undo log of a managed server's run on an emulated device: what the shim records in every
//! process of the server, and how oltplab reads it back into a [`CrashLog`] at a cut.
//!
//! The processes of a server share one log file, opened `O_APPEND`: each record is one `writev`,
//! so records of different processes never interleave. A write's record (what it replaces and
//! what it writes) is appended before the write itself proceeds; a flush's record after the flush
//! completed, carrying the sequence number taken when it began, so that it makes durable exactly
//! the writes issued before it. Sequence numbers come from one counter shared by the processes
//! (the shim's file table), so that sorting by them gives the device's order.
//!
//! ```text
//! record  magic u32 "UNDO" · kind u32 (1 write, 2 flush) · seq u64 · slot u32 · len u32
//!         · dev u64 · ino u64 · offset u64          (48 bytes, little-endian)
//! write   then the old contents (len bytes), then the new (len bytes)
//! ```

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::durability::CrashLog;
use crate::emulator::slot_device;
use crate::spec::Spec;

pub const MAGIC: u32 = u32::from_le_bytes(*b"UNDO");
pub const HEADER_BYTES: usize = 48;
const KIND_WRITE: u32 = 1;
const KIND_FLUSH: u32 = 2;

/// The header of a write of `len` bytes at `offset` of the file in `slot` (its device and inode
/// `dev`, `ino`); the old and the new contents follow it.
pub fn write_header(seq: u64, slot: u32, dev: u64, ino: u64, offset: u64, len: u32) -> [u8; 48] {
    header(KIND_WRITE, seq, slot, len, dev, ino, offset)
}

/// A completed flush of the device of `slot`, which began at `seq`.
pub fn flush_record(seq: u64, slot: u32) -> [u8; 48] {
    header(KIND_FLUSH, seq, slot, 0, 0, 0, 0)
}

fn header(kind: u32, seq: u64, slot: u32, len: u32, dev: u64, ino: u64, offset: u64) -> [u8; 48] {
    let mut h = [0u8; HEADER_BYTES];
    h[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    h[4..8].copy_from_slice(&kind.to_le_bytes());
    h[8..16].copy_from_slice(&seq.to_le_bytes());
    h[16..20].copy_from_slice(&slot.to_le_bytes());
    h[20..24].copy_from_slice(&len.to_le_bytes());
    h[24..32].copy_from_slice(&dev.to_le_bytes());
    h[32..40].copy_from_slice(&ino.to_le_bytes());
    h[40..48].copy_from_slice(&offset.to_le_bytes());
    h
}

/// Follows a log while the server writes it: how many writes of at least `min_len` bytes came
/// since the last flush record — page writes a cut now would find in the drive's cache (a flush
/// of any device resets the count: a bound for the cut's timing, not the state the replay
/// computes).
pub struct Follower {
    pos: u64,
    min_len: u32,
    pub pending: u64,
}

impl Follower {
    /// Starts at the log's present end.
    pub fn new(file: &File, min_len: u32) -> Follower {
        Follower {
            pos: file.metadata().map_or(0, |m| m.len()),
            min_len,
            pending: 0,
        }
    }

    /// Reads the records appended since the last call; returns the writes pending.
    pub fn advance(&mut self, file: &File) -> u64 {
        let mut h = [0u8; HEADER_BYTES];
        while file.read_exact_at(&mut h, self.pos).is_ok() {
            let word = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
            if word(0) != MAGIC {
                break;
            }
            let len = word(20);
            match word(4) {
                KIND_FLUSH => self.pending = 0,
                KIND_WRITE if len >= self.min_len => self.pending += 1,
                _ => {}
            }
            let body = if word(4) == KIND_WRITE {
                2 * u64::from(len)
            } else {
                0
            };
            self.pos += HEADER_BYTES as u64 + body;
        }
        self.pending
    }
}

/// A log read back: the device model's state at the cut, and which file each slot is.
pub struct Replayed {
    pub log: CrashLog,
    /// slot → (device, inode) of its file, as the processes saw it.
    pub files: BTreeMap<u32, (u64, u64)>,
    pub writes: u64,
    pub flushes: u64,
    /// Bytes at the end that are not a whole record (a process killed inside its append).
    pub torn_tail_bytes: u64,
}

struct Entry {
    seq: u64,
    kind: u32,
    slot: u32,
    len: u32,
    offset: u64,
    /// Where its old contents start in the file.
    at: u64,
}

/// Reads the log at `path` of a run on `spec` and replays it, in sequence order, into a
/// [`CrashLog`]: writes first pass through the log's filter (only devices whose cache can lose
/// them are kept), flushes make the device's earlier writes durable as the model says.
pub fn replay(path: &Path, spec: &Spec) -> std::io::Result<Replayed> {
    let file = File::open(path)?;
    let size = file.metadata()?.len();
    let mut entries = Vec::new();
    let mut files = BTreeMap::new();
    let mut reader = BufReader::with_capacity(1 << 20, &file);
    let mut at = 0u64;
    let mut h = [0u8; HEADER_BYTES];
    while at + HEADER_BYTES as u64 <= size {
        reader.read_exact(&mut h)?;
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        let kind = u32_at(4);
        let len = u32_at(20);
        let body = if kind == KIND_WRITE {
            2 * len as u64
        } else {
            0
        };
        if u32_at(0) != MAGIC
            || !(kind == KIND_WRITE || kind == KIND_FLUSH)
            || at + HEADER_BYTES as u64 + body > size
        {
            break;
        }
        let e = Entry {
            seq: u64_at(8),
            kind,
            slot: u32_at(16),
            len,
            offset: u64_at(40),
            at: at + HEADER_BYTES as u64,
        };
        if kind == KIND_WRITE {
            files.entry(e.slot).or_insert((u64_at(24), u64_at(32)));
        }
        entries.push(e);
        std::io::copy(&mut (&mut reader).take(body), &mut std::io::sink())?;
        at += HEADER_BYTES as u64 + body;
    }
    // Appends of different processes reach the file in a slightly different order than they
    // took their numbers; the device order is the numbers'.
    entries.sort_by_key(|e| e.seq);
    let mut log = CrashLog::new(spec);
    let (mut writes, mut flushes) = (0, 0);
    for e in &entries {
        if e.kind == KIND_FLUSH {
            flushes += 1;
            log.flush(slot_device(e.slot));
            continue;
        }
        writes += 1;
        if !log.keeps(e.slot) {
            continue;
        }
        let mut old = vec![0u8; e.len as usize];
        let mut new = vec![0u8; e.len as usize];
        file.read_exact_at(&mut old, e.at)?;
        file.read_exact_at(&mut new, e.at + e.len as u64)?;
        log.write(e.slot, e.offset, old, new);
    }
    Ok(Replayed {
        log,
        files,
        writes,
        flushes,
        torn_tail_bytes: size - at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::slot;
    use crate::spec::parse_spec;
    use std::io::Write;

    fn write(out: &mut Vec<u8>, seq: u64, file: u32, offset: u64, old: u8, new: u8, len: u32) {
        out.extend_from_slice(&write_header(
            seq,
            slot(0, file),
            1,
            100 + file as u64,
            offset,
            len,
        ));
        out.extend(std::iter::repeat_n(old, len as usize));
        out.extend(std::iter::repeat_n(new, len as usize));
    }

    /// The servers' path (issue 36): 16 KiB page writes logged by the shim, replayed on a drive
    /// of 4 KiB sectors, are torn in some states — a page part new, part old — and only at 4 KiB
    /// boundaries.
    #[test]
    fn page_writes_from_the_log_tear_at_the_drive_s_sectors_only() {
        let dir = std::env::temp_dir().join(format!("oltplab-undo-tear-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("undo.log");
        let page = 16u32 << 10;
        let mut bytes = Vec::new();
        // Six pages of one file, each written once over zeros with its own byte, no flush.
        for k in 0..6u64 {
            write(&mut bytes, k + 1, 0, k * page as u64, 0, k as u8 + 1, page);
        }
        std::fs::write(&path, &bytes).unwrap();
        let r = replay(&path, &parse_spec("sata-ssd-2010{sector=4k}").unwrap()).unwrap();
        assert_eq!(r.log.pending_writes(), 6);
        let mut torn_pages = 0;
        for st in r.log.states(3, 32) {
            // The file as the processes left it (every write done), then the state's patches.
            let mut file: Vec<u8> = (0..6u8)
                .flat_map(|k| std::iter::repeat_n(k + 1, page as usize))
                .collect();
            for p in &st.patches {
                let at = p.offset as usize;
                file[at..at + p.data.len()].copy_from_slice(&p.data);
            }
            for (k, pg) in file.chunks(page as usize).enumerate() {
                for sector in pg.chunks(4096) {
                    assert!(
                        sector.iter().all(|&b| b == sector[0]),
                        "page {k}: a 4 KiB sector holds old and new bytes"
                    );
                    assert!(sector[0] == 0 || sector[0] == k as u8 + 1);
                }
                let new = pg.chunks(4096).filter(|s| s[0] != 0).count();
                torn_pages += usize::from(new > 0 && new < 4);
            }
        }
        assert!(torn_pages > 0, "32 states tore no page");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_log_replays_in_sequence_order_and_a_torn_tail_is_left_out() {
        let dir = std::env::temp_dir().join(format!("oltplab-undo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("undo.log");
        let mut bytes = Vec::new();
        // Appended out of order: the flush (begun at 3) covers writes 1 and 2, not 4.
        write(&mut bytes, 2, 0, 512, 0, 2, 512);
        write(&mut bytes, 1, 0, 0, 0, 1, 512);
        write(&mut bytes, 4, 1, 0, 0, 4, 1024);
        bytes.extend_from_slice(&flush_record(3, slot(0, 0)));
        // A process killed halfway through its append.
        let torn = write_header(5, slot(0, 1), 1, 101, 0, 4096);
        bytes.extend_from_slice(&torn);
        bytes.extend_from_slice(&[9u8; 100]);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(&bytes)
            .unwrap();
        let r = replay(&path, &parse_spec("sata-ssd-2010").unwrap()).unwrap();
        assert_eq!((r.writes, r.flushes), (3, 1));
        assert_eq!(r.torn_tail_bytes, 148);
        assert_eq!(r.log.pending_writes(), 1, "only write 4 is after the flush");
        assert_eq!(r.files[&slot(0, 1)], (1, 101));
        let st = &r.log.states(1, 1)[0];
        assert_eq!(st.patches[0].file, slot(0, 1));
        assert_eq!(st.patches[0].data, vec![0u8; 1024], "the undo comes first");
        // A lying cache keeps all three.
        let r = replay(&path, &parse_spec("sata-ssd-2010{cache=lying}").unwrap()).unwrap();
        assert_eq!(r.log.pending_writes(), 3);
        // A battery-backed one none.
        let r = replay(&path, &parse_spec("pcie-flash-2012").unwrap()).unwrap();
        assert_eq!(r.log.pending_writes(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
