//! A saved result as the reports see it: its typed envelope (`oltplab_schema::Envelope`: tool,
//! environment, histograms, warnings), the view of its config the headings use
//! (`oltplab_schema::ConfigView`), the raw JSON of the figures not yet read through their kind's
//! type, a label and its kind. A result whose envelope does not read is refused naming the
//! field; a figure the kind may lack is shown as "—", never invented. Below every page module;
//! which study a result is, and its label, are asked of the pages one level up (`classify`).

use oltplab_metrics::schema::SCHEMA;
use oltplab_metrics::LatencyHistogram;
use oltplab_schema::{
    read_value, CellStudyFigures, ClusterStudySummary, ConfigView, CrashSummary, DeviceSummary,
    Envelope, InMemorySummary, ProfilesSummary, ReplaySummary, RunDocument, StorageStudySummary,
    StudySummary,
};
use serde_json::Value;

/// The kinds of result oltplab writes (README, "Read the results"). A `merge` result carries the kind it merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Device,
    Run,
    Replay,
    Study,
    Crash,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Device => "device",
            Kind::Run => "run",
            Kind::Replay => "replay",
            Kind::Study => "study",
            Kind::Crash => "crash",
        }
    }

    fn parse(text: &str) -> Option<Kind> {
        Some(match text {
            "device" => Kind::Device,
            "run" => Kind::Run,
            "replay" => Kind::Replay,
            "study" => Kind::Study,
            "crash" => Kind::Crash,
            _ => return None,
        })
    }
}

/// Checks that `result` is an oltplab result this version can read, and returns its kind (for a
/// `merge` result, the kind that was merged).
pub fn validate(result: &Value) -> Result<Kind, String> {
    let Some(obj) = result.as_object() else {
        return Err("is not an oltplab result: the JSON is not an object".into());
    };
    match obj.get("schema").and_then(Value::as_str) {
        Some(SCHEMA) => {}
        Some(other) if other.starts_with("oltplab.result/") => {
            return Err(format!(
                "has schema {other}, which this oltplab cannot read (it reads {SCHEMA}): use the oltplab version that wrote it"
            ))
        }
        _ => {
            return Err(format!(
                "is not an oltplab result: it has no \"schema\": \"{SCHEMA}\" field"
            ))
        }
    }
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let kind = if kind == "merge" {
        let merged = merged_kind(result).unwrap_or_default();
        Kind::parse(&merged).ok_or_else(|| {
            format!("is a merge result without a known config.merged_kind ('{merged}')")
        })?
    } else {
        Kind::parse(kind).ok_or_else(|| {
            format!(
                "has kind '{kind}', which reports do not know (device, run, replay, study, crash or merge)"
            )
        })?
    };
    envelope(result)?;
    Ok(kind)
}

/// The typed envelope of a result, or the sentence naming the field that stops it.
pub(crate) fn envelope(result: &Value) -> Result<Envelope, String> {
    read_value::<Envelope>(result).map_err(|e| e.to_string())
}

/// A merge result's `config.merged_kind`: the kind of the results it merged.
pub fn merged_kind(result: &Value) -> Option<String> {
    ConfigView::of(&result["config"]).merged_kind
}

/// A kind's figures read through their typed document.
pub enum Figures {
    /// An S1 study's summary.
    S1(Box<StudySummary>),
    /// An in-memory study's summary (S5).
    InMemory(Box<InMemorySummary>),
    /// A crash result's summary.
    Crash(Box<CrashSummary>),
    /// A device result's measurements (also of a merge of device results). Read as the
    /// measurements alone, not as `DeviceRunSummary`, whose flattened fields would hide an error's
    /// path; the emulation's figures are not part of the device section.
    Device(Box<DeviceSummary>),
    /// A cache-tiers or placement study's summary (S2, S3).
    Storage(Box<StorageStudySummary>),
    /// A profiles study's summary (S4).
    Profiles(Box<ProfilesSummary>),
    /// A cluster study's summary.
    Cluster(Box<ClusterStudySummary>),
    /// A replay's summary (also of a merge of replays).
    Replay(Box<ReplaySummary>),
    /// A run's figures, of any workload (also of a merge of runs).
    Run(Box<RunDocument>),
    /// A study file's cells (`study --file`).
    Cells(Box<CellStudyFigures>),
    /// A study of a scenario this version does not know (`classify::docs`), and a `Doc` not yet
    /// read.
    Untyped,
}

pub struct Doc<'a> {
    pub v: &'a Value,
    pub head: Envelope,
    /// The fields of `head.config` the headings and labels use (the configuration table lists
    /// `head.config` whole).
    pub config: ConfigView,
    pub figures: Figures,
    pub kind: Kind,
    /// A short name for tables and legends, e.g. `#2 oltp-db QD1…4`.
    pub label: String,
}

impl<'a> Doc<'a> {
    pub fn new(v: &'a Value, head: Envelope, kind: Kind, label: String) -> Self {
        Self {
            v,
            config: ConfigView::of(&head.config),
            head,
            figures: Figures::Untyped,
            kind,
            label,
        }
    }

    /// `intervals[]` as written. Each kind writes its own per-second figures there (and a merge
    /// its parts'); the time-series charts draw whichever of the known series an interval has, by
    /// field name (`common::interval_series`), so this stays generic JSON rather than a type.
    pub fn intervals(&self) -> &'a [Value] {
        self.v
            .get("intervals")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    pub fn is_merge(&self) -> bool {
        self.head.kind == "merge"
    }

    /// The decoded histogram `name`, if present and readable.
    pub fn histogram(&self, name: &str) -> Option<LatencyHistogram> {
        let text = self.head.histograms.get(name)?;
        LatencyHistogram::from_base64(text)
            .ok()
            .filter(|h| h.count() > 0)
    }

    pub fn histogram_names(&self) -> Vec<&str> {
        self.head.histograms.keys().map(String::as_str).collect()
    }

    /// The sum of several histograms (e.g. reads and writes), if any of them is present.
    pub fn histogram_sum(&self, names: &[&str]) -> Option<LatencyHistogram> {
        let mut out: Option<LatencyHistogram> = None;
        for name in names {
            if let Some(h) = self.histogram(name) {
                match out.as_mut() {
                    Some(o) => o.add(&h),
                    None => out = Some(h),
                }
            }
        }
        out
    }

    pub fn warnings(&self) -> Vec<(String, String)> {
        self.head
            .warnings
            .iter()
            .map(|w| {
                // The kind's name as the file spells it (snake_case).
                let kind = serde_json::to_value(w.kind)
                    .ok()
                    .and_then(|k| k.as_str().map(str::to_string))
                    .unwrap_or_else(|| "warning".into());
                (kind, w.message.clone())
            })
            .collect()
    }
}

/// The finite number at `pointer` in `v`: for the readers that are generic over fields on purpose
/// (`merge`, which sums whatever counts and rates the parts have; the interval series).
pub fn num(v: &Value, pointer: &str) -> Option<f64> {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite())
}

/// What a device result measured: its workloads or profiles, queue depths, emulated device.
pub fn describe_device(config: &ConfigView) -> String {
    let names: Vec<String> = config
        .workloads
        .iter()
        .map(|w| {
            if let Some(name) = &w.name {
                return name.clone();
            }
            let rw = w.rw.as_deref().unwrap_or("io");
            let bs = w
                .block_size_bytes
                .map(oltplab_core::units::format_size_short)
                .unwrap_or_default();
            format!("{rw} {bs}").trim().to_string()
        })
        .collect();
    let mut text = if names.is_empty() {
        "device".to_string()
    } else if names.len() > 3 {
        format!("{} profiles", names.len())
    } else {
        names.join(", ")
    };
    match config.queue_depths.as_slice() {
        [] => {}
        [one] => text.push_str(&format!(" QD{one}")),
        [first, .., last] => text.push_str(&format!(" QD{first}…{last}")),
    }
    if let Some(e) = &config.emulate {
        text.push_str(&format!(" emulating {e}"));
    }
    text
}
