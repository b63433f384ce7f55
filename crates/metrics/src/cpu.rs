//! CPU time from getrusage, so every result can say what the tool itself cost.

use serde::{Deserialize, Serialize};

/// User and system CPU seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTime {
    pub user_s: f64,
    pub sys_s: f64,
}

impl CpuTime {
    /// CPU time of the calling thread so far.
    pub fn thread() -> Self {
        rusage(libc::RUSAGE_THREAD)
    }

    /// CPU time of the whole process so far (all threads, including io_uring's worker threads).
    pub fn process() -> Self {
        rusage(libc::RUSAGE_SELF)
    }

    pub fn total_s(&self) -> f64 {
        self.user_s + self.sys_s
    }

    pub fn since(&self, earlier: &CpuTime) -> CpuTime {
        CpuTime {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            sys_s: (self.sys_s - earlier.sys_s).max(0.0),
        }
    }

    pub fn plus(&self, other: &CpuTime) -> CpuTime {
        CpuTime {
            user_s: self.user_s + other.user_s,
            sys_s: self.sys_s + other.sys_s,
        }
    }
}

fn rusage(who: libc::c_int) -> CpuTime {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we own; RUSAGE_SELF/THREAD are always valid.
    unsafe { libc::getrusage(who, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    CpuTime {
        user_s: secs(usage.ru_utime),
        sys_s: secs(usage.ru_stime),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_cpu_time() {
        let before = CpuTime::thread();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed().as_millis() < 50 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let used = CpuTime::thread().since(&before);
        assert!(used.total_s() > 0.02, "{used:?}");
        assert!(CpuTime::process().total_s() >= used.total_s());
    }
}
