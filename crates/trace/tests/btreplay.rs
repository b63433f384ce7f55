//! `--order btreplay`: the CPU of each I/O in the trace, and btrecord's bunches replayed as
//! btreplay -N does, in virtual time on the device model and with io_uring on a real file.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use oltplab_devmodel::parse_spec;
use oltplab_trace::convert::{self, Format};
use oltplab_trace::replay::plan::Bunching;
use oltplab_trace::replay::sim::{replay_virtual, replay_virtual_with, ReplayOrder};
use oltplab_trace::replay::{replay_trace, ReplayOptions};
use oltplab_trace::{Op, Record, TraceData, TraceMeta, TraceReader, TraceWriter};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oltplab-btreplay-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A pseudo-random 16 KiB-aligned offset in the first GiB.
fn offset(i: u64) -> u64 {
    (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 65_536 * (16 << 10)
}

/// What an OLTP capture looks like to the replay: `threads` threads doing synchronous 16 KiB
/// I/O (a write in every `write_every`), each one at a time, spread over `cpus` CPUs.
fn synthetic(threads: u64, per_thread: u64, cpus: u32, write_every: u64) -> TraceData {
    let mut records = Vec::new();
    for t in 0..threads {
        for i in 0..per_thread {
            let n = t * per_thread + i;
            let op = if write_every > 0 && n.is_multiple_of(write_every) {
                Op::Write
            } else {
                Op::Read
            };
            records.push(Record {
                // 1 ms per call, back to back: one I/O in flight per thread.
                submit_ns: i * 1_000_000 + t * 1_000,
                latency_ns: 900_000,
                offset: offset(n),
                len: 16 << 10,
                file: 0,
                op: op as u8,
                tag: 0,
                tid: 100 + t as u32,
                cpu: Some((t % cpus as u64) as u32),
            });
        }
    }
    records.sort_by_key(|r| r.submit_ns);
    TraceData {
        meta: TraceMeta::new("shim"),
        files: vec!["/db/data".into()],
        records,
        complete: true,
        ..TraceData::default()
    }
}

#[test]
fn btreplay_gives_the_model_a_deeper_queue_and_at_least_lanes_iops() {
    // Reads and writes (one in five) on the HDD and PCIe flash, reads alone on all three. (On
    // sata-ssd-2010 a fifth of writes makes btreplay's deep queue slower than lanes: its reads
    // wait for the programs in progress on their die, and more programs are under way at once.)
    let mixed = synthetic(8, 500, 4, 5);
    let reads = synthetic(8, 500, 4, 0);
    for (t, device, at_least) in [
        (&mixed, "hdd-10k", 1.3),
        (&mixed, "pcie-flash-2012", 1.2),
        (&reads, "hdd-10k", 1.3),
        (&reads, "sata-ssd-2010", 1.1),
        // Saturated by 8 lanes already: the same IOPS, to the rounding of the last completion.
        (&reads, "pcie-flash-2012", 0.999),
    ] {
        let spec = parse_spec(device).unwrap();
        let lanes = replay_virtual(t, &spec, 1, ReplayOrder::Lanes).unwrap();
        let bt = replay_virtual(t, &spec, 1, ReplayOrder::Btreplay).unwrap();
        assert_eq!(bt.ops(), lanes.ops());
        assert_eq!(bt.order, ReplayOrder::Btreplay);
        // Lanes: at most one I/O per thread in flight.
        assert!(
            lanes.mean_in_flight <= 8.0 + 1e-9,
            "{device}: lanes {}",
            lanes.mean_in_flight
        );
        assert!(
            bt.mean_in_flight > 4.0 * lanes.mean_in_flight,
            "{device}: btreplay {} in flight, lanes {}",
            bt.mean_in_flight,
            lanes.mean_in_flight
        );
        assert!(
            bt.iops >= at_least * lanes.iops,
            "{device}: btreplay {} IOPS, lanes {}",
            bt.iops,
            lanes.iops
        );
        let b = bt.bunching.as_ref().unwrap();
        assert_eq!((b.streams, b.cpus, b.bunch_size, b.iocbs), (4, 4, 8, 512));
        // Each CPU's two threads issue 2 I/Os per ms: 8 to a bunch, 4 ms each.
        assert_eq!(b.bunches, 4 * 1000 / 8);
        assert!(lanes.bunching.is_none());
        let s = bt.summary();
        assert_eq!(s.order, "btreplay");
        assert_eq!(s.clock, "virtual");
        assert!(s.mean_in_flight > 0.0);
    }
}

#[test]
fn the_pool_of_control_blocks_bounds_what_a_stream_has_in_flight() {
    let t = synthetic(8, 300, 2, 0);
    let spec = parse_spec("hdd-10k").unwrap();
    let bunching = |iocbs| Bunching {
        iocbs,
        ..Bunching::default()
    };
    // Two streams of at most 2 each: never more than 4 at the drive.
    let two = replay_virtual_with(&t, &spec, 1, ReplayOrder::Btreplay, &bunching(2)).unwrap();
    assert!(two.mean_in_flight <= 4.0 + 1e-9, "{}", two.mean_in_flight);
    assert!(two.mean_in_flight > 3.0, "{}", two.mean_in_flight);
    let full = replay_virtual_with(&t, &spec, 1, ReplayOrder::Btreplay, &bunching(512)).unwrap();
    assert!(full.mean_in_flight > 100.0, "{}", full.mean_in_flight);
    // The drive reorders its queue: more queued, more done.
    assert!(full.iops > two.iops, "{} vs {}", full.iops, two.iops);
    // Bad sizes are refused.
    let e = replay_virtual_with(&t, &spec, 1, ReplayOrder::Btreplay, &bunching(0)).unwrap_err();
    assert_eq!(e.exit_code(), 2);
}

/// One sentence: no full stop followed by more text.
fn one_sentence(message: &str) -> bool {
    !message.trim_end_matches('.').contains(". ")
}

#[test]
fn a_trace_without_cpu_ids_is_refused_for_btreplay_in_one_sentence() {
    let mut t = synthetic(2, 10, 2, 0);
    for r in &mut t.records {
        r.cpu = None;
    }
    let spec = parse_spec("hdd-10k").unwrap();
    let e = replay_virtual(&t, &spec, 1, ReplayOrder::Btreplay).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let message = e.to_string();
    assert!(message.contains("no CPU ids"), "{message}");
    assert!(one_sentence(&message), "{message}");
    // The other orders do not need them.
    replay_virtual(&t, &spec, 1, ReplayOrder::Lanes).unwrap();
    // Nor does the real-time replay refuse later than it must: before any copy is made.
    let dir = scratch("refused");
    let opts = ReplayOptions {
        order: ReplayOrder::Btreplay,
        ..ReplayOptions::default()
    };
    let e = replay_trace(
        &t,
        &dir.join("copies"),
        &opts,
        &AtomicBool::new(false),
        |_| {},
    )
    .unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(!dir.join("copies").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_cpu_survives_capture_read_merge_and_conversion() {
    let dir = scratch("formats");
    // Captured: the writer stores each record's CPU (format version 2).
    let part = |name: &str, cpu: u32, at: u64| {
        let path = dir.join(name);
        let w = TraceWriter::create(&path, TraceMeta::new("shim")).unwrap();
        let f = w.file_id("/db/data");
        for i in 0..3u64 {
            w.record(Record {
                submit_ns: at + i,
                latency_ns: 10,
                offset: i * 4096,
                len: 4096,
                file: f,
                op: Op::Read as u8,
                tag: 0,
                tid: cpu + 1,
                cpu: Some(cpu),
            });
        }
        w.record(Record {
            cpu: None,
            ..Record {
                submit_ns: at + 9,
                latency_ns: 1,
                offset: 0,
                len: 0,
                file: f,
                op: Op::Fsync as u8,
                tag: 0,
                tid: cpu + 1,
                cpu: None,
            }
        });
        w.finish().unwrap();
        path
    };
    let a = part("a.trace", 2, 0);
    let b = part("b.trace", 5, 100);
    let reader = TraceReader::open(&a).unwrap();
    assert_eq!(reader.version(), oltplab_trace::format::VERSION);
    let read = reader.load().unwrap();
    let cpus: Vec<Option<u32>> = read.records.iter().map(|r| r.cpu).collect();
    assert_eq!(cpus, vec![Some(2), Some(2), Some(2), None]);
    assert_eq!(read.records_with_cpu(), 3);

    // Merged: each part's records keep their CPUs.
    let merged = dir.join("merged.trace");
    oltplab_trace::merge(&[a.clone(), b.clone()], &merged).unwrap();
    let m = TraceData::load(&merged).unwrap();
    let mut by_tid: Vec<(u32, Option<u32>)> = m.records.iter().map(|r| (r.tid, r.cpu)).collect();
    by_tid.sort();
    by_tid.dedup();
    assert_eq!(
        by_tid,
        vec![(3, None), (3, Some(2)), (6, None), (6, Some(5))]
    );

    // Converted to an oltplab trace again: kept. To a fio iolog and back: gone (the format has
    // no CPU), and btreplay says so.
    let again = dir.join("again.trace");
    convert::convert(&merged, None, Format::Oltplab, &again).unwrap();
    assert_eq!(TraceData::load(&again).unwrap().records, m.records);
    let iolog = dir.join("t.iolog");
    convert::convert(&merged, None, Format::FioIologV3, &iolog).unwrap();
    let (_, from_fio, _) = convert::import(&iolog, None).unwrap();
    assert_eq!(from_fio.records_with_cpu(), 0);
    let spec = parse_spec("hdd-10k").unwrap();
    assert!(replay_virtual(&from_fio, &spec, 1, ReplayOrder::Btreplay).is_err());

    // A trace without CPUs is written as version 1, which older builds read.
    let v1 = dir.join("v1.trace");
    from_fio.save(&v1).unwrap();
    assert_eq!(
        TraceReader::open(&v1).unwrap().version(),
        oltplab_trace::format::VERSION_WITHOUT_CPUS
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn blkparse_text_carries_the_cpu_of_each_request() {
    let dir = scratch("blkparse");
    let text = "\
  8,0    3        1     0.000000000   697  Q   R 1000 + 8 [db]
  8,0    3        2     0.000100000   697  C   R 1000 + 8 [0]
  8,0    1        3     0.000200000   698  Q   W 2000 + 16 [db]
  8,0    1        4     0.000300000   698  C   W 2000 + 16 [0]
";
    let path = dir.join("t.txt");
    std::fs::write(&path, text).unwrap();
    let (format, t, _) = convert::import(&path, None).unwrap();
    assert_eq!(format, Format::Blkparse);
    let cpus: Vec<Option<u32>> = t.records.iter().map(|r| r.cpu).collect();
    assert_eq!(cpus, vec![Some(3), Some(1)]);
    let bt = replay_virtual(
        &t,
        &parse_spec("hdd-10k").unwrap(),
        1,
        ReplayOrder::Btreplay,
    )
    .unwrap();
    assert_eq!(bt.bunching.unwrap().streams, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_real_time_btreplay_runs_each_cpus_bunches_through_io_uring() {
    if oltplab_io::engine::probe_io_uring().is_err() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Kernel,
            "io_uring is unavailable (old kernel, kernel.io_uring_disabled or seccomp)",
        );
        return;
    }
    let dir = scratch("real");
    let t = synthetic(4, 50, 2, 4);
    let opts = ReplayOptions {
        order: ReplayOrder::Btreplay,
        direct: false,
        ..ReplayOptions::default()
    };
    let o = replay_trace(
        &t,
        &dir.join("copies"),
        &opts,
        &AtomicBool::new(false),
        |_| {},
    )
    .unwrap();
    assert_eq!(o.ops(), 200);
    assert_eq!(o.counts.write, 50);
    assert_eq!(o.order, ReplayOrder::Btreplay);
    assert!(!o.virtual_clock);
    let b = o.bunching.as_ref().unwrap();
    assert_eq!((b.streams, b.cpus), (2, 2));
    assert!(o.mean_in_flight > 0.0);
    assert_eq!(o.summary().order, "btreplay");
    // Emulated: every I/O also waits for the model, and the pool bounds what is in flight.
    let spec = parse_spec("hdd-10k").unwrap();
    let opts = ReplayOptions {
        emulator: Some(std::sync::Arc::new(
            oltplab_devmodel::Emulator::new(&spec, 1).unwrap(),
        )),
        bunching: Bunching {
            iocbs: 4,
            ..Bunching::default()
        },
        ..opts
    };
    let o = replay_trace(
        &t,
        &dir.join("copies"),
        &opts,
        &AtomicBool::new(false),
        |_| {},
    )
    .unwrap();
    assert_eq!(o.ops(), 200);
    assert!(o.mean_in_flight <= 8.5, "{}", o.mean_in_flight);
    assert!(o.mean_in_flight > 2.0, "{}", o.mean_in_flight);
    // psync cannot submit asynchronously.
    let opts = ReplayOptions {
        engine: oltplab_io::EngineKind::Psync,
        ..ReplayOptions::default()
    };
    let opts = ReplayOptions {
        order: ReplayOrder::Btreplay,
        ..opts
    };
    let e = replay_trace(
        &t,
        &dir.join("copies"),
        &opts,
        &AtomicBool::new(false),
        |_| {},
    )
    .unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}
