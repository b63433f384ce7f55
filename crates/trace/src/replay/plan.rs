//! Turns a trace into lanes: sequences of operations that the replay issues strictly one after
//! the other. A traced thread doing synchronous I/O is one lane. Operations of one thread that
//! overlapped in time (asynchronous I/O, or imported traces that carry no thread at all) are split
//! into as many lanes as were in flight at once, greedily: an operation joins a lane of its thread
//! whose previous operation had completed when it was submitted. So each thread's order is kept
//! wherever the trace shows an order, and the replay's concurrency is the trace's.
//!
//! For `--order btreplay` ([`Plan::build_btreplay`]) the lanes are *streams* instead: the I/O of
//! one CPU on one device in time order, as blktrace files it (one file per device and CPU), cut
//! into bunches as btrecord cuts them ([`Bunching`]).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use oltplab_core::{Error, Result};
use serde::{Deserialize, Serialize};

use crate::reader::TraceData;
use crate::stat::OpCounts;
use crate::{Op, Record};

/// How btrecord groups each CPU's I/O into bunches, and how many I/Os btreplay keeps in flight per
/// stream. The defaults are btrecord's and btreplay's (blktrace's `btreplay/btrecord.c` and
/// `btreplay.c`): at most 8 I/Os to a bunch, spanning at most 10 ms, and 512 I/O control blocks
/// per record file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bunching {
    /// btrecord `--max-bunch-time`: an I/O issued more than this after its bunch's first I/O
    /// starts a new bunch.
    pub max_time_ns: u64,
    /// btrecord `--max-pkts` (1 to 512): a full bunch is closed.
    pub max_ios: u32,
    /// btreplay's pool of asynchronous I/O control blocks per stream (its `naios`): a stream waits
    /// for a completion only when all of them are in flight.
    pub iocbs: u32,
}

impl Default for Bunching {
    fn default() -> Self {
        Self {
            max_time_ns: 10_000_000,
            max_ios: 8,
            iocbs: 512,
        }
    }
}

impl Bunching {
    /// btrecord's bound on `--max-pkts` (and a sane bound on the pool).
    pub const MAX_IOS: u32 = 512;

    /// Refuses sizes btrecord and btreplay would not take.
    pub fn check(&self) -> Result<()> {
        if !(1..=Self::MAX_IOS).contains(&self.max_ios) {
            return Err(Error::usage(format!(
                "--bunch-size {} is outside btrecord's 1 to {}: give e.g. 8 (btrecord's default)",
                self.max_ios,
                Self::MAX_IOS
            )));
        }
        if self.max_time_ns == 0 {
            return Err(Error::usage(
                "--bunch-time 0 makes no bunches: give e.g. 10ms (btrecord's default)",
            ));
        }
        if !(1..=32_768).contains(&self.iocbs) {
            return Err(Error::usage(format!(
                "--iocbs {} is outside 1 to 32768: give e.g. 512 (btreplay's pool per record file)",
                self.iocbs
            )));
        }
        Ok(())
    }
}

/// The refusal of `--order btreplay` for a trace whose records carry no CPU, in one sentence.
pub fn require_cpus(trace: &TraceData) -> Result<()> {
    if trace.records.is_empty() || trace.records.iter().any(|r| r.cpu.is_some()) {
        return Ok(());
    }
    Err(Error::usage(
        "the trace's records carry no CPU ids (it was captured before oltplab recorded them, or converted from a format without them), and --order btreplay bunches each CPU's I/O as btrecord does: capture the trace again, or replay it in --order lanes or causal",
    ))
}

/// One operation to replay; 32 bytes, so a plan of millions of ops stays small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOp {
    pub submit_ns: u64,
    /// When the traced operation completed: a causal replay waits for what had completed before.
    pub end_ns: u64,
    pub offset: u64,
    pub len: u32,
    /// Dense index into [`Plan::files`].
    pub file: u16,
    pub op: Op,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanFile {
    /// The file's id in the trace.
    pub trace_id: u16,
    /// Where the emulator places the file: the run's own slot when the trace recorded it.
    pub device_slot: u32,
    /// The path in the trace (never opened by the replay).
    pub trace_path: String,
    /// Bytes the replay copy needs: the highest byte any operation addresses.
    pub extent_bytes: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub files: Vec<PlanFile>,
    /// Each lane's operations in order; for btreplay, each stream's (one CPU on one device).
    pub lanes: Vec<Vec<PlanOp>>,
    /// btreplay only: per stream, the index of each bunch's first operation (the first is 0).
    pub bunches: Vec<Vec<u32>>,
    /// btreplay only: per stream, its CPU (`None`: records without one) and layout device.
    pub streams: Vec<(Option<u32>, u8)>,
    pub counts: OpCounts,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub threads: u64,
    /// From the trace's start to the end of its last operation.
    pub trace_duration_ns: u64,
}

impl Plan {
    pub fn ops(&self) -> u64 {
        self.counts.total()
    }

    /// The operation of record `r`, with its file registered and counted.
    fn add(&mut self, dense: &mut HashMap<u16, u16>, trace: &TraceData, r: &Record) -> PlanOp {
        let plan = self;
        let file = *dense.entry(r.file).or_insert_with(|| {
            plan.files.push(PlanFile {
                trace_id: r.file,
                device_slot: trace.device_slot(r.file),
                trace_path: trace
                    .files
                    .get(r.file as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("file{}", r.file)),
                extent_bytes: 0,
            });
            (plan.files.len() - 1) as u16
        });
        let f = &mut plan.files[file as usize];
        let op = r.kind();
        if op.touches_range() {
            f.extent_bytes = f.extent_bytes.max(r.end_offset());
        } else if op == Op::Truncate {
            f.extent_bytes = f.extent_bytes.max(r.offset);
        }
        plan.counts.add(op);
        match op {
            Op::Read => plan.read_bytes += r.len as u64,
            Op::Write => plan.written_bytes += r.len as u64,
            _ => {}
        }
        plan.trace_duration_ns = plan.trace_duration_ns.max(r.end_ns());
        PlanOp {
            submit_ns: r.submit_ns,
            end_ns: r.end_ns(),
            offset: r.offset,
            len: r.len,
            file,
            op,
        }
    }

    /// Streams as btrecord makes them: each CPU's operations on each layout device in time order,
    /// cut into bunches — a bunch is closed when it holds `max_ios` operations or when the next
    /// operation was issued more than `max_time_ns` after the bunch's first. Records without a
    /// CPU (a merge with an old part) form one stream of their own per device. Syncs stay in
    /// their stream as the flush requests a block trace shows for them.
    pub fn build_btreplay(trace: &TraceData, bunching: &Bunching) -> Plan {
        let mut plan = Plan::default();
        let mut dense: HashMap<u16, u16> = HashMap::new();
        let mut streams: HashMap<(Option<u32>, u8), usize> = HashMap::new();
        // Per stream: when its open bunch started.
        let mut bunch_start: Vec<u64> = Vec::new();
        let mut threads: std::collections::HashSet<u32> = Default::default();
        let mut records: Vec<&Record> = trace.records.iter().collect();
        records.sort_by_key(|r| r.submit_ns);
        for r in records {
            threads.insert(r.tid);
            let op = plan.add(&mut dense, trace, r);
            let device = oltplab_devmodel::slot_device(plan.files[op.file as usize].device_slot);
            let s = *streams.entry((r.cpu, device)).or_insert_with(|| {
                plan.lanes.push(Vec::new());
                plan.bunches.push(Vec::new());
                plan.streams.push((r.cpu, device));
                bunch_start.push(0);
                plan.lanes.len() - 1
            });
            let lane = &mut plan.lanes[s];
            let bunches = &mut plan.bunches[s];
            let in_bunch = lane.len() - bunches.last().map_or(0, |&b| b as usize);
            if bunches.is_empty()
                || in_bunch >= bunching.max_ios as usize
                || r.submit_ns - bunch_start[s] > bunching.max_time_ns
            {
                bunches.push(lane.len() as u32);
                bunch_start[s] = r.submit_ns;
            }
            lane.push(op);
        }
        plan.threads = threads.len() as u64;
        plan
    }

    /// Bunches in all streams.
    pub fn bunch_count(&self) -> usize {
        self.bunches.iter().map(Vec::len).sum()
    }

    /// The operations of bunch `b` of stream `s`, as a range of `lanes[s]`.
    pub fn bunch(&self, s: usize, b: usize) -> std::ops::Range<usize> {
        let starts = &self.bunches[s];
        let end = starts
            .get(b + 1)
            .map_or(self.lanes[s].len(), |&e| e as usize);
        starts[b] as usize..end
    }

    pub fn build(trace: &TraceData) -> Plan {
        let mut plan = Plan::default();
        let mut dense: HashMap<u16, u16> = HashMap::new();
        // Per thread: its lanes as a min-heap of (end of the lane's last op, lane index).
        let mut threads: HashMap<u32, BinaryHeap<Reverse<(u64, usize)>>> = HashMap::new();
        // The shim and the SQLite VFS record a thread's own blocking calls, which cannot overlap:
        // one lane per thread. (An emulated call's record ends at the device's modelled
        // completion, and a thread paying back earlier lateness gets control back before that, so
        // its next call can start before the last one "ended". The records keep the device's
        // ends: the causal order is the device's.)
        let blocking_calls = trace.meta.captures_blocking_calls();
        let mut records: Vec<&Record> = trace.records.iter().collect();
        records.sort_by_key(|r| r.submit_ns);
        for r in records {
            let op = plan.add(&mut dense, trace, r);
            let lanes = threads.entry(r.tid).or_default();
            let lane = match lanes.peek() {
                Some(&Reverse((end, lane))) if blocking_calls || end <= r.submit_ns => {
                    lanes.pop();
                    lane
                }
                _ => {
                    plan.lanes.push(Vec::new());
                    plan.lanes.len() - 1
                }
            };
            lanes.push(Reverse((r.end_ns(), lane)));
            plan.lanes[lane].push(op);
        }
        plan.threads = threads.len() as u64;
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(tid: u32, submit_ns: u64, latency_ns: u32) -> Record {
        Record {
            cpu: None,
            submit_ns,
            latency_ns,
            offset: submit_ns * 4096,
            len: 4096,
            file: 3,
            op: Op::Read as u8,
            tag: 0,
            tid,
        }
    }

    #[test]
    fn synchronous_threads_are_one_lane_each_and_overlap_makes_lanes() {
        let trace = TraceData {
            files: vec!["a".into(), "b".into(), "c".into(), "/db".into()],
            records: vec![
                rec(1, 0, 10),
                rec(2, 1, 10),
                rec(1, 10, 10), // after tid 1's first completed: same lane
                rec(2, 11, 10),
                // tid 0 (an import without threads): three overlapping, then one after all.
                rec(0, 100, 50),
                rec(0, 110, 50),
                rec(0, 120, 50),
                rec(0, 200, 5),
            ],
            ..TraceData::default()
        };
        let plan = Plan::build(&trace);
        assert_eq!(plan.files.len(), 1);
        assert_eq!(plan.files[0].trace_path, "/db");
        assert_eq!(plan.lanes.len(), 5);
        let sizes: Vec<usize> = plan.lanes.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![2, 2, 2, 1, 1]);
        assert_eq!(plan.lanes[0][1].submit_ns, 10);
        assert_eq!(plan.ops(), 8);
        assert_eq!(plan.threads, 3);
        assert_eq!(plan.files[0].extent_bytes, 201 * 4096);
    }

    #[test]
    fn a_blocking_call_capture_keeps_each_thread_one_lane() {
        // An emulated call's record ends at the device's modelled completion, which a thread
        // paying back lateness can pass before its next call: the same trace from a converter
        // would be read as overlapping I/O.
        let records = vec![
            rec(1, 0, 30),
            rec(1, 20, 30),
            rec(1, 45, 10),
            rec(2, 5, 100),
        ];
        let converted = TraceData {
            records: records.clone(),
            ..TraceData::default()
        };
        assert_eq!(Plan::build(&converted).lanes.len(), 3);
        let captured = TraceData {
            meta: crate::TraceMeta::new("shim"),
            records,
            ..TraceData::default()
        };
        let plan = Plan::build(&captured);
        assert_eq!(plan.lanes.len(), 2);
        let sizes: Vec<usize> = plan.lanes.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![3, 1]);
        // The records keep the device's ends, for the causal order.
        let ends: Vec<u64> = plan.lanes[0].iter().map(|o| o.end_ns).collect();
        assert_eq!(ends, vec![30, 50, 55]);
    }

    /// A read of `tid` on `cpu` at `submit_ns`, in file `file`.
    fn on(cpu: Option<u32>, submit_ns: u64, file: u16) -> Record {
        Record {
            cpu,
            file,
            ..rec(7, submit_ns, 1_000)
        }
    }

    /// Each stream's bunches as lists of submit times.
    fn bunches_of(plan: &Plan, s: usize) -> Vec<Vec<u64>> {
        (0..plan.bunches[s].len())
            .map(|b| {
                plan.lanes[s][plan.bunch(s, b)]
                    .iter()
                    .map(|o| o.submit_ns)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn bunches_are_cut_as_btrecord_cuts_them() {
        const MS: u64 = 1_000_000;
        let files = vec!["/db".to_string()];
        // CPU 0: ten I/Os 1 ms apart, then one exactly 10 ms after the next bunch's first, then
        // one 10 ms + 1 ns after that bunch's first. CPU 1: two I/Os 30 ms apart.
        let mut records: Vec<Record> = (0..10).map(|i| on(Some(0), i * MS, 0)).collect();
        records.push(on(Some(0), 18 * MS, 0)); // = 8 ms + 10 ms: joins the bunch of 8 ms
        records.push(on(Some(0), 28 * MS + 1, 0)); // > 18 ms's bunch start (8 ms) + 10 ms
        records.push(on(Some(1), 5 * MS, 0));
        records.push(on(Some(1), 35 * MS, 0));
        let trace = TraceData {
            files,
            records,
            ..TraceData::default()
        };
        let plan = Plan::build_btreplay(&trace, &Bunching::default());
        assert_eq!(plan.streams, vec![(Some(0), 0), (Some(1), 0)]);
        // At most 8 to a bunch; a later I/O within 10 ms of the bunch's first joins it.
        assert_eq!(
            bunches_of(&plan, 0),
            vec![
                (0..8).map(|i| i * MS).collect::<Vec<_>>(),
                vec![8 * MS, 9 * MS, 18 * MS],
                vec![28 * MS + 1],
            ]
        );
        assert_eq!(bunches_of(&plan, 1), vec![vec![5 * MS], vec![35 * MS]]);
        assert_eq!(plan.bunch_count(), 5);
        assert_eq!(plan.ops(), 14);
        // Smaller bunches and a shorter time, as btrecord's -M and -m give.
        let small = Bunching {
            max_time_ns: 2 * MS,
            max_ios: 2,
            ..Bunching::default()
        };
        let plan = Plan::build_btreplay(&trace, &small);
        let sizes: Vec<usize> = bunches_of(&plan, 0).iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![2, 2, 2, 2, 2, 1, 1]);
        // -M 1: every I/O its own bunch.
        let single = Bunching {
            max_ios: 1,
            ..Bunching::default()
        };
        assert_eq!(Plan::build_btreplay(&trace, &single).bunch_count(), 14);
    }

    #[test]
    fn streams_are_per_cpu_and_device_and_records_without_a_cpu_are_their_own() {
        let trace = TraceData {
            files: vec!["/data".into(), "/log".into()],
            // The log on layout device 1 (slot's top byte), the data on device 0.
            places: [
                (0, oltplab_devmodel::slot(0, 0)),
                (1, oltplab_devmodel::slot(1, 1)),
            ]
            .into(),
            records: vec![
                on(Some(3), 0, 0),
                on(Some(3), 1, 1),
                on(None, 2, 0),
                on(Some(3), 3, 0),
            ],
            ..TraceData::default()
        };
        let plan = Plan::build_btreplay(&trace, &Bunching::default());
        assert_eq!(plan.streams, vec![(Some(3), 0), (Some(3), 1), (None, 0)]);
        let sizes: Vec<usize> = plan.lanes.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![2, 1, 1]);
        assert_eq!(plan.threads, 1);
        require_cpus(&trace).unwrap();
        let old = TraceData {
            records: trace
                .records
                .iter()
                .map(|r| Record { cpu: None, ..*r })
                .collect(),
            ..trace
        };
        let e = require_cpus(&old).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn bunch_sizes_outside_btrecords_are_refused() {
        for bad in [
            Bunching {
                max_ios: 0,
                ..Bunching::default()
            },
            Bunching {
                max_ios: 513,
                ..Bunching::default()
            },
            Bunching {
                max_time_ns: 0,
                ..Bunching::default()
            },
            Bunching {
                iocbs: 0,
                ..Bunching::default()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
        Bunching {
            max_ios: 512,
            ..Bunching::default()
        }
        .check()
        .unwrap();
    }

    #[test]
    fn files_keep_the_runs_device_slot() {
        let trace = TraceData {
            files: vec!["a".into(), "b".into(), "c".into(), "/db".into()],
            places: [(3, 11)].into(),
            records: vec![rec(1, 0, 10)],
            ..TraceData::default()
        };
        let plan = Plan::build(&trace);
        assert_eq!((plan.files[0].trace_id, plan.files[0].device_slot), (3, 11));
        let unplaced = TraceData {
            places: Default::default(),
            ..trace
        };
        assert_eq!(Plan::build(&unplaced).files[0].device_slot, 3);
    }
}
