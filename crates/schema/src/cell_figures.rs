//! A study file's result (`study --file`, scenario `file`) as the reports read it: each cell's
//! axes and the figures its row and charts show. A read-side twin of `CellResult`, whose
//! flattened axes would hide an error's path and whose defaults would show a missing figure as
//! 0: here every figure a cell may lack is `Option` (shown as "—", as always), a figure of another
//! type is refused naming it, and a cell must have its `id`.

use serde::Deserialize;

use super::LatencyFigures;

/// `summary` of a study file's result.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellStudyFigures {
    #[serde(default)]
    pub cells: Vec<CellFigures>,
    /// The device the ratios are taken against.
    #[serde(default)]
    pub baseline: Option<String>,
    #[serde(default)]
    pub interrupted: Option<bool>,
}

/// `summary.cells[]`: a cell's axes (written flattened into the cell), figures, run and warnings.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellFigures {
    /// The slug of its axes: what names the cell.
    pub id: String,
    #[serde(default)]
    pub engine_name: Option<String>,
    #[serde(default)]
    pub server_settings: Vec<String>,
    #[serde(default)]
    pub device: Option<String>,
    /// The short name the study file gave the device or layout.
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub terminals: Option<u32>,
    #[serde(default)]
    pub pacing: Option<String>,
    /// Absent: TPC-C (the cells before workloads were an axis).
    #[serde(default)]
    pub workload: Option<String>,
    #[serde(default)]
    pub figures: CellNumbers,
    #[serde(default)]
    pub run: Option<CellRun>,
    #[serde(default)]
    pub warnings: Vec<CellWarning>,
}

/// `summary.cells[].figures`: S1's figures of the cell, as written.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellNumbers {
    #[serde(default)]
    pub randread16k_iops: Option<f64>,
    #[serde(default)]
    pub randread16k_lat_ns: Option<f64>,
    #[serde(default)]
    pub tpmc: Option<f64>,
    #[serde(default)]
    pub tpse_like: Option<f64>,
    #[serde(default)]
    pub orders_tps: Option<f64>,
    #[serde(default)]
    pub run_iops: Option<f64>,
    #[serde(default)]
    pub replay_iops: Option<f64>,
    #[serde(default)]
    pub alpha: Option<f64>,
    #[serde(default)]
    pub explanation: Option<String>,
    #[serde(default)]
    pub breakdown: Option<CellBreakdown>,
    #[serde(default)]
    pub vs_baseline: Option<CellRatios>,
    #[serde(default)]
    pub run_fidelity: Option<CellFidelity>,
}

/// `figures.breakdown`, as far as the report shows it.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellBreakdown {
    /// What limited the run, by its written name (`cpu`, `device` …).
    #[serde(default)]
    pub limit: Option<String>,
}

/// `figures.vs_baseline`: the cell against the baseline's cell of the same engine, workload,
/// terminals and pacing.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellRatios {
    #[serde(default)]
    pub randread16k_iops: Option<f64>,
    #[serde(default)]
    pub tpmc: Option<f64>,
    #[serde(default)]
    pub tpse_like: Option<f64>,
    #[serde(default)]
    pub orders_tps: Option<f64>,
    #[serde(default)]
    pub alpha: Option<f64>,
}

/// `figures.run_fidelity`, as far as the report shows it.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellFidelity {
    #[serde(default)]
    pub realised_lat_ns_p99: Option<f64>,
}

/// `summary.cells[].run`: the cell's run as S2 and S3 report a configuration.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellRun {
    #[serde(default)]
    pub lat_ns: Option<LatencyFigures>,
    #[serde(default)]
    pub devices: Vec<CellDevice>,
}

/// `summary.cells[].run.devices[]`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellDevice {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub busy_pct: Option<f64>,
    #[serde(default)]
    pub read_cache_hit_pct: Option<f64>,
}

/// `summary.cells[].warnings[]`, kind by its written name (a newer kind is shown, not refused).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CellWarning {
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}
