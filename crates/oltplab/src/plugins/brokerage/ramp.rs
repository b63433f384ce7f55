//! A brokerage run as a step of a users ramp or a study's configuration.

use crate::workload::ramp::{common_figures, RampSummary};
use oltplab_schema::{BrokerageInterval, BrokerageResult, BrokerageSummary, RampStep};

impl RampSummary for BrokerageSummary {
    type Interval = BrokerageInterval;
    fn step(doc: &BrokerageResult) -> RampStep {
        brokerage_step_of(doc)
    }
    fn set_ramp(&mut self, steps: Vec<RampStep>) {
        self.ramp = steps;
    }
    fn interrupted(&self) -> bool {
        self.interrupted
    }
}

/// What a brokerage run reports as its throughput (tpsE-like, not an audited tpsE).
pub(crate) const TRADE_RESULTS_PER_S: &str = "Trade-Results/s";

/// A brokerage run's figures as a study's configuration.
pub(crate) fn brokerage_step_of(doc: &BrokerageResult) -> RampStep {
    let s = &doc.summary;
    RampStep {
        terminals: s.terminals,
        throughput: s.tpse_like,
        throughput_unit: TRADE_RESULTS_PER_S.into(),
        tx_per_s: s.tps_total,
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
