//! `oltplab trace stat`: what a trace holds — operation counts and mix, IOPS and I/Os in flight per
//! second, request sizes, how much is random, and the same per file and per transaction type.
//!
//! Definitions (also in docs/trace.md):
//! - IOPS counts reads and writes (as iostat does); syncs and other ops are listed separately.
//! - An I/O is *sequential* if it starts where the previous read or write of the same file ended;
//!   every other read or write is random.
//! - In flight: the number of operations between their submit and completion; per second, the
//!   time-weighted mean and the maximum.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use oltplab_core::Result;
use oltplab_metrics::{LatencyHistogram, LatencyNs};
use serde::Serialize;

use crate::format::TraceMeta;
use crate::reader::TraceData;
use crate::{tag_name, Op, Record};

pub const SCHEMA: &str = "oltplab.trace-stat/1";

#[derive(Clone, Debug, Default, Serialize)]
pub struct TraceStat {
    pub schema: String,
    pub meta: TraceMeta,
    /// False if the capture never finished: the figures cover the readable prefix.
    pub complete: bool,
    pub records: u64,
    /// From the trace's start to the end of its last operation.
    pub duration_s: f64,
    pub threads: u64,
    /// The CPUs the I/O was issued on (0: the records carry none, as in traces of format version
    /// 1 and those converted from fio or MSR; `--order btreplay` needs them).
    pub cpus: u64,
    pub ops: OpCounts,
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// Reads + writes per second over the whole duration.
    pub iops: f64,
    pub mix: Mix,
    /// Share of reads and writes that are random, in percent.
    pub random_pct: f64,
    pub read_random_pct: f64,
    pub write_random_pct: f64,
    pub read_lat_ns: LatencyNs,
    pub write_lat_ns: LatencyNs,
    pub sync_lat_ns: LatencyNs,
    pub in_flight_max: u64,
    pub in_flight_mean: f64,
    /// Power-of-two size classes: `size_bytes_max` is the class's upper bound (inclusive).
    pub sizes: Vec<SizeClass>,
    /// The most frequent exact sizes (e.g. SQLite's 4,120-byte WAL frames), most frequent first.
    pub common_sizes: Vec<ExactSize>,
    /// One entry per second from the trace's start; a trace whose times span more than 12 days
    /// and more than 8 seconds per record (a crafted time far ahead) lists only the seconds that
    /// have I/O, each with its `t_s`.
    pub per_second: Vec<Second>,
    pub per_file: Vec<FileStat>,
    /// Present when records carry transaction tags.
    pub per_tag: Vec<TagStat>,
    /// Present when the run's emulated device was a layout of several: each device's I/O and busy
    /// share.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_device: Vec<GroupIo>,
    /// Present when the capture recorded which table each file or page belongs to (runs of
    /// `oltplab run` with a trace): each table's reads and writes, indexes with their table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_table: Vec<GroupIo>,
}

/// The I/O of one group of a trace's records: a device of a layout, or a table.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct GroupIo {
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// This group's reads + writes against all reads + writes, in percent.
    pub share_pct: f64,
    /// Time with at least one of the group's operations in flight, against the window: a device's
    /// busy share (iostat's %util); 100 − it is the idle share S3 reports.
    pub busy_pct: f64,
    /// A device with an SSD read cache: the share of its reads the cache served, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_cache_hit_pct: Option<f64>,
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The records' I/O by the group `group_of` names (None: not counted), largest share first;
/// `window_ns` is the span busy shares are taken of.
pub fn group_io(
    records: &[Record],
    window_ns: u64,
    mut group_of: impl FnMut(&Record) -> Option<String>,
) -> Vec<GroupIo> {
    // Per group: its figures and the end of the busy interval so far (records come sorted by
    // submit time, so the union of [submit, end) is one running interval).
    let mut groups: BTreeMap<String, (GroupIo, u64, u64, u64)> = BTreeMap::new();
    let mut data_total = 0u64;
    for r in records {
        let Some(name) = group_of(r) else {
            continue;
        };
        let (g, busy_ns, from, until) = groups.entry(name).or_default();
        match r.kind() {
            Op::Read => {
                g.reads += 1;
                g.read_bytes += r.len as u64;
            }
            Op::Write => {
                g.writes += 1;
                g.written_bytes += r.len as u64;
            }
            op if op.is_sync() => g.syncs += 1,
            _ => {}
        }
        if r.kind().is_data() {
            data_total += 1;
        }
        let (start, end) = (r.submit_ns, r.end_ns());
        if start > *until {
            *busy_ns += *until - *from;
            *from = start;
            *until = end;
        } else {
            *until = (*until).max(end);
        }
    }
    let mut out: Vec<GroupIo> = groups
        .into_iter()
        .map(|(name, (mut g, busy_ns, from, until))| {
            g.name = name;
            g.share_pct = pct(g.reads + g.writes, data_total);
            g.busy_pct = if window_ns == 0 {
                0.0
            } else {
                ((busy_ns + (until - from)) as f64 / window_ns as f64 * 100.0).min(100.0)
            };
            g
        })
        .collect();
    out.sort_by(|a, b| {
        (b.reads + b.writes)
            .cmp(&(a.reads + a.writes))
            .then(a.name.cmp(&b.name))
    });
    out
}

/// The trace's reads and writes by table, from its table map (empty without one); I/O of a file
/// the map does not cover counts as [`OTHER_FILES`](crate::format::OTHER_FILES).
pub fn io_by_table(trace: &TraceData, window_ns: u64) -> Vec<GroupIo> {
    if trace.tables.is_empty() {
        return Vec::new();
    }
    group_io(&trace.records, window_ns, |r| {
        r.kind().is_data().then(|| {
            trace
                .table_of(r.file, r.offset)
                .unwrap_or(crate::format::OTHER_FILES)
                .to_string()
        })
    })
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct OpCounts {
    pub read: u64,
    pub write: u64,
    pub fsync: u64,
    pub fdatasync: u64,
    pub sync_range: u64,
    pub trim: u64,
    pub truncate: u64,
    pub fallocate: u64,
}

impl OpCounts {
    pub fn add(&mut self, op: Op) {
        *self.slot(op) += 1;
    }

    pub fn add_all(&mut self, other: &OpCounts) {
        for op in Op::ALL {
            *self.slot(op) += other.get(op);
        }
    }

    fn slot(&mut self, op: Op) -> &mut u64 {
        match op {
            Op::Read => &mut self.read,
            Op::Write => &mut self.write,
            Op::Fsync => &mut self.fsync,
            Op::Fdatasync => &mut self.fdatasync,
            Op::SyncRange => &mut self.sync_range,
            Op::Trim => &mut self.trim,
            Op::Truncate => &mut self.truncate,
            Op::Fallocate => &mut self.fallocate,
        }
    }

    pub fn get(&self, op: Op) -> u64 {
        let mut copy = *self;
        *copy.slot(op)
    }

    pub fn syncs(&self) -> u64 {
        self.fsync + self.fdatasync + self.sync_range
    }

    pub fn total(&self) -> u64 {
        Op::ALL.iter().map(|&op| self.get(op)).sum()
    }
}

/// Shares of all operations, in percent.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Mix {
    pub read_pct: f64,
    pub write_pct: f64,
    pub sync_pct: f64,
    pub other_pct: f64,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SizeClass {
    pub size_bytes_max: u64,
    pub reads: u64,
    pub writes: u64,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ExactSize {
    pub size_bytes: u64,
    pub reads: u64,
    pub writes: u64,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Second {
    /// Start of the second, since the trace's start.
    pub t_s: f64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub syncs: u64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    pub in_flight_mean: f64,
    pub in_flight_max: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct FileStat {
    pub id: u16,
    pub path: String,
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub random_pct: f64,
    /// Highest byte addressed: the size a replay copy of the file needs.
    pub extent_bytes: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct TagStat {
    pub tag: u8,
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    pub syncs: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
}

/// Reads `path` and computes its statistics.
pub fn stat_file(path: &Path) -> Result<TraceStat> {
    Ok(TraceStat::compute(&TraceData::load(path)?))
}

const COMMON_SIZES: usize = 8;

#[derive(Default)]
struct FileAcc {
    stat: FileStat,
    last_end: Option<u64>,
    random: u64,
}

impl TraceStat {
    /// Statistics of `trace`, whose records are sorted by submit time.
    pub fn compute(trace: &TraceData) -> TraceStat {
        let recs = &trace.records;
        let mut s = TraceStat {
            schema: SCHEMA.into(),
            meta: trace.meta.clone(),
            complete: trace.complete,
            records: recs.len() as u64,
            ..TraceStat::default()
        };
        let mut read_h = LatencyHistogram::new();
        let mut write_h = LatencyHistogram::new();
        let mut sync_h = LatencyHistogram::new();
        let mut tids = std::collections::HashSet::new();
        let mut cpus = std::collections::HashSet::new();
        let mut files: BTreeMap<u16, FileAcc> = BTreeMap::new();
        let mut tags: BTreeMap<u8, TagStat> = BTreeMap::new();
        let mut classes: BTreeMap<u64, SizeClass> = BTreeMap::new();
        let mut exact: HashMap<u64, ExactSize> = HashMap::new();
        let (mut read_random, mut write_random) = (0u64, 0u64);
        let mut end_ns = 0u64;
        for r in recs {
            let op = r.kind();
            s.ops.add(op);
            tids.insert(r.tid);
            if let Some(cpu) = r.cpu {
                cpus.insert(cpu);
            }
            end_ns = end_ns.max(r.end_ns());
            let f = files.entry(r.file).or_insert_with(|| FileAcc {
                stat: FileStat {
                    id: r.file,
                    path: trace
                        .files
                        .get(r.file as usize)
                        .cloned()
                        .unwrap_or_default(),
                    ..FileStat::default()
                },
                ..FileAcc::default()
            });
            if op.touches_range() {
                f.stat.extent_bytes = f.stat.extent_bytes.max(r.end_offset());
            } else if op == Op::Truncate {
                f.stat.extent_bytes = f.stat.extent_bytes.max(r.offset);
            }
            let t = tags.entry(r.tag).or_insert_with(|| TagStat {
                tag: r.tag,
                name: tag_name(r.tag),
                ..TagStat::default()
            });
            match op {
                Op::Read | Op::Write => {
                    let random = f.last_end != Some(r.offset);
                    f.last_end = Some(r.end_offset());
                    f.random += random as u64;
                    let class = (r.len as u64).max(1).next_power_of_two();
                    let c = classes.entry(class).or_insert(SizeClass {
                        size_bytes_max: class,
                        ..SizeClass::default()
                    });
                    let e = exact.entry(r.len as u64).or_insert(ExactSize {
                        size_bytes: r.len as u64,
                        ..ExactSize::default()
                    });
                    if op == Op::Read {
                        read_h.record(r.latency_ns as u64);
                        s.read_bytes += r.len as u64;
                        read_random += random as u64;
                        f.stat.reads += 1;
                        f.stat.read_bytes += r.len as u64;
                        t.reads += 1;
                        t.read_bytes += r.len as u64;
                        c.reads += 1;
                        e.reads += 1;
                    } else {
                        write_h.record(r.latency_ns as u64);
                        s.written_bytes += r.len as u64;
                        write_random += random as u64;
                        f.stat.writes += 1;
                        f.stat.written_bytes += r.len as u64;
                        t.writes += 1;
                        t.written_bytes += r.len as u64;
                        c.writes += 1;
                        e.writes += 1;
                    }
                }
                op if op.is_sync() => {
                    sync_h.record(r.latency_ns as u64);
                    f.stat.syncs += 1;
                    t.syncs += 1;
                }
                _ => {}
            }
        }
        s.threads = tids.len() as u64;
        s.cpus = cpus.len() as u64;
        s.duration_s = end_ns as f64 / 1e9;
        let data = s.ops.read + s.ops.write;
        if s.duration_s > 0.0 {
            s.iops = data as f64 / s.duration_s;
        }
        let all = s.ops.total();
        s.mix = Mix {
            read_pct: pct(s.ops.read, all),
            write_pct: pct(s.ops.write, all),
            sync_pct: pct(s.ops.syncs(), all),
            other_pct: pct(all - data - s.ops.syncs(), all),
        };
        s.random_pct = pct(read_random + write_random, data);
        s.read_random_pct = pct(read_random, s.ops.read);
        s.write_random_pct = pct(write_random, s.ops.write);
        s.read_lat_ns = read_h.stats();
        s.write_lat_ns = write_h.stats();
        s.sync_lat_ns = sync_h.stats();
        s.sizes = classes.into_values().collect();
        let mut exact: Vec<ExactSize> = exact.into_values().collect();
        exact.sort_by_key(|e| (std::cmp::Reverse(e.reads + e.writes), e.size_bytes));
        exact.truncate(COMMON_SIZES);
        s.common_sizes = exact;
        s.per_file = files
            .into_values()
            .map(|mut f| {
                f.stat.random_pct = pct(f.random, f.stat.reads + f.stat.writes);
                f.stat
            })
            .collect();
        // Only worth a table when something was tagged.
        if tags.keys().any(|&t| t != 0) {
            s.per_tag = tags.into_values().collect();
        }
        s.per_second = per_second(recs, end_ns);
        if let Some(spec) = (trace.meta.device.as_deref())
            .and_then(|d| oltplab_devmodel::parse_spec(d).ok())
            .filter(|s| s.is_layout())
        {
            s.per_device = group_io(recs, end_ns, |r| {
                let device = oltplab_devmodel::slot_device(trace.device_slot(r.file));
                Some(spec.device_label(device))
            });
        }
        s.per_table = io_by_table(trace, end_ns);
        s.in_flight_max = s
            .per_second
            .iter()
            .map(|x| x.in_flight_max)
            .max()
            .unwrap_or(0);
        let busy_ns: f64 = recs.iter().map(|r| r.latency_ns as f64).sum();
        if end_ns > 0 {
            s.in_flight_mean = busy_ns / end_ns as f64;
        }
        s
    }
}

const SECOND_NS: u64 = 1_000_000_000;
/// Seconds the per-second table holds whole, idle ones included: 12 days, more than MSR
/// Cambridge's week-long traces span.
const DENSE_SECONDS_MAX: u64 = 1 << 20;

/// Where each second's entry of the per-second table lives. A trace spanning more seconds than
/// [`DENSE_SECONDS_MAX`] and than its records justify (a crafted time far in the future) gets
/// entries only for the seconds that have I/O in them, so the table is bounded by the input.
enum Slots {
    Dense,
    Sparse(HashMap<u64, usize>),
}

struct Table {
    slots: Slots,
    seconds: Vec<Second>,
    busy_ns: Vec<u64>,
}

impl Table {
    fn slot(&mut self, second: u64) -> usize {
        match &mut self.slots {
            Slots::Dense => second as usize,
            Slots::Sparse(index) => *index.entry(second).or_insert_with(|| {
                self.seconds.push(Second {
                    t_s: second as f64,
                    ..Second::default()
                });
                self.busy_ns.push(0);
                self.seconds.len() - 1
            }),
        }
    }
}

fn per_second(recs: &[Record], end_ns: u64) -> Vec<Second> {
    if recs.is_empty() {
        return Vec::new();
    }
    let last = end_ns / SECOND_NS;
    // Each record touches at most 6 seconds (a latency is under 4.3 s).
    let dense = last < DENSE_SECONDS_MAX.max(recs.len() as u64 * 8);
    let mut table = if dense {
        let seconds = last as usize + 1;
        Table {
            slots: Slots::Dense,
            seconds: (0..seconds)
                .map(|i| Second {
                    t_s: i as f64,
                    ..Second::default()
                })
                .collect(),
            busy_ns: vec![0u64; seconds],
        }
    } else {
        Table {
            slots: Slots::Sparse(HashMap::new()),
            seconds: Vec::new(),
            busy_ns: Vec::new(),
        }
    };
    // +1 at submit, -1 at completion; completions first at equal times so that back-to-back
    // operations of one thread do not count as two in flight.
    let mut events: Vec<(u64, i8)> = Vec::with_capacity(recs.len() * 2);
    for r in recs {
        let i = table.slot(r.submit_ns / SECOND_NS);
        let sec = &mut table.seconds[i];
        match r.kind() {
            Op::Read => {
                sec.read_iops += 1.0;
                sec.read_bw_bytes += r.len as f64;
            }
            Op::Write => {
                sec.write_iops += 1.0;
                sec.write_bw_bytes += r.len as f64;
            }
            op if op.is_sync() => sec.syncs += 1,
            _ => {}
        }
        // Spread the operation's time in flight over the seconds it spans.
        let (mut from, to) = (r.submit_ns, r.end_ns());
        while from < to {
            let s = from / SECOND_NS;
            let until = (s + 1).saturating_mul(SECOND_NS).min(to);
            let i = table.slot(s);
            table.busy_ns[i] += until - from;
            from = until;
        }
        if r.latency_ns > 0 {
            events.push((r.submit_ns, 1));
            events.push((r.end_ns(), -1));
        }
    }
    events.sort_unstable();
    let mut in_flight: i64 = 0;
    for (t, delta) in events {
        in_flight += delta as i64;
        let i = table.slot((t / SECOND_NS).min(last));
        let sec = &mut table.seconds[i];
        sec.in_flight_max = sec.in_flight_max.max(in_flight.max(0) as u64);
    }
    // A second inside a long operation has no events but still has that operation in flight.
    for (sec, &busy_ns) in table.seconds.iter_mut().zip(&table.busy_ns) {
        let second = sec.t_s as u64;
        let len_s = if second == last {
            ((end_ns - second * SECOND_NS) as f64 / 1e9).max(1e-9)
        } else {
            1.0
        };
        sec.in_flight_mean = busy_ns as f64 / (len_s * 1e9);
        if sec.in_flight_max == 0 && busy_ns > 0 {
            sec.in_flight_max = 1;
        }
        sec.read_iops /= len_s;
        sec.write_iops /= len_s;
        sec.iops = sec.read_iops + sec.write_iops;
        sec.read_bw_bytes /= len_s;
        sec.write_bw_bytes /= len_s;
    }
    let mut out = table.seconds;
    if !dense {
        out.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(submit_ns: u64, latency_ns: u32, op: Op, offset: u64, len: u32, file: u16) -> Record {
        Record {
            submit_ns,
            latency_ns,
            offset,
            len,
            file,
            op: op as u8,
            tag: 0,
            tid: 1,
            cpu: None,
        }
    }

    #[test]
    fn counts_mix_random_share_and_in_flight() {
        let trace = TraceData {
            files: vec!["/db".into(), "/wal".into()],
            records: vec![
                rec(0, 100, Op::Read, 0, 4096, 0),
                rec(50, 100, Op::Read, 4096, 4096, 0), // sequential, overlaps the first
                rec(200, 100, Op::Write, 0, 4120, 1),
                rec(300, 100, Op::Write, 4120, 4120, 1), // sequential
                rec(400, 1000, Op::Fsync, 0, 0, 1),
                rec(1_500_000_000, 100, Op::Read, 1 << 20, 16384, 0), // random, second 1
            ],
            complete: true,
            ..TraceData::default()
        };
        let s = TraceStat::compute(&trace);
        assert_eq!(s.ops.read, 3);
        assert_eq!(s.ops.write, 2);
        assert_eq!(s.ops.fsync, 1);
        assert_eq!(s.read_bytes, 4096 * 2 + 16384);
        assert!((s.mix.sync_pct - 100.0 / 6.0).abs() < 1e-9);
        // Random: first read, first write, the last read = 3 of 5.
        assert!((s.random_pct - 60.0).abs() < 1e-9, "{}", s.random_pct);
        assert_eq!(s.per_second.len(), 2);
        assert_eq!(s.per_second[0].in_flight_max, 2);
        assert_eq!(s.per_second[1].in_flight_max, 1);
        assert_eq!(s.per_second[0].read_iops, 2.0);
        assert_eq!(s.per_file[1].path, "/wal");
        assert_eq!(s.per_file[1].extent_bytes, 8240);
        assert_eq!(s.per_file[0].extent_bytes, (1 << 20) + 16384);
        assert_eq!(s.common_sizes[0].size_bytes, 4096);
        assert_eq!(
            s.sizes.iter().map(|c| c.size_bytes_max).collect::<Vec<_>>(),
            vec![4096, 8192, 16384]
        );
        assert!(s.per_tag.is_empty());
    }
}
