//! The MariaDB loader sends LOAD DATA LOCAL INFILE; a server that refuses it (`local_infile=0`, as
//! MySQL 8 by default) must still get a complete load, by multi-row INSERT. A real MariaDB,
//! started in a temporary directory with LOCAL INFILE off; where MariaDB is not installed the test
//! says so and passes (scripts/test.sh installs it).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use oltplab_dbs::server::{self, ManagedServer, ServerConfig, ServerKind};
use oltplab_workloads::sql::{Batch, Isolation, TxMode};
use oltplab_workloads::tpcc::check::run_checks;
use oltplab_workloads::tpcc::connect::MyConnector;
use oltplab_workloads::tpcc::load::{load, LoadOptions};
use oltplab_workloads::tpcc::{Connector, Purpose};

/// A MariaDB of its own for one test, or None (and a note) where MariaDB is not installed.
fn start(
    name: &str,
    buffer_pool_bytes: u64,
    settings: &[(&str, &str)],
) -> Option<(ManagedServer, PathBuf)> {
    if server::find_program(&["mariadbd", "mysqld"], None).is_none() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            "MariaDB is not installed",
        );
        return None;
    }
    // Under /tmp: as root the server runs as mysql, which must enter every parent directory.
    let dir = PathBuf::from(format!("/tmp/oltplab-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::new(ServerKind::Mariadb, &dir);
    cfg.buffer_pool_bytes = buffer_pool_bytes;
    cfg.extra_settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Some((ManagedServer::start(&cfg).unwrap(), dir))
}

#[test]
fn a_server_without_local_infile_is_loaded_by_insert() {
    let Some((server, dir)) = start("noinfile", 256 << 20, &[("local_infile", "0")]) else {
        return;
    };
    let connector = MyConnector {
        url: server.url(),
        isolation: Isolation::RepeatableRead,
    };

    let opts = LoadOptions {
        warehouses: 1,
        threads: 2,
        seed: 1,
        force: false,
        location: "the test server".into(),
    };
    let report = load(&connector, &opts, &|_, _| {}, &AtomicBool::new(false)).unwrap();
    assert!(report.times.rows > 590_000, "{report:?}");

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

/// Both load paths keep text exactly: LOAD DATA reads the rows as bytes (CHARACTER SET binary, no
/// conversion) into utf8mb4 columns, so multi-byte characters, escapes and NULLs must survive it,
/// and the multi-row INSERT it falls back to.
#[test]
fn both_load_paths_keep_text_exactly() {
    let Some((server, dir)) = start("loadtext", 64 << 20, &[]) else {
        return;
    };
    let connector = MyConnector {
        url: server.url(),
        isolation: Isolation::RepeatableRead,
    };
    let texts = [
        "déjà vu — 東京 😀",
        "tab\there",
        "back\\slash",
        "new\nline\r",
        "it's",
        "\\N",
    ];
    let mut batch = Batch::new("t", &["id", "s"], texts.len() + 1);
    for (i, t) in texts.iter().enumerate() {
        batch.int(i as i64);
        batch.str(t);
    }
    batch.int(texts.len() as i64);
    batch.null();

    for infile in ["1", "0"] {
        let mut conn = connector.connect(Purpose::Load).unwrap();
        conn.batch(&format!("SET GLOBAL local_infile = {infile}"))
            .unwrap();
        conn.batch("DROP TABLE IF EXISTS t").unwrap();
        conn.batch("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(64) CHARACTER SET utf8mb4)")
            .unwrap();
        drop(conn);
        // A new connection: one that saw LOCAL INFILE refused keeps to INSERT.
        let mut conn = connector.connect(Purpose::Load).unwrap();
        conn.begin(TxMode::Write).unwrap();
        conn.load(&batch).unwrap();
        conn.commit().unwrap();
        let rows = conn.query("SELECT s FROM t ORDER BY id").unwrap();
        assert_eq!(rows.len(), texts.len() + 1, "local_infile={infile}");
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(rows.get(i, 0).str(), *t, "local_infile={infile}");
        }
        assert!(rows.get(texts.len(), 0).is_null(), "local_infile={infile}");
    }
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
