//! Replay of synthetic traces: exact operation counts on both engines, direct and buffered,
//! timing kept or dropped, target safety, Ctrl-C.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::Duration;

use oltplab_io::EngineKind;
use oltplab_trace::replay::{replay, replay_trace, ReplayEvent, ReplayMode, ReplayOptions};
use oltplab_trace::stat::TraceStat;
use oltplab_trace::{Op, Record, TraceData, TraceMeta};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oltplab-replay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Four synchronous threads of a database: 16 KiB page reads and writes, 4,120-byte WAL frames,
/// syncs of every kind, a truncate and a fallocate; `span_ns` is the traced duration.
fn synthetic(span_ns: u64) -> TraceData {
    let mut records = Vec::new();
    let per_thread = 400u64;
    for tid in 0..4u32 {
        let mut t = tid as u64 * 1000;
        for i in 0..per_thread {
            let (op, file, offset, len) = match i % 20 {
                0..=9 => (
                    Op::Read,
                    0u16,
                    ((i * 7 + tid as u64 * 13) % 256) * 16384,
                    16384,
                ),
                10..=13 => (Op::Write, 0, ((i * 11) % 256) * 16384, 16384),
                14..=16 => (
                    Op::Write,
                    1,
                    32 + ((i + tid as u64 * per_thread) % 512) * 4120,
                    4120,
                ),
                17 => (Op::Fdatasync, 1, 0, 0),
                18 => match tid {
                    0 => (Op::Fsync, 0, 0, 0),
                    1 => (Op::SyncRange, 0, 0, 1 << 20),
                    2 => (Op::Fallocate, 2, 0, 65536),
                    _ => (Op::Truncate, 2, 65536, 0),
                },
                _ => (Op::Read, 2, (i % 16) * 4096, 4096),
            };
            let latency = 10_000;
            records.push(Record {
                submit_ns: t,
                latency_ns: latency,
                offset,
                len,
                file,
                op: op as u8,
                tag: 1,
                tid: 1000 + tid,
                cpu: None,
            });
            t += span_ns / per_thread;
        }
    }
    records.sort_by_key(|r| r.submit_ns);
    TraceData {
        meta: TraceMeta::new("test"),
        files: vec![
            "/db/main.db".into(),
            "/db/main.db-wal".into(),
            "/db/journal".into(),
        ],
        records,
        complete: true,
        ..TraceData::default()
    }
}

fn options(engine: EngineKind, direct: bool, mode: ReplayMode) -> ReplayOptions {
    ReplayOptions {
        mode,
        direct,
        engine,
        ..ReplayOptions::default()
    }
}

#[test]
fn replay_reproduces_operation_counts_exactly() {
    let dir = scratch("counts");
    let trace = synthetic(50_000_000);
    let want = TraceStat::compute(&trace);
    let stop = AtomicBool::new(false);
    for (engine, direct) in [
        (EngineKind::IoUring, true),
        (EngineKind::Psync, true),
        (EngineKind::IoUring, false),
    ] {
        let target = dir.join("target");
        let o = replay_trace(
            &trace,
            &target,
            &options(engine, direct, ReplayMode::AsFastAsPossible),
            &stop,
            |_| {},
        )
        .unwrap();
        let label = format!("{engine:?} direct={direct}");
        for op in Op::ALL {
            assert_eq!(o.counts.get(op), want.ops.get(op), "{label}: {op:?}");
        }
        assert_eq!(o.ops(), trace.records.len() as u64, "{label}");
        assert_eq!(o.read_bytes, want.read_bytes, "{label}");
        assert_eq!(o.written_bytes, want.written_bytes, "{label}");
        assert_eq!(o.short_ios, 0, "{label}");
        assert_eq!(o.lanes, 4, "one lane per synchronous thread");
        assert_eq!(o.read_latency.count(), want.ops.read);
        assert_eq!(o.write_latency.count(), want.ops.write);
        assert_eq!(o.sync_latency.count(), want.ops.syncs());
        assert!(!o.interrupted);
        // Only the WAL frames are unaligned.
        let wal_frames = trace.records.iter().filter(|r| r.len == 4120).count() as u64;
        assert_eq!(
            o.unaligned_ops,
            if direct { wal_frames } else { 0 },
            "{label}"
        );
        let s = o.summary();
        assert_eq!(s.ops, o.ops());
        assert!(
            (s.iops - (want.ops.read + want.ops.write) as f64 / o.elapsed.as_secs_f64()).abs()
                < 1e-6
        );
        let intervals: u64 = o.intervals.iter().map(|i| i.sync_ops).sum();
        assert_eq!(intervals, want.ops.syncs());
        // The copies live in the target, never at the traced paths.
        assert!(o.files.iter().all(|f| f.starts_with(&target)));
        assert!(o.files[1].ends_with("0001-main.db-wal"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn time_scale_keeps_the_traced_timing() {
    let dir = scratch("timing");
    let path = dir.join("t.trace");
    // 600 ms of traced time: the as-fast replay of its 1,600 I/Os (fsyncs among them) takes
    // 100–170 ms on a busy 2-core machine, well under half of it.
    synthetic(600_000_000).save(&path).unwrap();
    let stop = AtomicBool::new(false);
    let fast = replay(
        &path,
        &dir.join("t"),
        &options(EngineKind::IoUring, false, ReplayMode::AsFastAsPossible),
        &stop,
        |_| {},
    )
    .unwrap();
    let timed = replay(
        &path,
        &dir.join("t"),
        &options(EngineKind::IoUring, false, ReplayMode::TimeScale(1.0)),
        &stop,
        |_| {},
    )
    .unwrap();
    let half = replay(
        &path,
        &dir.join("t"),
        &options(EngineKind::Psync, false, ReplayMode::TimeScale(0.5)),
        &stop,
        |_| {},
    )
    .unwrap();
    assert!(
        timed.elapsed >= Duration::from_millis(595),
        "{:?}",
        timed.elapsed
    );
    assert!(
        half.elapsed >= Duration::from_millis(298) && half.elapsed < Duration::from_millis(560),
        "{:?}",
        half.elapsed
    );
    assert!(
        fast.elapsed < timed.elapsed / 2,
        "{:?} vs {:?}",
        fast.elapsed,
        timed.elapsed
    );
    assert_eq!(fast.ops(), timed.ops());
    let err = replay(
        &path,
        &dir.join("t"),
        &options(EngineKind::IoUring, false, ReplayMode::TimeScale(-1.0)),
        &stop,
        |_| {},
    )
    .unwrap_err();
    assert_eq!(err.exit_code(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn target_safety_reuse_and_ctrl_c() {
    let dir = scratch("safety");
    let trace = synthetic(10_000_000);
    let stop = AtomicBool::new(false);
    let opts = options(EngineKind::IoUring, false, ReplayMode::AsFastAsPossible);

    // A directory with someone's files is refused, and left alone.
    let theirs = dir.join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("main.db"), "precious").unwrap();
    let err = replay_trace(&trace, &theirs, &opts, &stop, |_| {})
        .err()
        .unwrap();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("--target"), "{err}");
    assert_eq!(
        std::fs::read_to_string(theirs.join("main.db")).unwrap(),
        "precious"
    );

    // First replay fills its copies; the second reuses them.
    let ours = dir.join("ours");
    let filled = Mutex::new(0u64);
    let on = |e: ReplayEvent| {
        if let ReplayEvent::Filling { done_bytes, .. } = e {
            *filled.lock().unwrap() = done_bytes;
        }
    };
    replay_trace(&trace, &ours, &opts, &stop, on).unwrap();
    assert!(*filled.lock().unwrap() >= 256 * 16384);
    *filled.lock().unwrap() = 0;
    replay_trace(&trace, &ours, &opts, &stop, on).unwrap();
    assert_eq!(
        *filled.lock().unwrap(),
        0,
        "copies are reused, not filled again"
    );

    // A foreign file slipped into our target is refused too.
    std::fs::write(ours.join("0003-other"), "x").unwrap();
    let mut more = trace.clone();
    more.files.push("/db/other".into());
    more.records.push(Record {
        file: 3,
        ..more.records[0]
    });
    let err = replay_trace(&more, &ours, &opts, &stop, |_| {})
        .err()
        .unwrap();
    assert!(err.to_string().contains("not created by oltplab"), "{err}");

    // Ctrl-C before the start: nothing replayed, and it says so.
    let stopped = AtomicBool::new(true);
    let o = replay_trace(&trace, &ours, &opts, &stopped, |_| {}).unwrap();
    assert!(o.interrupted);
    assert!(o.ops() < trace.records.len() as u64);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `n` reads of `len` bytes by one thread, each submitted before the previous completed: the
/// plan gives each its own lane.
fn overlapping(n: u64, len: u32) -> TraceData {
    TraceData {
        meta: TraceMeta::new("test"),
        files: vec!["/db/main.db".into()],
        records: (0..n)
            .map(|i| Record {
                submit_ns: i,
                latency_ns: 1_000_000_000,
                offset: 0,
                len,
                file: 0,
                op: Op::Read as u8,
                tag: 0,
                tid: 0,
                cpu: None,
            })
            .collect(),
        complete: true,
        ..TraceData::default()
    }
}

/// A hostile trace is refused before any copy is filled or buffer allocated: one I/O larger than
/// a replay buffers (it filled a copy and allocated a buffer of that size — 4 GiB for a length of
/// u32::MAX), more lanes than psync runs threads (it started one thread per lane, without bound),
/// and more buffer memory than a replay allocates in all.
#[test]
fn hostile_traces_are_refused_before_anything_is_allocated() {
    let dir = scratch("limits");
    let stop = AtomicBool::new(false);
    let target = dir.join("target");
    let refuse = |trace: &TraceData, engine: EngineKind| -> String {
        let opts = options(engine, false, ReplayMode::AsFastAsPossible);
        let err =
            replay_trace(trace, &target, &opts, &stop, |_| {}).expect_err("the replay was refused");
        assert_eq!(err.exit_code(), 2, "{err}");
        assert!(
            !target.join("0000-main.db").exists(),
            "no copy was filled: {err}"
        );
        err.to_string()
    };

    let mut big = overlapping(3, 4096);
    big.records[1].len = 256 << 20;
    let e = refuse(&big, EngineKind::Psync);
    assert!(
        e.contains("record 2") && e.contains("268435456") && e.contains("64 MiB"),
        "{e}"
    );

    let e = refuse(&overlapping(1025, 4096), EngineKind::Psync);
    assert!(e.contains("1025 lanes") && e.contains("1024"), "{e}");

    let e = refuse(&overlapping(64, 32 << 20), EngineKind::IoUring);
    assert!(e.contains("64 lanes") && e.contains("1 GiB"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A traced gap (or a crafted time years away) does not outlast Ctrl-C: a paced replay stops
/// waiting when asked (it slept until the record's time, here an hour).
#[test]
fn ctrl_c_ends_a_paced_wait() {
    let dir = scratch("paced-stop");
    let mut trace = overlapping(2, 4096);
    trace.records[0].latency_ns = 1000;
    trace.records[1].submit_ns = 3_600_000_000_000;
    for engine in [EngineKind::IoUring, EngineKind::Psync] {
        let stop = AtomicBool::new(false);
        let opts = options(engine, false, ReplayMode::TimeScale(1.0));
        let started = std::time::Instant::now();
        let o = std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(300));
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            replay_trace(&trace, &dir.join("t"), &opts, &stop, |_| {}).unwrap()
        });
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{engine:?}: {:?}",
            started.elapsed()
        );
        assert!(o.interrupted, "{engine:?}");
        assert_eq!(o.ops(), 1, "{engine:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
