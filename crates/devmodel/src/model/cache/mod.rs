//! Caches in front of a device (a controller's write-back cache, an SSD read cache, the OS page
//! cache): each serves what it can and passes the rest to the [`Model`](super::base::Model) below.

mod blocks;
pub(crate) mod page_cache;
pub(crate) mod read_cache;
pub(crate) mod write_back;
