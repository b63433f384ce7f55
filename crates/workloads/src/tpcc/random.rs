//! TPC-C's random functions (spec 2.1.4–2.1.6, 4.3.2): uniform integers, NURand with its run-time
//! constants C, the syllable last names, and the a-/n-strings of the data generator.

pub use crate::random::{last_name, Rng as TpccRng, SYLLABLES};

/// NURand's A for last names, customer ids and item ids.
pub const A_C_LAST: i64 = 255;
pub const A_C_ID: i64 = 1023;
pub const A_OL_I_ID: i64 = 8191;

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
