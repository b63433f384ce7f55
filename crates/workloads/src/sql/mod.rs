//! One small interface over the three engines, so that each TPC-C transaction is written once: run a
//! statement (cached and prepared per connection) with typed parameters, collect rows, begin, commit,
//! roll back, and bulk-load rows the engine's fastest way. Errors are classified, because the driver
//! retries serialization failures, deadlocks and busy databases but nothing else.

pub mod mysql;
pub mod postgres;
pub mod sqlite;

use std::fmt;

/// Which SQL the engine speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Sqlite,
    Postgres,
    Mysql,
}

impl Dialect {
    /// `UPDATE … RETURNING` and `DELETE … RETURNING` save a round trip; MariaDB/MySQL lack them.
    pub fn returning(self) -> bool {
        !matches!(self, Dialect::Mysql)
    }

    /// Row locks for read-then-write; SQLite serialises writers instead.
    pub fn for_update(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            _ => " FOR UPDATE",
        }
    }

    /// Rewrites `?` placeholders into the engine's form (`$1, $2 …` for PostgreSQL).
    pub fn sql(self, text: &str) -> String {
        match self {
            Dialect::Postgres => {
                let mut out = String::with_capacity(text.len() + 16);
                let mut n = 0;
                for c in text.chars() {
                    if c == '?' {
                        n += 1;
                        out.push('$');
                        out.push_str(&n.to_string());
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            _ => text.to_string(),
        }
    }
}

/// A statement parameter. Money is `F` (two decimals), rates `R` (four), times `T` (µs since epoch).
/// `Ints` is an integer array, which only PostgreSQL takes (`unnest($1::int4[])`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum P<'a> {
    I(i64),
    F(f64),
    R(f64),
    S(&'a str),
    T(i64),
    Ints(&'a [i64]),
    Null,
}

/// A result value. Times come back as `I` (µs since epoch) or are not read at all.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    I(i64),
    F(f64),
    S(String),
    Null,
}

impl Val {
    pub fn i64(&self) -> i64 {
        match self {
            Val::I(v) => *v,
            Val::F(v) => *v as i64,
            Val::S(s) => s.trim().parse().unwrap_or(0),
            Val::Null => 0,
        }
    }

    pub fn f64(&self) -> f64 {
        match self {
            Val::I(v) => *v as f64,
            Val::F(v) => *v,
            Val::S(s) => s.trim().parse().unwrap_or(0.0),
            Val::Null => 0.0,
        }
    }

    pub fn str(&self) -> &str {
        match self {
            Val::S(s) => s,
            _ => "",
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Val::Null)
    }
}

/// Rows of one result, flat, reused between statements to avoid allocating.
#[derive(Default, Debug)]
pub struct Rows {
    pub vals: Vec<Val>,
    pub ncols: usize,
}

impl Rows {
    pub fn clear(&mut self) {
        self.vals.clear();
        self.ncols = 0;
    }

    pub fn len(&self) -> usize {
        self.vals.len().checked_div(self.ncols).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, row: usize, col: usize) -> &Val {
        &self.vals[row * self.ncols + col]
    }
}

/// A cached statement: a stable id (for the per-connection cache) and its SQL in the engine's form.
#[derive(Clone, Debug)]
pub struct Stmt {
    pub id: usize,
    pub sql: String,
}

/// Numbers statements as they are made.
#[derive(Default)]
pub struct StmtBuilder {
    next: usize,
    pub dialect: Option<Dialect>,
}

impl StmtBuilder {
    pub fn new(dialect: Dialect) -> Self {
        Self {
            next: 0,
            dialect: Some(dialect),
        }
    }

    pub fn make(&mut self, text: &str) -> Stmt {
        let id = self.next;
        self.next += 1;
        Stmt {
            id,
            sql: self.dialect.expect("builder has a dialect").sql(text),
        }
    }

    pub fn count(&self) -> usize {
        self.next
    }
}

/// Why a statement failed, as far as the driver is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A serialization failure (PostgreSQL 40001): retried.
    Serialization,
    /// A deadlock (PostgreSQL 40P01, MySQL 1213): retried.
    Deadlock,
    /// A multi-primary cluster (Galera) refused the transaction at its commit: another node's
    /// transaction certified first on the same rows (MySQL 1213 from COMMIT): retried.
    CertificationConflict,
    /// A cluster's node went away and the connection moved to another node: retried there.
    NodeFailover,
    /// A cluster's node rolled the transaction back between its statements without saying so
    /// (found at COMMIT, see `sql::mysql`): retried.
    AbortedUnreported,
    /// A lock wait timed out (MySQL 1205, PostgreSQL 55P03): retried.
    LockTimeout,
    /// SQLite's database is locked by another writer (SQLITE_BUSY): retried.
    Busy,
    /// A server-side procedure rolled its transaction back as the workload asked (TPC-C
    /// New-Order's 1 %, SQLSTATE [`INTENDED_ROLLBACK_SQLSTATE`]): the workload's outcome, which
    /// it turns into one before the driver sees an error.
    IntendedRollback,
    /// The connection broke: fatal.
    Connection,
    /// Anything else: fatal.
    Other,
}

impl ErrorKind {
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::Serialization
                | ErrorKind::Deadlock
                | ErrorKind::CertificationConflict
                | ErrorKind::NodeFailover
                | ErrorKind::AbortedUnreported
                | ErrorKind::LockTimeout
                | ErrorKind::Busy
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Serialization => "serialization",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::CertificationConflict => "certification_conflict",
            ErrorKind::NodeFailover => "node_failover",
            ErrorKind::AbortedUnreported => "aborted_unreported",
            ErrorKind::LockTimeout => "lock_timeout",
            ErrorKind::Busy => "busy",
            ErrorKind::IntendedRollback => "intended_rollback",
            ErrorKind::Connection => "connection",
            ErrorKind::Other => "other",
        }
    }
}

/// The SQLSTATE a procedure raises to roll back on purpose ([`ErrorKind::IntendedRollback`]).
pub const INTENDED_ROLLBACK_SQLSTATE: &str = "OLRB1";

#[derive(Clone, Debug)]
pub struct DbError {
    pub kind: ErrorKind,
    pub message: String,
}

impl DbError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    pub fn other(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Other, message)
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

pub type DbResult<T> = Result<T, DbError>;

/// Runs one server-side call (a function's SELECT, a procedure's CALL) as a whole transaction in
/// one round trip: begun in `mode`, committed with it. Its rows land in `out`. Returns false when
/// the server-side code ended in the intended rollback (SQLSTATE OLRB1), rolled back: PostgreSQL's
/// failed call already ended its transaction; MariaDB's query stopped before its COMMIT, with the
/// work still to undo. On another error the caller rolls back.
pub fn call_transaction(
    conn: &mut dyn Conn,
    mode: TxMode,
    call: &Stmt,
    params: &[P],
    out: &mut Rows,
) -> DbResult<bool> {
    conn.begin(mode)?;
    match conn.pipeline(&mut [Piped::new(call, params, out)], End::Commit) {
        Err(DbError {
            kind: ErrorKind::IntendedRollback,
            ..
        }) => {
            if conn.dialect() == Dialect::Mysql {
                conn.rollback()?;
            }
            Ok(false)
        }
        done => done.map(|()| true),
    }
}

/// How a transaction starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxMode {
    /// Writes (SQLite: BEGIN IMMEDIATE, after the in-process writer lock).
    Write,
    /// Reads only (SQLite: a deferred WAL snapshot; the servers: READ ONLY at the connection's
    /// isolation level, one snapshot for all its statements).
    Read,
    /// Reads only, in one statement that sees one snapshot by itself: a SELECT, or a call of a
    /// STABLE PostgreSQL function (which reads with its caller's snapshot and cannot write).
    /// Sent with its COMMIT, PostgreSQL runs it alone as an implicit transaction — one answer to
    /// wait for instead of three; otherwise, and on the other engines, it is a [`TxMode::Read`].
    ReadStatement,
}

/// The isolation level a server connection runs its write transactions at; read-only ones always
/// see one snapshot (REPEATABLE READ READ ONLY, or SERIALIZABLE). TPC-C asks for level 3 (clause
/// 3.4.1: no dirty, non-repeatable or phantom reads among New-Order, Payment, Delivery and
/// Order-Status). Each engine's default reaches it through locking reads: every row a write
/// transaction reads and depends on is read by the statement that locks and changes it
/// (PostgreSQL `UPDATE … RETURNING` at READ COMMITTED; MariaDB `FOR UPDATE` at REPEATABLE READ),
/// the other rows it reads never change during a run (items, names, discounts). REPEATABLE READ
/// and SERIALIZABLE on PostgreSQL add snapshot isolation's serialization failures, which the
/// driver retries and counts. SQLite is always serializable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    pub const ALL: [Isolation; 3] = [
        Isolation::ReadCommitted,
        Isolation::RepeatableRead,
        Isolation::Serializable,
    ];

    /// `read-committed`, … (the command line's and the result's name).
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read-committed",
            Isolation::RepeatableRead => "repeatable-read",
            Isolation::Serializable => "serializable",
        }
    }

    /// `READ COMMITTED`, … (SQL).
    pub fn sql(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
            Isolation::Serializable => "SERIALIZABLE",
        }
    }

    pub fn parse(name: &str) -> Option<Isolation> {
        Isolation::ALL.into_iter().find(|i| i.name() == name)
    }

    /// The engine's level for TPC-C when none is asked for (see the type's comment).
    pub fn default_for(dialect: Dialect) -> Isolation {
        match dialect {
            Dialect::Postgres => Isolation::ReadCommitted,
            Dialect::Mysql => Isolation::RepeatableRead,
            Dialect::Sqlite => Isolation::Serializable,
        }
    }
}

/// A batch of rows for one table, generated by the loader. The strings of all rows sit back to
/// back in one buffer, so that a chunk of a million values costs a few allocations, not one per
/// string (the loader's client CPU competes with the server on a small machine).
#[derive(Debug)]
pub struct Batch {
    pub table: &'static str,
    pub columns: &'static [&'static str],
    /// `columns.len()` values per row, row after row.
    vals: Vec<Slot>,
    strings: String,
    /// Whether some string holds a byte the text format escapes; found by one scan of `strings`.
    escapes: std::cell::OnceCell<bool>,
}

/// Batches are equal when they hold the same rows of the same table.
impl PartialEq for Batch {
    fn eq(&self, other: &Self) -> bool {
        self.table == other.table
            && self.columns == other.columns
            && self.vals.len() == other.vals.len()
            && (0..self.rows()).all(|r| self.row(r).eq(other.row(r)))
    }
}

/// A stored load value; strings are byte ranges of [`Batch::strings`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    I(i64),
    F(f64),
    R(f64),
    S(u32, u32),
    T(i64),
    Null,
}

impl Batch {
    pub fn new(table: &'static str, columns: &'static [&'static str], rows: usize) -> Self {
        Self {
            table,
            columns,
            vals: Vec::with_capacity(rows * columns.len()),
            strings: String::new(),
            escapes: std::cell::OnceCell::new(),
        }
    }

    pub fn rows(&self) -> usize {
        self.vals.len() / self.columns.len()
    }

    /// An integer.
    pub fn int(&mut self, v: i64) {
        self.vals.push(Slot::I(v));
    }

    /// Money: two decimals.
    pub fn money(&mut self, v: f64) {
        self.vals.push(Slot::F(v));
    }

    /// A rate: four decimals.
    pub fn rate(&mut self, v: f64) {
        self.vals.push(Slot::R(v));
    }

    /// A time, µs since the epoch.
    pub fn time(&mut self, us: i64) {
        self.vals.push(Slot::T(us));
    }

    pub fn null(&mut self) {
        self.vals.push(Slot::Null);
    }

    pub fn str(&mut self, s: &str) {
        self.str_with(|out| out.push_str(s));
    }

    /// A string that `fill` appends to the batch's buffer (a generator writes it in place).
    pub fn str_with(&mut self, fill: impl FnOnce(&mut String)) {
        self.escapes.take();
        let start = self.strings.len();
        fill(&mut self.strings);
        let end = self.strings.len();
        // A batch is one chunk of a load: megabytes, never 4 GiB.
        self.vals.push(Slot::S(start as u32, end as u32));
    }

    /// The value of row `row`, column `col`.
    pub fn value(&self, row: usize, col: usize) -> P<'_> {
        self.param(self.vals[row * self.columns.len() + col])
    }

    /// Row `row`'s values, as statement parameters.
    pub fn row(&self, row: usize) -> impl ExactSizeIterator<Item = P<'_>> + '_ {
        let n = self.columns.len();
        self.vals[row * n..(row + 1) * n]
            .iter()
            .map(|v| self.param(*v))
    }

    fn param(&self, v: Slot) -> P<'_> {
        match v {
            Slot::I(v) => P::I(v),
            Slot::F(v) => P::F(v),
            Slot::R(v) => P::R(v),
            Slot::S(a, b) => P::S(&self.strings[a as usize..b as usize]),
            Slot::T(v) => P::T(v),
            Slot::Null => P::Null,
        }
    }

    /// Row `row` in the tab-separated text that PostgreSQL's COPY and MariaDB's LOAD DATA read
    /// by default (backslash escapes, `\N` for NULL), ended by a newline.
    pub fn text_row(&self, row: usize, out: &mut String) {
        let n = self.columns.len();
        for (i, v) in self.vals[row * n..(row + 1) * n].iter().enumerate() {
            if i > 0 {
                out.push('\t');
            }
            self.text_slot(*v, out);
        }
        out.push('\n');
    }

    /// Row `row`'s values of the columns in `cols` only, as in [`Batch::text_row`].
    pub fn text_row_of(&self, row: usize, cols: &[usize], out: &mut String) {
        let n = self.columns.len();
        for (i, &c) in cols.iter().enumerate() {
            if i > 0 {
                out.push('\t');
            }
            self.text_slot(self.vals[row * n + c], out);
        }
        out.push('\n');
    }

    /// Whether each column holds one value in every row (a chunk's warehouse and district, a
    /// load's timestamp): a loader can send such a value once instead of once per row. False for
    /// all columns of a batch with fewer than two rows.
    pub fn constant_columns(&self) -> Vec<bool> {
        let n = self.columns.len();
        let rows = self.rows();
        (0..n)
            .map(|c| {
                rows > 1 && {
                    let first = self.value(0, c);
                    (1..rows).all(|r| self.value(r, c) == first)
                }
            })
            .collect()
    }

    /// The value of row `row`, column `col` as in [`Batch::text_row`].
    pub fn text_value(&self, row: usize, col: usize, out: &mut String) {
        self.text_slot(self.vals[row * self.columns.len() + col], out);
    }

    fn text_slot(&self, v: Slot, out: &mut String) {
        match v {
            Slot::I(i) => out.push_str(itoa::Buffer::new().format(i)),
            Slot::F(f) => push_fixed(f, 2, out),
            Slot::R(f) => push_fixed(f, 4, out),
            Slot::S(a, b) => {
                let s = &self.strings[a as usize..b as usize];
                // TPC-C's strings never need escaping: one scan of the whole batch (without an
                // early exit, so that it vectorises) spares a check per value.
                let escapes = *self.escapes.get_or_init(|| {
                    self.strings.bytes().fold(false, |any, b| {
                        any | matches!(b, b'\\' | b'\t' | b'\n' | b'\r')
                    })
                });
                if !escapes {
                    out.push_str(s);
                    return;
                }
                for c in s.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '\t' => out.push_str("\\t"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        c => out.push(c),
                    }
                }
            }
            Slot::T(us) => format_timestamp(us, out),
            Slot::Null => out.push_str("\\N"),
        }
    }
}

/// `f` with `decimals` digits after the point, rounded half away from zero — what `{f:.2}` writes
/// for the loader's money and rates, without the formatter's exact-decimal machinery.
fn push_fixed(f: f64, decimals: u32, out: &mut String) {
    let unit = 10u64.pow(decimals);
    let scaled = (f * unit as f64).round();
    if scaled.is_nan() || scaled.abs() >= 1e15 {
        use std::fmt::Write;
        let _ = write!(out, "{f:.*}", decimals as usize);
        return;
    }
    if scaled < 0.0 {
        out.push('-');
    }
    let n = scaled.abs() as u64;
    out.push_str(itoa::Buffer::new().format(n / unit));
    out.push('.');
    push_padded(n % unit, decimals as usize, out);
}

/// `n` in decimal, zero-padded on the left to `width` digits.
fn push_padded(n: u64, width: usize, out: &mut String) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(n);
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(digits);
}

/// A write transaction's COMMIT as the client timed it: from sending it to its answer. Read-only
/// transactions are not timed (their COMMIT writes nothing, and on a cluster replicates nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitTime {
    pub ns: u64,
    /// The transaction's last statement went in the same round trip (MariaDB's statement sent
    /// with `; COMMIT`, PostgreSQL's pipeline), so `ns` includes that statement's execution.
    pub with_statement: bool,
}

/// What a connection is for; engines tune settings to it (SQLite loads without a journal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    Load,
    Run,
    Check,
}

/// One statement of a [`Conn::pipeline`]: its parameters, where its rows go and, once it ran, its
/// count (rows changed, or returned).
pub struct Piped<'a, 'p> {
    pub stmt: &'a Stmt,
    pub params: &'a [P<'p>],
    pub out: &'a mut Rows,
    pub count: u64,
}

impl<'a, 'p> Piped<'a, 'p> {
    pub fn new(stmt: &'a Stmt, params: &'a [P<'p>], out: &'a mut Rows) -> Self {
        Self {
            stmt,
            params,
            out,
            count: 0,
        }
    }
}

/// What a [`Conn::pipeline`] does with the transaction after its statements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Leaves it open.
    Open,
    Commit,
    Rollback,
}

/// Opens connections to one database.
pub trait Connector: Send + Sync {
    fn dialect(&self) -> Dialect;
    fn connect(&self, purpose: Purpose) -> oltplab_core::Result<Box<dyn Conn>>;
    /// True when the engine admits one writer at a time (SQLite): the loader then funnels all
    /// chunks through one connection while other threads generate data.
    fn single_writer(&self) -> bool {
        false
    }
    /// Engine-specific work after the data is in (SQLite: switch to WAL).
    fn after_load(&self, _conn: &mut dyn Conn) -> oltplab_core::Result<()> {
        Ok(())
    }
}

/// One connection to the database under test.
pub trait Conn: Send {
    fn dialect(&self) -> Dialect;
    fn begin(&mut self, mode: TxMode) -> DbResult<()>;
    fn commit(&mut self) -> DbResult<()>;
    fn rollback(&mut self) -> DbResult<()>;
    /// Runs a cached statement; rows it returns land in `out` (cleared first). Returns the number
    /// of rows changed, or returned if the statement returns rows.
    fn run(&mut self, stmt: &Stmt, params: &[P], out: &mut Rows) -> DbResult<u64>;
    /// Runs statements whose parameters do not depend on each other's results, in order, then
    /// ends the transaction as `end` says. The servers send them together where the protocol
    /// allows (PostgreSQL: one round trip for all of them, the COMMIT and a pending BEGIN); the
    /// default runs them one by one. On an error the statements after the failed one may have
    /// run or not, and the transaction is to be rolled back (a COMMIT sent along has already
    /// ended it without committing).
    fn pipeline(&mut self, stmts: &mut [Piped<'_, '_>], end: End) -> DbResult<()> {
        for p in stmts.iter_mut() {
            p.count = self.run(p.stmt, p.params, p.out)?;
        }
        match end {
            End::Open => Ok(()),
            End::Commit => self.commit(),
            End::Rollback => self.rollback(),
        }
    }
    /// Runs SQL without parameters or caching (DDL, checks).
    fn batch(&mut self, sql: &str) -> DbResult<()>;
    /// Runs an uncached query without parameters and returns its rows.
    fn query(&mut self, sql: &str) -> DbResult<Rows>;
    /// Loads rows in the engine's fastest way; the caller brackets a chunk with begin/commit.
    fn load(&mut self, batch: &Batch) -> DbResult<()>;
    /// Nanoseconds this connection has waited so far to start write transactions, where the
    /// engine takes a database-wide writer lock there (SQLite); 0 where locks are taken row by row
    /// inside the transaction (the servers: their waits are sampled from the server instead).
    fn writer_lock_wait_ns(&self) -> u64 {
        0
    }
    /// The round trip of the last write transaction's successful COMMIT, once (None afterwards,
    /// and where the engine does not time it).
    fn take_commit_time(&mut self) -> Option<CommitTime> {
        None
    }
    /// The key the connection's last INSERT gave its row (SQLite's rowid), where the engine keeps
    /// it without a round trip; None elsewhere (use `RETURNING`).
    fn last_insert_id(&self) -> Option<i64> {
        None
    }
}

/// A failed statement outside a measured transaction: the database is unusable for the workload.
pub fn db_failed(context: &str, e: DbError) -> oltplab_core::Error {
    oltplab_core::Error::failed(format!("{context}: {e}"))
}

fn all_tables_sql(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Sqlite => {
            // Every database file's: a layout's placed tables live in attached files of their own.
            "SELECT DISTINCT name FROM pragma_table_list WHERE schema <> 'temp' AND type = 'table' AND name NOT LIKE 'sqlite_%'"
        }
        Dialect::Postgres => {
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()"
        }
        Dialect::Mysql => {
            "SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE()"
        }
    }
}

/// The names of the database's tables (every attached file's, on SQLite).
pub fn table_names(conn: &mut dyn Conn) -> oltplab_core::Result<Vec<String>> {
    let rows = conn
        .query(all_tables_sql(conn.dialect()))
        .map_err(|e| db_failed("cannot list the database's tables", e))?;
    Ok((0..rows.len())
        .map(|r| rows.get(r, 0).str().to_string())
        .collect())
}

/// The `name, value` rows of one of oltplab's record tables (`oltplab_tpcc`, …), as a map.
pub fn name_values(
    conn: &mut dyn Conn,
    table: &str,
) -> DbResult<std::collections::BTreeMap<String, String>> {
    let rows = conn.query(&format!("SELECT name, value FROM {table}"))?;
    Ok((0..rows.len())
        .map(|r| {
            (
                rows.get(r, 0).str().to_string(),
                rows.get(r, 1).str().to_string(),
            )
        })
        .collect())
}

/// Microseconds since the Unix epoch, now.
pub fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// `YYYY-MM-DD HH:MM:SS.ffffff` of µs since the epoch (UTC), for text loads; whole seconds
/// without the fraction (7 bytes less for the server to parse).
pub fn format_timestamp(us: i64, out: &mut String) {
    let (y, mo, d, h, mi, s, frac) = civil(us);
    if !(0..=9999).contains(&y) {
        use std::fmt::Write;
        let _ = write!(out, "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{frac:06}");
        return;
    }
    push_padded(y as u64, 4, out);
    for (sep, n) in [('-', mo), ('-', d), (' ', h), (':', mi), (':', s)] {
        out.push(sep);
        push_padded(n as u64, 2, out);
    }
    if frac != 0 {
        out.push('.');
        push_padded(frac as u64, 6, out);
    }
}

/// (year, month, day, hour, minute, second, µs) of µs since the epoch (UTC).
pub fn civil(us: i64) -> (i64, u32, u32, u32, u32, u32, u32) {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        m,
        d,
        (sod / 3600) as u32,
        (sod / 60 % 60) as u32,
        (sod % 60) as u32,
        frac,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert_eq!(
            Dialect::Postgres.sql("SELECT a FROM t WHERE b = ? AND c = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $2"
        );
        assert_eq!(Dialect::Sqlite.sql("x = ?"), "x = ?");
    }

    #[test]
    fn timestamps() {
        let mut s = String::new();
        format_timestamp(0, &mut s);
        assert_eq!(s, "1970-01-01 00:00:00");
        s.clear();
        // 2024-02-29 12:34:56.5 UTC
        format_timestamp(1_709_210_096_500_000, &mut s);
        assert_eq!(s, "2024-02-29 12:34:56.500000");
    }

    #[test]
    fn text_fields_match_the_formatter() {
        // One value in a one-column batch, as its text.
        let text = |push: &dyn Fn(&mut Batch)| {
            let mut b = Batch::new("t", &["v"], 1);
            push(&mut b);
            let mut s = String::new();
            b.text_row(0, &mut s);
            assert_eq!(s.pop(), Some('\n'));
            s
        };
        // Money in cents and rates in 1/10,000, as the loader makes them, over their whole ranges.
        for cents in -1_000_000..=1_000_000i64 {
            let f = cents as f64 / 100.0;
            assert_eq!(text(&|b| b.money(f)), format!("{f:.2}"), "{cents} cents");
        }
        for n in 0..=10_000i64 {
            let f = n as f64 / 10_000.0;
            assert_eq!(text(&|b| b.rate(f)), format!("{f:.4}"), "rate {n}");
        }
        assert_eq!(text(&|b| b.money(3e20)), format!("{:.2}", 3e20));
        assert_eq!(text(&|b| b.int(i64::MIN)), i64::MIN.to_string());
        assert_eq!(text(&|b| b.str("a\tb\\")), "a\\tb\\\\");
        assert_eq!(text(&|b| b.str("plain")), "plain");
        assert_eq!(text(&|b| b.null()), "\\N");
    }

    #[test]
    fn batch_strings_share_one_buffer_and_come_back_per_value() {
        let mut b = Batch::new("t", &["a", "b", "c"], 2);
        b.int(1);
        b.str_with(|s| s.push_str("x\ty"));
        b.time(0);
        b.int(2);
        b.str("");
        b.null();
        assert_eq!(b.rows(), 2);
        assert_eq!(b.value(0, 1), P::S("x\ty"));
        assert_eq!(b.value(1, 1), P::S(""));
        assert_eq!(
            b.row(1).collect::<Vec<_>>(),
            vec![P::I(2), P::S(""), P::Null]
        );
        let mut text = String::new();
        b.text_row(0, &mut text);
        b.text_row(1, &mut text);
        assert_eq!(text, "1\tx\\ty\t1970-01-01 00:00:00\n2\t\t\\N\n");
        text.clear();
        b.text_row_of(1, &[2, 0], &mut text);
        assert_eq!(text, "\\N\t2\n");
    }

    #[test]
    fn constant_columns_are_those_with_one_value_in_every_row() {
        let mut b = Batch::new("t", &["w", "x", "d", "s", "n"], 3);
        for x in [1, 2, 3] {
            b.int(7);
            b.int(x);
            b.time(5);
            b.str(if x == 3 { "ab" } else { "a" });
            b.null();
        }
        assert_eq!(b.constant_columns(), vec![true, false, true, false, true]);
        let mut one = Batch::new("t", &["w"], 1);
        one.int(7);
        assert_eq!(one.constant_columns(), vec![false]);
    }
}
