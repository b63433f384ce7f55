//! Payment (spec 2.5): warehouse, district and customer paid, history written.

use super::exec::{by_name, missing};
use super::{CustomerSel, Outcome, Scratch, Statements};
use crate::sql::{Conn, DbResult, Rows, TxMode, P};

#[allow(clippy::too_many_arguments)]
pub(super) fn payment(
    conn: &mut dyn Conn,
    st: &Statements,
    w: i64,
    d: i64,
    c_w: i64,
    c_d: i64,
    customer: &CustomerSel,
    amount_cents: i64,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    let amount = amount_cents as f64 / 100.0;
    let now = crate::sql::now_us();
    conn.begin(TxMode::Write)?;
    let ret = st.dialect.returning();
    // H_DATA is W_NAME, four spaces, D_NAME (spec 2.5.2.2).
    let mut h_data;
    if ret {
        conn.run(&st.pay_w_ret, &[P::F(amount), P::I(w)], &mut s.rows)?;
        if s.rows.is_empty() {
            return Err(missing("the warehouse"));
        }
        h_data = s.rows.get(0, 0).str().to_string();
        conn.run(
            &st.pay_d_ret,
            &[P::F(amount), P::I(w), P::I(d)],
            &mut s.rows,
        )?;
        if s.rows.is_empty() {
            return Err(missing("the district"));
        }
        h_data.push_str("    ");
        h_data.push_str(s.rows.get(0, 0).str());
    } else {
        // The updates lock both rows; one read then sees both changed.
        conn.run(&st.pay_w_upd, &[P::F(amount), P::I(w)], &mut s.rows)?;
        conn.run(
            &st.pay_d_upd,
            &[P::F(amount), P::I(w), P::I(d)],
            &mut s.rows,
        )?;
        conn.run(&st.pay_wd_sel, &[P::I(w), P::I(d)], &mut s.rows)?;
        if s.rows.is_empty() {
            return Err(missing("the warehouse or the district"));
        }
        h_data = s.rows.get(0, 0).str().to_string();
        h_data.push_str("    ");
        h_data.push_str(s.rows.get(0, 1).str());
    }
    let c_id = match customer {
        CustomerSel::Id(id) => *id,
        CustomerSel::Last(last) => {
            let Some(at) = by_name(conn, &st.cust_by_name, c_w, c_d, last, &mut s.rows)? else {
                return Err(missing("a customer last name"));
            };
            s.rows.get(at, 0).i64()
        }
    };
    s.text.clear();
    {
        use std::fmt::Write;
        let _ = write!(s.text, "{c_id} {c_d} {c_w} {d} {w} {amount:.2} | ");
    }
    let upd = [
        P::F(amount),
        P::F(amount),
        P::S(&s.text),
        P::I(c_w),
        P::I(c_d),
        P::I(c_id),
    ];
    if ret {
        conn.run(&st.pay_c_ret, &upd, &mut s.rows)?;
    } else {
        conn.run(
            &st.pay_c_sel,
            &[P::I(c_w), P::I(c_d), P::I(c_id)],
            &mut s.rows,
        )?;
        if !s.rows.is_empty() {
            let mut scratch = Rows::default();
            conn.run(&st.pay_c_upd, &upd, &mut scratch)?;
        }
    }
    if s.rows.is_empty() {
        return Err(missing("the customer"));
    }
    conn.run(
        &st.pay_hist,
        &[
            P::I(c_id),
            P::I(c_d),
            P::I(c_w),
            P::I(d),
            P::I(w),
            P::T(now),
            P::F(amount),
            P::S(&h_data),
        ],
        &mut s.rows,
    )?;
    conn.commit()?;
    Ok(Outcome::Committed)
}
