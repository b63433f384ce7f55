//! `oltplab study --scenario profiles`: S4 on emulated devices. For each device set (by default a
//! 4-drive RAID5 of 15k rpm disks and one of 2012 SAS SSDs): the twelve server access profiles at
//! queue depths 1, 2, 4 … 256, each profile's geometric mean over the depths, each depth's geometric
//! mean over the profiles and the sets' ratio per profile; the set's 4 KiB and 64 KiB random reads
//! and writes at QD 4; then 16 KiB sequential reads and writes of one drive of each set (the RAID's member, behind the set's controller) at QD 1 and 32. By
//! default both sets sit behind S4's RAID controller (`wbcache(…,size=1g,readahead=on)`: write
//! back, read ahead). Every point is measured in-process
//! by `oltplab device` on the emulated device with a RAM backing, as S1's device step is, so that
//! the model, not this machine's disk, sets every time. The scenario is studies/s4.toml with its
//! options applied (`scenario_file`), each device set a cell of the study-file engine, saved when
//! it finishes and resumable (`run`). Writes `results.json` (rewritten after every set), each
//! set's cell, each device run's own result and `report.html`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use oltplab_core::units::{format_bytes, format_count};
use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec};
use oltplab_io::job::Rw;
use oltplab_metrics::schema::{geomean, now_rfc3339, DeviceSummary, ResultDoc};
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;
use serde_json::Value;

use super::cells;
use super::file::{self, CellPlan, FileStudy, Measure};
use super::shipped::{
    apply_to_shipped, command_file, file_name, split_devices, toml_string, ScenarioFile, Shipped,
    SHIPPED_FILES,
};
use super::{State, StudyArgs, DEFAULT_DEVICES, REPORT_FILE, RESULTS_FILE};
use crate::device_command;
use crate::device_command::config::{DeviceRequest, Pattern, QueueDepths};
use crate::output;
use crate::workload::target::Engine;
use crate::STOP;
use oltplab_schema::{
    CellAxes, DriveSeq, ProfileFigures, ProfileRatio, ProfileSet, ProfilesCellResult,
    ProfilesSummary, QdGeomean, RandomQd4, SetRatio,
};

/// S4's two device sets: four 15k rpm disks in RAID5 against four 2012 SAS SSDs in RAID5, each
/// behind S4's RAID controller: a 1 GB cache set to write back, read ahead (a full stripe at a
/// time) and direct I/O (reads not kept beyond the read-ahead).
pub const DEFAULT_SETS: &str = "wbcache(raid5(4,hdd-15k),size=1g,readahead=on),wbcache(raid5(4,sas-ssd-2012),size=1g,readahead=on)";
/// S4's twelve server access profiles (crates/io/src/profile.rs), in its table's order.
pub const S4_PROFILES: [&str; 12] = [
    "web-file-4k",
    "web-file-8k",
    "web-file-64k",
    "web-log",
    "oltp-db",
    "dss-db",
    "sql-log",
    "exchange",
    "media-streaming",
    "video-on-demand",
    "workstation",
    "os-paging",
];
/// S4's queue depths: 1, 2, 4 … 256.
const QD_SWEEP: &str = "1:256";
/// The test scale's: enough to see the queue help, short enough for a debug build.
const QD_SWEEP_TEST: &str = "1:4";
/// The drives' 16 KiB sequential runs: one I/O at a time, and a deep queue.
const DRIVE_QDS: [u32; 2] = [1, 32];
const DRIVE_BLOCK_BYTES: u64 = 16 << 10;
/// S4's random I/O of each set: these block sizes, reads and writes apart, at this queue depth.
const RANDOM_BLOCKS_BYTES: [u64; 2] = [4 << 10, 64 << 10];
const RANDOM_QD: u32 = 4;

/// What each `--scale` runs: the measured time and warm-up of every point, and the region.
#[derive(Clone, Debug, Serialize)]
pub struct Scale {
    pub name: String,
    /// The queue depths, as `--sweep-qd` takes them.
    pub qd_sweep: &'static str,
    pub runtime_s: f64,
    pub ramp_s: f64,
    pub size_bytes: u64,
}

impl Scale {
    pub(super) fn named(name: &str) -> Result<Scale> {
        let (runtime_s, ramp_s, size_bytes) = match name {
            // 224 points in all: 139 s on two cores (each point also spends up to 0.25 s
            // beyond its ramp and runtime: the progress ticker's beat, draining its queue).
            "quick" => (0.3, 0.1, 256 << 20),
            // Hidden: the integration test's, the shortest runs whose figures still order.
            "test" => (0.1, 0.02, 64 << 20),
            "default" => (2.0, 0.5, 1 << 30),
            "paper" => (10.0, 2.0, 4 << 30),
            _ => {
                return Err(Error::usage(format!(
                    "--scale {name} belongs to the s1 scenario: the profiles scenario runs at quick, default or paper"
                )))
            }
        };
        Ok(Scale {
            name: name.into(),
            qd_sweep: if name == "test" {
                QD_SWEEP_TEST
            } else {
                QD_SWEEP
            },
            runtime_s,
            ramp_s,
            size_bytes,
        })
    }
}

#[derive(Debug, Serialize)]
struct StudyConfig {
    scenario: String,
    devices: Vec<String>,
    profiles: Vec<&'static str>,
    qd: Vec<u32>,
    drive_qd: Vec<u32>,
    drive_block_bytes: u64,
    random_block_bytes: Vec<u64>,
    random_qd: u32,
    scale: Scale,
    /// The study file it ran, and its cells (the sets' names) in order.
    file: PathBuf,
    cells: Vec<String>,
}

/// The drive of a set: a RAID's member, a cache's backing device, or the device itself; behind
/// the set's RAID controller (`wbcache`) if it has one, as S4 measured one drive on its controller,
/// that controller's read-ahead reading a full stripe of the one drive.
pub fn drive_of(spec: &Spec) -> Spec {
    fn bare(spec: &Spec) -> &Spec {
        match spec {
            Spec::Device { .. } => spec,
            Spec::Raid { member, .. } => bare(member),
            Spec::WbCache { backing, .. }
            | Spec::ReadCache { backing, .. }
            | Spec::PageCache { backing, .. } => bare(backing),
            Spec::Layout { devices, .. } => bare(&devices[0]),
        }
    }
    let drive = bare(spec).clone();
    match spec {
        Spec::WbCache {
            size_bytes,
            readahead_bytes,
            cache,
            ..
        } => Spec::WbCache {
            cache: *cache,
            size_bytes: (*size_bytes).min(drive.capacity_bytes()),
            readahead_bytes: if *readahead_bytes > 0 {
                drive.full_stripe_bytes()
            } else {
                0
            },
            backing: Box::new(drive),
        },
        _ => drive,
    }
}

/// The device sets of `--devices`: emulated, each once, at least two.
fn parse_sets(text: &str) -> Result<Vec<Spec>> {
    let text = if text == DEFAULT_DEVICES {
        DEFAULT_SETS
    } else {
        text
    };
    let specs = split_devices(text)?
        .iter()
        .map(|t| parse_spec(t).map_err(|e| Error::usage(format!("--devices: `{t}`: {e}"))))
        .collect::<Result<Vec<Spec>>>()?;
    if specs.iter().any(Spec::is_layout) {
        return Err(Error::usage(
            "the profiles scenario measures devices, not layouts: give each set as one device spec, e.g. raid5(4,hdd-15k)",
        ));
    }
    if specs.iter().any(Spec::is_host) {
        return Err(Error::usage(
            "the profiles scenario measures emulated devices only: drop host from --devices",
        ));
    }
    if specs.len() < 2 {
        return Err(Error::usage(format!(
            "--devices names one device set ({}), but the profiles scenario compares two: add a second, e.g. --devices {DEFAULT_SETS}",
            specs[0].name()
        )));
    }
    let names: Vec<String> = specs.iter().map(|s| file_name(&s.name())).collect();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(Error::usage(format!(
                "--devices names {n} twice: give each device set once"
            )));
        }
    }
    Ok(specs)
}

/// `--scenario profiles` as the study file it runs: studies/s4.toml with `--scale` and
/// `--devices` applied, after the options the scenario does not take are refused.
pub(super) fn scenario_file(args: &StudyArgs) -> Result<ScenarioFile> {
    if args.engine != Engine::Sqlite || args.pacing != super::Pacing::None || args.repeat != 1 {
        return Err(Error::usage(
            "--engine, --pacing and --repeat belong to the database scenarios, and the profiles scenario runs no database: drop them",
        ));
    }
    if args.workload != "tpcc" {
        return Err(Error::usage(
            "--workload belongs to the cache-tiers and placement scenarios; the profiles scenario runs its own workload",
        ));
    }
    super::shipped::s1_server_settings(args)?;
    let specs = parse_sets(&args.devices)?;
    // The run names the scales it takes; --dry-run prints the file's own refusal of the line.
    if !args.dry_run {
        Scale::named(&args.scale)?;
    }
    let Some((_, label, shipped)) = SHIPPED_FILES
        .iter()
        .find(|(s, ..)| *s == super::Scenario::Profiles)
    else {
        unreachable!("studies/s4.toml is shipped")
    };
    let given = args.devices != DEFAULT_DEVICES;
    let block = given.then(|| {
        let mut text = String::from("devices = [\n");
        for s in &specs {
            text.push_str(&format!("  {},\n", toml_string(&s.name())));
        }
        text.push_str("]\n");
        (
            "devices = [",
            text,
            format!("devices from --devices {}", args.devices),
        )
    });
    let (body, applied) = apply_to_shipped(
        label,
        shipped,
        &[("scale", Some(toml_string(&args.scale)))],
        &[],
        &Shipped {
            block: block
                .as_ref()
                .map(|(start, text, note)| (*start, text.as_str(), note.clone())),
            ..Shipped::default()
        },
    )?;
    let mut command = format!("oltplab study --scenario profiles --scale {}", args.scale);
    if given {
        command.push_str(&format!(" --devices {}", args.devices));
    }
    command_file(label, &command, &body, applied)
}

/// `oltplab study --scenario profiles`: the shipped file with the options given, run here.
pub(super) fn run_scenario(args: &StudyArgs) -> Result<()> {
    let built = scenario_file(args)?;
    let study = built.parse()?;
    run(&study, args, Some(&built))
}

/// The serialised configuration a set's cell hash is taken from: what it measures and how long.
#[derive(Serialize)]
struct CellKey<'a> {
    set: String,
    /// The drive it measures, if no earlier set of the file has it.
    drive: Option<String>,
    scale: &'a Scale,
    profiles: &'a [&'static str],
    drive_qd: &'a [u32],
    drive_block_bytes: u64,
    random_block_bytes: &'a [u64],
    random_qd: u32,
}

/// S4's cells: one per device set, named by the set and a hash of what it measures at `scale`.
pub(super) fn plan_cells(sets: &[Spec], scale: &super::Scale) -> Result<Vec<CellPlan>> {
    let points = Scale::named(&scale.name)?;
    let mut drives: Vec<String> = Vec::new();
    let mut cells = Vec::new();
    for spec in sets {
        let drive = drive_of(spec).name();
        let measures_drive = !drives.contains(&drive);
        drives.push(drive.clone());
        let key = CellKey {
            set: spec.name(),
            drive: measures_drive.then_some(drive),
            scale: &points,
            profiles: &S4_PROFILES,
            drive_qd: &DRIVE_QDS,
            drive_block_bytes: DRIVE_BLOCK_BYTES,
            random_block_bytes: &RANDOM_BLOCKS_BYTES,
            random_qd: RANDOM_QD,
        };
        let key = serde_json::to_string(&key).expect("serialises");
        let name = file_name(&spec.name());
        cells.push(CellPlan {
            id: name.clone(),
            hash: format!("{:08x}", file::fnv1a(key.as_bytes()) as u32),
            axes: CellAxes {
                device: spec.name(),
                device_name: name,
                workload: "profiles".into(),
                pacing: super::Pacing::None.name().into(),
                ..CellAxes::default()
            },
            spec: spec.clone(),
            scale: scale.clone(),
            engine_index: 0,
        });
    }
    Ok(cells)
}

/// Runs S4's measurement: the sets not finished in `--resume DIR`, each saved when it finishes,
/// then the profiles result. `built` is the file the scenario built (None: given or resumed).
pub(super) fn run(study: &FileStudy, args: &StudyArgs, built: Option<&ScenarioFile>) -> Result<()> {
    let Measure::Profiles { sets: specs } = &study.measure else {
        unreachable!("profiles::run runs measure = \"profiles\"")
    };
    let scale = Scale::named(&study.scale.name)?;
    let qds = device_command::config::parse_sweep(scale.qd_sweep)?;
    let kept = cells::kept::<Sets>(study, args);
    if args.dry_run {
        let done: Vec<bool> = kept.iter().map(Option::is_some).collect();
        file::print_scenario_plan(study, &done);
        return Ok(());
    }
    let begun = match (built, &args.resume) {
        (Some(file), _) => file::Begun::Built(file),
        (None, Some(_)) => file::Begun::Resumed("the S4 study"),
        (None, None) => file::Begun::File(Some("S4's measurement")),
    };
    let mut sets = Sets {
        study,
        args,
        specs,
        scale,
        qds,
        started: Instant::now(),
    };
    cells::run(study, args, begun, kept, &mut sets)
}

/// S4's measurement of a study's device sets, cell by cell.
struct Sets<'a> {
    study: &'a FileStudy,
    args: &'a StudyArgs,
    specs: &'a [Spec],
    scale: Scale,
    qds: Vec<u32>,
    started: Instant,
}

impl cells::Measurement for Sets<'_> {
    type Cell = ProfilesCellResult;
    type Summary = ProfilesSummary;
    const CELLS: &'static str = "device sets";

    fn intro(&self, out: &Path) {
        let (specs, scale, qds) = (self.specs, &self.scale, &self.qds);
        let points = specs.len() * S4_PROFILES.len() * qds.len()
            + specs.len() * 2 * RANDOM_BLOCKS_BYTES.len()
            + specs.len() * 2 * DRIVE_QDS.len();
        output::note!(
            "oltplab study profiles — {}: {} profiles at QD {}, 4 KiB and 64 KiB random reads and writes at QD {RANDOM_QD}, and one drive's 16 KiB sequential reads and writes at QD {}; {} points of {} + {} warm-up on a {} region; output {}",
            specs.iter().map(Spec::name).collect::<Vec<_>>().join(" against "),
            S4_PROFILES.len(),
            qds.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            DRIVE_QDS.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
            points,
            secs(scale.runtime_s),
            secs(scale.ramp_s),
            format_bytes(scale.size_bytes),
            out.display()
        );
    }

    fn doc(
        &self,
        started_at: &str,
        results: &[Option<ProfilesCellResult>],
        state: State,
        ran: usize,
    ) -> ResultDoc<ProfilesSummary, Value> {
        combined(
            self.study,
            &self.scale,
            &self.qds,
            started_at,
            self.args,
            results,
            state,
            ran,
        )
    }

    fn measure(
        &mut self,
        i: usize,
        cell: &CellPlan,
        _: &[Option<ProfilesCellResult>],
        out: &Path,
    ) -> Result<Option<ProfilesCellResult>> {
        let spec = &self.specs[i];
        output::note!(
            "\n[{}/{}] {} ({}): {} profiles × {} queue depths",
            i + 1,
            self.specs.len(),
            cell.id,
            spec.name(),
            S4_PROFILES.len(),
            self.qds.len()
        );
        // The drive is measured by the first set of the file that has it (as the cell's hash says).
        let drive = drive_of(spec);
        let drive_first = self.specs[..i]
            .iter()
            .all(|s| drive_of(s).name() != drive.name());
        // A set stopped by Ctrl-C is not finished: it reruns.
        match measure_set(cell, spec, &drive, drive_first, &self.scale, &self.qds, out) {
            Err(Error::Interrupted) if STOP.load(Ordering::Relaxed) => Ok(None),
            m => m,
        }
    }

    fn table(&self, summary: &ProfilesSummary, out: &Path) {
        print_table(summary, out, self.started.elapsed());
    }
}

/// One device set: its profiles over the queue depths, its random I/O at QD 4 and, if
/// `drive_first`, its drive's sequential runs. None: Ctrl-C stopped it.
fn measure_set(
    cell: &CellPlan,
    spec: &Spec,
    drive: &Spec,
    drive_first: bool,
    scale: &Scale,
    qds: &[u32],
    out: &Path,
) -> Result<Option<ProfilesCellResult>> {
    let mut warnings = Vec::new();
    let dir = format!("device-{}", cell.id);
    let (measured, stopped) = measure(
        &mut warnings,
        spec,
        DeviceRequest {
            pattern: Pattern::profiles(&S4_PROFILES),
            queue_depths: QueueDepths::Sweep(qds.to_vec()),
            ..DeviceRequest::default()
        },
        scale,
        &out.join(&dir),
    )?;
    if stopped {
        return Ok(None);
    }
    let mut set = set_figures(spec, drive, &measured, qds);
    set.result = format!("{dir}/{}", output::RESULT_FILE);
    output::note!(
        "  {}: geometric mean {} IOPS over every profile and queue depth",
        spec.name(),
        format_count(set.geomean_iops)
    );
    let mut random_qd4 = Vec::new();
    if measure_random(&mut warnings, &mut random_qd4, spec, scale, out)? {
        return Ok(None);
    }
    let mut drive_seq16k = Vec::new();
    if drive_first {
        let drive_name = drive.name();
        output::note!(
            "  drive {drive_name}: 16 KiB sequential reads, then writes, at QD {}",
            DRIVE_QDS
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" and ")
        );
        let mut seq = Vec::new();
        for rw in [Rw::Read, Rw::Write] {
            let (summary, stopped) = measure(
                &mut warnings,
                drive,
                DeviceRequest {
                    pattern: Pattern::rw(rw, DRIVE_BLOCK_BYTES),
                    queue_depths: QueueDepths::Sweep(DRIVE_QDS.to_vec()),
                    ..DeviceRequest::default()
                },
                scale,
                &out.join(format!("drive-{}-seq{}", file_name(&drive_name), rw.name())),
            )?;
            if stopped {
                return Ok(None);
            }
            seq.push(summary);
        }
        if let [read, write] = seq.as_slice() {
            drive_seq16k = drive_figures(&drive_name, read, write);
        }
    }
    Ok(Some(ProfilesCellResult {
        id: cell.id.clone(),
        config_hash: cell.hash.clone(),
        finished_at: now_rfc3339(),
        set,
        random_qd4,
        drive_seq16k,
        warnings,
    }))
}

/// The study's result from its finished sets, in the file's order: S4's summary (ratios against
/// the first set, each drive once) with the cells beside it, unfinished unless `state` says so.
#[allow(clippy::too_many_arguments)]
fn combined(
    study: &FileStudy,
    scale: &Scale,
    qds: &[u32],
    started_at: &str,
    args: &StudyArgs,
    results: &[Option<ProfilesCellResult>],
    state: State,
    ran: usize,
) -> ResultDoc<ProfilesSummary, Value> {
    let cells: Vec<ProfilesCellResult> = results.iter().flatten().cloned().collect();
    let config = StudyConfig {
        scenario: super::Scenario::Profiles.name().into(),
        devices: study.cells.iter().map(|c| c.axes.device.clone()).collect(),
        profiles: S4_PROFILES.to_vec(),
        qd: qds.to_vec(),
        drive_qd: DRIVE_QDS.to_vec(),
        drive_block_bytes: DRIVE_BLOCK_BYTES,
        random_block_bytes: RANDOM_BLOCKS_BYTES.to_vec(),
        random_qd: RANDOM_QD,
        scale: scale.clone(),
        file: study.path.clone(),
        cells: study.cells.iter().map(|c| c.id.clone()).collect(),
    };
    let mut summary = ProfilesSummary {
        scenario: super::Scenario::Profiles.name().into(),
        baseline: study.baseline.clone().unwrap_or_default(),
        qd: qds.to_vec(),
        drive_qd: DRIVE_QDS.to_vec(),
        runtime_s: scale.runtime_s,
        ramp_s: scale.ramp_s,
        size_bytes: scale.size_bytes,
        sets: cells.iter().map(|c| c.set.clone()).collect(),
        random_qd4: cells.iter().flat_map(|c| c.random_qd4.clone()).collect(),
        interrupted: state != State::Finished,
        ..ProfilesSummary::default()
    };
    // A drive once, from the first set that measured it.
    for d in cells.iter().flat_map(|c| &c.drive_seq16k) {
        if !summary
            .drive_seq16k
            .iter()
            .any(|x| x.device == d.device && x.qd == d.qd)
        {
            summary.drive_seq16k.push(d.clone());
        }
    }
    add_ratios(&mut summary);
    summary.cells = cells;
    let mut doc = super::new_study_doc(started_at.to_string(), &config, &args.data_dir, summary);
    // Each kind of warning once, as the scenario always gave them.
    for w in doc.summary.cells.iter().flat_map(|c| &c.warnings) {
        if !doc.warnings.iter().any(|x| x.kind == w.kind) {
            doc.warnings.push(w.clone());
        }
    }
    let (finished, total) = (doc.summary.cells.len(), study.cells.len());
    doc.warnings
        .extend(state.unfinished_warning(finished, total, "device sets", ran));
    doc
}

/// `oltplab device` in-process on the emulated `spec`, with a RAM backing; returns the measured
/// summary and whether Ctrl-C ended it early. The run's warnings join the study's, each kind once
/// (few samples per point is what short points mean, so it is left in the run's own result; the
/// study says itself when Ctrl-C stopped it).
fn measure(
    warnings: &mut Vec<Warning>,
    spec: &Spec,
    request: DeviceRequest,
    scale: &Scale,
    out: &Path,
) -> Result<(DeviceSummary, bool)> {
    let request = DeviceRequest {
        target: None,
        emulate: Some(spec.clone()),
        backing: crate::emulate::BackingChoice::Ram,
        runtime: Duration::from_secs_f64(scale.runtime_s),
        ramp: Duration::from_secs_f64(scale.ramp_s),
        size: scale.size_bytes.min(spec.capacity_bytes()),
        out: Some(out.to_path_buf()),
        ..request
    };
    let outcome = device_command::measure(&request.check()?)?;
    for w in &outcome.doc.warnings {
        let own = matches!(w.kind, WarningKind::FewSamples | WarningKind::Interrupted);
        if !own && !warnings.iter().any(|x| x.kind == w.kind) {
            warnings.push(w.clone());
        }
    }
    Ok((outcome.doc.summary.measured, outcome.interrupted))
}

/// S4's random I/O of a set: each block size's random reads, then random writes, at QD 4, each
/// its own device run. Returns whether Ctrl-C stopped it (the block size it cut is left out).
fn measure_random(
    warnings: &mut Vec<Warning>,
    points: &mut Vec<RandomQd4>,
    spec: &Spec,
    scale: &Scale,
    out: &Path,
) -> Result<bool> {
    output::note!(
        "  {}: 4 KiB and 64 KiB random reads, then writes, at QD {RANDOM_QD}",
        spec.name()
    );
    for bs in RANDOM_BLOCKS_BYTES {
        let mut run = |rw: Rw| {
            measure(
                warnings,
                spec,
                DeviceRequest {
                    pattern: Pattern::rw(rw, bs),
                    queue_depths: QueueDepths::One(RANDOM_QD),
                    ..DeviceRequest::default()
                },
                scale,
                &out.join(format!(
                    "random-{}-{}-{}k",
                    file_name(&spec.name()),
                    rw.name(),
                    bs >> 10
                )),
            )
        };
        let (read, stopped) = run(Rw::RandRead)?;
        if stopped {
            return Ok(true);
        }
        let (write, stopped) = run(Rw::RandWrite)?;
        if stopped {
            return Ok(true);
        }
        points.push(RandomQd4 {
            set: spec.name(),
            block_size_bytes: bs,
            read_iops: read.read.iops,
            write_iops: write.write.iops,
            read_lat_ns_mean: read.read.lat_ns.mean,
            write_lat_ns_mean: write.write.lat_ns.mean,
        });
    }
    Ok(false)
}

/// A set's figures from its device run: each profile's IOPS per depth and geometric mean, and
/// each depth's geometric mean over the profiles that reached it.
fn set_figures(spec: &Spec, drive: &Spec, measured: &DeviceSummary, qds: &[u32]) -> ProfileSet {
    let profiles: Vec<ProfileFigures> = measured
        .profiles
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|p| {
            let iops: Vec<f64> = p.sweep.iter().map(|s| s.iops).collect();
            ProfileFigures {
                name: p.name.clone(),
                block_size_bytes: p.block_size_bytes,
                read_pct: p.read_pct,
                random_pct: p.random_pct,
                qd: p.sweep.iter().map(|s| s.qd).collect(),
                geomean_iops: geomean(&iops),
                iops,
            }
        })
        .collect();
    let geomean_by_qd = qds
        .iter()
        .filter_map(|&qd| {
            let at: Vec<f64> = profiles
                .iter()
                .filter_map(|p| p.qd.iter().position(|&q| q == qd).map(|i| p.iops[i]))
                .collect();
            (!at.is_empty()).then(|| QdGeomean {
                qd,
                geomean_iops: geomean(&at),
            })
        })
        .collect();
    let complete = profiles.len() == S4_PROFILES.len() && profiles.iter().all(|p| p.qd == qds);
    ProfileSet {
        name: file_name(&spec.name()),
        spec: spec.name(),
        drive: drive.name(),
        geomean_iops: geomean(&profiles.iter().map(|p| p.geomean_iops).collect::<Vec<_>>()),
        complete,
        profiles,
        geomean_by_qd,
        ratio: None,
        result: String::new(),
    }
}

/// Each set's geometric means over the baseline's (the first set), per profile and overall; a
/// profile counts only where both sets measured it at the same queue depths (Ctrl-C may have cut
/// one short).
fn add_ratios(summary: &mut ProfilesSummary) {
    let Some(base) = summary.sets.first().cloned() else {
        return;
    };
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    for set in summary.sets.iter_mut().skip(1) {
        let profiles: Vec<ProfileRatio> = set
            .profiles
            .iter()
            .filter_map(|p| {
                let b = base
                    .profiles
                    .iter()
                    .find(|b| b.name == p.name && b.qd == p.qd)?;
                Some(ProfileRatio {
                    name: p.name.clone(),
                    geomean_iops_ratio: ratio(p.geomean_iops, b.geomean_iops),
                })
            })
            .collect();
        set.ratio = Some(SetRatio {
            against: base.name.clone(),
            geomean_iops_ratio: geomean(
                &profiles
                    .iter()
                    .map(|r| r.geomean_iops_ratio)
                    .collect::<Vec<_>>(),
            ),
            profiles,
        });
    }
}

/// The drive's sequential figures per queue depth measured by both runs.
fn drive_figures(device: &str, read: &DeviceSummary, write: &DeviceSummary) -> Vec<DriveSeq> {
    let (Some(reads), Some(writes)) = (read.sweep.as_deref(), write.sweep.as_deref()) else {
        return Vec::new();
    };
    reads
        .iter()
        .filter_map(|r| {
            let w = writes.iter().find(|w| w.qd == r.qd)?;
            Some(DriveSeq {
                device: device.into(),
                qd: r.qd,
                read_iops: r.read.iops,
                write_iops: w.write.iops,
                read_bw_bytes: r.read.bw_bytes,
                write_bw_bytes: w.write.bw_bytes,
                read_lat_ns_mean: r.read.lat_ns.mean,
                write_lat_ns_mean: w.write.lat_ns.mean,
            })
        })
        .collect()
}

fn secs(s: f64) -> String {
    format!("{s} s")
}

fn print_table(summary: &ProfilesSummary, out: &Path, took: Duration) {
    let qds = &summary.qd;
    for set in &summary.sets {
        output::say!("\n{}: IOPS", set.spec);
        let mut head = format!("{:<16}", "profile");
        for qd in qds {
            head.push_str(&format!(" {:>8}", format!("QD{qd}")));
        }
        head.push_str(&format!(" {:>8} {:>8}", "geomean", "ratio"));
        output::say!("{head}");
        for p in &set.profiles {
            let mut line = format!("{:<16}", p.name);
            for qd in qds {
                let v = p.qd.iter().position(|q| q == qd).map(|i| p.iops[i]);
                line.push_str(&format!(
                    " {:>8}",
                    v.map_or("—".into(), |v| format!("{v:.0}"))
                ));
            }
            let ratio = set
                .ratio
                .as_ref()
                .and_then(|r| r.profiles.iter().find(|r| r.name == p.name))
                .map_or(String::new(), |r| format!("{:.1}×", r.geomean_iops_ratio));
            line.push_str(&format!(" {:>8.0} {:>8}", p.geomean_iops, ratio));
            output::say!("{line}");
        }
        let mut line = format!("{:<16}", "geomean");
        for qd in qds {
            let v = set.geomean_by_qd.iter().find(|g| g.qd == *qd);
            line.push_str(&format!(
                " {:>8}",
                v.map_or("—".into(), |g| format!("{:.0}", g.geomean_iops))
            ));
        }
        let ratio = set
            .ratio
            .as_ref()
            .map_or(String::new(), |r| format!("{:.1}×", r.geomean_iops_ratio));
        line.push_str(&format!(" {:>8.0} {:>8}", set.geomean_iops, ratio));
        output::say!("{line}");
    }
    if !summary.drive_seq16k.is_empty() {
        output::say!(
            "\n{:<16} {:>4} {:>11} {:>11} {:>11} {:>11}",
            "drive",
            "QD",
            "read IOPS",
            "read MB/s",
            "write IOPS",
            "write MB/s"
        );
        for d in &summary.drive_seq16k {
            output::say!(
                "{:<16} {:>4} {:>11.0} {:>11.1} {:>11.0} {:>11.1}",
                d.device,
                d.qd,
                d.read_iops,
                d.read_bw_bytes / 1e6,
                d.write_iops,
                d.write_bw_bytes / 1e6
            );
        }
    }
    if !summary.random_qd4.is_empty() {
        output::say!(
            "\n{:<34} {:>6} {:>11} {:>11}",
            "set",
            "block",
            "read IOPS",
            "write IOPS"
        );
        for r in &summary.random_qd4 {
            output::say!(
                "{:<34} {:>6} {:>11.0} {:>11.0}",
                r.set,
                format_bytes(r.block_size_bytes),
                r.read_iops,
                r.write_iops
            );
        }
    }
    output::say!(
        "(IOPS of every profile at every queue depth, {} s per point after {} s warm-up; geomean: geometric mean; ratio: against {}; random: QD {RANDOM_QD}; drives: 16 KiB sequential)",
        summary.runtime_s,
        summary.ramp_s,
        summary.sets.first().map_or("the first set", |s| s.spec.as_str())
    );
    output::say!(
        "\nresults: {}  report: {}  took {:.0} s",
        out.join(RESULTS_FILE).display(),
        out.join(REPORT_FILE).display(),
        took.as_secs_f64()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_metrics::schema::{ProfileResult, SweepPoint};

    #[test]
    fn the_drive_of_a_set_is_its_member() {
        for (set, drive) in [
            ("raid5(4,hdd-15k)", "hdd-15k"),
            ("raid5(4,sas-ssd-2012)", "sas-ssd-2012"),
            ("hdd-10k", "hdd-10k"),
            (
                "wbcache(raid5(4,hdd-15k),size=1g,readahead=on)",
                "wbcache(hdd-15k,size=1g,readahead=64k)",
            ),
            (
                "wbcache(raid10(4,hdd-15k),size=512m)",
                "wbcache(hdd-15k,size=512m)",
            ),
        ] {
            assert_eq!(drive_of(&parse_spec(set).unwrap()).name(), drive, "{set}");
        }
    }

    #[test]
    fn each_set_is_a_cell_whose_hash_follows_what_it_measures() {
        let quick = super::super::Scale::named("quick");
        let [hdd, ssd, hdd10] = [
            "raid5(4,hdd-15k)",
            "raid5(4,sas-ssd-2012)",
            "raid10(4,hdd-15k)",
        ]
        .map(|t| parse_spec(t).unwrap());
        let key = |cells: &[CellPlan]| -> Vec<(String, String)> {
            cells
                .iter()
                .map(|c| (c.id.clone(), c.hash.clone()))
                .collect()
        };
        let two = plan_cells(&[hdd.clone(), ssd.clone()], &quick).unwrap();
        let three = plan_cells(&[hdd.clone(), ssd.clone(), hdd10.clone()], &quick).unwrap();
        // A set added at the end leaves the others' cells as they were.
        assert_eq!(key(&two), key(&three)[..2]);
        assert_eq!(three[0].id, "raid5_4_hdd-15k_stripe_64k");
        // The RAID10's drive is the first set's: it measures none, unlike when it comes first.
        let first = plan_cells(&[hdd10.clone(), hdd.clone()], &quick).unwrap();
        assert_ne!(first[0].hash, three[2].hash);
        // Another scale is another cell.
        let test = plan_cells(&[hdd, ssd], &super::super::Scale::named("test")).unwrap();
        assert_ne!(test[0].hash, two[0].hash);
    }

    #[test]
    fn one_set_or_host_is_refused() {
        for (text, says) in [
            ("hdd-15k", "compares two"),
            ("host,hdd-15k", "emulated devices only"),
            ("hdd-15k,hdd-15k", "twice"),
        ] {
            let err = parse_sets(text).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{text}");
            assert!(err.to_string().contains(says), "{text}: {err}");
        }
        let sets = parse_sets(DEFAULT_DEVICES).unwrap();
        assert_eq!(
            sets.iter().map(Spec::name).collect::<Vec<_>>(),
            [
                "wbcache(raid5(4,hdd-15k,stripe=64k),size=1g,readahead=192k)",
                "wbcache(raid5(4,sas-ssd-2012,stripe=64k),size=1g,readahead=192k)"
            ]
        );
    }

    #[test]
    fn geometric_means_and_ratios() {
        let profile = |name: &str, iops: &[f64]| ProfileResult {
            name: name.into(),
            sweep: iops
                .iter()
                .enumerate()
                .map(|(i, &iops)| SweepPoint {
                    qd: 1 << i,
                    iops,
                    ..SweepPoint::default()
                })
                .collect(),
            ..ProfileResult::default()
        };
        let measured = |a: &[f64], b: &[f64]| DeviceSummary {
            profiles: Some(vec![profile("a", a), profile("b", b)]),
            ..DeviceSummary::default()
        };
        let spec = parse_spec("raid5(4,hdd-15k)").unwrap();
        let qds = [1, 2];
        let hdd = set_figures(
            &spec,
            &spec,
            &measured(&[100.0, 400.0], &[10.0, 40.0]),
            &qds,
        );
        assert!((hdd.profiles[0].geomean_iops - 200.0).abs() < 1e-9);
        assert!((hdd.geomean_by_qd[0].geomean_iops - 1000f64.sqrt()).abs() < 1e-9);
        assert!((hdd.geomean_by_qd[1].geomean_iops - 16000f64.sqrt()).abs() < 1e-9);
        assert!((hdd.geomean_iops - 4000f64.sqrt()).abs() < 1e-9);
        let ssd_spec = parse_spec("raid5(4,sas-ssd-2012)").unwrap();
        let ssd = set_figures(
            &ssd_spec,
            &ssd_spec,
            &measured(&[1000.0, 4000.0], &[20.0, 80.0]),
            &qds,
        );
        let mut summary = ProfilesSummary {
            sets: vec![hdd, ssd],
            ..ProfilesSummary::default()
        };
        add_ratios(&mut summary);
        assert!(summary.sets[0].ratio.is_none());
        let r = summary.sets[1].ratio.as_ref().unwrap();
        assert_eq!(r.against, "raid5_4_hdd-15k_stripe_64k");
        assert!((r.profiles[0].geomean_iops_ratio - 10.0).abs() < 1e-9);
        assert!((r.profiles[1].geomean_iops_ratio - 2.0).abs() < 1e-9);
        assert!((r.geomean_iops_ratio - 20f64.sqrt()).abs() < 1e-9);
        assert!(!summary.sets[1].complete, "two profiles, not twelve");

        // Ctrl-C cut profile b short on the second set: b is left out of its ratios.
        summary.sets[1] = set_figures(
            &ssd_spec,
            &ssd_spec,
            &measured(&[1000.0, 4000.0], &[20.0]),
            &qds,
        );
        add_ratios(&mut summary);
        let r = summary.sets[1].ratio.as_ref().unwrap();
        assert_eq!(r.profiles.len(), 1);
        assert!((r.geomean_iops_ratio - 10.0).abs() < 1e-9);
    }
}
