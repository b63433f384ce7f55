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
        // Spin until the thread has used 20 ms of CPU: on a busy machine that takes longer than
        // 20 ms of wall time, but a clock that does not count it never gets there.
        let before = CpuTime::thread();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut used = CpuTime::default();
        while used.total_s() <= 0.02 && start.elapsed().as_secs() < 20 {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            used = CpuTime::thread().since(&before);
        }
        std::hint::black_box(x);
        assert!(
            used.total_s() > 0.02,
            "{used:?} after {:?}",
            start.elapsed()
        );
        assert!(CpuTime::process().total_s() >= used.total_s());
    }
}
