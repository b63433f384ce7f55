//! SQLite adapter.
