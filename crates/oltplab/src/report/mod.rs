//! `oltplab report` and `oltplab merge` — being built.

use clap::Args;
use oltplab_core::{Error, Result};

#[derive(Args, Debug)]
pub struct ReportArgs {}

#[derive(Args, Debug)]
pub struct MergeArgs {}

pub fn run(_args: ReportArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}

pub fn merge(_args: MergeArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}
