//! What every workload's run samples at the edges of its measured window (this process's CPU, the
//! database processes' CPU, the device's counters) and the figures made of two such samples.

use oltplab_metrics::cpu::CpuTime;

use crate::workload::procstat::DiskCounters;
use crate::workload::target::Engine;
use oltplab_schema::{IoSummary, TpccCpu};

/// `summary.io` from the device's counters (the whole device), when no capture gives the
/// engine's own I/O.
pub fn device_io(device: Option<&str>, disk: &DiskCounters, measured_s: f64) -> IoSummary {
    match device {
        Some(d) => IoSummary {
            reads: disk.reads,
            writes: disk.writes,
            syncs: disk.flushes,
            read_bytes: disk.read_bytes,
            written_bytes: disk.written_bytes,
            iops: (disk.reads + disk.writes) as f64 / measured_s,
            source: format!("diskstats:{}", d.trim_start_matches("/dev/")),
            ..Default::default()
        },
        None => IoSummary {
            source: "none".into(),
            ..Default::default()
        },
    }
}

/// CPU at the window's edges: this process's, and the database processes' (user, system).
pub type Edge = (CpuTime, (f64, f64), DiskCounters);

/// The database's and the driver's CPU in the window, the emulator's spin taken out of the
/// database's.
pub fn split_cpu(
    engine: Engine,
    in_tx_cpu: CpuTime,
    [start, end]: [&Edge; 2],
    spin_s: f64,
) -> TpccCpu {
    let process = end.0.since(&start.0);
    if engine == Engine::Sqlite {
        // The engine runs on the terminals' threads: its CPU is their time inside transactions.
        let inside = in_tx_cpu;
        TpccCpu {
            db_user_s: (inside.user_s - spin_s).max(0.0),
            db_sys_s: inside.sys_s,
            driver_user_s: (process.user_s - inside.user_s).max(0.0),
            driver_sys_s: (process.sys_s - inside.sys_s).max(0.0),
            emulator_spin_s: spin_s,
            ..Default::default()
        }
    } else {
        TpccCpu {
            db_user_s: ((end.1 .0 - start.1 .0).max(0.0) - spin_s).max(0.0),
            db_sys_s: (end.1 .1 - start.1 .1).max(0.0),
            driver_user_s: process.user_s,
            driver_sys_s: process.sys_s,
            emulator_spin_s: spin_s,
            ..Default::default()
        }
    }
}
