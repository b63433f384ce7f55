//! The brokerage's server-side procedures (`run brokerage --procedures`) do what its client-side
//! transactions do: two servers of one engine, loaded alike, take the same inputs one at a time —
//! the customers' transactions, Market-Feeds whose prices move enough to trigger limit orders,
//! the Trade-Results of the market orders and the triggered ones — one through `tx::execute`, the other through
//! `procedures::execute`. Every outcome (what the market is handed) must be the same, and so
//! must every table the transactions change, but for the times each side stamped.

use std::sync::atomic::AtomicBool;

use oltplab_dbs::server::{ManagedServer, ServerConfig, ServerKind};
use oltplab_workloads::brokerage::driver::InputGen;
use oltplab_workloads::brokerage::load::{load, LoadOptions};
use oltplab_workloads::brokerage::procedures::{self, Procedures};
use oltplab_workloads::brokerage::tx::{self, Input, Order, Outcome, Scratch, Statements, Tick};
use oltplab_workloads::brokerage::{require_loaded, Scale};
use oltplab_workloads::random::Rng;
use oltplab_workloads::sql::{Conn, Purpose, StmtBuilder};

use crate::servers;

/// Inputs drawn from the customers' mix (each market order's Trade-Result follows it).
const CUSTOMER_INPUTS: usize = 400;

/// The columns compared, all but the times each side stamps (`*_dts`, a settlement's due day).
const TABLES: [&str; 11] = [
    "SELECT t_id, t_st_id, t_tt_id, t_is_cash, t_s_symb, t_qty, t_bid_price, t_ca_id, t_exec_name, \
     t_trade_price, t_chrg, t_comm, t_tax, t_lifo FROM trade ORDER BY t_id",
    "SELECT th_t_id, th_st_id FROM trade_history ORDER BY th_t_id, th_st_id",
    "SELECT se_t_id, se_cash_type, se_amt FROM settlement ORDER BY se_t_id",
    "SELECT ct_t_id, ct_amt, ct_name FROM cash_transaction ORDER BY ct_t_id",
    "SELECT h_t_id, h_ca_id, h_s_symb, h_price, h_qty FROM holding ORDER BY h_t_id",
    "SELECT hs_ca_id, hs_s_symb, hs_qty FROM holding_summary ORDER BY hs_ca_id, hs_s_symb",
    "SELECT hh_h_t_id, hh_t_id, hh_before_qty, hh_after_qty FROM holding_history ORDER BY hh_h_t_id, hh_t_id",
    "SELECT tr_t_id, tr_tt_id, tr_s_symb, tr_qty, tr_bid_price, tr_b_id FROM trade_request ORDER BY tr_t_id",
    "SELECT b_id, b_num_trades, b_comm_total FROM broker ORDER BY b_id",
    "SELECT ca_id, ca_bal FROM customer_account ORDER BY ca_id",
    "SELECT lt_s_symb, lt_price, lt_vol FROM last_trade ORDER BY lt_s_symb",
];

/// One side: its server, a connection, and the statements or calls it runs.
struct Side {
    server: ManagedServer,
    conn: Box<dyn Conn>,
    st: Statements,
    procedures: Option<Procedures>,
    next_trade_id: std::cell::Cell<i64>,
    scratch: Scratch,
}

impl Side {
    fn start(kind: ServerKind, dir: &std::path::Path, procedures: bool) -> (Side, InputGen) {
        let mut cfg = ServerConfig::new(kind, dir);
        cfg.buffer_pool_bytes = 128 << 20;
        let server = ManagedServer::start(&cfg)
            .unwrap_or_else(|e| panic!("starting {}: {e}", kind.product()));
        let connector = servers::connector(kind, server.url(), servers::default_isolation(kind));
        let opts = LoadOptions {
            scale: Scale {
                customers: 1000,
                days: 1,
            },
            // One loader: the two sides' data are the same row for row.
            threads: 1,
            seed: 5,
            force: false,
            location: "test".into(),
        };
        load(
            connector.as_ref(),
            &opts,
            &|_, _| {},
            &AtomicBool::new(false),
        )
        .unwrap();
        let mut conn = connector.connect(Purpose::Run).unwrap();
        let meta = require_loaded(conn.as_mut(), "test").unwrap();
        let mut numbers = StmtBuilder::new(connector.dialect());
        let st = Statements::numbered_by(&mut numbers);
        let procedures = procedures.then(|| {
            procedures::install(conn.as_mut()).unwrap();
            Procedures::new(&mut numbers).unwrap()
        });
        let side = Side {
            server,
            conn,
            st,
            procedures,
            next_trade_id: std::cell::Cell::new(meta.scale.last_loaded_trade() + 1),
            scratch: Scratch::default(),
        };
        (side, InputGen { meta })
    }

    fn execute(&mut self, input: &Input) -> Outcome {
        let next = || {
            let id = self.next_trade_id.get();
            self.next_trade_id.set(id + 1);
            id
        };
        let c = self.conn.as_mut();
        let done = match &self.procedures {
            Some(p) => procedures::execute(c, p, &self.st, input, &next, &mut self.scratch),
            None => tx::execute(c, &self.st, input, &next, &mut self.scratch),
        };
        done.unwrap_or_else(|e| {
            panic!(
                "{} side: {input:?}: {e}",
                if self.procedures.is_some() {
                    "procedures'"
                } else {
                    "statements'"
                }
            )
        })
    }

    fn table(&mut self, sql: &str) -> Vec<oltplab_workloads::sql::Val> {
        self.conn.query(sql).unwrap().vals
    }
}

fn same_outcome(statements: &mut Side, procedures: &mut Side, input: &Input) -> Outcome {
    let (a, b) = (statements.execute(input), procedures.execute(input));
    assert_eq!(a, b, "{input:?}");
    a
}

fn scenario(kind: ServerKind) {
    if !servers::installed(kind) {
        return;
    }
    let dir = std::env::temp_dir().join(format!(
        "oltplab-wl-bkproc-{}-{}",
        kind.name(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let (mut a, gen) = Side::start(kind, &dir.join("statements"), false);
    let (mut b, _) = Side::start(kind, &dir.join("procedures"), true);

    let mut rng = Rng::new(11);
    let mut kinds = std::collections::BTreeMap::<&str, usize>::new();
    let (mut pending, mut executed, mut triggered, mut rolled_back) =
        (Vec::<String>::new(), 0, 0, 0);
    for i in 0..CUSTOMER_INPUTS {
        let t = InputGen::draw_type(&mut rng);
        *kinds.entry(t.name()).or_default() += 1;
        let mut orders: Vec<Order> = Vec::new();
        match same_outcome(&mut a, &mut b, &gen.draw(t, &mut rng)) {
            Outcome::Submitted(order) => orders.push(order),
            Outcome::Pending { symbol, .. } => pending.push(symbol),
            Outcome::RolledBack => rolled_back += 1,
            _ => {}
        }
        // Every 25 inputs a Market-Feed of the latest limit orders' securities, 3 % down and
        // 3 % up from their last price: it triggers those set within 1 % on that side.
        if i % 25 == 24 && !pending.is_empty() {
            let ticks: Vec<Tick> = pending
                .iter()
                .rev()
                .take(10)
                .enumerate()
                .map(|(k, symbol)| {
                    let last = a
                        .conn
                        .query(&format!(
                            "SELECT lt_price FROM last_trade WHERE lt_s_symb = '{symbol}'"
                        ))
                        .unwrap();
                    let cents = (last.get(0, 0).f64() * 100.0).round() as i64;
                    Tick {
                        symbol: symbol.clone(),
                        price_cents: cents * if k % 2 == 0 { 97 } else { 103 } / 100,
                        qty: 100,
                    }
                })
                .collect();
            if let Outcome::Triggered(t) = same_outcome(&mut a, &mut b, &Input::MarketFeed(ticks)) {
                triggered += t.len();
                orders.extend(t);
            }
        }
        for order in orders {
            if let Outcome::Executed(_) = same_outcome(&mut a, &mut b, &Input::TradeResult(order)) {
                executed += 1;
            }
        }
    }
    eprintln!(
        "{}: {kinds:?}, {} Trade-Results, {triggered} limit orders triggered, {rolled_back} rolled back",
        kind.product(),
        executed
    );
    assert!(executed > 10 && triggered > 0, "the market paths ran");
    for sql in TABLES {
        let (x, y) = (a.table(sql), b.table(sql));
        assert!(!x.is_empty(), "{sql}");
        if x != y {
            let first = x.iter().zip(&y).position(|(p, q)| p != q);
            panic!(
                "{}: the two sides differ ({} against {} values, first difference at {first:?}): {sql}",
                kind.product(),
                x.len(),
                y.len()
            );
        }
    }
    drop((a.conn, b.conn));
    a.server.stop().unwrap();
    b.server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn postgres_procedures_do_what_the_statements_do() {
    scenario(ServerKind::Postgres);
}

#[test]
fn mariadb_procedures_do_what_the_statements_do() {
    scenario(ServerKind::Mariadb);
}
