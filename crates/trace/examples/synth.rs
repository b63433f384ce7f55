//! Writes a synthetic OLTP-like trace for benchmarks: `threads` synchronous threads, each doing
//! `ops` random `bs`-byte reads and writes (`read_pct` % reads) over a `size_mib` file, aligned;
//! thread t ran on CPU t mod 4.
//!
//! cargo run --release -p oltplab-trace --example synth -- OUT THREADS OPS_PER_THREAD BS READ_PCT SIZE_MIB

use std::path::PathBuf;

use oltplab_trace::{Op, Record, TraceData, TraceMeta};
use rand::{Rng, SeedableRng};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 6 {
        eprintln!("usage: synth OUT THREADS OPS_PER_THREAD BS READ_PCT SIZE_MIB");
        std::process::exit(2);
    }
    let out = PathBuf::from(&args[0]);
    let num = |i: usize| -> u64 {
        args[i].parse().unwrap_or_else(|_| {
            eprintln!("'{}' is not a number", args[i]);
            std::process::exit(2)
        })
    };
    let (threads, ops, bs, read_pct, size_mib) = (num(1), num(2), num(3), num(4), num(5));
    let blocks = size_mib * (1 << 20) / bs;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(42);
    let mut records = Vec::with_capacity((threads * ops) as usize);
    for t in 0..threads {
        // 100 µs per I/O as traced, back to back: each thread had one I/O in flight.
        for i in 0..ops {
            let op = if rng.random_range(0..100) < read_pct {
                Op::Read
            } else {
                Op::Write
            };
            records.push(Record {
                submit_ns: i * 100_000 + t,
                latency_ns: 90_000,
                offset: rng.random_range(0..blocks) * bs,
                len: bs as u32,
                file: 0,
                op: op as u8,
                tag: 0,
                tid: 1000 + t as u32,
                cpu: Some((t % 4) as u32),
            });
        }
    }
    records.sort_by_key(|r| r.submit_ns);
    let data = TraceData {
        meta: TraceMeta::new("synthetic"),
        files: vec!["/bench/data.db".into()],
        records,
        complete: true,
        ..TraceData::default()
    };
    let s = data.save(&out).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    eprintln!("wrote {} records to {}", s.records, out.display());
}
