//! `oltplab devices`: the device catalogue — every emulated device, its parameters with their
//! sources, and what the model makes of them (16 KiB random reads at queue depth 1 and 32); and
//! `oltplab devices fit TARGET`, which measures a device and fits the flash model to it (`fit.rs`).

pub mod fit;
pub mod trace_fit;

use std::io::Write;

use clap::{Args, Subcommand};
use oltplab_core::units::{format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_devmodel::sim::ClosedLoop;
use oltplab_devmodel::{catalogue, parse_spec, CatalogueEntry, DeviceKind, Durability};
use serde::Serialize;

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP, args_conflicts_with_subcommands = true)]
pub struct DevicesArgs {
    #[command(subcommand)]
    pub command: Option<DevicesCommand>,

    /// Show only this device, or a composed spec such as raid5(4,hdd-15k)
    pub spec: Option<String>,

    /// Print the catalogue as JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum DevicesCommand {
    /// Measure a device (random reads and writes at 4–64 KiB, QD 1–64, and the commit loop) and
    /// fit the flash model to it: prints measured against fitted, the fit error and the spec
    Fit(fit::FitArgs),
}

const AFTER_HELP: &str = "\
Compose devices with:
  raid0(N,SPEC[,stripe=64k])  raid1(N,SPEC)  raid10(N,SPEC[,stripe=64k])  raid5(N,SPEC[,stripe=64k])
  wbcache(SPEC[,size=1g][,readahead=on|off|SIZE][,cache=battery|volatile|lying])
                                       a RAID controller: battery-backed write-back cache, read-ahead
  readcache(BACKING,CACHE[,size=…])    an SSD read cache that promotes blocks read twice
  pagecache(SPEC,size=…)               the operating system's page cache
  NAME{key=value,…}                    override parameters, e.g. hdd-15k{rpm=10000}
  NAME{cache=off|volatile|lying|battery,sector=512|4k}
                                       what a power cut loses (`oltplab crash`, docs/crash.md)
Use a spec with `oltplab device --emulate SPEC`; make one for a real device with
`oltplab devices fit TARGET`.";

/// What the model gives for one spec: 16 KiB random reads.
#[derive(Serialize)]
struct Derived {
    randread16k_qd1_lat_ns: f64,
    randread16k_qd32_iops: f64,
    randwrite4k_qd1_lat_ns: f64,
    /// 8 KiB appends each followed by a flush, one at a time: what a single-client log commits.
    commit8k_per_s: f64,
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    #[serde(flatten)]
    entry: &'a CatalogueEntry,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<Derived>,
    /// What a power cut does to it (docs/crash.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    durability: Option<Durability>,
}

/// What a power cut does to the device `spec_text` names (None for `host`).
fn durability(spec_text: &str) -> Option<Durability> {
    let spec = parse_spec(spec_text).ok()?;
    (!spec.is_host()).then(|| Durability::of(&spec, 0))
}

fn derive(spec_text: &str) -> Result<Option<Derived>> {
    let spec = parse_spec(spec_text).map_err(|e| Error::usage(e.to_string()))?;
    if spec.is_host() {
        return Ok(None);
    }
    let mut q1 = ClosedLoop::random_reads(16 << 10, 1);
    q1.ios = 5_000;
    let mut q32 = ClosedLoop::random_reads(16 << 10, 32);
    q32.ios = 20_000;
    let mut w1 = ClosedLoop::random_reads(4 << 10, 1);
    w1.read_pct = 0;
    w1.ios = 2_000;
    Ok(Some(Derived {
        randread16k_qd1_lat_ns: q1.run(&spec)?.lat_ns_mean,
        randread16k_qd32_iops: q32.run(&spec)?.iops,
        randwrite4k_qd1_lat_ns: w1.run(&spec)?.lat_ns_mean,
        commit8k_per_s: ClosedLoop::commits(8 << 10).run(&spec)?.iops,
    }))
}

pub fn run(args: DevicesArgs) -> Result<()> {
    if let Some(DevicesCommand::Fit(fit_args)) = args.command {
        return fit::run(fit_args);
    }
    let entries: Vec<&CatalogueEntry> = match &args.spec {
        None => catalogue().iter().collect(),
        Some(text) => {
            let spec = parse_spec(text).map_err(|e| Error::usage(e.to_string()))?;
            match catalogue().iter().find(|e| e.name == text.trim()) {
                Some(entry) => vec![entry],
                None => {
                    // A composition or an override: show what the model makes of it.
                    return print_composed(&spec.name(), args.json);
                }
            }
        }
    };
    let mut out = std::io::stdout().lock();
    let result = if args.json {
        let list = entries
            .iter()
            .map(|e| {
                Ok(JsonEntry {
                    entry: e,
                    model: derive(e.name)?,
                    durability: durability(e.name),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&list).expect("the catalogue serialises")
        )
    } else {
        print_text(&mut out, &entries)
    };
    result.map_err(|e| Error::failed(format!("cannot write to standard output: {e}")))
}

fn print_composed(name: &str, json: bool) -> Result<()> {
    let derived = derive(name)?;
    let mut out = std::io::stdout().lock();
    let written = if json {
        writeln!(
            out,
            "{}",
            serde_json::json!({ "spec": name, "model": derived, "durability": durability(name) })
        )
    } else {
        match &derived {
            Some(d) => writeln!(
                out,
                "{name}\n  model: {}\n  power cut: {}",
                derived_line(d),
                durability(name).map_or_else(String::new, |d| d.describe())
            ),
            None => writeln!(out, "{name}: no emulation"),
        }
    };
    written.map_err(|e| Error::failed(format!("cannot write to standard output: {e}")))
}

fn derived_line(d: &Derived) -> String {
    format!(
        "16 KiB random reads {} at QD 1, {} IOPS at QD 32; 4 KiB random writes {} at QD 1; {} commits/s (8 KiB append + flush)",
        format_ns(d.randread16k_qd1_lat_ns),
        format_count(d.randread16k_qd32_iops),
        format_ns(d.randwrite4k_qd1_lat_ns),
        format_count(d.commit8k_per_s)
    )
}

fn print_text(out: &mut impl Write, entries: &[&CatalogueEntry]) -> std::io::Result<()> {
    // Number the sources once; parameters refer to them as [n].
    let mut sources: Vec<&str> = Vec::new();
    for e in entries {
        for p in e.params {
            if !sources.contains(&p.source) {
                sources.push(p.source);
            }
        }
    }
    for e in entries {
        writeln!(out, "{}  —  {}", e.name, e.summary)?;
        if e.kind == DeviceKind::Host {
            writeln!(
                out,
                "  no parameters: I/O goes to the real device unchanged\n"
            )?;
            continue;
        }
        let width = e.params.iter().map(|p| p.key.len()).max().unwrap_or(0);
        for p in e.params {
            let n = sources.iter().position(|s| *s == p.source).unwrap_or(0) + 1;
            writeln!(
                out,
                "  {:<width$} = {:<9} {} [{n}]",
                p.key,
                format_value(p.value),
                p.about
            )?;
        }
        if let Ok(Some(d)) = derive(e.name) {
            writeln!(out, "  model: {}", derived_line(&d))?;
        }
        if let Some(d) = durability(e.name) {
            writeln!(out, "  power cut: {}", d.describe())?;
        }
        writeln!(out)?;
    }
    writeln!(out, "Sources:")?;
    for (i, s) in sources.iter().enumerate() {
        writeln!(out, "  [{}] {s}", i + 1)?;
    }
    writeln!(out, "\n{AFTER_HELP}")
}

fn format_value(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}
