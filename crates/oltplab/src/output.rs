//! Where results and terminal output go: every measuring run gets its own output directory (created
//! and marked by oltplab) holding `result.json`; `--json FILE` adds a copy, and `--json -` puts the
//! result on standard output (then every human line goes to stderr). `--quiet` silences progress and
//! summaries; errors and warnings are always printed on stderr. Nothing oltplab did not write is
//! overwritten without `--force`.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use oltplab_core::safety::{self, io_usage};
use oltplab_core::{Error, Result};
use oltplab_metrics::env::Env;
use oltplab_metrics::schema::{is_result_file, ResultDoc, Tool, SCHEMA};
use oltplab_metrics::Warning;
use serde::Serialize;

pub const RESULT_FILE: &str = "result.json";
/// The HTML report a study or crash writes beside its result (`oltplab report` renders it again).
pub const REPORT_FILE: &str = "report.html";

/// `report.html` in the output directory, from the result `doc`.
pub fn write_report<T: Serialize>(doc: &T, out: &Path) -> Result<()> {
    let report = oltplab_report::html(&[serde_json::to_value(doc).expect("serialises")])
        .map_err(|e| Error::failed(format!("writing the report failed: {e}")))?;
    let path = out.join(REPORT_FILE);
    std::fs::write(&path, report).map_err(|e| io_usage(&path, "write", &e))
}

/// `--quiet`, set once by `main`.
static QUIET: AtomicBool = AtomicBool::new(false);
/// `Some` once `--json -` claimed standard output: the latest result written there, printed once
/// when the command ends ([`emit_stdout_json`]) because commands save after every step.
static STDOUT_JSON: Mutex<Option<String>> = Mutex::new(None);

pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// `-` as a `--json` or `-o` destination: standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

fn stdout_json() -> std::sync::MutexGuard<'static, Option<String>> {
    STDOUT_JSON.lock().unwrap_or_else(|e| e.into_inner())
}

fn stdout_claimed() -> bool {
    stdout_json().is_some()
}

/// Prints the result that `--json -` asked for; `main` calls it once, after the command (also
/// after an error or Ctrl-C, so a partial result reaches the script as it reaches the file).
pub fn emit_stdout_json() {
    if let Some(text) = stdout_json().take().filter(|t| !t.is_empty()) {
        let mut out = std::io::stdout().lock();
        // A closed pipe is the reader's choice, not an error worth a message.
        let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }
}

/// A progress or header line on stderr; nothing with `--quiet`.
pub fn note_line(args: fmt::Arguments) {
    if !quiet() {
        eprintln!("{args}");
    }
}

/// A line of a command's summary: on stdout, or on stderr when stdout carries the JSON result
/// (`--json -`); nothing with `--quiet`.
pub fn say_line(args: fmt::Arguments) {
    if quiet() {
        return;
    }
    if stdout_claimed() {
        eprintln!("{args}");
    } else {
        println!("{args}");
    }
}

/// Warnings, one line each on stderr, also with `--quiet`.
pub fn print_warnings(warnings: &[Warning]) {
    for w in warnings {
        eprintln!("warning: {}", w.message);
    }
}

/// `note!(…)`: like `eprintln!`, silent with `--quiet`.
macro_rules! note {
    ($($arg:tt)*) => { $crate::output::note_line(format_args!($($arg)*)) };
}

/// `say!(…)`: a summary line, see [`say_line`].
macro_rules! say {
    ($($arg:tt)*) => { $crate::output::say_line(format_args!($($arg)*)) };
}

pub(crate) use {note, say};

/// A result document of `kind` with no intervals, histograms or warnings yet: the one place the
/// schema name and oltplab's identity go into a result.
pub fn new_doc<S, I>(
    kind: &str,
    started_at: String,
    config: serde_json::Value,
    env: Env,
    summary: S,
) -> ResultDoc<S, I> {
    ResultDoc {
        schema: SCHEMA.into(),
        kind: kind.into(),
        tool: tool(),
        started_at,
        config,
        env,
        summary,
        intervals: Vec::new(),
        histograms: Default::default(),
        warnings: Vec::new(),
    }
}

pub fn tool() -> Tool {
    Tool {
        name: "oltplab".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git: env!("OLTPLAB_GIT").into(),
    }
}

/// The run's output directory: `dir` if given, else `./oltplab-results/<kind>-<UTC time>`.
pub fn prepare_out_dir(
    dir: Option<&Path>,
    kind: &str,
    started_at: &str,
    force: bool,
) -> Result<PathBuf> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => {
            let stamp: String = started_at.chars().filter(|c| c.is_ascii_digit()).collect();
            let (date, time) = stamp.split_at(stamp.len().min(8));
            let base = Path::new("oltplab-results");
            safety::ensure_own_dir(base, force)?;
            // Two runs in the same second get -2, -3 … rather than sharing a directory.
            let mut candidate = base.join(format!("{kind}-{date}-{time}"));
            let mut n = 2;
            while candidate.exists() {
                candidate = base.join(format!("{kind}-{date}-{time}-{n}"));
                n += 1;
            }
            candidate
        }
    };
    safety::ensure_own_dir(&dir, force)?;
    Ok(dir)
}

/// Refuses, before any measuring, a `--json`/`--lat-log` path that would overwrite a file oltplab
/// did not write.
pub fn check_writable(path: &Path, force: bool, is_ours: impl Fn(&Path) -> bool) -> Result<()> {
    if path.is_dir() {
        return Err(Error::usage(format!(
            "{} is a directory: give a file name",
            path.display()
        )));
    }
    if path.exists() && !force && !is_ours(path) {
        return Err(Error::usage(format!(
            "{} exists and was not written by oltplab: choose another file name, or add --force to overwrite it",
            path.display()
        )));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return Err(Error::usage(format!(
                "the directory {} does not exist: create it first",
                parent.display()
            )));
        }
    }
    Ok(())
}

/// Checks a `--json` destination before any work; `-` claims standard output for the JSON.
pub fn check_json_dest(path: &Path, force: bool, is_ours: impl Fn(&Path) -> bool) -> Result<()> {
    if is_stdout(path) {
        stdout_json().get_or_insert_with(String::new);
        return Ok(());
    }
    check_writable(path, force, is_ours)
}

pub fn check_json_path(path: &Path, force: bool) -> Result<()> {
    check_json_dest(path, force, is_result_file)
}

/// Writes `value` as pretty JSON to `path` (through a temporary file and a rename, so a reader
/// never sees half a file), or keeps it for standard output when `path` is `-`.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).expect("results serialise");
    text.push('\n');
    if is_stdout(path) {
        *stdout_json() = Some(text);
        return Ok(());
    }
    write_atomic(path, &text)
}

/// Writes through a temporary file, a sync and a rename, so neither a reader nor a reboot sees
/// half a file.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    oltplab_core::safety::replace_durably(path, text.as_bytes())
        .map_err(|e| io_usage(path, "write", &e))
}

/// Writes the result into the output directory and to `--json`; called after every point, so an
/// interrupted or failed run keeps what it measured.
pub fn save<S: Serialize, I: Serialize>(
    doc: &ResultDoc<S, I>,
    out_dir: &Path,
    json: Option<&Path>,
) -> Result<()> {
    let main = out_dir.join(RESULT_FILE);
    doc.write_atomic(&main)
        .map_err(|e| io_usage(&main, "write", &e))?;
    match json {
        Some(json) => write_json(json, doc),
        None => Ok(()),
    }
}

/// The write transactions' COMMIT round trip, and on a cluster the nodes' replication part of it.
pub fn print_commit(commit: Option<&oltplab_schema::CommitSummary>) {
    use oltplab_core::units::{format_count, format_ns};
    let Some(c) = commit else {
        return;
    };
    let l = &c.latency_ns;
    let mut line = format!(
        "commit (write transactions, round trip): {} timed, mean {}, p50 {}, p99 {}",
        format_count(c.commits as f64),
        format_ns(l.mean),
        format_ns(l.p50 as f64),
        format_ns(l.p99 as f64)
    );
    if c.with_last_statement > 0 {
        line.push_str(&format!(
            "; {} of them with the last statement in the same round trip",
            format_count(c.with_last_statement as f64)
        ));
    }
    eprintln!("{line}");
    if let (Some(r), Some(local), Some(share)) =
        (c.replication_ns_mean, c.local_ns_mean, c.replication_share)
    {
        eprintln!(
            "  of the mean: replication (the nodes' group communication) {} = {:.0} %, the rest (certification, commit order, local commit, client) {}",
            format_ns(r),
            100.0 * share,
            format_ns(local)
        );
    }
}

/// Several hosts by `--url`: a line per host with the connections it served.
pub fn print_hosts(hosts: &[oltplab_schema::HostUse]) {
    for h in hosts {
        eprintln!(
            "host {}: {} terminal{}, {} worker{}  {}",
            h.host,
            h.terminals,
            if h.terminals == 1 { "" } else { "s" },
            h.workers,
            if h.workers == 1 { "" } else { "s" },
            h.url
        );
    }
}

/// A run's I/O in one line on stderr: counts, bytes, flushes and IOPS of the measured window,
/// with `more` (", 3.2 reads per write") at its end.
pub fn print_io(io: &oltplab_schema::IoSummary, more: &str) {
    use oltplab_core::units::{format_bytes, format_count};
    eprintln!(
        "I/O ({}): {} reads, {} writes ({} read, {} written), {} flushes, {} IOPS{more}",
        io.source,
        format_count(io.reads as f64),
        format_count(io.writes as f64),
        format_bytes(io.read_bytes),
        format_bytes(io.written_bytes),
        format_count(io.syncs as f64),
        format_count(io.iops)
    );
}

/// The I/O of a run's devices (on a layout) and tables, as tables on stderr: the figures that say
/// which table to move and how busy each device was.
pub fn print_io_groups(io: &oltplab_schema::IoSummary) {
    use oltplab_core::units::{format_bytes, format_count};
    for (title, groups, max) in [
        ("device", &io.by_device, usize::MAX),
        ("table (indexes included)", &io.by_table, 12),
    ] {
        if groups.is_empty() {
            continue;
        }
        eprintln!(
            "  {:<36} {:>8} {:>9} {:>10} {:>10} {:>7} {:>6}",
            format!("I/O by {title}"),
            "reads",
            "writes",
            "read",
            "written",
            "share",
            "busy"
        );
        for g in groups.iter().take(max) {
            eprintln!(
                "  {:<36} {:>8} {:>9} {:>10} {:>10} {:>5.1} % {:>4.0} %",
                g.name,
                format_count(g.reads as f64),
                format_count(g.writes as f64),
                format_bytes(g.read_bytes),
                format_bytes(g.written_bytes),
                g.share_pct,
                g.busy_pct
            );
        }
        for g in groups.iter().filter(|g| g.read_cache_hit_pct.is_some()) {
            eprintln!(
                "  {}: its SSD read cache served {:.1} % of the reads",
                g.name,
                g.read_cache_hit_pct.unwrap_or(0.0)
            );
        }
        if groups.len() > max {
            eprintln!(
                "  … {} more in the result's summary.io.by_table",
                groups.len() - max
            );
        }
    }
    use oltplab_core::units::format_ns;
    for n in &io.by_node {
        eprintln!(
            "  node {} on {}: {} reads, {} writes, {} flushes, {} IOPS; p50/p99 read {}/{}, write {}/{}, flush {}/{}{}",
            n.node,
            n.device,
            format_count(n.reads as f64),
            format_count(n.writes as f64),
            format_count(n.syncs as f64),
            format_count(n.iops),
            format_ns(n.read_lat_ns.p50 as f64),
            format_ns(n.read_lat_ns.p99 as f64),
            format_ns(n.write_lat_ns.p50 as f64),
            format_ns(n.write_lat_ns.p99 as f64),
            format_ns(n.sync_lat_ns.p50 as f64),
            format_ns(n.sync_lat_ns.p99 as f64),
            n.emulation
                .as_ref()
                .map(|e| format!("; emulation {:+.1} % off the model", e.fidelity.off_pct))
                .unwrap_or_default()
        );
    }
}
