//! Order-Status (spec 2.6): a customer's last order and its lines, read.

use super::exec::{by_name, missing};
use super::{CustomerSel, Outcome, Scratch, Statements};
use crate::sql::{Conn, DbResult, TxMode, P};

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
            conn.run(&st.os_cust, &[P::I(w), P::I(d), P::I(*id)], &mut s.rows)?;
            if s.rows.is_empty() {
                return Err(missing("the customer"));
            }
            *id
        }
        CustomerSel::Last(last) => {
            let Some(at) = by_name(conn, &st.os_cust_by_name, w, d, last, &mut s.rows)? else {
                return Err(missing("a customer last name"));
            };
            s.rows.get(at, 0).i64()
        }
    };
    conn.run(&st.os_order, &[P::I(w), P::I(d), P::I(c_id)], &mut s.rows)?;
    if let Some(o_id) = (!s.rows.is_empty()).then(|| s.rows.get(0, 0).i64()) {
        conn.run(&st.os_lines, &[P::I(w), P::I(d), P::I(o_id)], &mut s.rows)?;
    }
    conn.commit()?;
    Ok(Outcome::Committed)
}
