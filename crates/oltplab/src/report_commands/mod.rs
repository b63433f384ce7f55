//! `oltplab report` (saved results → HTML, Markdown or CSV), `oltplab merge` (results of partitioned
//! drivers → one result), and the generated `completions` and `man` page.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use oltplab_core::safety::io_usage;
use oltplab_core::{Error, Result};
use oltplab_report::{Format, ReportError};
use oltplab_schema::{read_at, ConfigView, DeviceSummary, ReplaySummary, RunFigures};
use serde_json::Value;

use crate::output;

const AFTER_REPORT_HELP: &str = "\
Examples:
  oltplab report oltplab-results/device-20261122-095811        one result → ./report.html
  oltplab report a/result.json b/result.json -o cmp.html       side by side, ratios against a
  oltplab report study-out/ -o study.html                      a study's results.json
  oltplab report run/result.json --format md                   Markdown tables on stdout (CI logs)
  oltplab report run/result.json -o run.csv                    CSV for a spreadsheet (format from -o)
  oltplab report study-out/ --by terminals,device              a study file's charts along terminals,
                                                               one line per device

A RESULT is a result JSON file or a directory holding result.json (or a study's results.json).
The report is built only from the saved results, so any result can be rendered again later; the HTML
is one file with inline SVG charts that needs no network. oltplab overwrites only reports it wrote,
unless --force is given.";

const AFTER_MERGE_HELP: &str = "\
Examples:
  oltplab merge host1/result.json host2/result.json -o merged.json
  oltplab merge a.json b.json -o - | jq .summary.tpmc          the merged result on stdout
  oltplab report merged.json                                   the merged run as a report

Merge the results of drivers that ran parts of one workload at the same time (for example
`oltplab run tpcc --warehouse-range A:B --start-at TIME` on several machines against one server).
Histograms are added exactly, so merged percentiles are those of all operations; counts are summed
and TPC-C's tpmC is the summed New-Orders over the merged window; per-second intervals are put on
one clock from each part's measured-window start. TPC-C parts with overlapping --warehouse-range are
refused; a warning says when the parts' measured windows overlapped for less than 90 %.";

#[derive(Args, Debug)]
#[command(after_help = AFTER_REPORT_HELP)]
pub struct ReportArgs {
    /// Result JSON files, or directories holding result.json / results.json
    #[arg(value_name = "RESULT", required = true)]
    pub results: Vec<PathBuf>,

    /// Where to write the report; - for standard output [default: report.html for html, standard
    /// output for md and csv]
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Output format [default: from the -o file's extension, else html]
    #[arg(long, value_parser = Format::NAMES)]
    pub format: Option<String>,

    /// Overwrite FILE even if oltplab did not write it
    #[arg(long)]
    pub force: bool,

    /// A study file's charts (`oltplab study --file`): along the first axis, one series per value
    /// of the second; axes: device, engine, terminals, pacing [default: device, then terminals if
    /// they vary]
    #[arg(long, value_name = "AXIS[,AXIS]")]
    pub by: Option<String>,
}

#[derive(Args, Debug)]
#[command(after_help = AFTER_MERGE_HELP)]
pub struct MergeArgs {
    /// Result JSON files of one kind (or directories holding result.json), one per driver
    #[arg(value_name = "RESULT", required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,

    /// The merged result's file; - for standard output
    #[arg(short = 'o', long, value_name = "FILE", required = true)]
    pub output: PathBuf,

    /// Overwrite FILE even if oltplab did not write it
    #[arg(long)]
    pub force: bool,
}

/// A result file's path from a RESULT argument: the file, or DIR/result.json, or DIR/results.json.
fn result_path(arg: &Path) -> Result<PathBuf> {
    if arg.is_dir() {
        for name in [output::RESULT_FILE, "results.json"] {
            let p = arg.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
        return Err(Error::usage(format!(
            "{} is a directory without result.json or results.json: name a result file or an oltplab output directory",
            arg.display()
        )));
    }
    Ok(arg.to_path_buf())
}

fn read_result(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| io_usage(path, "read", &e))?;
    serde_json::from_str(&text).map_err(|e| {
        Error::usage(format!(
            "{} is not JSON ({e}): name a result.json that oltplab wrote",
            path.display()
        ))
    })
}

/// A short name per result for headings and legends: the output directory's name for
/// `…/<dir>/result.json`, else the file's stem; repeated names get `#N`.
fn labels(paths: &[PathBuf]) -> Vec<String> {
    let mut out: Vec<String> = paths
        .iter()
        .map(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let generic = stem == "result" || stem == "results";
            match p.parent().and_then(Path::file_name) {
                Some(dir) if generic => dir.to_string_lossy().into_owned(),
                _ => stem,
            }
        })
        .collect();
    for i in 0..out.len() {
        if out.iter().filter(|l| **l == out[i]).count() > 1 {
            out[i] = format!("#{} {}", i + 1, out[i]);
        }
    }
    out
}

fn load(args: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<Value>)> {
    let paths: Vec<PathBuf> = args.iter().map(|a| result_path(a)).collect::<Result<_>>()?;
    load_paths(paths)
}

fn load_paths(paths: Vec<PathBuf>) -> Result<(Vec<PathBuf>, Vec<Value>)> {
    let values: Vec<Value> = paths
        .iter()
        .map(|p| read_result(p))
        .collect::<Result<_>>()?;
    for (p, v) in paths.iter().zip(&values) {
        oltplab_report::validate(v)
            .map_err(|reason| Error::usage(format!("{} {reason}", p.display())))?;
    }
    Ok((paths, values))
}

fn report_error(err: ReportError, paths: &[PathBuf]) -> Error {
    match err {
        ReportError::Invalid { index, reason } => Error::usage(format!(
            "{} {reason}",
            paths
                .get(index)
                .map_or("a result".into(), |p| p.display().to_string())
        )),
        other => Error::usage(other.to_string()),
    }
}

/// True if `path` holds a report oltplab wrote (so it may be replaced without --force).
fn is_own_report(path: &Path) -> bool {
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = vec![0u8; 1024];
    let n = std::io::Read::read(&mut file, &mut head).unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..n]);
    head.contains("<meta name=\"generator\" content=\"oltplab")
        || head.starts_with("# oltplab ")
        || head.starts_with("result,kind,table,row,column,value")
}

pub fn run(args: ReportArgs) -> Result<()> {
    let by = args
        .by
        .as_deref()
        .map(|text| {
            oltplab_report::CellAxis::parse_list(text)
                .map_err(|why| Error::usage(format!("--by {text}: {why}")))
        })
        .transpose()?;
    let from_ext = args
        .output
        .as_ref()
        .and_then(|o| o.extension())
        .and_then(|e| Format::parse(&e.to_string_lossy()));
    let format = match &args.format {
        Some(name) => Format::parse(name).expect("clap checked the name"),
        None => from_ext.unwrap_or(Format::Html),
    };
    let output = match &args.output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) => Some(p.clone()),
        None if format == Format::Html => Some(PathBuf::from("report.html")),
        None => None,
    };
    if let Some(out) = &output {
        output::check_writable(out, args.force, is_own_report)?;
    }
    let (paths, values) = load(&args.results)?;
    let labels = if values.len() == 1 {
        Vec::new()
    } else {
        labels(&paths)
    };
    let text =
        oltplab_report::render_with(&values, &labels, format, &oltplab_report::Options { by })
            .map_err(|e| report_error(e, &paths))?;
    match output {
        Some(out) => {
            output::write_atomic(&out, &text)?;
            output::note!(
                "oltplab report: {} of {} result{} written to {} ({})",
                format.extension(),
                values.len(),
                if values.len() == 1 { "" } else { "s" },
                out.display(),
                oltplab_core::units::format_bytes(text.len() as u64)
            );
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not an error worth a message.
            let _ = stdout
                .write_all(text.as_bytes())
                .and_then(|_| stdout.flush());
        }
    }
    Ok(())
}

pub fn merge(args: MergeArgs) -> Result<()> {
    output::check_json_path(&args.output, args.force)?;
    let paths: Vec<PathBuf> = args
        .results
        .iter()
        .map(|a| result_path(a))
        .collect::<Result<_>>()?;
    if let Some(again) = paths
        .iter()
        .enumerate()
        .find(|(i, p)| paths[..*i].iter().any(|q| same_file(q, p)))
    {
        return Err(Error::usage(format!(
            "{} is named twice: merge each driver's result once",
            again.1.display()
        )));
    }
    let (paths, values) = load_paths(paths)?;
    let mut merged = oltplab_report::merge(&values).map_err(|e| report_error(e, &paths))?;
    merged["tool"] = serde_json::to_value(output::tool()).expect("plain strings");
    if let Some(parts) = merged
        .pointer_mut("/config/parts")
        .and_then(Value::as_array_mut)
    {
        for (part, path) in parts.iter_mut().zip(&paths) {
            part["file"] = Value::String(path.display().to_string());
        }
    }
    output::write_json(&args.output, &merged)?;
    let kind = ConfigView::of(&merged["config"])
        .merged_kind
        .unwrap_or_else(|| "?".into());
    let figure = headline(&merged, &kind)
        .map(|(name, v)| format!(": {name} {}", oltplab_core::units::format_count(v)))
        .unwrap_or_default();
    output::note!(
        "oltplab merge: {} {kind} results merged into {}{figure}",
        values.len(),
        if output::is_stdout(&args.output) {
            "standard output".into()
        } else {
            args.output.display().to_string()
        }
    );
    for w in merged["warnings"].as_array().into_iter().flatten() {
        if let Some(msg) = w.get("message").and_then(Value::as_str) {
            eprintln!("warning: {msg}");
        }
    }
    Ok(())
}

/// The merged result's headline figure, read through its kind's summary type: a run's tpmC (TPC-C)
/// or else its transactions per second (order entry, TATP), a device's or replay's IOPS.
fn headline(merged: &Value, kind: &str) -> Option<(&'static str, f64)> {
    match kind {
        "run" => {
            let s: RunFigures = read_at(merged, "summary").ok()?;
            let tpmc = s.tpmc.flatten().map(|v| ("tpmc", v));
            tpmc.or(s.tps.flatten().map(|v| ("tps", v)))
        }
        "device" => read_at::<DeviceSummary>(merged, "summary")
            .ok()
            .map(|s| ("iops", s.iops)),
        "replay" => read_at::<ReplaySummary>(merged, "summary")
            .ok()
            .map(|s| ("iops", s.iops)),
        _ => None,
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
