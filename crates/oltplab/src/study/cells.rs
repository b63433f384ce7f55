//! The loop around a study file's cells, for every measurement — S1's (`s1`), S2's and S3's
//! (`storage`), S4's (`profiles`) and S5's (`in-memory`): the cells a `--resume` keeps, the
//! first save (so the directory names its kind of study), the copy of the file, a save and a
//! report after every cell, Ctrl-C, and the end. Each measurement supplies its cells'
//! measurement and its result through [`Measurement`].

use std::path::Path;
use std::sync::atomic::Ordering;

use oltplab_core::Result;
use oltplab_metrics::schema::ResultDoc;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::file::{self, Begun, CellPlan, FileStudy, RunDirs, CELLS_DIR};
use super::{State, Stoppable, StudyArgs};
use crate::output;
use crate::STOP;
use oltplab_schema::SavedCell;

/// What one measurement does for its cells.
pub(super) trait Measurement {
    /// A finished cell's result, saved as `cells/<id>-<hash>.json`.
    type Cell: Serialize + DeserializeOwned + Clone + SavedCell;
    /// The study's summary.
    type Summary: Serialize + Stoppable;
    /// What the study's cells are ("device sets"), for the line that says what runs.
    const CELLS: &'static str;
    /// What a kept cell's progress line calls it.
    fn kept_name(&self, cell: &CellPlan, _: &Self::Cell) -> String {
        cell.id.clone()
    }
    /// Says what the study runs, once its output directory is known.
    fn intro(&self, out: &Path);
    /// The study's result from its finished cells: `ran` in this run, the rest kept.
    fn doc(
        &self,
        started_at: &str,
        results: &[Option<Self::Cell>],
        state: State,
        ran: usize,
    ) -> ResultDoc<Self::Summary, Value>;
    /// Measures cell `i` (`results`: the cells finished so far); None when Ctrl-C stopped it,
    /// which then reruns from its start.
    fn measure(
        &mut self,
        i: usize,
        cell: &CellPlan,
        results: &[Option<Self::Cell>],
        out: &Path,
    ) -> Result<Option<Self::Cell>>;
    /// The table printed at the end.
    fn table(&self, summary: &Self::Summary, out: &Path);
}

/// The study's cells finished in `--resume DIR`, by cell: a cell's file that reads as a result
/// of this measurement and names the cell (its id and configuration hash); None for any other
/// (damaged, of another version: the cell runs again), and without `--resume`.
pub(super) fn kept<M: Measurement>(study: &FileStudy, args: &StudyArgs) -> Vec<Option<M::Cell>> {
    let Some(dir) = &args.resume else {
        return vec![None; study.cells.len()];
    };
    study
        .cells
        .iter()
        .map(|c| {
            let text = std::fs::read_to_string(dir.join(CELLS_DIR).join(c.result_file())).ok()?;
            serde_json::from_str::<M::Cell>(&text)
                .ok()
                .filter(|r| r.cell_key() == (c.id.as_str(), c.hash.as_str()))
        })
        .collect()
}

/// Runs the study's cells not in `kept`, each saved when it finishes, then its result.
pub(super) fn run<M: Measurement>(
    study: &FileStudy,
    args: &StudyArgs,
    begun: Begun,
    kept: Vec<Option<M::Cell>>,
    measurement: &mut M,
) -> Result<()> {
    let count = study.cells.len();
    let dirs = RunDirs::prepare(args)?;
    dirs.announce(
        begun,
        &study.path,
        kept.iter().flatten().count(),
        count,
        M::CELLS,
    );
    let RunDirs {
        started_at,
        out,
        cells_dir,
        copy,
    } = dirs;
    measurement.intro(&out);
    let json = args.json.as_deref();
    let mut results = kept;
    // The result before the copy of the file, so that `--resume DIR` knows the kind of study;
    // it reads as unfinished until the study ends.
    if args.resume.is_none() {
        let doc = measurement.doc(&started_at, &results, State::Running, 0);
        super::save(&doc, &out, json)?;
    }
    file::keep_study_file(&copy, study)?;
    let mut ran = 0;
    let mut stopped = false;
    for (i, cell) in study.cells.iter().enumerate() {
        if let Some(r) = &results[i] {
            output::note!(
                "\n[{}/{count}] {}: finished earlier, kept",
                i + 1,
                measurement.kept_name(cell, r)
            );
            continue;
        }
        if STOP.load(Ordering::Relaxed) {
            stopped = true;
            break;
        }
        let Some(result) = measurement.measure(i, cell, &results, &out)? else {
            stopped = true;
            break;
        };
        output::write_json(&cells_dir.join(cell.result_file()), &result)?;
        results[i] = Some(result);
        ran += 1;
        let doc = measurement.doc(&started_at, &results, State::Running, ran);
        super::save(&doc, &out, json)?;
        super::write_report(&doc, &out)?;
    }
    stopped |= STOP.load(Ordering::Relaxed);
    let state = if stopped {
        State::Stopped
    } else {
        State::Finished
    };
    let doc = measurement.doc(&started_at, &results, state, ran);
    super::end(doc, &out, json, |s| {
        measurement.table(s, &out);
        if stopped {
            output::note!(
                "\nto finish the study: oltplab study --resume {}",
                out.display()
            );
        }
    })
}
