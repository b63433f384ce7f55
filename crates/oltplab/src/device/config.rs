//! `oltplab device`, stage two of the command line: cross-option rules and derived values, giving one
//! validated [`DeviceConfig`] that is also stored in the result as `config`.

use std::path::PathBuf;
use std::time::Duration;

use oltplab_core::units::{format_bytes, format_size_short};
use oltplab_core::{Error, Result};
use oltplab_devmodel::Spec;
use oltplab_io::job::{Flush, FlushKind, Mix, Rw};
use oltplab_io::{profile, EngineKind};
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;

use crate::device::DeviceArgs;
use crate::emulate::BackingChoice;
pub use crate::schema::Backing;

/// Queue depth × block size × jobs above this would allocate unreasonable buffer memory.
const BUFFER_BYTES_MAX: u64 = 4 << 30;
pub const QD_MAX: u32 = 4096;

#[derive(Clone, Debug, Serialize)]
pub struct DeviceConfig {
    /// The user's TARGET as given; resolved to a file path when the run starts.
    pub target: Option<PathBuf>,
    pub size_bytes: u64,
    pub runtime_s: f64,
    pub ramp_s: f64,
    pub engine: EngineKind,
    pub direct: bool,
    /// The target is open O_DSYNC (`--sync`).
    pub dsync: bool,
    pub jobs: u32,
    pub rate_iops: Option<u64>,
    /// `--start-at`: when measuring starts (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_at: Option<String>,
    pub seed: u64,
    /// The I/O buffers on a huge page where the kernel allows (`--iomem huge`), or on 4 KiB pages.
    pub huge_pages: bool,
    pub workloads: Vec<Workload>,
    pub queue_depths: Vec<u32>,
    /// True when `--sweep-qd` was given: the result then has `sweep[]` and `geomean_iops`.
    pub sweep: bool,
    pub out: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub lat_log: Option<PathBuf>,
    pub force: bool,
    /// The emulated device (in JSON its canonical text); absent when the target is measured as it
    /// is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulate: Option<Spec>,
    /// Where the emulated device's data lives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backing: Option<Backing>,
    #[serde(skip)]
    pub runtime: Duration,
    #[serde(skip)]
    pub ramp: Duration,
    /// Adjustments the user should know about (e.g. a queue depth a synchronous engine cannot keep).
    #[serde(skip)]
    pub warnings: Vec<Warning>,
}

/// One access pattern: a named profile, or the `--rw/--bs` job.
#[derive(Debug, Clone, Serialize)]
pub struct Workload {
    /// The profile's name; `None` for the `--rw` job.
    pub name: Option<String>,
    pub rw: Option<Rw>,
    #[serde(flatten)]
    pub mix: Mix,
}

impl Workload {
    pub fn label(&self) -> String {
        match (&self.name, self.rw) {
            (Some(name), _) => name.clone(),
            (None, Some(rw)) => format!(
                "{} {}",
                serde_json::to_value(rw)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                format_size_short(self.mix.block_size_bytes as u64)
            ),
            (None, None) => "job".into(),
        }
    }

    pub fn writes(&self) -> bool {
        self.mix.read_pct < 100
    }
}

pub fn resolve(args: DeviceArgs) -> Result<DeviceConfig> {
    let engine = args.engine;
    let direct = !args.buffered;
    let mut warnings = Vec::new();

    let mut workloads: Vec<Workload> = match &args.profile {
        Some(list) => profile::parse_list(list)
            .map_err(Error::usage)?
            .into_iter()
            .map(|p| Workload {
                name: Some(p.name.to_string()),
                rw: None,
                mix: p.mix,
            })
            .collect(),
        None => {
            let rw = Rw::parse(&args.rw).expect("clap restricts --rw to known names");
            if args.rwmix_read.is_some() && !rw.is_mixed() {
                return Err(Error::usage(format!(
                    "--rwmix-read only applies to --rw randrw or rw, not {}: drop it or change --rw",
                    args.rw
                )));
            }
            let (read_pct, random_pct) = rw.shares(args.rwmix_read.unwrap_or(70));
            if !(512..=(64 << 20)).contains(&args.bs) {
                return Err(Error::usage(format!(
                    "--bs {} is outside 512 bytes … 64 MiB: choose a block size such as 4k, 16k or 1m",
                    format_bytes(args.bs)
                )));
            }
            vec![Workload {
                name: None,
                rw: Some(rw),
                mix: Mix {
                    block_size_bytes: args.bs as u32,
                    read_pct,
                    random_pct: args.random_pct.unwrap_or(random_pct),
                    flush: None,
                },
            }]
        }
    };
    let flush = match (args.fsync, args.fdatasync) {
        (Some(n), _) => Some((
            "--fsync",
            Flush {
                every_writes: n,
                kind: FlushKind::Fsync,
            },
        )),
        (_, Some(n)) => Some((
            "--fdatasync",
            Flush {
                every_writes: n,
                kind: FlushKind::Fdatasync,
            },
        )),
        _ => None,
    };
    let durability = flush
        .map(|(name, _)| name)
        .or(args.sync.then_some("--sync"));
    if let Some(option) = durability {
        if !workloads.iter().any(Workload::writes) {
            return Err(Error::usage(format!(
                "{option} makes writes durable, but this run only reads: add writes (e.g. --rw write or --profile commit-8k) or drop {option}"
            )));
        }
    }
    if let Some((_, f)) = flush {
        for w in workloads.iter_mut().filter(|w| w.writes()) {
            w.mix.flush = Some(f);
        }
    }

    let sweep = args.sweep_qd.is_some();
    let mut queue_depths = match &args.sweep_qd {
        Some(text) => parse_sweep(text)?,
        None => vec![args.qd],
    };
    if !engine.is_async() && queue_depths.iter().any(|&qd| qd > 1) {
        if sweep {
            return Err(Error::usage(
                "--engine psync keeps one I/O in flight per job, so a queue-depth sweep measures nothing: use --engine io_uring, or --jobs for concurrency",
            ));
        }
        warnings.push(Warning::new(
            WarningKind::QueueDepthIgnored,
            format!("psync is synchronous: ran at queue depth 1 per job instead of {}; use --jobs for concurrency or --engine io_uring", queue_depths[0]),
        ));
        queue_depths = vec![1];
    }

    if args.runtime.is_zero() {
        return Err(Error::usage(
            "--runtime must be longer than zero, e.g. --runtime 10s",
        ));
    }
    let largest_block = workloads
        .iter()
        .map(|w| w.mix.block_size_bytes as u64)
        .max()
        .unwrap_or(0);
    if args.size < largest_block {
        return Err(Error::usage(format!(
            "--size {} is smaller than one {} block: raise --size",
            format_bytes(args.size),
            format_bytes(largest_block)
        )));
    }
    if direct {
        if let Some(w) = workloads
            .iter()
            .find(|w| !w.mix.block_size_bytes.is_multiple_of(512))
        {
            return Err(Error::usage(format!(
                "direct I/O needs a block size that is a multiple of 512 bytes, not {}: change --bs or add --buffered",
                format_bytes(w.mix.block_size_bytes as u64)
            )));
        }
    }
    let deepest = *queue_depths.iter().max().unwrap_or(&1) as u64;
    let buffer_bytes = deepest * largest_block * args.jobs as u64;
    let buffer_bytes_max = BUFFER_BYTES_MAX.min(oltplab_metrics::env::available_memory_bytes() / 2);
    if buffer_bytes > buffer_bytes_max {
        return Err(Error::usage(format!(
            "queue depth {deepest} × {} blocks × {} jobs needs {} of I/O buffers, more than the {} allowed (half the free memory, at most 4 GiB): lower --qd, --bs or --jobs",
            format_bytes(largest_block),
            args.jobs,
            format_bytes(buffer_bytes),
            format_bytes(buffer_bytes_max)
        )));
    }
    if engine == EngineKind::Null && args.target.is_some() {
        return Err(Error::usage("--engine null does no I/O, so it takes no TARGET: drop the TARGET or choose another engine"));
    }

    let emulate_spec = args.emulate;
    if emulate_spec.as_ref().is_some_and(Spec::is_layout) {
        return Err(Error::usage(
            "--emulate: a layout places a database's log, temp and tables, which `oltplab device` does not have: give one device (e.g. the layout's data device)",
        ));
    }
    let mut direct = direct;
    let backing = match &emulate_spec {
        None => {
            if args.backing != BackingChoice::Auto {
                return Err(Error::usage(format!(
                    "--backing {} only applies to an emulated device: add --emulate SPEC or drop --backing",
                    args.backing.name()
                )));
            }
            None
        }
        Some(spec) => {
            let memory_ok = args.size <= oltplab_metrics::env::available_memory_bytes() / 2;
            let backing = match (args.backing, engine) {
                (_, EngineKind::Null) => Backing::None,
                (BackingChoice::Ram, _) if args.target.is_some() => {
                    return Err(Error::usage("--backing ram keeps the data in a file in /dev/shm, so it takes no TARGET: drop the TARGET or use --backing disk"));
                }
                (BackingChoice::Ram, _) if !memory_ok => {
                    return Err(Error::usage(format!(
                        "--backing ram needs {} of memory for the region, more than half the free memory: lower --size or use --backing disk",
                        format_bytes(args.size)
                    )));
                }
                (BackingChoice::Ram, _) => Backing::Ram,
                (BackingChoice::Disk, _) => Backing::Disk,
                _ if args.target.is_some() || !memory_ok => Backing::Disk,
                _ => Backing::Ram,
            };
            if backing == Backing::Ram {
                // tmpfs takes no O_DIRECT; the page cache is the point of a RAM backing.
                direct = false;
            }
            if spec.capacity_bytes() < args.size {
                return Err(Error::usage(format!(
                    "--size {} is larger than the emulated {} ({}): lower --size",
                    format_bytes(args.size),
                    spec.name(),
                    format_bytes(spec.capacity_bytes())
                )));
            }
            Some(backing)
        }
    };

    Ok(DeviceConfig {
        target: args.target,
        size_bytes: args.size,
        runtime_s: args.runtime.as_secs_f64(),
        ramp_s: args.ramp.as_secs_f64(),
        engine,
        direct,
        dsync: args.sync,
        jobs: args.jobs,
        rate_iops: args.rate_iops,
        start_at: args
            .start_at
            .as_deref()
            .map(crate::start_at::parse_start_at)
            .transpose()?,
        seed: args.seed,
        huge_pages: args.iomem == "huge",
        workloads,
        queue_depths,
        sweep,
        out: args.out,
        json: args.json,
        lat_log: args.lat_log,
        force: args.force,
        emulate: emulate_spec,
        backing,
        runtime: args.runtime,
        ramp: args.ramp,
        warnings,
    })
}

/// `A:B` → A, 2A, 4A … ≤ B; or a comma list `1,4,32`.
pub fn parse_sweep(text: &str) -> Result<Vec<u32>> {
    let bad = || {
        Error::usage(format!(
            "--sweep-qd '{text}' is not a queue-depth range: write A:B (powers of two from A to B, e.g. 1:256) or a list such as 1,4,32, with depths from 1 to {QD_MAX}"
        ))
    };
    let depth = |s: &str| -> Result<u32> {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|d| (1..=QD_MAX).contains(d))
            .ok_or_else(bad)
    };
    let depths = if let Some((a, b)) = text.split_once(':') {
        let (a, b) = (depth(a)?, depth(b)?);
        if a > b {
            return Err(bad());
        }
        std::iter::successors(Some(a), |&d| d.checked_mul(2))
            .take_while(|&d| d <= b)
            .collect()
    } else {
        let mut list = text.split(',').map(depth).collect::<Result<Vec<_>>>()?;
        list.sort_unstable();
        list.dedup();
        list
    };
    Ok(depths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps() {
        assert_eq!(
            parse_sweep("1:256").unwrap(),
            [1, 2, 4, 8, 16, 32, 64, 128, 256]
        );
        assert_eq!(parse_sweep("3:20").unwrap(), [3, 6, 12]);
        assert_eq!(parse_sweep("1,4,32").unwrap(), [1, 4, 32]);
        assert_eq!(
            parse_sweep("32,1,4,1").unwrap(),
            [1, 4, 32],
            "each depth once, in order"
        );
        for bad in ["", "0:4", "8:2", "1:99999", "a:b", "1,,2", "1:2:3"] {
            let err = parse_sweep(bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad}");
            assert!(err.to_string().contains("1:256"), "{bad}: {err}");
        }
    }
}
