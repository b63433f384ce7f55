//! `oltplab device`'s options (clap, stage one) and their defaults; stage two is `config.rs`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use oltplab_core::units;
use oltplab_io::job::Rw;
use oltplab_io::EngineKind;

use crate::emulate::BackingChoice;

pub const AFTER_DEVICE_HELP: &str = "\
Examples:
  oltplab device                                   16 KiB random reads, QD 32, on ./oltplab-data/device.dat
  oltplab device /mnt/nvme --rw randrw --bs 8k     70 % reads on /mnt/nvme/device.dat
  oltplab device --profile all --sweep-qd 1:256    S4's twelve server profiles and more, QD 1…256
  oltplab device --engine null --bs 4k             the tool's own cost per I/O, no I/O done

Sizes take k/m/g/t (powers of 1024); durations take ms/s/m/h. Ramp time is excluded from every figure.
oltplab creates and fills the target file itself, and never writes to a block device or to a file it
did not create unless --force is given.";

#[derive(Args, Debug, Clone)]
pub struct DeviceArgs {
    /// File, directory (uses DIR/device.dat) or block device to measure [default: ./oltplab-data/device.dat]
    pub target: Option<PathBuf>,

    /// Access pattern
    #[arg(long, default_value = defaults::RW, value_parser = Rw::NAMES)]
    pub rw: String,

    /// Block size of each I/O
    #[arg(long, value_name = "SIZE", default_value = defaults::BS, value_parser = units::parse_size)]
    pub bs: u64,

    /// I/Os in flight per job
    #[arg(long, value_name = "N", default_value_t = defaults::QD, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub qd: u32,

    /// Threads issuing I/O, each with its own queue of --qd
    #[arg(long, value_name = "N", default_value_t = defaults::JOBS, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,

    /// Share of reads in percent, for --rw randrw and rw [default: 70]
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub rwmix_read: Option<u8>,

    /// Share of I/Os at a random offset in percent; the others continue from the previous one
    /// [default: 100 for rand* patterns, 0 otherwise]
    #[arg(long, value_name = "PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub random_pct: Option<u8>,

    /// Size of the region the I/O covers (and of the target file oltplab creates)
    #[arg(long, value_name = "SIZE", default_value = defaults::SIZE, value_parser = units::parse_size)]
    pub size: u64,

    /// Measured time of each point (each profile and queue depth)
    #[arg(long, value_name = "DURATION", default_value = defaults::RUNTIME, value_parser = units::parse_duration)]
    pub runtime: Duration,

    /// Warm-up before each point's measured time; excluded from every figure
    #[arg(long, value_name = "DURATION", default_value = defaults::RAMP, value_parser = units::parse_duration)]
    pub ramp: Duration,

    /// How I/O is issued: io_uring (async), psync (one blocking pread/pwrite at a time per job),
    /// null (no I/O); fio's name for it, --ioengine, works too
    #[arg(long, visible_alias = "ioengine", default_value = defaults::ENGINE, value_parser = io_engine())]
    pub engine: EngineKind,

    /// Bypass the page cache with O_DIRECT (the default)
    #[arg(long, overrides_with = "buffered")]
    pub direct: bool,

    /// Go through the page cache instead of O_DIRECT
    #[arg(long)]
    pub buffered: bool,

    /// After every N writes of a job, wait for them, fsync the file and wait for that (fio's fsync=N):
    /// the flush's latency is reported on its own
    #[arg(long, value_name = "N", conflicts_with = "fdatasync", value_parser = clap::value_parser!(u32).range(1..))]
    pub fsync: Option<u32>,

    /// As --fsync, with fdatasync (fio's fdatasync=N; what databases use for their logs)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub fdatasync: Option<u32>,

    /// Open the target O_DSYNC, so that every write is durable when it completes (fio's sync=1)
    #[arg(long)]
    pub sync: bool,

    /// Issue at most N I/Os per second per job; latency then counts from each I/O's intended start
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub rate_iops: Option<u64>,

    /// Start measuring at TIME (RFC 3339 such as 2026-11-22T10:00:00Z, or unix seconds), once the
    /// target is ready, so that runs on several machines or processes share one window for
    /// `oltplab merge`
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,

    /// Named access profiles (NAME[,NAME…] or all): S4's server profiles, db-16k-randread, sqlio-8k-*
    #[arg(long, value_name = "NAMES", conflicts_with_all = ["rw", "bs", "random_pct", "rwmix_read"], long_help = profile_help())]
    pub profile: Option<String>,

    /// Run each point at queue depths A, 2A, 4A … B (e.g. 1:256), or a list (1,4,32)
    #[arg(long, value_name = "A:B", conflicts_with = "qd")]
    pub sweep_qd: Option<String>,

    /// Measure an emulated device instead (see `oltplab devices`), e.g. hdd-15k or raid5(4,sas-ssd-2012):
    /// the I/O is real, on the backing file, and each completion comes at the device model's time
    #[arg(long, value_name = "SPEC", value_parser = crate::emulate::spec_arg)]
    pub emulate: Option<oltplab_devmodel::Spec>,

    /// Where an emulated device's data lives: ram (a file in /dev/shm, removed afterwards; for devices
    /// faster than the real disk), disk (TARGET), or auto (ram if the region fits in half the free memory)
    #[arg(long, value_name = "WHERE", value_enum, default_value_t = BackingChoice::Auto)]
    pub backing: BackingChoice,

    /// Also write the JSON result to FILE; - for standard output (human output then goes to stderr)
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Directory for this run's result.json [default: ./oltplab-results/device-<time>]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Write every measured I/O's latency to FILE as CSV (for checking percentiles; costs memory)
    #[arg(long, value_name = "FILE")]
    pub lat_log: Option<PathBuf>,

    /// Where the I/O buffers live: huge (a 2 MiB transparent huge page where the kernel allows,
    /// so that a block is one memory segment) or malloc (4 KiB pages, as fio's default
    /// iomem=malloc: a 16 KiB block is up to four segments, which virtual disks serve more slowly)
    #[arg(long, value_name = "KIND", default_value = defaults::IOMEM, value_parser = ["huge", "malloc"])]
    pub iomem: String,

    /// Seed of the access pattern; the same seed gives the same sequence of offsets
    #[arg(long, default_value_t = defaults::SEED)]
    pub seed: u64,

    /// Allow writing to a block device, or to a file or directory oltplab did not create
    #[arg(long)]
    pub force: bool,
}

/// `oltplab device`'s defaults: clap shows and applies them, and [`DeviceArgs::default`] uses the
/// same (and through it `DeviceRequest::default`, what `oltplab study` and `devices fit` start from).
pub mod defaults {
    pub const RW: &str = "randread";
    pub const BS: &str = "16k";
    pub const QD: u32 = 32;
    pub const JOBS: u32 = 1;
    pub const SIZE: &str = "1g";
    pub const RUNTIME: &str = "10s";
    pub const RAMP: &str = "2s";
    pub const ENGINE: &str = "io_uring";
    pub const IOMEM: &str = "huge";
    pub const SEED: u64 = 1;
}

impl Default for DeviceArgs {
    /// `oltplab device` with no options.
    fn default() -> DeviceArgs {
        DeviceArgs {
            target: None,
            rw: defaults::RW.into(),
            bs: units::parse_size(defaults::BS).expect("the default size parses"),
            qd: defaults::QD,
            jobs: defaults::JOBS,
            rwmix_read: None,
            random_pct: None,
            size: units::parse_size(defaults::SIZE).expect("the default size parses"),
            runtime: units::parse_duration(defaults::RUNTIME).expect("the default duration parses"),
            ramp: units::parse_duration(defaults::RAMP).expect("the default duration parses"),
            engine: EngineKind::IoUring,
            direct: false,
            buffered: false,
            fsync: None,
            fdatasync: None,
            sync: false,
            rate_iops: None,
            start_at: None,
            profile: None,
            sweep_qd: None,
            emulate: None,
            backing: BackingChoice::Auto,
            iomem: defaults::IOMEM.into(),
            json: None,
            out: None,
            lat_log: None,
            seed: defaults::SEED,
            force: false,
        }
    }
}

fn profile_help() -> String {
    let mut help = String::from(
        "Run named access profiles instead of --rw/--bs: NAME[,NAME…] or all. Each runs at --qd, or at\nevery queue depth of --sweep-qd. Profiles (block size, read %, random %):\n",
    );
    for p in oltplab_io::profile::PROFILES {
        help.push_str(&format!(
            "  {:<20} {:>5} {:>4} % read {:>4} % random   {}\n",
            p.name,
            units::format_size_short(p.mix.block_size_bytes as u64),
            p.mix.read_pct,
            p.mix.random_pct,
            p.about
        ));
    }
    help
}

/// clap's parser for `--engine`: the I/O engine by name.
fn io_engine() -> impl clap::builder::TypedValueParser<Value = EngineKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(EngineKind::NAMES).map(|name: String| {
        EngineKind::parse(&name).expect("each possible value names an I/O engine")
    })
}
