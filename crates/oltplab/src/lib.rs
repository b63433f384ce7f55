//! oltplab as a library: each command's typed run, which the `oltplab` binary (`main.rs`) and
//! `oltplab study` call alike.
//!
//! - [`device_command::measure`]: a [`device_command::DeviceConfig`] → a [`oltplab_schema::DeviceResult`];
//! - [`workload_commands`]: `load`, `run` and `check` of the workloads (TPC-C, order entry,
//!   brokerage, TATP) behind one trait; each workload's module (`tpcc`, …) builds on the kit they
//!   share, [`workload`], which imports none of them;
//! - [`trace_commands::replay::replay`]: a [`trace_commands::replay::ReplayConfig`] → a [`oltplab_schema::ReplayResult`];
//! - [`study`]: the reference studies (docs/studies.md), built on the three above;
//! - [`driver_stats`]: the driver's statistics as `oltplab-schema`'s result types (every result
//!   kind's typed summary, `oltplab.result/1`).
//!
//! Each command's module holds its clap arguments (stage one), the rules that turn them into its
//! config (stage two), and its typed run; nothing below a config sees clap.

pub mod cli;
pub mod crash;
pub mod device_command;
pub mod devices_commands;
pub mod driver_stats;
pub mod emulate;
pub mod output;
pub mod plugins;
pub mod progress;
pub mod report_commands;
pub mod start_at;
pub mod study;
pub mod trace_commands;
pub mod workload;
pub mod workload_commands;

/// Set by Ctrl-C; long-running work polls it, stops, and saves what it has.
pub use oltplab_core::interrupt::STOP;
