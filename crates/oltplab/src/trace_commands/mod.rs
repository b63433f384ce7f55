//! `oltplab trace stat|convert|replay|merge`: inspect, convert, replay and join I/O traces.

pub mod replay;
mod stat;

use std::path::PathBuf;

use clap::{Args, Subcommand};
use oltplab_core::units::format_count;
use oltplab_core::{Error, Result};
use oltplab_trace::convert::{self, Format};

pub use replay::ReplayArgs;

#[derive(Args, Debug)]
#[command(after_help = AFTER_TRACE_HELP)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub command: TraceCommand,
}

const AFTER_TRACE_HELP: &str = "\
Examples:
  oltplab trace stat run.trace                          what the database did to its files
  oltplab trace replay run.trace --target /mnt/ssd/r    the same I/O as fast as the device allows
  oltplab trace replay run.trace --target r --time-scale 1 --emulate hdd-10k
  oltplab trace convert run.trace --to fio-iolog-v3 -o run.iolog
  oltplab trace convert Financial1.csv --from msr-csv --to oltplab -o fin.trace

Traces are captured with `oltplab run … --trace FILE` (or `oltplab emulate --trace FILE`).";

#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Operation counts, IOPS and I/Os in flight over time, sizes, random share, per file and per transaction type
    Stat(StatArgs),
    /// Convert to and from fio's iolog v3; import fio iolog v2, blkparse text output, MSR Cambridge CSV
    Convert(ConvertArgs),
    /// Replay a trace on copies of its files: same per-thread order and concurrency, time between I/Os dropped or scaled
    Replay(ReplayArgs),
    /// Join per-process trace parts (a forking server's) into one time-sorted trace
    Merge(MergeArgs),
}

#[derive(Args, Debug)]
pub struct StatArgs {
    /// Trace file (oltplab's, or any format --from names)
    pub file: PathBuf,

    /// Format of FILE [default: detected from its first bytes]
    #[arg(long, value_name = "FORMAT", value_parser = Format::NAMES)]
    pub from: Option<String>,

    /// Also write the statistics as JSON to FILE; - for standard output (the table then goes to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Rows of the per-second table to print (all are in the JSON)
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub seconds: usize,
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Input trace
    pub file: PathBuf,

    /// Input format [default: detected from its first bytes]
    #[arg(long, value_name = "FORMAT", value_parser = Format::NAMES)]
    pub from: Option<String>,

    /// Output format
    #[arg(long, value_name = "FORMAT", value_parser = Format::OUTPUT_NAMES)]
    pub to: String,

    /// Output file (a new file, or one oltplab wrote)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Trace parts, e.g. run.trace.1234 run.trace.1240 …
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,

    /// The merged trace (a new file, or a trace oltplab wrote)
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
}

pub fn run(args: TraceArgs) -> Result<()> {
    match args.command {
        TraceCommand::Stat(a) => stat::run(a),
        TraceCommand::Convert(a) => run_convert(a),
        TraceCommand::Replay(a) => replay::run(a),
        TraceCommand::Merge(a) => run_merge(a),
    }
}

fn format_arg(name: Option<&str>) -> Option<Format> {
    // clap already restricted the names to Format::NAMES.
    name.and_then(Format::parse)
}

fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn run_convert(a: ConvertArgs) -> Result<()> {
    if same_file(&a.file, &a.output) {
        return Err(Error::usage(
            "the output is the input file: give another -o",
        ));
    }
    let to = Format::parse(&a.to).expect("clap checked --to");
    let s = convert::convert(&a.file, format_arg(a.from.as_deref()), to, &a.output)?;
    let skipped: Vec<String> = s
        .skipped
        .iter()
        .map(|(op, n)| format!("{n} {op}"))
        .collect();
    crate::output::note!(
        "converted {} operations on {} files from {} to {}: {}{}",
        format_count(s.records_in as f64),
        s.files,
        s.from,
        s.to,
        a.output.display(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(
                " (skipped what {} cannot express: {})",
                s.to,
                skipped.join(", ")
            )
        }
    );
    if s.ignored_lines > 0 {
        crate::output::note!("ignored {} lines that were not I/O events", s.ignored_lines);
    }
    Ok(())
}

fn run_merge(a: MergeArgs) -> Result<()> {
    if a.parts.iter().any(|p| same_file(p, &a.output)) {
        return Err(Error::usage(
            "the output is one of the parts: give another -o",
        ));
    }
    let s = oltplab_trace::merge(&a.parts, &a.output)?;
    crate::output::note!(
        "merged {} parts: {} operations on {} files, {:.1} s → {}",
        a.parts.len(),
        format_count(s.records as f64),
        s.files,
        s.duration_ns as f64 / 1e9,
        a.output.display()
    );
    Ok(())
}
