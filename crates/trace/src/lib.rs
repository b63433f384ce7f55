//! I/O traces.
