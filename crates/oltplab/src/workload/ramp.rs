//! A users ramp (`--terminals 8,32,64` or `8:64:8`): the workload runs once per step, in turn, on
//! the same database — S3's way of showing where throughput stops growing and what ran out (CPU,
//! or a device's idle time). Each step is a whole run (warm-up, measured window, the server started
//! and stopped); the result is the last step's, with `summary.ramp` listing every step. It is saved
//! after each step, so Ctrl-C keeps the steps that finished. Every workload with a timed run uses
//! it: it gives its summary's row ([`RampSummary`]) and a function that runs one step.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use oltplab_core::units::format_count;
use oltplab_core::{Error, Result};
use oltplab_metrics::{LatencyHistogram, WarningKind};
use serde::Serialize;

use crate::output;
use crate::workload::scaffold::OutputConfig;
use oltplab_schema::{IoSummary, RampStep, ResultDoc, Warning};

/// `--terminals` of a workload that ramps: the run's count (`default` without the option; a
/// ramp's first step until it runs) and, for a users ramp, every count in turn (empty for one
/// run). A ramp is several runs, so it is not traced.
pub fn terminal_steps(
    given: Option<&[u32]>,
    traced: bool,
    default: u32,
) -> Result<(u32, Vec<u32>)> {
    match given.unwrap_or_default() {
        [] => Ok((default, Vec::new())),
        [n] => Ok((*n, Vec::new())),
        _ if traced => Err(Error::usage("--trace records one run: trace one step of the ramp on its own (--terminals N), or drop --trace")),
        steps => Ok((steps[0], steps.to_vec())),
    }
}

/// The summary of a run that can be a step of a users ramp.
pub trait RampSummary: Serialize + Sized {
    /// The run's `intervals[]` type.
    type Interval: Serialize;
    /// The step's row of `summary.ramp`, from the whole result (its histograms too).
    fn step(doc: &ResultDoc<Self, Self::Interval>) -> RampStep;
    fn set_ramp(&mut self, steps: Vec<RampStep>);
    fn interrupted(&self) -> bool;
}

/// A workload's whole run result, its summary being `S`.
pub type RunDoc<S> = ResultDoc<S, <S as RampSummary>::Interval>;

/// Runs `run_step(terminals)` for each count in turn (each step's own saving off); the last
/// step's result holds every step in `summary.ramp` and is saved after each step, as `o` (the
/// options of the run it stands for) says, into an output directory of `workload`'s.
pub fn ramp<S: RampSummary>(
    counts: &[u32],
    workload: &'static str,
    o: &OutputConfig,
    stop: &AtomicBool,
    mut run_step: impl FnMut(u32) -> Result<RunDoc<S>>,
) -> Result<(RunDoc<S>, Option<PathBuf>)> {
    let mut steps: Vec<RampStep> = Vec::new();
    let mut last: Option<RunDoc<S>> = None;
    let mut out_dir = None;
    for (i, &terminals) in counts.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if !o.quiet {
            eprintln!(
                "\n── users ramp: step {} of {}, {terminals} terminal{} ──",
                i + 1,
                counts.len(),
                if terminals == 1 { "" } else { "s" }
            );
        }
        let mut doc = run_step(terminals)?;
        steps.push(S::step(&doc));
        doc.summary.set_ramp(steps.clone());
        // After the first step: a refused run leaves no output directory behind.
        if out_dir.is_none() {
            out_dir = o.out_dir(workload, &doc.started_at)?;
        }
        if let Some(dir) = &out_dir {
            output::save(&doc, dir, o.json.as_deref())?;
        }
        let interrupted = doc.summary.interrupted();
        last = Some(doc);
        if interrupted {
            break;
        }
    }
    let doc = last.ok_or(Error::Interrupted)?;
    if !o.quiet {
        print_ramp(&steps);
        if let Some(dir) = &out_dir {
            eprintln!("result: {}", dir.join(output::RESULT_FILE).display());
        }
    }
    Ok((doc, out_dir))
}

/// Warnings that make a step's figures less reliable: marked in its row.
const RELIABILITY: [WarningKind; 4] = [
    WarningKind::EmulationOffTarget,
    WarningKind::NotSteady,
    WarningKind::FewSamples,
    WarningKind::ServerDied,
];

/// What every workload's run gives alike: response time over all its transaction types (merged
/// histograms), CPU, I/O by device and table, and the warnings that make it less reliable.
pub fn common_figures<'a>(
    tx: impl Iterator<Item = &'a String>,
    histograms: &std::collections::BTreeMap<String, String>,
    cpu_utilisation: f64,
    io: &IoSummary,
    warnings: &[Warning],
    interrupted: bool,
) -> RampStep {
    let mut all = LatencyHistogram::new();
    for name in tx {
        if let Some(h) = histograms
            .get(name)
            .and_then(|b| LatencyHistogram::from_base64(b).ok())
        {
            all.add(&h);
        }
    }
    RampStep {
        lat_ns: all.stats(),
        cpu_utilisation,
        io_iops: io.iops,
        devices: io.by_device.clone(),
        tables: io.by_table.clone(),
        warnings: warnings
            .iter()
            .map(|w| w.kind)
            .filter(|k| RELIABILITY.contains(k))
            .collect(),
        interrupted,
        ..RampStep::default()
    }
}

fn print_ramp(steps: &[RampStep]) {
    let marked = steps.iter().any(|s| !s.warnings.is_empty());
    let unit = steps.first().map_or("", |s| s.throughput_unit.as_str());
    eprintln!("\nusers ramp");
    eprintln!(
        "  {:>9} {:>15} {:>9} {:>9} {:>9} {:>9} {:>8}  device busy",
        "terminals", unit, "tx/s", "mean rt", "p90 rt", "CPU busy", "IOPS"
    );
    for st in steps {
        let busy: Vec<String> = st
            .devices
            .iter()
            .map(|d| format!("{} {:.0} %", d.name, d.busy_pct))
            .collect();
        eprintln!(
            "  {:>9} {:>15} {:>9} {:>9} {:>9} {:>7.0} % {:>8}  {}{}",
            st.terminals,
            format_count(st.throughput),
            format_count(st.tx_per_s),
            oltplab_core::units::format_ns(st.lat_ns.mean),
            oltplab_core::units::format_ns(st.lat_ns.p90 as f64),
            100.0 * st.cpu_utilisation,
            format_count(st.io_iops),
            busy.join(", "),
            match (st.interrupted, st.warnings.is_empty()) {
                (true, _) => " (interrupted)",
                (false, false) => " *",
                _ => "",
            }
        );
    }
    if marked {
        eprintln!("  * less reliable: see that step's warnings above");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One count is one run; several are a ramp from its first; a ramp is not traced.
    #[test]
    fn terminals_give_one_run_or_a_ramp() {
        assert_eq!(terminal_steps(None, true, 4).unwrap(), (4, vec![]));
        assert_eq!(terminal_steps(Some(&[8]), true, 4).unwrap(), (8, vec![]));
        assert_eq!(
            terminal_steps(Some(&[2, 8, 32]), false, 4).unwrap(),
            (2, vec![2, 8, 32])
        );
        let traced = terminal_steps(Some(&[2, 8]), true, 4).unwrap_err();
        assert!(
            traced.to_string().contains("--trace records one run"),
            "{traced}"
        );
    }
}
