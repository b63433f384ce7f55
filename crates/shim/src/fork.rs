//! This process's fork generation: bumped in a forked child, so that per-process state from
//! another generation (the trace writer, cached trace ids, the undo log's descriptor) is known to
//! be the parent's. Its own module, below the hooks and the undo log, which both read it.

use std::sync::atomic::{AtomicU64, Ordering};

static FORK_GEN: AtomicU64 = AtomicU64::new(1);

/// This process's fork generation (a forked child has a new one).
pub(crate) fn generation() -> u64 {
    FORK_GEN.load(Ordering::Acquire)
}

/// Called first in a forked child.
pub(crate) fn next_generation() {
    FORK_GEN.fetch_add(1, Ordering::AcqRel);
}
