//! `oltplab devices` — being built.

use clap::Args;
use oltplab_core::{Error, Result};

#[derive(Args, Debug)]
pub struct DevicesArgs {}

pub fn run(_args: DevicesArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}
