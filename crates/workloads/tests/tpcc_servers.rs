//! The TPC-C library on real servers that the test starts (fresh, in a temporary directory) and
//! stops: load one warehouse, drive it, and check the twelve conditions before and after.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use oltplab_dbs::server::{ManagedServer, ServerConfig, ServerKind};
use oltplab_workloads::tpcc::check::run_checks;
use oltplab_workloads::tpcc::connect::{MyConnector, PgConnector};
use oltplab_workloads::tpcc::driver::{drive, DriverConfig};
use oltplab_workloads::tpcc::load::{load, LoadOptions};
use oltplab_workloads::tpcc::tx::TxType;
use oltplab_workloads::tpcc::{inspect, require_loaded, Connector, Purpose};

fn scenario(kind: ServerKind) {
    let dir =
        std::env::temp_dir().join(format!("oltplab-wl-{}-{}", kind.name(), std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::new(kind, &dir);
    cfg.buffer_pool_bytes = 256 << 20;
    let server =
        ManagedServer::start(&cfg).unwrap_or_else(|e| panic!("starting {}: {e}", kind.product()));
    let connector: Box<dyn Connector> = match kind {
        ServerKind::Postgres => Box::new(PgConnector { url: server.url() }),
        ServerKind::Mariadb => Box::new(MyConnector { url: server.url() }),
    };
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
    for c in run_checks(conn.as_mut(), |_| {}).unwrap() {
        assert_eq!(c.status, "holds", "{c:?}");
    }
    let meta = require_loaded(&inspect(conn.as_mut()).unwrap(), "test").unwrap();
    // Refuses to load over it.
    let err = load(connector.as_ref(), &opts, &|_, _| {}, &stop).unwrap_err();
    assert_eq!(err.exit_code(), 2, "{err}");

    let cfg = DriverConfig {
        terminals: 4,
        duration: Duration::from_secs(5),
        warmup: Duration::from_millis(500),
        keying_think: false,
        seed: 9,
        max_retries: 10,
        record_spans: false,
        home_warehouses: None,
        start_at: None,
    };
    let out = drive(
        connector.as_ref(),
        &meta,
        &cfg,
        &stop,
        &mut |_, _| {},
        &mut |_| {},
    )
    .unwrap();
    eprintln!(
        "{} run: {:?} retries {:?}",
        kind.product(),
        out.tx.iter().map(|t| t.count).collect::<Vec<_>>(),
        out.retries_by_kind
    );
    for t in TxType::ALL {
        let s = &out.tx[t.index()];
        assert!(s.count > 0, "{t:?} never completed");
        assert_eq!(s.errors, 0, "{t:?}: {:?}", out.first_error);
    }
    for c in run_checks(conn.as_mut(), |_| {}).unwrap() {
        assert!(c.holds(), "{c:?}");
    }
    drop(conn);
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgres_load_drive_check() {
    scenario(ServerKind::Postgres);
}

#[test]
fn mariadb_load_drive_check() {
    scenario(ServerKind::Mariadb);
}
