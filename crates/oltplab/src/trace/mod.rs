//! `oltplab trace` — being built.

use clap::Args;
use oltplab_core::{Error, Result};

#[derive(Args, Debug)]
pub struct TraceArgs {}

pub fn run(_args: TraceArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}
