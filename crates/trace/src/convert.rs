//! Converters between oltplab traces and other tools' formats.
//!
//! | format | read | write | what it carries |
//! |---|---|---|---|
//! | `oltplab` | ✓ | ✓ | everything |
//! | `fio-iolog-v3` | ✓ | ✓ | time (µs), file, op, offset, length — no latency, no thread |
//! | `fio-iolog-v2` | ✓ | | file, op, offset, length, `wait`s — no times of its own |
//! | `blkparse` | ✓ | | device, CPU, time, pid, op, sector, size; latency from issue (D) to completion (C) |
//! | `msr-csv` | ✓ | | MSR Cambridge: time, disk, op, offset, size, response time |
//!
//! Only oltplab traces and blkparse carry the CPU of each I/O (which `--order btreplay` needs);
//! the other formats leave it absent. Imported traces without a thread id get tid 0; the replayer then derives concurrency from the
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
    if parse_msr_line(first).is_ok() {
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

    /// The id of file `name`; an error naming `line` of `path` if the trace's table is full.
    fn file_id(&mut self, name: &str, path: &Path, line: usize) -> Result<u16> {
        if let Some(&id) = self.ids.get(name) {
            return Ok(id);
        }
        if self.data.files.len() >= u16::MAX as usize {
            return Err(line_error(
                path,
                line,
                &format!(
                    "'{}' is the 65,536th file the input names, more than an oltplab trace holds; split the input",
                    shown(name)
                ),
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

/// Longest line read. Lines of iologs, blkparse and MSR are under 300 bytes; a longer one means
/// the file is not in the format, and reading it whole could take all memory.
const LINE_BYTES_MAX: usize = 64 << 10;

/// Calls `f(number, line)` for each line of `input` (numbered from 1, without its line end). A
/// line longer than [`LINE_BYTES_MAX`] or not UTF-8 is an error naming it.
fn for_each_line(
    path: &Path,
    mut input: impl BufRead,
    format: Format,
    mut f: impl FnMut(usize, &str) -> Result<()>,
) -> Result<()> {
    let mut buf = Vec::new();
    for n in 1.. {
        buf.clear();
        let read = (&mut input)
            .take(LINE_BYTES_MAX as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_usage(path, "read", &e))?;
        if read == 0 {
            break;
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        } else if buf.len() > LINE_BYTES_MAX {
            return Err(line_error(
                path,
                n,
                &format!(
                    "the line is longer than {LINE_BYTES_MAX} bytes, so this is not a {} file: check --from",
                    format.name()
                ),
            ));
        }
        let line = std::str::from_utf8(&buf).map_err(|e| {
            line_error(
                path,
                n,
                &format!(
                    "byte {} of the line is not UTF-8 text, so this is not a {} file: check --from",
                    e.valid_up_to() + 1,
                    format.name()
                ),
            )
        })?;
        f(n, line)?;
    }
    Ok(())
}

/// `text` for an error message: at most 80 characters of it.
fn shown(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Nanoseconds a trace's clock holds: 584 years.
const CLOCK_SPAN: &str = "the 584 years a trace's 64-bit ns clock holds";

fn read_iolog(path: &Path, input: impl BufRead, format: Format, imp: &mut Importer) -> Result<u64> {
    let v3 = format == Format::FioIologV3;
    let mut clock_ns = 0u64;
    let mut ignored = 0;
    for_each_line(path, input, format, |n, line| {
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
            return Ok(());
        }
        if line.is_empty() {
            ignored += 1;
            return Ok(());
        }
        let mut fields: Vec<&str> = line.split_whitespace().collect();
        if v3 {
            let t: u64 = fields[0].parse().map_err(|_| {
                line_error(
                    path,
                    n,
                    &format!("'{}' is not a timestamp in µs", shown(fields[0])),
                )
            })?;
            clock_ns = t.checked_mul(1000).ok_or_else(|| {
                line_error(
                    path,
                    n,
                    &format!("the timestamp {t} µs is past {CLOCK_SPAN}; fix the iolog"),
                )
            })?;
            fields.remove(0);
        }
        let bad = || {
            line_error(
                path,
                n,
                &format!(
                    "cannot read '{}': expected FILE ACTION [OFFSET LENGTH]",
                    shown(line)
                ),
            )
        };
        match fields.as_slice() {
            [file, "add" | "open" | "close"] => {
                imp.file_id(file, path, n)?;
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
                        clock_ns = offset
                            .checked_mul(1000)
                            .and_then(|wait_ns| clock_ns.checked_add(wait_ns))
                            .ok_or_else(|| {
                                line_error(
                                    path,
                                    n,
                                    &format!("a wait of {offset} µs takes the clock past {CLOCK_SPAN}; fix the iolog"),
                                )
                            })?;
                        return Ok(());
                    }
                    other => {
                        return Err(line_error(
                            path,
                            n,
                            &format!(
                            "unknown action '{}' (fio knows read, write, sync, datasync, trim{})",
                            shown(other),
                            if v3 { "" } else { ", wait" }
                        ),
                        ))
                    }
                };
                let len = u32::try_from(len)
                    .map_err(|_| line_error(path, n, "the length does not fit in 32 bits"))?;
                let file = imp.file_id(file, path, n)?;
                let (offset, len) = if op.is_sync() { (0, 0) } else { (offset, len) };
                if offset.checked_add(len as u64).is_none() {
                    return Err(line_error(
                        path,
                        n,
                        &format!("offset {offset} + length {len} overflows 64 bits; fix the iolog"),
                    ));
                }
                imp.push(Record {
                    submit_ns: clock_ns,
                    latency_ns: 0,
                    offset,
                    len,
                    file,
                    op: op as u8,
                    tag: 0,
                    tid: 0,
                    cpu: None,
                });
            }
            _ => return Err(bad()),
        }
        Ok(())
    })?;
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
        let name = data.files.get(r.file as usize).ok_or_else(|| {
            Error::usage(format!(
                "the trace's record at {} ns names file {}, which its file table does not list: the trace is damaged",
                r.submit_ns, r.file
            ))
        })?;
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

/// One blkparse event: device, CPU, time, pid, action, RWBS, sector range.
#[derive(Clone, Debug, PartialEq)]
struct BlkEvent {
    dev: String,
    /// The CPU the event was logged on (blktrace keeps a file per CPU; btrecord bunches per CPU).
    cpu: u32,
    time_ns: u64,
    pid: u32,
    action: char,
    rwbs: String,
    /// (sector, sectors); absent for flushes.
    range: Option<(u64, u64)>,
}

/// Parses blkparse's default output line `8,0  3  1  0.000000000  697  Q  WS 3417048 + 8 [proc]`:
/// `None` if it is not an event line (blkparse's summary, a header), an error if it is one whose
/// numbers do not fit.
fn parse_blkparse_line(line: &str) -> Option<std::result::Result<BlkEvent, String>> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 7 {
        return None;
    }
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let (maj, min) = f[0].split_once(',')?;
    let (secs, frac) = f[3].split_once('.').unwrap_or((f[3], ""));
    let mut action = f[5].chars();
    let a = action.next()?;
    let event = digits(maj)
        && digits(min)
        && digits(f[1])
        && digits(f[2])
        && digits(secs)
        && frac.bytes().all(|b| b.is_ascii_digit())
        && digits(f[4])
        && action.next().is_none()
        && f[6].chars().all(|c| "RWDFNSMAE".contains(c));
    if !event {
        return None;
    }
    Some(parse_blkparse_event(&f, a))
}

/// The numbers of an event line that has the shape of one.
fn parse_blkparse_event(f: &[&str], action: char) -> std::result::Result<BlkEvent, String> {
    let number = |text: &str, what: &str| -> std::result::Result<u64, String> {
        text.parse::<u64>()
            .map_err(|_| format!("the {what} {} does not fit in 64 bits", shown(text)))
    };
    let (maj, min) = f[0].split_once(',').expect("checked by the caller");
    for (text, what) in [(maj, "major device number"), (min, "minor device number")] {
        if text.parse::<u32>().is_err() {
            return Err(format!(
                "the {what} {} does not fit in 32 bits",
                shown(text)
            ));
        }
    }
    let cpu = f[1]
        .parse::<u32>()
        .ok()
        .filter(|&c| c != crate::format::NO_CPU)
        .ok_or_else(|| format!("the CPU {} does not fit in 32 bits", shown(f[1])))?;
    let time_ns = parse_seconds_ns(f[3])?;
    let pid = f[4]
        .parse::<u32>()
        .map_err(|_| format!("the pid {} does not fit in 32 bits", shown(f[4])))?;
    let range = match f.get(7..10) {
        Some([sector, "+", n]) => Some((number(sector, "sector")?, number(n, "sector count")?)),
        _ => None,
    };
    Ok(BlkEvent {
        dev: f[0].to_string(),
        cpu,
        time_ns,
        pid,
        action,
        rwbs: f[6].to_string(),
        range,
    })
}

/// `12.000345678` → ns, exactly (no float rounding); an error if it is past the clock.
fn parse_seconds_ns(text: &str) -> std::result::Result<u64, String> {
    let (s, frac) = text.split_once('.').unwrap_or((text, ""));
    let bad = || format!("'{}' is not a time in seconds", shown(text));
    if frac.len() > 9 || !frac.chars().all(|c| c.is_ascii_digit()) {
        return Err(bad());
    }
    let past = || format!("the time {} s is past {CLOCK_SPAN}", shown(text));
    let secs: u64 = s.parse().map_err(|_| {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            past()
        } else {
            bad()
        }
    })?;
    let mut ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| bad())?
    };
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)
        .and_then(|whole| whole.checked_add(ns))
        .ok_or_else(past)
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
    // Each event with its line number.
    let mut events: Vec<(usize, BlkEvent)> = Vec::new();
    let mut ignored = 0;
    for_each_line(path, input, Format::Blkparse, |n, line| {
        match parse_blkparse_line(line) {
            Some(Ok(e)) => events.push((n, e)),
            Some(Err(what)) => return Err(line_error(path, n, &format!("{what}; fix the trace"))),
            None => ignored += 1,
        }
        Ok(())
    })?;
    // Issue to the driver (D) is when the device sees the request; traces filtered to Q and C
    // events use the queueing instead.
    let submit = if events.iter().any(|(_, e)| e.action == 'D') {
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
    for (n, e) in &events {
        if e.action == submit {
            let Some(op) = blk_op(&e.rwbs) else { continue };
            let file = imp.file_id(&e.dev, path, *n)?;
            let k = key(e);
            let (op, offset, len) = match k.1 {
                None if op == Op::Trim => continue,
                None => (Op::Fsync, 0, 0),
                Some((sector, sectors)) => {
                    let fail =
                        |what: String| line_error(path, *n, &format!("{what}; fix the trace"));
                    let offset = sector
                        .checked_mul(512)
                        .ok_or_else(|| fail(format!("sector {sector} × 512 overflows 64 bits")))?;
                    let bytes = sectors.checked_mul(512).ok_or_else(|| {
                        fail(format!("{sectors} sectors × 512 overflows 64 bits"))
                    })?;
                    if offset.checked_add(bytes).is_none() {
                        return Err(fail(format!(
                            "offset {offset} + length {bytes} overflows 64 bits"
                        )));
                    }
                    // A longer request (a discard of a whole device) is kept as 4 GiB.
                    (op, offset, bytes.min(u32::MAX as u64) as u32)
                }
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
                cpu: Some(e.cpu),
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

/// One MSR Cambridge row.
#[derive(Debug, PartialEq)]
struct MsrRow {
    ticks: u64,
    disk: String,
    op: Op,
    offset: u64,
    len: u32,
    response_ticks: u64,
}

/// One MSR Cambridge line: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, times
/// in Windows ticks of 100 ns; the error says which field is not what it must be.
fn parse_msr_line(line: &str) -> std::result::Result<MsrRow, String> {
    let f: Vec<&str> = line.trim().split(',').map(str::trim).collect();
    if f.len() != 7 {
        return Err(format!(
            "the line has {} comma-separated fields, not 7",
            f.len()
        ));
    }
    let field = |i: usize, name: &str, range: &str| {
        format!("the {name} '{}' is not a whole number {range}", shown(f[i]))
    };
    let ticks: u64 = f[0]
        .parse()
        .map_err(|_| field(0, "Timestamp", "from 0 to 2^64-1"))?;
    f[2].parse::<u32>()
        .map_err(|_| field(2, "DiskNumber", "from 0 to 2^32-1"))?;
    let op = match f[3].to_ascii_lowercase().as_str() {
        "read" => Op::Read,
        "write" => Op::Write,
        _ => {
            return Err(format!(
                "the Type '{}' is neither Read nor Write",
                shown(f[3])
            ))
        }
    };
    let offset: u64 = f[4]
        .parse()
        .map_err(|_| field(4, "Offset", "from 0 to 2^64-1"))?;
    let len: u32 = f[5]
        .parse()
        .map_err(|_| field(5, "Size", "from 0 to 2^32-1"))?;
    let response_ticks: u64 = f[6]
        .parse()
        .map_err(|_| field(6, "ResponseTime", "from 0 to 2^64-1"))?;
    if offset.checked_add(len as u64).is_none() {
        return Err(format!("offset {offset} + size {len} overflows 64 bits"));
    }
    Ok(MsrRow {
        ticks,
        disk: format!("{}_{}", f[1], f[2]),
        op,
        offset,
        len,
        response_ticks,
    })
}

fn read_msr(path: &Path, input: impl BufRead, imp: &mut Importer) -> Result<u64> {
    let mut first_ticks = None;
    let mut ignored = 0;
    for_each_line(path, input, Format::MsrCsv, |n, line| {
        if line.trim().is_empty() {
            ignored += 1;
            return Ok(());
        }
        let row = match parse_msr_line(line) {
            Ok(row) => row,
            // A header row is fine; anything else is damage.
            Err(_) if n == 1 && !line.trim_start().starts_with(|c: char| c.is_ascii_digit()) => {
                ignored += 1;
                return Ok(());
            }
            Err(what) => {
                return Err(line_error(
                    path,
                    n,
                    &format!(
                    "{what}; expected Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"
                ),
                ))
            }
        };
        let t0 = *first_ticks.get_or_insert(row.ticks);
        // MSR's rows are not strictly ordered: an earlier time becomes 0 rather than wrapping.
        let submit_ns = row.ticks.saturating_sub(t0).checked_mul(100).ok_or_else(|| {
            line_error(
                path,
                n,
                &format!(
                    "the Timestamp {} is {} ticks of 100 ns after the first row's, past {CLOCK_SPAN}; fix the trace",
                    row.ticks,
                    row.ticks - t0
                ),
            )
        })?;
        let file = imp.file_id(&row.disk, path, n)?;
        let record = Record {
            submit_ns,
            // The latency field saturates at 4.3 s, as a capture's does.
            latency_ns: row.response_ticks.saturating_mul(100).min(u32::MAX as u64) as u32,
            offset: row.offset,
            len: row.len,
            file,
            op: row.op as u8,
            tag: 0,
            tid: 0,
            cpu: None,
        };
        // A time near the clock's end plus its response time, or an offset near 2^64 plus its
        // size, is no I/O a trace can hold (found by the property tests).
        if let Some(why) = record.defect() {
            return Err(line_error(path, n, &format!("{why}; fix the trace")));
        }
        imp.push(record);
        Ok(())
    })?;
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
        .unwrap()
        .unwrap();
        assert_eq!(e.time_ns, 2581);
        assert_eq!(e.cpu, 3);
        assert_eq!(e.range, Some((3417048, 8)));
        assert_eq!(e.action, 'D');
        assert_eq!(blk_op(&e.rwbs), Some(Op::Write));
        let f = parse_blkparse_line("259,0  1  7  1.5  42  Q FWS [jbd2/nvme0n1p2-8]")
            .unwrap()
            .unwrap();
        assert_eq!(f.range, None);
        assert_eq!(f.time_ns, 1_500_000_000);
        assert!(parse_blkparse_line("CPU0 (8,0):").is_none());
        assert!(parse_blkparse_line(" Reads Queued:           0,        0KiB").is_none());
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(parse_seconds_ns("0.000000001"), Ok(1));
        assert_eq!(parse_seconds_ns("3"), Ok(3_000_000_000));
        assert!(parse_seconds_ns("1.2x").is_err());
        assert_eq!(parse_seconds_ns("18446744073.709551615"), Ok(u64::MAX));
        assert!(parse_seconds_ns("18446744073.709551616")
            .unwrap_err()
            .contains("584 years"));
    }

    #[test]
    fn msr_lines() {
        assert_eq!(
            parse_msr_line("128166372003061629,wdev,0,Write,1012011008,4096,10751"),
            Ok(MsrRow {
                ticks: 128166372003061629,
                disk: "wdev_0".into(),
                op: Op::Write,
                offset: 1012011008,
                len: 4096,
                response_ticks: 10751
            })
        );
        let e = parse_msr_line("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime")
            .unwrap_err();
        assert!(e.contains("Timestamp"), "{e}");
        let e = parse_msr_line("1,h,0,Read,0,4294967296,1").unwrap_err();
        assert!(e.contains("Size"), "{e}");
    }

    /// A row whose time plus response time passes the clock's end is refused with its line, not
    /// imported as a record no trace may hold (the property tests found it).
    #[test]
    fn msr_rows_past_the_clock_are_refused() {
        let path =
            std::env::temp_dir().join(format!("oltplab-msr-clock-{}.csv", std::process::id()));
        let last = u64::MAX / 100 - 1000;
        std::fs::write(
            &path,
            format!("0,h,0,Read,0,4096,1\n{last},h,0,Read,0,4096,4000000000\n"),
        )
        .unwrap();
        let e = import(&path, Some(Format::MsrCsv)).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("overflows"), "{e}");
        std::fs::remove_file(&path).unwrap();
    }
}
