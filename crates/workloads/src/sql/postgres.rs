//! [`Conn`] on PostgreSQL (crate `tokio-postgres`, driven on the terminal's own thread):
//! statements prepared once per connection, money as NUMERIC sent and read in PostgreSQL's binary
//! form (exact, no text round trip), COPY for loading. Read committed throughout: every write
//! re-reads the row it changes, and Delivery looks again when a concurrent Delivery took the order
//! it aimed at.
//!
//! Round trips are the driver's main cost, so statements are pipelined: `BEGIN` waits and goes out
//! with the transaction's first statement, and [`Conn::pipeline`] sends independent statements
//! and the `COMMIT` together. Each statement keeps its own Sync, so an error in one is reported by
//! that statement and the ones after it fail with "current transaction is aborted"; a `COMMIT`
//! sent after a failed statement ends the transaction as a rollback (the server answers ROLLBACK).

use std::error::Error as StdError;
use std::future::Future;
use std::pin::{pin, Pin};
use std::task::Poll;
use std::time::{Duration, SystemTime};

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::{SinkExt, StreamExt};
use tokio_postgres::error::SqlState;
use tokio_postgres::tls::NoTlsStream;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type};
use tokio_postgres::{Client, NoTls, Socket, Statement};

use super::{
    Batch, CommitTime, Conn, DbError, DbResult, Dialect, End, ErrorKind, Isolation, Piped, Rows,
    Stmt, TxMode, Val, P,
};

type BoxError = Box<dyn StdError + Sync + Send>;
type PgResult<T> = Result<T, tokio_postgres::Error>;
/// The connection's half that does the I/O.
type PgConnection = tokio_postgres::Connection<Socket, NoTlsStream>;

pub struct PgConn {
    /// A current-thread runtime: the connection's I/O runs on the caller's thread, inside
    /// [`PgConn::block_on`], as the `postgres` crate does it.
    rt: tokio::runtime::Runtime,
    client: Client,
    /// The connection's I/O; None once it ended (then every request fails at once).
    connection: Option<PgConnection>,
    stmts: Vec<Option<Statement>>,
    /// `BEGIN …` for writes and for reads, at the connection's isolation level.
    begin_write: String,
    begin_read: String,
    /// A transaction begun but not sent yet: it goes out with the next statement.
    pending: Option<TxMode>,
    /// Round trips to the server so far.
    round_trips: u64,
    /// The open transaction writes (its COMMIT is timed).
    write_tx: bool,
    /// The last write transaction's COMMIT, until taken.
    commit_time: Option<CommitTime>,
}

impl PgConn {
    /// Connects to `url` (a connection failure is explained as [`pg_connect`] does).
    ///
    /// [`pg_connect`]: oltplab_dbs::server::connect::pg_connect
    pub fn connect(url: &str, isolation: Isolation) -> oltplab_core::Result<Self> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
            oltplab_core::Error::usage(format!(
                "'{}' is not a valid PostgreSQL URL ({e}): write postgres://USER@HOST:PORT/DB",
                oltplab_dbs::server::redact_url(url)
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                oltplab_core::Error::failed(format!(
                    "cannot start the PostgreSQL client's event loop ({e}): check the process's limit of open files"
                ))
            })?;
        let (client, connection) = rt
            .block_on(config.connect(NoTls))
            .map_err(|e| oltplab_dbs::server::connect::pg_error(url, &e))?;
        let mut conn = Self::new(rt, client, connection, isolation);
        // The level of the implicit transactions `send` uses for one-statement writes.
        let level = format!(
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {}",
            isolation.sql()
        );
        conn.batch(&level).map_err(|e| {
            oltplab_core::Error::failed(format!(
                "PostgreSQL refused to set the session's isolation level ({}): check the server's version",
                e.message
            ))
        })?;
        Ok(conn)
    }

    fn new(
        rt: tokio::runtime::Runtime,
        client: Client,
        connection: tokio_postgres::Connection<Socket, NoTlsStream>,
        isolation: Isolation,
    ) -> Self {
        // A read-only transaction sees one snapshot whatever the level (Order-Status reads three
        // tables): at REPEATABLE READ it never fails to serialise.
        let read = match isolation {
            Isolation::ReadCommitted => Isolation::RepeatableRead,
            other => other,
        };
        Self {
            rt,
            client,
            connection: Some(connection),
            stmts: Vec::new(),
            begin_write: format!("BEGIN ISOLATION LEVEL {}", isolation.sql()),
            begin_read: format!("BEGIN ISOLATION LEVEL {} READ ONLY", read.sql()),
            pending: None,
            round_trips: 0,
            write_tx: false,
            commit_time: None,
        }
    }

    /// Round trips to the server so far: each time the connection sent requests and waited for
    /// their answers (a statement prepared, a pipeline, SQL without parameters, a load).
    pub fn round_trips(&self) -> u64 {
        self.round_trips
    }

    /// Runs `fut` to its end while driving the connection (its writes and reads) on this thread.
    /// Requests made by `fut` before it first waits leave in one write.
    fn block_on<T>(
        rt: &tokio::runtime::Runtime,
        connection: &mut Option<PgConnection>,
        round_trips: &mut u64,
        fut: impl Future<Output = PgResult<T>>,
    ) -> PgResult<T> {
        *round_trips += 1;
        let mut fut = pin!(fut);
        rt.block_on(std::future::poll_fn(|cx| {
            // The request first, so that the connection finds it queued when polled.
            if let Poll::Ready(r) = fut.as_mut().poll(cx) {
                return Poll::Ready(r);
            }
            if let Some(c) = connection.as_mut() {
                if let Poll::Ready(r) = Pin::new(c).poll(cx) {
                    // Ended (the server closed it, or it failed): dropped, so that this request
                    // and every later one fail at once as "connection closed" instead of
                    // waiting for answers nobody reads.
                    *connection = None;
                    r?;
                }
            }
            fut.as_mut().poll(cx)
        }))
    }

    /// The prepared form of `stmt` (prepared on first use).
    fn prepare(&mut self, stmt: &Stmt) -> DbResult<()> {
        if self.stmts.len() <= stmt.id {
            self.stmts.resize(stmt.id + 1, None);
        }
        if self.stmts[stmt.id].is_none() {
            let client = &self.client;
            let prepared = Self::block_on(
                &self.rt,
                &mut self.connection,
                &mut self.round_trips,
                client.prepare(&stmt.sql),
            )
            .map_err(|e| classify(&e))?;
            self.stmts[stmt.id] = Some(prepared);
        }
        Ok(())
    }

    /// Sends the pending BEGIN alone (before SQL that is not pipelined).
    fn flush_begin(&mut self) -> DbResult<()> {
        if let Some(mode) = self.pending.take() {
            let sql = self.begin_sql(mode).to_string();
            let client = &self.client;
            Self::block_on(
                &self.rt,
                &mut self.connection,
                &mut self.round_trips,
                client.batch_execute(&sql),
            )
            .map_err(|e| classify(&e))?;
        }
        Ok(())
    }

    fn begin_sql(&self, mode: TxMode) -> &str {
        match mode {
            TxMode::Write => &self.begin_write,
            TxMode::Read | TxMode::ReadStatement => &self.begin_read,
        }
    }

    /// `stmts` and COMMIT in one round trip, timed as the commit's when the transaction writes
    /// (`with_statement` when statements went along: their execution is in the time).
    fn timed_commit(&mut self, stmts: &mut [Piped<'_, '_>]) -> DbResult<()> {
        // A first use's PREPARE is a round trip of its own, not the commit's.
        for p in stmts.iter() {
            self.prepare(p.stmt)?;
        }
        let sent = std::time::Instant::now();
        self.send(stmts, End::Commit)?;
        if std::mem::take(&mut self.write_tx) {
            self.commit_time = Some(CommitTime {
                ns: sent.elapsed().as_nanos() as u64,
                with_statement: !stmts.is_empty(),
            });
        }
        Ok(())
    }

    /// The pending BEGIN, `stmts` and the end of the transaction, in one round trip.
    ///
    /// A write transaction of one statement, begun and committed here, goes as that statement
    /// alone: PostgreSQL runs it as an implicit transaction at the session's level (the run's,
    /// set at connect), which is what BEGIN at that level, the statement and COMMIT do — in one
    /// message and one answer instead of three, each of which wakes the terminal's thread (a
    /// server-side procedure's transaction, `run tpcc --procedures`). A read keeps its BEGIN: it
    /// takes a snapshot for all its statements (READ ONLY, REPEATABLE READ at least) — unless it
    /// is a [`TxMode::ReadStatement`], whose one statement sees one snapshot by itself.
    fn send(&mut self, stmts: &mut [Piped<'_, '_>], end: End) -> DbResult<()> {
        for p in stmts.iter() {
            self.prepare(p.stmt)?;
        }
        let implicit = matches!(self.pending, Some(TxMode::Write | TxMode::ReadStatement))
            && end == End::Commit
            && stmts.len() == 1;
        let begin = self
            .pending
            .take()
            .filter(|_| !implicit)
            .map(|mode| match mode {
                TxMode::Write => self.begin_write.as_str(),
                TxMode::Read | TxMode::ReadStatement => self.begin_read.as_str(),
            });
        let end_sql = match end {
            _ if implicit => None,
            End::Open => None,
            End::Commit => Some("COMMIT"),
            End::Rollback => Some("ROLLBACK"),
        };
        let client = &self.client;
        let prepared = &self.stmts;
        let results = Self::block_on(
            &self.rt,
            &mut self.connection,
            &mut self.round_trips,
            pipelined(client, begin, prepared, stmts, end_sql),
        );
        match results {
            Ok(()) => Ok(()),
            Err(e) => Err(classify(&e)),
        }
    }
}

/// Sends every request before waiting for the first answer, then reads the answers in order; the
/// first error (in statement order) is the result. All answers are read, so that the connection
/// is idle again afterwards.
async fn pipelined(
    client: &Client,
    begin: Option<&str>,
    prepared: &[Option<Statement>],
    stmts: &mut [Piped<'_, '_>],
    end: Option<&str>,
) -> PgResult<()> {
    let mut futs: Vec<Pin<Box<dyn Future<Output = PgResult<()>> + '_>>> =
        Vec::with_capacity(stmts.len() + 2);
    if let Some(sql) = begin {
        futs.push(Box::pin(client.batch_execute(sql)));
    }
    for p in stmts.iter_mut() {
        let stmt = prepared[p.stmt.id]
            .as_ref()
            .expect("prepared before sending");
        futs.push(Box::pin(async move {
            p.count = run_one(client, stmt, p.params, p.out).await?;
            Ok(())
        }));
    }
    if let Some(sql) = end {
        futs.push(Box::pin(client.batch_execute(sql)));
    }
    join_in_order(futs).await
}

/// Polls every future each round (each sends its request on its first poll) until all are done;
/// the first error in their order wins.
async fn join_in_order(
    mut futs: Vec<Pin<Box<dyn Future<Output = PgResult<()>> + '_>>>,
) -> PgResult<()> {
    let mut results: Vec<Option<PgResult<()>>> = (0..futs.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, r) in futs.iter_mut().zip(results.iter_mut()) {
            if r.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(x) => *r = Some(x),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    results
        .into_iter()
        .flatten()
        .collect::<PgResult<Vec<()>>>()?;
    Ok(())
}

/// One prepared statement: its rows into `out`; the rows changed, or returned.
async fn run_one(
    client: &Client,
    stmt: &Statement,
    params: &[P<'_>],
    out: &mut Rows,
) -> PgResult<u64> {
    out.clear();
    let params = params.iter().map(|p| Param(*p));
    if stmt.columns().is_empty() {
        return client.execute_raw(stmt, params).await;
    }
    out.ncols = stmt.columns().len();
    let mut stream = pin!(client.query_raw(stmt, params).await?);
    let mut n = 0;
    while let Some(row) = stream.next().await {
        let row = row?;
        for c in 0..row.len() {
            let v: AnyVal = row.try_get(c)?;
            out.vals.push(v.0);
        }
        n += 1;
    }
    Ok(n)
}

/// The error's kind and its server message (without the "db error:" prefix).
pub fn classify(e: &tokio_postgres::Error) -> DbError {
    let kind = match e.code() {
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE => ErrorKind::Serialization,
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED => ErrorKind::Deadlock,
        Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE => ErrorKind::LockTimeout,
        Some(c) if c.code() == super::INTENDED_ROLLBACK_SQLSTATE => ErrorKind::IntendedRollback,
        _ if e.is_closed() => ErrorKind::Connection,
        None => ErrorKind::Connection,
        _ => ErrorKind::Other,
    };
    let message = match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => {
            let mut m = e.to_string();
            if let Some(src) = e.source() {
                m = format!("{m}: {src}");
            }
            m
        }
    };
    DbError::new(kind, message)
}

/// A parameter that adapts to the column type PostgreSQL inferred.
#[derive(Debug)]
struct Param<'a>(P<'a>);

/// NUMERIC's binary form of `scaled / 10^dscale`.
fn put_numeric(scaled: i64, dscale: u16, out: &mut BytesMut) {
    let pad = (4 - dscale % 4) % 4;
    let mut abs = scaled.unsigned_abs() as u128 * 10u128.pow(pad as u32);
    let frac_groups = ((dscale + pad) / 4) as usize;
    let mut groups: Vec<i16> = Vec::new();
    while abs > 0 {
        groups.push((abs % 10_000) as i16);
        abs /= 10_000;
    }
    while groups.len() < frac_groups {
        groups.push(0);
    }
    groups.reverse();
    let mut weight = (groups.len() - frac_groups) as i16 - 1;
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    out.put_i16(groups.len() as i16);
    out.put_i16(weight);
    out.put_u16(if scaled < 0 { 0x4000 } else { 0 });
    out.put_u16(dscale);
    for g in groups {
        out.put_i16(g);
    }
}

fn get_numeric(raw: &[u8]) -> Result<f64, BoxError> {
    if raw.len() < 8 {
        return Err("short NUMERIC".into());
    }
    let rd = |i: usize| i16::from_be_bytes([raw[i], raw[i + 1]]);
    let (n, weight, sign) = (rd(0) as usize, rd(2) as i32, rd(4) as u16);
    if sign == 0xC000 {
        return Ok(f64::NAN);
    }
    if raw.len() < 8 + 2 * n {
        return Err("short NUMERIC".into());
    }
    let mut v = 0.0;
    for i in 0..n {
        v += rd(8 + 2 * i) as f64 * 10_000f64.powi(weight - i as i32);
    }
    Ok(if sign == 0x4000 { -v } else { v })
}

fn scaled(v: f64, dscale: u16) -> i64 {
    (v * 10f64.powi(dscale as i32)).round() as i64
}

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match self.0 {
            P::Null => Ok(IsNull::Yes),
            P::I(v) => match *ty {
                Type::INT2 => (v as i16).to_sql(ty, out),
                Type::INT4 => (v as i32).to_sql(ty, out),
                Type::INT8 => v.to_sql(ty, out),
                Type::FLOAT8 => (v as f64).to_sql(ty, out),
                Type::NUMERIC => {
                    put_numeric(v, 0, out);
                    Ok(IsNull::No)
                }
                _ => v.to_string().as_str().to_sql(ty, out),
            },
            P::F(v) | P::R(v) => match *ty {
                Type::NUMERIC => {
                    let d = if matches!(self.0, P::F(_)) { 2 } else { 4 };
                    put_numeric(scaled(v, d), d, out);
                    Ok(IsNull::No)
                }
                Type::FLOAT4 => (v as f32).to_sql(ty, out),
                Type::FLOAT8 => v.to_sql(ty, out),
                _ => format!("{v}").as_str().to_sql(ty, out),
            },
            P::S(s) => s.to_sql(ty, out),
            P::Ints(v) => match *ty {
                Type::INT4_ARRAY => v
                    .iter()
                    .map(|&x| x as i32)
                    .collect::<Vec<i32>>()
                    .to_sql(ty, out),
                Type::INT8_ARRAY => v.to_sql(ty, out),
                _ => Err(format!("an integer array cannot be sent as {ty}").into()),
            },
            P::T(us) => {
                (SystemTime::UNIX_EPOCH + Duration::from_micros(us.max(0) as u64)).to_sql(ty, out)
            }
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// Reads any column we select into a [`Val`].
struct AnyVal(Val);

impl<'a> FromSql<'a> for AnyVal {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(AnyVal(match *ty {
            Type::INT2 => Val::I(i16::from_sql(ty, raw)? as i64),
            Type::INT4 => Val::I(i32::from_sql(ty, raw)? as i64),
            Type::INT8 => Val::I(i64::from_sql(ty, raw)?),
            Type::FLOAT4 => Val::F(f32::from_sql(ty, raw)? as f64),
            Type::FLOAT8 => Val::F(f64::from_sql(ty, raw)?),
            Type::NUMERIC => Val::F(get_numeric(raw)?),
            Type::TIMESTAMP | Type::TIMESTAMPTZ => {
                let t = SystemTime::from_sql(ty, raw)?;
                Val::I(
                    t.duration_since(SystemTime::UNIX_EPOCH)
                        .map(|d| d.as_micros() as i64)
                        .unwrap_or(0),
                )
            }
            Type::BOOL => Val::I(bool::from_sql(ty, raw)? as i64),
            _ => Val::S(String::from_utf8_lossy(raw).into_owned()),
        }))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(AnyVal(Val::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

impl Conn for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    /// Sends nothing: BEGIN goes out with the transaction's first statement.
    fn begin(&mut self, mode: TxMode) -> DbResult<()> {
        self.pending = Some(mode);
        self.write_tx = mode == TxMode::Write;
        Ok(())
    }

    fn commit(&mut self) -> DbResult<()> {
        if self.pending.take().is_some() {
            self.write_tx = false;
            return Ok(()); // nothing ran: nothing to commit
        }
        self.timed_commit(&mut [])
    }

    fn rollback(&mut self) -> DbResult<()> {
        self.write_tx = false;
        if self.pending.take().is_some() {
            return Ok(());
        }
        self.send(&mut [], End::Rollback)
    }

    fn take_commit_time(&mut self) -> Option<CommitTime> {
        self.commit_time.take()
    }

    fn run(&mut self, stmt: &Stmt, params: &[P], out: &mut Rows) -> DbResult<u64> {
        let mut one = [Piped::new(stmt, params, out)];
        self.send(&mut one, End::Open)?;
        Ok(one[0].count)
    }

    fn pipeline(&mut self, stmts: &mut [Piped<'_, '_>], end: End) -> DbResult<()> {
        if stmts.is_empty() && self.pending.is_some() && end != End::Open {
            self.pending = None; // an empty transaction: no round trip
            self.write_tx = false;
            return Ok(());
        }
        match end {
            End::Commit => self.timed_commit(stmts),
            End::Rollback => {
                self.write_tx = false;
                self.send(stmts, end)
            }
            End::Open => self.send(stmts, end),
        }
    }

    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.flush_begin()?;
        let client = &self.client;
        Self::block_on(
            &self.rt,
            &mut self.connection,
            &mut self.round_trips,
            client.batch_execute(sql),
        )
        .map_err(|e| classify(&e))
    }

    fn query(&mut self, sql: &str) -> DbResult<Rows> {
        self.flush_begin()?;
        let client = &self.client;
        let rows = Self::block_on(
            &self.rt,
            &mut self.connection,
            &mut self.round_trips,
            client.query(sql, &[]),
        )
        .map_err(|e| classify(&e))?;
        let mut out = Rows::default();
        if let Some(first) = rows.first() {
            out.ncols = first.len();
        }
        for row in &rows {
            for c in 0..row.len() {
                let v: AnyVal = row
                    .try_get(c)
                    .map_err(|e| DbError::other(format!("cannot read a column: {e}")))?;
                out.vals.push(v.0);
            }
        }
        Ok(out)
    }

    fn load(&mut self, batch: &Batch) -> DbResult<()> {
        self.flush_begin()?;
        let sql = format!(
            "COPY {} ({}) FROM STDIN",
            batch.table,
            batch.columns.join(", ")
        );
        let client = &self.client;
        let copy = async {
            let sink = client.copy_in::<_, Bytes>(&sql).await?;
            let mut sink = pin!(sink);
            let mut line = String::with_capacity(1 << 16);
            for row in 0..batch.rows() {
                batch.text_row(row, &mut line);
                if line.len() > 60_000 {
                    let full = std::mem::replace(&mut line, String::with_capacity(1 << 16));
                    sink.send(Bytes::from(full)).await?;
                }
            }
            sink.send(Bytes::from(line)).await?;
            sink.as_mut().finish().await
        };
        Self::block_on(&self.rt, &mut self.connection, &mut self.round_trips, copy)
            .map_err(|e| classify(&e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(scaled_v: i64, d: u16) -> f64 {
        let mut b = BytesMut::new();
        put_numeric(scaled_v, d, &mut b);
        get_numeric(&b).unwrap()
    }

    #[test]
    fn numeric_binary_round_trip() {
        for (v, d) in [
            (0i64, 2u16),
            (1, 2),
            (-1000, 2),
            (30_000_000, 2),
            (123_456_789, 2),
            (1234, 4),
            (-5, 4),
            (99_999_999_999, 2),
            (10_000, 0),
        ] {
            let want = v as f64 / 10f64.powi(d as i32);
            let got = round_trip(v, d);
            assert!((got - want).abs() < 1e-9, "{v}/{d}: {got} vs {want}");
        }
    }
}
