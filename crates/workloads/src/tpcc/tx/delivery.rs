//! Delivery (spec 2.7): each district's oldest new order delivered.

use super::exec::missing;
use super::{Outcome, Scratch, Statements};
use crate::sql::{Conn, DbError, DbResult, End, ErrorKind, Piped, TxMode, P};
use crate::tpcc::gen::DISTRICTS;

pub(super) fn delivery(
    conn: &mut dyn Conn,
    st: &Statements,
    w: i64,
    carrier: i64,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    if !st.dialect.returning() {
        return delivery_all_districts(conn, st, w, carrier, s);
    }
    let now = crate::sql::now_us();
    conn.begin(TxMode::Write)?;
    s.skipped_districts = 0;
    // Each district's customer update goes out with the next district's first statement, and
    // the last one with COMMIT (one round trip each where the engine pipelines).
    let mut c_upd: Option<[P; 4]> = None;
    'district: for d in 1..=DISTRICTS {
        let mut attempts = 0;
        let o_id = loop {
            let no = [P::I(w), P::I(d), P::I(w), P::I(d)];
            match c_upd.take() {
                Some(upd) => conn.pipeline(
                    &mut [
                        Piped::new(&st.dl_c_upd, &upd, &mut s.rows2),
                        Piped::new(&st.dl_no_ret, &no, &mut s.rows),
                    ],
                    End::Open,
                )?,
                None => {
                    conn.run(&st.dl_no_ret, &no, &mut s.rows)?;
                }
            }
            if !s.rows.is_empty() {
                break s.rows.get(0, 0).i64();
            }
            conn.run(&st.dl_no_any, &[P::I(w), P::I(d)], &mut s.rows)?;
            attempts += 1;
            if s.rows.is_empty() || attempts > 100 {
                s.skipped_districts += 1;
                continue 'district;
            }
        };
        // The order (its customer) and its lines (their total) in one round trip: both need
        // only the order's key.
        let key = [P::I(w), P::I(d), P::I(o_id)];
        conn.pipeline(
            &mut [
                Piped::new(
                    &st.dl_o_ret,
                    &[P::I(carrier), key[0], key[1], key[2]],
                    &mut s.rows,
                ),
                Piped::new(
                    &st.dl_ol_ret,
                    &[P::T(now), key[0], key[1], key[2]],
                    &mut s.rows2,
                ),
            ],
            End::Open,
        )?;
        if s.rows.is_empty() {
            return Err(missing("an order with a new-order row"));
        }
        let c_id = s.rows.get(0, 0).i64();
        let total = (0..s.rows2.len())
            .map(|r| s.rows2.get(r, 0).f64())
            .sum::<f64>();
        let total = (total * 100.0).round() / 100.0;
        c_upd = Some([P::F(total), P::I(w), P::I(d), P::I(c_id)]);
    }
    match c_upd {
        Some(upd) => conn.pipeline(
            &mut [Piped::new(&st.dl_c_upd, &upd, &mut s.rows2)],
            End::Commit,
        )?,
        None => conn.commit()?,
    }
    Ok(Outcome::Committed)
}

/// Delivery on MariaDB/MySQL: the ten districts' orders in six statements, not ten times as many.
/// The oldest new order of each district comes from a plain (snapshot) read; deleting them takes
/// their locks, and if a concurrent Delivery deleted one first, the transaction is retried as a
/// serialization failure.
fn delivery_all_districts(
    conn: &mut dyn Conn,
    st: &Statements,
    w: i64,
    carrier: i64,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let now = crate::sql::now_us();
    conn.begin(TxMode::Write)?;
    conn.run(&st.dl_all_oldest, &[P::I(w)], &mut s.rows)?;
    // (district, order, customer, amount) of each district with an undelivered order (spec
    // 2.7.4.2 skips the others).
    s.delivered.clear();
    for r in 0..s.rows.len() {
        s.delivered
            .push((s.rows.get(r, 0).i64(), s.rows.get(r, 1).i64(), 0, 0.0));
    }
    let n = s.delivered.len();
    s.skipped_districts = DISTRICTS as u32 - n as u32;
    if n == 0 {
        conn.commit()?;
        return Ok(Outcome::Committed);
    }
    let mut keys: Vec<P> = Vec::with_capacity(2 + 2 * n);
    keys.push(P::I(w));
    for &(d, o, ..) in &s.delivered {
        keys.extend([P::I(d), P::I(o)]);
    }
    if conn.run(&st.dl_all_no_del[n], &keys, &mut s.rows)? != n as u64 {
        return Err(DbError::new(
            ErrorKind::Serialization,
            "a concurrent Delivery took one of the oldest new orders",
        ));
    }
    let find = |delivered: &[(i64, i64, i64, f64)], d: i64| {
        delivered
            .iter()
            .position(|x| x.0 == d)
            .ok_or_else(|| missing("an order with a new-order row"))
    };
    conn.run(&st.dl_all_o_sel[n], &keys, &mut s.rows)?;
    if s.rows.len() != n {
        return Err(missing("an order with a new-order row"));
    }
    for r in 0..n {
        let at = find(&s.delivered, s.rows.get(r, 0).i64())?;
        s.delivered[at].2 = s.rows.get(r, 1).i64();
    }
    let with = |first: P<'static>, keys: &[P<'static>]| {
        std::iter::once(first)
            .chain(keys.iter().copied())
            .collect::<Vec<P>>()
    };
    conn.run(
        &st.dl_all_o_upd[n],
        &with(P::I(carrier), &keys),
        &mut s.rows,
    )?;
    conn.run(&st.dl_all_ol_upd[n], &with(P::T(now), &keys), &mut s.rows)?;
    conn.run(&st.dl_all_ol_sum[n], &keys, &mut s.rows)?;
    for r in 0..s.rows.len() {
        let at = find(&s.delivered, s.rows.get(r, 0).i64())?;
        s.delivered[at].3 = (s.rows.get(r, 1).f64() * 100.0).round() / 100.0;
    }
    let mut params: Vec<P> = Vec::with_capacity(3 * n + 1);
    for &(d, _, c, amount) in &s.delivered {
        params.extend([P::I(d), P::I(c), P::F(amount)]);
    }
    params.push(P::I(w));
    conn.run(&st.dl_all_c_upd[n], &params, &mut s.rows)?;
    conn.commit()?;
    Ok(Outcome::Committed)
}
