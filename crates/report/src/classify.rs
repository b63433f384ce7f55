//! The results a report is made of: each checked, read through its kind's typed document (a
//! study's by its `summary.scenario`, the one field read before the type is known, through
//! `StudyHead`; the page modules then recognise it by its `Figures`) and labelled from its config
//! (`ConfigView`). Above the page
//! modules it asks, so that they import only `doc` and `common` below them.

use oltplab_schema::{read_at, read_value, StudyHead};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::doc::{describe_device, envelope, validate, Doc, Figures, Kind};
use crate::ReportError;

/// Checks every result, and gives each a label: the caller's, or `#N` and what it measured.
pub fn docs<'a>(results: &'a [Value], labels: &[String]) -> Result<Vec<Doc<'a>>, ReportError> {
    if results.is_empty() {
        return Err(ReportError::NoResults);
    }
    results
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let invalid = |reason| ReportError::Invalid { index: i, reason };
            let kind = validate(v).map_err(invalid)?;
            let head = envelope(v).map_err(invalid)?;
            let mut doc = Doc::new(v, head, kind, String::new());
            // Which study it is decides the summary's type; a scenario this version does not know
            // stays untyped (its section shows no figures).
            let study = study_head(v);
            doc.figures = match (kind, study.scenario.as_deref()) {
                (Kind::Study, Some("s1")) => Figures::S1(summary(v).map_err(invalid)?),
                (Kind::Study, Some("cache-tiers" | "placement" | "storage")) => {
                    Figures::Storage(summary(v).map_err(invalid)?)
                }
                (Kind::Study, Some("cluster")) => Figures::Cluster(summary(v).map_err(invalid)?),
                (Kind::Study, Some("file")) => Figures::Cells(summary(v).map_err(invalid)?),
                (Kind::Study, Some("in-memory")) => Figures::InMemory(summary(v).map_err(invalid)?),
                (Kind::Study, Some("profiles")) => Figures::Profiles(summary(v).map_err(invalid)?),
                (Kind::Device, _) => Figures::Device(summary(v).map_err(invalid)?),
                (Kind::Replay, _) => Figures::Replay(summary(v).map_err(invalid)?),
                (Kind::Crash, _) => Figures::Crash(summary(v).map_err(invalid)?),
                (Kind::Run, _) => {
                    Figures::Run(Box::new(read_value(v).map_err(|e| invalid(e.to_string()))?))
                }
                (Kind::Study, _) => Figures::Untyped,
            };
            doc.label = match labels.get(i) {
                Some(l) => l.clone(),
                None if results.len() == 1 => describe(&doc),
                None => format!("#{} {}", i + 1, describe(&doc)),
            };
            Ok(doc)
        })
        .collect()
}

/// A result's `summary` read as its typed document, or the sentence naming the field that stops it.
fn summary<T: DeserializeOwned>(v: &Value) -> Result<Box<T>, String> {
    read_at(v, "summary")
        .map(Box::new)
        .map_err(|e| e.to_string())
}

/// A study's `summary` as far as it is read before its type is known.
fn study_head(v: &Value) -> StudyHead {
    StudyHead::of(&v["summary"])
}

/// A description of what was measured, from the config, for headings.
fn describe(doc: &Doc) -> String {
    match doc.kind {
        Kind::Device => describe_device(&doc.config),
        Kind::Run => {
            let run = crate::run::document(doc);
            let workload = doc
                .config
                .workload
                .as_deref()
                .or(run.and_then(|r| r.summary.workload.as_deref()))
                .unwrap_or("workload");
            let mut parts = vec![workload.to_string()];
            if let Some(e) = doc.config.engine() {
                parts.push(format!("on {e}"));
            }
            // Orders: the table kind and what each transaction does.
            if let Some((Some(t), Some(m))) =
                run.map(|r| (r.summary.tables.as_deref(), r.summary.mode.as_deref()))
            {
                parts.push(format!("{t} tables, {m}"));
            }
            if let Some(w) = doc.config.warehouses {
                parts.push(format!("{w} warehouses"));
            }
            if let Some(t) = doc.config.terminals {
                parts.push(format!("{t} terminals"));
            }
            if doc.config.procedures == Some(true) {
                parts.push("server-side procedures".into());
            }
            if let Some(d) = &doc.config.emulate {
                parts.push(format!("emulating {d}"));
            }
            parts.join(", ")
        }
        Kind::Replay => {
            let mut text = "trace replay".to_string();
            if let Some(f) = doc.config.trace_file() {
                text.push_str(&format!(" of {f}"));
            }
            if let Some(d) = &doc.config.emulate {
                text.push_str(&format!(" emulating {d}"));
            }
            text
        }
        Kind::Crash => match &doc.figures {
            Figures::Crash(s) => format!(
                "crash {} on {}, {} row{}",
                s.workload,
                s.engine,
                s.rows.len(),
                if s.rows.len() == 1 { "" } else { "s" }
            ),
            _ => "crash".into(),
        },
        Kind::Study => {
            let study = study_head(doc.v);
            let scenario = doc
                .config
                .scenario
                .as_deref()
                .or(study.scenario.as_deref())
                .unwrap_or("S1");
            if let Figures::InMemory(s) = &doc.figures {
                let n = s.runs.len();
                return format!(
                    "study in-memory on {}, {n} sweep{}",
                    s.engine,
                    if n == 1 { "" } else { "s" }
                );
            }
            if scenario == "file" {
                return crate::cells::label(doc);
            }
            if matches!(scenario, "cache-tiers" | "placement" | "storage") {
                return crate::storage::label(doc);
            }
            if scenario == "cluster" {
                return crate::cluster::label(doc);
            }
            if scenario == "profiles" {
                return crate::profiles::label(doc);
            }
            let n = match &doc.figures {
                Figures::S1(s) => s.devices.len(),
                _ => study.devices,
            };
            format!(
                "study {scenario}, {n} device{}",
                if n == 1 { "" } else { "s" }
            )
        }
    }
}
