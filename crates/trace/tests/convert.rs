//! Round trips through every converter: a synthetic trace is written in the format (by
//! oltplab's exporter, or by the writer of that tool's layout below), read back, and compared
//! field by field with what the format can carry.

use std::fmt::Write as _;
use std::path::PathBuf;

use oltplab_trace::convert::{self, Format};
use oltplab_trace::{Op, Record, TraceData, TraceMeta};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oltplab-convert-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A mixed trace: reads and writes of odd sizes, syncs, a few ops fio cannot express.
fn synthetic() -> TraceData {
    let mut records = Vec::new();
    let mut t = 0u64;
    for i in 0..3000u64 {
        t += 1_000 + (i * 7919) % 50_000;
        let (op, offset, len) = match i % 10 {
            0..=4 => (Op::Read, (i * 7919 % 5000) * 4096, 4096),
            5..=7 => (Op::Write, 32 + i * 4120, 4120),
            8 => (Op::Fdatasync, 0, 0),
            _ => (Op::Fsync, 0, 0),
        };
        records.push(Record {
            submit_ns: t * 1000, // whole µs, which fio's iolog keeps exactly
            latency_ns: 20_000 + (i % 13) as u32 * 1000,
            offset,
            len,
            file: (i % 3) as u16,
            op: op as u8,
            tag: (i % 6) as u8,
            tid: 100 + (i % 4) as u32,
            cpu: None,
        });
    }
    TraceData {
        meta: TraceMeta::new("test"),
        start_ns: 0,
        start_unix_ns: 0,
        files: vec![
            "/data/tpcc.db".into(),
            "/data/tpcc.db-wal".into(),
            "/data/tpcc.db-shm".into(),
        ],
        records,
        complete: true,
        ..TraceData::default()
    }
}

type Key = (u64, String, Op, u64, u32);

/// What the iolog carries of a record: time, file name, op, offset, length.
fn key(t: &TraceData, r: &Record) -> Key {
    let (offset, len) = if r.kind().is_sync() {
        (0, 0)
    } else {
        (r.offset, r.len)
    };
    (
        r.submit_ns,
        t.files[r.file as usize].clone(),
        r.kind(),
        offset,
        len,
    )
}

#[test]
fn oltplab_to_fio_v3_and_back() {
    let dir = scratch("v3");
    let original = synthetic();
    let mut with_extras = original.clone();
    // Ops fio cannot express are skipped and counted.
    with_extras.records.push(Record {
        submit_ns: 4_000_000_000_000,
        op: Op::Truncate as u8,
        offset: 8192,
        len: 0,
        ..original.records[0]
    });
    with_extras.records.push(Record {
        submit_ns: 4_000_000_001_000,
        op: Op::SyncRange as u8,
        offset: 0,
        len: 4096,
        ..original.records[0]
    });
    let src = dir.join("in.trace");
    with_extras.save(&src).unwrap();
    let iolog = dir.join("out.iolog");
    let s = convert::convert(&src, None, Format::FioIologV3, &iolog).unwrap();
    assert_eq!(s.from, "oltplab");
    assert_eq!(s.records_out, original.records.len() as u64 + 1);
    assert_eq!(s.skipped, vec![("truncate".to_string(), 1)]);
    let text = std::fs::read_to_string(&iolog).unwrap();
    assert!(
        text.starts_with("fio version 3 iolog\n0 /data/tpcc.db add\n0 /data/tpcc.db open\n"),
        "{}",
        &text[..200]
    );
    assert!(
        text.contains(" /data/tpcc.db-shm write 20632 4120\n"),
        "odd sizes are kept exactly"
    );

    let back_path = dir.join("back.trace");
    let s = convert::convert(&iolog, None, Format::Oltplab, &back_path).unwrap();
    assert_eq!(s.from, "fio-iolog-v3");
    let back = TraceData::load(&back_path).unwrap();
    let want: Vec<Key> = original.records.iter().map(|r| key(&original, r)).collect();
    let got: Vec<Key> = back
        .records
        .iter()
        .take(original.records.len())
        .map(|r| key(&back, r))
        .collect();
    assert_eq!(got, want);
    // sync_file_range comes back as the fdatasync it was exported as.
    assert_eq!(back.records.last().unwrap().kind(), Op::Fdatasync);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fio_v2_with_waits() {
    let dir = scratch("v2");
    let original = synthetic();
    // fio's v2 layout: no timestamps, `wait` lines (µs) between I/Os.
    let mut text = String::from("fio version 2 iolog\n");
    for f in &original.files {
        writeln!(text, "{f} add\n{f} open").unwrap();
    }
    let mut last_us = 0;
    for r in &original.records {
        let us = r.submit_ns / 1000;
        if us > last_us {
            writeln!(text, "{} wait {} 0", original.files[0], us - last_us).unwrap();
            last_us = us;
        }
        let action = match r.kind() {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "sync",
            _ => "datasync",
        };
        let (offset, len) = if r.kind().is_sync() {
            (0, 0)
        } else {
            (r.offset, r.len)
        };
        writeln!(
            text,
            "{} {action} {offset} {len}",
            original.files[r.file as usize]
        )
        .unwrap();
    }
    for f in &original.files {
        writeln!(text, "{f} close").unwrap();
    }
    let path = dir.join("v2.iolog");
    std::fs::write(&path, text).unwrap();
    assert_eq!(convert::detect(&path).unwrap(), Format::FioIologV2);
    let (_, back, _) = convert::import(&path, None).unwrap();
    let want: Vec<Key> = original.records.iter().map(|r| key(&original, r)).collect();
    let got: Vec<Key> = back.records.iter().map(|r| key(&back, r)).collect();
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn blkparse_text() {
    let dir = scratch("blk");
    // A device trace: sector-aligned I/O on two devices, issue (D) and completion (C) events,
    // queue (Q) events that must not count twice, a flush, and blkparse's closing summary.
    let mut records = Vec::new();
    for i in 0..500u64 {
        let op = match i % 7 {
            0 => Op::Fsync,
            1 | 2 => Op::Write,
            _ => Op::Read,
        };
        let (offset, len) = if op == Op::Fsync {
            (0, 0)
        } else {
            ((i * 37 % 1000) * 4096, 8192)
        };
        records.push(Record {
            submit_ns: 1_000_000 + i * 250_000,
            latency_ns: 100_000 + (i % 5) as u32 * 10_000,
            offset,
            len,
            file: (i % 2) as u16,
            op: op as u8,
            tag: 0,
            tid: 4000 + (i % 3) as u32,
            cpu: None,
        });
    }
    let devs = ["8,0", "259,1"];
    let secs = |ns: u64| format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    let mut events: Vec<(u64, String)> = Vec::new();
    for (seq, r) in records.iter().enumerate() {
        let dev = devs[r.file as usize];
        let rwbs = match r.kind() {
            Op::Read => "R",
            Op::Write => "WS",
            _ => "FN",
        };
        let range = if r.kind() == Op::Fsync {
            String::new()
        } else {
            format!("{} + {} ", r.offset / 512, r.len / 512)
        };
        let pid = r.tid;
        events.push((
            r.submit_ns - 500,
            format!(
                "{dev:>5} 1 {seq:>8} {:>14} {pid:>5}  Q {rwbs:>3} {range}[postgres]",
                secs(r.submit_ns - 500)
            ),
        ));
        events.push((
            r.submit_ns,
            format!(
                "{dev:>5} 1 {seq:>8} {:>14} {pid:>5}  D {rwbs:>3} {range}[postgres]",
                secs(r.submit_ns)
            ),
        ));
        events.push((
            r.end_ns(),
            format!(
                "{dev:>5} 0 {seq:>8} {:>14}     0  C {rwbs:>3} {range}[0]",
                secs(r.end_ns())
            ),
        ));
    }
    events.sort_by_key(|e| e.0);
    let mut text: String = events.into_iter().map(|e| e.1 + "\n").collect();
    text.push_str("CPU0 (8,0):\n Reads Queued:         357,     2856KiB\n\nTotal (8,0):\nThroughput (R/W): 1000KiB/s / 200KiB/s\nEvents (8,0): 1500 entries\n");
    let path = dir.join("trace.txt");
    std::fs::write(&path, text).unwrap();
    assert_eq!(convert::detect(&path).unwrap(), Format::Blkparse);
    let (_, back, ignored) = convert::import(&path, None).unwrap();
    assert!(ignored >= 5);
    assert_eq!(back.files, vec!["8,0".to_string(), "259,1".to_string()]);
    assert_eq!(back.records.len(), records.len());
    for (want, got) in records.iter().zip(&back.records) {
        assert_eq!(
            (
                got.submit_ns,
                got.latency_ns,
                got.kind(),
                got.offset,
                got.len,
                got.tid,
                back.files[got.file as usize].as_str()
            ),
            (
                want.submit_ns,
                want.latency_ns,
                want.kind(),
                want.offset,
                want.len,
                want.tid,
                devs[want.file as usize]
            ),
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn msr_cambridge_csv() {
    let dir = scratch("msr");
    let t0: u64 = 128_166_372_003_061_629;
    let mut text = String::new();
    let mut want = Vec::new();
    for i in 0..400u64 {
        let (host, disk) = if i % 4 == 0 { ("wdev", 0) } else { ("src1", 2) };
        let op = if i % 3 == 0 { "Write" } else { "Read" };
        let offset = (i * 104_729 % 100_000) * 512;
        let size = 512 * (1 + i % 16);
        let ticks = t0 + i * 1234;
        let resp = 100 + i % 1000;
        writeln!(text, "{ticks},{host},{disk},{op},{offset},{size},{resp}").unwrap();
        want.push((
            i * 1234 * 100,
            resp as u32 * 100,
            if op == "Read" { Op::Read } else { Op::Write },
            offset,
            size as u32,
            format!("{host}_{disk}"),
        ));
    }
    let path = dir.join("wdev_0.csv");
    std::fs::write(&path, text).unwrap();
    let out = dir.join("msr.trace");
    let s = convert::convert(&path, None, Format::Oltplab, &out).unwrap();
    assert_eq!(s.from, "msr-csv");
    let back = TraceData::load(&out).unwrap();
    let got: Vec<_> = back
        .records
        .iter()
        .map(|r| {
            (
                r.submit_ns,
                r.latency_ns,
                r.kind(),
                r.offset,
                r.len,
                back.files[r.file as usize].clone(),
            )
        })
        .collect();
    assert_eq!(got, want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_names_the_line_and_the_fix() {
    let dir = scratch("bad");
    let path = dir.join("x.iolog");
    std::fs::write(
        &path,
        "fio version 3 iolog\n0 /a add\n12 /a frobnicate 0 4096\n",
    )
    .unwrap();
    let err = convert::import(&path, None).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.to_string().contains("line 3") && err.to_string().contains("frobnicate"),
        "{err}"
    );
    std::fs::write(&path, "hello\n").unwrap();
    let err = convert::import(&path, None).unwrap_err().to_string();
    assert!(err.contains("--from"), "{err}");
    // Exporting over someone's file is refused.
    let trace = dir.join("t.trace");
    synthetic().save(&trace).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let err = convert::convert(&trace, None, Format::FioIologV3, &dir.join("notes.txt"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a file oltplab writes"), "{err}");
    let err = convert::convert(&trace, None, Format::Blkparse, &dir.join("x.txt"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("--to"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
