//! The emulation shim.
