//! Where results go: every measuring run gets its own output directory (created and marked by
//! oltplab) holding `result.json`; `--json FILE` adds a copy. Nothing oltplab did not write is
//! overwritten without `--force`.

use std::path::{Path, PathBuf};

use oltplab_core::safety::{self, io_usage};
use oltplab_core::{Error, Result};
use oltplab_metrics::schema::{is_result_file, ResultDoc, Tool};
use serde::Serialize;

pub const RESULT_FILE: &str = "result.json";

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

pub fn check_json_path(path: &Path, force: bool) -> Result<()> {
    check_writable(path, force, is_result_file)
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
    if let Some(json) = json {
        doc.write_atomic(json)
            .map_err(|e| io_usage(json, "write", &e))?;
    }
    Ok(())
}
