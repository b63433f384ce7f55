//! Stock-Level (spec 2.8): recently sold items below a stock threshold, counted.

use super::exec::missing;
use super::{Outcome, Scratch, Statements};
use crate::sql::{Conn, DbResult, End, Piped, TxMode, P};

pub(super) fn stock_level(
    conn: &mut dyn Conn,
    st: &Statements,
    w: i64,
    d: i64,
    threshold: i64,
    s: &mut Scratch,
) -> DbResult<Outcome> {
    conn.begin(TxMode::Read)?;
    conn.run(&st.sl_dist, &[P::I(w), P::I(d)], &mut s.rows)?;
    if s.rows.is_empty() {
        return Err(missing("the district"));
    }
    let next = s.rows.get(0, 0).i64();
    // The count and COMMIT in one round trip (where the engine pipelines).
    conn.pipeline(
        &mut [Piped::new(
            &st.sl_count,
            &[
                P::I(w),
                P::I(d),
                P::I(next),
                P::I(next - 20),
                P::I(w),
                P::I(threshold),
            ],
            &mut s.rows,
        )],
        End::Commit,
    )?;
    Ok(Outcome::Committed)
}
