//! The invariants a brokerage database keeps through any run, each one SQL query that returns the
//! first offending rows (none: it holds). Money compares within a cent plus a billionth of the
//! total, because SQLite keeps DECIMAL columns as binary floating point and sums them so.

use super::Meta;
use crate::check::{examples, CheckStatus, Condition, EXAMPLES};
use crate::sql::{Conn, DbResult};

fn checks(meta: &Meta) -> Vec<(u8, &'static str, &'static [&'static str], String)> {
    let broker_sums = "SELECT ca_b_id, COUNT(*) AS n, SUM(t_comm) AS c FROM trade \
                       JOIN customer_account ON ca_id = t_ca_id WHERE t_st_id = 'CMPT' GROUP BY ca_b_id";
    let lot_sums =
        "SELECT h_ca_id, h_s_symb, SUM(h_qty) AS q FROM holding GROUP BY h_ca_id, h_s_symb";
    let last_loaded = meta.scale.last_loaded_trade();
    let at_load = meta.balance_cents_at_load as f64 / 100.0;
    vec![
        (1, "each broker's trade count and commission total are the sums over its accounts' completed trades",
            &["b_id", "b_num_trades", "b_comm_total", "completed", "commission"][..],
            format!("SELECT b_id, b_num_trades, b_comm_total, COALESCE(x.n, 0), COALESCE(x.c, 0) FROM broker \
             LEFT JOIN ({broker_sums}) x ON x.ca_b_id = b_id \
             WHERE b_num_trades <> COALESCE(x.n, 0) OR ABS(b_comm_total - COALESCE(x.c, 0)) > 0.01 + ABS(b_comm_total) * 1e-9 \
             ORDER BY b_id")),
        (2, "each holding summary is the sum of its holdings, and holdings have a summary",
            &["ca_id", "symbol", "hs_qty", "sum_h_qty"][..],
            format!("SELECT hs_ca_id, hs_s_symb, hs_qty, COALESCE(h.q, 0) FROM holding_summary \
             LEFT JOIN ({lot_sums}) h ON h.h_ca_id = hs_ca_id AND h.h_s_symb = hs_s_symb WHERE COALESCE(h.q, 0) <> hs_qty \
             UNION ALL SELECT h.h_ca_id, h.h_s_symb, NULL, h.q FROM ({lot_sums}) h LEFT JOIN holding_summary \
             ON hs_ca_id = h.h_ca_id AND hs_s_symb = h.h_s_symb WHERE hs_ca_id IS NULL AND h.q <> 0")),
        (3, "one settlement per completed trade, none for others", &["t_id", "t_st_id", "se_t_id"][..],
            "SELECT t_id, t_st_id, se_t_id FROM trade LEFT JOIN settlement ON se_t_id = t_id \
             WHERE t_st_id = 'CMPT' AND se_t_id IS NULL \
             UNION ALL SELECT t_id, t_st_id, se_t_id FROM settlement LEFT JOIN trade ON t_id = se_t_id \
             WHERE t_id IS NULL OR t_st_id <> 'CMPT'".into()),
        (4, "a cash transaction exactly for completed cash trades", &["t_id", "t_is_cash", "ct_t_id"][..],
            "SELECT t_id, t_is_cash, ct_t_id FROM trade LEFT JOIN cash_transaction ON ct_t_id = t_id \
             WHERE t_st_id = 'CMPT' AND t_is_cash = 1 AND ct_t_id IS NULL \
             UNION ALL SELECT t_id, t_is_cash, ct_t_id FROM cash_transaction LEFT JOIN trade ON t_id = ct_t_id \
             WHERE t_id IS NULL OR t_st_id <> 'CMPT' OR t_is_cash <> 1".into()),
        (5, "trade requests exactly for pending trades", &["tr_t_id", "t_id", "t_st_id"][..],
            "SELECT tr_t_id, t_id, t_st_id FROM trade_request LEFT JOIN trade ON t_id = tr_t_id \
             WHERE t_id IS NULL OR t_st_id <> 'PNDG' \
             UNION ALL SELECT tr_t_id, t_id, t_st_id FROM trade LEFT JOIN trade_request ON tr_t_id = t_id \
             WHERE t_st_id = 'PNDG' AND tr_t_id IS NULL".into()),
        (6, "the change in account balances equals the cash settlements since the load",
            &["balance_total", "at_load", "cash_settled_since"][..],
            format!("SELECT b.s, {at_load:.2}, COALESCE(x.s, 0) FROM (SELECT SUM(ca_bal) AS s FROM customer_account) b \
             CROSS JOIN (SELECT SUM(se_amt) AS s FROM settlement JOIN trade ON t_id = se_t_id \
             WHERE se_t_id > {last_loaded} AND t_is_cash = 1) x \
             WHERE ABS(b.s - {at_load:.2} - COALESCE(x.s, 0)) > 0.01 + ABS(b.s) * 1e-9")),
    ]
}

/// Checks every invariant, telling `progress` about each as it is known.
pub fn run_checks(
    conn: &mut dyn Conn,
    meta: &Meta,
    mut progress: impl FnMut(&Condition),
) -> DbResult<Vec<Condition>> {
    let mut out = Vec::new();
    for (number, rule, names, sql) in checks(meta) {
        let rows = conn.query(&format!("SELECT * FROM ({sql}) v LIMIT {EXAMPLES}"))?;
        let cond = Condition {
            number,
            rule,
            status: CheckStatus::of_rows(&rows),
            examples: examples(&rows, names),
            note: None,
        };
        progress(&cond);
        out.push(cond);
    }
    Ok(out)
}
