//! What a TATP database keeps through any run (the description has no consistency conditions;
//! these follow from its schema and transactions), each one SQL query that returns the first
//! offending rows (none: it holds).

use super::Meta;
use crate::check::{examples, CheckStatus, Condition, EXAMPLES};
use crate::sql::{Conn, DbResult, Dialect};

fn checks(
    meta: &Meta,
    dialect: Dialect,
) -> Vec<(u8, &'static str, &'static [&'static str], String)> {
    vec![
        (1, "subscribers 1..P, each sub_nbr its id in 15 digits",
            &["s_id", "sub_nbr"][..],
            format!("SELECT s_id, sub_nbr FROM subscriber WHERE s_id < 1 OR s_id > {p} \
             OR LENGTH(sub_nbr) <> 15 OR CAST(sub_nbr AS {int}) <> s_id \
             UNION ALL SELECT n, 'rows' FROM (SELECT COUNT(*) AS n FROM subscriber) c WHERE n <> {p}",
             p = meta.subscribers,
             int = match dialect {
                 Dialect::Mysql => "SIGNED",
                 Dialect::Postgres => "BIGINT",
                 Dialect::Sqlite => "INTEGER",
             })),
        (2, "each subscriber has 1 to 4 access infos of types 1-4",
            &["s_id", "access_infos"][..],
            "SELECT s_id, COUNT(ai.ai_type) FROM subscriber s LEFT JOIN access_info ai USING (s_id) \
             GROUP BY s_id HAVING COUNT(ai.ai_type) NOT BETWEEN 1 AND 4 OR MIN(ai.ai_type) < 1 OR MAX(ai.ai_type) > 4 \
             ORDER BY s_id".into()),
        (3, "each subscriber has 1 to 4 special facilities of types 1-4",
            &["s_id", "special_facilities"][..],
            "SELECT s_id, COUNT(sf.sf_type) FROM subscriber s LEFT JOIN special_facility sf USING (s_id) \
             GROUP BY s_id HAVING COUNT(sf.sf_type) NOT BETWEEN 1 AND 4 OR MIN(sf.sf_type) < 1 OR MAX(sf.sf_type) > 4 \
             ORDER BY s_id".into()),
        (4, "each call forwarding has its special facility, starts at 0, 8 or 16 and ends in 1-24",
            &["s_id", "sf_type", "start_time", "end_time"][..],
            "SELECT cf.s_id, cf.sf_type, cf.start_time, cf.end_time FROM call_forwarding cf \
             LEFT JOIN special_facility sf ON sf.s_id = cf.s_id AND sf.sf_type = cf.sf_type \
             WHERE sf.s_id IS NULL OR cf.start_time NOT IN (0, 8, 16) OR cf.end_time NOT BETWEEN 1 AND 24 \
             ORDER BY cf.s_id, cf.sf_type, cf.start_time".into()),
    ]
}

/// Runs every condition; `progress` hears each as it finishes.
pub fn run_checks(
    conn: &mut dyn Conn,
    meta: &Meta,
    mut progress: impl FnMut(&Condition),
) -> DbResult<Vec<Condition>> {
    let mut out = Vec::new();
    for (number, rule, names, sql) in checks(meta, conn.dialect()) {
        let rows = conn.query(&format!("{sql} LIMIT {EXAMPLES}"))?;
        let c = Condition {
            number,
            rule,
            status: CheckStatus::of_rows(&rows),
            examples: examples(&rows, names),
            note: None,
        };
        progress(&c);
        out.push(c);
    }
    Ok(out)
}
