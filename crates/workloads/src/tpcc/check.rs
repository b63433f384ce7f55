//! The consistency conditions of spec 3.3.2.1–12, each one SQL query that returns the first
//! offending keys (none: the condition holds). Money compares within half a cent, because SQLite
//! keeps DECIMAL columns as binary floating point.

use crate::check::{examples, CheckStatus};
pub use crate::check::{Condition, EXAMPLES};
use crate::sql::{Conn, DbResult};

const TOL: &str = "0.004";

fn checks() -> Vec<(u8, &'static str, &'static [&'static str], String)> {
    let del_ol = "SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) AS ol FROM orders JOIN order_line \
                  ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id WHERE ol_delivery_d IS NOT NULL \
                  GROUP BY o_w_id, o_d_id, o_c_id";
    let hist_c = "SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) AS h FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id";
    vec![
        (1, "W_YTD = sum(D_YTD)", &["w_id", "w_ytd", "sum_d_ytd"][..], format!(
            "SELECT w_id, w_ytd, s FROM warehouse JOIN (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) x \
             ON x.d_w_id = w_id WHERE ABS(w_ytd - s) > {TOL} ORDER BY w_id"
        )),
        (2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", &["w_id", "d_id", "d_next_o_id", "max_o_id", "max_no_o_id"][..],
            "SELECT d_w_id, d_id, d_next_o_id, mo, mno FROM district \
             JOIN (SELECT o_w_id, o_d_id, MAX(o_id) AS mo FROM orders GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d_w_id AND o.o_d_id = d_id \
             LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) AS mno FROM new_order GROUP BY no_w_id, no_d_id) n \
             ON n.no_w_id = d_w_id AND n.no_d_id = d_id \
             WHERE d_next_o_id - 1 <> mo OR (mno IS NOT NULL AND mno <> mo) ORDER BY d_w_id, d_id".into()),
        (3, "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER) per district", &["w_id", "d_id", "span", "count"][..],
            "SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order GROUP BY no_w_id, no_d_id \
             HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*) ORDER BY no_w_id, no_d_id".into()),
        (4, "sum(O_OL_CNT) = count(ORDER-LINE) per district", &["w_id", "d_id", "sum_o_ol_cnt", "order_lines"][..],
            "SELECT o.o_w_id, o.o_d_id, o.s, l.n FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o \
             JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id) l \
             ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id WHERE o.s <> l.n ORDER BY o.o_w_id, o.o_d_id".into()),
        (5, "O_CARRIER_ID is null exactly for orders with a NEW-ORDER row", &["w_id", "d_id", "o_id", "o_carrier_id"][..],
            "SELECT o_w_id, o_d_id, o_id, o_carrier_id FROM orders LEFT JOIN new_order \
             ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id \
             WHERE (o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL)".into()),
        (6, "O_OL_CNT = count(ORDER-LINE) per order", &["w_id", "d_id", "o_id", "o_ol_cnt", "order_lines"][..],
            "SELECT o_w_id, o_d_id, o_id, o_ol_cnt, COALESCE(n, 0) FROM orders \
             LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) AS n FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id) l \
             ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id WHERE o_ol_cnt <> COALESCE(n, 0)".into()),
        (7, "OL_DELIVERY_D is null exactly when O_CARRIER_ID is null", &["w_id", "d_id", "o_id", "ol_number"][..],
            "SELECT ol_w_id, ol_d_id, ol_o_id, ol_number FROM order_line JOIN orders \
             ON o_w_id = ol_w_id AND o_d_id = ol_d_id AND o_id = ol_o_id \
             WHERE (ol_delivery_d IS NULL AND o_carrier_id IS NOT NULL) OR (ol_delivery_d IS NOT NULL AND o_carrier_id IS NULL)".into()),
        (8, "W_YTD = sum(H_AMOUNT)", &["w_id", "w_ytd", "sum_h_amount"][..], format!(
            "SELECT w_id, w_ytd, s FROM warehouse JOIN (SELECT h_w_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id) h \
             ON h.h_w_id = w_id WHERE ABS(w_ytd - s) > {TOL} ORDER BY w_id"
        )),
        (9, "D_YTD = sum(H_AMOUNT)", &["w_id", "d_id", "d_ytd", "sum_h_amount"][..], format!(
            "SELECT d_w_id, d_id, d_ytd, s FROM district JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) AS s FROM history \
             GROUP BY h_w_id, h_d_id) h ON h.h_w_id = d_w_id AND h.h_d_id = d_id WHERE ABS(d_ytd - s) > {TOL} \
             ORDER BY d_w_id, d_id"
        )),
        (10, "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)", &["w_id", "d_id", "c_id", "c_balance", "expected"][..], format!(
            "SELECT c_w_id, c_d_id, c_id, c_balance, COALESCE(a.ol, 0) - COALESCE(b.h, 0) FROM customer \
             LEFT JOIN ({del_ol}) a ON a.o_w_id = c_w_id AND a.o_d_id = c_d_id AND a.o_c_id = c_id \
             LEFT JOIN ({hist_c}) b ON b.h_c_w_id = c_w_id AND b.h_c_d_id = c_d_id AND b.h_c_id = c_id \
             WHERE ABS(c_balance - (COALESCE(a.ol, 0) - COALESCE(b.h, 0))) > {TOL}"
        )),
        (11, "count(ORDER) - count(NEW-ORDER) = 2100 per district before Delivery", &["w_id", "d_id", "difference"][..],
            "SELECT o.o_w_id, o.o_d_id, o.n - n.n FROM (SELECT o_w_id, o_d_id, COUNT(*) AS n FROM orders GROUP BY o_w_id, o_d_id) o \
             JOIN (SELECT no_w_id, no_d_id, COUNT(*) AS n, MIN(no_o_id) AS m FROM new_order GROUP BY no_w_id, no_d_id) n \
             ON n.no_w_id = o.o_w_id AND n.no_d_id = o.o_d_id WHERE n.m = 2101 AND o.n - n.n <> 2100 \
             ORDER BY o.o_w_id, o.o_d_id".into()),
        (12, "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)", &["w_id", "d_id", "c_id", "c_balance_plus_ytd", "delivered"][..], format!(
            "SELECT c_w_id, c_d_id, c_id, c_balance + c_ytd_payment, COALESCE(a.ol, 0) FROM customer \
             LEFT JOIN ({del_ol}) a ON a.o_w_id = c_w_id AND a.o_d_id = c_d_id AND a.o_c_id = c_id \
             WHERE ABS(c_balance + c_ytd_payment - COALESCE(a.ol, 0)) > {TOL}"
        )),
    ]
}

/// Runs all twelve conditions; `progress` hears each as it finishes.
pub fn run_checks(
    conn: &mut dyn Conn,
    mut progress: impl FnMut(&Condition),
) -> DbResult<Vec<Condition>> {
    let mut out = Vec::new();
    for (number, rule, names, sql) in checks() {
        let rows = conn.query(&format!("{sql} LIMIT {EXAMPLES}"))?;
        let mut cond = Condition {
            number,
            rule,
            status: CheckStatus::of_rows(&rows),
            examples: examples(&rows, names),
            note: None,
        };
        if number == 11 {
            let applies = conn.query(
                "SELECT COUNT(*) FROM (SELECT no_w_id FROM new_order GROUP BY no_w_id, no_d_id \
                 HAVING MIN(no_o_id) = 2101) t",
            )?;
            let n = if applies.is_empty() {
                0
            } else {
                applies.get(0, 0).i64()
            };
            if n == 0 {
                cond.status = CheckStatus::NotApplicable;
                cond.note = Some("Delivery has run in every district".into());
            } else {
                cond.note = Some(format!(
                    "applies to the {n} districts where Delivery has not run"
                ));
            }
        }
        progress(&cond);
        out.push(cond);
    }
    Ok(out)
}
