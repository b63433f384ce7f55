//! The run scaffold every workload's `oltplab run` shares, in the order a run goes through it:
//! the capture (`--emulate`, `--trace`), the database opened for the run, the output directory,
//! samples at the measured window's edges, a progress line per report interval, what the capture
//! adds to the summary, and the result saved and printed (`--json`, `--out`). A workload's own
//! run.rs keeps only its driver, its figures, its warnings and its lines.

use std::path::{Path, PathBuf};

use oltplab_core::{Error, Result};
use oltplab_metrics::cpu::CpuTime;
use oltplab_metrics::WarningKind;
use serde::Serialize;

use crate::output;
use oltplab_workloads::driver;

use crate::emulate::{BackingChoice, Emulation};
use crate::workload::capture::{Capture, CaptureRequest, RunEnd};
use crate::workload::edges::{device_io, split_cpu, Edge};
use crate::workload::procstat::{self, DiskCounters};
use crate::workload::target::{self, Db, DbSpec, Engine, Open};
use oltplab_schema::{
    EmulationSummary, IoSummary, ResultDoc, TpccCpu, Warning, WindowFigures, OTHER_IO,
};

/// A run's `--emulate`, `--trace` and `--backing` (flattened into its config's JSON).
#[derive(Clone, Debug, Serialize)]
pub struct CaptureConfig {
    /// The emulated device the database runs on.
    pub emulate: Option<Emulation>,
    /// Where the database's own I/O of the measured window is captured.
    pub trace: Option<PathBuf>,
    /// Managed servers under `--emulate`: auto, ram or disk.
    pub backing: BackingChoice,
}

impl CaptureConfig {
    /// Neither emulation nor trace.
    pub fn none() -> CaptureConfig {
        CaptureConfig {
            emulate: None,
            trace: None,
            backing: BackingChoice::Auto,
        }
    }

    /// The capture these options ask for, if any (`force`: the trace may replace a file oltplab
    /// did not write).
    pub fn start(&self, db: &DbSpec, seed: u64, force: bool) -> Result<Option<Capture>> {
        Capture::new(&CaptureRequest {
            db,
            emulate: self.emulate.as_ref(),
            trace: self.trace.as_deref(),
            backing: self.backing,
            seed,
            force,
        })
    }
}

/// Where a run's result goes and how much it prints: `--json`, `--out`, `--force` (flattened into
/// its config's JSON), and whether it saves at all (a study's or a ramp's step does not).
#[derive(Clone, Debug, Serialize)]
pub struct OutputConfig {
    /// Also write the result here; `-` for standard output.
    pub json: Option<PathBuf>,
    /// The output directory; None: ./oltplab-results/WORKLOAD-<time>.
    pub out: Option<PathBuf>,
    /// Write into an output directory or --json file oltplab did not create.
    pub force: bool,
    /// Save result.json into the output directory.
    #[serde(skip)]
    pub save: bool,
    #[serde(skip)]
    pub quiet: bool,
}

impl OutputConfig {
    /// A command's own run: saved, as loud as the command line says.
    pub fn saved(json: Option<PathBuf>, out: Option<PathBuf>, force: bool) -> OutputConfig {
        OutputConfig {
            json,
            out,
            force,
            save: true,
            quiet: output::quiet(),
        }
    }

    /// A step of a larger run (a ramp's): the larger run saves, the step does not.
    pub fn step(&self) -> OutputConfig {
        OutputConfig {
            json: None,
            save: false,
            ..self.clone()
        }
    }

    /// The run's output directory, when it saves. Call it after the run's checks, so that a
    /// refused run leaves none behind.
    pub fn out_dir(&self, workload: &str, started_at: &str) -> Result<Option<PathBuf>> {
        if !self.save {
            return Ok(None);
        }
        output::prepare_out_dir(self.out.as_deref(), workload, started_at, self.force).map(Some)
    }

    /// Saves the result (when there is an output directory) and prints its summary, or only
    /// its warnings when quiet; then returns `failure` (a server that died, commits a cluster
    /// lost), if any, as the run's error: what was measured is kept either way.
    pub fn publish<S: Serialize, I: Serialize>(
        &self,
        doc: &ResultDoc<S, I>,
        out_dir: Option<&Path>,
        print_summary: impl FnOnce(&ResultDoc<S, I>, Option<&Path>),
        failure: Option<Error>,
    ) -> Result<()> {
        if let Some(dir) = out_dir {
            output::save(doc, dir, self.json.as_deref())?;
        }
        if self.quiet {
            output::print_warnings(&doc.warnings);
        } else {
            print_summary(doc, out_dir);
        }
        failure.map_or(Ok(()), Err)
    }
}

/// Opens the loaded database for a run of `connections` connections, through the capture's VFS
/// (SQLite) or with its shim (a managed server); `caller_vfs` is a VFS of the caller's that
/// already captures (a study's lead).
pub fn open_for_run(
    spec: &DbSpec,
    connections: usize,
    capture: Option<&Capture>,
    caller_vfs: Option<String>,
) -> Result<Db> {
    target::open_with_nodes(
        spec,
        Open::Existing,
        connections,
        capture.and_then(Capture::sqlite_vfs).or(caller_vfs),
        capture.map(Capture::server_env).unwrap_or_default(),
        capture.map(Capture::node_envs).unwrap_or_default(),
    )
}

/// The samples at the measured window's edges: this process's CPU, the database processes' CPU
/// and the device's counters, taken at the instant the driver reports; the capture's window is
/// opened and closed there too.
pub struct EdgeSamples<'a> {
    db: &'a Db,
    device: Option<&'a str>,
    capture: Option<&'a Capture>,
    /// At the window's start and end.
    pub edges: [Edge; 2],
}

impl<'a> EdgeSamples<'a> {
    pub fn new(db: &'a Db, device: Option<&'a str>, capture: Option<&'a Capture>) -> Self {
        EdgeSamples {
            db,
            device,
            capture,
            edges: [(CpuTime::process(), (0.0, 0.0), DiskCounters::default()); 2],
        }
    }

    /// The window starts (`start`) or ends now.
    pub fn take(&mut self, start: bool) {
        let sample = (
            CpuTime::process(),
            procstat::pids_cpu_s(&self.db.server_pids()),
            self.device
                .and_then(procstat::disk_counters)
                .unwrap_or_default(),
        );
        if let Some(c) = self.capture {
            if start {
                c.measure_start();
            } else {
                c.measure_end();
            }
        }
        self.edges[usize::from(!start)] = sample;
    }

    /// The window is over: its edges, for [`WindowEdges::figures`] once the server stopped.
    pub fn done(self) -> WindowEdges {
        WindowEdges {
            engine: self.db.engine,
            device: self.device.map(str::to_string),
            edges: self.edges,
        }
    }
}

/// The samples at a measured window's edges, with what reading them needs.
pub struct WindowEdges {
    engine: Engine,
    /// The device whose counters were read.
    device: Option<String>,
    edges: [Edge; 2],
}

/// A progress line per report interval from the driver's seconds (none when quiet).
pub struct IntervalLines<S, F: Fn(&[S]) -> String> {
    pending: Vec<S>,
    every: usize,
    quiet: bool,
    line: F,
}

impl<S: Clone, F: Fn(&[S]) -> String> IntervalLines<S, F> {
    /// A line every `report_interval_s` seconds (at least one), made by `line`.
    pub fn new(report_interval_s: f64, quiet: bool, line: F) -> Self {
        IntervalLines {
            pending: Vec::new(),
            every: report_interval_s.max(1.0) as usize,
            quiet,
            line,
        }
    }

    /// One second of the window.
    pub fn second(&mut self, s: &S) {
        if self.quiet {
            return;
        }
        self.pending.push(s.clone());
        if self.pending.len() == self.every {
            eprintln!("{}", (self.line)(&self.pending));
            self.pending.clear();
        }
    }

    /// The window is over: the line of the seconds left.
    pub fn finish(&mut self) {
        if !self.quiet && !self.pending.is_empty() {
            eprintln!("{}", (self.line)(&self.pending));
            self.pending.clear();
        }
    }
}

/// What a capture adds to a run's summary.
struct CaptureFigures {
    /// The engine's own I/O of the window (the device's when there was no capture).
    pub io: IoSummary,
    pub emulation: Option<EmulationSummary>,
    pub warnings: Vec<Warning>,
    /// CPU the emulator spent spinning to deadlines inside the database's threads.
    pub spin_s: f64,
}

/// Closes the capture, if any (after the connections closed and a managed server stopped);
/// without one, `device_io` stands.
fn finish_capture(
    capture: Option<Capture>,
    device_io: IoSummary,
    end: &RunEnd,
) -> Result<CaptureFigures> {
    let Some(c) = capture else {
        return Ok(CaptureFigures {
            io: device_io,
            emulation: None,
            warnings: Vec::new(),
            spin_s: 0.0,
        });
    };
    let (io, warnings, emulation) = c.finish(end)?;
    Ok(CaptureFigures {
        io,
        spin_s: emulation.as_ref().map_or(0.0, |e| e.fidelity.spin_cpu_s),
        emulation,
        warnings,
    })
}

/// Each measured second mapped with the time it covers (the first and, after Ctrl-C, the last
/// may be partial): the rates of a run's `intervals`.
pub fn per_second<T>(seconds: &[driver::Second], f: impl Fn(&driver::Second, f64) -> T) -> Vec<T> {
    seconds
        .iter()
        .scan(0.0, |prev, s| {
            let dt = (s.t_s - *prev).max(1e-9);
            *prev = s.t_s;
            Some(f(s, dt))
        })
        .collect()
}

impl WindowEdges {
    /// Fills `summary`'s window figures, once the connections closed and a managed server
    /// stopped: the I/O (the capture's, else the device's counters), the emulation's figures, and
    /// the CPU split between the database and the driver (the emulator's spin taken out), on a
    /// machine of `cores`. `kinds`: each transaction kind's trace tag and name, in the driver's
    /// index order. Returns the capture's warnings.
    pub fn figures(
        self,
        capture: Option<Capture>,
        run: &driver::Outcome,
        kinds: &[(u8, &'static str)],
        cores: usize,
        summary: &mut impl WindowFigures,
    ) -> Result<Vec<Warning>> {
        let measured_s = run.measured_s.max(1e-9);
        let tx_of_tag = |tag: u8| match kinds.iter().position(|k| k.0 == tag) {
            Some(i) => (kinds[i].1.to_string(), run.tx[i].count),
            None => (OTHER_IO.to_string(), 0),
        };
        let [start, end] = &self.edges;
        let captured = finish_capture(
            capture,
            device_io(self.device.as_deref(), &end.2.since(&start.2), measured_s),
            &RunEnd {
                measured_s: run.measured_s,
                spans: &run.spans,
                tx_of_tag: &tx_of_tag,
                terminals_without_backend: run.terminals_without_backend,
            },
        )?;
        let (io, emulation, cpu) = summary.window_mut();
        *cpu = split_cpu(self.engine, run.in_tx_cpu, [start, end], captured.spin_s);
        cpu.set_shares(measured_s, cores);
        *io = captured.io;
        *emulation = captured.emulation;
        Ok(captured.warnings)
    }
}

/// A run that Ctrl-C stopped before its window's end: its figures cover only what ran.
pub fn interrupted_warning(interrupted: bool, measured_s: f64, duration_s: f64) -> Option<Warning> {
    interrupted.then(|| {
        Warning::new(
            WarningKind::Interrupted,
            format!(
                "stopped by Ctrl-C after {measured_s:.1} s of the {duration_s:.0} s measured window; the figures cover only that"
            ),
        )
    })
}

/// The warm-up as a run's first line says it: fixed, or (`auto`) until `rate` is steady.
pub fn warmup_said(auto: bool, warmup_s: f64, rate: &str) -> String {
    if auto {
        format!("a warm-up until {rate} is steady (at most {warmup_s:.0} s)")
    } else {
        format!("{warmup_s:.0} s warm-up")
    }
}

/// `--warmup auto` that reached its limit before the rate was steady: the window may open on a
/// rate still moving.
pub fn unsteady_warmup_warning(warmup_steady: Option<bool>, warmup_s: f64) -> Option<Warning> {
    (warmup_steady == Some(false)).then(|| {
        Warning::new(
            WarningKind::NotSteady,
            format!(
                "the rate was not steady after the longest warm-up ({warmup_s:.0} s): the figures may still be moving"
            ),
        )
    })
}

/// A driver that used more than half a core in the window competes with the database on a
/// small machine; `advice` ends the sentence (what to do about it), if there is any.
pub fn driver_cpu_warning(cpu: &TpccCpu, measured_s: f64, advice: &str) -> Option<Warning> {
    let driver_cores = (cpu.driver_user_s + cpu.driver_sys_s) / measured_s.max(1e-9);
    (driver_cores > 0.5).then(|| {
        Warning::new(
            WarningKind::CpuBound,
            format!("the driver used {driver_cores:.2} cores: on a small machine it competes with the database{advice}"),
        )
    })
}

/// The summary's line of where the window's CPU went.
pub fn print_cpu(cpu: &TpccCpu) {
    eprintln!(
        "CPU: database {:.1} s, driver {:.1} s ({:.1} % of the run's CPU), machine {:.0} % busy",
        cpu.db_user_s + cpu.db_sys_s,
        cpu.driver_user_s + cpu.driver_sys_s,
        100.0 * cpu.driver_share,
        100.0 * cpu.utilisation
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A partial first second (the window opened mid-second) and a partial last one (Ctrl-C)
    /// count at their own length, the whole ones at a second.
    #[test]
    fn each_second_counts_the_time_it_covers() {
        let second = |t_s: f64, n: u64| driver::Second {
            t_s,
            counts: vec![n],
            ..driver::Second::default()
        };
        let seconds = [
            second(0.5, 50),
            second(1.5, 100),
            second(2.5, 100),
            second(2.75, 25),
        ];
        let rates = per_second(&seconds, |s, dt| s.counts[0] as f64 / dt);
        assert_eq!(rates, [100.0, 100.0, 100.0, 100.0]);
    }

    fn output() -> OutputConfig {
        OutputConfig {
            json: Some("run.json".into()),
            out: Some("results".into()),
            force: true,
            save: true,
            quiet: false,
        }
    }

    #[test]
    fn a_step_saves_nothing_and_keeps_the_rest() {
        let step = output().step();
        assert!(!step.save && step.json.is_none());
        assert_eq!(step.out.as_deref(), Some(Path::new("results")));
        assert!(step.force && !step.quiet);
        assert_eq!(
            step.out_dir("tpcc", "now").unwrap(),
            None,
            "no directory made"
        );
    }

    #[test]
    fn a_line_per_report_interval_and_one_for_the_rest() {
        let seen = RefCell::new(Vec::new());
        let mut lines = IntervalLines::new(3.0, false, |s: &[u32]| {
            seen.borrow_mut().push(s.to_vec());
            String::new()
        });
        for i in 1..=7 {
            lines.second(&i);
        }
        lines.finish();
        lines.finish();
        assert_eq!(*seen.borrow(), [vec![1, 2, 3], vec![4, 5, 6], vec![7]]);
        let quiet = RefCell::new(0);
        let mut lines = IntervalLines::new(1.0, true, |_: &[u32]| {
            *quiet.borrow_mut() += 1;
            String::new()
        });
        lines.second(&1);
        lines.finish();
        assert_eq!(*quiet.borrow(), 0);
    }

    #[test]
    fn the_shared_warnings_say_what_happened() {
        assert!(interrupted_warning(false, 1.0, 60.0).is_none());
        let w = interrupted_warning(true, 12.34, 60.0).unwrap();
        assert_eq!(w.kind, WarningKind::Interrupted);
        assert!(w.message.contains("12.3 s of the 60 s"), "{}", w.message);
        let cpu = |driver_s: f64| TpccCpu {
            driver_user_s: driver_s,
            ..Default::default()
        };
        assert!(
            driver_cpu_warning(&cpu(4.0), 10.0, "").is_none(),
            "0.4 cores"
        );
        let w = driver_cpu_warning(&cpu(6.0), 10.0, "; fewer terminals").unwrap();
        assert_eq!(w.kind, WarningKind::CpuBound);
        assert!(w.message.contains("0.60 cores"), "{}", w.message);
        assert!(w.message.ends_with("; fewer terminals"), "{}", w.message);
    }
}
