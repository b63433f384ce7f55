//! Turns measured points into the `device` summary: per point, per profile, and over the whole run.

use oltplab_io::runner::{OpTotals, PointOutcome};
use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::schema::{
    geomean, CpuSummary, DeviceSummary, FlushSummary, OpSummary, ProfileResult, SweepPoint,
};
use oltplab_metrics::{LatencyHistogram, LatencyNs};

use super::config::{DeviceConfig, Workload};

/// Totals of a set of points: one point, one profile's sweep, or the whole run.
#[derive(Default, Clone)]
pub struct Totals {
    pub read: OpTotals,
    pub write: OpTotals,
    pub flush: OpTotals,
    pub measured_s: f64,
    pub cpu: CpuTime,
    pub process_cpu: CpuTime,
}

impl Totals {
    pub fn from_point(p: &PointOutcome) -> Self {
        Self {
            read: p.read.clone(),
            write: p.write.clone(),
            flush: p.flush.clone(),
            measured_s: p.measured.as_secs_f64(),
            cpu: p.jobs_cpu,
            process_cpu: p.process_cpu,
        }
    }

    pub fn add(&mut self, other: &Totals) {
        self.read.ios += other.read.ios;
        self.read.bytes += other.read.bytes;
        self.read.latency.add(&other.read.latency);
        self.write.ios += other.write.ios;
        self.write.bytes += other.write.bytes;
        self.write.latency.add(&other.write.latency);
        self.flush.ios += other.flush.ios;
        self.flush.latency.add(&other.flush.latency);
        self.measured_s += other.measured_s;
        self.cpu = self.cpu.plus(&other.cpu);
        self.process_cpu = self.process_cpu.plus(&other.process_cpu);
    }

    pub fn ios(&self) -> u64 {
        self.read.ios + self.write.ios
    }

    pub fn iops(&self) -> f64 {
        rate(self.ios() as f64, self.measured_s)
    }

    pub fn bw_bytes(&self) -> f64 {
        rate((self.read.bytes + self.write.bytes) as f64, self.measured_s)
    }

    pub fn latency(&self) -> LatencyNs {
        let mut all = LatencyHistogram::new();
        all.add(&self.read.latency);
        all.add(&self.write.latency);
        all.stats()
    }

    pub fn op(&self, op: &OpTotals) -> OpSummary {
        OpSummary {
            ios: op.ios,
            bytes: op.bytes,
            iops: rate(op.ios as f64, self.measured_s),
            bw_bytes: rate(op.bytes as f64, self.measured_s),
            lat_ns: op.latency.stats(),
        }
    }

    /// The flushes, if there were any.
    pub fn flush_summary(&self) -> Option<FlushSummary> {
        (self.flush.ios > 0).then(|| FlushSummary {
            count: self.flush.ios,
            per_s: rate(self.flush.ios as f64, self.measured_s),
            lat_ns: self.flush.latency.stats(),
        })
    }

    pub fn cpu_summary(&self, jobs: u32) -> CpuSummary {
        CpuSummary {
            jobs: self.cpu,
            process: self.process_cpu,
            jobs_utilisation: rate(self.cpu.total_s(), self.measured_s * jobs as f64),
            ios_per_cpu_s: rate(self.ios() as f64, self.process_cpu.total_s()),
        }
    }

    pub fn sweep_point(&self, qd: u32, jobs: u32) -> SweepPoint {
        SweepPoint {
            qd,
            iops: self.iops(),
            bw_bytes: self.bw_bytes(),
            lat_ns: self.latency(),
            read: self.op(&self.read),
            write: self.op(&self.write),
            flush: self.flush_summary(),
            measured_s: self.measured_s,
            cpu: self.cpu_summary(jobs),
        }
    }
}

fn rate(amount: f64, per: f64) -> f64 {
    if per > 0.0 {
        amount / per
    } else {
        0.0
    }
}

/// One measured point of the plan.
pub struct MeasuredPoint {
    pub workload: usize,
    pub qd: u32,
    pub totals: Totals,
}

/// The summary of everything measured so far (the run may still be going, or was interrupted).
pub fn build(config: &DeviceConfig, ramp_s: f64, points: &[MeasuredPoint]) -> DeviceSummary {
    let mut run = Totals::default();
    for p in points {
        run.add(&p.totals);
    }
    let sweep_of = |workload: usize| -> Vec<SweepPoint> {
        points
            .iter()
            .filter(|p| p.workload == workload)
            .map(|p| p.totals.sweep_point(p.qd, config.jobs))
            .collect()
    };
    let multi_point =
        points.len() > 1 || config.sweep || config.workloads.iter().any(|w| w.name.is_some());
    // The whole run's figures are those of one big point; the qd field is not used here.
    let all = run.sweep_point(0, config.jobs);
    let mut summary = DeviceSummary {
        iops: all.iops,
        bw_bytes: all.bw_bytes,
        lat_ns: all.lat_ns,
        read: all.read,
        write: all.write,
        flush: all.flush,
        measured_s: all.measured_s,
        ramp_s,
        cpu: all.cpu,
        sweep: None,
        geomean_iops: None,
        profiles: None,
    };
    if multi_point {
        let iops: Vec<f64> = points.iter().map(|p| p.totals.iops()).collect();
        summary.geomean_iops = Some(geomean(&iops));
    }
    if config.workloads.len() == 1 && config.sweep {
        summary.sweep = Some(sweep_of(0));
    }
    if config.workloads.iter().any(|w| w.name.is_some()) {
        summary.profiles = Some(
            config
                .workloads
                .iter()
                .enumerate()
                .filter(|(i, _)| points.iter().any(|p| p.workload == *i))
                .map(|(i, w)| {
                    profile_result(w, &sweep_of(i), points.iter().filter(|p| p.workload == i))
                })
                .collect(),
        );
    }
    summary
}

fn profile_result<'a>(
    w: &Workload,
    sweep: &[SweepPoint],
    points: impl Iterator<Item = &'a MeasuredPoint>,
) -> ProfileResult {
    let mut t = Totals::default();
    for p in points {
        t.add(&p.totals);
    }
    let all = t.sweep_point(0, 1);
    ProfileResult {
        name: w.name.clone().unwrap_or_default(),
        block_size_bytes: w.mix.block_size_bytes as u64,
        read_pct: w.mix.read_pct,
        random_pct: w.mix.random_pct,
        iops: all.iops,
        bw_bytes: all.bw_bytes,
        lat_ns: all.lat_ns,
        read: all.read,
        write: all.write,
        flush: all.flush,
        sweep: sweep.to_vec(),
        geomean_iops: geomean(&sweep.iter().map(|s| s.iops).collect::<Vec<_>>()),
    }
}
