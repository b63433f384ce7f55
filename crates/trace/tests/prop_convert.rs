//! Property tests of the converters (fio iolog v2/v3, blkparse text, MSR Cambridge CSV): any lines
//! — garbage, or the format's own shape with hostile numbers (huge offsets, offset + length past
//! 2^64, negative or huge times, sectors × 512 past 2^64) — give records a trace can hold, or an
//! error naming the line; never a panic.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use oltplab_trace::convert::{self, Format};
use proptest::prelude::*;

/// One case's input file, removed when the case ends (pass or fail): thousands of cases leave
/// nothing in the temporary directory.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Scratch(std::env::temp_dir().join(format!(
        "oltplab-prop-convert-{}-{n}-{name}",
        std::process::id()
    )))
}

/// A number as text: mostly one that parses — ordinary, or at the edges of 32 and 64 bits —
/// sometimes one past them, negative or not a number at all.
fn number() -> impl Strategy<Value = String> {
    let fits = prop_oneof![
        (0..100_000u64).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            0u64,
            511,
            512,
            4096,
            u32::MAX as u64,
            u32::MAX as u64 + 1,
            1 << 55,
            (1 << 55) - 1,
            u64::MAX / 512,
            u64::MAX / 1000,
            u64::MAX / 100,
            i64::MAX as u64,
            u64::MAX - 4095,
            u64::MAX,
        ])
        .prop_map(|n| n.to_string()),
    ];
    let does_not = prop_oneof![
        Just("18446744073709551616".to_string()),
        Just("99999999999999999999999999".to_string()),
        (1..1_000_000i64).prop_map(|n| (-n).to_string()),
        prop::sample::select(vec!["1e5", "0x10", "", "+7", "1.5", "nan", "-0"])
            .prop_map(str::to_string),
    ];
    prop_oneof![8 => fits, 1 => does_not]
}

/// Seconds as blkparse prints them, with hostile whole parts and fractions.
fn seconds() -> impl Strategy<Value = String> {
    (number(), prop_oneof![Just(String::new()), "[0-9]{0,12}"]).prop_map(|(s, frac)| {
        if frac.is_empty() {
            s
        } else {
            format!("{s}.{frac}")
        }
    })
}

/// Any line: garbage (control characters and all) or one of the format's shape.
fn line(shaped: BoxedStrategy<String>) -> impl Strategy<Value = String> {
    prop_oneof![1 => "[^\n]{0,60}", 9 => shaped]
}

fn fio_line(v3: bool) -> BoxedStrategy<String> {
    let mut actions = vec![
        "read", "write", "sync", "datasync", "trim", "add", "open", "close",
    ];
    if !v3 {
        actions.push("wait");
    }
    let action = prop_oneof![
        9 => prop::sample::select(actions),
        1 => Just("frob"),
    ];
    let file = prop::sample::select(vec!["/a", "/b", "/dev/sda"]);
    (number(), file, action, number(), number(), 0..10u8)
        .prop_map(move |(t, file, action, offset, len, odd)| {
            // File actions take no offset and length, I/O takes both; sometimes the other way.
            let short = matches!(action, "add" | "open" | "close") != (odd == 0);
            let tail = if short {
                String::new()
            } else {
                format!(" {offset} {len}")
            };
            if v3 {
                format!("{t} {file} {action}{tail}")
            } else {
                format!("{file} {action}{tail}")
            }
        })
        .boxed()
}

fn blkparse_line() -> BoxedStrategy<String> {
    let action = prop::sample::select(vec!["Q", "D", "C", "G", "QQ"]);
    let rwbs = prop::sample::select(vec!["R", "W", "WS", "FWS", "D", "N", "RA", "X"]);
    (
        (number(), number(), number()),
        seconds(),
        number(),
        action,
        rwbs,
        prop_oneof![
            (number(), number()).prop_map(|(s, n)| format!("{s} + {n}")),
            Just(String::new()),
            number().prop_map(|s| format!("{s} +")),
        ],
    )
        .prop_map(|((maj, cpu, seq), t, pid, action, rwbs, range)| {
            format!("{maj},0 {cpu} {seq} {t} {pid} {action} {rwbs} {range} [proc]")
        })
        .boxed()
}

fn msr_line() -> BoxedStrategy<String> {
    let op = prop::sample::select(vec!["Read", "Write", "read", "Trim"]);
    (number(), number(), op, number(), number(), number())
        .prop_map(|(t, disk, op, offset, size, resp)| {
            format!("{t},host,{disk},{op},{offset},{size},{resp}")
        })
        .boxed()
}

/// Imports `lines` (after `header`, if any) as `format`: a success holds only records a trace
/// may hold; a failure names a line of the input (or says that nothing was found).
fn check(format: Format, header: Option<&str>, lines: &[String], crlf: bool) {
    let mut text = String::new();
    for l in header
        .into_iter()
        .map(str::to_string)
        .chain(lines.iter().cloned())
    {
        text.push_str(&l);
        text.push_str(if crlf { "\r\n" } else { "\n" });
    }
    let count = lines.len() + header.is_some() as usize;
    let path = scratch(format.name());
    std::fs::write(&path.0, &text).unwrap();
    match convert::import(&path.0, Some(format)) {
        Ok((_, data, _)) => {
            for r in &data.records {
                assert_eq!(r.defect(), None, "{r:?}");
                assert!((r.file as usize) < data.files.len(), "{r:?}");
            }
            assert!(data
                .records
                .windows(2)
                .all(|w| w[0].submit_ns <= w[1].submit_ns));
        }
        Err(e) => {
            let msg = e.to_string();
            assert_eq!(e.exit_code(), 2, "{msg}");
            assert!(msg.len() < 2000, "{msg}");
            let named = msg
                .split(" line ")
                .nth(1)
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse::<usize>().ok());
            match named {
                Some(n) => assert!((1..=count.max(1)).contains(&n), "{msg}"),
                None => assert!(msg.contains("holds no"), "{msg}"),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fio_v3_lines_never_panic(lines in proptest::collection::vec(line(fio_line(true)), 0..12), crlf in any::<bool>()) {
        check(Format::FioIologV3, Some("fio version 3 iolog"), &lines, crlf);
    }

    #[test]
    fn fio_v2_lines_never_panic(lines in proptest::collection::vec(line(fio_line(false)), 0..12), crlf in any::<bool>()) {
        check(Format::FioIologV2, Some("fio version 2 iolog"), &lines, crlf);
    }

    #[test]
    fn blkparse_lines_never_panic(lines in proptest::collection::vec(line(blkparse_line()), 0..12), crlf in any::<bool>()) {
        check(Format::Blkparse, None, &lines, crlf);
    }

    #[test]
    fn msr_lines_never_panic(lines in proptest::collection::vec(line(msr_line()), 0..12), crlf in any::<bool>()) {
        check(Format::MsrCsv, None, &lines, crlf);
    }

    /// Raw bytes, not UTF-8 and not lines, in every format and through format detection.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), prefix in 0..4usize) {
        let heads: [&[u8]; 4] = [b"", b"fio version 3 iolog\n", b"fio version 2 iolog\n", b"8,0 0 1 0.1 5 D R 0 + 8 [x]\n"];
        let mut input = heads[prefix].to_vec();
        input.extend(bytes);
        let path = scratch("bytes");
        std::fs::write(&path.0, &input).unwrap();
        for format in [None, Some(Format::FioIologV3), Some(Format::FioIologV2), Some(Format::Blkparse), Some(Format::MsrCsv)] {
            if let Ok((_, data, _)) = convert::import(&path.0, format) {
                for r in &data.records {
                    prop_assert_eq!(r.defect(), None);
                }
            }
        }
    }
}
