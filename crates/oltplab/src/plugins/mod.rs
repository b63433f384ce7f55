//! The workloads' plug-ins to the command line: each turns its option groups into its configs and
//! runs its load, run and check on the run scaffold (`workload/`), over the workload itself in
//! `oltplab-workloads` (the transactions, the loader, the driver's inputs). The commands that name
//! them all are `workload_commands.rs`, above this; no plug-in imports that module, and none
//! another's code except an option group it borrows (`BORROWED_OPTIONS`).

pub mod brokerage;
pub mod orders;
pub mod tatp;
pub mod tpcc;
