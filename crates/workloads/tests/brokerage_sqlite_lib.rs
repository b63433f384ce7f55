//! The brokerage library end to end on embedded SQLite: load, drive, and the growing tables grow by
//! exactly what the committed transactions imply; the invariants hold before and after.

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

#[test]
fn tables_grow_by_what_the_committed_transactions_imply() {
    let dir = std::env::temp_dir().join(format!("oltplab-wl-brokerage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let connector = SqliteConnector {
        path: dir.join("b.sqlite"),
        opts: SqliteOptions::default(),
        load_cache_bytes: 64 << 20,
        writer_lock: true,
    };
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
        seed: 9,
        max_retries: 10,
        record_spans: false,
    };
    let out = drive(&connector, &meta, &cfg, &stop, &mut |_| {}, &mut |_| {}).unwrap();
    assert!(out.first_error.is_none(), "{:?}", out.first_error);
    let after: Vec<i64> = tables.iter().map(|t| rows(conn.as_mut(), t)).collect();
    let grew = |t: &str| {
        let i = tables.iter().position(|x| *x == t).unwrap();
        after[i] - before[i]
    };
    let committed = |t: TxType| out.committed_all[t.index()] as i64;
    let (orders, results) = (
        committed(TxType::TradeOrder),
        committed(TxType::TradeResult),
    );
    assert!(orders > 100 && results > 50, "{out:?}");
    // A committed Trade-Order inserts one trade; its rollbacks insert nothing.
    assert_eq!(grew("trade"), orders);
    assert!(
        out.rolled_back_all > 0 || orders < 300,
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
    drop(conn);
    let _ = std::fs::remove_dir_all(&dir);
}
