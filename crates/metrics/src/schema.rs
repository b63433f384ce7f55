//! The result document, schema `oltplab.result/1`: one JSON file per measuring command. Field names
//! are a contract with the reports and with tests outside this repository — rename nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::cpu::CpuTime;
use crate::env::Env;
use crate::latency::LatencyNs;

pub const SCHEMA: &str = "oltplab.result/1";

/// One result: `S` is the kind-specific summary, `I` one per-second interval record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultDoc<S, I> {
    pub schema: String,
    pub kind: String,
    pub tool: Tool,
    pub started_at: String,
    /// Every resolved option, so that the run can be repeated.
    pub config: serde_json::Value,
    pub env: Env,
    pub summary: S,
    pub intervals: Vec<I>,
    /// HdrHistogram V2, base64; merging these gives exact combined percentiles.
    pub histograms: BTreeMap<String, String>,
    pub warnings: Vec<Warning>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    pub git: String,
}

impl<S: Serialize, I: Serialize> ResultDoc<S, I> {
    /// Writes the document through a temporary file and a rename, so a reader (or a crash) never
    /// sees half a result.
    pub fn write_atomic(&self, path: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_vec_pretty(self)?;
        text.push(b'\n');
        oltplab_core::safety::replace_durably(path, &text)
    }
}

/// True if `path` holds an oltplab result, i.e. a file oltplab wrote and may overwrite.
pub fn is_result_file(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| {
            v.get("schema")
                .and_then(|s| s.as_str())
                .map(|s| s == SCHEMA)
        })
        .unwrap_or(false)
}

/// A figure that should not be taken at face value, and what to do about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    pub kind: WarningKind,
    pub message: String,
}

impl Warning {
    pub fn new(kind: WarningKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// io_uring could not be set up; the psync engine ran instead.
    IoUringUnavailable,
    /// The engine is synchronous, so the requested queue depth could not be kept.
    QueueDepthIgnored,
    /// Buffered reads of a file that fits in memory may be served by the page cache, not the device.
    PageCache,
    /// The tool's own threads were busy nearly all the time: the figure may measure the tool.
    CpuBound,
    /// `--rate-iops` asked for more than the device delivered.
    RateNotMet,
    /// Ctrl-C stopped the run; the result holds what was measured until then.
    Interrupted,
    /// The target held data oltplab did not write; it may compress or deduplicate.
    ForeignData,
    /// The per-I/O latency log reached its size limit and stopped recording.
    LatencyLogTruncated,
    /// Too few I/Os completed for the percentiles to mean much.
    FewSamples,
    /// An emulated device's realised latency or IOPS was off the model's by more than 5 %.
    EmulationOffTarget,
    /// A captured trace lost records or a process's part was cut short: figures from it undercount.
    TraceIncomplete,
    /// `oltplab merge`: the parts' measured windows overlapped too little for their rates to add up
    /// to what ran at once.
    WindowsNotAligned,
    /// `oltplab merge`: a part stored no histogram, so some merged latency figures are bounds (the
    /// highest of the parts), not exact.
    LatencyNotMerged,
    /// The tables were memory-optimised (UNLOGGED, MEMORY, in-memory): a crash loses them, so the
    /// figures are not those of a durable database.
    NotDurable,
    /// Wait figures come from sampling, not from counting each wait.
    WaitsSampled,
    /// `device`: the I/O buffers were on 4 KiB pages, so each larger I/O went to the device in
    /// several memory segments (slower on virtual disks than the huge-page buffers oltplab asks for).
    SmallPageBuffers,
    /// A managed server exited during the run: the figures cover only the time before, and the
    /// run ended with an error.
    ServerDied,
    /// A managed server did not shut down in time after the run and was killed (the run's figures
    /// stand; its next start runs crash recovery).
    ServerShutdownSlow,
    /// TPC-C: more than 1 % of the districts Deliveries visited had no undelivered order (spec
    /// 5.4.5): the NEW-ORDER backlog ran out, and Delivery did less work than the spec's.
    DeliverySkipped,
    /// TPC-C, paced: a 90th-percentile response time exceeded clause 5.2.5.3's limit.
    ResponseTimeLimit,
    /// TPC-C: the measured window was not a steady state (throughput trending, or no checkpoint
    /// or write-back in it): its figures describe a transient.
    NotSteady,
    /// A power cut lost acknowledged commits, broke a consistency condition or corrupted pages
    /// where the device and the engine's setting promise neither: the state is kept for replay.
    CrashUnexpected,
    /// A node of a managed cluster went away during the run; its connections moved to the other
    /// nodes and the run went on (when, and whether acknowledged commits survived, is in the
    /// message and in `summary.cluster`).
    NodeDied,
}

/// `summary` of a `device` result. For a single job the figures are that job's; with a queue-depth
/// sweep or several profiles, the top-level figures cover all points together (total I/Os over total
/// measured time, merged histograms) and each point is in `sweep[]` / `profiles[]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceSummary {
    pub iops: f64,
    pub bw_bytes: f64,
    /// All I/Os, reads and writes together.
    pub lat_ns: LatencyNs,
    pub read: OpSummary,
    pub write: OpSummary,
    /// Measured time; ramp-up is excluded from every figure.
    pub measured_s: f64,
    pub ramp_s: f64,
    pub cpu: CpuSummary,
    /// fsync/fdatasync after every N writes (`--fsync`, `--fdatasync`, `commit-8k`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<FlushSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Vec<SweepPoint>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geomean_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiles: Option<Vec<ProfileResult>>,
}

/// Reads or writes alone.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpSummary {
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: LatencyNs,
}

/// The flushes of a run: how many, how many per second (with one flush per write at QD 1, the
/// commit rate), and each one's latency on its own.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FlushSummary {
    pub count: u64,
    pub per_s: f64,
    pub lat_ns: LatencyNs,
}

/// The tool's own CPU use during the measured time.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct CpuSummary {
    /// CPU time of the I/O threads.
    pub jobs: CpuTime,
    /// CPU time of the whole process, including io_uring's kernel worker threads.
    pub process: CpuTime,
    /// Busy share of the I/O threads, 1.0 = each job thread used a whole core.
    pub jobs_utilisation: f64,
    /// I/Os completed per second of the process's CPU time: what one I/O costs the tool.
    pub ios_per_cpu_s: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SweepPoint {
    pub qd: u32,
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: LatencyNs,
    pub read: OpSummary,
    pub write: OpSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<FlushSummary>,
    pub measured_s: f64,
    pub cpu: CpuSummary,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProfileResult {
    pub name: String,
    pub block_size_bytes: u64,
    pub read_pct: u8,
    pub random_pct: u8,
    /// The profile's figures over all its queue depths.
    pub iops: f64,
    pub bw_bytes: f64,
    pub lat_ns: LatencyNs,
    pub read: OpSummary,
    pub write: OpSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<FlushSummary>,
    pub sweep: Vec<SweepPoint>,
    /// Geometric mean of IOPS over the profile's queue depths (S4's summary figure).
    pub geomean_iops: f64,
}

/// One second of a device run. `point` numbers the (profile, queue depth) points in run order.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceInterval {
    pub t_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub qd: u32,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bw_bytes: f64,
    pub write_bw_bytes: f64,
    pub lat_ns_mean: f64,
    /// With several jobs, the highest of the jobs' p99 in that second (an upper bound).
    pub lat_ns_p99: u64,
    pub lat_ns_max: u64,
}

pub type DeviceResult = ResultDoc<DeviceSummary, DeviceInterval>;

/// Geometric mean of positive values; zero if any value is zero or there are none.
pub fn geomean(values: &[f64]) -> f64 {
    if values.is_empty() || values.iter().any(|v| *v <= 0.0) {
        return 0.0;
    }
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// RFC 3339 UTC timestamp of now, e.g. `2026-11-22T09:23:06Z`.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// RFC 3339 UTC timestamp to the microsecond, e.g. `2026-11-22T09:23:06.123456Z`: for instants
/// that several results are aligned by (a measured window's start).
pub fn rfc3339_micros(t: SystemTime) -> String {
    humantime::format_rfc3339_micros(t).to_string()
}

/// Parses an RFC 3339 time (`2026-11-22T10:00:00Z`, `2026-11-22T19:00:00.5+09:00`, a space for
/// the `T`; no zone means UTC) or unix seconds (`1795341600`, `1795341600.25`).
pub fn parse_time(text: &str) -> Option<SystemTime> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0)
            .then(|| UNIX_EPOCH + Duration::from_secs_f64(secs));
    }
    // humantime reads UTC only: take a numeric offset off and apply it.
    let split = t
        .len()
        .checked_sub(6)
        .and_then(|i| Some((t.get(..i)?, t.get(i..)?)));
    let (local, offset_s) = match split {
        Some((local, zone))
            if (zone.starts_with('+') || zone.starts_with('-'))
                && zone.as_bytes()[3] == b':'
                && local.contains(['T', 't', ' ']) =>
        {
            let h: i64 = zone[1..3].parse().ok()?;
            let m: i64 = zone[4..6].parse().ok()?;
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            (local, sign * (h * 3600 + m * 60))
        }
        _ => (t.trim_end_matches(['Z', 'z']), 0),
    };
    let utc = humantime::parse_rfc3339_weak(local).ok()?;
    if offset_s >= 0 {
        utc.checked_sub(Duration::from_secs(offset_s as u64))
    } else {
        utc.checked_add(Duration::from_secs(offset_s.unsigned_abs()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_as_users_write_them() {
        let at = |s: u64| Some(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(parse_time("2026-11-22T10:00:00Z"), at(1_795_341_600));
        assert_eq!(parse_time("2026-11-22 10:00:00"), at(1_795_341_600));
        assert_eq!(parse_time("2026-11-22T19:00:00+09:00"), at(1_795_341_600));
        assert_eq!(parse_time("2026-11-22T05:30:00-04:30"), at(1_795_341_600));
        assert_eq!(parse_time("1795341600"), at(1_795_341_600));
        assert_eq!(
            parse_time("2026-11-22T10:00:00.250000Z"),
            Some(UNIX_EPOCH + Duration::from_millis(1_795_341_600_250))
        );
        let t = UNIX_EPOCH + Duration::from_micros(1_795_341_600_123_456);
        assert_eq!(parse_time(&rfc3339_micros(t)), Some(t));
        for bad in [
            "",
            "tomorrow",
            "2026-13-01T00:00:00Z",
            "-5",
            "10:00",
            "2026-11-22T10:00:0é",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn geometric_mean() {
        assert!((geomean(&[1.0, 100.0]) - 10.0).abs() < 1e-9);
        assert_eq!(geomean(&[]), 0.0);
        assert_eq!(geomean(&[5.0, 0.0]), 0.0);
    }

    #[test]
    fn contract_field_names() {
        let summary = DeviceSummary {
            sweep: Some(vec![SweepPoint::default()]),
            geomean_iops: Some(1.0),
            ..Default::default()
        };
        let v = serde_json::to_value(&summary).unwrap();
        for path in [
            "/iops",
            "/bw_bytes",
            "/read/iops",
            "/read/lat_ns/p99",
            "/write/lat_ns/p999",
            "/sweep/0/qd",
            "/sweep/0/lat_ns/p50",
            "/geomean_iops",
        ] {
            assert!(v.pointer(path).is_some(), "{path} missing in {v}");
        }
        let w = serde_json::to_value(Warning::new(WarningKind::IoUringUnavailable, "x")).unwrap();
        assert_eq!(w["kind"], "io_uring_unavailable");
    }
}
