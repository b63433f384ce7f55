//! `oltplab device --emulate`: the emulated device, its RAM backing, the model's own figures for each
//! point, and how closely the run followed the model.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oltplab_core::units::format_count;
use oltplab_core::Result;
use oltplab_core::{interrupt, safety};
use oltplab_devmodel::sim::ClosedLoop;
use oltplab_devmodel::{now_ns, Emulator, Fidelity, Spec};
use oltplab_io::job::Mix;
use oltplab_metrics::{Warning, WarningKind};

use super::config::DeviceConfig;
use oltplab_schema::{Backing, EmulationPoint, EmulationSummary};

/// Where RAM-backed targets live: tmpfs, so the data is in memory.
const SHM_DIR: &str = "/dev/shm";
/// Realised IOPS this far below the model's closed-loop IOPS means the emulation saturated first.
/// Wider than the latency bound: the model's figure comes from its own sample of random I/Os.
const SATURATED_PCT: f64 = 10.0;
/// Points with fewer I/Os are not judged: an HDD's service time varies by a third from one I/O to
/// the next, so a few hundred of them can differ from the model's long run by that much.
const SATURATED_MIN_IOS: u64 = 1000;
/// I/Os the model runs in virtual time to predict a point's IOPS (a few tens of milliseconds).
const MODEL_IOS: u64 = 40_000;

/// The emulated device of `oltplab device --emulate`, in this process (a workload run's
/// `--emulate` is [`crate::emulate::given::Emulation`], through the shim).
pub struct EmulatedDevice {
    pub emulator: Arc<Emulator>,
    pub summary: EmulationSummary,
    spec: Spec,
    seed: u64,
    region_bytes: u64,
    /// The device as it was when the current point started, and when that was.
    at_start: Option<(Emulator, u64)>,
}

impl EmulatedDevice {
    pub fn new(config: &DeviceConfig) -> Result<Option<EmulatedDevice>> {
        let (Some(spec), Some(backing)) = (&config.emulate, config.backing) else {
            return Ok(None);
        };
        let emulator = Emulator::new(spec, config.seed)?;
        // The region stands for the whole device, as S1 measured its raw devices.
        emulator.set_span_bytes(config.size_bytes);
        Ok(Some(EmulatedDevice {
            emulator: Arc::new(emulator),
            summary: EmulationSummary {
                backing: Some(backing),
                ..EmulationSummary::new(spec.name(), Fidelity::default())
            },
            spec: spec.clone(),
            seed: config.seed,
            region_bytes: config.size_bytes,
            at_start: None,
        }))
    }

    /// Starts a point: clears the fidelity counters and keeps a copy of the device as it is, so that
    /// the model's own figures for the point start from the same state (a write backlog left by
    /// the points before, warm caches).
    pub fn start_point(&mut self) {
        self.emulator.reset_fidelity();
        self.at_start = Some((self.emulator.snapshot(), now_ns()));
    }

    /// The model's closed-loop IOPS and mean latency for a mix at `in_flight` I/Os, from the
    /// device's state at the start of the point.
    fn model(&self, mix: &Mix, in_flight: u32) -> Result<(f64, f64)> {
        let (fresh, start_ns);
        let device = match &self.at_start {
            Some((copy, t)) => {
                start_ns = *t;
                copy
            }
            None => {
                fresh = Emulator::new(&self.spec, self.seed)?;
                fresh.set_span_bytes(self.region_bytes);
                start_ns = 1_000_000_000;
                &fresh
            }
        };
        let r = ClosedLoop {
            block_size_bytes: mix.block_size_bytes as u64,
            read_pct: mix.read_pct,
            random_pct: mix.random_pct,
            queue_depth: in_flight,
            ios: MODEL_IOS,
            region_bytes: self.region_bytes,
            stroke_bytes: self.region_bytes,
            seed: self.seed,
            start_ns,
            flush_every: mix.flush.map_or(0, |f| f.every_writes),
        }
        .run_on(device);
        Ok((r.iops, r.lat_ns_mean))
    }

    /// Records a measured point: its fidelity (since [`EmulatedDevice::start_point`]) and the model's
    /// figures for it.
    pub fn finish_point(
        &mut self,
        profile: Option<String>,
        qd: u32,
        jobs: u32,
        mix: &Mix,
        iops: f64,
    ) -> Result<()> {
        let fidelity = self.emulator.fidelity();
        let (model_iops, model_lat_ns_mean) = self.model(mix, qd * jobs)?;
        self.summary.points.push(EmulationPoint {
            profile,
            qd,
            iops,
            model_iops,
            model_lat_ns_mean,
            fidelity,
        });
        self.summary.fidelity = combine(self.summary.points.iter().map(|p| &p.fidelity));
        Ok(())
    }

    /// Off-target warnings over the points so far: realised latency off the modelled, or IOPS short
    /// of the model's bound (the emulation could not keep up).
    pub fn warnings(&self) -> Vec<Warning> {
        let label = |p: &EmulationPoint| {
            format!("{} QD {}", p.profile.as_deref().unwrap_or("the job"), p.qd)
        };
        let mut out = Vec::new();
        let late: Vec<String> = self
            .summary
            .points
            .iter()
            .filter_map(|p| Some(format!("{}: {}", label(p), p.fidelity.problem()?)))
            .collect();
        if !late.is_empty() {
            out.push(Warning::new(
                WarningKind::EmulationOffTarget,
                format!(
                    "the emulation did not keep the model's latencies at {}: the backing store or a busy CPU could not keep the modelled times; use --backing ram, fewer --jobs, or a quieter machine",
                    shorten(&late)
                ),
            ));
        }
        let short: Vec<String> = self
            .summary
            .points
            .iter()
            .filter(|p| {
                p.fidelity.ios >= SATURATED_MIN_IOS
                    && p.iops < p.model_iops * (1.0 - SATURATED_PCT / 100.0)
            })
            .map(|p| {
                format!(
                    "{} ({} of {} IOPS)",
                    label(p),
                    format_count(p.iops),
                    format_count(p.model_iops)
                )
            })
            .collect();
        if !short.is_empty() {
            out.push(Warning::new(
                WarningKind::EmulationOffTarget,
                format!(
                    "the emulation saturated before the model did at {}: the figures show this machine's limit, not the device's; use --backing ram or a lower queue depth",
                    shorten(&short)
                ),
            ));
        }
        out
    }
}

/// One line on the emulated device of a run and how closely it followed the model.
pub fn summary_line(summary: &EmulationSummary) -> String {
    let f = &summary.fidelity;
    format!(
        "emulated {} ({} backing): {f}",
        summary.spec,
        match summary.backing {
            Some(Backing::Ram) => "RAM",
            Some(Backing::Disk) => "disk",
            Some(Backing::None) | None => "no",
        },
    )
}

fn shorten(items: &[String]) -> String {
    const SHOWN: usize = 4;
    if items.len() <= SHOWN {
        items.join(", ")
    } else {
        format!(
            "{} and {} more points",
            items[..SHOWN].join(", "),
            items.len() - SHOWN
        )
    }
}

/// Fidelity over several points: I/O-weighted means and shares, the highest percentiles (an
/// upper bound), the point furthest off at p99, the spin over the points' windows.
fn combine<'a>(points: impl Iterator<Item = &'a Fidelity>) -> Fidelity {
    let mut out = Fidelity::default();
    let (mut m, mut r, mut wake, mut abs, mut late, mut early, mut inversion) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut emulated, mut emulated_late, mut queue, mut queue_late) = (0.0, 0.0, 0.0, 0.0);
    for f in points {
        let n = f.ios as f64;
        out.ios += f.ios;
        m += f.modelled_lat_ns_mean * n;
        r += f.realised_lat_ns_mean * n;
        wake += f.wake_late_ns_mean * n;
        emulated += f.emulated_lat_ns_mean * n;
        emulated_late += f.emulated_late_pct * n;
        queue += f.cpu_queue_ns_mean * n;
        queue_late += f.cpu_queue_late_pct * n;
        abs += f.abs_error_ns_mean * n;
        late += f.late_pct * n;
        early += f.early_pct * n;
        inversion += f.order_inversion_ns_mean * f.order_inversions as f64;
        out.order_inversions += f.order_inversions;
        out.spin_cpu_s += f.spin_cpu_s;
        out.spin_machine_pct += f.spin_machine_pct * f.window_s;
        out.window_s += f.window_s;
        for (to, from) in [
            (&mut out.modelled_lat_ns_p50, f.modelled_lat_ns_p50),
            (&mut out.modelled_lat_ns_p90, f.modelled_lat_ns_p90),
            (&mut out.modelled_lat_ns_p99, f.modelled_lat_ns_p99),
            (&mut out.modelled_lat_ns_p999, f.modelled_lat_ns_p999),
            (&mut out.realised_lat_ns_p50, f.realised_lat_ns_p50),
            (&mut out.realised_lat_ns_p90, f.realised_lat_ns_p90),
            (&mut out.realised_lat_ns_p99, f.realised_lat_ns_p99),
            (&mut out.realised_lat_ns_p999, f.realised_lat_ns_p999),
            (&mut out.emulated_lat_ns_p50, f.emulated_lat_ns_p50),
            (&mut out.emulated_lat_ns_p90, f.emulated_lat_ns_p90),
            (&mut out.emulated_lat_ns_p99, f.emulated_lat_ns_p99),
            (&mut out.emulated_lat_ns_p999, f.emulated_lat_ns_p999),
            (&mut out.wake_late_ns_max, f.wake_late_ns_max),
        ] {
            *to = (*to).max(from);
        }
        if f.p99_off_pct.abs() > out.p99_off_pct.abs() {
            out.p99_off_pct = f.p99_off_pct;
        }
        if f.emulated_p99_off_pct.abs() > out.emulated_p99_off_pct.abs() {
            out.emulated_p99_off_pct = f.emulated_p99_off_pct;
        }
        out.wake_early_ns = f.wake_early_ns;
        for k in &f.realised_by_kind {
            match out.realised_by_kind.iter_mut().find(|o| o.kind == k.kind) {
                Some(o) => {
                    o.ios += k.ios;
                    o.realised_lat_ns_p50 = o.realised_lat_ns_p50.max(k.realised_lat_ns_p50);
                    o.realised_lat_ns_p90 = o.realised_lat_ns_p90.max(k.realised_lat_ns_p90);
                    o.realised_lat_ns_p99 = o.realised_lat_ns_p99.max(k.realised_lat_ns_p99);
                }
                None => out.realised_by_kind.push(k.clone()),
            }
        }
    }
    if out.ios > 0 {
        let n = out.ios as f64;
        out.modelled_lat_ns_mean = m / n;
        out.realised_lat_ns_mean = r / n;
        out.wake_late_ns_mean = wake / n;
        out.abs_error_ns_mean = abs / n;
        out.late_pct = late / n;
        out.early_pct = early / n;
        out.emulated_lat_ns_mean = emulated / n;
        out.emulated_late_pct = emulated_late / n;
        out.cpu_queue_ns_mean = queue / n;
        out.cpu_queue_late_pct = queue_late / n;
        if out.modelled_lat_ns_mean > 0.0 {
            let off = |x: f64| (x - out.modelled_lat_ns_mean) / out.modelled_lat_ns_mean * 100.0;
            out.off_pct = off(out.realised_lat_ns_mean);
            out.emulated_off_pct = off(out.emulated_lat_ns_mean);
        }
    }
    if out.window_s > 0.0 {
        out.spin_machine_pct /= out.window_s;
    }
    if out.order_inversions > 0 {
        out.order_inversion_ns_mean = inversion / out.order_inversions as f64;
    }
    out
}

/// A directory in /dev/shm for a RAM-backed target, removed with everything in it when dropped
/// (also when the run fails or is interrupted).
pub struct RamDir {
    path: PathBuf,
    /// Registered for a quick quit (a second Ctrl-C).
    _quit: interrupt::Guard,
}

impl RamDir {
    pub fn create() -> Result<RamDir> {
        remove_stale();
        let path = Path::new(SHM_DIR).join(format!("{RAM_DIR_PREFIX}{}", std::process::id()));
        // A directory left by a crashed run with the same pid is ours to reuse (it is marked).
        safety::ensure_own_dir(&path, false)?;
        let quit = interrupt::guard_path(&path);
        Ok(RamDir { path, _quit: quit })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

const RAM_DIR_PREFIX: &str = "oltplab-emulate-";

/// Removes RAM backings left by runs that were killed (SIGKILL, SIGTERM): oltplab-marked directories
/// named after a process that no longer exists.
fn remove_stale() {
    let Ok(entries) = std::fs::read_dir(SHM_DIR) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(RAM_DIR_PREFIX))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone && safety::is_own_dir(&entry.path()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Drop for RamDir {
    fn drop(&mut self) {
        if safety::is_own_dir(&self.path) {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
