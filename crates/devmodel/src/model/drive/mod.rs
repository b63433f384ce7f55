//! Single drives, the leaves of a device's tree: each turns an I/O into its completion time on
//! its own units and calls nothing below it.

pub(crate) mod flash;
pub(crate) mod hdd;
pub(crate) mod ram;
