//! `oltplab tpcc` — being built.

use clap::Args;
use oltplab_core::{Error, Result};

#[derive(Args, Debug)]
pub struct LoadArgs {}

#[derive(Args, Debug)]
pub struct RunArgs {}

#[derive(Args, Debug)]
pub struct CheckArgs {}

pub fn load(_args: LoadArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}

pub fn run(_args: RunArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}

pub fn check(_args: CheckArgs) -> Result<()> {
    Err(Error::usage("this command is not built yet"))
}
