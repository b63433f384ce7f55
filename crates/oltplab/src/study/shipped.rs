//! The studies shipped as files (studies/s1.toml … s5.toml, cluster.toml) and a scenario's command-line options
//! applied to its file: the text `oltplab study --scenario NAME` runs, prints with `--dry-run` and
//! keeps as the study's `study.toml`.

use std::path::Path;

use oltplab_core::{Error, Result};
use oltplab_devmodel::{parse_spec, Spec};

use crate::output;
use crate::workload::target::Engine;

use super::{
    cluster, file, in_memory, profiles, storage, Pacing, Scale, Scenario, StudyArgs,
    DEFAULT_DEVICES,
};

/// S1's buffer pool against its data: 512 MB for 200 warehouses (about 20 GB).
pub(super) const S1_POOL_SHARE: f64 = 0.025;

/// S1's `--server-setting`s: for its managed server only, each name known to the installed server.
pub(super) fn s1_server_settings(args: &StudyArgs) -> Result<Vec<(String, String)>> {
    if args.server_setting.is_empty() {
        return Ok(Vec::new());
    }
    if !matches!(
        args.scenario,
        Scenario::S1 | Scenario::CacheTiers | Scenario::Placement
    ) {
        return Err(Error::usage(format!(
            "--server-setting is for --scenario s1, cache-tiers and placement (and study files' server_settings); the {} scenario sets its own server: drop it",
            args.scenario
        )));
    }
    if args.engine == Engine::Sqlite {
        return Err(Error::usage(
            "--server-setting is for a PostgreSQL or MariaDB server: add --engine postgres or mariadb, or drop it",
        ));
    }
    let settings = crate::workload::parse_server_settings(&args.server_setting)?;
    oltplab_dbs::server::check_settings(args.engine.name(), &settings)?;
    Ok(settings)
}

/// The shipped study files of the reference studies that a study file can express.
pub(super) const SHIPPED_FILES: [(Scenario, &str, &str); 6] = [
    (
        Scenario::S1,
        "studies/s1.toml",
        include_str!("../../../../studies/s1.toml"),
    ),
    (
        Scenario::CacheTiers,
        "studies/s2.toml",
        include_str!("../../../../studies/s2.toml"),
    ),
    (
        Scenario::Placement,
        "studies/s3.toml",
        include_str!("../../../../studies/s3.toml"),
    ),
    (
        Scenario::Profiles,
        "studies/s4.toml",
        include_str!("../../../../studies/s4.toml"),
    ),
    (
        Scenario::InMemory,
        "studies/s5.toml",
        include_str!("../../../../studies/s5.toml"),
    ),
    (
        Scenario::Cluster,
        "studies/cluster.toml",
        include_str!("../../../../studies/cluster.toml"),
    ),
];

/// `--scenario NAME --dry-run`: the study file the scenario runs, with the options given applied
/// as its run applies them; an option the scenario does not take is refused with the reason.
pub(super) fn equivalent_file(args: &StudyArgs) -> Result<String> {
    let file = match args.scenario {
        Scenario::S1 => s1_file(args, &s1_server_settings(args)?)?,
        Scenario::CacheTiers | Scenario::Placement => {
            storage::scenario_file(args, &s1_server_settings(args)?)?
        }
        Scenario::Profiles => profiles::scenario_file(args)?,
        Scenario::InMemory => in_memory::scenario_file(args)?,
        Scenario::Cluster => cluster::scenario_file(args)?,
        Scenario::PowerCut => {
            return Err(Error::usage(format!(
                "--dry-run prints the study file of the s1, cache-tiers, placement, profiles, in-memory and cluster scenarios or lists a study file's cells; the {} scenario has no study file yet: drop --dry-run, or add --file FILE",
                args.scenario
            )))
        }
    };
    Ok(file.text)
}

/// A scenario as the study file it runs: its shipped file (studies/s1.toml … s5.toml)
/// with every option given applied.
pub struct ScenarioFile {
    /// Where the text comes from, as errors and the result's `config.file` name it.
    pub label: &'static str,
    pub text: String,
    /// The keys the options changed, as written (`scale = "test"`); empty: the file as shipped.
    pub applied: Vec<String>,
}

impl ScenarioFile {
    /// The built file, read and checked as a study file is.
    pub(super) fn parse(&self) -> Result<super::file::FileStudy> {
        super::file::parse(std::path::Path::new(self.label), &self.text)
    }

    /// What the options changed, as the first line says it: `as shipped` or `with …`.
    fn changed(&self) -> String {
        match self.applied.len() {
            0 => "as shipped".to_string(),
            _ => format!("with {}", self.applied.join(", ")),
        }
    }

    /// The run's first line: which file it runs, where its copy is and how to resume it.
    pub(super) fn announce(&self, copy: &Path, out: &Path) {
        output::note!(
            "(running {} {}: `oltplab study --file {}` runs the same cells, `oltplab study --resume {}` finishes this study if it stops)",
            self.label,
            self.changed(),
            copy.display(),
            out.display()
        );
    }
}

/// S1's `--devices`: each a device spec, each once as a file name (its trace and runs are named
/// by it), as given.
pub(super) fn s1_devices(args: &StudyArgs) -> Result<Vec<(String, Spec)>> {
    let mut devices: Vec<(String, Spec)> = Vec::new();
    for text in split_devices(&args.devices)? {
        let spec =
            parse_spec(&text).map_err(|e| Error::usage(format!("--devices: `{text}`: {e}")))?;
        let name = file_name(&spec.name());
        if devices.iter().any(|(_, s)| file_name(&s.name()) == name) {
            return Err(Error::usage(format!(
                "--devices names {name} twice: give each device once"
            )));
        }
        devices.push((text, spec));
    }
    Ok(devices)
}

/// A TOML basic string: `"…"` with `\`, `"` and control characters escaped.
pub(super) fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub(super) fn toml_list<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<String> = items.iter().map(|i| toml_string(i.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

/// studies/s1.toml with `--engine`, `--scale`, `--devices`, `--repeat`, `--pacing` and the
/// checked `--server-setting`s applied: the same cells the scenario measured by hand before.
pub(super) fn s1_file(args: &StudyArgs, settings: &[(String, String)]) -> Result<ScenarioFile> {
    let Some((label, shipped)) = SHIPPED_FILES
        .iter()
        .find(|(s, ..)| *s == Scenario::S1)
        .map(|(_, label, text)| (*label, *text))
    else {
        unreachable!("studies/s1.toml is shipped")
    };
    if args.workload != "tpcc" {
        return Err(Error::usage(
            "--workload belongs to the cache-tiers and placement scenarios; the s1 scenario runs TPC-C (a study file's workloads = [\"brokerage\"] runs S1's measurement on the brokerage workload)",
        ));
    }
    let devices = s1_devices(args)?;
    // Terminals follow the scale and the pacing (ten per warehouse when paced), as S1 ran them.
    let scale = Scale::named(&args.scale).paced(args.pacing);
    let texts: Vec<&str> = devices.iter().map(|(t, _)| t.as_str()).collect();
    // As S1: ratios against the first emulated device; none if every device is the host.
    let baseline = devices
        .iter()
        .find(|(_, s)| !s.is_host())
        .map(|(t, _)| toml_string(t));
    let values: [(&str, Option<String>); 7] = [
        ("scale", Some(toml_string(&args.scale))),
        ("repeat", Some(args.repeat.to_string())),
        ("devices", Some(toml_list(&texts))),
        ("terminals", Some(format!("[{}]", scale.terminals))),
        ("pacing", Some(toml_list(&[args.pacing.name()]))),
        ("baseline", baseline),
        ("engine", Some(toml_string(args.engine.name()))),
    ];
    let (body, applied) = apply_to_shipped(
        label,
        shipped,
        &values,
        settings,
        &Shipped {
            none: Some("every device is the host"),
            ..Shipped::default()
        },
    )?;
    let mut command = format!(
        "oltplab study --scenario s1 --engine {} --scale {}",
        args.engine, args.scale
    );
    if args.devices != DEFAULT_DEVICES {
        command.push_str(&format!(" --devices {}", args.devices));
    }
    if args.repeat != 1 {
        command.push_str(&format!(" --repeat {}", args.repeat));
    }
    if args.pacing != Pacing::None {
        command.push_str(&format!(" --pacing {}", args.pacing.name()));
    }
    for s in &args.server_setting {
        command.push_str(&format!(" --server-setting {s}"));
    }
    command_file(label, &command, &body, applied)
}

/// How [`apply_to_shipped`] treats a shipped file's lines beyond writing values over them.
#[derive(Default)]
pub(super) struct Shipped<'a> {
    /// A key whose value is None: its line becomes this comment (`# key: none, …`), or with
    /// None is dropped.
    pub(super) none: Option<&'a str>,
    /// Keys whose new value follows from another's and is not listed as applied.
    pub(super) quiet: &'a [&'a str],
    /// A multi-line list (the line it starts with, up to its closing `]`) replaced by a text,
    /// and how that reads in the applied list.
    pub(super) block: Option<(&'a str, &'a str, String)>,
}

/// A shipped study file with the command's `values` written over its `key = …` lines (each must
/// be there), and the command's server settings after its `engine` line. Returns the body and
/// what the options changed, as written.
pub(super) fn apply_to_shipped(
    label: &str,
    shipped: &str,
    values: &[(&str, Option<String>)],
    settings: &[(String, String)],
    how: &Shipped,
) -> Result<(String, Vec<String>)> {
    let mut found = vec![false; values.len()];
    let mut applied = Vec::new();
    let mut body = String::new();
    let mut lines = shipped.lines();
    while let Some(line) = lines.next() {
        if let Some((start, text, note)) = &how.block {
            if line.starts_with(start) {
                for l in lines.by_ref() {
                    if l.trim_end() == "]" {
                        break;
                    }
                }
                body.push_str(text);
                applied.push(note.clone());
                continue;
            }
        }
        let Some(i) = values
            .iter()
            .position(|(key, _)| line.starts_with(&format!("{key} = ")))
        else {
            body.push_str(line);
            body.push('\n');
            continue;
        };
        found[i] = true;
        let (key, value) = &values[i];
        let was = line[key.len() + 3..].trim();
        match (value, how.none) {
            (Some(v), _) => {
                body.push_str(&format!("{key} = {v}\n"));
                if v != was && !how.quiet.contains(key) {
                    applied.push(format!("{key} = {v}"));
                }
            }
            (None, Some(why)) => {
                body.push_str(&format!("# {key}: none, {why}\n"));
                applied.push(format!("no {key}"));
            }
            (None, None) => {}
        }
        if *key == "engine" && !settings.is_empty() {
            let given: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let line = format!("server_settings = {}", toml_list(&given));
            body.push_str(&line);
            body.push('\n');
            applied.push(line);
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        return Err(Error::failed(format!(
            "{label} has no `{} = ` line to apply the command's options to: this is a bug in oltplab",
            values[i].0
        )));
    }
    Ok((body, applied))
}

/// The file a scenario runs: `body` under one comment line naming the command and what it
/// changed, checked as `--file` checks a file.
pub(super) fn command_file(
    label: &'static str,
    command: &str,
    body: &str,
    applied: Vec<String>,
) -> Result<ScenarioFile> {
    let mut written = ScenarioFile {
        label,
        text: String::new(),
        applied,
    };
    // One comment line, whatever a setting's value holds.
    let command = command.replace(|c: char| c.is_control(), " ");
    written.text = format!(
        "# {command} as a study file: {label} {}\n{}",
        written.changed(),
        body.trim_end()
    );
    file::parse(Path::new(label), &written.text)
        .map_err(|e| Error::usage(format!("{command}: {e}")))?;
    Ok(written)
}

/// Splits the device list at top-level commas: `raid5(4,hdd-15k),host` is two devices.
pub(super) fn split_devices(text: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    let out: Vec<String> = out.into_iter().map(|s| s.trim().to_string()).collect();
    if out.iter().any(|s| s.is_empty()) {
        return Err(Error::usage(
            "--devices has an empty entry: give device specs separated by commas, e.g. host,hdd-10k",
        ));
    }
    Ok(out)
}

/// A device spec as a file name: `raid5(4,hdd-15k)` → `raid5_4_hdd-15k`.
pub(super) fn file_name(spec: &str) -> String {
    let mut name: String = spec
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    while name.contains("__") {
        name = name.replace("__", "_");
    }
    name.trim_matches('_').to_string()
}

#[cfg(test)]
mod tests {
    use super::super::tests::study_args;
    use super::*;

    /// `oltplab study --scale quick` is studies/s1.toml as shipped: the same cells, hashes
    /// included, so its finished cells are the file's.
    #[test]
    fn s1_at_the_quick_scale_is_the_shipped_file() {
        let s1 = s1_file(&study_args(&["--scale", "quick"]), &[]).unwrap();
        assert!(s1.applied.is_empty(), "{:?}", s1.applied);
        let ran = file::parse(Path::new(s1.label), &s1.text).unwrap();
        let shipped = file::parse(
            Path::new("studies/s1.toml"),
            include_str!("../../../../studies/s1.toml"),
        )
        .unwrap();
        let cells = |s: &file::FileStudy| -> Vec<(String, String)> {
            s.cells
                .iter()
                .map(|c| (c.id.clone(), c.hash.clone()))
                .collect()
        };
        assert_eq!(cells(&ran), cells(&shipped));
        assert_eq!(ran.baseline, shipped.baseline);
    }

    /// Every option of the S1 scenario lands in the file it runs, which parses into the cells S1
    /// measures: the devices in order, the scale's terminals (ten per warehouse when paced), the
    /// repetitions, the engine with its settings, the first emulated device as the baseline.
    #[test]
    fn s1_applies_every_option_to_its_file() {
        let args = study_args(&[
            "--scale",
            "test",
            "--engine",
            "postgres",
            "--devices",
            "host,raid10(4,hdd-15k),nvme-gen4",
            "--repeat",
            "3",
            "--pacing",
            "spec",
        ]);
        let settings = [("synchronous_commit".to_string(), "off".to_string())];
        let s1 = s1_file(&args, &settings).unwrap();
        let study = file::parse(Path::new(s1.label), &s1.text).unwrap();
        let devices: Vec<&str> = study.cells.iter().map(|c| c.axes.device.as_str()).collect();
        assert_eq!(
            devices,
            ["host", "raid10(4,hdd-15k,stripe=64k)", "nvme-gen4"],
            "{}",
            s1.text
        );
        let paced = Scale::named("test").paced(Pacing::Spec);
        for c in &study.cells {
            assert_eq!(c.axes.engine, "postgres");
            assert_eq!(c.axes.server_settings, ["synchronous_commit=off"]);
            assert_eq!(c.axes.terminals, paced.terminals);
            assert_eq!(c.axes.pacing, "spec");
        }
        assert_eq!(study.repeat, 3);
        assert_eq!(study.scale.name, "test");
        assert_eq!(
            study.baseline.as_deref(),
            Some("raid10_4_hdd-15k_stripe_64k")
        );
        for key in [
            "scale = \"test\"",
            "repeat = 3",
            "pacing = [\"spec\"]",
            "engine = \"postgres\"",
        ] {
            assert!(
                s1.applied.iter().any(|a| a == key),
                "{key}: {:?}",
                s1.applied
            );
        }
        assert!(s1
            .text
            .starts_with("# oltplab study --scenario s1 --engine postgres"));
        // Only the host: no baseline, as S1 had none then.
        let host = s1_file(&study_args(&["--devices", "host"]), &[]).unwrap();
        let study = file::parse(Path::new(host.label), &host.text).unwrap();
        assert_eq!(study.baseline, None);
        assert_eq!(study.cells.len(), 1);
    }

    #[test]
    fn s1_refuses_bad_devices_naming_the_option() {
        for (devices, expected) in [
            ("hdd-10k,,host", "empty entry"),
            ("floppy", "--devices: `floppy`"),
            ("host,host", "twice"),
        ] {
            let e = s1_file(&study_args(&["--devices", devices]), &[])
                .err()
                .unwrap();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(expected), "{devices}: {e}");
        }
        assert_eq!(toml_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
