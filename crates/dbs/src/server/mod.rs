//! Managed servers.
