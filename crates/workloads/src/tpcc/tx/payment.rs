//! Payment (spec 2.5): warehouse, district and customer paid, history written.

use super::exec::{by_name, missing};
use super::{CustomerSel, Outcome, Scratch, Statements};
use crate::sql::{Conn, DbResult, End, Piped, Rows, TxMode, P};

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
    let pay = CustomerPay {
        w,
        d,
        c_w,
        c_d,
        amount,
    };
    // H_DATA is W_NAME, four spaces, D_NAME (spec 2.5.2.2).
    let mut h_data;
    let mut c_id = match customer {
        CustomerSel::Id(id) => Some(*id),
        CustomerSel::Last(_) => None,
    };
    if ret {
        // Warehouse, district and the customer (by id) or the customers of the name, in one
        // round trip with BEGIN where the engine pipelines: none needs another's rows.
        let pay_w = [P::F(amount), P::I(w)];
        let pay_d = [P::F(amount), P::I(w), P::I(d)];
        let by_name = match customer {
            CustomerSel::Last(last) => [P::I(c_w), P::I(c_d), P::S(last)],
            CustomerSel::Id(_) => [P::Null; 3],
        };
        let upd;
        let (third, third_params) = match c_id {
            Some(id) => {
                upd = pay.update(&mut s.text, id);
                (&st.pay_c_ret, &upd[..])
            }
            None => (&st.cust_by_name, &by_name[..]),
        };
        conn.pipeline(
            &mut [
                Piped::new(&st.pay_w_ret, &pay_w, &mut s.rows),
                Piped::new(&st.pay_d_ret, &pay_d, &mut s.rows2),
                Piped::new(third, third_params, &mut s.rows3),
            ],
            End::Open,
        )?;
        if s.rows.is_empty() {
            return Err(missing("the warehouse"));
        }
        if s.rows2.is_empty() {
            return Err(missing("the district"));
        }
        h_data = s.rows.get(0, 0).str().to_string();
        h_data.push_str("    ");
        h_data.push_str(s.rows2.get(0, 0).str());
        if c_id.is_none() {
            // The customer in the middle of those with the name, by first name (spec 2.5.2.2).
            if s.rows3.is_empty() {
                return Err(missing("a customer last name"));
            }
            let id = s.rows3.get((s.rows3.len() - 1) / 2, 0).i64();
            c_id = Some(id);
            let upd = pay.update(&mut s.text, id);
            conn.run(&st.pay_c_ret, &upd, &mut s.rows3)?;
        }
        if s.rows3.is_empty() {
            return Err(missing("the customer"));
        }
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
        let id = match customer {
            CustomerSel::Id(id) => *id,
            CustomerSel::Last(last) => {
                let Some(at) = by_name(conn, &st.cust_by_name, c_w, c_d, last, &mut s.rows)? else {
                    return Err(missing("a customer last name"));
                };
                s.rows.get(at, 0).i64()
            }
        };
        c_id = Some(id);
        let upd = pay.update(&mut s.text, id);
        conn.run(
            &st.pay_c_sel,
            &[P::I(c_w), P::I(c_d), P::I(id)],
            &mut s.rows,
        )?;
        if !s.rows.is_empty() {
            let mut scratch = Rows::default();
            conn.run(&st.pay_c_upd, &upd, &mut scratch)?;
        }
        if s.rows.is_empty() {
            return Err(missing("the customer"));
        }
    }
    let c_id = c_id.expect("the customer is known by now");
    // The history row and COMMIT in one round trip (where the engine pipelines).
    conn.pipeline(
        &mut [Piped::new(
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
        )],
        End::Commit,
    )?;
    Ok(Outcome::Committed)
}

/// What the customer's row update needs besides the customer's id, which a payment by last name
/// learns only from the rows of the name.
struct CustomerPay {
    w: i64,
    d: i64,
    c_w: i64,
    c_d: i64,
    amount: f64,
}

impl CustomerPay {
    /// The update's parameters (balance, year-to-date payment, the text put before a bad-credit
    /// customer's C_DATA, the key); the text is written into `text`, which they borrow.
    fn update<'a>(&self, text: &'a mut String, c_id: i64) -> [P<'a>; 6] {
        use std::fmt::Write;
        let CustomerPay {
            w,
            d,
            c_w,
            c_d,
            amount,
        } = *self;
        text.clear();
        let _ = write!(text, "{c_id} {c_d} {c_w} {d} {w} {amount:.2} | ");
        [
            P::F(amount),
            P::F(amount),
            P::S(text),
            P::I(c_w),
            P::I(c_d),
            P::I(c_id),
        ]
    }
}
