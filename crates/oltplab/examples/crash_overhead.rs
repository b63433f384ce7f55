//! What keeping undo data for power cuts costs TPC-C on SQLite: tpmC with the VFS's crash capture
//! and without it, on the same emulated device, in alternating rounds on fresh copies of one
//! loaded database (bench/crash-overhead/).
//!
//! `crash_overhead DB SPEC SECONDS ROUNDS TERMINALS`, e.g.
//! `crash_overhead tpcc.sqlite 'pcie-flash-2012{cache=volatile}' 20 4 4`.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use oltplab_dbs::sqlite::SqliteOptions;
use oltplab_dbs::vfs::{CrashCapture, Vfs, VfsOptions};
use oltplab_devmodel::{parse_spec, Emulator, Spec};
use oltplab_workloads::tpcc::connect::SqliteConnector;
use oltplab_workloads::tpcc::driver::{drive, DriverConfig};
use oltplab_workloads::tpcc::tx::TxType;
use oltplab_workloads::tpcc::{inspect, require_loaded, Connector, Purpose};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        eprintln!("usage: crash_overhead DB SPEC SECONDS ROUNDS TERMINALS");
        std::process::exit(2);
    }
    let db = PathBuf::from(&args[1]);
    let spec = parse_spec(&args[2]).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let seconds: f64 = args[3].parse().expect("SECONDS is a number");
    let rounds: u32 = args[4].parse().expect("ROUNDS is a number");
    let terminals: usize = args[5].parse().expect("TERMINALS is a number");
    println!("round\tmode\ttpmc\tnew_orders\tmeasured_s\tpending_writes_at_end");
    let (mut plain, mut kept) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        // Alternate the order, so the machine's drift falls on both sides.
        let order = if round % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        for keep in order {
            let (tpmc, n, s, pending) = one(&db, &spec, keep, seconds, terminals, round);
            println!(
                "{round}\t{}\t{tpmc:.0}\t{n}\t{s:.2}\t{pending}",
                if keep { "kept" } else { "plain" }
            );
            if keep { &mut kept } else { &mut plain }.push(tpmc);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ratios: Vec<f64> = kept.iter().zip(&plain).map(|(k, p)| k / p).collect();
    let r = mean(&ratios);
    let sd = (ratios.iter().map(|x| (x - r).powi(2)).sum::<f64>()
        / (ratios.len().max(2) - 1) as f64)
        .sqrt();
    println!(
        "# {}: tpmC plain {:.0}, kept {:.0}; kept/plain by round {r:.3} (sd {sd:.3}, {} rounds)",
        spec.name(),
        mean(&plain),
        mean(&kept),
        ratios.len()
    );
}

/// One measured run on a fresh copy: (tpmC, New-Orders, measured s, writes pending at the end).
fn one(
    db: &Path,
    spec: &Spec,
    keep: bool,
    seconds: f64,
    terminals: usize,
    round: u32,
) -> (f64, u64, f64, u64) {
    let dir = std::env::temp_dir().join(format!("oltplab-crash-overhead-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("tpcc.sqlite");
    std::fs::copy(db, &copy).unwrap();
    let crash = keep.then(|| CrashCapture::new(spec));
    let vfs = Vfs::register(VfsOptions {
        trace: None,
        emulator: Some(Arc::new(Emulator::new(spec, round as u64).unwrap())),
        placed_files: Vec::new(),
        crash: crash.clone(),
    })
    .unwrap();
    let connector = SqliteConnector {
        path: copy,
        opts: SqliteOptions {
            vfs: Some(vfs.name().to_string()),
            ..SqliteOptions::default()
        },
        load_cache_bytes: 64 << 20,
        writer_lock: true,
    };
    let meta = {
        let mut c = connector.connect(Purpose::Check).unwrap();
        require_loaded(&inspect(c.as_mut()).unwrap(), "the copy").unwrap()
    };
    let cfg = DriverConfig {
        terminals,
        duration: Duration::from_secs_f64(seconds),
        warmup: Duration::from_secs(3),
        warmup_auto: false,
        keying_think: false,
        seed: round as u64,
        max_retries: 10,
        record_spans: false,
        home_warehouses: None,
        start_at: None,
        record_new_orders: keep,
        procedures: false,
    };
    let stop = AtomicBool::new(false);
    let out = drive(&connector, &meta, &cfg, &stop, &mut |_| {}, &mut |_| {}).unwrap();
    let n = out.run.tx[TxType::NewOrder.index()].count;
    let pending = crash.as_ref().map_or(0, |c| c.pending_writes());
    drop(connector);
    drop(vfs);
    let _ = std::fs::remove_dir_all(&dir);
    (
        n as f64 * 60.0 / out.run.measured_s,
        n,
        out.run.measured_s,
        pending,
    )
}
