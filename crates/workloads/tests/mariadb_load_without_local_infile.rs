//! The MariaDB loader sends LOAD DATA LOCAL INFILE; a server that refuses it (`local_infile=0`, as
//! MySQL 8 by default) must still get a complete load, by multi-row INSERT. A real MariaDB,
//! started in a temporary directory with LOCAL INFILE off; where MariaDB is not installed the test
//! says so and passes (scripts/test.sh installs it).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use oltplab_dbs::server::{self, ManagedServer, ServerConfig, ServerKind};
use oltplab_workloads::tpcc::check::run_checks;
use oltplab_workloads::tpcc::connect::MyConnector;
use oltplab_workloads::tpcc::load::{load, LoadOptions};
use oltplab_workloads::tpcc::{Connector, Purpose};

#[test]
fn a_server_without_local_infile_is_loaded_by_insert() {
    if server::find_program(&["mariadbd", "mysqld"], None).is_none() {
        eprintln!("skipped: MariaDB is not installed");
        return;
    }
    // Under /tmp: as root the server runs as mysql, which must enter every parent directory.
    let dir = PathBuf::from(format!("/tmp/oltplab-it-noinfile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::new(ServerKind::Mariadb, &dir);
    cfg.buffer_pool_bytes = 256 << 20;
    cfg.extra_settings = vec![("local_infile".into(), "0".into())];
    let server = ManagedServer::start(&cfg).unwrap();
    let connector = MyConnector { url: server.url() };

    let opts = LoadOptions {
        warehouses: 1,
        threads: 2,
        seed: 1,
        force: false,
        location: "the test server".into(),
    };
    let report = load(&connector, &opts, &|_, _| {}, &AtomicBool::new(false)).unwrap();
    assert!(report.rows > 590_000, "{report:?}");

    let mut conn = connector.connect(Purpose::Check).unwrap();
    let rows = conn.query("SELECT @@local_infile").unwrap();
    assert_eq!(rows.get(0, 0).i64(), 0, "the server refused LOCAL INFILE");
    for (table, n) in [("stock", 100_000), ("customer", 30_000), ("item", 100_000)] {
        let rows = conn
            .query(&format!("SELECT COUNT(*) FROM {table}"))
            .unwrap();
        assert_eq!(rows.get(0, 0).i64(), n, "{table}");
    }
    let conditions = run_checks(conn.as_mut(), |_| {}).unwrap();
    assert!(conditions.iter().all(|c| c.holds()), "{conditions:?}");
    drop(conn);
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
