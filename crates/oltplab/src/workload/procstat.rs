//! What the measured window cost outside the driver's threads: CPU seconds of database server
//! processes (/proc/PID/stat) and the I/O the block device under the database did
//! (/proc/diskstats).

use std::path::Path;

/// User and system CPU seconds of `pids`, summed.
pub fn pids_cpu_s(pids: &[u32]) -> (f64, f64) {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut user = 0.0;
    let mut sys = 0.0;
    for pid in pids {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name, which is in parentheses and may hold spaces.
        let Some(rest) = text.rfind(')').map(|i| &text[i + 2..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the line, 11 and 12 after the name.
        if f.len() > 12 {
            user += f[11].parse::<f64>().unwrap_or(0.0) / hz;
            sys += f[12].parse::<f64>().unwrap_or(0.0) / hz;
        }
    }
    (user, sys)
}

/// PIDs of local processes with one of these command names (an external server on this machine).
pub fn pids_named(names: &[&str]) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
            if names.contains(&comm.trim()) {
                out.push(pid);
            }
        }
    }
    out
}

/// Cumulative counters of one block device.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiskCounters {
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub written_bytes: u64,
    pub flushes: u64,
}

/// The counters of `device` (e.g. `/dev/vda` or `vda`), if /proc/diskstats lists it.
pub fn disk_counters(device: &str) -> Option<DiskCounters> {
    let name = Path::new(device).file_name()?.to_str()?.to_string();
    let text = std::fs::read_to_string("/proc/diskstats").ok()?;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 14 && f[2] == name {
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            return Some(DiskCounters {
                reads: n(3),
                read_bytes: n(5) * 512,
                writes: n(7),
                written_bytes: n(9) * 512,
                // Field 20 (kernel 5.5+): flush requests completed.
                flushes: n(18),
            });
        }
    }
    None
}

impl DiskCounters {
    pub fn since(&self, earlier: &DiskCounters) -> DiskCounters {
        DiskCounters {
            reads: self.reads.saturating_sub(earlier.reads),
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            writes: self.writes.saturating_sub(earlier.writes),
            written_bytes: self.written_bytes.saturating_sub(earlier.written_bytes),
            flushes: self.flushes.saturating_sub(earlier.flushes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's user + system CPU seconds by getrusage, the kernel's other account of it.
    fn rusage_cpu_s() -> f64 {
        // SAFETY: getrusage writes into the zeroed struct it is given.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) }, 0);
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        t(ru.ru_utime) + t(ru.ru_stime)
    }

    #[test]
    fn own_cpu_is_visible() {
        let me = std::process::id();
        let (u0, s0) = pids_cpu_s(&[me]);
        let r0 = rusage_cpu_s();
        // Burn 0.3 s of CPU (not of wall time: on a busy machine the two differ).
        let mut x = 0u64;
        while rusage_cpu_s() - r0 < 0.3 {
            for i in 0..100_000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            }
        }
        std::hint::black_box(x);
        let (u1, s1) = pids_cpu_s(&[me]);
        let seen = (u1 + s1) - (u0 + s0);
        let spent = rusage_cpu_s() - r0;
        // /proc counts in clock ticks (10 ms at 100 Hz): a few ticks either way, and the other
        // test threads of this binary may burn CPU meanwhile (more, never less).
        assert!(
            seen >= spent - 0.05,
            "/proc saw {seen:.3} s of {spent:.3} s"
        );
        assert!(u1 >= u0 && s1 >= s0);
        // A process that is gone adds nothing.
        let (ug, sg) = pids_cpu_s(&[u32::MAX]);
        assert_eq!((ug, sg), (0.0, 0.0));
        assert!(pids_named(&["no-such-process-name"]).is_empty());
        assert!(disk_counters("/dev/does-not-exist").is_none());
    }
}
