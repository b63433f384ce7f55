//! The undo log of a managed server's run on an emulated device: what the shim records in every
//! process of the server, and how oltplab follows it during the run and reads it back into a
//! [`CrashLog`] at a cut.
//!
//! The processes of a server share one log file, opened `O_APPEND`: each record is one `writev`,
//! so records of different processes never interleave. A write's record (what it replaces) is
//! appended before the write itself proceeds; a flush's record after the flush completed,
//! carrying the sequence number taken when it began, so that it makes durable exactly the writes
//! issued before it. Sequence numbers come from one counter shared by the processes (the shim's
//! file table), so that sorting by them gives the device's order.
//!
//! The log keeps only what a cut needs and cannot find elsewhere: a write's new contents are in
//! the data file (or in the next write's old contents, for a later write over the same bytes),
//! so they are not copied; and while the server runs, [`Follower`] gives back the space of every
//! record no cut can need any more (a write its device made durable) by punching it out of the
//! file. On an honest drive that is nearly the whole log within milliseconds, so a run of any
//! length keeps a log of about what its caches hold.
//!
//! ```text
//! record  magic u32 "UNDO" · kind u32 (1 write, 2 flush) · seq u64 · slot u32 · len u32
//!         · dev u64 · ino u64 · offset u64          (48 bytes, little-endian)
//! write   then the old contents (len bytes)
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::durability::{CrashLog, Durability};
use crate::emulator::{clock_ns, slot_device};
use crate::params::CacheMode;
use crate::spec::Spec;

pub const MAGIC: u32 = u32::from_le_bytes(*b"UNDO");
pub const HEADER_BYTES: usize = 48;
const KIND_WRITE: u32 = 1;
const KIND_FLUSH: u32 = 2;

/// The header of a write of `len` bytes at `offset` of the file in `slot` (its device and inode
/// `dev`, `ino`); the old contents follow it.
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

/// One record's header, read back.
#[derive(Clone, Copy)]
struct Header {
    kind: u32,
    seq: u64,
    slot: u32,
    len: u32,
    dev: u64,
    ino: u64,
    offset: u64,
}

impl Header {
    /// None if `h` is not a record's start (past the log's end, or a torn append).
    fn parse(h: &[u8; HEADER_BYTES]) -> Option<Header> {
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        let kind = u32_at(4);
        (u32_at(0) == MAGIC && (kind == KIND_WRITE || kind == KIND_FLUSH)).then(|| Header {
            kind,
            seq: u64_at(8),
            slot: u32_at(16),
            len: u32_at(20),
            dev: u64_at(24),
            ino: u64_at(32),
            offset: u64_at(40),
        })
    }

    /// The record's bytes after its header.
    fn body(&self) -> u64 {
        if self.kind == KIND_WRITE {
            u64::from(self.len)
        } else {
            0
        }
    }
}

/// Where a replay starts: the first record the follower kept, and what the records before it
/// made durable (per device, the latest completed flush's sequence number).
#[derive(Clone, Debug, Default)]
pub struct Start {
    pub offset: u64,
    pub flushed: Vec<u64>,
}

/// A write record the follower has read and not yet given back.
struct Held {
    at: u64,
    seq: u64,
    device: usize,
    len: u64,
    /// Its device's bytes written up to and with it (a lying cache forgets the oldest writes
    /// past its size).
    mark: u64,
}

/// What a lying cache's records are kept beyond its size: the processes append in a slightly
/// different order than they number their writes.
const LYING_SLACK: u64 = 2;

/// Punches out at least this much at a time (one `fallocate` per megabyte, not per record).
const PUNCH_MIN_BYTES: u64 = 1 << 20;

/// Follows a log while the server writes it: counts the writes of at least `min_len` bytes since
/// the last flush record (page writes a cut now would find in a drive's cache, for a cut inside
/// a checkpoint; a flush of any device resets the count: a bound for the cut's timing, not the
/// state the replay computes), and punches out the records no cut can need any more.
pub struct Follower {
    pos: u64,
    start: Start,
    min_len: u32,
    pub pending: u64,
    devices: Vec<Durability>,
    held: VecDeque<Held>,
    /// Per device, the bytes of all its writes read so far.
    written: Vec<u64>,
    /// Bytes given back so far.
    pub punched_bytes: u64,
    /// CPU time spent following (the calling thread's, summed over the calls).
    pub cpu_ns: u64,
}

impl Follower {
    /// Starts at the log's beginning, for a run on `spec`.
    pub fn new(spec: &Spec, min_len: u32) -> Follower {
        let n = spec.devices().len().max(1);
        Follower {
            pos: 0,
            start: Start {
                offset: 0,
                flushed: vec![0; n],
            },
            min_len,
            pending: 0,
            devices: (0..n as u8).map(|i| Durability::of(spec, i)).collect(),
            held: VecDeque::new(),
            written: vec![0; n],
            punched_bytes: 0,
            cpu_ns: 0,
        }
    }

    /// Reads the records appended since the last call and gives back the space of the oldest
    /// ones no cut can need; returns the writes pending. `file` must be open for writing.
    pub fn advance(&mut self, file: &File) -> u64 {
        let cpu_from = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
        let mut h = [0u8; HEADER_BYTES];
        while file.read_exact_at(&mut h, self.pos).is_ok() {
            let Some(r) = Header::parse(&h) else {
                break;
            };
            let device = (slot_device(r.slot) as usize).min(self.devices.len() - 1);
            match r.kind {
                KIND_FLUSH => {
                    self.pending = 0;
                    let f = &mut self.start.flushed[device];
                    *f = (*f).max(r.seq);
                }
                _ => {
                    if r.len >= self.min_len {
                        self.pending += 1;
                    }
                    self.written[device] += u64::from(r.len);
                    self.held.push_back(Held {
                        at: self.pos,
                        seq: r.seq,
                        device,
                        len: u64::from(r.len),
                        mark: self.written[device],
                    });
                }
            }
            self.pos += HEADER_BYTES as u64 + r.body();
        }
        self.give_back(file);
        self.cpu_ns += clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(cpu_from);
        self.pending
    }

    /// Punches out the log's prefix of records whose writes a cut can no longer lose.
    fn give_back(&mut self, file: &File) {
        while let Some(h) = self.held.front() {
            let d = self.devices[h.device];
            let durable = match d.cache {
                CacheMode::Lying => {
                    self.written[h.device] - h.mark > LYING_SLACK * d.cache_bytes.max(h.len)
                }
                _ => self.start.flushed[h.device] > h.seq,
            };
            if !durable {
                break;
            }
            self.held.pop_front();
        }
        let keep_from = self.held.front().map_or(self.pos, |h| h.at);
        if keep_from < self.start.offset + PUNCH_MIN_BYTES {
            return;
        }
        // SAFETY: fallocate on our own descriptor; the range holds only records already read.
        let r = unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                self.start.offset as i64,
                (keep_from - self.start.offset) as i64,
            )
        };
        if r == 0 {
            self.punched_bytes += keep_from - self.start.offset;
            self.start.offset = keep_from;
        }
    }

    /// Bytes read so far: everything the processes appended.
    pub fn read_bytes(&self) -> u64 {
        self.pos
    }

    /// Where a replay of the log starts.
    pub fn start(&self) -> Start {
        self.start.clone()
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
    h: Header,
    /// Where its old contents start in the file.
    at: u64,
}

/// Reads the log at `path` of a run on `spec` from `start` and replays it, in sequence order,
/// into a [`CrashLog`]: writes first pass through the log's filter (only devices whose cache can
/// lose them are kept), flushes make the device's earlier writes durable as the model says.
/// A write's new contents are what its bytes held next: the old contents of the next write over
/// them, or the data file as the cut left it — `open` gives that file by (device, inode).
pub fn replay(
    path: &Path,
    spec: &Spec,
    start: &Start,
    open: &dyn Fn(u64, u64) -> Option<File>,
) -> std::io::Result<Replayed> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let mut entries = Vec::new();
    let mut files = BTreeMap::new();
    file.seek(SeekFrom::Start(start.offset))?;
    let mut reader = BufReader::with_capacity(1 << 20, &file);
    let mut at = start.offset;
    let mut h = [0u8; HEADER_BYTES];
    while at + HEADER_BYTES as u64 <= size {
        reader.read_exact(&mut h)?;
        let Some(r) = Header::parse(&h) else {
            break;
        };
        if at + HEADER_BYTES as u64 + r.body() > size {
            break;
        }
        if r.kind == KIND_WRITE {
            files.entry(r.slot).or_insert((r.dev, r.ino));
        }
        entries.push(Entry {
            h: r,
            at: at + HEADER_BYTES as u64,
        });
        std::io::copy(&mut (&mut reader).take(r.body()), &mut std::io::sink())?;
        at += HEADER_BYTES as u64 + r.body();
    }
    // Appends of different processes reach the file in a slightly different order than they
    // took their numbers; the device order is the numbers'.
    entries.sort_by_key(|e| e.h.seq);
    let mut log = CrashLog::new(spec);
    // The durable point the records given back had reached, in sequence order with the rest.
    let floors: Vec<(u64, u8)> = (start.flushed.iter().enumerate())
        .filter(|(_, s)| **s > 0)
        .map(|(d, s)| (*s, d as u8))
        .collect();
    // Newest first: each write's new contents are its bytes' state after it.
    let mut after = Overlay::default();
    let mut olds: Vec<Option<(Vec<u8>, Vec<u8>)>> = Vec::with_capacity(entries.len());
    for e in entries.iter().rev() {
        if e.h.kind != KIND_WRITE || !log.keeps(e.h.slot) {
            olds.push(None);
            continue;
        }
        let mut old = vec![0u8; e.h.len as usize];
        file.read_exact_at(&mut old, e.at)?;
        let new = after.read(
            e.h.slot,
            (e.h.dev, e.h.ino),
            e.h.offset,
            e.h.len as usize,
            open,
        );
        after.insert(e.h.slot, e.h.offset, &old);
        olds.push(Some((old, new)));
    }
    olds.reverse();
    let (mut writes, mut flushes) = (0, 0);
    let mut floor = floors.iter().peekable();
    for (e, contents) in entries.iter().zip(olds) {
        while let Some((_, d)) = floor.next_if(|(s, _)| *s <= e.h.seq) {
            log.flush(*d);
        }
        if e.h.kind == KIND_FLUSH {
            flushes += 1;
            log.flush(slot_device(e.h.slot));
            continue;
        }
        writes += 1;
        if let Some((old, new)) = contents {
            log.write(e.h.slot, e.h.offset, old, new);
        }
    }
    for (_, d) in floor {
        log.flush(*d);
    }
    Ok(Replayed {
        log,
        files,
        writes,
        flushes,
        torn_tail_bytes: size - at,
    })
}

/// Per file, the bytes later writes overwrote, as they were before those writes: the files as
/// they stood at an earlier point, over the files as the cut left them.
#[derive(Default)]
struct Overlay {
    /// slot → offset → bytes, the pieces disjoint.
    pieces: BTreeMap<u32, BTreeMap<u64, Vec<u8>>>,
    files: BTreeMap<u32, Option<File>>,
}

impl Overlay {
    fn read(
        &mut self,
        slot: u32,
        id: (u64, u64),
        offset: u64,
        len: usize,
        open: &dyn Fn(u64, u64) -> Option<File>,
    ) -> Vec<u8> {
        let mut out = vec![0u8; len];
        if let Some(f) = self.files.entry(slot).or_insert_with(|| open(id.0, id.1)) {
            // Zeros past the file's end: its size is metadata, which is not modelled.
            let mut done = 0;
            while done < len {
                match f.read_at(&mut out[done..], offset + done as u64) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => done += n,
                }
            }
        }
        let end = offset + len as u64;
        if let Some(pieces) = self.pieces.get(&slot) {
            for (&at, data) in pieces.range(..end).rev() {
                let piece_end = at + data.len() as u64;
                if piece_end <= offset {
                    break;
                }
                let from = at.max(offset);
                let to = piece_end.min(end);
                out[(from - offset) as usize..(to - offset) as usize]
                    .copy_from_slice(&data[(from - at) as usize..(to - at) as usize]);
            }
        }
        out
    }

    /// `data` at `offset` replaces whatever pieces lay under it.
    fn insert(&mut self, slot: u32, offset: u64, data: &[u8]) {
        let pieces = self.pieces.entry(slot).or_default();
        let end = offset + data.len() as u64;
        let under: Vec<u64> = pieces
            .range(..end)
            .rev()
            .take_while(|(at, d)| *at + d.len() as u64 > offset)
            .map(|(at, _)| *at)
            .collect();
        for at in under {
            let d = pieces.remove(&at).expect("a key just listed");
            let piece_end = at + d.len() as u64;
            if at < offset {
                pieces.insert(at, d[..(offset - at) as usize].to_vec());
            }
            if piece_end > end {
                pieces.insert(end, d[(end - at) as usize..].to_vec());
            }
        }
        pieces.insert(offset, data.to_vec());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::slot;
    use crate::parser::parse_spec;
    use std::io::Write;

    fn write(out: &mut Vec<u8>, seq: u64, file: u32, offset: u64, old: u8, len: u32) {
        out.extend_from_slice(&write_header(
            seq,
            slot(0, file),
            1,
            100 + file as u64,
            offset,
            len,
        ));
        out.extend(std::iter::repeat_n(old, len as usize));
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("oltplab-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The data files as the cut left them, by inode (`100 + file`), for `replay`'s `open`.
    fn data_files(dir: &Path, contents: &[Vec<u8>]) -> impl Fn(u64, u64) -> Option<File> {
        let paths: Vec<_> = contents
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let p = dir.join(format!("data-{k}"));
                std::fs::write(&p, c).unwrap();
                p
            })
            .collect();
        move |_, ino| File::open(paths.get(ino.checked_sub(100)? as usize)?).ok()
    }

    /// The servers' path (issue 36): 16 KiB page writes logged by the shim, replayed on a drive
    /// of 4 KiB sectors, are torn in some states — a page part new, part old — and only at 4 KiB
    /// boundaries.
    #[test]
    fn page_writes_from_the_log_tear_at_the_drive_s_sectors_only() {
        let dir = scratch("undo-tear");
        let path = dir.join("undo.log");
        let page = 16u32 << 10;
        let mut bytes = Vec::new();
        // Six pages of one file, each written once over zeros with its own byte, no flush.
        for k in 0..6u64 {
            write(&mut bytes, k + 1, 0, k * page as u64, 0, page);
        }
        std::fs::write(&path, &bytes).unwrap();
        // The file as the processes left it (every write done).
        let done: Vec<u8> = (0..6u8)
            .flat_map(|k| std::iter::repeat_n(k + 1, page as usize))
            .collect();
        let open = data_files(&dir, std::slice::from_ref(&done));
        let spec = parse_spec("sata-ssd-2010{sector=4k}").unwrap();
        let r = replay(&path, &spec, &Start::default(), &open).unwrap();
        assert_eq!(r.log.pending_writes(), 6);
        let mut torn_pages = 0;
        for st in r.log.states(3, 32) {
            let mut file = done.clone();
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
        let dir = scratch("undo");
        let path = dir.join("undo.log");
        let mut bytes = Vec::new();
        // Appended out of order: the flush (begun at 3) covers writes 1 and 2, not 4.
        write(&mut bytes, 2, 0, 512, 0, 512);
        write(&mut bytes, 1, 0, 0, 0, 512);
        write(&mut bytes, 4, 1, 0, 0, 1024);
        bytes.extend_from_slice(&flush_record(3, slot(0, 0)));
        // A process killed halfway through its append.
        let torn = write_header(5, slot(0, 1), 1, 101, 0, 4096);
        bytes.extend_from_slice(&torn);
        bytes.extend_from_slice(&[9u8; 100]);
        File::create(&path).unwrap().write_all(&bytes).unwrap();
        let open = data_files(
            &dir,
            &[[vec![1u8; 512], vec![2; 512]].concat(), vec![4; 1024]],
        );
        let replay = |spec: &str| {
            replay(&path, &parse_spec(spec).unwrap(), &Start::default(), &open).unwrap()
        };
        let r = replay("sata-ssd-2010");
        assert_eq!((r.writes, r.flushes), (3, 1));
        assert_eq!(r.torn_tail_bytes, 148);
        assert_eq!(r.log.pending_writes(), 1, "only write 4 is after the flush");
        assert_eq!(r.files[&slot(0, 1)], (1, 101));
        let st = &r.log.states(1, 1)[0];
        assert_eq!(st.patches[0].file, slot(0, 1));
        assert_eq!(st.patches[0].data, vec![0u8; 1024], "the undo comes first");
        // A lying cache keeps all three.
        assert_eq!(replay("sata-ssd-2010{cache=lying}").log.pending_writes(), 3);
        // A battery-backed one none.
        assert_eq!(replay("pcie-flash-2012").log.pending_writes(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The log holds no new contents: a write's are its bytes' next state — the old contents
    /// of the next write over them, else the file. Two writes over the same bytes, both pending:
    /// a state that keeps the first and loses the second has the first's bytes there, not the
    /// file's and not the original.
    #[test]
    fn a_write_s_new_contents_are_the_next_write_s_old_ones() {
        let dir = scratch("undo-new");
        let path = dir.join("undo.log");
        let mut bytes = Vec::new();
        write(&mut bytes, 1, 0, 0, 0, 512); // 0 → 1
        write(&mut bytes, 2, 0, 256, 1, 256); // over write 1's second half: 1 → 2
        std::fs::write(&path, &bytes).unwrap();
        let open = data_files(&dir, &[[vec![1u8; 256], vec![2; 256]].concat()]);
        let r = replay(
            &path,
            &parse_spec("sata-ssd-2010").unwrap(),
            &Start::default(),
            &open,
        )
        .unwrap();
        assert_eq!(r.log.pending_writes(), 2);
        let mut seen = std::collections::BTreeSet::new();
        for st in r.log.states(11, 64) {
            let mut file = [vec![1u8; 256], vec![2; 256]].concat();
            for p in &st.patches {
                let at = p.offset as usize;
                file[at..at + p.data.len()].copy_from_slice(&p.data);
            }
            if st.torn_writes == 0 {
                seen.insert(file.clone());
            }
            // Bytes 256..512 are 0 (both lost), 1 (write 1 kept) or 2 (write 2 kept).
            assert!(file[256..512].iter().all(|b| *b <= 2));
        }
        let only_first = vec![1u8; 512];
        assert!(
            seen.contains(&only_first),
            "no state kept write 1 alone: {} states",
            seen.len()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The follower gives back the records of writes a flush made durable, and a replay from
    /// where it left off draws the same pending writes as one of the whole log.
    #[test]
    fn the_follower_punches_out_flushed_records_and_the_replay_is_unchanged() {
        let dir = scratch("undo-follow");
        let path = dir.join("undo.log");
        let spec = parse_spec("sata-ssd-2010").unwrap();
        let mut bytes = Vec::new();
        let page = 16u32 << 10;
        // 200 page writes with a flush after every tenth, then 5 writes left pending.
        let mut seq = 0;
        for k in 0..205u64 {
            seq += 1;
            write(&mut bytes, seq, 0, (k % 50) * page as u64, 0, page);
            if k % 10 == 9 && k < 200 {
                seq += 1;
                bytes.extend_from_slice(&flush_record(seq, slot(0, 0)));
            }
        }
        std::fs::write(&path, &bytes).unwrap();
        let open = data_files(&dir, &[vec![7u8; 50 * page as usize]]);
        let whole = replay(&path, &spec, &Start::default(), &open).unwrap();
        let log = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let mut follow = Follower::new(&spec, 8 << 10);
        assert_eq!(
            follow.advance(&log),
            5,
            "five page writes after the last flush"
        );
        let start = follow.start();
        assert!(
            start.offset > 3 << 20,
            "only {} bytes punched",
            start.offset
        );
        assert_eq!(follow.punched_bytes, start.offset);
        // The punched range reads as zeros and takes no space.
        let mut head = [1u8; HEADER_BYTES];
        log.read_exact_at(&mut head, 0).unwrap();
        assert_eq!(head, [0u8; HEADER_BYTES]);
        use std::os::unix::fs::MetadataExt;
        assert!(log.metadata().unwrap().blocks() * 512 < bytes.len() as u64 / 2);
        let rest = replay(&path, &spec, &start, &open).unwrap();
        assert_eq!(rest.log.pending_writes(), whole.log.pending_writes());
        let (a, b) = (&whole.log.states(5, 1)[0], &rest.log.states(5, 1)[0]);
        assert_eq!(a.patches, b.patches);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
