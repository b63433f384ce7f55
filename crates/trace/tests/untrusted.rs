//! Untrusted numbers (issue 19, item 8): converter input and trace records come from files anyone
//! can craft. Offsets plus lengths, time conversions, sectors to bytes and clock shifts that do not
//! fit end in an error naming the line or the record — never a panic, a wrapped value or an
//! allocation the input size does not justify.

use std::path::{Path, PathBuf};

use oltplab_trace::convert::{self, Format};
use oltplab_trace::format::{self, ChunkKind, Header, FLAG_FINISHED, HEADER_BYTES, RECORD_BYTES};
use oltplab_trace::replay::sim::{replay_virtual, ReplayOrder};
use oltplab_trace::stat::TraceStat;
use oltplab_trace::{merge, Op, Record, TraceData, TraceMeta, TraceReader};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oltplab-untrusted-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn read(submit_ns: u64, latency_ns: u32, offset: u64, len: u32) -> Record {
    Record {
        submit_ns,
        latency_ns,
        offset,
        len,
        file: 0,
        op: Op::Read as u8,
        tag: 0,
        tid: 1,
        cpu: None,
    }
}

/// Imports `text` as `format`; the error's message, or a panic if it was accepted.
fn import_error(dir: &Path, format: Format, text: &[u8]) -> String {
    let path = dir.join("input");
    std::fs::write(&path, text).unwrap();
    match convert::import(&path, Some(format)) {
        Ok((_, data, _)) => panic!("accepted: {:?}", data.records),
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "{e}");
            e.to_string()
        }
    }
}

#[test]
fn fio_numbers_that_do_not_fit_name_their_line() {
    let dir = scratch("fio");
    // v2's wait is in µs: u64::MAX µs overflows the ns clock (it panicked).
    let e = import_error(
        &dir,
        Format::FioIologV2,
        b"fio version 2 iolog\n/a add\n/a wait 18446744073709551615 0\n",
    );
    assert!(e.contains("line 3") && e.contains("wait"), "{e}");
    // Waits that add up past the clock (each fits on its own).
    let e = import_error(
        &dir,
        Format::FioIologV2,
        b"fio version 2 iolog\n/a add\n/a wait 10000000000000000 0\n/a wait 10000000000000000 0\n",
    );
    assert!(e.contains("line 4"), "{e}");
    // v3's µs timestamp beyond the ns clock (it was silently clamped to 584 years).
    let e = import_error(
        &dir,
        Format::FioIologV3,
        b"fio version 3 iolog\n0 /a add\n18446744073709552 /a read 0 4096\n",
    );
    assert!(
        e.contains("line 3") && e.contains("18446744073709552"),
        "{e}"
    );
    // offset + length past 2^64 (it was accepted, and later wrapped or panicked in stat/replay).
    let e = import_error(
        &dir,
        Format::FioIologV3,
        b"fio version 3 iolog\n0 /a add\n1 /a write 18446744073709551615 4096\n",
    );
    assert!(e.contains("line 3") && e.contains("overflows"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn blkparse_numbers_that_do_not_fit_name_their_line() {
    let dir = scratch("blk");
    let ok = "8,0 0 1 0.000000001 100 D R 8 + 8 [x]\n";
    for (bad, what) in [
        // sector × 512 overflows (it panicked).
        (
            "8,0 0 2 0.000000002 100 D W 36028797018963968 + 8 [x]",
            "sector",
        ),
        // sectors × 512 overflows (it panicked).
        (
            "8,0 0 2 0.000000002 100 D W 0 + 36028797018963968 [x]",
            "sectors",
        ),
        // The byte range's end overflows.
        (
            "8,0 0 2 0.000000002 100 D W 36028797018963967 + 8 [x]",
            "overflows",
        ),
        // Seconds beyond the ns clock (it panicked).
        (
            "8,0 0 2 99999999999.000000000 100 D R 0 + 8 [x]",
            "99999999999",
        ),
    ] {
        let text = format!("{ok}{bad}\n");
        let e = import_error(&dir, Format::Blkparse, text.as_bytes());
        assert!(e.contains("line 2") && e.contains(what), "{bad}: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn msr_numbers_that_do_not_fit_name_their_line() {
    let dir = scratch("msr");
    for (text, what) in [
        // Ticks of 100 ns since the first row overflow the ns clock (it panicked).
        (
            "0,h,0,Read,0,4096,10\n18446744073709551615,h,0,Read,0,4096,10\n",
            "line 2",
        ),
        // offset + size past 2^64 (it was accepted).
        ("0,h,0,Read,18446744073709551615,4096,1\n", "line 1"),
        // A negative offset is not a number of bytes.
        ("0,h,0,Read,0,4096,1\n5,h,0,Write,-4096,4096,1\n", "line 2"),
    ] {
        let e = import_error(&dir, Format::MsrCsv, text.as_bytes());
        assert!(e.contains(what), "{text}: {e}");
    }
    // A response time of u64::MAX ticks saturates the latency field (it panicked).
    let path = dir.join("resp.csv");
    std::fs::write(&path, "0,h,0,Read,0,4096,18446744073709551615\n").unwrap();
    let (_, data, _) = convert::import(&path, Some(Format::MsrCsv)).unwrap();
    assert_eq!(data.records[0].latency_ns, u32::MAX);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn too_many_files_name_the_line() {
    let dir = scratch("files");
    // Each row a new disk: the 65,536th does not fit the file table (the error named no line).
    let text: String = (0..65_536u32)
        .map(|i| format!("{i},h,{i},Read,0,4096,1\n"))
        .collect();
    let e = import_error(&dir, Format::MsrCsv, text.as_bytes());
    assert!(e.contains("line 65536") && e.contains("h_65535"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lines_that_are_not_text_or_too_long_are_named_not_echoed() {
    let dir = scratch("lines");
    // Not UTF-8: the error named no line.
    let e = import_error(
        &dir,
        Format::FioIologV3,
        b"fio version 3 iolog\n0 /a add\n\xff\xfe read\n",
    );
    assert!(e.contains("line 3") && e.contains("UTF-8"), "{e}");
    // A line of 8 MiB without a newline was read whole and echoed whole in the error.
    let mut text = b"fio version 3 iolog\n0 /a add\n1 /a read ".to_vec();
    text.resize(text.len() + (8 << 20), b'7');
    let e = import_error(&dir, Format::FioIologV3, &text);
    assert!(
        e.contains("line 3") && e.len() < 1000,
        "{}",
        &e[..e.len().min(300)]
    );
    // A long but harmless line is still named and cut in the message.
    let mut text = b"fio version 3 iolog\n0 /a add\n1 /a frobnicate ".to_vec();
    text.resize(text.len() + 5000, b'x');
    text.push(b'\n');
    let e = import_error(&dir, Format::FioIologV3, &text);
    assert!(
        e.contains("line 3") && e.len() < 1000,
        "{}",
        &e[..e.len().min(300)]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_record_end_saturates() {
    let r = read(u64::MAX - 5, 100, 0, 4096);
    assert_eq!(r.end_ns(), u64::MAX);
}

/// A finished trace with the given record bytes after a file table of one file; returns the byte
/// offset of the first record.
fn crafted(path: &Path, records: &[Record], declared_records: u64) -> u64 {
    let mut bytes = vec![0u8; HEADER_BYTES];
    bytes.extend(format::chunk(
        ChunkKind::Meta,
        &serde_json::to_vec(&TraceMeta::new("test")).unwrap(),
    ));
    bytes.extend(format::chunk(
        ChunkKind::Files,
        &format::encode_files([(0, "/db")]),
    ));
    let first = bytes.len() + format::CHUNK_HEADER_BYTES;
    let mut payload = vec![0u8; records.len() * RECORD_BYTES];
    for (r, b) in records.iter().zip(payload.chunks_exact_mut(RECORD_BYTES)) {
        format::encode_record(r, b);
    }
    bytes.extend(format::chunk(ChunkKind::Records, &payload));
    let header = Header {
        version: format::VERSION_WITHOUT_CPUS,
        flags: FLAG_FINISHED,
        start_ns: 0,
        start_unix_ns: 0,
        records: declared_records,
        end_bytes: bytes.len() as u64,
    };
    bytes[..HEADER_BYTES].copy_from_slice(&header.encode());
    std::fs::write(path, &bytes).unwrap();
    first as u64
}

#[test]
fn records_whose_numbers_overflow_are_refused_by_byte_offset() {
    let dir = scratch("reader");
    let path = dir.join("t.trace");
    // The second record's range ends past 2^64.
    let first = crafted(
        &path,
        &[read(0, 10, 0, 4096), read(5, 10, u64::MAX - 100, 4096)],
        2,
    );
    let e = TraceReader::open(&path).unwrap_err().to_string();
    let at = first + RECORD_BYTES as u64;
    assert!(
        e.contains(&format!("at byte {at}")) && e.contains("overflows"),
        "{e}"
    );
    // Its completion is past 2^64 ns.
    crafted(&path, &[read(u64::MAX - 5, 10, 0, 4096)], 1);
    let e = TraceReader::open(&path).unwrap_err().to_string();
    assert!(
        e.contains(&format!("at byte {first}")) && e.contains("overflows"),
        "{e}"
    );
    // A header claiming 2^60 records is checked against the chunks, not trusted for an allocation.
    crafted(&path, &[read(0, 10, 0, 4096)], 1 << 60);
    let e = TraceReader::open(&path).unwrap_err().to_string();
    assert!(
        e.contains("at byte 0") && e.contains("1152921504606846976"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_writer_refuses_records_the_reader_would_refuse() {
    let dir = scratch("writer");
    let path = dir.join("t.trace");
    let base = TraceData {
        meta: TraceMeta::new("test"),
        files: vec!["/db".into()],
        complete: true,
        ..TraceData::default()
    };
    for (bad, what) in [
        (
            Record {
                op: 200,
                ..read(0, 1, 0, 1)
            },
            "op",
        ),
        (
            Record {
                file: 7,
                ..read(0, 1, 0, 1)
            },
            "file 7",
        ),
        (read(0, 1, u64::MAX, 1), "overflows"),
        (read(u64::MAX, 1, 0, 1), "overflows"),
    ] {
        let data = TraceData {
            records: vec![read(0, 1, 0, 1), bad],
            ..base.clone()
        };
        // It wrote a trace that no reader could open again.
        let e = data.save(&path).unwrap_err().to_string();
        assert!(e.contains("record 2") && e.contains(what), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merging_a_part_whose_clock_overflows_is_an_error() {
    let dir = scratch("merge");
    let part = |name: &str, start_ns: u64, submit_ns: u64| {
        let path = dir.join(name);
        TraceData {
            meta: TraceMeta::new("shim"),
            start_ns,
            files: vec!["/db".into()],
            records: vec![read(submit_ns, 10, 0, 4096)],
            complete: true,
            ..TraceData::default()
        }
        .save(&path)
        .unwrap();
        path
    };
    let a = part("a.trace", 1000, 0);
    // Its start plus its record's time is past 2^64 ns (it panicked).
    let b = part("b.trace", u64::MAX - 1000, 5000);
    let e = merge(&[a, b], &dir.join("m.trace"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("b.trace") && e.contains("overflows"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn stat_of_a_record_146_years_in_has_no_table_for_the_gap() {
    // The per-second table had one entry per second up to the last record: 4.6e9 entries, an
    // allocation of hundreds of GB from a 200-byte file.
    let trace = TraceData {
        files: vec!["/db".into()],
        records: vec![read(0, 10, 0, 4096), read(1 << 62, 10, 0, 4096)],
        complete: true,
        ..TraceData::default()
    };
    let s = TraceStat::compute(&trace);
    let at: Vec<f64> = s.per_second.iter().map(|x| x.t_s).collect();
    assert_eq!(at, vec![0.0, ((1u64 << 62) / 1_000_000_000) as f64]);
    assert!(s.per_second[1].read_iops > 0.0);
}

#[test]
fn stat_of_records_far_apart_in_time_stays_small() {
    // As above, and end_ns() overflowed for the last record.
    let trace = TraceData {
        files: vec!["/db".into()],
        records: vec![
            read(0, 10, 0, 4096),
            read(1 << 62, 10, u64::MAX - 4096, 4096),
            read(u64::MAX - 5, 100, 0, 4096),
        ],
        complete: true,
        ..TraceData::default()
    };
    let s = TraceStat::compute(&trace);
    assert_eq!(s.ops.read, 3);
    assert!(s.per_second.len() <= 8, "{}", s.per_second.len());
    // The seconds that do have I/O are there, in time order.
    assert_eq!(s.per_second[0].t_s, 0.0);
    assert!(s.per_second.windows(2).all(|w| w[0].t_s < w[1].t_s));
    assert_eq!(s.per_file[0].extent_bytes, u64::MAX);
}

#[test]
fn a_virtual_replay_of_hostile_ranges_does_not_panic() {
    // offset + len overflowed while the plan sized the file (it panicked).
    let trace = TraceData {
        files: vec!["/db".into()],
        records: vec![
            read(0, 10, u64::MAX - 10, 4096),
            read(u64::MAX - 5, 100, 0, 4096),
        ],
        complete: true,
        ..TraceData::default()
    };
    let spec = oltplab_devmodel::parse_spec("hdd-15k").unwrap();
    let o = replay_virtual(&trace, &spec, 1, ReplayOrder::Causal).unwrap();
    assert_eq!(o.ops(), 2);
    assert_eq!(o.trace_duration_ns, u64::MAX);
}
