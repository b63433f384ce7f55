//! The trace file: capture from many threads, validation of damaged files, crash prefixes, merge.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use oltplab_trace::format::{self, ChunkKind, TableExtent, HEADER_BYTES, RECORD_BYTES};
use oltplab_trace::writer::RECORDS_PER_CHUNK;
use oltplab_trace::{merge, Op, Record, TraceData, TraceMeta, TraceReader, TraceWriter};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oltplab-trace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rec(submit_ns: u64, op: Op, offset: u64, len: u32, file: u16, tid: u32) -> Record {
    Record {
        submit_ns,
        latency_ns: 1000,
        offset,
        len,
        file,
        op: op as u8,
        tag: (tid % 6) as u8,
        tid,
        cpu: None,
    }
}

#[test]
fn writer_from_many_threads_loses_nothing() {
    let dir = scratch("threads");
    let path = dir.join("t.trace");
    let writer = Arc::new(TraceWriter::create(&path, TraceMeta::new("test")).unwrap());
    const THREADS: u32 = 8;
    // Not a multiple of the chunk size, so every thread ends with a partly filled buffer.
    const PER_THREAD: u64 = 3 * RECORDS_PER_CHUNK as u64 + 123;
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let writer = &writer;
            s.spawn(move || {
                // Every thread registers the shared file and one of its own.
                let shared = writer.file_id("/db/main.db");
                let own = writer.file_id(&format!("/db/part{t}"));
                for i in 0..PER_THREAD {
                    let file = if i % 2 == 0 { shared } else { own };
                    writer.record(rec(writer.now_ns(), Op::Write, i, 4096, file, t + 1));
                }
            });
        }
    });
    let writer = Arc::into_inner(writer).unwrap();
    let summary = writer.finish().unwrap();
    assert_eq!(summary.records, THREADS as u64 * PER_THREAD);
    assert_eq!(summary.dropped_records, 0);
    assert_eq!(summary.files, THREADS as u64 + 1);

    let reader = TraceReader::open(&path).unwrap();
    assert!(reader.is_complete());
    assert_eq!(reader.record_count(), THREADS as u64 * PER_THREAD);
    assert_eq!(reader.meta().source, "test");
    let mut seen = HashSet::new();
    reader
        .for_each(|r| {
            assert!(seen.insert((r.tid, r.offset)), "duplicate {r:?}");
            let path = reader.file_path(r.file).unwrap();
            if r.offset % 2 == 0 {
                assert_eq!(path, "/db/main.db");
            } else {
                assert_eq!(path, format!("/db/part{}", r.tid - 1));
            }
        })
        .unwrap();
    assert_eq!(seen.len() as u64, THREADS as u64 * PER_THREAD);
    // Records after finish are counted, not written.
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn placement_is_recorded_once_per_file_and_read_back() {
    let dir = scratch("places");
    let path = dir.join("t.trace");
    let writer = TraceWriter::create(&path, TraceMeta::new("test")).unwrap();
    // A server process first does I/O on its WAL, which the emulator had numbered 5.
    let wal = writer.placed_file_id("/pg/wal", 5);
    let rel = writer.placed_file_id("/pg/base/1", 2);
    assert_eq!(writer.placed_file_id("/pg/wal", 5), wal, "registered once");
    let plain = writer.file_id("/imported");
    writer.record(rec(1, Op::Write, 0, 8192, wal, 1));
    writer.record(rec(2, Op::Read, 0, 8192, rel, 1));
    writer.record(rec(3, Op::Read, 0, 8192, plain, 1));
    writer.finish().unwrap();
    let t = TraceData::load(&path).unwrap();
    assert_eq!((wal, rel, plain), (0, 1, 2));
    assert_eq!(t.places, [(0, 5), (1, 2)].into());
    assert_eq!(
        (t.device_slot(wal), t.device_slot(rel), t.device_slot(plain)),
        (5, 2, 2),
        "a file without a recorded place is placed by its id"
    );
    // And a saved copy keeps it, with the table map a capture adds after the run: the WAL whole,
    // the relation file in two extents.
    let mut t = t;
    t.tables = vec![
        TableExtent {
            file: wal,
            from_bytes: 0,
            table: "(wal)".into(),
        },
        TableExtent {
            file: rel,
            from_bytes: 0,
            table: "item".into(),
        },
        TableExtent {
            file: rel,
            from_bytes: 16384,
            table: "stock".into(),
        },
    ];
    let copy = dir.join("copy.trace");
    t.save(&copy).unwrap();
    let back = TraceData::load(&copy).unwrap();
    assert_eq!((&back.places, &back.tables), (&t.places, &t.tables));
    // Saved over an existing trace through a file beside it, renamed over it.
    t.save(&copy).unwrap();
    assert_eq!(TraceData::load(&copy).unwrap(), back);
    assert!(!dir.join("copy.trace.oltplab-partial").exists());
    assert_eq!(back.table_of(wal, 1 << 30), Some("(wal)"));
    assert_eq!(back.table_of(rel, 16383), Some("item"));
    assert_eq!(back.table_of(rel, 16384), Some("stock"));
    assert_eq!(
        back.table_of(plain, 0),
        None,
        "a file the map does not cover"
    );
    let by_table = oltplab_trace::stat::io_by_table(&back, 1_000);
    let names: Vec<(&str, u64, u64)> = by_table
        .iter()
        .map(|g| (g.name.as_str(), g.reads, g.writes))
        .collect();
    assert_eq!(
        names,
        [("(other files)", 1, 0), ("(wal)", 0, 1), ("item", 1, 0)]
    );
    // A map naming a file the trace lacks is refused before anything is written.
    t.tables.push(TableExtent {
        file: 9,
        from_bytes: 0,
        table: "x".into(),
    });
    let bad = dir.join("bad.trace");
    let err = t.save(&bad).unwrap_err();
    assert!(err.to_string().contains("table map names file 9"), "{err}");
    assert!(!bad.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn records_after_close_are_dropped_and_counted() {
    let dir = scratch("close");
    let path = dir.join("t.trace");
    let writer = TraceWriter::create(&path, TraceMeta::new("test")).unwrap();
    let f = writer.file_id("/x");
    writer.record(rec(1, Op::Read, 0, 512, f, 1));
    let first = writer.close().unwrap();
    writer.record(rec(2, Op::Read, 0, 512, f, 1));
    let again = writer.finish().unwrap();
    assert_eq!(first.records, 1);
    assert_eq!(again, first, "close is idempotent");
    assert_eq!(TraceReader::open(&path).unwrap().record_count(), 1);
    // An unknown op is dropped and counted rather than making the trace unreadable.
    let other = TraceWriter::create(&dir.join("u.trace"), TraceMeta::new("test")).unwrap();
    let g = other.file_id("/y");
    other.record(Record {
        op: 99,
        ..rec(1, Op::Read, 0, 512, g, 1)
    });
    other.record(rec(2, Op::Read, 0, 512, g, 1));
    let s = other.finish().unwrap();
    assert_eq!((s.records, s.dropped_records), (1, 1));
    assert_eq!(
        TraceReader::open(&dir.join("u.trace"))
            .unwrap()
            .record_count(),
        1
    );
    let err = TraceWriter::create(&path, TraceMeta::new("test"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("already exists"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One thread recording into two live writers in turn: each record lands in its own writer's file
/// (the per-thread fast path remembers one writer's buffer at a time).
#[test]
fn one_thread_alternating_between_two_writers() {
    let dir = scratch("two-writers");
    let (a, b) = (dir.join("a.trace"), dir.join("b.trace"));
    let wa = TraceWriter::create(&a, TraceMeta::new("test")).unwrap();
    let wb = TraceWriter::create(&b, TraceMeta::new("test")).unwrap();
    let (fa, fb) = (wa.file_id("/a"), wb.file_id("/b"));
    for i in 0..3 * RECORDS_PER_CHUNK as u64 {
        wa.record(rec(i, Op::Read, i * 4096, 4096, fa, 1));
        if i % 3 == 0 {
            wb.record(rec(i, Op::Write, i * 8192, 8192, fb, 2));
        }
    }
    let (sa, sb) = (wa.finish().unwrap(), wb.finish().unwrap());
    assert_eq!(
        (sa.records, sa.dropped_records),
        (3 * RECORDS_PER_CHUNK as u64, 0)
    );
    assert_eq!(
        (sb.records, sb.dropped_records),
        (RECORDS_PER_CHUNK as u64, 0)
    );
    for (path, op, len) in [(&a, Op::Read as u8, 4096), (&b, Op::Write as u8, 8192)] {
        let records = TraceReader::open(path).unwrap().read_sorted().unwrap();
        assert!(
            records.iter().all(|r| r.op == op && r.len == len),
            "{path:?}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_crashed_capture_leaves_a_readable_prefix() {
    let dir = scratch("crash");
    let path = dir.join("t.trace");
    let writer = TraceWriter::create(&path, TraceMeta::new("test")).unwrap();
    let f = writer.file_id("/db");
    for i in 0..RECORDS_PER_CHUNK as u64 + 10 {
        writer.record(rec(i, Op::Read, i * 4096, 4096, f, 7));
    }
    // The process dies: no finish, the last 10 records never leave their buffer.
    std::mem::forget(writer);
    let reader = TraceReader::open(&path).unwrap();
    assert!(!reader.is_complete());
    assert_eq!(reader.record_count(), RECORDS_PER_CHUNK as u64);
    // A torn last write (half a chunk) does not hide the prefix either.
    let good = std::fs::metadata(&path).unwrap().len();
    let torn = format::chunk(ChunkKind::Records, &[1u8; 4 * RECORD_BYTES]);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&torn[..40]);
    std::fs::write(&path, &bytes).unwrap();
    let reader = TraceReader::open(&path).unwrap();
    assert_eq!(reader.record_count(), RECORDS_PER_CHUNK as u64);
    assert_eq!(reader.readable_bytes(), good);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn small_trace(path: &std::path::Path) -> TraceData {
    let data = TraceData {
        meta: TraceMeta::new("test"),
        start_ns: 1_000,
        start_unix_ns: 2_000,
        files: vec!["/db/a".into(), "/db/b".into()],
        places: Default::default(),
        tables: Vec::new(),
        records: (0..5000u64)
            .map(|i| {
                rec(
                    i * 10,
                    if i % 3 == 0 { Op::Write } else { Op::Read },
                    i * 8192,
                    8192,
                    (i % 2) as u16,
                    3,
                )
            })
            .collect(),
        complete: true,
    };
    data.save(path).unwrap();
    data
}

#[test]
fn damage_is_reported_with_its_byte_offset() {
    let dir = scratch("corrupt");
    let path = dir.join("t.trace");
    let data = small_trace(&path);
    assert_eq!(TraceData::load(&path).unwrap(), data);
    let good = std::fs::read(&path).unwrap();

    // Truncated: the header knows the length.
    std::fs::write(&path, &good[..good.len() - 100]).unwrap();
    let err = TraceReader::open(&path).unwrap_err().to_string();
    assert!(
        err.contains("truncated") && err.contains(&format!("byte {}", good.len() - 100)),
        "{err}"
    );

    // A flipped bit inside the second records chunk: its checksum fails; the error names where
    // that chunk starts.
    let chunk_bytes = format::CHUNK_HEADER_BYTES + RECORDS_PER_CHUNK * RECORD_BYTES;
    let meta_len = u32::from_le_bytes(
        good[HEADER_BYTES + 8..HEADER_BYTES + 12]
            .try_into()
            .unwrap(),
    ) as usize;
    let first_records = HEADER_BYTES + format::CHUNK_HEADER_BYTES + meta_len;
    let files_len = u32::from_le_bytes(
        good[first_records + 8..first_records + 12]
            .try_into()
            .unwrap(),
    ) as usize;
    let records_at = first_records + format::CHUNK_HEADER_BYTES + files_len;
    let second = records_at + chunk_bytes;
    let mut bad = good.clone();
    bad[second + 100] ^= 0x40;
    std::fs::write(&path, &bad).unwrap();
    let err = TraceReader::open(&path).unwrap_err().to_string();
    assert!(
        err.contains(&format!("at byte {second}")) && err.contains("checksum"),
        "{err}"
    );

    // A damaged header.
    let mut bad = good.clone();
    bad[20] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    let err = TraceReader::open(&path).unwrap_err().to_string();
    assert!(
        err.contains("at byte 0") && err.contains("header checksum"),
        "{err}"
    );

    // Not a trace at all.
    std::fs::write(&path, b"fio version 3 iolog\n").unwrap();
    let err = TraceReader::open(&path).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("magic"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_record_with_a_valid_checksum_but_an_unknown_op_is_named_by_offset() {
    let dir = scratch("badop");
    let path = dir.join("t.trace");
    small_trace(&path);
    let good = std::fs::read(&path).unwrap();
    // Append a well-formed chunk holding one record with op 42, and fix up the header.
    let mut record = [0u8; RECORD_BYTES];
    format::encode_record(&rec(5, Op::Read, 0, 4096, 0, 1), &mut record);
    record[30] = 42;
    let chunk = format::chunk(ChunkKind::Records, &record);
    let mut bytes = good.clone();
    let at = bytes.len() + format::CHUNK_HEADER_BYTES;
    bytes.extend_from_slice(&chunk);
    let header = format::Header::decode(&good).unwrap();
    let header = format::Header {
        records: header.records + 1,
        end_bytes: bytes.len() as u64,
        ..header
    };
    bytes[..HEADER_BYTES].copy_from_slice(&header.encode());
    std::fs::write(&path, &bytes).unwrap();
    let err = TraceReader::open(&path).unwrap_err().to_string();
    assert!(
        err.contains(&format!("at byte {at}")) && err.contains("op code 42"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merge_unifies_files_and_clocks() {
    let dir = scratch("merge");
    let a = TraceData {
        meta: TraceMeta {
            pid: Some(10),
            ..TraceMeta::new("shim")
        },
        start_ns: 1_000_000,
        files: vec!["/pg/base/1".into(), "/pg/wal/0001".into()],
        // The run's emulator put the relation at slot 4 and the WAL at slot 9.
        places: [(0, 4), (1, 9)].into(),
        tables: vec![TableExtent {
            file: 0,
            from_bytes: 0,
            table: "stock".into(),
        }],
        records: vec![
            rec(0, Op::Read, 0, 8192, 0, 10),
            rec(500, Op::Write, 0, 8192, 1, 10),
        ],
        complete: true,
        ..TraceData::default()
    };
    // Started 100 ns later, knows the WAL file under another id.
    let b = TraceData {
        meta: TraceMeta {
            pid: Some(11),
            ..TraceMeta::new("shim")
        },
        start_ns: 1_000_100,
        files: vec!["/pg/wal/0001".into()],
        places: [(0, 9)].into(),
        tables: vec![TableExtent {
            file: 0,
            from_bytes: 0,
            table: "(wal)".into(),
        }],
        records: vec![
            rec(0, Op::Fdatasync, 0, 0, 0, 11),
            rec(900, Op::Write, 8192, 8192, 0, 11),
        ],
        complete: true,
        ..TraceData::default()
    };
    let (pa, pb, out) = (dir.join("a"), dir.join("b"), dir.join("merged.trace"));
    a.save(&pa).unwrap();
    b.save(&pb).unwrap();
    let summary = merge(&[pa, pb], &out).unwrap();
    assert_eq!(summary.records, 4);
    let m = TraceData::load(&out).unwrap();
    assert_eq!(
        m.files,
        vec!["/pg/base/1".to_string(), "/pg/wal/0001".to_string()]
    );
    assert_eq!(
        m.places,
        [(0, 4), (1, 9)].into(),
        "placement survives the merge"
    );
    assert_eq!((m.device_slot(0), m.device_slot(1)), (4, 9));
    assert_eq!(
        (m.table_of(0, 0), m.table_of(1, 8192)),
        (Some("stock"), Some("(wal)")),
        "the table map survives the merge, under the merged ids"
    );
    assert_eq!(m.start_ns, 1_000_000);
    let times: Vec<(u64, u32, u16)> = m
        .records
        .iter()
        .map(|r| (r.submit_ns, r.tid, r.file))
        .collect();
    assert_eq!(
        times,
        vec![(0, 10, 0), (100, 11, 1), (500, 10, 1), (1000, 11, 1)]
    );
    assert_eq!(m.meta.extra["pids"], "10,11");

    // Cut to a window starting at 1_000_100 and ending before 1_001_000, tagging thread 11.
    let cut = dir.join("cut.trace");
    let summary = oltplab_trace::merge_filtered(
        &[dir.join("a"), dir.join("b")],
        &cut,
        1_000_100,
        |r, at_ns| {
            if r.tid == 11 {
                r.tag = 1;
            }
            at_ns < 1_001_000
        },
    )
    .unwrap();
    assert_eq!(summary.records, 2);
    let c = TraceData::load(&cut).unwrap();
    assert_eq!(c.start_ns, 1_000_100, "the window's start is the trace's");
    let kept: Vec<(u64, u32, u8)> = c
        .records
        .iter()
        .map(|r| (r.submit_ns, r.tid, r.tag))
        .collect();
    // Thread 10's record keeps the tag it had (`rec` gives 4).
    assert_eq!(kept, vec![(0, 11, 1), (400, 10, 4)]);

    // A foreign file is never overwritten by a merge.
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    assert!(merge(&[dir.join("a")], &dir.join("notes.txt")).is_err());
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
