//! The brokerage library end to end on embedded SQLite: load, drive, and the growing tables grow by
//! exactly what the committed transactions imply; the invariants hold before and after.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use oltplab_dbs::sqlite::SqliteOptions;
use oltplab_workloads::brokerage::check::run_checks;
use oltplab_workloads::brokerage::driver::{drive, DriverConfig};
use oltplab_workloads::brokerage::load::{load, LoadOptions};
use oltplab_workloads::brokerage::tx::TxType;
use oltplab_workloads::brokerage::{require_loaded, Scale};
use oltplab_workloads::sql::{Conn, Connector, Purpose};
use oltplab_workloads::tpcc::connect::SqliteConnector;

fn count(conn: &mut dyn Conn, sql: &str) -> i64 {
    conn.query(sql).unwrap().get(0, 0).i64()
}

fn rows(conn: &mut dyn Conn, table: &str) -> i64 {
    count(conn, &format!("SELECT COUNT(*) FROM {table}"))
}

/// A fresh scratch directory `oltplab-wl-NAME-PID` and a connector to an SQLite file in it.
fn scratch_sqlite(name: &str) -> (PathBuf, SqliteConnector) {
    let dir = std::env::temp_dir().join(format!("oltplab-wl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let connector = SqliteConnector {
        path: dir.join("b.sqlite"),
        opts: SqliteOptions::default(),
        load_cache_bytes: 64 << 20,
        writer_lock: true,
    };
    (dir, connector)
}

#[test]
fn tables_grow_by_what_the_committed_transactions_imply() {
    let (dir, connector) = scratch_sqlite("brokerage");
    let stop = AtomicBool::new(false);
    let scale = Scale {
        customers: 1000,
        days: 2,
    };
    let opts = LoadOptions {
        scale,
        threads: 2,
        seed: 5,
        force: false,
        location: "test".into(),
    };
    let report = load(&connector, &opts, &|_, _| {}, &stop).unwrap();
    assert_eq!(report.trades, scale.last_loaded_trade());
    let mut conn = connector.connect(Purpose::Check).unwrap();
    let meta = require_loaded(conn.as_mut(), "test").unwrap();
    assert_eq!(meta.scale, scale);
    assert_eq!(rows(conn.as_mut(), "trade"), scale.last_loaded_trade());
    assert_eq!(rows(conn.as_mut(), "broker"), 10);
    assert_eq!(rows(conn.as_mut(), "security"), 685);
    assert_eq!(rows(conn.as_mut(), "daily_market"), 685 * 1305);
    let conds = run_checks(conn.as_mut(), &meta, |_| {}).unwrap();
    assert!(conds.iter().all(|c| c.holds()), "after the load: {conds:?}");

    let tables = [
        "trade",
        "trade_history",
        "settlement",
        "cash_transaction",
        "trade_request",
    ];
    let before: Vec<i64> = tables.iter().map(|t| rows(conn.as_mut(), t)).collect();
    let cfg = DriverConfig {
        terminals: 3,
        duration: Duration::from_secs(8),
        warmup: Duration::from_secs(1),
        warmup_auto: false,
        seed: 9,
        max_retries: 10,
        record_spans: false,
        record_trades: true,
        procedures: false,
    };
    let out = drive(&connector, &meta, &cfg, &stop, &mut |_| {}, &mut |_| {}).unwrap();
    assert!(out.run.first_error.is_none(), "{:?}", out.run.first_error);
    let after: Vec<i64> = tables.iter().map(|t| rows(conn.as_mut(), t)).collect();
    let grew = |t: &str| {
        let i = tables.iter().position(|x| *x == t).unwrap();
        after[i] - before[i]
    };
    let committed = |t: TxType| out.run.committed_all[t.index()] as i64;
    let (orders, results) = (
        committed(TxType::TradeOrder),
        committed(TxType::TradeResult),
    );
    assert!(orders > 100 && results > 50, "{out:?}");
    // The acknowledged commits kept for a power cut: one trade id per committed Trade-Order and
    // Trade-Result, each with its row.
    assert_eq!(out.trades_ordered.len() as i64, orders);
    assert_eq!(out.trades_completed.len() as i64, results);
    let mut newest = |sql: &str, ids: &[i64]| {
        let list: Vec<String> = ids.iter().map(i64::to_string).collect();
        count(conn.as_mut(), &format!("{sql} IN ({})", list.join(",")))
    };
    assert_eq!(
        newest("SELECT COUNT(*) FROM trade WHERE t_id", &out.trades_ordered),
        orders
    );
    assert_eq!(
        newest(
            "SELECT COUNT(*) FROM settlement WHERE se_t_id",
            &out.trades_completed
        ),
        results
    );
    // A committed Trade-Order inserts one trade; its rollbacks insert nothing.
    assert_eq!(grew("trade"), orders);
    assert!(
        out.run.rolled_back_all > 0 || orders < 300,
        "1 % of orders roll back"
    );
    // Each Trade-Result settles one trade.
    assert_eq!(grew("settlement"), results);
    // History: one row per order, per triggered limit order and per result.
    assert_eq!(
        grew("trade_history"),
        orders + out.triggered_all as i64 + results
    );
    // Cash transactions: one per completed cash trade of the run.
    let cash = count(
        conn.as_mut(),
        &format!(
            "SELECT COUNT(*) FROM settlement JOIN trade ON t_id = se_t_id WHERE se_t_id > {} AND t_is_cash = 1",
            scale.last_loaded_trade()
        ),
    );
    assert_eq!(grew("cash_transaction"), cash);
    // Pending limit orders: placed by orders, removed when triggered.
    let limit_orders = count(
        conn.as_mut(),
        &format!(
            "SELECT COUNT(*) FROM trade WHERE t_id > {} AND t_tt_id IN ('TLB', 'TLS', 'TSL')",
            scale.last_loaded_trade()
        ),
    );
    assert_eq!(
        grew("trade_request"),
        limit_orders - out.triggered_all as i64
    );
    let conds = run_checks(conn.as_mut(), &meta, |_| {}).unwrap();
    assert!(conds.iter().all(|c| c.holds()), "after the run: {conds:?}");

    // Each invariant, broken on purpose by one row, is found violated — that one alone — with
    // the row among its examples; each break is rolled back before the next.
    let pending = rows(conn.as_mut(), "trade_request");
    let break_pending = if pending > 0 {
        "DELETE FROM trade_request WHERE tr_t_id = (SELECT MIN(tr_t_id) FROM trade_request)"
    } else {
        "UPDATE trade SET t_st_id = 'PNDG' WHERE t_id = \
         (SELECT MIN(t_id) FROM trade WHERE t_st_id NOT IN ('CMPT', 'PNDG'))"
    };
    let breaks: [(u8, &str); 6] = [
        (1, "UPDATE broker SET b_num_trades = b_num_trades + 1 WHERE b_id = (SELECT MIN(b_id) FROM broker)"),
        (2, "UPDATE holding_summary SET hs_qty = hs_qty + 1 WHERE (hs_ca_id, hs_s_symb) = \
             (SELECT hs_ca_id, hs_s_symb FROM holding_summary ORDER BY 1, 2 LIMIT 1)"),
        // A loaded trade's: the cash since the load (invariant 6) does not count it.
        (3, "DELETE FROM settlement WHERE se_t_id = (SELECT MIN(se_t_id) FROM settlement)"),
        (4, "DELETE FROM cash_transaction WHERE ct_t_id = (SELECT MIN(ct_t_id) FROM cash_transaction)"),
        (5, break_pending),
        (6, "UPDATE customer_account SET ca_bal = ca_bal + 100 WHERE ca_id = (SELECT MIN(ca_id) FROM customer_account)"),
    ];
    for (number, sql) in breaks {
        conn.batch("BEGIN").unwrap();
        conn.batch(sql).unwrap();
        let conds = run_checks(conn.as_mut(), &meta, |_| {}).unwrap();
        conn.batch("ROLLBACK").unwrap();
        for c in &conds {
            assert_eq!(
                c.holds(),
                c.number != number,
                "invariant {number} broken by `{sql}`: {conds:?}"
            );
        }
        let broken = &conds[number as usize - 1];
        assert!(!broken.examples.is_empty(), "{broken:?}");
    }
    let conds = run_checks(conn.as_mut(), &meta, |_| {}).unwrap();
    assert!(conds.iter().all(|c| c.holds()), "rolled back: {conds:?}");
    drop(conn);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A database that already holds tables is refused without `force` (bad input: one sentence that
/// names the place and the fix), and reloaded with it.
#[test]
fn a_second_load_needs_force_and_then_replaces_the_tables() {
    let (dir, connector) = scratch_sqlite("brokerage-force");
    let stop = AtomicBool::new(false);
    let scale = Scale {
        customers: 1000,
        days: 1,
    };
    let mut opts = LoadOptions {
        scale,
        threads: 2,
        seed: 5,
        force: false,
        location: "the test's file".into(),
    };
    load(&connector, &opts, &|_, _| {}, &stop).unwrap();
    let err = load(&connector, &opts, &|_, _| {}, &stop).err().unwrap();
    assert!(matches!(err, oltplab_core::Error::Usage(_)), "{err}");
    let text = err.to_string();
    assert!(
        text.starts_with("the test's file already holds tables")
            && text.contains("--force to drop and reload the brokerage tables"),
        "{text}"
    );
    opts.force = true;
    let report = load(&connector, &opts, &|_, _| {}, &stop).unwrap();
    assert_eq!(report.trades, scale.last_loaded_trade());
    let mut conn = connector.connect(Purpose::Check).unwrap();
    let meta = require_loaded(conn.as_mut(), "test").unwrap();
    assert_eq!(rows(conn.as_mut(), "trade"), scale.last_loaded_trade());
    let conds = run_checks(conn.as_mut(), &meta, |_| {}).unwrap();
    assert!(
        conds.iter().all(|c| c.holds()),
        "after the reload: {conds:?}"
    );
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}
