//! `study --scenario profiles` results (S4): the twelve server access profiles at queue depths 1 …
//! 256 on each device set, summarised by geometric means, the sets' ratio, and 16 KiB sequential
//! reads and writes of one drive of each set (docs/studies.md).

use oltplab_metrics::Warning;
use serde::{Deserialize, Serialize};

/// `summary` of a profiles study.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProfilesSummary {
    pub scenario: String,
    /// The set the ratios are against: the first of `--devices`.
    pub baseline: String,
    /// The queue depths every profile ran at.
    pub qd: Vec<u32>,
    /// The queue depths of the drives' sequential runs.
    pub drive_qd: Vec<u32>,
    /// Measured time and warm-up of every point.
    pub runtime_s: f64,
    pub ramp_s: f64,
    /// The region the I/O covers on each device.
    pub size_bytes: u64,
    pub sets: Vec<ProfileSet>,
    /// 16 KiB sequential reads and writes of each set's drive (the RAID's member), one entry per
    /// (drive, queue depth).
    pub drive_seq16k: Vec<DriveSeq>,
    /// 4 KiB and 64 KiB random reads and random writes of each set at queue depth 4, one entry
    /// per (set, block size).
    pub random_qd4: Vec<RandomQd4>,
    pub interrupted: bool,
    /// Its finished cells, one per device set in its study file's order: what each saved as
    /// `cells/<id>-<hash>.json` when it finished (the sets' ratios are in `sets[]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<ProfilesCellResult>,
}

/// One finished device set of a profiles study (`summary.cells[]`, and `cells/<id>-<hash>.json`
/// on its own): what was measured on the set, and on its drive if this set measured it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProfilesCellResult {
    /// The set's name (`sets[].name`): names its result file.
    pub id: String,
    /// A hash of its resolved configuration (spec, scale, points, whether it measures the drive).
    pub config_hash: String,
    pub finished_at: String,
    /// The set's figures, without a ratio (the study adds it against its first set).
    pub set: ProfileSet,
    /// The set's random I/O at queue depth 4, per block size.
    pub random_qd4: Vec<RandomQd4>,
    /// Its drive's sequential runs; empty when an earlier set of the study has the same drive.
    pub drive_seq16k: Vec<DriveSeq>,
    /// The cell's own warnings (each kind also in the study's `warnings`, once).
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

/// One device set (`summary.sets[]`): every profile at every queue depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProfileSet {
    /// The spec as a file name, e.g. `raid5_4_hdd-15k`.
    pub name: String,
    /// The spec in canonical form, e.g. `raid5(4,hdd-15k)`.
    pub spec: String,
    /// One drive of the set (the RAID's member, the cache's backing device), canonical spec.
    pub drive: String,
    /// The geometric mean of the profiles' geometric means (= of every point's IOPS).
    pub geomean_iops: f64,
    /// Every profile measured at every queue depth; false when Ctrl-C stopped the set, whose
    /// geometric means then cover only what was measured.
    pub complete: bool,
    pub profiles: Vec<ProfileFigures>,
    /// Per queue depth, the geometric mean of the profiles' IOPS at that depth.
    pub geomean_by_qd: Vec<QdGeomean>,
    /// Against the baseline set (absent on the baseline itself).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<SetRatio>,
    /// The `device` run's own result, relative to the study's output directory.
    pub result: String,
}

/// One profile of one set: `profiles[]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProfileFigures {
    pub name: String,
    pub block_size_bytes: u64,
    pub read_pct: u8,
    pub random_pct: u8,
    /// The queue depths measured, and the IOPS at each (same order).
    pub qd: Vec<u32>,
    pub iops: Vec<f64>,
    /// The geometric mean of `iops`: S4's summary figure.
    pub geomean_iops: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct QdGeomean {
    pub qd: u32,
    pub geomean_iops: f64,
}

/// A set's geometric means over the baseline's, for the profiles both measured at the same queue
/// depths.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SetRatio {
    /// The baseline set's name.
    pub against: String,
    /// The geometric mean of the profiles' ratios: with every profile in both sets, the ratio of
    /// the sets' overall geometric means.
    pub geomean_iops_ratio: f64,
    pub profiles: Vec<ProfileRatio>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProfileRatio {
    pub name: String,
    pub geomean_iops_ratio: f64,
}

/// 16 KiB sequential reads and sequential writes of one drive at one queue depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DriveSeq {
    /// The drive's canonical spec, e.g. `hdd-15k`.
    pub device: String,
    pub qd: u32,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    pub read_lat_ns_mean: f64,
    pub write_lat_ns_mean: f64,
}

/// Random reads and random writes of one set at one block size, queue depth 4 (S4's random I/O).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RandomQd4 {
    /// The set's canonical spec.
    pub set: String,
    pub block_size_bytes: u64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_lat_ns_mean: f64,
    pub write_lat_ns_mean: f64,
}
