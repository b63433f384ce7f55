//! `oltplab study` — being built.

use clap::Args;
use oltplab_core::{Error, Result};

#[derive(Args, Debug)]
pub struct StudyArgs {}

pub fn run(_args: StudyArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}
