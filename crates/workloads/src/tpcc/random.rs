//! TPC-C's random functions (spec 2.1.4–2.1.6, 4.3.2): uniform integers, NURand with its run-time
//! constants C, the syllable last names, and the a-/n-strings of the data generator.

use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

/// The ten syllables of a customer last name (spec 4.3.2.3).
pub const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// NURand's A for last names, customer ids and item ids.
pub const A_C_LAST: i64 = 255;
pub const A_C_ID: i64 = 1023;
pub const A_OL_I_ID: i64 = 8191;

/// A fast, seedable generator with the TPC-C helpers.
pub struct TpccRng(SmallRng);

impl TpccRng {
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

/// The NURand constants C of one phase (spec 2.1.6): one per field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Constants {
    pub c_last: i64,
    pub c_id: i64,
    pub ol_i_id: i64,
}

impl Constants {
    /// The load's constants: each chosen at random in `0..=A`.
    pub fn for_load(rng: &mut TpccRng) -> Self {
        Self {
            c_last: rng.uniform(0, A_C_LAST),
            c_id: rng.uniform(0, A_C_ID),
            ol_i_id: rng.uniform(0, A_OL_I_ID),
        }
    }

    /// The run's constants: C_ID and OL_I_ID may be anything, C_LAST must differ from the load's by
    /// a delta in 65..=119 other than 96 and 112 (spec 2.1.6.1), so that the run's names do not
    /// follow the load's distribution.
    pub fn for_run(load: &Constants, rng: &mut TpccRng) -> Self {
        let c_last = loop {
            let candidate = rng.uniform(0, A_C_LAST);
            if valid_c_last_delta(load.c_last, candidate) {
                break candidate;
            }
        };
        Self {
            c_last,
            c_id: rng.uniform(0, A_C_ID),
            ol_i_id: rng.uniform(0, A_OL_I_ID),
        }
    }
}

/// Spec 2.1.6.1: |C_run − C_load| in 65..=119 and not 96 or 112.
pub fn valid_c_last_delta(load: i64, run: i64) -> bool {
    let delta = (run - load).abs();
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_follows_its_exact_distribution() {
        // The exact distribution of NURand(1023, 1, 3000, C), by enumerating both uniform draws.
        let c = 259;
        let mut exact = vec![0f64; 3001];
        for a in 0..=A_C_ID {
            for x in 1..=3000 {
                exact[(((a | x) + c) % 3000 + 1) as usize] += 1.0;
            }
        }
        let pairs = (A_C_ID + 1) as f64 * 3000.0;
        let mut rng = TpccRng::new(1);
        let n = 1_000_000;
        let mut hits = vec![0f64; 3001];
        for _ in 0..n {
            let v = rng.nurand(A_C_ID, 1, 3000, c);
            assert!((1..=3000).contains(&v));
            hits[v as usize] += 1.0;
        }
        // Total variation distance to the exact law is sampling noise only (≈ 0.02 here) …
        let tv: f64 = (1..=3000)
            .map(|v| (hits[v] / n as f64 - exact[v] / pairs).abs())
            .sum::<f64>()
            / 2.0;
        assert!(tv < 0.05, "NURand drifts from its law: {tv}");
        // … while the law itself is far from uniform.
        let skew: f64 = (1..=3000)
            .map(|v| (exact[v] / pairs - 1.0 / 3000.0).abs())
            .sum::<f64>()
            / 2.0;
        assert!(skew > 0.2, "NURand looks uniform: {skew}");
    }

    #[test]
    fn nurand_formula() {
        // With A = 0 the OR is just the uniform draw, so NURand(0, x, x, C) = x for any C.
        let mut rng = TpccRng::new(2);
        for c in [0, 7, 255] {
            assert_eq!(rng.nurand(0, 5, 5, c), 5);
        }
    }

    #[test]
    fn run_c_last_obeys_the_delta_rule() {
        let mut rng = TpccRng::new(3);
        for load_c in 0..=A_C_LAST {
            let load = Constants {
                c_last: load_c,
                c_id: 0,
                ol_i_id: 0,
            };
            for _ in 0..20 {
                let run = Constants::for_run(&load, &mut rng);
                let delta = (run.c_last - load_c).abs();
                assert!((65..=119).contains(&delta), "delta {delta}");
                assert!(delta != 96 && delta != 112, "forbidden delta {delta}");
                assert!((0..=A_C_LAST).contains(&run.c_last));
                assert!((0..=A_C_ID).contains(&run.c_id));
                assert!((0..=A_OL_I_ID).contains(&run.ol_i_id));
            }
        }
        assert!(!valid_c_last_delta(10, 106));
        assert!(!valid_c_last_delta(130, 18));
        assert!(!valid_c_last_delta(0, 64));
        assert!(!valid_c_last_delta(0, 120));
        assert!(valid_c_last_delta(0, 65));
        assert!(valid_c_last_delta(200, 81));
    }

    #[test]
    fn last_names_from_syllables() {
        let name = |n| {
            let mut s = String::new();
            last_name(n, &mut s);
            s
        };
        assert_eq!(name(0), "BARBARBAR");
        assert_eq!(name(371), "PRICALLYOUGHT");
        assert_eq!(name(999), "EINGEINGEING");
        assert_eq!(name(40), "BARPRESBAR");
        let distinct: std::collections::HashSet<String> = (0..1000).map(name).collect();
        assert_eq!(distinct.len(), 1000);
    }

    #[test]
    fn strings_have_the_asked_lengths() {
        let mut rng = TpccRng::new(4);
        let mut originals = 0;
        for _ in 0..10_000 {
            let mut s = String::new();
            rng.data_original(&mut s);
            assert!((26..=50).contains(&s.len()));
            if s.contains("ORIGINAL") {
                originals += 1;
            }
        }
        assert!((800..1200).contains(&originals), "{originals}");
        let mut zip = String::new();
        rng.zip(&mut zip);
        assert_eq!(zip.len(), 9);
        assert!(zip.ends_with("11111"));
        let mut p = rng.permutation(3000);
        p.sort_unstable();
        assert_eq!(p, (1..=3000).collect::<Vec<_>>());
    }

    #[test]
    fn string_characters_are_uniform() {
        let mut rng = TpccRng::new(5);
        let mut s = String::new();
        for _ in 0..10_000 {
            rng.astring(300, 500, &mut s); // long ones cross the 128-byte buffer
            rng.astring(1, 3, &mut s); // lengths that are no multiple of 4 use part of a draw
        }
        let mut counts = std::collections::HashMap::new();
        for c in s.chars() {
            assert!(c.is_ascii_alphanumeric(), "{c:?}");
            *counts.entry(c).or_insert(0usize) += 1;
        }
        assert_eq!(counts.len(), 62);
        let expected = s.len() as f64 / 62.0;
        for (c, n) in counts {
            assert!(
                (n as f64 / expected - 1.0).abs() < 0.03,
                "{c}: {n} vs {expected}"
            );
        }
        let mut digits = String::new();
        rng.nstring(1000, 1000, &mut digits);
        assert!(digits.bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(digits.len(), 1000);
    }
}
