//! Turns a trace into lanes: sequences of operations that the replay issues strictly one after
//! the other. A traced thread doing synchronous I/O is one lane. Operations of one thread that
//! overlapped in time (asynchronous I/O, or imported traces that carry no thread at all) are split
//! into as many lanes as were in flight at once, greedily: an operation joins a lane of its thread
//! whose previous operation had completed when it was submitted. So each thread's order is kept
//! wherever the trace shows an order, and the replay's concurrency is the trace's.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::reader::TraceData;
use crate::stat::OpCounts;
use crate::Op;

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
    pub lanes: Vec<Vec<PlanOp>>,
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
        let mut records: Vec<&crate::Record> = trace.records.iter().collect();
        records.sort_by_key(|r| r.submit_ns);
        for r in records {
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
            plan.lanes[lane].push(PlanOp {
                submit_ns: r.submit_ns,
                end_ns: r.end_ns(),
                offset: r.offset,
                len: r.len,
                file,
                op,
            });
        }
        plan.threads = threads.len() as u64;
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Record;

    fn rec(tid: u32, submit_ns: u64, latency_ns: u32) -> Record {
        Record {
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
