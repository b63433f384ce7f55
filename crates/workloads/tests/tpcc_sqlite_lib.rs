//! The TPC-C library end to end on embedded SQLite, without the command line: load one warehouse,
//! drive it, and check all twelve conditions before and after.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use oltplab_dbs::sqlite::SqliteOptions;
use oltplab_workloads::tpcc::check::run_checks;
use oltplab_workloads::tpcc::connect::SqliteConnector;
use oltplab_workloads::tpcc::driver::{drive, DriverConfig};
use oltplab_workloads::tpcc::load::{load, LoadOptions};
use oltplab_workloads::tpcc::tx::TxType;
use oltplab_workloads::tpcc::{inspect, require_loaded, Connector, Purpose};

#[test]
fn load_drive_check() {
    let dir = std::env::temp_dir().join(format!("oltplab-wl-tpcc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let connector = SqliteConnector {
        path: dir.join("t.sqlite"),
        opts: SqliteOptions::default(),
        load_cache_bytes: 64 << 20,
        writer_lock: true,
    };
    let stop = AtomicBool::new(false);
    let opts = LoadOptions {
        warehouses: 1,
        threads: 2,
        seed: 3,
        force: false,
        location: "test".into(),
    };
    let report = load(&connector, &opts, &|_, _| {}, &stop).unwrap();
    assert!(report.rows > 500_000, "{report:?}");
    let mut conn = connector.connect(Purpose::Check).unwrap();
    let conds = run_checks(conn.as_mut(), |_| {}).unwrap();
    assert_eq!(conds.len(), 12);
    for c in &conds {
        assert_eq!(c.status, "holds", "{c:?}");
    }
    let meta = require_loaded(&inspect(conn.as_mut()).unwrap(), "test").unwrap();
    assert_eq!(meta.warehouses, 1);

    let cfg = DriverConfig {
        terminals: 3,
        duration: Duration::from_secs(4),
        warmup: Duration::from_millis(500),
        keying_think: false,
        seed: 9,
        max_retries: 10,
        record_spans: false,
        home_warehouses: None,
        start_at: None,
    };
    let out = drive(&connector, &meta, &cfg, &stop, &mut |_, _| {}, &mut |_| {}).unwrap();
    for t in TxType::ALL {
        let s = &out.tx[t.index()];
        assert!(s.count > 0, "{t:?} never completed");
        assert_eq!(s.errors, 0, "{t:?}: {:?}", out.first_error);
    }
    let conds = run_checks(conn.as_mut(), |_| {}).unwrap();
    for c in &conds {
        assert!(c.holds(), "{c:?}");
    }
    // Delivery ran in some district, so condition 11 applies to fewer of them or none.
    assert_ne!(conds[10].note, None);
    drop(conn);
    std::fs::remove_dir_all(&dir).unwrap();
}
