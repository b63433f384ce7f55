//! The random functions every workload draws with (TPC-C spec 2.1.4–2.1.6, 4.3.2, which the other
//! workloads borrow): uniform integers, NURand, the syllable last names, the a-/n-strings of the
//! data generators. One seedable generator per thread.

use rand::rngs::SmallRng;
use rand::{Rng as _, RngCore, SeedableRng};

/// The ten syllables of a customer last name (spec 4.3.2.3).
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// A fast, seedable generator with the helpers of the workloads' specifications.
pub struct Rng(SmallRng);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(SmallRng::seed_from_u64(seed))
    }

    /// Uniform integer in `lo..=hi`.
    #[inline]
    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        self.0.random_range(lo..=hi)
    }

    /// Uniform float in `[0, 1)`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    /// True with `pct` percent probability.
    #[inline]
    pub fn percent(&mut self, pct: i64) -> bool {
        self.uniform(1, 100) <= pct
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x.
    #[inline]
    pub fn nurand(&mut self, a: i64, x: i64, y: i64, c: i64) -> i64 {
        (((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1)) + x
    }

    /// Appends a random alphanumeric string of `lo..=hi` characters.
    pub fn astring(&mut self, lo: usize, hi: usize, out: &mut String) {
        const CHARS: &[u8; 62] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let len = self.0.random_range(lo..=hi);
        self.chars_from(CHARS, len, out);
    }

    /// Appends a random numeric string of `lo..=hi` digits.
    pub fn nstring(&mut self, lo: usize, hi: usize, out: &mut String) {
        let len = self.0.random_range(lo..=hi);
        self.chars_from(b"0123456789", len, out);
    }

    /// Appends `len` characters drawn uniformly from the ASCII `set`. The loader's hottest code:
    /// each 16-bit quarter of one 64-bit draw picks a character by multiply-shift, into a stack
    /// buffer that is appended whole. (The bias, under `set.len()` in 2^16 — each of 62
    /// characters is 1/1057 more or less likely than another — is far below anything a database
    /// could notice.)
    fn chars_from<const N: usize>(&mut self, set: &[u8; N], len: usize, out: &mut String) {
        debug_assert!(set.is_ascii() && N <= 1 << 16);
        let pick = |quarter: u64| set[(((quarter & 0xffff) * N as u64) >> 16) as usize];
        let mut buf = [0u8; 128];
        let mut left = len;
        while left > 0 {
            let n = left.min(buf.len());
            for piece in buf.chunks_exact_mut(4).take(n.div_ceil(4)) {
                let r = self.0.next_u64();
                piece[0] = pick(r);
                piece[1] = pick(r >> 16);
                piece[2] = pick(r >> 32);
                piece[3] = pick(r >> 48);
            }
            // ASCII, so always valid UTF-8; the check is a fast scan.
            out.push_str(std::str::from_utf8(&buf[..n]).unwrap_or_default());
            left -= n;
        }
    }

    /// I_DATA / S_DATA: 26–50 characters, 10 % of them holding "ORIGINAL" at a random place.
    pub fn data_original(&mut self, out: &mut String) {
        self.astring(26, 50, out);
        if self.percent(10) {
            let at = self.0.random_range(0..=out.len() - 8);
            out.replace_range(at..at + 8, "ORIGINAL");
        }
    }

    /// A zip code: four random digits and "11111".
    pub fn zip(&mut self, out: &mut String) {
        self.nstring(4, 4, out);
        out.push_str("11111");
    }

    /// Two random upper-case letters.
    pub fn state(&mut self, out: &mut String) {
        for _ in 0..2 {
            out.push((b'A' + self.0.random_range(0..26u8)) as char);
        }
    }

    /// A uniform permutation of `1..=n` (the customers of the initial orders).
    pub fn permutation(&mut self, n: i64) -> Vec<i64> {
        let mut v: Vec<i64> = (1..=n).collect();
        for i in (1..v.len()).rev() {
            let j = self.0.random_range(0..=i);
            v.swap(i, j);
        }
        v
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.0.random_range(0..=i);
            items.swap(i, j);
        }
    }
}

/// Appends the last name of number `n` in `0..=999`: one syllable per decimal digit.
pub fn last_name(n: i64, out: &mut String) {
    debug_assert!((0..=999).contains(&n));
    out.push_str(SYLLABLES[(n / 100) as usize]);
    out.push_str(SYLLABLES[(n / 10 % 10) as usize]);
    out.push_str(SYLLABLES[(n % 10) as usize]);
}
