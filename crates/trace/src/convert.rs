//! Converters between oltplab traces and other tools' formats.
//!
//! | format | read | write | what it carries |
//! |---|---|---|---|
//! | `oltplab` | ✓ | ✓ | everything |
//! | `fio-iolog-v3` | ✓ | ✓ | time (µs), file, op, offset, length — no latency, no thread |
//! | `fio-iolog-v2` | ✓ | | file, op, offset, length, `wait`s — no times of its own |
//! | `blkparse` | ✓ | | device, time, pid, op, sector, size; latency from issue (D) to completion (C) |
//! | `msr-csv` | ✓ | | MSR Cambridge: time, disk, op, offset, size, response time |
//!
//! Imported traces without a thread id get tid 0; the replayer then derives concurrency from the
//! I/Os' overlap in time (see [`crate::replay`]).

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use oltplab_core::safety::io_usage;
use oltplab_core::{Error, Result};
use serde::Serialize;

use crate::format::{TraceMeta, MAGIC};
use crate::reader::TraceData;
use crate::{Op, Record};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Format {
    Oltplab,
    FioIologV2,
    FioIologV3,
    Blkparse,
    MsrCsv,
}

impl Format {
    pub const NAMES: [&'static str; 5] = [
        "oltplab",
        "fio-iolog-v2",
        "fio-iolog-v3",
        "blkparse",
        "msr-csv",
    ];
    /// Formats oltplab can write.
    pub const OUTPUT_NAMES: [&'static str; 2] = ["oltplab", "fio-iolog-v3"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "oltplab" => Some(Self::Oltplab),
            "fio-iolog-v2" => Some(Self::FioIologV2),
            "fio-iolog-v3" => Some(Self::FioIologV3),
            "blkparse" => Some(Self::Blkparse),
            "msr-csv" => Some(Self::MsrCsv),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Oltplab => "oltplab",
            Self::FioIologV2 => "fio-iolog-v2",
            Self::FioIologV3 => "fio-iolog-v3",
            Self::Blkparse => "blkparse",
            Self::MsrCsv => "msr-csv",
        }
    }
}

/// What a conversion did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ConvertSummary {
    pub from: String,
    pub to: String,
    pub records_in: u64,
    pub records_out: u64,
    pub files: u64,
    /// Operations the output format cannot express, by op name.
    pub skipped: Vec<(String, u64)>,
    /// Input lines that were not I/O events (blkparse's summary, comments …).
    pub ignored_lines: u64,
}

/// Tells the format of `path` from its first bytes.
pub fn detect(path: &Path) -> Result<Format> {
    let mut head = Vec::with_capacity(4096);
    File::open(path)
        .map_err(|e| io_usage(path, "open", &e))?
        .take(4096)
        .read_to_end(&mut head)
        .map_err(|e| io_usage(path, "read", &e))?;
    if head.starts_with(MAGIC) {
        return Ok(Format::Oltplab);
    }
    let text = String::from_utf8_lossy(&head);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if first.starts_with("fio version 3 iolog") {
        return Ok(Format::FioIologV3);
    }
    if first.starts_with("fio version 2 iolog") {
        return Ok(Format::FioIologV2);
    }
    if parse_msr_line(first).is_some() {
        return Ok(Format::MsrCsv);
    }
    if parse_blkparse_line(first).is_some() {
        return Ok(Format::Blkparse);
    }
    Err(Error::usage(format!(
        "cannot tell the format of {}: give it with --from ({})",
        path.display(),
        Format::NAMES.join(", ")
    )))
}

/// Reads `path` in `format` (detected if `None`) into memory.
pub fn import(path: &Path, format: Option<Format>) -> Result<(Format, TraceData, u64)> {
    let format = match format {
        Some(f) => f,
        None => detect(path)?,
    };
    if format == Format::Oltplab {
        return Ok((format, TraceData::load(path)?, 0));
    }
    let file = File::open(path).map_err(|e| io_usage(path, "open", &e))?;
    let lines = BufReader::with_capacity(1 << 20, file);
    let mut imp = Importer::new(format);
    let ignored = match format {
        Format::FioIologV2 | Format::FioIologV3 => read_iolog(path, lines, format, &mut imp)?,
        Format::Blkparse => read_blkparse(path, lines, &mut imp)?,
        Format::MsrCsv => read_msr(path, lines, &mut imp)?,
        Format::Oltplab => unreachable!("handled above"),
    };
    imp.data.records.sort_by_key(|r| r.submit_ns);
    imp.data.complete = true;
    Ok((format, imp.data, ignored))
}

/// Converts `input` to `to` at `output`.
pub fn convert(
    input: &Path,
    from: Option<Format>,
    to: Format,
    output: &Path,
) -> Result<ConvertSummary> {
    let (from, data, ignored) = import(input, from)?;
    let mut summary = ConvertSummary {
        from: from.name().into(),
        to: to.name().into(),
        records_in: data.records.len() as u64,
        files: data.files.len() as u64,
        ignored_lines: ignored,
        ..ConvertSummary::default()
    };
    match to {
        Format::Oltplab => {
            data.save(output)?;
            summary.records_out = data.records.len() as u64;
        }
        Format::FioIologV3 => {
            let (out, skipped) = write_fio_v3(&data, output)?;
            summary.records_out = out;
            summary.skipped = skipped;
        }
        other => {
            return Err(Error::usage(format!(
                "oltplab cannot write {}: choose --to {}",
                other.name(),
                Format::OUTPUT_NAMES.join(" or ")
            )))
        }
    }
    Ok(summary)
}

struct Importer {
    data: TraceData,
    ids: HashMap<String, u16>,
}

impl Importer {
    fn new(format: Format) -> Self {
        Self {
            data: TraceData {
                meta: TraceMeta::new(format.name()),
                ..TraceData::default()
            },
            ids: HashMap::new(),
        }
    }

    fn file_id(&mut self, name: &str) -> Result<u16> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        if self.data.files.len() >= u16::MAX as usize {
            return Err(Error::usage(
                "the input names more than 65,535 files, more than an oltplab trace holds",
            ));
        }
        self.data.files.push(name.to_string());
        let id = (self.data.files.len() - 1) as u16;
        self.ids.insert(name.to_string(), id);
        Ok(id)
    }

    fn push(&mut self, r: Record) {
        self.data.records.push(r);
    }
}

fn line_error(path: &Path, line: usize, what: &str) -> Error {
    Error::usage(format!("{} line {line}: {what}", path.display()))
}

fn read_iolog(path: &Path, input: impl BufRead, format: Format, imp: &mut Importer) -> Result<u64> {
    let v3 = format == Format::FioIologV3;
    let mut clock_ns = 0u64;
    let mut ignored = 0;
    for (i, line) in input.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| io_usage(path, "read", &e))?;
        let line = line.trim();
        if n == 1 {
            let want = if v3 {
                "fio version 3 iolog"
            } else {
                "fio version 2 iolog"
            };
            if !line.starts_with(want) {
                return Err(line_error(
                    path,
                    1,
                    &format!("expected \"{want}\"; this is not a {} file", format.name()),
                ));
            }
            continue;
        }
        if line.is_empty() {
            ignored += 1;
            continue;
        }
        let mut fields: Vec<&str> = line.split_whitespace().collect();
        if v3 {
            let t: u64 = fields[0].parse().map_err(|_| {
                line_error(
                    path,
                    n,
                    &format!("'{}' is not a timestamp in µs", fields[0]),
                )
            })?;
            clock_ns = t.saturating_mul(1000);
            fields.remove(0);
        }
        let bad = || {
            line_error(
                path,
                n,
                &format!("cannot read '{line}': expected FILE ACTION [OFFSET LENGTH]"),
            )
        };
        match fields.as_slice() {
            [file, "add" | "open" | "close"] => {
                imp.file_id(file)?;
            }
            [file, action, offset, len] => {
                let offset: u64 = offset.parse().map_err(|_| bad())?;
                let len: u64 = len.parse().map_err(|_| bad())?;
                let op = match *action {
                    "read" => Op::Read,
                    "write" => Op::Write,
                    "sync" => Op::Fsync,
                    "datasync" => Op::Fdatasync,
                    "trim" => Op::Trim,
                    "wait" if !v3 => {
                        clock_ns += offset * 1000;
                        continue;
                    }
                    other => {
                        return Err(line_error(path, n, &format!(
                            "unknown action '{other}' (fio knows read, write, sync, datasync, trim{})",
                            if v3 { "" } else { ", wait" }
                        )))
                    }
                };
                let len = u32::try_from(len)
                    .map_err(|_| line_error(path, n, "the length does not fit in 32 bits"))?;
                let file = imp.file_id(file)?;
                let (offset, len) = if op.is_sync() { (0, 0) } else { (offset, len) };
                imp.push(Record {
                    submit_ns: clock_ns,
                    latency_ns: 0,
                    offset,
                    len,
                    file,
                    op: op as u8,
                    tag: 0,
                    tid: 0,
                });
            }
            _ => return Err(bad()),
        }
    }
    Ok(ignored)
}

/// Writes `data` as a fio iolog v3; returns the lines of I/O written and what had to be skipped.
pub fn write_fio_v3(data: &TraceData, output: &Path) -> Result<(u64, Vec<(String, u64)>)> {
    refuse_foreign_text(output, "fio version 3 iolog")?;
    let file = File::create(output).map_err(|e| io_usage(output, "create", &e))?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    let werr = |e: std::io::Error| io_usage(output, "write", &e);
    writeln!(w, "fio version 3 iolog").map_err(werr)?;
    let used: Vec<bool> = {
        let mut used = vec![false; data.files.len()];
        for r in &data.records {
            if let Some(u) = used.get_mut(r.file as usize) {
                *u = true;
            }
        }
        used
    };
    for (i, name) in data.files.iter().enumerate() {
        if used[i] {
            writeln!(w, "0 {name} add\n0 {name} open").map_err(werr)?;
        }
    }
    let mut skipped: HashMap<&'static str, u64> = HashMap::new();
    let mut out = 0;
    let mut last_us = 0;
    for r in &data.records {
        let action = match r.kind() {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "sync",
            // fio has no sync_file_range action; fdatasync is the nearest durable equivalent.
            Op::Fdatasync | Op::SyncRange => "datasync",
            Op::Trim => "trim",
            Op::Truncate | Op::Fallocate => {
                *skipped.entry(r.kind().name()).or_default() += 1;
                continue;
            }
        };
        let name = &data.files[r.file as usize];
        let (offset, len) = if r.kind().is_sync() {
            (0, 0)
        } else {
            (r.offset, r.len)
        };
        last_us = r.submit_ns / 1000;
        writeln!(w, "{last_us} {name} {action} {offset} {len}").map_err(werr)?;
        out += 1;
    }
    for (i, name) in data.files.iter().enumerate() {
        if used[i] {
            writeln!(w, "{last_us} {name} close").map_err(werr)?;
        }
    }
    w.flush().map_err(werr)?;
    let mut skipped: Vec<(String, u64)> = skipped
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    skipped.sort();
    Ok((out, skipped))
}

/// Refuses to replace a file that does not start with `first_line` (it is not ours to overwrite).
fn refuse_foreign_text(path: &Path, first_line: &str) -> Result<()> {
    if path.is_dir() {
        return Err(Error::usage(format!(
            "{} is a directory: give a file name",
            path.display()
        )));
    }
    let Ok(f) = File::open(path) else {
        return Ok(());
    };
    let mut head = String::new();
    let _ = BufReader::new(f.take(256)).read_line(&mut head);
    let empty = std::fs::metadata(path)
        .map(|m| m.len() == 0)
        .unwrap_or(false);
    if !empty && !head.starts_with(first_line) {
        return Err(Error::usage(format!(
            "{} exists and is not a file oltplab writes: choose another output file name",
            path.display()
        )));
    }
    Ok(())
}

/// One blkparse event: device, time, pid, action, RWBS, sector range.
#[derive(Clone, Debug, PartialEq)]
struct BlkEvent {
    dev: String,
    time_ns: u64,
    pid: u32,
    action: char,
    rwbs: String,
    /// (sector, sectors); absent for flushes.
    range: Option<(u64, u64)>,
}

/// Parses blkparse's default output line `8,0  3  1  0.000000000  697  Q  WS 3417048 + 8 [proc]`.
fn parse_blkparse_line(line: &str) -> Option<BlkEvent> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 7 {
        return None;
    }
    let (maj, min) = f[0].split_once(',')?;
    maj.parse::<u32>().ok()?;
    min.parse::<u32>().ok()?;
    f[1].parse::<u32>().ok()?;
    f[2].parse::<u64>().ok()?;
    let time_ns = parse_seconds_ns(f[3])?;
    let pid = f[4].parse::<u32>().ok()?;
    let mut action = f[5].chars();
    let a = action.next()?;
    if action.next().is_some() {
        return None;
    }
    let rwbs = f[6].to_string();
    if !rwbs.chars().all(|c| "RWDFNSMAE".contains(c)) {
        return None;
    }
    let range = match f.get(7..10) {
        Some([sector, "+", n]) => Some((sector.parse().ok()?, n.parse().ok()?)),
        _ => None,
    };
    Some(BlkEvent {
        dev: f[0].to_string(),
        time_ns,
        pid,
        action: a,
        rwbs,
        range,
    })
}

/// `12.000345678` → ns, exactly (no float rounding).
fn parse_seconds_ns(text: &str) -> Option<u64> {
    let (s, frac) = text.split_once('.').unwrap_or((text, ""));
    let secs: u64 = s.parse().ok()?;
    if frac.len() > 9 || !frac.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        ns *= 10;
    }
    Some(secs * 1_000_000_000 + ns)
}

fn blk_op(rwbs: &str) -> Option<Op> {
    if rwbs.contains('D') {
        Some(Op::Trim)
    } else if rwbs.contains('W') {
        Some(Op::Write)
    } else if rwbs.contains('R') {
        Some(Op::Read)
    } else if rwbs.contains('F') {
        Some(Op::Fsync)
    } else {
        None
    }
}

fn read_blkparse(path: &Path, input: impl BufRead, imp: &mut Importer) -> Result<u64> {
    let mut events = Vec::new();
    let mut ignored = 0;
    for line in input.lines() {
        let line = line.map_err(|e| io_usage(path, "read", &e))?;
        match parse_blkparse_line(&line) {
            Some(e) => events.push(e),
            None => ignored += 1,
        }
    }
    // Issue to the driver (D) is when the device sees the request; traces filtered to Q and C
    // events use the queueing instead.
    let submit = if events.iter().any(|e| e.action == 'D') {
        'D'
    } else {
        'Q'
    };
    // A request is matched to its completion by device and sector range; flushes (no range, or
    // an empty one) by device alone, first in first out.
    let key = |e: &BlkEvent| -> Key {
        let range = e.range.filter(|r| r.1 > 0);
        let flush = range.is_none() || blk_op(&e.rwbs) == Some(Op::Fsync);
        (e.dev.clone(), if flush { None } else { range })
    };
    type Key = (String, Option<(u64, u64)>);
    let mut pending: HashMap<Key, VecDeque<usize>> = HashMap::new();
    let mut found = 0;
    for e in &events {
        if e.action == submit {
            let Some(op) = blk_op(&e.rwbs) else { continue };
            let file = imp.file_id(&e.dev)?;
            let k = key(e);
            let (op, offset, len) = match k.1 {
                None if op == Op::Trim => continue,
                None => (Op::Fsync, 0, 0),
                Some((sector, n)) => (op, sector * 512, (n * 512).min(u32::MAX as u64) as u32),
            };
            pending
                .entry(k)
                .or_default()
                .push_back(imp.data.records.len());
            imp.push(Record {
                submit_ns: e.time_ns,
                latency_ns: 0,
                offset,
                len,
                file,
                op: op as u8,
                tag: 0,
                tid: e.pid,
            });
            found += 1;
        } else if e.action == 'C' {
            if let Some(i) = pending.get_mut(&key(e)).and_then(|q| q.pop_front()) {
                let r = &mut imp.data.records[i];
                r.latency_ns = e.time_ns.saturating_sub(r.submit_ns).min(u32::MAX as u64) as u32;
            }
        }
    }
    if found == 0 {
        return Err(Error::usage(format!(
            "{} holds no blkparse I/O events: give the text output of `blkparse -i TRACE` (default format)",
            path.display()
        )));
    }
    Ok(ignored)
}

/// One MSR Cambridge line: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, times
/// in Windows ticks of 100 ns.
fn parse_msr_line(line: &str) -> Option<(u64, String, Op, u64, u32, u64)> {
    let f: Vec<&str> = line.trim().split(',').collect();
    if f.len() != 7 {
        return None;
    }
    let ticks: u64 = f[0].trim().parse().ok()?;
    f[2].trim().parse::<u32>().ok()?;
    let op = match f[3].trim().to_ascii_lowercase().as_str() {
        "read" => Op::Read,
        "write" => Op::Write,
        _ => return None,
    };
    let offset = f[4].trim().parse().ok()?;
    let len = f[5].trim().parse().ok()?;
    let response: u64 = f[6].trim().parse().ok()?;
    Some((
        ticks,
        format!("{}_{}", f[1].trim(), f[2].trim()),
        op,
        offset,
        len,
        response,
    ))
}

fn read_msr(path: &Path, input: impl BufRead, imp: &mut Importer) -> Result<u64> {
    let mut first_ticks = None;
    let mut ignored = 0;
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(|e| io_usage(path, "read", &e))?;
        if line.trim().is_empty() {
            ignored += 1;
            continue;
        }
        let Some((ticks, disk, op, offset, len, response)) = parse_msr_line(&line) else {
            // A header row is fine; anything else in the middle is damage.
            if i == 0 {
                ignored += 1;
                continue;
            }
            return Err(line_error(
                path,
                i + 1,
                "expected Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
            ));
        };
        let t0 = *first_ticks.get_or_insert(ticks);
        let file = imp.file_id(&disk)?;
        imp.push(Record {
            // MSR's rows are not strictly ordered: an earlier time becomes 0 rather than wrapping.
            submit_ns: ticks.saturating_sub(t0) * 100,
            latency_ns: (response * 100).min(u32::MAX as u64) as u32,
            offset,
            len,
            file,
            op: op as u8,
            tag: 0,
            tid: 0,
        });
    }
    if imp.data.records.is_empty() {
        return Err(Error::usage(format!(
            "{} holds no MSR Cambridge rows",
            path.display()
        )));
    }
    Ok(ignored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blkparse_lines() {
        let e = parse_blkparse_line(
            "  8,0    3        1     0.000002581   697  D  WS 3417048 + 8 [kjournald]",
        )
        .unwrap();
        assert_eq!(e.time_ns, 2581);
        assert_eq!(e.range, Some((3417048, 8)));
        assert_eq!(e.action, 'D');
        assert_eq!(blk_op(&e.rwbs), Some(Op::Write));
        let f = parse_blkparse_line("259,0  1  7  1.5  42  Q FWS [jbd2/nvme0n1p2-8]").unwrap();
        assert_eq!(f.range, None);
        assert_eq!(f.time_ns, 1_500_000_000);
        assert!(parse_blkparse_line("CPU0 (8,0):").is_none());
        assert!(parse_blkparse_line(" Reads Queued:           0,        0KiB").is_none());
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(parse_seconds_ns("0.000000001"), Some(1));
        assert_eq!(parse_seconds_ns("3"), Some(3_000_000_000));
        assert_eq!(parse_seconds_ns("1.2x"), None);
    }

    #[test]
    fn msr_lines() {
        let (t, disk, op, off, len, resp) =
            parse_msr_line("128166372003061629,wdev,0,Write,1012011008,4096,10751").unwrap();
        assert_eq!(
            (t, disk.as_str(), op, off, len, resp),
            (
                128166372003061629,
                "wdev_0",
                Op::Write,
                1012011008,
                4096,
                10751
            )
        );
        assert!(
            parse_msr_line("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime").is_none()
        );
    }
}
