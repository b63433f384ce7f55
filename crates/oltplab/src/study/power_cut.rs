//! `oltplab study --scenario power-cut`: the matrix of `oltplab crash tpcc` — devices × their
//! cache modes × the engine's durability settings — in one run, one result and one report
//! (docs/crash.md, "A study of power cuts").
//!
//! A scenario rather than a study file: a study file's cell is S1's measurement (device figures,
//! a traced run, its replays, α) and resumes by that result; a power-cut cell is a crash row,
//! which `oltplab crash` already runs as a matrix with its own result kind and report.

use std::time::Duration;

use oltplab_core::{Error, Result};

use super::shipped::split_devices;
use super::{StudyArgs, DEFAULT_DEVICES};
use crate::crash::{self, CrashArgs, CrashConfig};
use crate::workload::target::Engine;

/// The device of the matrix when --devices is left at S1's list: the drive whose cache the
/// catalogue makes volatile, so that all three modes are that drive's.
const DEFAULT_DEVICE: &str = "sata-ssd-2010";

/// The cache modes each plain device is cut with.
const CACHES: [&str; 3] = ["volatile", "lying", "battery"];

/// Each engine's durability settings when --server-setting is not given (docs/crash.md).
fn default_settings(engine: &str) -> Vec<String> {
    let list: &[&str] = match engine {
        "postgres" => &["default", "synchronous_commit=off", "full_page_writes=off"],
        "mariadb" => &[
            "default",
            "innodb_flush_log_at_trx_commit=2",
            "innodb_doublewrite=off",
        ],
        _ => &["default"],
    };
    list.iter().map(|s| s.to_string()).collect()
}

/// Cuts, states per cut and the longest run before a cut, per --scale.
fn scale(name: &str) -> (u32, u32, Duration) {
    match name {
        "test" => (1, 1, Duration::from_secs(1)),
        "quick" => (2, 2, Duration::from_secs(3)),
        "s1" | "paper" => (10, 2, Duration::from_secs(10)),
        _ => (5, 2, Duration::from_secs(5)),
    }
}

/// A device of --devices with each cache mode: `sata-ssd-2010` → `sata-ssd-2010{cache=lying}` …
/// A spec that names its cache, or is not a plain catalogue device with a cache (a RAID set, a
/// controller cache, `ram`, `host`), is cut as given (and refused where it cannot be cut).
fn with_caches(text: &str) -> Vec<String> {
    let base = text.split('{').next().unwrap_or(text);
    let plain = !text.contains('(') && !text.contains("cache=") && !["host", "ram"].contains(&base);
    if !plain {
        return vec![text.to_string()];
    }
    CACHES
        .iter()
        .map(|c| match text.strip_suffix('}') {
            Some(head) => format!("{head},cache={c}}}"),
            None => format!("{text}{{cache={c}}}"),
        })
        .collect()
}

/// The matrix as `oltplab crash tpcc` arguments, validated as the command validates them.
fn config(args: &StudyArgs) -> Result<CrashConfig> {
    if args.pacing != super::Pacing::None || args.repeat != 1 || args.workload != "tpcc" {
        return Err(Error::usage(
            "--scenario power-cut runs TPC-C without pacing, once per cut: drop --pacing, --repeat and --workload",
        ));
    }
    let devices = if args.devices == DEFAULT_DEVICES {
        vec![DEFAULT_DEVICE.to_string()]
    } else {
        split_devices(&args.devices)?
    };
    let server = args.engine != Engine::Sqlite;
    if !server && !args.server_setting.is_empty() {
        return Err(Error::usage(
            "--server-setting is for --engine postgres or mariadb; --scenario power-cut runs SQLite with synchronous FULL, NORMAL and OFF",
        ));
    }
    let (cuts, states, duration) = scale(&args.scale);
    let crash_args = CrashArgs {
        workload: "tpcc".into(),
        engine: args.engine,
        emulate: devices
            .iter()
            .flat_map(|d| with_caches(d))
            .map(|t| {
                crate::emulate::spec_arg(&t)
                    .map_err(|e| Error::usage(format!("--devices: `{t}`: {e}")))
            })
            .collect::<Result<_>>()?,
        sqlite_synchronous: if server {
            vec!["FULL".into()]
        } else {
            vec!["FULL".into(), "NORMAL".into(), "OFF".into()]
        },
        server_setting: match (server, args.server_setting.is_empty()) {
            (true, false) => args.server_setting.clone(),
            _ => default_settings(args.engine.name()),
        },
        cuts,
        states,
        seed: 1,
        warehouses: 1,
        terminals: 4,
        duration,
        // On a server the cut comes inside a checkpoint, where its page writes are in flight
        // and the engine's protection against torn pages (full-page images, the doublewrite
        // buffer) is what is cut.
        cut_during: if server { "checkpoint" } else { "run" }.into(),
        keep_states: false,
        out: args.out.clone(),
        json: args.json.clone(),
        force: args.force,
    };
    let mut cfg = CrashConfig::from_args(&crash_args).map_err(|e| match e {
        Error::Usage(m) => Error::usage(format!("--scenario power-cut: {m}")),
        other => other,
    })?;
    cfg.study = Some(super::Scenario::PowerCut.name().into());
    Ok(cfg)
}

pub fn run(args: &StudyArgs) -> Result<()> {
    let cfg = config(args)?;
    crate::output::note!(
        "oltplab study power-cut — {} on {}: {} row(s), {} cut(s) × {} state(s) each, runs of up to {}s",
        cfg.engine,
        cfg.specs
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", "),
        cfg.rows.len(),
        cfg.cuts,
        cfg.states,
        cfg.duration_s
    );
    crash::run_as(&cfg, "study")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_device_is_cut_with_each_cache_and_a_named_one_as_given() {
        assert_eq!(
            with_caches("sata-ssd-2010"),
            [
                "sata-ssd-2010{cache=volatile}",
                "sata-ssd-2010{cache=lying}",
                "sata-ssd-2010{cache=battery}"
            ]
        );
        assert_eq!(
            with_caches("hdd-15k{sector=4k}")[1],
            "hdd-15k{sector=4k,cache=lying}"
        );
        assert_eq!(
            with_caches("sata-ssd-2010{cache=lying}"),
            ["sata-ssd-2010{cache=lying}"]
        );
        assert_eq!(with_caches("wbcache(hdd-15k)"), ["wbcache(hdd-15k)"]);
        assert_eq!(with_caches("host"), ["host"]);
    }
}
