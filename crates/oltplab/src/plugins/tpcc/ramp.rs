//! TPC-C's users ramp (the ramp itself is [`crate::workload::ramp`]) and a TPC-C run's figures as
//! a ramp step or a study's configuration.

use std::sync::atomic::AtomicBool;

use oltplab_core::Result;

use super::run::{run_with, RunOutcome};
use super::RunConfig;
use crate::workload::ramp::{common_figures, ramp, RampSummary};
use oltplab_schema::{RampStep, TpccInterval, TpccResult, TpccSummary};

impl RampSummary for TpccSummary {
    type Interval = TpccInterval;
    fn step(doc: &TpccResult) -> RampStep {
        step_of(doc)
    }
    fn set_ramp(&mut self, steps: Vec<RampStep>) {
        self.ramp = steps;
    }
    fn interrupted(&self) -> bool {
        self.interrupted
    }
}

/// TPC-C's users ramp (`cfg.ramp`).
pub fn run_ramp(cfg: &RunConfig, stop: &AtomicBool) -> Result<RunOutcome> {
    let (doc, out_dir) = ramp(&cfg.ramp, "tpcc", &cfg.output, stop, |terminals| {
        let step_cfg = RunConfig {
            terminals: Some(terminals),
            output: cfg.output.step(),
            ..cfg.clone()
        };
        Ok(run_with(&step_cfg, stop)?.doc)
    })?;
    Ok(RunOutcome { doc, out_dir })
}

/// What a TPC-C run reports as its throughput.
pub(crate) const NEW_ORDERS_PER_MIN: &str = "New-Orders/min";
/// A TPC-C run's figures as a ramp step or a study's configuration.
pub(crate) fn step_of(doc: &TpccResult) -> RampStep {
    let s = &doc.summary;
    RampStep {
        terminals: s.terminals,
        throughput: s.tpmc,
        throughput_unit: NEW_ORDERS_PER_MIN.into(),
        tx_per_s: s.tpm_total / 60.0,
        ..common_figures(
            s.tx.keys(),
            &doc.histograms,
            s.cpu.utilisation,
            &s.io,
            &doc.warnings,
            s.interrupted,
        )
    }
}
