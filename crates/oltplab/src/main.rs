//! `oltplab`: parse the command line, run the command, turn every error into one sentence and an
//! exit code (0 ok, 1 the measured thing failed, 2 bad usage, 130 interrupted).

use std::process::ExitCode;

use clap::Parser;
use oltplab::{
    cli, crash, device_command, devices_commands, emulate, output, report_commands, study,
    trace_commands, workload_commands,
};
use oltplab_core::Error;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        // A value our own parsers refused (a device spec, a layout) is one sentence, as every
        // other refusal: clap's first line names the option, the value and our reason and fix.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or_default());
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    output::set_quiet(cli.quiet);
    // The first Ctrl-C asks the work to stop and save what it has; a second one (a hung device, an
    // impatient user) quits at once, stopping the servers oltplab started.
    oltplab_core::interrupt::install_handler();
    let result = match cli.command {
        cli::Command::Device(args) => device_command::run(args),
        cli::Command::Devices(args) => devices_commands::run(args),
        cli::Command::Emulate(args) => emulate::run(args),
        cli::Command::Load(args) => workload_commands::load(args),
        cli::Command::Run(args) => workload_commands::run(args),
        cli::Command::Check(args) => workload_commands::check(args),
        cli::Command::Trace(args) => trace_commands::run(args),
        cli::Command::Crash(args) => crash::run(args),
        cli::Command::Study(args) => study::run(args),
        cli::Command::Report(args) => report_commands::run(args),
        cli::Command::Merge(args) => report_commands::merge(args),
        cli::Command::Completions(args) => cli::completions(args),
        cli::Command::Man(args) => cli::man(args),
    };
    // A second Ctrl-C is cleaning up and will exit with 130: not with this result.
    oltplab_core::interrupt::wait_if_quitting();
    output::emit_stdout_json();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Interrupted) => {
            eprintln!("oltplab: interrupted");
            ExitCode::from(130)
        }
        Err(err) => {
            eprintln!("oltplab: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
