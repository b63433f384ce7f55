//! The workloads library's tests against real engines (SQLite files, and PostgreSQL, MariaDB and
//! Galera servers each test starts), in one binary: libtest runs them two at a time across files,
//! and they are linked once.

mod brokerage_procedures;
mod brokerage_sqlite_lib;
mod galera_abort;
mod mariadb_load_without_local_infile;
mod mysql_commit_with_last;
mod pg_pipeline;
mod servers;
mod tpcc_servers;
mod tpcc_sqlite_lib;
