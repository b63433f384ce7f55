//! Property tests of the binary trace: any valid trace survives a write and a read unchanged; any
//! bytes, truncation, bit flip or crafted chunk given to the reader end in a trace or an error
//! naming the byte, never a panic; merged traces keep every record, in time order; statistics of
//! any records stay bounded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use oltplab_trace::format::{
    self, ChunkKind, Header, TableExtent, FLAG_FINISHED, HEADER_BYTES, RECORD_BYTES,
};
use oltplab_trace::stat::TraceStat;
use oltplab_trace::{merge, Op, Record, TraceData, TraceMeta, TraceReader};
use proptest::prelude::*;

/// One case's directory, removed with its files when the case ends (pass or fail): thousands of
/// cases leave nothing in the temporary directory.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> ScratchDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("oltplab-prop-format-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        ScratchDir(dir)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Numbers from the whole range, with the edges and small values often.
fn u64_edgy() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        0..10_000u64,
        Just(u64::MAX),
        (0..64u32).prop_map(|s| 1u64 << s),
        (0..4096u64).prop_map(|d| u64::MAX - d),
    ]
}

fn u32_edgy() -> impl Strategy<Value = u32> {
    prop_oneof![any::<u32>(), 0..10_000u32, Just(u32::MAX)]
}

/// A record any trace may hold: a known op, a file of the table, a range and an end that fit.
fn valid_record(files: usize) -> impl Strategy<Value = Record> {
    (
        u64_edgy(),
        u32_edgy(),
        u64_edgy(),
        u32_edgy(),
        0..files as u16,
        0..8u8,
        any::<u8>(),
        any::<u32>(),
        // The CPU, or none (traces of version 1 and converted ones): both in one trace too.
        proptest::option::of(0..u32::MAX),
    )
        .prop_map(
            |(submit_ns, latency_ns, offset, len, file, op, tag, tid, cpu)| Record {
                submit_ns: submit_ns.min(u64::MAX - latency_ns as u64),
                latency_ns,
                offset: offset.min(u64::MAX - len as u64),
                len,
                file,
                op,
                tag,
                tid,
                cpu,
            },
        )
}

fn meta() -> impl Strategy<Value = TraceMeta> {
    (
        ".{0,20}",
        proptest::option::of(".{0,20}"),
        proptest::option::of(any::<u32>()),
        proptest::collection::btree_map(".{0,8}", ".{0,8}", 0..3),
    )
        .prop_map(|(source, device, pid, extra)| TraceMeta {
            device,
            pid,
            extra,
            ..TraceMeta::new(source)
        })
}

/// A valid trace in memory, its records in time order as a reader gives them.
fn valid_trace(max_records: usize) -> impl Strategy<Value = TraceData> {
    proptest::collection::vec(".{0,40}", 1..5)
        .prop_flat_map(move |files| {
            let n = files.len();
            (
                meta(),
                any::<u64>(),
                any::<u64>(),
                Just(files),
                proptest::collection::btree_map(0..n as u16, any::<u32>(), 0..n),
                proptest::collection::vec((0..n as u16, any::<u64>(), "\\PC{0,12}"), 0..4),
                proptest::collection::vec(valid_record(n), 0..max_records),
            )
        })
        .prop_map(
            |(meta, start_ns, start_unix_ns, files, places, tables, mut records)| {
                records.sort_by_key(|r| r.submit_ns);
                // The reader gives the table map sorted.
                let mut tables: Vec<TableExtent> = tables
                    .into_iter()
                    .map(|(file, from_bytes, table)| TableExtent {
                        file,
                        from_bytes,
                        table,
                    })
                    .collect();
                tables.sort();
                TraceData {
                    meta,
                    start_ns,
                    start_unix_ns,
                    files,
                    places,
                    tables,
                    records,
                    complete: true,
                }
            },
        )
}

/// The error of a refused file names the byte it is about.
fn assert_names_the_byte(path: &Path, e: &oltplab_core::Error) {
    let text = e.to_string();
    assert_eq!(e.exit_code(), 2, "{text}");
    assert!(
        text.contains(&path.display().to_string()) && text.contains("byte"),
        "{text}"
    );
}

/// Opens `bytes` as a trace: a refusal names the byte; an acceptance holds only valid records,
/// as many as it says.
fn open_checked(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    match TraceReader::open(path) {
        Err(e) => assert_names_the_byte(path, &e),
        Ok(reader) => {
            let data = reader.load().unwrap();
            assert_eq!(data.records.len() as u64, reader.record_count());
            assert!(reader.readable_bytes() <= bytes.len() as u64);
            for r in &data.records {
                assert_eq!(r.defect(), None);
                assert!(reader.file_path(r.file).is_some(), "{r:?}");
            }
            assert!(data
                .records
                .windows(2)
                .all(|w| w[0].submit_ns <= w[1].submit_ns));
        }
    }
}

/// A chunk of any kind holding `payload`, sealed with a valid checksum so that the reader looks
/// inside; sometimes with a length field that lies.
fn crafted_chunk() -> impl Strategy<Value = Vec<u8>> {
    let files = proptest::collection::vec((any::<u16>(), any::<u16>(), ".{0,8}"), 0..4).prop_map(
        |entries| {
            let mut out = Vec::new();
            for (id, claimed, path) in entries {
                out.extend_from_slice(&id.to_le_bytes());
                // The path length field may claim more than follows.
                let n = if claimed % 4 == 0 {
                    claimed
                } else {
                    path.len() as u16
                };
                out.extend_from_slice(&n.to_le_bytes());
                out.extend_from_slice(path.as_bytes());
            }
            out
        },
    );
    let records = proptest::collection::vec(
        (
            u64_edgy(),
            u32_edgy(),
            u64_edgy(),
            u32_edgy(),
            0..4u16,
            0..10u8,
        ),
        0..6,
    )
    .prop_map(|rs| {
        let mut out = vec![0u8; rs.len() * RECORD_BYTES];
        for ((submit_ns, latency_ns, offset, len, file, op), b) in
            rs.into_iter().zip(out.chunks_exact_mut(RECORD_BYTES))
        {
            let r = Record {
                submit_ns,
                latency_ns,
                offset,
                len,
                file,
                op: 0,
                tag: 0,
                tid: 1,
                cpu: None,
            };
            format::encode_record(&r, b);
            b[30] = op;
        }
        out
    });
    let payload = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..100),
        files,
        records,
        Just(serde_json::to_vec(&TraceMeta::new("x")).unwrap()),
        Just(b"{\"tool\":1}".to_vec()),
    ];
    // Kinds 0 to 7: the known ones (1 to 6, records with CPUs among them) and unknown ones.
    (0..8u8, payload, proptest::option::of(any::<u32>())).prop_map(|(kind, payload, lie)| {
        let mut c = vec![0u8; format::CHUNK_HEADER_BYTES + payload.len()];
        c[format::CHUNK_HEADER_BYTES..].copy_from_slice(&payload);
        format::seal_chunk(ChunkKind::Meta, &mut c);
        c[4] = kind;
        if let Some(len) = lie {
            c[8..12].copy_from_slice(&len.to_le_bytes());
        }
        let crc = format::chunk_crc(&c[..format::CHUNK_HEADER_BYTES], &payload);
        c[12..16].copy_from_slice(&crc.to_le_bytes());
        c
    })
}

proptest! {
    // Each case writes and syncs a trace file: fewer cases.
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_valid_trace_round_trips(trace in valid_trace(120)) {
        let dir = ScratchDir::new();
        let path = dir.file("round-trip.trace");
        let summary = trace.save(&path).unwrap();
        prop_assert_eq!(summary.records, trace.records.len() as u64);
        let back = TraceData::load(&path).unwrap();
        prop_assert_eq!(back, trace);
    }

}

proptest! {
    // Reading a few hundred bytes is cheap: more cases.
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_are_a_trace_or_an_error_naming_the_byte(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        with_magic in any::<bool>(),
    ) {
        let dir = ScratchDir::new();
        let mut bytes = bytes;
        if with_magic {
            bytes.splice(0..bytes.len().min(8), format::MAGIC.iter().copied());
        }
        open_checked(&dir.file("bytes.trace"), &bytes);
    }

    /// A valid trace, then truncated, bit-flipped or with 8 bytes overwritten (length and count
    /// fields included); the header's checksum is sometimes fixed so the damage is looked at.
    #[test]
    fn damaged_traces_are_refused_by_byte(
        trace in valid_trace(40),
        at in any::<prop::sample::Index>(),
        damage in 0..3u8,
        word in u64_edgy(),
        bit in 0..8u8,
        reseal in any::<bool>(),
        unfinished in any::<bool>(),
    ) {
        let dir = ScratchDir::new();
        let path = dir.file("damaged.trace");
        trace.save(&path).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let path = dir.file("damaged-copy.trace");
        let i = at.index(bytes.len());
        match damage {
            0 => bytes.truncate(i),
            1 => bytes[i] ^= 1 << bit,
            _ => {
                let end = (i + 8).min(bytes.len());
                bytes[i..end].copy_from_slice(&word.to_le_bytes()[..end - i]);
            }
        }
        if bytes.len() >= HEADER_BYTES && (reseal || unfinished) {
            let b = &bytes[..HEADER_BYTES];
            let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            let h = Header {
                version: u16::from_le_bytes([b[8], b[9]]),
                flags: if unfinished { 0 } else { u16::from_le_bytes([b[14], b[15]]) },
                start_ns: word(16),
                start_unix_ns: word(24),
                records: word(32),
                end_bytes: word(40),
            };
            bytes[..HEADER_BYTES].copy_from_slice(&h.encode());
        }
        open_checked(&path, &bytes);
    }

    /// Chunks with valid checksums around hostile contents: lying lengths, unknown kinds and ops,
    /// file tables cut short, records past 2^64, a header declaring any count and end.
    #[test]
    fn crafted_chunks_are_a_trace_or_an_error_naming_the_byte(
        chunks in proptest::collection::vec(crafted_chunk(), 0..6),
        meta_first in any::<bool>(),
        finished in any::<bool>(),
        records in u64_edgy(),
        end_bytes in proptest::option::of(u64_edgy()),
    ) {
        let dir = ScratchDir::new();
        let mut bytes = vec![0u8; HEADER_BYTES];
        if meta_first {
            bytes.extend(format::chunk(ChunkKind::Meta, &serde_json::to_vec(&TraceMeta::new("x")).unwrap()));
        }
        for c in chunks {
            bytes.extend(c);
        }
        let header = Header {
            version: format::VERSION,
            flags: if finished { FLAG_FINISHED } else { 0 },
            start_ns: 0,
            start_unix_ns: 0,
            records,
            end_bytes: end_bytes.unwrap_or(bytes.len() as u64),
        };
        bytes[..HEADER_BYTES].copy_from_slice(&header.encode());
        open_checked(&dir.file("crafted.trace"), &bytes);
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Parts on one clock merge into one trace holding every record once, in time order.
    #[test]
    fn merge_keeps_every_record_in_time_order(
        parts in proptest::collection::vec(
            (0..1u64 << 40, valid_trace(60)),
            1..4,
        ),
    ) {
        let dir = ScratchDir::new();
        let mut paths = Vec::new();
        let mut want: Vec<(u64, String, Record)> = Vec::new();
        let earliest = parts.iter().map(|(start, _)| *start).min().unwrap();
        for (i, (start_ns, trace)) in parts.into_iter().enumerate() {
            // On a shared clock times fit: a part starts late, its records within 2^62 ns.
            let mut trace = trace;
            trace.start_ns = start_ns;
            for r in &mut trace.records {
                r.submit_ns >>= 2;
                r.latency_ns = r.latency_ns.min(1 << 30);
            }
            trace.records.sort_by_key(|r| r.submit_ns);
            for r in &trace.records {
                let path = trace.files[r.file as usize].clone();
                want.push((start_ns + r.submit_ns - earliest, path, *r));
            }
            let path = dir.file(&format!("part{i}.trace"));
            trace.save(&path).unwrap();
            paths.push(path);
        }
        let out = dir.file("merged.trace");
        let summary = merge(&paths, &out).unwrap();
        prop_assert_eq!(summary.records, want.len() as u64);
        let merged = TraceData::load(&out).unwrap();
        prop_assert_eq!(merged.start_ns, earliest);
        prop_assert!(merged.records.windows(2).all(|w| w[0].submit_ns <= w[1].submit_ns));
        let key = |t: u64, path: &str, r: &Record| {
            (t, path.to_string(), r.op, r.offset, r.len, r.latency_ns, r.tid, r.tag)
        };
        let mut got: Vec<_> = merged
            .records
            .iter()
            .map(|r| key(r.submit_ns, &merged.files[r.file as usize], r))
            .collect();
        let mut want: Vec<_> = want.iter().map(|(t, p, r)| key(*t, p, r)).collect();
        got.sort();
        want.sort();
        prop_assert_eq!(got, want);
    }

    /// Statistics of any valid records: counts add up, and the per-second table is bounded by the
    /// records, not by how far apart their times are.
    #[test]
    fn stat_of_any_records_is_bounded(trace in valid_trace(120)) {
        let s = TraceStat::compute(&trace);
        prop_assert_eq!(s.records, trace.records.len() as u64);
        prop_assert_eq!(s.ops.total(), trace.records.len() as u64);
        prop_assert!(s.per_second.len() <= (1 << 20) + 8 * trace.records.len());
        prop_assert!(s.per_second.windows(2).all(|w| w[0].t_s < w[1].t_s));
        let by_op: BTreeMap<u8, u64> = trace.records.iter().fold(BTreeMap::new(), |mut m, r| {
            *m.entry(r.op).or_default() += 1;
            m
        });
        prop_assert_eq!(s.ops.read, by_op.get(&(Op::Read as u8)).copied().unwrap_or(0));
    }
}
