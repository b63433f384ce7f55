//! `oltplab device`, stage two of the command line, in two steps: the options as typed values
//! ([`DeviceRequest`], which the study and `devices fit` also build directly), then the rules between
//! them and the derived values, giving one validated [`DeviceConfig`] that is also stored in the
//! result as `config`.

use std::path::PathBuf;
use std::time::Duration;

use oltplab_core::units::{format_bytes, format_size_short};
use oltplab_core::{Error, Result};
use oltplab_devmodel::Spec;
use oltplab_io::job::{Flush, FlushKind, Mix, Rw};
use oltplab_io::profile::{self, Profile};
use oltplab_io::EngineKind;
use oltplab_metrics::{Warning, WarningKind};
use serde::Serialize;

use crate::device_command::DeviceArgs;
use crate::emulate::BackingChoice;
pub use oltplab_schema::Backing;

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
                rw.name(),
                format_size_short(self.mix.block_size_bytes as u64)
            ),
            (None, None) => "job".into(),
        }
    }

    pub fn writes(&self) -> bool {
        self.mix.read_pct < 100
    }
}

/// `oltplab device`'s inputs as typed values, before the rules between options: what the command
/// line gave ([`DeviceRequest::from_args`]), or what `oltplab study` and `oltplab devices fit` build
/// themselves. [`DeviceRequest::check`] turns it into a [`DeviceConfig`].
#[derive(Clone, Debug)]
pub struct DeviceRequest {
    pub target: Option<PathBuf>,
    pub pattern: Pattern,
    pub queue_depths: QueueDepths,
    pub jobs: u32,
    pub size: u64,
    pub runtime: Duration,
    pub ramp: Duration,
    pub engine: EngineKind,
    /// O_DIRECT (not `--buffered`).
    pub direct: bool,
    /// `--fsync N` or `--fdatasync N`.
    pub flush: Option<Flush>,
    /// `--sync`: the target open O_DSYNC.
    pub dsync: bool,
    pub rate_iops: Option<u64>,
    /// `--start-at`, checked and in RFC 3339 (UTC).
    pub start_at: Option<String>,
    pub seed: u64,
    pub huge_pages: bool,
    pub emulate: Option<Spec>,
    pub backing: BackingChoice,
    pub out: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub lat_log: Option<PathBuf>,
    pub force: bool,
}

/// What the run does: named profiles, or one `--rw/--bs` job.
#[derive(Clone, Debug)]
pub enum Pattern {
    Profiles(Vec<&'static Profile>),
    Rw {
        rw: Rw,
        block_size: u64,
        /// `--rwmix-read`: only for the mixed patterns.
        rwmix_read: Option<u8>,
        random_pct: Option<u8>,
    },
}

impl Pattern {
    /// Profiles the code names (a name not in the table is a bug, not a user's error).
    pub fn profiles(names: &[&str]) -> Pattern {
        Pattern::Profiles(
            names
                .iter()
                .map(|name| profile::find(name).expect("a profile the code names is in the table"))
                .collect(),
        )
    }

    /// `--rw RW --bs BLOCK_SIZE`, with the pattern's own read and random shares.
    pub fn rw(rw: Rw, block_size: u64) -> Pattern {
        Pattern::Rw {
            rw,
            block_size,
            rwmix_read: None,
            random_pct: None,
        }
    }
}

/// The queue depths of each workload.
#[derive(Clone, Debug)]
pub enum QueueDepths {
    /// `--qd N`.
    One(u32),
    /// `--sweep-qd`: depths from 1 to [`QD_MAX`], in order, each once; the result then has `sweep[]`
    /// and `geomean_iops`.
    Sweep(Vec<u32>),
}

impl Default for DeviceRequest {
    /// `oltplab device` with no options: the defaults are the command line's, kept in one place.
    fn default() -> DeviceRequest {
        DeviceRequest::from_args(DeviceArgs::default()).expect("the default options parse")
    }
}

/// Stage two of the command line: the options parsed, then checked against each other.
pub fn resolve(args: DeviceArgs) -> Result<DeviceConfig> {
    DeviceRequest::from_args(args)?.check()
}

impl DeviceRequest {
    /// The option values clap leaves as text, parsed; the rules between options are [`Self::check`]'s.
    pub fn from_args(args: DeviceArgs) -> Result<DeviceRequest> {
        let pattern = match &args.profile {
            Some(list) => Pattern::Profiles(profile::parse_list(list).map_err(Error::usage)?),
            None => Pattern::Rw {
                rw: Rw::parse(&args.rw).expect("clap restricts --rw to known names"),
                block_size: args.bs,
                rwmix_read: args.rwmix_read,
                random_pct: args.random_pct,
            },
        };
        let queue_depths = match &args.sweep_qd {
            Some(text) => QueueDepths::Sweep(parse_sweep(text)?),
            None => QueueDepths::One(args.qd),
        };
        // clap lets only one of the two through.
        let flush = match (args.fsync, args.fdatasync) {
            (Some(n), _) => Some(Flush {
                every_writes: n,
                kind: FlushKind::Fsync,
            }),
            (_, Some(n)) => Some(Flush {
                every_writes: n,
                kind: FlushKind::Fdatasync,
            }),
            _ => None,
        };
        Ok(DeviceRequest {
            target: args.target,
            pattern,
            queue_depths,
            jobs: args.jobs,
            size: args.size,
            runtime: args.runtime,
            ramp: args.ramp,
            engine: args.engine,
            direct: !args.buffered,
            flush,
            dsync: args.sync,
            rate_iops: args.rate_iops,
            start_at: args
                .start_at
                .as_deref()
                .map(crate::start_at::parse_start_at)
                .transpose()?,
            seed: args.seed,
            huge_pages: args.iomem == "huge",
            emulate: args.emulate,
            backing: args.backing,
            out: args.out,
            json: args.json,
            lat_log: args.lat_log,
            force: args.force,
        })
    }

    /// Every rule between the options, and the values derived from them: the one way to a
    /// [`DeviceConfig`], for the command line and for the in-process callers alike.
    pub fn check(self) -> Result<DeviceConfig> {
        let engine = self.engine;
        let mut warnings = Vec::new();

        let mut workloads: Vec<Workload> = match &self.pattern {
            Pattern::Profiles(list) => list
                .iter()
                .map(|p| Workload {
                    name: Some(p.name.to_string()),
                    rw: None,
                    mix: p.mix,
                })
                .collect(),
            &Pattern::Rw {
                rw,
                block_size,
                rwmix_read,
                random_pct,
            } => {
                if rwmix_read.is_some() && !rw.is_mixed() {
                    return Err(Error::usage(format!(
                        "--rwmix-read only applies to --rw randrw or rw, not {}: drop it or change --rw",
                        rw.name()
                    )));
                }
                let (read_pct, default_random_pct) = rw.shares(rwmix_read.unwrap_or(70));
                if !(512..=(64 << 20)).contains(&block_size) {
                    return Err(Error::usage(format!(
                        "--bs {} is outside 512 bytes … 64 MiB: choose a block size such as 4k, 16k or 1m",
                        format_bytes(block_size)
                    )));
                }
                vec![Workload {
                    name: None,
                    rw: Some(rw),
                    mix: Mix {
                        block_size_bytes: block_size as u32,
                        read_pct,
                        random_pct: random_pct.unwrap_or(default_random_pct),
                        flush: None,
                    },
                }]
            }
        };
        let durability = self
            .flush
            .map(|f| match f.kind {
                FlushKind::Fsync => "--fsync",
                FlushKind::Fdatasync => "--fdatasync",
            })
            .or(self.dsync.then_some("--sync"));
        if let Some(option) = durability {
            if !workloads.iter().any(Workload::writes) {
                return Err(Error::usage(format!(
                    "{option} makes writes durable, but this run only reads: add writes (e.g. --rw write or --profile commit-8k) or drop {option}"
                )));
            }
        }
        if let Some(f) = self.flush {
            for w in workloads.iter_mut().filter(|w| w.writes()) {
                w.mix.flush = Some(f);
            }
        }

        let (mut queue_depths, sweep) = match self.queue_depths {
            QueueDepths::One(qd) => (vec![qd], false),
            QueueDepths::Sweep(depths) => (depths, true),
        };
        // The parsers give these; a caller that builds them is held to the same in tests.
        debug_assert!(
            !queue_depths.is_empty()
                && queue_depths.windows(2).all(|w| w[0] < w[1])
                && queue_depths.iter().all(|d| (1..=QD_MAX).contains(d)),
            "queue depths {queue_depths:?}: 1 to {QD_MAX}, in order, each once"
        );
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

        if self.runtime.is_zero() {
            return Err(Error::usage(
                "--runtime must be longer than zero, e.g. --runtime 10s",
            ));
        }
        let largest_block = workloads
            .iter()
            .map(|w| w.mix.block_size_bytes as u64)
            .max()
            .unwrap_or(0);
        if self.size < largest_block {
            return Err(Error::usage(format!(
                "--size {} is smaller than one {} block: raise --size",
                format_bytes(self.size),
                format_bytes(largest_block)
            )));
        }
        if self.direct {
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
        let buffer_bytes = deepest * largest_block * self.jobs as u64;
        let buffer_bytes_max =
            BUFFER_BYTES_MAX.min(oltplab_metrics::env::available_memory_bytes() / 2);
        if buffer_bytes > buffer_bytes_max {
            return Err(Error::usage(format!(
                "queue depth {deepest} × {} blocks × {} jobs needs {} of I/O buffers, more than the {} allowed (half the free memory, at most 4 GiB): lower --qd, --bs or --jobs",
                format_bytes(largest_block),
                self.jobs,
                format_bytes(buffer_bytes),
                format_bytes(buffer_bytes_max)
            )));
        }
        if engine == EngineKind::Null && self.target.is_some() {
            return Err(Error::usage("--engine null does no I/O, so it takes no TARGET: drop the TARGET or choose another engine"));
        }

        if self.emulate.as_ref().is_some_and(Spec::is_layout) {
            return Err(Error::usage(
                "--emulate: a layout places a database's log, temp and tables, which `oltplab device` does not have: give one device (e.g. the layout's data device)",
            ));
        }
        let mut direct = self.direct;
        let backing = match &self.emulate {
            None => {
                if self.backing != BackingChoice::Auto {
                    return Err(Error::usage(format!(
                        "--backing {} only applies to an emulated device: add --emulate SPEC or drop --backing",
                        self.backing.name()
                    )));
                }
                None
            }
            Some(spec) => {
                let memory_ok = self.size <= oltplab_metrics::env::available_memory_bytes() / 2;
                let backing = match (self.backing, engine) {
                    (_, EngineKind::Null) => Backing::None,
                    (BackingChoice::Ram, _) if self.target.is_some() => {
                        return Err(Error::usage("--backing ram keeps the data in a file in /dev/shm, so it takes no TARGET: drop the TARGET or use --backing disk"));
                    }
                    (BackingChoice::Ram, _) if !memory_ok => {
                        return Err(Error::usage(format!(
                            "--backing ram needs {} of memory for the region, more than half the free memory: lower --size or use --backing disk",
                            format_bytes(self.size)
                        )));
                    }
                    (BackingChoice::Ram, _) => Backing::Ram,
                    (BackingChoice::Disk, _) => Backing::Disk,
                    _ if self.target.is_some() || !memory_ok => Backing::Disk,
                    _ => Backing::Ram,
                };
                if backing == Backing::Ram {
                    // tmpfs takes no O_DIRECT; the page cache is the point of a RAM backing.
                    direct = false;
                }
                if spec.capacity_bytes() < self.size {
                    return Err(Error::usage(format!(
                        "--size {} is larger than the emulated {} ({}): lower --size",
                        format_bytes(self.size),
                        spec.name(),
                        format_bytes(spec.capacity_bytes())
                    )));
                }
                Some(backing)
            }
        };

        Ok(DeviceConfig {
            target: self.target,
            size_bytes: self.size,
            runtime_s: self.runtime.as_secs_f64(),
            ramp_s: self.ramp.as_secs_f64(),
            engine,
            direct,
            dsync: self.dsync,
            jobs: self.jobs,
            rate_iops: self.rate_iops,
            start_at: self.start_at,
            seed: self.seed,
            huge_pages: self.huge_pages,
            workloads,
            queue_depths,
            sweep,
            out: self.out,
            json: self.json,
            lat_log: self.lat_log,
            force: self.force,
            emulate: self.emulate,
            backing,
            runtime: self.runtime,
            ramp: self.ramp,
            warnings,
        })
    }
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
    fn typed_requests_keep_the_command_lines_rules() {
        // The study's device run, built as values and parsed from options, is one config.
        let typed = DeviceRequest {
            pattern: Pattern::profiles(&["db-16k-randread"]),
            queue_depths: QueueDepths::Sweep(vec![1, 32]),
            ..DeviceRequest::default()
        }
        .check()
        .unwrap();
        let parsed = resolve(DeviceArgs {
            profile: Some("db-16k-randread".into()),
            sweep_qd: Some("1,32".into()),
            ..DeviceArgs::default()
        })
        .unwrap();
        assert_eq!(
            serde_json::to_value(&typed).unwrap(),
            serde_json::to_value(&parsed).unwrap()
        );
        // A rule between options holds for a request built in-process too.
        let err = DeviceRequest {
            pattern: Pattern::rw(Rw::RandRead, 256),
            ..DeviceRequest::default()
        }
        .check()
        .unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("--bs 256 B is outside"), "{err}");
    }

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
