//! New-Order (spec 2.4): the order, its lines and their stock rows.

use super::exec::missing;
use super::{Line, Outcome, Scratch, Statements};
use crate::sql::{Conn, DbResult, Dialect, End, Piped, Rows, TxMode, P};

pub(super) fn new_order(
    conn: &mut dyn Conn,
    st: &Statements,
    w: i64,
    d: i64,
    c: i64,
    lines: &[Line],
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let now = crate::sql::now_us();
    s.committed_order = None;
    s.ids.clear();
    s.ids.extend(lines.iter().map(|l| l.i_id));
    s.ids.sort_unstable();
    s.ids.dedup();
    conn.begin(TxMode::Write)?;
    // The district's next order id (taken) with the customer's discount and the warehouse's tax.
    let (o_id, c_discount, w_tax) = match st.dialect {
        Dialect::Postgres => {
            // The items do not depend on the district: both go out with BEGIN, in one round trip.
            let items: Vec<P> = s.ids.iter().map(|&i| P::I(i)).collect();
            conn.pipeline(
                &mut [
                    Piped::new(
                        &st.no_dist_cust_ret,
                        &[P::I(w), P::I(d), P::I(w), P::I(d), P::I(c)],
                        &mut s.rows,
                    ),
                    Piped::new(&st.no_items[s.ids.len()], &items, &mut s.rows2),
                ],
                End::Open,
            )?;
            if s.rows.is_empty() {
                return Err(missing("the district or the customer"));
            }
            let r = &s.rows;
            (r.get(0, 1).i64() - 1, r.get(0, 2).f64(), r.get(0, 5).f64())
        }
        Dialect::Mysql => {
            // The update locks the district; the read then sees our own change.
            if conn.run(&st.no_dist_upd, &[P::I(w), P::I(d)], &mut s.rows)? == 0 {
                return Err(missing("the district"));
            }
            conn.run(
                &st.no_dist_cust_sel,
                &[P::I(w), P::I(d), P::I(c)],
                &mut s.rows,
            )?;
            if s.rows.is_empty() {
                return Err(missing("the customer"));
            }
            let r = &s.rows;
            (r.get(0, 1).i64() - 1, r.get(0, 2).f64(), r.get(0, 5).f64())
        }
        Dialect::Sqlite => {
            conn.run(&st.no_dist_ret, &[P::I(w), P::I(d)], &mut s.rows)?;
            if s.rows.is_empty() {
                return Err(missing("the district"));
            }
            let o_id = s.rows.get(0, 1).i64() - 1;
            conn.run(&st.no_cust, &[P::I(w), P::I(d), P::I(c)], &mut s.rows)?;
            if s.rows.is_empty() {
                return Err(missing("the customer"));
            }
            (o_id, s.rows.get(0, 0).f64(), s.rows.get(0, 3).f64())
        }
    };

    // All items in one query. An unused item id means the intended rollback (spec 2.4.2.3): the
    // valid items are processed all the same — order, stock and order lines written — and then
    // undone, so that the 1 % rollbacks cost the engine their work and their undo.
    if st.dialect != Dialect::Postgres {
        let params: Vec<P> = s.ids.iter().map(|&i| P::I(i)).collect();
        conn.run(&st.no_items[s.ids.len()], &params, &mut s.rows2)?;
    }
    s.items.clear();
    for r in 0..s.rows2.len() {
        s.items
            .insert(s.rows2.get(r, 0).i64(), s.rows2.get(r, 1).f64());
    }
    let rollback = s.items.len() < s.ids.len();
    let valid: Vec<Line>;
    let lines = if rollback {
        valid = lines
            .iter()
            .filter(|l| s.items.contains_key(&l.i_id))
            .copied()
            .collect();
        if valid.is_empty() {
            conn.rollback()?;
            return Ok(Outcome::RolledBack);
        }
        &valid[..]
    } else {
        lines
    };
    let all_local = lines.iter().all(|l| l.supply_w == w);
    let order = [
        P::I(o_id),
        P::I(d),
        P::I(w),
        P::I(c),
        P::T(now),
        P::I(lines.len() as i64),
        P::I(all_local as i64),
    ];
    let new_order = [P::I(o_id), P::I(d), P::I(w)];
    // Stock rows in key order, so that concurrent New-Orders lock them in the same order and
    // rarely deadlock; the lines keep their numbers.
    s.order.clear();
    s.order.extend(0..lines.len());
    let key = |k: usize| (lines[k].supply_w, lines[k].i_id);
    s.order.sort_unstable_by_key(|&k| key(k));
    s.dist_info.clear();
    s.dist_info.resize(lines.len(), String::new());
    // One statement for all lines needs each stock row once; an order naming an item twice from
    // the same warehouse changes that row twice, one line at a time.
    let repeated = s.order.windows(2).any(|p| key(p[0]) == key(p[1]));
    let mut stock_done = false;
    if st.dialect == Dialect::Postgres {
        let both: Vec<P> = order.iter().chain(&new_order).copied().collect();
        if repeated {
            conn.run(&st.no_order_pair, &both, &mut s.rows)?;
        } else {
            // The order and all stock rows in one round trip: neither needs the other's rows.
            let [sw, si, sq, sr] = &mut s.stock;
            for v in [&mut *sw, &mut *si, &mut *sq, &mut *sr] {
                v.clear();
            }
            for &k in &s.order {
                let l = lines[k];
                sw.push(l.supply_w);
                si.push(l.i_id);
                sq.push(l.quantity);
                sr.push((l.supply_w != w) as i64);
            }
            conn.pipeline(
                &mut [
                    Piped::new(&st.no_order_pair, &both, &mut s.rows2),
                    Piped::new(
                        &st.no_stock_all_ret[(d - 1) as usize],
                        &[P::Ints(sw), P::Ints(si), P::Ints(sq), P::Ints(sr)],
                        &mut s.rows,
                    ),
                ],
                End::Open,
            )?;
            take_dist_info(lines, &s.order, &s.rows, &mut s.dist_info)?;
            stock_done = true;
        }
    } else {
        conn.run(&st.no_order, &order, &mut s.rows)?;
        conn.run(&st.no_new_order, &new_order, &mut s.rows)?;
    }

    match st.dialect {
        _ if stock_done => {}
        Dialect::Mysql if !repeated => {
            let mut params: Vec<P> = Vec::with_capacity(1 + 4 * lines.len());
            params.push(P::I(d));
            for &k in &s.order {
                params.extend([P::I(lines[k].supply_w), P::I(lines[k].i_id)]);
            }
            conn.run(&st.no_stock_all_sel[lines.len()], &params, &mut s.rows)?;
            take_dist_info(lines, &s.order, &s.rows, &mut s.dist_info)?;
            params.clear();
            for &k in &s.order {
                let l = lines[k];
                params.extend([
                    P::I(l.supply_w),
                    P::I(l.i_id),
                    P::I(l.quantity),
                    P::I((l.supply_w != w) as i64),
                ]);
            }
            conn.run(&st.no_stock_all_upd[lines.len()], &params, &mut s.rows)?;
        }
        _ => stock_line_by_line(conn, st, w, d, lines, s)?,
    }
    let mut params: Vec<P> = Vec::with_capacity(lines.len() * 9);
    s.amounts.clear();
    for l in lines {
        // Brand/generic (spec 2.4.2.2) only shapes the terminal's output; the amount is exact.
        let price = s.items[&l.i_id];
        s.amounts
            .push((l.quantity as f64 * price * 100.0).round() / 100.0);
    }
    for (k, l) in lines.iter().enumerate() {
        params.extend([
            P::I(o_id),
            P::I(d),
            P::I(w),
            P::I(k as i64 + 1),
            P::I(l.i_id),
            P::I(l.supply_w),
            P::I(l.quantity),
            P::F(s.amounts[k]),
            P::S(&s.dist_info[k]),
        ]);
    }
    // The lines and the end of the transaction in one round trip (where the engine pipelines).
    let end = if rollback { End::Rollback } else { End::Commit };
    conn.pipeline(
        &mut [Piped::new(&st.no_lines[lines.len()], &params, &mut s.rows)],
        end,
    )?;
    // The order's total, as the terminal would show it.
    let total: f64 = s.amounts.iter().sum::<f64>() * (1.0 - c_discount) * (1.0 + w_tax);
    std::hint::black_box(total);
    if rollback {
        return Ok(Outcome::RolledBack);
    }
    s.committed_order = Some((w, d, o_id));
    Ok(Outcome::Committed)
}

/// Each line's S_DIST_xx from rows `(s_w_id, s_i_id, …, dist)` of one statement for all lines
/// (`order`: the lines in key order, each key once).
fn take_dist_info(
    lines: &[Line],
    order: &[usize],
    rows: &Rows,
    dist_info: &mut [String],
) -> DbResult<()> {
    if rows.len() != lines.len() {
        return Err(missing("a stock row"));
    }
    let last = rows.ncols - 1;
    for r in 0..rows.len() {
        let key = (rows.get(r, 0).i64(), rows.get(r, 1).i64());
        let at = order
            .binary_search_by_key(&key, |&k| (lines[k].supply_w, lines[k].i_id))
            .map_err(|_| missing("a stock row"))?;
        dist_info[order[at]] = rows.get(r, last).str().to_string();
    }
    Ok(())
}

/// One statement (two without RETURNING) per line, in key order.
fn stock_line_by_line(
    conn: &mut dyn Conn,
    st: &Statements,
    w: i64,
    d: i64,
    lines: &[Line],
    s: &mut Scratch,
) -> DbResult<()> {
    let d_idx = (d - 1) as usize;
    for &k in &s.order {
        let l = lines[k];
        let remote = (l.supply_w != w) as i64;
        let q = l.quantity;
        let upd = [
            P::I(q),
            P::I(q),
            P::I(q),
            P::I(q),
            P::I(remote),
            P::I(l.supply_w),
            P::I(l.i_id),
        ];
        if st.dialect.returning() {
            conn.run(&st.no_stock_ret[d_idx], &upd, &mut s.rows)?;
        } else {
            conn.run(
                &st.no_stock_sel[d_idx],
                &[P::I(l.supply_w), P::I(l.i_id)],
                &mut s.rows,
            )?;
            if !s.rows.is_empty() {
                let mut scratch = Rows::default();
                conn.run(&st.no_stock_upd, &upd, &mut scratch)?;
            }
        }
        if s.rows.is_empty() {
            return Err(missing("a stock row"));
        }
        s.dist_info[k] = s.rows.get(0, 2).str().to_string();
    }
    Ok(())
}
