//! `oltplab emulate --device SPEC --path DIR [--trace FILE] -- COMMAND…`: runs any command with its
//! file I/O under DIR going through an emulated device (the LD_PRELOAD shim), then reports how
//! closely the realised latencies followed the model.

mod given;
pub mod session;
mod shim;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;

use clap::Args;
use oltplab_core::{safety, Error, Result};
use oltplab_dbs::server::process::Account;
use oltplab_devmodel::Spec;
use oltplab_metrics::{Warning, WarningKind};

pub use given::{host_spec, spec_arg, BackingChoice, Emulation, Target, SHARED};
pub use session::{Backing, EmulationSession, PlaceRule, SessionConfig};

const AFTER_HELP: &str = "\
Examples:
  oltplab emulate --device hdd-10k --path /var/tmp/pg -- postgres -D /var/tmp/pg/data
  oltplab emulate --device 'raid5(4,sas-ssd-2012)' --path db --trace db.trace -- ./my-benchmark
  oltplab emulate --device pcie-flash-2012 --backing ram --path db -- mariadbd --datadir=db/m --innodb-use-native-aio=0

Every process the command starts (a server's forked backends too) shares one emulated device.
Reads, writes and syncs of files under DIR wait until the modelled completion time; other files are
not touched. io_uring and Linux native AIO bypass the emulation (MariaDB: innodb_use_native_aio=0).
oltplab creates and marks DIR; a directory it did not create needs --force. The exit code is 1 if
the command fails.";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct EmulateArgs {
    /// The emulated device: a catalogue name (see `oltplab devices`) or a composition such as
    /// raid5(4,hdd-15k) or wbcache(raid10(4,hdd-15k),size=1g)
    #[arg(long, value_name = "SPEC", value_parser = spec_arg)]
    pub device: Spec,

    /// The directory whose files go through the emulated device (created and marked by oltplab)
    #[arg(long, value_name = "DIR")]
    pub path: PathBuf,

    /// Write every emulated I/O of every process to FILE (an oltplab trace)
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// Where the data really lives: disk (the files under DIR, real I/O first, then the modelled
    /// wait) or ram (the page cache: O_DIRECT dropped, syncs not passed on; for devices faster than
    /// the real disk)
    #[arg(long, default_value = "disk", value_parser = backing_arg())]
    pub backing: Backing,

    /// Seed of the model's random choices (rotational positions …); the same seed, the same model
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// The account COMMAND's processes run as, if not yours (e.g. postgres, when COMMAND is an
    /// oltplab run as root that starts a server): the device's shared state, readable and
    /// writable by its owner only, is handed to it
    #[arg(long, value_name = "ACCOUNT")]
    pub share_with: Option<String>,

    /// Allow a --path directory oltplab did not create, and replacing an existing --trace file
    #[arg(long)]
    pub force: bool,

    /// The command to run, after `--`
    #[arg(required = true, last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Refuses a `--trace` file that exists (unless `force` and oltplab wrote it) or lies inside the
/// emulated directory `dir`, where its own writes would be emulated and traced.
pub fn check_trace_path(trace: &Path, dir: &Path, force: bool) -> Result<()> {
    if trace.exists() && !force {
        return Err(Error::usage(format!(
            "{} exists: choose a new trace file name, or add --force to replace it",
            trace.display()
        )));
    }
    oltplab_trace::writer::refuse_foreign(trace)?;
    let dir = dir
        .canonicalize()
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or(dir.to_path_buf());
    let parent = trace
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
    if parent.starts_with(&dir) {
        return Err(Error::usage(format!(
            "the trace file {} is inside the emulated directory {}: put it elsewhere",
            trace.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// clap's parser for `--backing`: disk or ram (no auto: the command's files are not known).
fn backing_arg() -> impl clap::builder::TypedValueParser<Value = Backing> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["disk", "ram"]).map(|name: String| {
        match name.as_str() {
            "ram" => Backing::Ram,
            _ => Backing::Disk,
        }
    })
}

pub fn run(args: EmulateArgs) -> Result<()> {
    let spec = args.device;
    if spec.is_layout() {
        return Err(Error::usage(format!(
            "--device {}: a layout needs to know which files are the log, temp or a table, which `oltplab emulate` cannot tell for any command; give one device here, or use `oltplab run … --layout`, which places a database's files itself",
            spec.name()
        )));
    }
    let backing = args.backing;
    if let Some(trace) = &args.trace {
        check_trace_path(trace, &args.path, args.force)?;
    }
    safety::ensure_own_dir(&args.path, args.force)?;
    let account = match &args.share_with {
        None => None,
        Some(name) => Some(Account::lookup(name).ok_or_else(|| {
            Error::usage(format!(
                "--share-with {name}: there is no such account on this machine; give the account COMMAND's processes run as"
            ))
        })?),
    };
    let session = EmulationSession::start(&SessionConfig {
        spec,
        dir: args.path.clone(),
        backing,
        trace: args.trace.clone(),
        seed: args.seed,
        account,
        places: Vec::new(),
        undo: None,
    })?;

    let program = &args.command[0];
    let mut command = Command::new(program);
    command.args(&args.command[1..]);
    for (k, v) in session.env() {
        command.env(k, v);
    }
    let status = command.status().map_err(|e| {
        Error::usage(format!(
            "cannot run {}: {}: check the command name and that it is executable",
            program.to_string_lossy(),
            oltplab_core::error::strerror(e.raw_os_error().unwrap_or(0))
        ))
    })?;
    let mut report = session.finish()?;
    if oltplab_dbs::server::maps_redo_log_in(&args.path) {
        // Managed servers are refused there; any program's stores into a mapping go unseen.
        report.warnings.push(Warning::new(
            WarningKind::EmulationOffTarget,
            format!("{} is in /dev/shm, where a program may write its files through a memory mapping that neither the trace nor the emulated device sees (MariaDB maps its redo log there, taking /dev/shm for persistent memory): give --path on another file system (--backing ram still serves it from memory)", args.path.display()),
        ));
    }
    report.print();
    if crate::STOP.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    if !status.success() {
        use std::os::unix::process::ExitStatusExt;
        let how = match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            _ => "failed".to_string(),
        };
        return Err(Error::failed(format!(
            "{} {how}",
            program.to_string_lossy()
        )));
    }
    Ok(())
}
