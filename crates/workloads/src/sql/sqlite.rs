//! [`Conn`] on embedded SQLite. SQLite admits one writer at a time; rather than letting writers
//! collide and sleep in SQLite's busy handler (which backs off in whole milliseconds), writers of
//! one process queue on an in-process lock and then take `BEGIN IMMEDIATE`, so a write transaction
//! never fails half-way for lack of the lock. Readers use WAL snapshots and never wait. The busy
//! timeout still guards against other processes; SQLITE_BUSY is counted and retried.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode};

use super::{
    Batch, CommitTime, Conn, DbError, DbResult, Dialect, ErrorKind, Rows, Stmt, TxMode, Val, P,
};

/// A binary semaphore that writers of one database hold from BEGIN to COMMIT.
#[derive(Default)]
pub struct WriterLock {
    busy: Mutex<bool>,
    freed: Condvar,
}

impl WriterLock {
    fn acquire(&self) {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        while *busy {
            busy = self.freed.wait(busy).unwrap_or_else(|p| p.into_inner());
        }
        *busy = true;
    }

    fn release(&self) {
        *self.busy.lock().unwrap_or_else(|p| p.into_inner()) = false;
        self.freed.notify_one();
    }
}

/// The writer lock of the database at `path`, shared by every connection of this process.
pub fn writer_lock(path: &Path) -> Arc<WriterLock> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<WriterLock>>>> = OnceLock::new();
    let key = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(key)
        .or_default()
        .clone()
}

pub struct SqliteConn {
    conn: Connection,
    writer: Option<Arc<WriterLock>>,
    holding: bool,
    /// Time spent acquiring the writer lock (in-process queue and `BEGIN IMMEDIATE`).
    writer_wait_ns: u64,
    /// The open transaction writes (its COMMIT is timed).
    write_tx: bool,
    /// The last write transaction's COMMIT (in-process: the WAL's write and sync), until taken.
    commit_time: Option<CommitTime>,
}

impl SqliteConn {
    /// Wraps an open connection; `writer` serialises writers in this process (None: rely on the
    /// busy timeout alone).
    pub fn new(conn: Connection, writer: Option<Arc<WriterLock>>) -> Self {
        Self {
            conn,
            writer,
            holding: false,
            writer_wait_ns: 0,
            write_tx: false,
            commit_time: None,
        }
    }

    pub fn inner(&self) -> &Connection {
        &self.conn
    }

    fn release(&mut self) {
        if self.holding {
            self.holding = false;
            if let Some(w) = &self.writer {
                w.release();
            }
        }
    }
}

impl Drop for SqliteConn {
    fn drop(&mut self) {
        self.release();
    }
}

pub fn classify(e: &rusqlite::Error) -> DbError {
    let kind = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => ErrorKind::Busy,
        _ => ErrorKind::Other,
    };
    DbError::new(kind, e.to_string())
}

fn bind(st: &mut rusqlite::Statement<'_>, params: &[P]) -> rusqlite::Result<()> {
    for (i, p) in params.iter().enumerate() {
        let at = i + 1;
        match *p {
            P::I(v) | P::T(v) => st.raw_bind_parameter(at, v)?,
            P::F(v) | P::R(v) => st.raw_bind_parameter(at, v)?,
            P::S(s) => st.raw_bind_parameter(at, s)?,
            P::Null => st.raw_bind_parameter(at, rusqlite::types::Null)?,
            P::Ints(_) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    "integer arrays are PostgreSQL parameters".into(),
                ))
            }
        }
    }
    Ok(())
}

fn val(v: ValueRef<'_>) -> Val {
    match v {
        ValueRef::Integer(i) => Val::I(i),
        ValueRef::Real(f) => Val::F(f),
        ValueRef::Text(t) => Val::S(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(_) => Val::Null,
        ValueRef::Null => Val::Null,
    }
}

fn collect(st: &mut rusqlite::Statement<'_>, out: &mut Rows) -> rusqlite::Result<u64> {
    let ncols = st.column_count();
    out.clear();
    if ncols == 0 {
        return st.raw_execute().map(|n| n as u64);
    }
    out.ncols = ncols;
    let mut rows = st.raw_query();
    let mut n = 0;
    while let Some(row) = rows.next()? {
        for c in 0..ncols {
            out.vals.push(val(row.get_ref(c)?));
        }
        n += 1;
    }
    Ok(n)
}

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn begin(&mut self, mode: TxMode) -> DbResult<()> {
        let write = mode == TxMode::Write;
        let asked = std::time::Instant::now();
        if write {
            if let Some(w) = &self.writer {
                w.acquire();
                self.holding = true;
            }
        }
        self.write_tx = write;
        let sql = if write { "BEGIN IMMEDIATE" } else { "BEGIN" };
        let result = self.conn.execute_batch(sql).map_err(|e| classify(&e));
        if write {
            // Queued behind the writer holding the lock: the database's one-writer-at-a-time.
            self.writer_wait_ns += asked.elapsed().as_nanos() as u64;
        }
        if result.is_err() {
            self.release();
        }
        result
    }

    fn commit(&mut self) -> DbResult<()> {
        let started = std::time::Instant::now();
        let result = self.conn.execute_batch("COMMIT").map_err(|e| classify(&e));
        if result.is_ok() && std::mem::take(&mut self.write_tx) {
            self.commit_time = Some(CommitTime {
                ns: started.elapsed().as_nanos() as u64,
                with_statement: false,
            });
        }
        if result.is_err() && !self.conn.is_autocommit() {
            // A failed COMMIT (SQLITE_BUSY) leaves the transaction open: end it.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        self.release();
        result
    }

    fn rollback(&mut self) -> DbResult<()> {
        self.write_tx = false;
        let result = if self.conn.is_autocommit() {
            Ok(())
        } else {
            self.conn
                .execute_batch("ROLLBACK")
                .map_err(|e| classify(&e))
        };
        self.release();
        result
    }

    fn writer_lock_wait_ns(&self) -> u64 {
        self.writer_wait_ns
    }

    fn take_commit_time(&mut self) -> Option<CommitTime> {
        self.commit_time.take()
    }

    fn last_insert_id(&self) -> Option<i64> {
        Some(self.conn.last_insert_rowid())
    }

    fn run(&mut self, stmt: &Stmt, params: &[P], out: &mut Rows) -> DbResult<u64> {
        let mut st = self
            .conn
            .prepare_cached(&stmt.sql)
            .map_err(|e| classify(&e))?;
        bind(&mut st, params).map_err(|e| classify(&e))?;
        collect(&mut st, out).map_err(|e| classify(&e))
    }

    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.conn.execute_batch(sql).map_err(|e| classify(&e))
    }

    fn query(&mut self, sql: &str) -> DbResult<Rows> {
        let mut st = self.conn.prepare(sql).map_err(|e| classify(&e))?;
        let mut out = Rows::default();
        collect(&mut st, &mut out).map_err(|e| classify(&e))?;
        Ok(out)
    }

    fn load(&mut self, batch: &Batch) -> DbResult<()> {
        let marks = vec!["?"; batch.columns.len()].join(", ");
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({marks})",
            batch.table,
            batch.columns.join(", ")
        );
        let mut st = self.conn.prepare_cached(&sql).map_err(|e| classify(&e))?;
        let mut params = Vec::with_capacity(batch.columns.len());
        for row in 0..batch.rows() {
            params.clear();
            params.extend(batch.row(row));
            bind(&mut st, &params).map_err(|e| classify(&e))?;
            st.raw_execute().map_err(|e| classify(&e))?;
        }
        Ok(())
    }
}
