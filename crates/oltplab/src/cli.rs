//! The command line, stage one: every option with its unit, default and help, in one place (clap).
//! Stage two — cross-option rules and derived values — is each command's `config` module.

use std::io::Write;

use clap::{Args, CommandFactory, Parser, Subcommand};
use oltplab_core::{Error, Result};

#[derive(Parser)]
#[command(
    name = "oltplab",
    version,
    about = "How well does an OLTP database use its storage? Measure the device the way a database uses it.",
    long_about = None,
    max_term_width = 110
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// No progress bars, per-interval lines or summaries; errors and warnings still go to stderr
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Measure a storage device or file: IOPS, bandwidth and latency percentiles (fio-class, io_uring)
    #[command(after_help = crate::device_command::AFTER_DEVICE_HELP)]
    Device(crate::device_command::DeviceArgs),
    /// The device catalogue: every emulated device with its parameters and their sources
    Devices(crate::devices_commands::DevicesArgs),
    /// Run any command with its file I/O under a directory going through an emulated device
    Emulate(crate::emulate::EmulateArgs),
    /// Create and fill a workload's database (TPC-C, orders)
    Load(crate::workload_commands::LoadArgs),
    /// Run a workload against a database and measure it (TPC-C, orders)
    Run(crate::workload_commands::RunArgs),
    /// Check a workload's database for consistency (TPC-C conditions 1–12, orders)
    Check(crate::workload_commands::CheckArgs),
    /// Inspect, convert and replay I/O traces
    Trace(crate::trace_commands::TraceArgs),
    /// Cut the power of an emulated device during a workload; check what the engine recovers
    Crash(crate::crash::CrashArgs),
    /// Re-run a reference study end to end: device, TPC-C with its trace, replay, α, report
    Study(crate::study::StudyArgs),
    /// Render saved results as one self-contained HTML report (or Markdown/CSV)
    Report(crate::report_commands::ReportArgs),
    /// Merge the results of drivers that ran partitions of one workload
    Merge(crate::report_commands::MergeArgs),
    /// Print shell completions for bash, zsh, fish, elvish or powershell
    Completions(CompletionsArgs),
    /// Print the manual page (roff), of oltplab or of one command
    Man(ManArgs),
}

#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  oltplab completions bash > /etc/bash_completion.d/oltplab
  oltplab completions zsh > \"${fpath[1]}/_oltplab\"
  oltplab completions fish > ~/.config/fish/completions/oltplab.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  oltplab man | man -l -                  read the manual now
  oltplab man device > oltplab-device.1   one command's page
  oltplab man > /usr/local/share/man/man1/oltplab.1")]
pub struct ManArgs {
    /// A command's own page (e.g. device, report); without it, the page of oltplab itself
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

pub fn completions(args: CompletionsArgs) -> Result<()> {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut cmd, "oltplab", &mut out);
    Ok(())
}

pub fn man(args: ManArgs) -> Result<()> {
    let root = Cli::command();
    let cmd = match &args.command {
        None => root,
        Some(name) => {
            let names: Vec<String> = root
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let Some(sub) = root.find_subcommand(name).cloned() else {
                return Err(Error::usage(format!(
                    "there is no command '{name}': choose one of {}",
                    names.join(", ")
                )));
            };
            // The usage line names the full command line, `oltplab device …`.
            sub.bin_name(format!("oltplab {name}"))
                .display_name(format!("oltplab-{name}"))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let title = match &args.command {
        None => "oltplab".to_string(),
        Some(name) => format!("oltplab-{name}"),
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd)
        .title(title)
        .source(format!("oltplab {}", env!("CARGO_PKG_VERSION")))
        .manual("oltplab manual")
        .render(&mut page)
        .map_err(|e| Error::failed(format!("cannot render the man page: {e}")))?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&page).and_then(|_| out.flush());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device_command::DeviceArgs;

    // Here, not in device_command/: only the top of the command line may import it.
    #[test]
    fn device_defaults_are_the_command_lines() {
        let Command::Device(parsed) = Cli::parse_from(["oltplab", "device"]).command else {
            panic!("parsed a device command");
        };
        assert_eq!(
            format!("{parsed:?}"),
            format!("{:?}", DeviceArgs::default())
        );
    }
}
