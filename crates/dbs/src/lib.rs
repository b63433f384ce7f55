//! Database adapters: embedded SQLite (with a wrapping VFS for trace capture and emulation),
//! PostgreSQL and MariaDB/MySQL, and the lifecycle of servers oltplab manages itself.

pub mod server;
pub mod sqlite;
pub mod vfs;
