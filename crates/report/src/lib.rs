//! Reports from saved oltplab results (schema `oltplab.result/1`): one self-contained HTML page with
//! inline SVG charts, Markdown for CI logs, CSV for spreadsheets, and the exact merge of results of
//! drivers that each ran a part of one workload.
//!
//! Reports read nothing but the result JSON, so any result can be rendered again later. One result
//! gives its own report; several give a side-by-side comparison (ratios against the first) followed
//! by each result. Every exporter serialises the same [`model::Report`], so they agree on every figure.

mod cells;
mod classify;
mod cluster;
mod common;
mod crash;
mod csv;
mod device;
mod doc;
pub mod fmt;
mod html;
mod in_memory;
mod markdown;
mod merge;
pub mod model;
mod profiles;
mod replay;
mod run;
mod storage;
mod study;
pub mod svg;

use serde_json::Value;

pub use cells::CellAxis;
pub use doc::{validate, Kind};
pub use merge::merge;

/// Why a report or merge could not be made. Messages are one sentence naming cause and fix; the
/// caller prefixes the file name of result `index`.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("no results were given: name one or more result JSON files")]
    NoResults,
    /// Result number `index` (from 0) cannot be read.
    #[error("result {} {reason}", index + 1)]
    Invalid { index: usize, reason: String },
    #[error("{0}")]
    Merge(String),
    #[error("--by picks the axes of a study file's cells (`oltplab study --file`), and no result given is one: drop --by")]
    NoCells,
}

/// Choices of how a report is drawn.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The axes a study file's charts run along (the first; a series per value of the second);
    /// None: device, then terminals if they vary.
    pub by: Option<Vec<CellAxis>>,
}

/// The output formats of `oltplab report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Html,
    Markdown,
    Csv,
}

impl Format {
    pub const NAMES: [&'static str; 3] = ["html", "md", "csv"];

    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "html" => Some(Format::Html),
            "md" | "markdown" => Some(Format::Markdown),
            "csv" => Some(Format::Csv),
            _ => None,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Markdown => "md",
            Format::Csv => "csv",
        }
    }
}

/// One result's report, or a comparison of several, as one self-contained HTML page.
pub fn html(results: &[Value]) -> Result<String, ReportError> {
    render(results, &[], Format::Html)
}

/// The report's tables as GitHub-flavoured Markdown, for CI logs and pull requests.
pub fn markdown(results: &[Value]) -> Result<String, ReportError> {
    render(results, &[], Format::Markdown)
}

/// The report's figures as CSV in long form — `result,kind,table,row,column,value` with raw numbers
/// (units are in the column names) — which a spreadsheet's pivot table turns into any layout.
pub fn csv(results: &[Value]) -> Result<String, ReportError> {
    render(results, &[], Format::Csv)
}

/// Like [`html`], [`markdown`] and [`csv`], with a label per result (e.g. its file name) used in
/// headings, legends and tables; results without a label are named by what they measured.
pub fn render(results: &[Value], labels: &[String], format: Format) -> Result<String, ReportError> {
    render_with(results, labels, format, &Options::default())
}

/// Like [`render`], drawn as `options` say.
pub fn render_with(
    results: &[Value],
    labels: &[String],
    format: Format,
    options: &Options,
) -> Result<String, ReportError> {
    let report = build_with(results, labels, format == Format::Html, options)?;
    Ok(match format {
        Format::Html => html::write(&report),
        Format::Markdown => markdown::write(&report),
        Format::Csv => csv::write(&report),
    })
}

/// The report model; charts are drawn only when `charts` (they cost histogram decoding).
pub fn build(
    results: &[Value],
    labels: &[String],
    charts: bool,
) -> Result<model::Report, ReportError> {
    build_with(results, labels, charts, &Options::default())
}

/// Like [`build`], drawn as `options` say.
pub fn build_with(
    results: &[Value],
    labels: &[String],
    charts: bool,
    options: &Options,
) -> Result<model::Report, ReportError> {
    let docs = classify::docs(results, labels)?;
    if options.by.is_some() && !docs.iter().any(cells::is_cells) {
        return Err(ReportError::NoCells);
    }
    // Results are grouped by kind, in the order the kinds first appear.
    let mut kinds: Vec<Kind> = Vec::new();
    for d in &docs {
        if !kinds.contains(&d.kind) {
            kinds.push(d.kind);
        }
    }
    let mut sections = Vec::new();
    for kind in &kinds {
        let group: Vec<&doc::Doc> = docs.iter().filter(|d| d.kind == *kind).collect();
        if group.len() > 1 {
            sections.push(match kind {
                Kind::Device => device::comparison(&group, charts),
                Kind::Run => run::comparison(&group, charts),
                Kind::Replay => replay::comparison(&group, charts),
                Kind::Study => study::comparison(&group, charts),
                Kind::Crash => crash::comparison(&group, charts),
            });
        }
    }
    for (i, d) in docs.iter().enumerate() {
        let mut s = match d.kind {
            Kind::Device => device::section(d, i, charts),
            Kind::Run => run::section(d, i, charts),
            Kind::Replay => replay::section(d, i, charts),
            Kind::Study => study::section(d, i, charts, options.by.as_deref()),
            Kind::Crash => crash::section(d, i, charts),
        };
        if d.is_merge() {
            s.notes.insert(0, merge::describe(d.v));
        }
        // A comparison already shows environments and configurations side by side.
        if docs.iter().filter(|o| o.kind == d.kind).count() > 1 {
            s.tables.retain(|t| t.id != "env" && t.id != "config");
        }
        sections.push(s);
    }
    let (title, subtitle) = if docs.len() == 1 {
        (
            format!("oltplab {} report", docs[0].kind.name()),
            format!("{}, started {}", docs[0].label, docs[0].head.started_at),
        )
    } else {
        let kinds_text: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        (
            format!("oltplab comparison of {} results", docs.len()),
            format!(
                "{} result{} of kind {}; ratios are against the first of each kind",
                docs.len(),
                if docs.len() == 1 { "" } else { "s" },
                kinds_text.join(", ")
            ),
        )
    };
    Ok(model::Report {
        title,
        subtitle,
        sections,
    })
}
