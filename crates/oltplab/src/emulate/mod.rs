//! `oltplab emulate` — being built.

use clap::Args;
use oltplab_core::{Error, Result};

#[derive(Args, Debug)]
pub struct EmulateArgs {}

pub fn run(_args: EmulateArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}
