//! MariaDB (`sql::mysql`): a pipeline that ends in COMMIT sends its last statement and the COMMIT
//! as one multi-statement query, the parameters written as literals. On a server the test starts
//! and stops: the values read back are the ones sent; a failed last statement commits nothing
//! and leaves the transaction to the caller's rollback, as when the two are sent apart. The
//! commit's time is that round trip's, marked as carrying the statement; a COMMIT sent alone is
//! timed alone, a failed or read-only transaction's not at all.

use oltplab_dbs::server::{ManagedServer, ServerConfig, ServerKind};
use oltplab_workloads::sql::mysql::MyConn;
use oltplab_workloads::sql::{
    Conn, Dialect, End, ErrorKind, Isolation, Piped, Rows, StmtBuilder, TxMode, P,
};

#[test]
fn the_last_statement_and_commit_go_together_and_a_failure_commits_nothing() {
    if oltplab_dbs::server::find_program(&["mariadbd", "mysqld"], None).is_none() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            "MariaDB is not installed",
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("oltplab-wl-mycommit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::new(ServerKind::Mariadb, &dir);
    cfg.buffer_pool_bytes = 64 << 20;
    let server = ManagedServer::start(&cfg).unwrap_or_else(|e| panic!("starting MariaDB: {e}"));
    let url = server.url();
    let connect = || {
        let conn = oltplab_dbs::server::connect::mysql_connect(&url).unwrap();
        MyConn::new(conn, Isolation::RepeatableRead).unwrap()
    };
    let mut my = connect();
    my.batch(
        "CREATE TABLE t (k INT PRIMARY KEY, s VARCHAR(40) NOT NULL, m DECIMAL(12,2) NOT NULL, \
         r DECIMAL(6,4) NOT NULL, t DATETIME(6) NOT NULL, n INT NULL)",
    )
    .unwrap();
    let mut b = StmtBuilder::new(Dialect::Mysql);
    let insert = b.make("INSERT INTO t (k, s, m, r, t, n) VALUES (?, ?, ?, ?, ?, ?)");
    let select = b.make("SELECT s, m, r, n FROM t WHERE k = ? AND t = ?");
    let count = b.make("SELECT count(*) FROM t");
    let (mut r1, mut r2) = (Rows::default(), Rows::default());
    // 2024-02-29 12:34:56.5 UTC, in µs.
    let at = 1_709_210_096_500_000;
    let row = |k: i64, s: &'static str| -> [P<'static>; 6] {
        [
            P::I(k),
            P::S(s),
            P::F(-1234.56),
            P::R(0.1234),
            P::T(at),
            P::Null,
        ]
    };

    // Two rows, the second with COMMIT; a string with a quote, a backslash and a question mark.
    let tricky = "it's a \\ test?";
    my.begin(TxMode::Write).unwrap();
    let (a, c) = (row(1, "plain"), row(2, tricky));
    let mut two = [
        Piped::new(&insert, &a, &mut r1),
        Piped::new(&insert, &c, &mut r2),
    ];
    my.pipeline(&mut two, End::Commit).unwrap();
    assert_eq!((two[0].count, two[1].count), (1, 1));
    let timed = my
        .take_commit_time()
        .expect("a write transaction's commit is timed");
    assert!(timed.with_statement && timed.ns > 0, "{timed:?}");
    assert_eq!(my.take_commit_time(), None, "taken once");
    // Committed: another connection sees both rows, as sent.
    let mut other = connect();
    other.begin(TxMode::Read).unwrap();
    other.run(&select, &[P::I(2), P::T(at)], &mut r1).unwrap();
    assert_eq!(r1.len(), 1, "the row with its time");
    assert_eq!(r1.get(0, 0).str(), tricky);
    assert_eq!(r1.get(0, 1).f64(), -1234.56);
    assert_eq!(r1.get(0, 2).f64(), 0.1234);
    assert!(r1.get(0, 3).is_null());
    other.run(&count, &[], &mut r1).unwrap();
    assert_eq!(r1.get(0, 0).i64(), 2);
    other.commit().unwrap();

    // The last statement fails (key 1 exists): its error is reported, COMMIT did not run, and
    // the caller's rollback takes back the statement before it.
    my.begin(TxMode::Write).unwrap();
    let (a, c) = (row(3, "x"), row(1, "dup"));
    let err = my
        .pipeline(
            &mut [
                Piped::new(&insert, &a, &mut r1),
                Piped::new(&insert, &c, &mut r2),
            ],
            End::Commit,
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Other, "{err}");
    assert!(err.message.contains("Duplicate entry"), "{err}");
    my.rollback().unwrap();
    assert_eq!(
        my.take_commit_time(),
        None,
        "nothing committed, nothing timed"
    );
    other.begin(TxMode::Read).unwrap();
    other.run(&count, &[], &mut r1).unwrap();
    assert_eq!(r1.get(0, 0).i64(), 2, "nothing of the failed transaction");
    other.commit().unwrap();

    // A read that ends with COMMIT returns its rows.
    my.begin(TxMode::Read).unwrap();
    my.pipeline(
        &mut [Piped::new(&select, &[P::I(1), P::T(at)], &mut r1)],
        End::Commit,
    )
    .unwrap();
    assert_eq!(r1.len(), 1);
    assert_eq!(r1.get(0, 0).str(), "plain");
    assert_eq!(my.take_commit_time(), None, "a read-only transaction");

    // A COMMIT sent on its own is timed on its own.
    my.begin(TxMode::Write).unwrap();
    my.run(&insert, &row(4, "alone"), &mut r1).unwrap();
    my.commit().unwrap();
    let timed = my.take_commit_time().expect("timed");
    assert!(!timed.with_statement && timed.ns > 0, "{timed:?}");
    drop((my, other));
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
