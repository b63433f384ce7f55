//! TATP, the Telecom Application Transaction Processing benchmark (IBM/Nokia; "TATP Benchmark
//! Description", version 1.0, 2009): a home location register of mobile subscribers in four tables
//! (SUBSCRIBER, ACCESS_INFO, SPECIAL_FACILITY, CALL_FORWARDING), seven short transactions in the
//! mix 35/10/35/2/14/2/2 (80 % reads), subscribers drawn non-uniformly. Several transactions
//! find nothing by design (TATP's expected success rates); they count as completed, and as
//! "unsuccessful" beside. docs/tatp.md says what is kept from the description.

pub mod check;
pub mod driver;
pub mod load;
pub mod schema;
pub mod tx;

use oltplab_core::{Error, Result};

use crate::sql::{db_failed, Conn};

/// Subscribers a load makes unless told (TATP's smallest population is 100,000).
pub const DEFAULT_SUBSCRIBERS: i64 = 100_000;

/// `sub_nbr`: the subscriber id as 15 digits with leading zeros.
pub fn sub_nbr(s_id: i64, out: &mut String) {
    let digits = itoa::Buffer::new().format(s_id).len();
    for _ in digits..15 {
        out.push('0');
    }
    out.push_str(itoa::Buffer::new().format(s_id));
}

pub fn sub_nbr_string(s_id: i64) -> String {
    let mut s = String::with_capacity(15);
    sub_nbr(s_id, &mut s);
    s
}

/// The non-uniform draw's A by population (TATP 3.1: 65,535 up to a million subscribers,
/// 1,048,575 up to ten million, 2,097,151 above).
pub fn nurand_a(subscribers: i64) -> i64 {
    if subscribers <= 1_000_000 {
        65_535
    } else if subscribers <= 10_000_000 {
        1_048_575
    } else {
        2_097_151
    }
}

/// oltplab's record of a load, in [`schema::META_TABLE`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Meta {
    pub subscribers: i64,
    pub seed: u64,
    pub complete: bool,
    pub loaded_at: String,
}

/// Reads oltplab's record of the load; None when the database holds no TATP load.
pub fn read_meta(conn: &mut dyn Conn) -> Result<Option<Meta>> {
    if !crate::sql::table_names(conn)?
        .iter()
        .any(|t| t.eq_ignore_ascii_case(schema::META_TABLE))
    {
        return Ok(None);
    }
    let map = crate::sql::name_values(conn, schema::META_TABLE)
        .map_err(|e| db_failed("cannot read oltplab's load record", e))?;
    let num = |k: &str| map.get(k).and_then(|v| v.parse::<i64>().ok());
    Ok(num("subscribers").map(|subscribers| Meta {
        subscribers,
        seed: num("seed").unwrap_or(0) as u64,
        complete: map.get("complete").is_some_and(|v| v == "1"),
        loaded_at: map.get("loaded_at").cloned().unwrap_or_default(),
    }))
}

/// The load record of a database a run or check may use, or a sentence saying why not.
pub fn require_loaded(conn: &mut dyn Conn, where_: &str) -> Result<Meta> {
    match read_meta(conn)? {
        Some(m) if m.complete => Ok(m),
        Some(_) => Err(Error::usage(format!(
            "the TATP load of {where_} did not finish: load it again with `oltplab load tatp --force`"
        ))),
        None => Err(Error::usage(format!(
            "{where_} holds no TATP database: create one with `oltplab load tatp` first"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_nbr_is_fifteen_digits() {
        assert_eq!(sub_nbr_string(1), "000000000000001");
        assert_eq!(sub_nbr_string(100_000), "000000000100000");
        assert_eq!(nurand_a(100_000), 65_535);
        assert_eq!(nurand_a(5_000_000), 1_048_575);
    }
}
