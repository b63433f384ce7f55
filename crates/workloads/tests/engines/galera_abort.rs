//! A Galera node aborts a local transaction whose row locks a replicated write-set needs (a
//! brute-force abort) and reports it to the client's next command. After a node kill, a node
//! once did not: every command of a New-Order succeeded, its first statements were rolled back
//! and the rest committed in a new implicit transaction — half a transaction on every node
//! (docs/cluster.md). On a 2-node managed cluster: a reported abort ends in a deadlock; an
//! unreported one (the rollback made behind the connection's back) is caught at COMMIT by the
//! transaction's savepoint; healthy transactions commit whole. Where MariaDB or Galera is
//! missing the test says so (scripts/test.sh installs both).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use oltplab_dbs::server::galera::{ClusterConfig, ManagedCluster};
use oltplab_dbs::server::{self, DataInit, ServerConfig, ServerKind};
use oltplab_workloads::sql::mysql::MyConn;
use oltplab_workloads::sql::{Conn, Dialect, ErrorKind, Isolation, Rows, StmtBuilder, TxMode, P};

/// Whether the cluster can run here; if not, the test reports itself skipped (scripts/test.sh
/// installs MariaDB, Galera and openssl).
fn installed() -> bool {
    let missing = oltplab_dbs::server::galera::missing();
    if let Some(why) = &missing {
        oltplab_core::testing::skip(oltplab_core::testing::Need::Server, why);
    }
    missing.is_none()
}

fn bf_aborts(url: &str) -> u64 {
    let mut c = server::connect::mysql_connect(url).unwrap();
    let row: Option<(String, String)> = c
        .query_first("SHOW GLOBAL STATUS LIKE 'wsrep_local_bf_aborts'")
        .unwrap();
    row.unwrap().1.parse().unwrap()
}

/// Node 2 updates row 1 while node 1's open transaction holds it: node 1's applier aborts that
/// transaction. Returns once node 1 counts the abort.
fn abort_from_node_2(urls: &[String]) {
    let before = bf_aborts(&urls[0]);
    let mut c2 = server::connect::mysql_connect(&urls[1]).unwrap();
    c2.query_drop("UPDATE t SET v = v + 100 WHERE k = 1")
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while bf_aborts(&urls[0]) == before {
        assert!(
            Instant::now() < deadline,
            "node 1 never aborted the transaction"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sum(url: &str) -> (i64, i64) {
    let mut c = server::connect::mysql_connect(url).unwrap();
    c.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
    let row: Option<(i64, i64)> = c
        .query_first("SELECT (SELECT v FROM t WHERE k = 1), (SELECT COUNT(*) FROM t)")
        .unwrap();
    row.unwrap()
}

#[test]
fn a_transaction_the_node_aborted_is_retried_never_half_committed() {
    if !installed() {
        return;
    }
    // Under /tmp: as root the nodes run as mysql, which must enter every parent directory.
    let dir = PathBuf::from(format!(
        "/tmp/oltplab-galera-prepare-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut node = ServerConfig::new(ServerKind::Mariadb, &dir);
    node.buffer_pool_bytes = 32 << 20;
    node.max_connections = 20;
    let cluster = ManagedCluster::start(&ClusterConfig {
        server: node.clone(),
        nodes: Some(2),
        node_env: Vec::new(),
    })
    .unwrap();
    let mut c = server::connect::mysql_connect(&cluster.nodes()[0].url()).unwrap();
    c.query_drop("CREATE TABLE t (k INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 0)").unwrap();
    drop(c);
    cluster.stop().unwrap();
    node.init = DataInit::Reuse;
    let cluster = ManagedCluster::start(&ClusterConfig {
        server: node,
        nodes: None,
        node_env: Vec::new(),
    })
    .unwrap();
    let urls: Vec<String> = cluster.nodes().iter().map(|n| n.url()).collect();

    // An abort the node reports: the next statement fails with a deadlock, nothing commits.
    let mut conn = MyConn::new(
        server::connect::mysql_connect(&urls[0]).unwrap(),
        Isolation::RepeatableRead,
    )
    .unwrap();
    let mut b = StmtBuilder::new(Dialect::Mysql);
    let update = b.make("UPDATE t SET v = v + 1 WHERE k = ?");
    let insert = b.make("INSERT INTO t VALUES (?, ?)");
    let (v0, rows0) = sum(&urls[0]);
    let mut out = Rows::default();
    conn.begin(TxMode::Write).unwrap();
    conn.run(&update, &[P::I(1)], &mut out).unwrap();
    abort_from_node_2(&urls);
    let err = conn
        .run(&insert, &[P::I(3), P::I(3)], &mut out)
        .and_then(|_| conn.commit())
        .expect_err("half a transaction committed");
    assert_eq!(err.kind, ErrorKind::Deadlock, "{err}");
    assert!(err.kind.retryable());
    let _ = conn.rollback();
    assert_eq!(
        sum(&urls[0]),
        (v0 + 100, rows0),
        "the transaction left a trace"
    );

    // An abort the node did not report (what the node-kill run met): the transaction's first
    // statement is rolled back behind the connection's back, the next runs in a new implicit
    // transaction, and COMMIT finds the savepoint gone instead of committing half.
    conn.begin(TxMode::Write).unwrap();
    conn.run(&update, &[P::I(1)], &mut out).unwrap();
    conn.client().query_drop("ROLLBACK").unwrap();
    conn.run(&insert, &[P::I(4), P::I(4)], &mut out).unwrap();
    let err = conn.commit().expect_err("half a transaction committed");
    assert_eq!(err.kind, ErrorKind::AbortedUnreported, "{err}");
    assert!(err.kind.retryable());
    conn.rollback().unwrap();
    assert_eq!(
        sum(&urls[0]),
        (v0 + 100, rows0),
        "half a transaction committed"
    );

    // A healthy transaction commits whole, and a read-only one needs no savepoint.
    conn.begin(TxMode::Write).unwrap();
    conn.run(&update, &[P::I(1)], &mut out).unwrap();
    conn.run(&insert, &[P::I(5), P::I(5)], &mut out).unwrap();
    conn.commit().unwrap();
    assert_eq!(sum(&urls[0]), (v0 + 101, rows0 + 1));
    let read = b.make("SELECT v FROM t WHERE k = ?");
    conn.begin(TxMode::Read).unwrap();
    conn.run(&read, &[P::I(1)], &mut out).unwrap();
    conn.client().query_drop("ROLLBACK").unwrap();
    conn.commit().unwrap();

    drop(conn);
    cluster.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
