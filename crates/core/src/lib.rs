//! The bottom of oltplab's dependency chain: the error type every layer returns, unit parsing and
//! formatting, Ctrl-C, and the rules that keep oltplab from touching data it did not create.

pub mod error;
pub mod interrupt;
pub mod safety;
pub mod testing;
pub mod units;

pub use error::{Error, Result};
