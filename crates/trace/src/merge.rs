//! Joining per-process trace parts (the shim writes one per process of a forking server) into one
//! trace: file tables unified by path, times put on the earliest part's clock, records time-sorted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use oltplab_core::{Error, Result};

use crate::format::TraceMeta;
use crate::reader::{TraceData, TraceReader};
use crate::writer::TraceSummary;
use crate::Record;

/// Merges `parts` into a new trace at `out`. All parts must come from one machine (one monotonic
/// clock). Incomplete parts (a process that was killed) contribute the prefix they hold.
pub fn merge(parts: &[PathBuf], out: &Path) -> Result<TraceSummary> {
    merge_filtered(parts, out, 0, |_, _| true)
}

/// [`merge`] from `from_ns` (CLOCK_MONOTONIC, [`crate::monotonic_ns`]) on, which becomes the
/// trace's start if it is later than every part's, keeping only the records `keep` accepts.
/// `keep` sees each record with its submit time on CLOCK_MONOTONIC and may change its tag: this
/// is how a server's trace is cut to a measured window and its records tied to transactions.
pub fn merge_filtered(
    parts: &[PathBuf],
    out: &Path,
    from_ns: u64,
    mut keep: impl FnMut(&mut Record, u64) -> bool,
) -> Result<TraceSummary> {
    if parts.is_empty() {
        return Err(Error::usage("no trace parts to merge: give at least one"));
    }
    let readers = parts
        .iter()
        .map(|p| TraceReader::open(p))
        .collect::<Result<Vec<_>>>()?;
    let earliest_ns = readers.iter().map(|r| r.start_ns()).min().unwrap_or(0);
    let start_ns = earliest_ns.max(from_ns);
    // The wall clock of the new start, from the earliest part's pair of clocks.
    let start_unix_ns = readers
        .iter()
        .find(|r| r.start_ns() == earliest_ns)
        .map_or(0, |r| {
            r.start_unix_ns().saturating_add(start_ns - earliest_ns)
        });
    let mut merged = TraceData {
        meta: merged_meta(&readers),
        start_ns,
        start_unix_ns,
        complete: true,
        ..TraceData::default()
    };
    let mut ids: HashMap<String, u16> = HashMap::new();
    for reader in &readers {
        let mut remap: HashMap<u16, u16> = HashMap::new();
        for (&id, path) in reader.files() {
            let new = match ids.get(path) {
                Some(&n) => n,
                None => {
                    if merged.files.len() >= u16::MAX as usize {
                        return Err(Error::usage(
                            "the parts name more than 65,535 distinct files together: merge fewer parts",
                        ));
                    }
                    merged.files.push(path.clone());
                    let n = (merged.files.len() - 1) as u16;
                    ids.insert(path.clone(), n);
                    n
                }
            };
            remap.insert(id, new);
            if let Some(&slot) = reader.places().get(&id) {
                merged.places.insert(new, slot);
            }
        }
        // A file an earlier part already mapped keeps that part's map: two maps of one file
        // (two runs on one database) would interleave.
        let mapped: std::collections::HashSet<u16> = merged.tables.iter().map(|e| e.file).collect();
        merged.tables.extend(
            reader
                .tables()
                .iter()
                .map(|e| crate::format::TableExtent {
                    file: remap[&e.file],
                    ..e.clone()
                })
                .filter(|e| !mapped.contains(&e.file)),
        );
        let part_start_ns = reader.start_ns();
        // The first record whose time on the shared clock does not fit, by index in file order.
        let mut overflow: Option<(u64, Record)> = None;
        let mut index = 0u64;
        reader.for_each(|r| {
            index += 1;
            // The part's start plus the record's time and latency must fit the clock; a crafted
            // part's need not.
            let at_ns = match part_start_ns
                .checked_add(r.submit_ns)
                .filter(|at| at.checked_add(r.latency_ns as u64).is_some())
            {
                Some(at) => at,
                None => {
                    overflow.get_or_insert((index, *r));
                    return;
                }
            };
            if at_ns < start_ns {
                return;
            }
            let mut r = *r;
            r.submit_ns = at_ns - start_ns;
            // The reader checked that every record's file is in its table.
            r.file = remap[&r.file];
            if keep(&mut r, at_ns) {
                merged.records.push(r);
            }
        })?;
        if let Some((i, r)) = overflow {
            return Err(Error::usage(format!(
                "cannot merge {}: its record {i} at {} ns after the part's start at {part_start_ns} ns (CLOCK_MONOTONIC) overflows the 64-bit clock; leave out this damaged part",
                reader.path().display(),
                r.submit_ns
            )));
        }
    }
    merged.records.sort_by_key(|r| r.submit_ns);
    merged.tables.sort();
    merged.tables.dedup();
    merged.save(out)
}

fn merged_meta(readers: &[TraceReader]) -> TraceMeta {
    let first = readers[0].meta();
    let mut meta = TraceMeta {
        tool: TraceMeta::new("").tool,
        source: first.source.clone(),
        device: first.device.clone(),
        pid: None,
        started_at: first.started_at.clone(),
        extra: first.extra.clone(),
    };
    meta.extra
        .insert("merged_parts".into(), readers.len().to_string());
    let pids: Vec<String> = readers
        .iter()
        .filter_map(|r| r.meta().pid.map(|p| p.to_string()))
        .collect();
    if !pids.is_empty() {
        meta.extra.insert("pids".into(), pids.join(","));
    }
    let incomplete = readers.iter().filter(|r| !r.is_complete()).count();
    if incomplete > 0 {
        meta.extra
            .insert("incomplete_parts".into(), incomplete.to_string());
    }
    meta
}
