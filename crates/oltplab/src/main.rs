//! `oltplab`: parse the command line, run the command, turn every error into one sentence and an
//! exit code (0 ok, 1 the measured thing failed, 2 bad usage, 130 interrupted).

mod cli;
mod device;
mod output;
mod progress;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Parser;
use oltplab_core::Error;

/// Set by Ctrl-C; long-running work polls it, stops, and saves what it has.
pub static STOP: AtomicBool = AtomicBool::new(false);

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    // A second Ctrl-C while results are being saved would lose them; the first one only asks to stop.
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            eprintln!(
                "oltplab: still saving results; press Ctrl-C again in a moment to force quit"
            );
        }
    });
    let result = match cli.command {
        cli::Command::Device(args) => device::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Interrupted) => {
            eprintln!("oltplab: interrupted; the partial result was saved");
            ExitCode::from(130)
        }
        Err(err) => {
            eprintln!("oltplab: {err}");
            ExitCode::from(err.exit_code())
        }
    }
}
