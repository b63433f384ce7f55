//! oltplab's I/O engine. A [`job::JobSpec`] says what to do (pattern, mix, block size, queue depth,
//! jobs, rate); [`runner::run_point`] does it on an [`engine::IoEngine`] and measures every I/O;
//! [`target`] prepares the file safely. Nothing here knows about the command line.

pub mod buffers;
pub mod engine;
pub mod job;
pub mod pattern;
pub mod profile;
pub mod runner;
pub mod target;

pub use engine::EngineKind;
pub use job::JobSpec;
