//! Order-Status (spec 2.6): a customer's last order and its lines, read.

use super::exec::{by_name, missing};
use super::{CustomerSel, Outcome, Scratch, Statements};
use crate::sql::{Conn, DbResult, End, Piped, TxMode, P};

pub(super) fn order_status(
    conn: &mut dyn Conn,
    st: &Statements,
    w: i64,
    d: i64,
    customer: &CustomerSel,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    conn.begin(TxMode::Read)?;
    let c_id = match customer {
        CustomerSel::Id(id) => {
            // The customer and the last order in one round trip with BEGIN (where the engine
            // pipelines): the order needs only the customer's id.
            let key = [P::I(w), P::I(d), P::I(*id)];
            conn.pipeline(
                &mut [
                    Piped::new(&st.os_cust, &key, &mut s.rows2),
                    Piped::new(&st.os_order, &key, &mut s.rows),
                ],
                End::Open,
            )?;
            if s.rows2.is_empty() {
                return Err(missing("the customer"));
            }
            *id
        }
        CustomerSel::Last(last) => {
            let Some(at) = by_name(conn, &st.os_cust_by_name, w, d, last, &mut s.rows)? else {
                return Err(missing("a customer last name"));
            };
            let c_id = s.rows.get(at, 0).i64();
            conn.run(&st.os_order, &[P::I(w), P::I(d), P::I(c_id)], &mut s.rows)?;
            c_id
        }
    };
    std::hint::black_box(c_id);
    // The order's lines and COMMIT in one round trip (where the engine pipelines).
    match (!s.rows.is_empty()).then(|| s.rows.get(0, 0).i64()) {
        Some(o_id) => conn.pipeline(
            &mut [Piped::new(
                &st.os_lines,
                &[P::I(w), P::I(d), P::I(o_id)],
                &mut s.rows,
            )],
            End::Commit,
        )?,
        None => conn.commit()?,
    }
    Ok(Outcome::Committed)
}
