//! Device models and emulation.
