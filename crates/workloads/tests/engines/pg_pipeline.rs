//! PostgreSQL's pipelining (`sql::postgres`) on a server the test starts and stops: BEGIN goes out
//! with a transaction's first statement and COMMIT with its last; a statement that fails inside a
//! pipeline commits nothing and is the error reported; and each TPC-C transaction takes the round
//! trips it is meant to (counted by the connection). The commit's time is the round trip that
//! carried it, marked as carrying statements when it did. A write transaction of one statement
//! is that statement alone, in an implicit transaction at the run's level.

use std::sync::atomic::AtomicBool;

use oltplab_dbs::server::{ManagedServer, ServerConfig, ServerKind};
use oltplab_workloads::sql::postgres::PgConn;
use oltplab_workloads::sql::{
    Conn, Dialect, End, ErrorKind, Isolation, Piped, Rows, StmtBuilder, TxMode, P,
};
use oltplab_workloads::tpcc::connect::PgConnector;
use oltplab_workloads::tpcc::load::{load, LoadOptions};
use oltplab_workloads::tpcc::tx::{execute, CustomerSel, Input, Line, Scratch, Statements};

#[test]
fn begin_and_commit_ride_with_the_statements_and_errors_commit_nothing() {
    if oltplab_dbs::server::find_program(&["initdb"], None).is_none() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            "PostgreSQL is not installed",
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("oltplab-wl-pipeline-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::new(ServerKind::Postgres, &dir);
    cfg.buffer_pool_bytes = 128 << 20;
    let server = ManagedServer::start(&cfg).unwrap_or_else(|e| panic!("starting PostgreSQL: {e}"));
    let url = server.url();

    let mut pg = PgConn::connect(&url, Isolation::ReadCommitted).unwrap();
    pg.batch("CREATE TABLE t (k int PRIMARY KEY, v text NOT NULL)")
        .unwrap();
    let mut b = StmtBuilder::new(Dialect::Postgres);
    let insert = b.make("INSERT INTO t (k, v) VALUES (?, ?)");
    let count = b.make("SELECT count(*) FROM t");
    let (mut r1, mut r2, mut r3) = (Rows::default(), Rows::default(), Rows::default());
    let keys = |pg: &mut PgConn, r: &mut Rows| -> i64 {
        pg.run(&count, &[], r).unwrap();
        r.get(0, 0).i64()
    };
    // The statements are prepared on first use, a round trip each: once here.
    pg.begin(TxMode::Write).unwrap();
    pg.pipeline(
        &mut [Piped::new(&insert, &[P::I(1), P::S("a")], &mut r1)],
        End::Commit,
    )
    .unwrap();
    assert_eq!(keys(&mut pg, &mut r1), 1);

    // BEGIN, two statements and COMMIT: one round trip, both rows committed.
    let before = pg.round_trips();
    pg.begin(TxMode::Write).unwrap();
    let mut two = [
        Piped::new(&insert, &[P::I(2), P::S("b")], &mut r1),
        Piped::new(&insert, &[P::I(3), P::S("c")], &mut r2),
    ];
    pg.pipeline(&mut two, End::Commit).unwrap();
    assert_eq!((two[0].count, two[1].count), (1, 1));
    assert_eq!(pg.round_trips() - before, 1);
    let timed = pg
        .take_commit_time()
        .expect("a write transaction's commit is timed");
    assert!(timed.with_statement && timed.ns > 0, "{timed:?}");
    assert_eq!(keys(&mut pg, &mut r1), 3);

    // An empty transaction costs no round trip.
    let before = pg.round_trips();
    pg.begin(TxMode::Write).unwrap();
    pg.commit().unwrap();
    pg.begin(TxMode::Read).unwrap();
    pg.rollback().unwrap();
    assert_eq!(pg.round_trips(), before);
    assert_eq!(pg.take_commit_time(), None, "nothing sent, nothing timed");

    // The middle statement fails (key 1 exists): its error is the one reported, and the COMMIT
    // sent along ends the transaction without committing the statements around it.
    pg.begin(TxMode::Write).unwrap();
    let err = pg
        .pipeline(
            &mut [
                Piped::new(&insert, &[P::I(4), P::S("d")], &mut r1),
                Piped::new(&insert, &[P::I(1), P::S("dup")], &mut r2),
                Piped::new(&insert, &[P::I(5), P::S("e")], &mut r3),
            ],
            End::Commit,
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Other, "{err}");
    assert!(err.message.contains("duplicate key"), "{err}");
    pg.rollback().unwrap(); // what the driver does after an error: harmless here
    assert_eq!(keys(&mut pg, &mut r1), 3);

    // A read-only transaction's BEGIN goes out with its first statement and is in force for it.
    pg.begin(TxMode::Read).unwrap();
    let err = pg
        .pipeline(
            &mut [Piped::new(&insert, &[P::I(6), P::S("f")], &mut r1)],
            End::Commit,
        )
        .unwrap_err();
    assert!(err.message.contains("read-only transaction"), "{err}");
    pg.rollback().unwrap();
    assert_eq!(keys(&mut pg, &mut r1), 3);

    // A COMMIT sent on its own is timed on its own.
    pg.begin(TxMode::Write).unwrap();
    pg.run(&insert, &[P::I(9), P::S("z")], &mut r1).unwrap();
    pg.commit().unwrap();
    let timed = pg.take_commit_time().expect("timed");
    assert!(!timed.with_statement && timed.ns > 0, "{timed:?}");
    pg.begin(TxMode::Write).unwrap();
    pg.pipeline(
        &mut [Piped::new(&insert, &[P::I(10), P::S("y")], &mut r1)],
        End::Rollback,
    )
    .unwrap();
    assert_eq!(pg.take_commit_time(), None, "rolled back");

    // TPC-C on one warehouse: each transaction's round trips once its statements are prepared.
    pg.batch("DROP TABLE t").unwrap(); // the loader wants a database of its own
    let connector = PgConnector {
        url: url.clone(),
        isolation: Isolation::ReadCommitted,
    };
    let opts = LoadOptions {
        warehouses: 1,
        threads: 2,
        seed: 5,
        force: false,
        location: "test".into(),
    };
    load(&connector, &opts, &|_, _| {}, &AtomicBool::new(false)).unwrap();
    let st = Statements::new(Dialect::Postgres);
    let mut s = Scratch::default();
    let lines: Vec<Line> = (1..=10)
        .map(|i| Line {
            i_id: i * 7,
            supply_w: 1,
            quantity: 5,
        })
        .collect();
    let cases: [(&str, Input, u64); 6] = [
        (
            "New-Order",
            Input::NewOrder {
                w: 1,
                d: 1,
                c: 1,
                lines,
                rollback: false,
            },
            3,
        ),
        (
            "Payment by id",
            Input::Payment {
                w: 1,
                d: 2,
                c_w: 1,
                c_d: 2,
                customer: CustomerSel::Id(7),
                amount_cents: 1234,
            },
            2,
        ),
        (
            "Payment by name",
            Input::Payment {
                w: 1,
                d: 2,
                c_w: 1,
                c_d: 2,
                customer: CustomerSel::Last("BARBARBAR".into()),
                amount_cents: 1234,
            },
            3,
        ),
        (
            "Order-Status by id",
            Input::OrderStatus {
                w: 1,
                d: 1,
                customer: CustomerSel::Id(1),
            },
            2,
        ),
        (
            "Stock-Level",
            Input::StockLevel {
                w: 1,
                d: 1,
                threshold: 15,
            },
            2,
        ),
        // The ten districts' oldest new orders, then their orders and lines, then their
        // customers with COMMIT.
        ("Delivery", Input::Delivery { w: 1, carrier: 3 }, 3),
    ];
    for (name, input, want) in &cases {
        for round in 0..2 {
            let before = pg.round_trips();
            execute(&mut pg, &st, input, &mut s).unwrap_or_else(|e| panic!("{name}: {e}"));
            // The first round prepares the statements (a round trip each).
            if round == 1 {
                assert_eq!(pg.round_trips() - before, *want, "{name}");
            }
        }
    }

    // A write transaction of one statement goes alone, as an implicit transaction at the run's
    // level (set for the session at connect): VACUUM, which refuses to run inside a transaction
    // block, runs — no BEGIN went before it — and a statement sees REPEATABLE READ here; a read
    // still sends its BEGIN (READ ONLY).
    let mut rr = PgConn::connect(&url, Isolation::RepeatableRead).unwrap();
    rr.batch("CREATE TABLE IF NOT EXISTS alone (k int)")
        .unwrap();
    let vacuum = b.make("VACUUM alone");
    rr.begin(TxMode::Write).unwrap();
    rr.pipeline(&mut [Piped::new(&vacuum, &[], &mut r1)], End::Commit)
        .unwrap_or_else(|e| panic!("a BEGIN went before the one statement: {e}"));
    let probe = b.make(
        "SELECT (current_setting('transaction_isolation') = 'repeatable read')::int, \
         (current_setting('transaction_read_only') = 'on')::int",
    );
    for (mode, want) in [(TxMode::Write, (1, 0)), (TxMode::Read, (1, 1))] {
        rr.begin(mode).unwrap();
        rr.pipeline(&mut [Piped::new(&probe, &[], &mut r1)], End::Commit)
            .unwrap();
        assert_eq!((r1.get(0, 0).i64(), r1.get(0, 1).i64()), want, "{mode:?}");
    }
    // A read of one statement that sees one snapshot by itself (a SELECT, a STABLE function's
    // call: `TxMode::ReadStatement`) goes alone too, in one round trip; with two statements it
    // is a Read and sends its BEGIN … READ ONLY. A STABLE function cannot write, so what goes
    // without READ ONLY still cannot change anything.
    let before = rr.round_trips();
    rr.begin(TxMode::ReadStatement).unwrap();
    rr.pipeline(&mut [Piped::new(&probe, &[], &mut r1)], End::Commit)
        .unwrap();
    assert_eq!((r1.get(0, 0).i64(), r1.get(0, 1).i64()), (1, 0));
    assert_eq!(rr.round_trips() - before, 1);
    rr.begin(TxMode::ReadStatement).unwrap();
    rr.pipeline(
        &mut [
            Piped::new(&probe, &[], &mut r1),
            Piped::new(&probe, &[], &mut r2),
        ],
        End::Commit,
    )
    .unwrap();
    assert_eq!((r2.get(0, 0).i64(), r2.get(0, 1).i64()), (1, 1));
    rr.batch(
        "CREATE OR REPLACE FUNCTION stable_writer() RETURNS int LANGUAGE plpgsql STABLE AS \
         $$ BEGIN INSERT INTO alone VALUES (1); RETURN 1; END $$",
    )
    .unwrap();
    let writer = b.make("SELECT stable_writer()");
    rr.begin(TxMode::ReadStatement).unwrap();
    let err = rr
        .pipeline(&mut [Piped::new(&writer, &[], &mut r1)], End::Commit)
        .unwrap_err();
    assert!(err.message.contains("non-volatile"), "{err}");
    let _ = rr.rollback();
    drop(rr);

    // The server ends the connection: the request fails, and so does every later one at once
    // (the driver's rollback after the error must not wait for an answer that never comes).
    let pid = pg.query("SELECT pg_backend_pid()").unwrap().get(0, 0).i64();
    let mut other = PgConn::connect(&url, Isolation::ReadCommitted).unwrap();
    other
        .query(&format!("SELECT pg_terminate_backend({pid})"))
        .unwrap();
    let one = b.make("SELECT 1");
    let started = std::time::Instant::now();
    pg.begin(TxMode::Write).unwrap();
    assert!(pg
        .pipeline(&mut [Piped::new(&one, &[], &mut r1)], End::Commit)
        .is_err());
    let _ = pg.rollback();
    let err = pg.run(&one, &[], &mut r1).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Connection, "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    drop((pg, other));
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
