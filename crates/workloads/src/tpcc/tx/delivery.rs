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
    // Three steps of ten statements each, every step one round trip where the engine pipelines:
    // each district's oldest new order taken, then its order (the customer) and its lines (the
    // total), then the customers paid, with COMMIT. The districts go in order in every step,
    // so concurrent Deliveries take their row locks in the same order.
    const D: usize = DISTRICTS as usize;
    let rows = &mut s.dl_rows;
    rows.resize_with(2 * D, Default::default);
    let no: [[P; 4]; D] = std::array::from_fn(|i| {
        let d = i as i64 + 1;
        [P::I(w), P::I(d), P::I(w), P::I(d)]
    });
    {
        let mut piped: Vec<Piped> = no
            .iter()
            .zip(rows.iter_mut())
            .map(|(params, out)| Piped::new(&st.dl_no_ret, params, out))
            .collect();
        conn.pipeline(&mut piped, End::Open)?;
    }
    let mut o_ids = [None; D];
    for (i, o_id) in o_ids.iter_mut().enumerate() {
        let d = i as i64 + 1;
        if !rows[i].is_empty() {
            *o_id = Some(rows[i].get(0, 0).i64());
            continue;
        }
        // None taken: the district has no undelivered order, or a concurrent Delivery took
        // the oldest first (then look again).
        for _ in 0..=100 {
            conn.run(&st.dl_no_any, &[P::I(w), P::I(d)], &mut s.rows)?;
            if s.rows.is_empty() {
                break;
            }
            conn.run(&st.dl_no_ret, &no[i], &mut s.rows)?;
            if !s.rows.is_empty() {
                *o_id = Some(s.rows.get(0, 0).i64());
                break;
            }
        }
        if o_id.is_none() {
            s.skipped_districts += 1;
        }
    }
    let order: Vec<[P; 4]> = o_ids
        .iter()
        .enumerate()
        .filter_map(|(i, o)| o.map(|o_id| [P::I(carrier), P::I(w), P::I(i as i64 + 1), P::I(o_id)]))
        .collect();
    let lines: Vec<[P; 4]> = order
        .iter()
        .map(|k| [P::T(now), k[1], k[2], k[3]])
        .collect();
    {
        let (o_rows, ol_rows) = rows.split_at_mut(D);
        let mut piped: Vec<Piped> = Vec::with_capacity(2 * order.len());
        for (k, (o_out, ol_out)) in order
            .iter()
            .zip(&lines)
            .zip(o_rows.iter_mut().zip(ol_rows.iter_mut()))
        {
            piped.push(Piped::new(&st.dl_o_ret, &k.0[..], o_out));
            piped.push(Piped::new(&st.dl_ol_ret, &k.1[..], ol_out));
        }
        conn.pipeline(&mut piped, End::Open)?;
    }
    let mut paid: Vec<[P; 4]> = Vec::with_capacity(order.len());
    for (j, k) in order.iter().enumerate() {
        if rows[j].is_empty() {
            return Err(missing("an order with a new-order row"));
        }
        let c_id = rows[j].get(0, 0).i64();
        let ol = &rows[D + j];
        let total = (0..ol.len()).map(|r| ol.get(r, 0).f64()).sum::<f64>();
        let total = (total * 100.0).round() / 100.0;
        paid.push([P::F(total), k[1], k[2], P::I(c_id)]);
    }
    let mut piped: Vec<Piped> = paid
        .iter()
        .zip(rows.iter_mut())
        .map(|(params, out)| Piped::new(&st.dl_c_upd, params, out))
        .collect();
    conn.pipeline(&mut piped, End::Commit)?;
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
    // The customers and COMMIT in one round trip (one query on MariaDB).
    conn.pipeline(
        &mut [Piped::new(&st.dl_all_c_upd[n], &params, &mut s.rows)],
        End::Commit,
    )?;
    Ok(Outcome::Committed)
}
