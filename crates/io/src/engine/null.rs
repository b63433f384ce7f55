use std::time::Duration;

use oltplab_core::Result;

use super::{Completion, IoEngine, Op};
use crate::buffers::IoBuffers;

/// Completes every I/O at once without touching any file, like fio's `null` engine.
pub struct NullEngine {
    done: Vec<Completion>,
    block_size_bytes: i32,
}

impl NullEngine {
    pub fn new(buffers: &IoBuffers) -> Self {
        Self {
            done: Vec::with_capacity(buffers.slots()),
            block_size_bytes: buffers.block_size_bytes() as i32,
        }
    }
}

impl IoEngine for NullEngine {
    #[inline]
    fn queue(&mut self, slot: u32, op: Op, _offset: u64) -> Result<()> {
        self.done.push(Completion {
            slot,
            result: if op.is_flush() {
                0
            } else {
                self.block_size_bytes
            },
        });
        Ok(())
    }

    #[inline]
    fn submit_and_wait(
        &mut self,
        _min: u32,
        _timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> Result<()> {
        out.append(&mut self.done);
        Ok(())
    }
}
