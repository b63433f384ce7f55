//! The loader (TATP 3): per subscriber one SUBSCRIBER row, one to four ACCESS_INFO and
//! SPECIAL_FACILITY rows of distinct types, and zero to three CALL_FORWARDING rows per special
//! facility with distinct start times; in chunks of subscribers ([`crate::bulk`]), then the keys
//! and the `sub_nbr` index, then the record of the load.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use oltplab_core::Result;

use super::schema::{
    self, ACCESS_INFO_COLS, CALL_FORWARDING_COLS, SPECIAL_FACILITY_COLS, SUBSCRIBER_COLS,
};
use super::sub_nbr;
use crate::bulk::LoadTimes;
use crate::random::Rng;
use crate::sql::{db_failed, Batch, Connector, Purpose};

/// Subscribers per chunk (one load transaction).
const CHUNK: i64 = 2000;

#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub subscribers: i64,
    pub threads: usize,
    pub seed: u64,
    /// Drop existing tables instead of refusing.
    pub force: bool,
    /// Where the database is, for messages.
    pub location: String,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct LoadReport {
    pub subscribers: i64,
    #[serde(flatten)]
    pub times: LoadTimes,
}

/// Rows the load makes, about (for progress): 1 + 2.5 + 2.5 + 2.5 × 1.5 per subscriber.
pub fn planned_rows(subscribers: i64) -> u64 {
    (subscribers as f64 * 9.75) as u64
}

/// `n` distinct values of `1..=4` (or of `set`), in random order.
fn distinct(rng: &mut Rng, set: &[i64], n: usize) -> Vec<i64> {
    let mut v = set.to_vec();
    rng.shuffle(&mut v);
    v.truncate(n);
    v
}

fn upper(rng: &mut Rng, n: usize, out: &mut String) {
    for _ in 0..n {
        out.push((b'A' + rng.uniform(0, 25) as u8) as char);
    }
}

/// The rows of subscribers `first..first + CHUNK` (at most `last`), the same for a seed.
pub fn generate(first: i64, last: i64, seed: u64) -> Vec<Batch> {
    let n = (last - first + 1) as usize;
    let mut rng = Rng::new(seed ^ (first as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut sub = Batch::new("subscriber", SUBSCRIBER_COLS, n);
    let mut ai = Batch::new("access_info", ACCESS_INFO_COLS, n * 3);
    let mut sf = Batch::new("special_facility", SPECIAL_FACILITY_COLS, n * 3);
    let mut cf = Batch::new("call_forwarding", CALL_FORWARDING_COLS, n * 4);
    for s_id in first..=last {
        sub.int(s_id);
        sub.str_with(|o| sub_nbr(s_id, o));
        for _ in 0..10 {
            sub.int(rng.uniform(0, 1));
        }
        for _ in 0..10 {
            sub.int(rng.uniform(0, 15));
        }
        for _ in 0..10 {
            sub.int(rng.uniform(0, 255));
        }
        sub.int(rng.uniform(1, i64::from(u32::MAX)));
        sub.int(rng.uniform(1, i64::from(u32::MAX)));
        let types = rng.uniform(1, 4) as usize;
        for ai_type in distinct(&mut rng, &[1, 2, 3, 4], types) {
            ai.int(s_id);
            ai.int(ai_type);
            ai.int(rng.uniform(0, 255));
            ai.int(rng.uniform(0, 255));
            ai.str_with(|o| upper(&mut rng, 3, o));
            ai.str_with(|o| upper(&mut rng, 5, o));
        }
        let types = rng.uniform(1, 4) as usize;
        for sf_type in distinct(&mut rng, &[1, 2, 3, 4], types) {
            sf.int(s_id);
            sf.int(sf_type);
            sf.int(i64::from(rng.percent(85)));
            sf.int(rng.uniform(0, 255));
            sf.int(rng.uniform(0, 255));
            sf.str_with(|o| upper(&mut rng, 5, o));
            let forwards = rng.uniform(0, 3) as usize;
            for start in distinct(&mut rng, &[0, 8, 16], forwards) {
                cf.int(s_id);
                cf.int(sf_type);
                cf.int(start);
                cf.int(start + rng.uniform(1, 8));
                cf.str_with(|o| rng.nstring(15, 15, o));
            }
        }
    }
    vec![sub, ai, sf, cf]
}

pub fn load(
    connector: &dyn Connector,
    opts: &LoadOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
    stop: &AtomicBool,
) -> Result<LoadReport> {
    let started = Instant::now();
    let dialect = connector.dialect();
    let mut main = connector.connect(Purpose::Load)?;
    crate::bulk::fresh_tables(
        main.as_mut(),
        &opts.location,
        opts.force,
        "TATP",
        &schema::drop_tables(),
        &schema::create_tables(dialect),
    )?;
    let loaded_at = oltplab_metrics::schema::now_rfc3339();
    main.batch(&format!(
        "INSERT INTO {} (name, value) VALUES ('subscribers', '{}'), ('seed', '{}'), \
         ('loaded_at', '{loaded_at}'), ('complete', '0')",
        schema::META_TABLE,
        opts.subscribers,
        opts.seed
    ))
    .map_err(|e| db_failed("cannot record the load", e))?;
    let plan: Vec<(i64, i64)> = (0..(opts.subscribers + CHUNK - 1) / CHUNK)
        .map(|i| (i * CHUNK + 1, ((i + 1) * CHUNK).min(opts.subscribers)))
        .collect();
    // Progress counts about 9.75 rows per subscriber; the chunks report what they loaded.
    let rows = crate::bulk::load_chunks(
        connector,
        main.as_mut(),
        &plan,
        |&(a, b)| planned_rows(b - a + 1),
        |(a, b)| generate(a, b, opts.seed),
        opts.threads,
        progress,
        stop,
    )?;
    let index_start = Instant::now();
    crate::bulk::index_and_analyze(
        connector,
        main.as_mut(),
        &schema::create_indexes(dialect),
        &schema::TABLES,
        opts.threads,
        stop,
    )?;
    crate::bulk::mark_complete(connector, main.as_mut(), schema::META_TABLE)?;
    Ok(LoadReport {
        subscribers: opts.subscribers,
        times: LoadTimes::new(rows, started, index_start),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_has_the_descriptions_cardinalities() {
        let b = generate(1, 2000, 7);
        let per = |i: usize| b[i].rows() as f64 / 2000.0;
        assert_eq!(b[0].rows(), 2000);
        // 1–4 access infos and special facilities (2.5 on average), 0–3 forwards of each (1.5).
        assert!((per(1) - 2.5).abs() < 0.1, "{}", per(1));
        assert!((per(2) - 2.5).abs() < 0.1, "{}", per(2));
        assert!((per(3) - 3.75).abs() < 0.2, "{}", per(3));
        assert!(generate(1, 2000, 7) == b, "a chunk is the same for a seed");
    }
}
