//! Order entry's transactions as the one driver runs them ([`crate::driver`]): each terminal is
//! a connection with a fixed number of transactions ([`crate::driver::FixedWork`]), all of one
//! mode — an order and its five lines inserted, or a random existing order and its lines
//! updated. The driver's outcome becomes the point's ([`PointOutcome`]).

use std::sync::Mutex;

use super::driver::{PointConfig, PointOutcome, Second, Waits};
use super::{now_us, update_lines_sql, update_order_sql, Line, Mode, NewOrder, Scale};
use super::{Dialect as OeDialect, LINES_PER_ORDER};
use crate::driver::{self, DriverConfig, FixedWork};
use crate::random::Rng;
use crate::sql::{Conn, DbResult, Dialect, ErrorKind, Rows, Stmt, StmtBuilder, TxMode, P};

/// One transaction's input.
pub enum Input {
    Insert(NewOrder),
    /// The order to update.
    Update(i64),
}

struct Statements {
    insert_order: Stmt,
    insert_lines: Stmt,
    update_lines: Stmt,
    update_order: Stmt,
}

/// Order entry as the driver runs it.
pub struct OrderEntry {
    mode: Mode,
    scale: Scale,
    dialect: Dialect,
    st: Statements,
    /// With `record_orders`: the id of every order whose COMMIT returned, warm-up included.
    acknowledged: Option<Mutex<Vec<i64>>>,
}

const INSERT: [&str; 1] = ["insert"];
const UPDATE: [&str; 1] = ["update"];

impl OrderEntry {
    /// Order entry on `dialect` (SQLite only in this version: the servers' connections are
    /// `server::run_point`'s).
    pub fn new(dialect: Dialect, cfg: &PointConfig) -> OrderEntry {
        let mut b = StmtBuilder::new(dialect);
        let oe = match dialect {
            Dialect::Mysql => OeDialect::Mysql,
            Dialect::Postgres => OeDialect::Postgres,
            Dialect::Sqlite => OeDialect::Sqlite,
        };
        let rows = ["(?, ?, ?, ?, ?)"; LINES_PER_ORDER].join(", ");
        // The new order's id: SQLite keeps it on the connection (returning it as a row costs
        // SQLite a temporary table per insert); RETURNING saves the servers a round trip.
        let returning = match dialect {
            Dialect::Sqlite => "",
            _ => " RETURNING o_id",
        };
        let st = Statements {
            insert_order: b.make(&format!(
                "INSERT INTO oe_orders (o_c_id, o_entry_us, o_status, o_total_cents) VALUES (?, ?, 0, ?){returning}"
            )),
            insert_lines: b.make(&format!(
                "INSERT INTO oe_order_lines (ol_o_id, ol_number, ol_p_id, ol_qty, ol_amount_cents) VALUES {rows}"
            )),
            update_lines: Stmt {
                id: b.count(),
                sql: update_lines_sql(oe).to_string(),
            },
            update_order: Stmt {
                id: b.count() + 1,
                sql: update_order_sql(oe).to_string(),
            },
        };
        OrderEntry {
            dialect,
            mode: cfg.mode,
            scale: cfg.scale,
            st,
            acknowledged: cfg.record_orders.then(|| Mutex::new(Vec::new())),
        }
    }

    /// The acknowledged orders (empty without `record_orders`).
    pub fn acknowledged(&self) -> Vec<i64> {
        self.acknowledged
            .as_ref()
            .map(|a| a.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .unwrap_or_default()
    }
}

/// A new order with the driver's generator: five lines, then the customer.
fn draw_order(rng: &mut Rng, scale: &Scale) -> NewOrder {
    let mut line = || Line {
        p_id: rng.uniform(1, i64::from(scale.products)) as u32,
        qty: rng.uniform(1, 10) as u32,
    };
    let lines = [line(), line(), line(), line(), line()];
    NewOrder {
        c_id: rng.uniform(1, i64::from(scale.customers)) as u32,
        lines,
    }
}

impl driver::Workload for OrderEntry {
    type Input = Input;
    /// The inserted order's id.
    type Output = Option<i64>;
    type Terminal = ();
    type Scratch = Rows;

    fn kinds(&self) -> &'static [&'static str] {
        match self.mode {
            Mode::Insert => &INSERT,
            Mode::Update => &UPDATE,
        }
    }

    /// Untagged, as order entry's I/O always was: its one transaction type is the whole window.
    fn tag(&self, _kind: usize) -> u8 {
        0
    }

    fn headline(&self) -> usize {
        0
    }

    /// Order entry's transactions take a few microseconds in memory: its threads are measured
    /// over the window, as its engine CPU always was.
    fn tx_cpu(&self) -> bool {
        false
    }

    fn terminal(&self, _i: usize, _terminals: usize) {}

    fn next(&self, _t: &mut (), rng: &mut Rng) -> (usize, Input) {
        let input = match self.mode {
            Mode::Insert => Input::Insert(draw_order(rng, &self.scale)),
            Mode::Update => Input::Update(rng.uniform(1, i64::from(self.scale.orders))),
        };
        (0, input)
    }

    fn execute(
        &self,
        conn: &mut dyn Conn,
        input: &Input,
        rows: &mut Rows,
    ) -> DbResult<Option<i64>> {
        conn.begin(TxMode::Write)?;
        let inserted = match input {
            Input::Insert(o) => {
                let order = [
                    P::I(i64::from(o.c_id)),
                    P::I(now_us()),
                    P::I(o.total_cents()),
                ];
                conn.run(&self.st.insert_order, &order, rows)?;
                let o_id = match conn.last_insert_id() {
                    Some(id) => id,
                    None => rows.get(0, 0).i64(),
                };
                let mut lines = [P::Null; 5 * LINES_PER_ORDER];
                for (n, l) in o.lines.iter().enumerate() {
                    lines[5 * n..5 * n + 5].copy_from_slice(&[
                        P::I(o_id),
                        P::I(n as i64 + 1),
                        P::I(i64::from(l.p_id)),
                        P::I(i64::from(l.qty)),
                        P::I(l.amount_cents()),
                    ]);
                }
                conn.run(&self.st.insert_lines, &lines, rows)?;
                Some(o_id)
            }
            Input::Update(o_id) => {
                conn.run(&self.st.update_lines, &[P::I(*o_id)], rows)?;
                // MySQL's `?` names the order twice; `$1` once.
                let order = [P::I(*o_id), P::I(*o_id)];
                let n = if self.dialect == Dialect::Mysql { 2 } else { 1 };
                conn.run(&self.st.update_order, &order[..n], rows)?;
                None
            }
        };
        conn.commit()?;
        Ok(inserted)
    }

    fn completed(&self, _kind: usize, out: &Option<i64>, _measured: bool, _measuring: bool) {
        if let (Some(a), Some(o_id)) = (&self.acknowledged, out) {
            a.lock().unwrap_or_else(|p| p.into_inner()).push(*o_id);
        }
    }
}

/// The driver's configuration of a point: its connections as terminals, shared out over
/// `threads`, each with its warm-up and measured transactions.
pub fn driver_config(cfg: &PointConfig, threads: usize) -> DriverConfig {
    DriverConfig {
        terminals: cfg.connections as usize,
        duration: std::time::Duration::ZERO,
        warmup: std::time::Duration::ZERO,
        warmup_auto: false,
        seed: cfg.seed,
        max_retries: cfg.max_retries,
        record_spans: false,
        start_at: None,
        work: Some(FixedWork {
            warmup_tx: cfg.warmup_tx_per_connection,
            tx: cfg.tx_per_connection,
        }),
        threads: Some(threads),
    }
}

/// A second of the driver as order entry reports it; `last`: the window's final, partial
/// second, whose end is its own (the others end on whole seconds).
pub fn second(s: &driver::Second, n: u64, last: bool) -> Second {
    Second {
        t_s: if last { s.t_s } else { n as f64 },
        tx: s.counts.first().copied().unwrap_or(0),
        errors: s.errors,
        retries: s.retries,
        lat_ns_mean: s.headline_lat_ns_mean,
        lat_ns_p99: s.headline_lat_ns_p99,
        active_connections: s.active_terminals as u32,
    }
}

/// What the driver measured, as the point's outcome; the caller adds the waits.
pub fn point_outcome(
    cfg: &PointConfig,
    w: &OrderEntry,
    out: driver::Outcome,
    seconds: Vec<Second>,
    connect_s: f64,
) -> PointOutcome {
    let t = &out.tx[0];
    // A failure no retry cures is `failed`, as order entry always named it.
    let name = |k: &ErrorKind| match k {
        ErrorKind::Other => "failed".to_string(),
        k => k.name().to_string(),
    };
    PointOutcome {
        connections: cfg.connections,
        tx: t.count,
        errors: t.errors,
        retries: t.retries,
        errors_by_kind: out
            .errors_by_kind
            .iter()
            .map(|(k, v)| (name(k), *v))
            .collect(),
        retries_by_kind: out
            .retries_by_kind
            .iter()
            .map(|(k, v)| (name(k), *v))
            .collect(),
        latency: t.latency.clone(),
        elapsed_s: out.measured_s,
        connect_s,
        warmup_s: out.warmup_s,
        seconds,
        waits: Waits::default(),
        first_error: out.first_error.clone(),
        interrupted: out.interrupted,
        engine_cpu: Some(out.in_tx_cpu),
        acknowledged_orders: w.acknowledged(),
    }
}
