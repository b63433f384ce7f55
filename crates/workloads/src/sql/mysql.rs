//! [`Conn`] on MariaDB/MySQL (crate `mysql`, the binary protocol): statements prepared once per
//! connection, autocommit off so that a transaction starts with its first statement (no BEGIN
//! round trip), LOAD DATA LOCAL INFILE for loading (multi-row INSERT where the server refuses it).
//! InnoDB's repeatable read with locking reads (`FOR UPDATE`) gives every transaction the rows it
//! must see.

use std::io::Write as _;
use std::sync::{Arc, Mutex};

use mysql::prelude::Queryable;
use mysql::{Conn as MyClient, LocalInfileHandler, Statement, Value};

use super::{
    civil, Batch, CommitTime, Conn, DbError, DbResult, Dialect, End, ErrorKind, Isolation, Piped,
    Rows, Stmt, TxMode, Val, P,
};

pub struct MyConn {
    conn: MyClient,
    stmts: Vec<Option<Statement>>,
    in_tx: bool,
    /// A statement of the open transaction has run: the server holds the transaction.
    tx_open: bool,
    /// The server is a Galera node (`wsrep_on`).
    galera: bool,
    /// The open transaction writes on a Galera node: it is marked by a savepoint after its first
    /// statement, which COMMIT first releases (see [`MyConn::guarded_commit`]).
    guarded: bool,
    /// What `LOAD DATA LOCAL INFILE` reads: the loader's rows as text. None until the first load,
    /// and after a server refused LOCAL INFILE (then loads are multi-row INSERTs).
    infile: Option<Arc<Mutex<String>>>,
    infile_refused: bool,
    /// The session's level (read-only transactions see one snapshot, see `begin`).
    isolation: Isolation,
    /// The text of the last statement sent with COMMIT, reused.
    text: String,
    /// The open transaction writes (its COMMIT is timed).
    write_tx: bool,
    /// The last write transaction's COMMIT, until taken.
    commit_time: Option<CommitTime>,
}

impl MyConn {
    /// Wraps a connection and turns autocommit off.
    pub fn new(mut conn: MyClient, isolation: Isolation) -> DbResult<Self> {
        // MySQL and MariaDB builds without wsrep have no such variable: not a cluster.
        let galera = conn
            .query_first::<String, _>("SELECT @@wsrep_on")
            .is_ok_and(|on| on.as_deref() == Some("1") || on.as_deref() == Some("ON"));
        conn.query_drop("SET autocommit = 0")
            .map_err(|e| classify(&e))?;
        conn.query_drop(format!(
            "SET SESSION TRANSACTION ISOLATION LEVEL {}",
            isolation.sql()
        ))
        .map_err(|e| classify(&e))?;
        Ok(Self {
            conn,
            stmts: Vec::new(),
            in_tx: false,
            tx_open: false,
            galera,
            guarded: false,
            infile: None,
            infile_refused: false,
            isolation,
            text: String::new(),
            write_tx: false,
            commit_time: None,
        })
    }

    pub fn client(&mut self) -> &mut MyClient {
        &mut self.conn
    }
}

pub fn classify(e: &mysql::Error) -> DbError {
    match e {
        mysql::Error::MySqlError(m) => {
            let kind = match m.code {
                1213 => ErrorKind::Deadlock,
                1205 => ErrorKind::LockTimeout,
                1020 => ErrorKind::Serialization, // "record has changed since last read"
                _ if m.state == super::INTENDED_ROLLBACK_SQLSTATE => ErrorKind::IntendedRollback,
                _ => ErrorKind::Other,
            };
            DbError::new(kind, m.message.clone())
        }
        // A codec error is the packet stream's: a reset or broken socket (a node killed mid-run
        // gave `CodecError { IO error: Connection reset by peer }`) or a garbled packet. Either
        // way the connection is gone, and a cluster's connection moves to another node.
        mysql::Error::IoError(_) | mysql::Error::DriverError(_) | mysql::Error::CodecError(_) => {
            DbError::new(ErrorKind::Connection, e.to_string())
        }
        other => DbError::other(other.to_string()),
    }
}

/// An error of COMMIT. InnoDB takes its locks in the statements, so a deadlock reported by COMMIT
/// itself is Galera's certification failing against another node's transaction.
fn commit_error(e: &mysql::Error) -> DbError {
    let mut err = classify(e);
    if err.kind == ErrorKind::Deadlock {
        err.kind = ErrorKind::CertificationConflict;
    }
    err
}

/// `sql` with each `?` outside quotes replaced by its parameter as an SQL literal.
fn inline(sql: &str, params: &[P], out: &mut String) -> DbResult<()> {
    let mut params = params.iter();
    let mut quoted = false;
    for c in sql.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted => {
                let p = params
                    .next()
                    .ok_or_else(|| DbError::other("a statement has more ? than parameters"))?;
                literal(p, out)?;
            }
            c => out.push(c),
        }
    }
    match params.next() {
        None => Ok(()),
        Some(_) => Err(DbError::other("a statement has fewer ? than parameters")),
    }
}

/// One parameter as an SQL literal that the server reads as the binary protocol's value.
fn literal(p: &P, out: &mut String) -> DbResult<()> {
    use std::fmt::Write;
    match *p {
        P::I(v) => out.push_str(itoa::Buffer::new().format(v)),
        // Shortest text that reads back as the same double; finite in TPC-C's money and rates.
        P::F(v) | P::R(v) if v.is_finite() => {
            let _ = write!(out, "{v}");
        }
        P::F(_) | P::R(_) => return Err(DbError::other("a money or rate value is not finite")),
        P::S(s) => quoted(s, out),
        P::T(us) => {
            out.push_str("TIMESTAMP'");
            super::format_timestamp(us, out);
            out.push('\'');
        }
        P::Null => out.push_str("NULL"),
        P::Ints(_) => return Err(DbError::other("integer arrays are PostgreSQL parameters")),
    }
    Ok(())
}

fn value(p: &P) -> DbResult<Value> {
    Ok(match *p {
        P::I(v) => Value::Int(v),
        P::F(v) | P::R(v) => Value::Double(v),
        P::S(s) => Value::Bytes(s.as_bytes().to_vec()),
        P::T(us) => {
            let (y, mo, d, h, mi, s, frac) = civil(us);
            Value::Date(
                y as u16, mo as u8, d as u8, h as u8, mi as u8, s as u8, frac,
            )
        }
        P::Null => Value::NULL,
        P::Ints(_) => return Err(DbError::other("integer arrays are PostgreSQL parameters")),
    })
}

fn val(v: Value) -> Val {
    match v {
        Value::NULL => Val::Null,
        Value::Int(i) => Val::I(i),
        Value::UInt(u) => Val::I(u as i64),
        Value::Float(f) => Val::F(f as f64),
        Value::Double(f) => Val::F(f),
        Value::Bytes(b) => Val::S(String::from_utf8_lossy(&b).into_owned()),
        Value::Date(..) | Value::Time(..) => Val::I(0),
    }
}

/// Rows of one result set of a multi-statement query into `out`; the rows changed, or returned.
fn collect_set<T: mysql::prelude::Protocol>(
    set: &mut mysql::ResultSet<'_, '_, '_, '_, T>,
    out: &mut Rows,
) -> DbResult<u64> {
    let ncols = set.columns().as_ref().len();
    let affected = set.affected_rows();
    fill(out, ncols, affected, set.by_ref())
}

fn collect<T: mysql::prelude::Protocol>(
    result: &mut mysql::QueryResult<'_, '_, '_, T>,
    out: &mut Rows,
) -> DbResult<u64> {
    let ncols = result.columns().as_ref().len();
    // Before the rows are read: afterwards the result has moved past its OK packet.
    let affected = result.affected_rows();
    fill(out, ncols, affected, result.by_ref())
}

/// `rows` into `out`; the rows changed (`affected`, for a statement without columns), or returned.
fn fill(
    out: &mut Rows,
    ncols: usize,
    affected: u64,
    rows: impl Iterator<Item = mysql::Result<mysql::Row>>,
) -> DbResult<u64> {
    out.clear();
    out.ncols = ncols;
    let mut n = 0;
    for row in rows {
        let row = row.map_err(|e| classify(&e))?;
        for v in row.unwrap() {
            out.vals.push(val(v));
        }
        n += 1;
    }
    Ok(if ncols == 0 { affected } else { n })
}

/// `s` as a quoted string literal (with the server's default sql_mode: backslash escapes on).
fn quoted(s: &str, out: &mut String) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// Row `row`, column `col` of `batch` as an SQL literal.
fn sql_literal(batch: &Batch, row: usize, col: usize, out: &mut String) {
    match batch.value(row, col) {
        P::S(s) => quoted(s, out),
        P::T(us) => {
            out.push('\'');
            super::format_timestamp(us, out);
            out.push('\'');
        }
        P::Null => out.push_str("NULL"),
        // Numbers are written as in the text format.
        _ => batch.text_value(row, col, out),
    }
}

/// Multi-row INSERT statements stay below this many bytes (MariaDB's max_allowed_packet is 16 MiB
/// or more).
const INSERT_BYTES_MAX: usize = 1 << 20;

impl Conn for MyConn {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn begin(&mut self, mode: TxMode) -> DbResult<()> {
        // A read-only transaction sees one snapshot whatever the level asked for: at READ
        // COMMITTED InnoDB takes a new one per statement. This sets the next transaction's level.
        if mode != TxMode::Write && self.isolation == Isolation::ReadCommitted {
            self.conn
                .query_drop("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                .map_err(|e| classify(&e))?;
        }
        // autocommit = 0: the first statement starts the transaction.
        self.in_tx = true;
        self.tx_open = false;
        self.guarded = self.galera && mode == TxMode::Write;
        self.write_tx = mode == TxMode::Write;
        Ok(())
    }

    /// On a Galera node the savepoint's release goes first, in its own round trip, and is not
    /// part of the time: the COMMIT alone is what replicates and certifies.
    fn commit(&mut self) -> DbResult<()> {
        self.in_tx = false;
        let ran = std::mem::take(&mut self.tx_open);
        if ran && self.guarded {
            self.guarded_commit()?;
        }
        let sent = std::time::Instant::now();
        self.conn
            .query_drop("COMMIT")
            .map_err(|e| commit_error(&e))?;
        if ran && std::mem::take(&mut self.write_tx) {
            self.commit_time = Some(CommitTime {
                ns: sent.elapsed().as_nanos() as u64,
                with_statement: false,
            });
        }
        Ok(())
    }

    fn rollback(&mut self) -> DbResult<()> {
        self.in_tx = false;
        self.tx_open = false;
        self.write_tx = false;
        self.conn.query_drop("ROLLBACK").map_err(|e| classify(&e))
    }

    fn run(&mut self, stmt: &Stmt, params: &[P], out: &mut Rows) -> DbResult<u64> {
        if self.stmts.len() <= stmt.id {
            self.stmts.resize(stmt.id + 1, None);
        }
        if self.stmts[stmt.id].is_none() {
            let prepared = self.conn.prep(&stmt.sql).map_err(|e| classify(&e))?;
            self.stmts[stmt.id] = Some(prepared);
        }
        let prepared = self.stmts[stmt.id].as_ref().expect("prepared above");
        let values = params.iter().map(value).collect::<DbResult<Vec<Value>>>()?;
        let mut result = self
            .conn
            .exec_iter(prepared, mysql::Params::Positional(values))
            .map_err(|e| classify(&e))?;
        let first = self.in_tx && !self.tx_open;
        self.tx_open = self.in_tx;
        let n = collect(&mut result, out)?;
        drop(result);
        if first && self.guarded {
            self.conn
                .query_drop(SET_TX_MARK)
                .map_err(|e| classify(&e))?;
        }
        Ok(n)
    }

    /// The statements before the last one run as prepared statements; the last one goes with
    /// COMMIT in one multi-statement text query (one round trip instead of two), its parameters
    /// written as literals. Not on a Galera node, whose COMMIT first releases the transaction's
    /// savepoint (see [`MyConn::guarded_commit`]).
    fn pipeline(&mut self, stmts: &mut [Piped<'_, '_>], end: End) -> DbResult<()> {
        let Some((last, before)) = stmts.split_last_mut() else {
            return match end {
                End::Open => Ok(()),
                End::Commit => self.commit(),
                End::Rollback => self.rollback(),
            };
        };
        for p in before.iter_mut() {
            p.count = self.run(p.stmt, p.params, p.out)?;
        }
        if end != End::Commit || self.guarded || !self.in_tx {
            last.count = self.run(last.stmt, last.params, last.out)?;
            return match end {
                End::Open => Ok(()),
                End::Commit => self.commit(),
                End::Rollback => self.rollback(),
            };
        }
        let mut sql = std::mem::take(&mut self.text);
        sql.clear();
        let inlined = inline(&last.stmt.sql, last.params, &mut sql);
        let done = inlined.and_then(|()| {
            sql.push_str("; COMMIT");
            self.run_then_commit(&sql, last.out)
        });
        self.text = sql;
        last.count = done?;
        Ok(())
    }

    fn take_commit_time(&mut self) -> Option<CommitTime> {
        self.commit_time.take()
    }

    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.conn.query_drop(sql).map_err(|e| classify(&e))?;
        if !self.in_tx {
            self.conn.query_drop("COMMIT").map_err(|e| classify(&e))?;
        }
        Ok(())
    }

    fn query(&mut self, sql: &str) -> DbResult<Rows> {
        let mut out = Rows::default();
        {
            let mut result = self.conn.query_iter(sql).map_err(|e| classify(&e))?;
            collect(&mut result, &mut out)?;
        }
        if !self.in_tx {
            self.conn.query_drop("COMMIT").map_err(|e| classify(&e))?;
        }
        Ok(out)
    }

    fn load(&mut self, batch: &Batch) -> DbResult<()> {
        if !self.infile_refused {
            match self.load_data(batch) {
                // The server (or its settings) does not take LOAD DATA LOCAL INFILE.
                Err(mysql::Error::MySqlError(e)) if matches!(e.code, 1148 | 3948 | 4166) => {
                    self.infile_refused = true;
                }
                done => return done.map_err(|e| classify(&e)),
            }
        }
        self.insert_rows(batch)
    }
}

/// The savepoint that marks a transaction on a Galera node, set and released.
const SET_TX_MARK: &str = "SAVEPOINT oltplab_tx";
const RELEASE_TX_MARK: &str = "RELEASE SAVEPOINT oltplab_tx";

impl MyConn {
    /// Runs `sql`, a statement followed by `; COMMIT`: the statement's rows into `out`; its count.
    /// A failed statement stops the query before COMMIT, so the transaction is still open (the
    /// caller rolls it back), as when the two are sent apart. The round trip is the commit's
    /// time, the statement's execution included (`with_statement`).
    fn run_then_commit(&mut self, sql: &str, out: &mut Rows) -> DbResult<u64> {
        self.tx_open = true;
        let sent = std::time::Instant::now();
        let n = {
            let mut result = self.conn.query_iter(sql).map_err(|e| classify(&e))?;
            let n = match result.iter() {
                Some(mut set) => collect_set(&mut set, out)?,
                None => 0,
            };
            // The COMMIT's result: an error there is the commit's (see `commit`).
            while let Some(set) = result.iter() {
                for row in set {
                    row.map_err(|e| commit_error(&e))?;
                }
            }
            n
        };
        if std::mem::take(&mut self.write_tx) {
            self.commit_time = Some(CommitTime {
                ns: sent.elapsed().as_nanos() as u64,
                with_statement: true,
            });
        }
        self.in_tx = false;
        self.tx_open = false;
        Ok(n)
    }

    /// Before COMMIT on a Galera node: releases the transaction's savepoint, which fails if the
    /// server no longer holds the transaction that set it. A node aborts a local transaction whose
    /// row locks a replicated write-set needs (a brute-force abort) and should report it to the
    /// client's next command; after a node was killed mid-run, MariaDB 10.11 with Galera 4.23
    /// once answered every command of a New-Order with success, rolled back its first
    /// statements, ran the rest in a new implicit transaction (autocommit is off) and committed
    /// that — half a transaction, durable on every node (docs/cluster.md). Without its savepoint
    /// the transaction is not the one the driver began: it is rolled back and retried.
    fn guarded_commit(&mut self) -> DbResult<()> {
        match self.conn.query_drop(RELEASE_TX_MARK) {
            Ok(()) => Ok(()),
            // ER_SP_DOES_NOT_EXIST: "SAVEPOINT … does not exist".
            Err(mysql::Error::MySqlError(e)) if e.code == 1305 => Err(DbError::new(
                ErrorKind::AbortedUnreported,
                "the server rolled the transaction back between its statements without reporting \
                 it (Galera); what ran after that is rolled back too",
            )),
            Err(e) => Err(classify(&e)),
        }
    }

    /// LOAD DATA LOCAL INFILE from the rows as text: the server parses far less than for INSERT.
    /// The text is UTF-8 already, so the server is told not to convert it (CHARACTER SET binary):
    /// that saves it a tenth of its CPU per row, and the bytes land unchanged in utf8mb4 columns
    /// (the separators tab, newline and backslash never occur inside a UTF-8 multi-byte character).
    fn load_data(&mut self, batch: &Batch) -> mysql::Result<()> {
        let infile = match &self.infile {
            Some(f) => f.clone(),
            None => {
                let f = Arc::new(Mutex::new(String::new()));
                let source = f.clone();
                // Whatever file name the server asks for, it gets the rows of this load.
                self.conn
                    .set_local_infile_handler(Some(LocalInfileHandler::new(move |_, out| {
                        let text = source.lock().unwrap_or_else(|p| p.into_inner());
                        out.write_all(text.as_bytes())
                    })));
                self.infile = Some(f.clone());
                f
            }
        };
        // A column with one value in all rows (a chunk's warehouse and district, the load's
        // timestamp) goes once into the statement's SET, not once per row into the text: the
        // server reads its text byte by byte, and this spares it a few percent of its CPU.
        let mut constant = batch.constant_columns();
        if constant.iter().all(|&c| c) {
            constant[0] = false; // LOAD DATA needs one column to read
        }
        let read: Vec<usize> = (0..batch.columns.len()).filter(|&c| !constant[c]).collect();
        {
            let mut text = infile.lock().unwrap_or_else(|p| p.into_inner());
            text.clear();
            for row in 0..batch.rows() {
                batch.text_row_of(row, &read, &mut text);
            }
        }
        let mut sql = format!(
            "LOAD DATA LOCAL INFILE '{}' INTO TABLE {} CHARACTER SET binary (",
            batch.table, batch.table
        );
        for (i, &c) in read.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(batch.columns[c]);
        }
        sql.push(')');
        let mut first = true;
        for c in (0..batch.columns.len()).filter(|&c| constant[c]) {
            sql.push_str(if first { " SET " } else { ", " });
            first = false;
            sql.push_str(batch.columns[c]);
            sql.push_str(" = ");
            if matches!(batch.value(0, c), P::T(_)) {
                sql.push_str("TIMESTAMP"); // a typed literal: no string to parse per row
            }
            sql_literal(batch, 0, c, &mut sql);
        }
        let done = self.conn.query_drop(&sql);
        infile.lock().unwrap_or_else(|p| p.into_inner()).clear();
        done
    }

    fn insert_rows(&mut self, batch: &Batch) -> DbResult<()> {
        let head = format!(
            "INSERT INTO {} ({}) VALUES ",
            batch.table,
            batch.columns.join(", ")
        );
        let mut sql = String::with_capacity(INSERT_BYTES_MAX + 4096);
        for row in 0..batch.rows() {
            if sql.is_empty() {
                sql.push_str(&head);
            } else {
                sql.push(',');
            }
            sql.push('(');
            for col in 0..batch.columns.len() {
                if col > 0 {
                    sql.push(',');
                }
                sql_literal(batch, row, col, &mut sql);
            }
            sql.push(')');
            if sql.len() >= INSERT_BYTES_MAX {
                self.conn.query_drop(&sql).map_err(|e| classify(&e))?;
                sql.clear();
            }
        }
        if !sql.is_empty() {
            self.conn.query_drop(&sql).map_err(|e| classify(&e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inlined(sql: &str, params: &[P]) -> DbResult<String> {
        let mut out = String::new();
        inline(sql, params, &mut out).map(|()| out)
    }

    #[test]
    fn parameters_become_literals_and_question_marks_in_quotes_stay() {
        assert_eq!(
            inlined(
                "INSERT INTO t VALUES (?, ?, '?', ?, ?, ?)",
                &[P::I(-7), P::S("it's \\ here"), P::F(12.5), P::T(0), P::Null],
            )
            .unwrap(),
            "INSERT INTO t VALUES (-7, 'it''s \\\\ here', '?', 12.5, TIMESTAMP'1970-01-01 00:00:00', NULL)"
        );
        assert_eq!(inlined("x = ?", &[P::R(0.1234)]).unwrap(), "x = 0.1234");
    }

    #[test]
    fn a_broken_packet_stream_is_a_lost_connection() {
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let e = mysql::Error::CodecError(reset.into());
        assert_eq!(classify(&e).kind, ErrorKind::Connection, "{e}");
    }

    #[test]
    fn a_count_that_does_not_match_is_an_error_not_a_statement() {
        assert!(inlined("x = ? AND y = ?", &[P::I(1)]).is_err());
        assert!(inlined("x = ?", &[P::I(1), P::I(2)]).is_err());
        assert!(inlined("x = ?", &[P::Ints(&[1])]).is_err());
        assert!(inlined("x = ?", &[P::F(f64::NAN)]).is_err());
    }
}
