//! The TPC-C library end to end on embedded SQLite, without the command line: load one warehouse,
//! drive it, and check all twelve conditions before and after.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use oltplab_dbs::sqlite::SqliteOptions;
use oltplab_workloads::check::CheckStatus;
use oltplab_workloads::sql::{Batch, Conn, DbResult, Dialect, Rows, Stmt, TxMode, P};
use oltplab_workloads::tpcc::check::run_checks;
use oltplab_workloads::tpcc::connect::SqliteConnector;
use oltplab_workloads::tpcc::driver::{drive, DriverConfig};
use oltplab_workloads::tpcc::load::{load, LoadOptions};
use oltplab_workloads::tpcc::tx::{execute, Input, Line, Outcome, Scratch, Statements, TxType};
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
    assert!(report.times.rows > 500_000, "{report:?}");
    let mut conn = connector.connect(Purpose::Check).unwrap();
    let conds = run_checks(conn.as_mut(), |_| {}).unwrap();
    assert_eq!(conds.len(), 12);
    for c in &conds {
        assert_eq!(c.status, CheckStatus::Holds, "{c:?}");
    }
    let meta = require_loaded(&inspect(conn.as_mut()).unwrap(), "test").unwrap();
    assert_eq!(meta.warehouses, 1);
    rolled_back_new_order_does_the_work_and_undoes_it(conn.as_mut());

    let cfg = DriverConfig {
        terminals: 3,
        duration: Duration::from_secs(4),
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
    let out = drive(&connector, &meta, &cfg, &stop, &mut |_| {}, &mut |_| {}).unwrap();
    for t in TxType::ALL {
        let s = &out.run.tx[t.index()];
        assert!(s.count > 0, "{t:?} never completed");
        assert_eq!(s.errors, 0, "{t:?}: {:?}", out.run.first_error);
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

/// A connection that remembers every statement it ran.
struct Recording<'a> {
    inner: &'a mut dyn Conn,
    ran: Vec<String>,
}

impl Conn for Recording<'_> {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn begin(&mut self, mode: TxMode) -> DbResult<()> {
        self.inner.begin(mode)
    }
    fn commit(&mut self) -> DbResult<()> {
        self.ran.push("COMMIT".into());
        self.inner.commit()
    }
    fn rollback(&mut self) -> DbResult<()> {
        self.ran.push("ROLLBACK".into());
        self.inner.rollback()
    }
    fn run(&mut self, stmt: &Stmt, params: &[P], out: &mut Rows) -> DbResult<u64> {
        self.ran.push(stmt.sql.clone());
        self.inner.run(stmt, params, out)
    }
    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.inner.batch(sql)
    }
    fn query(&mut self, sql: &str) -> DbResult<Rows> {
        self.inner.query(sql)
    }
    fn load(&mut self, batch: &Batch) -> DbResult<()> {
        self.inner.load(batch)
    }
}

/// Spec 2.4.2.3: a New-Order with an unused item processes every valid item — the order, its stock
/// rows and order lines written — and only then rolls back, leaving the database as it was.
fn rolled_back_new_order_does_the_work_and_undoes_it(conn: &mut dyn Conn) {
    let state = |conn: &mut dyn Conn| {
        let q = |conn: &mut dyn Conn, sql: &str| conn.query(sql).unwrap().get(0, 0).i64();
        [
            q(conn, "SELECT sum(s_quantity) + sum(s_order_cnt) FROM stock"),
            q(conn, "SELECT count(*) FROM order_line"),
            q(conn, "SELECT count(*) FROM orders"),
            q(
                conn,
                "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 3",
            ),
        ]
    };
    let before = state(conn);
    let line = |i_id| Line {
        i_id,
        supply_w: 1,
        quantity: 5,
    };
    let input = Input::NewOrder {
        w: 1,
        d: 3,
        c: 42,
        lines: vec![line(11), line(12), line(13), line(14), line(100_001)],
        rollback: true,
    };
    let statements = Statements::new(Dialect::Sqlite);
    let mut rec = Recording {
        inner: conn,
        ran: Vec::new(),
    };
    let outcome = execute(&mut rec, &statements, &input, &mut Scratch::default()).unwrap();
    assert_eq!(outcome, Outcome::RolledBack);
    let ran = |what: &str| rec.ran.iter().filter(|s| s.contains(what)).count();
    assert_eq!(ran("UPDATE stock"), 4, "{:#?}", rec.ran);
    assert_eq!(ran("INSERT INTO order_line"), 1, "{:#?}", rec.ran);
    assert_eq!(ran("INSERT INTO orders"), 1, "{:#?}", rec.ran);
    assert_eq!(rec.ran.last().map(String::as_str), Some("ROLLBACK"));
    assert_eq!(state(rec.inner), before, "the rollback undid every change");
}
