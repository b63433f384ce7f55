//! The TPC-C library on real servers that the test starts (fresh, in a temporary directory) and
//! stops: load one warehouse, drive it, and check the twelve conditions before and after.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use oltplab_dbs::server::{ManagedServer, ServerConfig, ServerKind};
use oltplab_workloads::check::CheckStatus;
use oltplab_workloads::sql::{Isolation, TxMode};
use oltplab_workloads::tpcc::check::run_checks;
use oltplab_workloads::tpcc::driver::{drive, DriverConfig};
use oltplab_workloads::tpcc::load::{load, LoadOptions};
use oltplab_workloads::tpcc::tx::TxType;
use oltplab_workloads::tpcc::{inspect, require_loaded, Purpose};

use crate::servers;

fn scenario(kind: ServerKind) {
    if !servers::installed(kind) {
        return;
    }
    let dir =
        std::env::temp_dir().join(format!("oltplab-wl-{}-{}", kind.name(), std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::new(kind, &dir);
    cfg.buffer_pool_bytes = 256 << 20;
    let server =
        ManagedServer::start(&cfg).unwrap_or_else(|e| panic!("starting {}: {e}", kind.product()));
    let connector = servers::connector(kind, server.url(), servers::default_isolation(kind));
    let stop = AtomicBool::new(false);
    let opts = LoadOptions {
        warehouses: 1,
        threads: 2,
        seed: 5,
        force: false,
        location: "test".into(),
    };
    let report = load(connector.as_ref(), &opts, &|_, _| {}, &stop).unwrap();
    eprintln!("{} load: {report:?}", kind.product());
    let mut conn = connector.connect(Purpose::Check).unwrap();
    // The planner knows the loaded sizes at once: InnoDB left alone recalculates them in the
    // background, and a server stopped before that planned New-Order's item lookups as scans.
    let item_rows_estimate = match kind {
        ServerKind::Postgres => "SELECT reltuples::bigint FROM pg_class WHERE relname = 'item'",
        ServerKind::Mariadb => {
            "SELECT CARDINALITY FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'item' AND INDEX_NAME = 'PRIMARY'"
        }
    };
    let estimate = conn.query(item_rows_estimate).unwrap().get(0, 0).i64();
    assert!(
        (50_000..=200_000).contains(&estimate),
        "{} plans with {estimate} items of 100,000",
        kind.product()
    );
    for c in run_checks(conn.as_mut(), |_| {}).unwrap() {
        assert_eq!(c.status, CheckStatus::Holds, "{c:?}");
    }
    let meta = require_loaded(&inspect(conn.as_mut()).unwrap(), "test").unwrap();
    // Refuses to load over it.
    let err = load(connector.as_ref(), &opts, &|_, _| {}, &stop).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{err}");

    let cfg = DriverConfig {
        terminals: 4,
        duration: Duration::from_secs(5),
        warmup: Duration::from_millis(500),
        warmup_auto: false,
        keying_think: false,
        seed: 9,
        max_retries: 10,
        record_spans: false,
        home_warehouses: None,
        start_at: None,
        record_new_orders: false,
        procedures: false,
    };
    let out = drive(
        connector.as_ref(),
        &meta,
        &cfg,
        &stop,
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap();
    eprintln!(
        "{} run: {:?} retries {:?}",
        kind.product(),
        out.run.tx.iter().map(|t| t.count).collect::<Vec<_>>(),
        out.run.retries_by_kind
    );
    for t in TxType::ALL {
        let s = &out.run.tx[t.index()];
        assert!(s.count > 0, "{t:?} never completed");
        assert_eq!(s.errors, 0, "{t:?}: {:?}", out.run.first_error);
    }
    for c in run_checks(conn.as_mut(), |_| {}).unwrap() {
        assert!(c.holds(), "{c:?}");
    }
    drop(conn);
    assert_isolation_seen_by_the_server(kind, &server.url());
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each `--isolation` level is the one the server reports inside the driver's transactions; a
/// read-only transaction (Order-Status, Stock-Level) sees one snapshot at every level.
fn assert_isolation_seen_by_the_server(kind: ServerKind, url: &str) {
    for level in Isolation::ALL {
        let connector = servers::connector(kind, url.to_string(), level);
        let mut conn = connector.connect(Purpose::Run).unwrap();
        let mut seen = |mode: TxMode| -> String {
            conn.begin(mode).unwrap();
            let text = match kind {
                ServerKind::Postgres => {
                    let level = conn.query("SHOW transaction_isolation").unwrap();
                    let ro = conn.query("SHOW transaction_read_only").unwrap();
                    format!("{} {}", level.get(0, 0).str(), ro.get(0, 0).str())
                }
                ServerKind::Mariadb => {
                    // InnoDB reports a transaction once it touched a table, in a table it
                    // refreshes at most every 0.1 s.
                    conn.query("SELECT count(*) FROM warehouse").unwrap();
                    conn.query("SELECT SLEEP(0.2)").unwrap();
                    let rows = conn
                        .query("SELECT trx_isolation_level FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()")
                        .unwrap();
                    rows.get(0, 0).str().to_lowercase()
                }
            };
            conn.rollback().unwrap();
            text
        };
        let (write, read) = (seen(TxMode::Write), seen(TxMode::Read));
        let sql = level.sql().to_lowercase();
        let snapshot = match level {
            Isolation::ReadCommitted => "repeatable read",
            _ => sql.as_str(),
        };
        match kind {
            ServerKind::Postgres => {
                assert_eq!(write, format!("{sql} off"), "{level:?}");
                assert_eq!(read, format!("{snapshot} on"), "{level:?}");
            }
            ServerKind::Mariadb => {
                assert_eq!(write, sql, "{level:?}");
                assert_eq!(read, snapshot, "{level:?}");
            }
        }
    }
}

#[test]
fn postgres_load_drive_check() {
    scenario(ServerKind::Postgres);
}

#[test]
fn mariadb_load_drive_check() {
    scenario(ServerKind::Mariadb);
}
