//! Database adapters.
