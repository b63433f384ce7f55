//! The SQL text of every statement of the five transactions, per dialect.

use crate::sql::{Dialect, Stmt, StmtBuilder};
use crate::tpcc::gen::DISTRICTS;

/// Every statement of the five transactions in one dialect. The servers get New-Order in 7
/// (PostgreSQL) or 9 (MariaDB) round trips whatever its line count: one statement changes every
/// line's stock row (`…_all_…`); SQLite, in-process, runs a statement per line.
pub struct Statements {
    pub dialect: Dialect,
    pub(super) no_dist_ret: Stmt,
    pub(super) no_dist_upd: Stmt,
    pub(super) no_cust: Stmt,
    /// PostgreSQL: the district's next order id taken and the customer read, in one statement.
    pub(super) no_dist_cust_ret: Stmt,
    /// MariaDB: once `no_dist_upd` holds the district's lock, the district and customer in one read.
    pub(super) no_dist_cust_sel: Stmt,
    pub(super) no_items: Vec<Stmt>,
    pub(super) no_order: Stmt,
    pub(super) no_new_order: Stmt,
    /// PostgreSQL: the order and its new-order row in one statement.
    pub(super) no_order_pair: Stmt,
    pub(super) no_stock_ret: Vec<Stmt>,
    pub(super) no_stock_sel: Vec<Stmt>,
    pub(super) no_stock_upd: Stmt,
    /// PostgreSQL, per district: every line's stock row changed and returned (arrays, unnest).
    pub(super) no_stock_all_ret: Vec<Stmt>,
    /// MariaDB, per line count: every line's stock row locked and read in key order.
    pub(super) no_stock_all_sel: Vec<Stmt>,
    /// MariaDB, per line count: every line's stock row changed.
    pub(super) no_stock_all_upd: Vec<Stmt>,
    pub(super) no_lines: Vec<Stmt>,
    pub(super) pay_w_ret: Stmt,
    pub(super) pay_w_upd: Stmt,
    pub(super) pay_d_ret: Stmt,
    pub(super) pay_d_upd: Stmt,
    /// MariaDB: once both rows are locked by their updates, warehouse and district in one read.
    pub(super) pay_wd_sel: Stmt,
    pub(super) cust_by_name: Stmt,
    pub(super) pay_c_ret: Stmt,
    pub(super) pay_c_sel: Stmt,
    pub(super) pay_c_upd: Stmt,
    pub(super) pay_hist: Stmt,
    pub(super) os_cust_by_name: Stmt,
    pub(super) os_cust: Stmt,
    pub(super) os_order: Stmt,
    pub(super) os_lines: Stmt,
    pub(super) dl_no_ret: Stmt,
    pub(super) dl_no_any: Stmt,
    pub(super) dl_o_ret: Stmt,
    pub(super) dl_ol_ret: Stmt,
    pub(super) dl_c_upd: Stmt,
    /// MariaDB, Delivery for all districts at once: the oldest new order of each (a plain read);
    /// then, per number of districts, its deletion (which locks), the orders read and updated, the
    /// order lines updated and summed, and the customers updated.
    pub(super) dl_all_oldest: Stmt,
    pub(super) dl_all_no_del: Vec<Stmt>,
    pub(super) dl_all_o_sel: Vec<Stmt>,
    pub(super) dl_all_o_upd: Vec<Stmt>,
    pub(super) dl_all_ol_upd: Vec<Stmt>,
    pub(super) dl_all_ol_sum: Vec<Stmt>,
    pub(super) dl_all_c_upd: Vec<Stmt>,
    pub(super) sl_dist: Stmt,
    pub(super) sl_count: Stmt,
}

fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// One statement per number of districts (0..=10): `head`, then `(D = ? AND O = ?) OR …` for that
/// many (district, order) keys in parentheses, then `tail`.
fn per_district(b: &mut StmtBuilder, head: &str, d: &str, o: &str, tail: &str) -> Vec<Stmt> {
    (0..=DISTRICTS as usize)
        .map(|n| {
            let keys = vec![format!("({d} = ? AND {o} = ?)"); n.max(1)].join(" OR ");
            b.make(&format!("{head} ({keys}){tail}"))
        })
        .collect()
}

impl Statements {
    pub fn new(dialect: Dialect) -> Self {
        let mut b = StmtBuilder::new(dialect);
        let fu = dialect.for_update();
        let concat = |a: &str, b: &str| match dialect {
            Dialect::Mysql => format!("CONCAT({a}, {b})"),
            _ => format!("{a} || {b}"),
        };
        let c_upd_set = format!(
            "c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, \
             c_data = CASE WHEN c_credit = 'BC' THEN SUBSTR({}, 1, 500) ELSE c_data END",
            concat("?", "c_data")
        );
        let c_cols =
            "c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, \
                      c_since, c_credit, c_credit_lim, c_discount, c_balance";
        let stock_set = "s_quantity = CASE WHEN s_quantity >= ? + 10 THEN s_quantity - ? ELSE s_quantity - ? + 91 END, \
                         s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ?";
        // The same change with each line's quantity and remote flag from a row source `v`.
        let stock_set_v = "s_quantity = CASE WHEN s_quantity >= v.q + 10 THEN s_quantity - v.q ELSE s_quantity - v.q + 91 END, \
                           s_ytd = s_ytd + v.q, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + v.r";
        let dist_cust = "d_tax, d_next_o_id, c_discount, c_last, c_credit, w_tax";
        let order_insert = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) \
                            VALUES (?, ?, ?, ?, ?, NULL, ?, ?)";
        let new_order_insert = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)";
        let dist_case = (1..=10)
            .map(|d| format!("WHEN {d} THEN s_dist_{d:02}"))
            .collect::<Vec<_>>()
            .join(" ");
        Self {
            dialect,
            no_dist_ret: b.make(
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ? \
                 RETURNING d_tax, d_next_o_id",
            ),
            no_dist_upd: b.make(
                "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
            ),
            no_cust: b.make(
                "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse \
                 WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?",
            ),
            no_dist_cust_ret: b.make(&format!(
                "WITH d AS (UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ? \
                 RETURNING d_tax, d_next_o_id) \
                 SELECT {dist_cust} FROM d, customer, warehouse \
                 WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"
            )),
            no_dist_cust_sel: b.make(&format!(
                "SELECT {dist_cust} FROM district, customer, warehouse \
                 WHERE d_w_id = ? AND d_id = ? AND w_id = d_w_id AND c_w_id = d_w_id AND c_d_id = d_id AND c_id = ?"
            )),
            no_items: (0..=15)
                .map(|n| {
                    b.make(&format!(
                        "SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN ({})",
                        marks(n.max(1))
                    ))
                })
                .collect(),
            no_order: b.make(order_insert),
            no_new_order: b.make(new_order_insert),
            no_order_pair: b.make(&format!("WITH o AS ({order_insert}) {new_order_insert}")),
            no_stock_ret: (1..=10)
                .map(|d| {
                    b.make(&format!(
                        "UPDATE stock SET {stock_set} WHERE s_w_id = ? AND s_i_id = ? \
                         RETURNING s_quantity, s_data, s_dist_{d:02}"
                    ))
                })
                .collect(),
            no_stock_sel: (1..=10)
                .map(|d| {
                    b.make(&format!(
                        "SELECT s_quantity, s_data, s_dist_{d:02} FROM stock WHERE s_w_id = ? AND s_i_id = ?{fu}"
                    ))
                })
                .collect(),
            no_stock_upd: b.make(&format!(
                "UPDATE stock SET {stock_set} WHERE s_w_id = ? AND s_i_id = ?"
            )),
            // The array follows the lines in key order; the nested loop over it locks the rows
            // in that order, so concurrent New-Orders rarely deadlock.
            no_stock_all_ret: (1..=10)
                .map(|d| {
                    b.make(&format!(
                        "UPDATE stock SET {stock_set_v} \
                         FROM unnest(?::int4[], ?::int4[], ?::int4[], ?::int4[]) AS v(w, i, q, r) \
                         WHERE s_w_id = v.w AND s_i_id = v.i \
                         RETURNING s_w_id, s_i_id, s_quantity, s_data, s_dist_{d:02}"
                    ))
                })
                .collect(),
            no_stock_all_sel: (0..=15)
                .map(|n| {
                    b.make(&format!(
                        "SELECT s_w_id, s_i_id, s_quantity, s_data, CASE ? {dist_case} END FROM stock \
                         WHERE {} ORDER BY s_w_id, s_i_id{fu}",
                        vec!["(s_w_id = ? AND s_i_id = ?)"; n.max(1)].join(" OR ")
                    ))
                })
                .collect(),
            no_stock_all_upd: (0..=15)
                .map(|n| {
                    let mut rows = vec!["SELECT ? AS w, ? AS i, ? AS q, ? AS r"];
                    rows.resize(n.max(1), "SELECT ?, ?, ?, ?");
                    b.make(&format!(
                        "UPDATE stock JOIN ({}) AS v ON s_w_id = v.w AND s_i_id = v.i SET {stock_set_v}",
                        rows.join(" UNION ALL ")
                    ))
                })
                .collect(),
            no_lines: (0..=15)
                .map(|n| {
                    let row = "(?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)";
                    b.make(&format!(
                        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
                         ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES {}",
                        vec![row; n.max(1)].join(", ")
                    ))
                })
                .collect(),
            pay_w_ret: b.make(
                "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ? \
                 RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip",
            ),
            pay_w_upd: b.make("UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"),
            pay_d_ret: b.make(
                "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ? \
                 RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip",
            ),
            pay_d_upd: b.make("UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"),
            pay_wd_sel: b.make(
                "SELECT w_name, d_name, w_street_1, w_street_2, w_city, w_state, w_zip, \
                 d_street_1, d_street_2, d_city, d_state, d_zip FROM warehouse, district \
                 WHERE w_id = ? AND d_w_id = w_id AND d_id = ?",
            ),
            cust_by_name: b.make(
                "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
            ),
            pay_c_ret: b.make(&format!(
                "UPDATE customer SET {c_upd_set} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? RETURNING {c_cols}"
            )),
            pay_c_sel: b.make(&format!(
                "SELECT {c_cols} FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?{fu}"
            )),
            pay_c_upd: b.make(&format!(
                "UPDATE customer SET {c_upd_set} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
            )),
            pay_hist: b.make(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            ),
            os_cust_by_name: b.make(
                "SELECT c_id, c_balance, c_first, c_middle, c_last FROM customer \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
            ),
            os_cust: b.make(
                "SELECT c_balance, c_first, c_middle, c_last FROM customer \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            ),
            os_order: b.make(
                "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? \
                 ORDER BY o_id DESC LIMIT 1",
            ),
            os_lines: b.make(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line \
                 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            ),
            dl_no_ret: b.make(
                "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = \
                 (SELECT MIN(no_o_id) FROM new_order WHERE no_w_id = ? AND no_d_id = ?) RETURNING no_o_id",
            ),
            dl_no_any: b.make(
                "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? LIMIT 1",
            ),
            dl_o_ret: b.make(
                "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? RETURNING o_c_id",
            ),
            dl_ol_ret: b.make(
                "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ? \
                 RETURNING ol_amount",
            ),
            dl_c_upd: b.make(
                "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            ),
            dl_all_oldest: b.make(
                "SELECT no_d_id, MIN(no_o_id) FROM new_order WHERE no_w_id = ? GROUP BY no_d_id",
            ),
            dl_all_no_del: per_district(
                &mut b,
                "DELETE FROM new_order WHERE no_w_id = ? AND",
                "no_d_id",
                "no_o_id",
                "",
            ),
            dl_all_o_sel: per_district(
                &mut b,
                "SELECT o_d_id, o_c_id FROM orders WHERE o_w_id = ? AND",
                "o_d_id",
                "o_id",
                "",
            ),
            dl_all_o_upd: per_district(
                &mut b,
                "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND",
                "o_d_id",
                "o_id",
                "",
            ),
            dl_all_ol_upd: per_district(
                &mut b,
                "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND",
                "ol_d_id",
                "ol_o_id",
                "",
            ),
            dl_all_ol_sum: per_district(
                &mut b,
                "SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND",
                "ol_d_id",
                "ol_o_id",
                " GROUP BY ol_d_id",
            ),
            dl_all_c_upd: (0..=DISTRICTS as usize)
                .map(|n| {
                    let mut rows = vec!["SELECT ? AS d, ? AS c, ? AS amount"];
                    rows.resize(n.max(1), "SELECT ?, ?, ?");
                    b.make(&format!(
                        "UPDATE customer JOIN ({}) AS v ON c_w_id = ? AND c_d_id = v.d AND c_id = v.c \
                         SET c_balance = c_balance + v.amount, c_delivery_cnt = c_delivery_cnt + 1",
                        rows.join(" UNION ALL ")
                    ))
                })
                .collect(),
            sl_dist: b.make("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"),
            sl_count: b.make(
                "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock \
                 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? \
                 AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_in_every_dialect() {
        for d in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
            let st = Statements::new(d);
            assert_eq!(st.no_lines.len(), 16);
            if d == Dialect::Postgres {
                assert!(st.no_cust.sql.contains("$3") && !st.no_cust.sql.contains('?'));
            }
            if d == Dialect::Mysql {
                assert!(st.pay_c_upd.sql.contains("CONCAT("));
                assert!(st.no_stock_all_sel[10].sql.ends_with("FOR UPDATE"));
                assert_eq!(st.dl_all_no_del[10].sql.matches("no_d_id = ?").count(), 10);
            }
        }
    }
}
