//! oltplab's I/O traces: what a database did to its files, one fixed 32-byte record per read, write
//! or sync, plus a file table and a little metadata.
//!
//! - [`TraceWriter`] captures (the SQLite VFS and the LD_PRELOAD shim write through it): per-thread
//!   buffers, one large positioned write per 64 KiB, no global lock per record.
//! - [`TraceReader`] reads and validates; a corrupt or truncated file is an error naming the byte.
//! - [`merge`] joins per-process parts into one time-sorted trace.
//! - [`stat`], [`convert`] (fio iolog v2/v3, blkparse text, MSR Cambridge CSV) and [`replay`].
//!
//! The on-disk layout is described in [`format`] and in `docs/trace.md`.

pub mod convert;
pub mod format;
pub mod merge;
pub mod reader;
pub mod replay;
pub mod stat;
pub mod writer;

pub use format::TraceMeta;
pub use merge::{merge, merge_filtered};
pub use reader::{TraceData, TraceReader};
pub use writer::{TraceSummary, TraceWriter};

/// What a database did to a file. The numbers are the on-disk encoding: never renumber.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// pread/preadv; `offset`, `len` are the request.
    Read = 0,
    /// pwrite/pwritev.
    Write = 1,
    /// fsync: `offset` and `len` are 0.
    Fsync = 2,
    /// fdatasync.
    Fdatasync = 3,
    /// sync_file_range over `offset`, `len` (replayed with SYNC_FILE_RANGE_WRITE).
    SyncRange = 4,
    /// Discard / hole punch over `offset`, `len` (blkparse discards, fio's `trim`).
    Trim = 5,
    /// ftruncate to `offset` bytes.
    Truncate = 6,
    /// fallocate of `offset`, `len` (mode 0).
    Fallocate = 7,
}

impl Op {
    pub const ALL: [Op; 8] = [
        Op::Read,
        Op::Write,
        Op::Fsync,
        Op::Fdatasync,
        Op::SyncRange,
        Op::Trim,
        Op::Truncate,
        Op::Fallocate,
    ];

    pub fn from_u8(value: u8) -> Option<Op> {
        Op::ALL.get(value as usize).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
            Op::SyncRange => "sync_range",
            Op::Trim => "trim",
            Op::Truncate => "truncate",
            Op::Fallocate => "fallocate",
        }
    }

    /// Reads and writes: the I/Os that IOPS counts.
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }

    /// fsync, fdatasync and sync_file_range.
    pub fn is_sync(self) -> bool {
        matches!(self, Op::Fsync | Op::Fdatasync | Op::SyncRange)
    }

    /// The bytes `[offset, offset + len)` this op addresses in its file, if any.
    pub fn touches_range(self) -> bool {
        matches!(
            self,
            Op::Read | Op::Write | Op::SyncRange | Op::Trim | Op::Fallocate
        )
    }
}

/// Transaction types a record's `tag` can name (`0` = none). The SQLite VFS and the shim stamp
/// I/O with these so that `trace stat` can say what a New-Order costs in I/O.
pub const TAG_NAMES: [&str; 6] = [
    "none",
    "new_order",
    "payment",
    "order_status",
    "delivery",
    "stock_level",
];

/// The brokerage workload's transaction types, tags 11 to 20.
pub const BROKERAGE_TAG_NAMES: [&str; 10] = [
    "broker_volume",
    "customer_position",
    "market_watch",
    "security_detail",
    "trade_lookup",
    "trade_order",
    "trade_status",
    "trade_update",
    "trade_result",
    "market_feed",
];

/// The first tag of [`BROKERAGE_TAG_NAMES`].
pub const BROKERAGE_FIRST_TAG: u8 = 11;

/// TATP's transaction types, tags 31 to 37.
pub const TATP_TAG_NAMES: [&str; 7] = [
    "get_subscriber_data",
    "get_new_destination",
    "get_access_data",
    "update_subscriber_data",
    "update_location",
    "insert_call_forwarding",
    "delete_call_forwarding",
];

/// The first tag of [`TATP_TAG_NAMES`].
pub const TATP_FIRST_TAG: u8 = 31;

/// `new_order` for 1, `trade_result` for 19, `tag7` for a tag without a name.
pub fn tag_name(tag: u8) -> String {
    let name = if tag >= TATP_FIRST_TAG {
        TATP_TAG_NAMES.get((tag - TATP_FIRST_TAG) as usize)
    } else if tag >= BROKERAGE_FIRST_TAG {
        BROKERAGE_TAG_NAMES.get((tag - BROKERAGE_FIRST_TAG) as usize)
    } else {
        TAG_NAMES.get(tag as usize)
    };
    name.map_or_else(|| format!("tag{tag}"), |s| s.to_string())
}

/// One traced operation, 32 bytes on disk (see [`format::RECORD_BYTES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// When the call started, in ns since the trace's start ([`TraceWriter::start_ns`]).
    pub submit_ns: u64,
    /// How long the call took; saturates at u32::MAX (4.3 s).
    pub latency_ns: u32,
    pub offset: u64,
    pub len: u32,
    /// Index into the trace's file table ([`TraceWriter::file_id`]).
    pub file: u16,
    /// An [`Op`] as its number (`Op::Write as u8`); see [`Record::kind`].
    pub op: u8,
    /// 0 none, 1..=5 a TPC-C transaction type ([`TAG_NAMES`]).
    pub tag: u8,
    /// Linux thread id of the caller (unique across processes, so merged parts keep it).
    pub tid: u32,
    /// The CPU the call was issued on (`sched_getcpu` at the call), as blktrace files a block
    /// request under the CPU that queued it; `None` where the source did not record it (traces of
    /// format version 1, fio iologs, MSR). `--order btreplay` bunches each CPU's I/O.
    pub cpu: Option<u32>,
}

impl Record {
    /// When the call returned, in ns since the trace's start; saturates for a hand-made record
    /// (readers and converters refuse records whose end does not fit).
    pub fn end_ns(&self) -> u64 {
        self.submit_ns.saturating_add(self.latency_ns as u64)
    }

    /// The first byte after `[offset, offset + len)`; saturates like [`Record::end_ns`].
    pub fn end_offset(&self) -> u64 {
        self.offset.saturating_add(self.len as u64)
    }

    /// Why no trace may hold this record — an unknown op, or a byte range or completion time past
    /// 2^64 — as a phrase for an error message; `None` if it is fine.
    pub fn defect(&self) -> Option<String> {
        if Op::from_u8(self.op).is_none() {
            return Some(format!("the record has the unknown op code {}", self.op));
        }
        if self.offset.checked_add(self.len as u64).is_none() {
            return Some(format!(
                "the record's offset {} + length {} overflows 64 bits",
                self.offset, self.len
            ));
        }
        if self.submit_ns.checked_add(self.latency_ns as u64).is_none() {
            return Some(format!(
                "the record's submit time {} ns + latency {} ns overflows 64 bits",
                self.submit_ns, self.latency_ns
            ));
        }
        None
    }

    /// The operation. Records from a [`TraceReader`] always hold a known op; an unknown number
    /// (only possible in a hand-made record) reads as `Read`.
    #[inline]
    pub fn kind(&self) -> Op {
        debug_assert!(Op::from_u8(self.op).is_some(), "unknown op {}", self.op);
        Op::from_u8(self.op).unwrap_or(Op::Read)
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the clock every trace's times are taken from, shared by all
/// processes of the machine (so parts of forked servers line up when merged).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into a timespec we own; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The CPU the calling thread runs on now, for [`Record::cpu`]: `sched_getcpu`, a vDSO call of a
/// few tens of ns; `None` if the kernel cannot say.
#[inline]
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok().filter(|&c| c != format::NO_CPU)
}

/// Linux thread id of the caller, for [`Record::tid`].
pub fn current_tid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
}
