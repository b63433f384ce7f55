//! The command-line tests in one binary: libtest runs them two at a time across every file (one
//! binary per file ran each file's longest test alone while a core idled), and one link instead
//! of twenty-two. Tests that time an emulated device against its model, or turn io_uring off
//! machine-wide, stay binaries of their own (`tests/*.rs`), so no other test runs beside them.

#[path = "../common/mod.rs"]
mod common;

mod brokerage;
mod capture_servers;
mod crash;
mod crash_servers;
mod crash_workloads;
mod emulate;
mod faults;
mod galera;
mod layout;
mod merge_drivers;
mod module_cycles;
mod orders;
mod report;
mod report_browser;
mod study;
mod study_cluster;
mod study_file;
mod study_profiles_resume;
mod study_storage;
mod tatp;
mod tpcc_servers;
mod tpcc_sqlite;
mod trace;
mod url_hosts;
