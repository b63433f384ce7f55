//! Where the next I/O goes and whether it reads or writes. Deterministic for a seed; two random draws
//! per I/O and no allocation, because this runs millions of times a second.

use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

use crate::engine::Op;
use crate::job::Mix;

pub struct PatternGen {
    rng: SmallRng,
    blocks: u64,
    block_size_bytes: u64,
    next_block: u64,
    /// A draw of 32 random bits below this is a read; `pct · 2³² / 100`, so 100 % is always.
    read_threshold: u64,
    random_threshold: u64,
}

impl PatternGen {
    /// `blocks` aligned blocks of the mix's size; sequential runs start at `start_block`.
    pub fn new(mix: &Mix, blocks: u64, seed: u64, start_block: u64) -> Self {
        assert!(blocks > 0, "the region holds no block");
        let threshold = |pct: u8| (pct.min(100) as u64) * (1u64 << 32) / 100;
        Self {
            rng: SmallRng::seed_from_u64(seed),
            blocks,
            block_size_bytes: mix.block_size_bytes as u64,
            next_block: start_block % blocks,
            read_threshold: threshold(mix.read_pct),
            random_threshold: threshold(mix.random_pct),
        }
    }

    /// The next I/O: its direction and byte offset (a multiple of the block size, inside the region).
    #[inline]
    pub fn next_io(&mut self) -> (Op, u64) {
        let coin = self.rng.next_u64();
        let op = if (coin >> 32) < self.read_threshold {
            Op::Read
        } else {
            Op::Write
        };
        let block = if (coin & 0xffff_ffff) < self.random_threshold {
            // Lemire's multiply-shift: uniform enough for any block count below 2⁴⁰, no division.
            ((self.rng.next_u64() as u128 * self.blocks as u128) >> 64) as u64
        } else {
            self.next_block
        };
        self.next_block = if block + 1 == self.blocks {
            0
        } else {
            block + 1
        };
        (op, block * self.block_size_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(read_pct: u8, random_pct: u8) -> Mix {
        Mix {
            block_size_bytes: 8192,
            read_pct,
            random_pct,
            flush: None,
        }
    }

    /// Share of reads and of random (non-consecutive) I/Os over many draws.
    fn shares(m: Mix, draws: usize) -> (f64, f64) {
        let blocks = 1 << 20;
        let mut g = PatternGen::new(&m, blocks, 42, 0);
        let (mut reads, mut jumps) = (0usize, 0usize);
        let mut last = None;
        for _ in 0..draws {
            let (op, off) = g.next_io();
            reads += (op == Op::Read) as usize;
            if let Some(prev) = last {
                // A random draw lands on the next block with probability 1/blocks: negligible.
                jumps += (off != (prev + 8192) % (blocks * 8192)) as usize;
            }
            last = Some(off);
        }
        (
            reads as f64 / draws as f64,
            jumps as f64 / (draws - 1) as f64,
        )
    }

    #[test]
    fn read_and_random_shares_hold_over_many_draws() {
        for (read, random) in [
            (70, 100),
            (95, 75),
            (67, 100),
            (80, 80),
            (98, 0),
            (0, 0),
            (100, 100),
            (90, 0),
        ] {
            let (r, x) = shares(mix(read, random), 400_000);
            assert!(
                (r - read as f64 / 100.0).abs() < 0.005,
                "read {read}%: got {r}"
            );
            assert!(
                (x - random as f64 / 100.0).abs() < 0.005,
                "random {random}%: got {x}"
            );
        }
    }

    #[test]
    fn offsets_are_aligned_and_inside_the_region() {
        for blocks in [1u64, 2, 3, 1000, 131_071] {
            let mut g = PatternGen::new(&mix(50, 60), blocks, 9, 0);
            for _ in 0..50_000 {
                let (_, off) = g.next_io();
                assert_eq!(off % 8192, 0);
                assert!(off < blocks * 8192, "{off} outside {blocks} blocks");
            }
        }
    }

    #[test]
    fn random_offsets_cover_the_region_evenly() {
        let blocks = 16u64;
        let mut g = PatternGen::new(&mix(100, 100), blocks, 1, 0);
        let mut hits = [0u32; 16];
        for _ in 0..160_000 {
            hits[(g.next_io().1 / 8192) as usize] += 1;
        }
        for h in hits {
            assert!((9_000..11_000).contains(&h), "{hits:?}");
        }
    }

    #[test]
    fn sequential_wraps_at_the_end_of_the_region_from_its_start_block() {
        let mut g = PatternGen::new(&mix(0, 0), 4, 3, 2);
        let offs: Vec<u64> = (0..6).map(|_| g.next_io().1 / 8192).collect();
        assert_eq!(offs, [2, 3, 0, 1, 2, 3]);
    }

    #[test]
    fn same_seed_same_sequence() {
        let run = |seed| {
            let mut g = PatternGen::new(&mix(70, 50), 1000, seed, 0);
            (0..100).map(|_| g.next_io()).collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
