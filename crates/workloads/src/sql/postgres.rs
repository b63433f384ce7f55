//! [`Conn`] on PostgreSQL (crate `postgres`): statements prepared once per connection, money as
//! NUMERIC sent and read in PostgreSQL's binary form (exact, no text round trip), COPY for loading.
//! Read committed throughout: every write re-reads the row it changes, and Delivery looks again
//! when a concurrent Delivery took the order it aimed at.

use std::error::Error as StdError;
use std::io::Write as _;
use std::time::{Duration, SystemTime};

use bytes::{BufMut, BytesMut};
use postgres::error::SqlState;
use postgres::types::{FromSql, IsNull, ToSql, Type};
use postgres::{Client, Statement};

use super::{
    Batch, Conn, DbError, DbResult, Dialect, ErrorKind, Isolation, Rows, Stmt, TxMode, Val, P,
};

type BoxError = Box<dyn StdError + Sync + Send>;

pub struct PgConn {
    client: Client,
    stmts: Vec<Option<Statement>>,
    /// `BEGIN …` for writes and for reads, at the connection's isolation level.
    begin_write: String,
    begin_read: String,
}

impl PgConn {
    pub fn new(client: Client, isolation: Isolation) -> Self {
        // A read-only transaction sees one snapshot whatever the level (Order-Status reads three
        // tables): at REPEATABLE READ it never fails to serialise.
        let read = match isolation {
            Isolation::ReadCommitted => Isolation::RepeatableRead,
            other => other,
        };
        Self {
            client,
            stmts: Vec::new(),
            begin_write: format!("BEGIN ISOLATION LEVEL {}", isolation.sql()),
            begin_read: format!("BEGIN ISOLATION LEVEL {} READ ONLY", read.sql()),
        }
    }

    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// The error's kind and its server message (without the "db error:" prefix).
pub fn classify(e: &postgres::Error) -> DbError {
    let kind = match e.code() {
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE => ErrorKind::Serialization,
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED => ErrorKind::Deadlock,
        Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE => ErrorKind::LockTimeout,
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

    postgres::types::to_sql_checked!();
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

fn collect(rows: &[postgres::Row], out: &mut Rows) -> DbResult<()> {
    out.clear();
    if let Some(first) = rows.first() {
        out.ncols = first.len();
    }
    for row in rows {
        for c in 0..row.len() {
            let v: AnyVal = row
                .try_get(c)
                .map_err(|e| DbError::other(format!("cannot read a column: {e}")))?;
            out.vals.push(v.0);
        }
    }
    Ok(())
}

impl Conn for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn begin(&mut self, mode: TxMode) -> DbResult<()> {
        let sql = match mode {
            TxMode::Write => &self.begin_write,
            TxMode::Read => &self.begin_read,
        };
        self.client.batch_execute(sql).map_err(|e| classify(&e))
    }

    fn commit(&mut self) -> DbResult<()> {
        self.client
            .batch_execute("COMMIT")
            .map_err(|e| classify(&e))
    }

    fn rollback(&mut self) -> DbResult<()> {
        self.client
            .batch_execute("ROLLBACK")
            .map_err(|e| classify(&e))
    }

    fn run(&mut self, stmt: &Stmt, params: &[P], out: &mut Rows) -> DbResult<u64> {
        if self.stmts.len() <= stmt.id {
            self.stmts.resize(stmt.id + 1, None);
        }
        if self.stmts[stmt.id].is_none() {
            let prepared = self.client.prepare(&stmt.sql).map_err(|e| classify(&e))?;
            self.stmts[stmt.id] = Some(prepared);
        }
        let prepared = self.stmts[stmt.id].as_ref().expect("prepared above");
        let wrapped: Vec<Param> = params.iter().map(|p| Param(*p)).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            wrapped.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        if prepared.columns().is_empty() {
            out.clear();
            self.client
                .execute(prepared, &refs)
                .map_err(|e| classify(&e))
        } else {
            let rows = self
                .client
                .query(prepared, &refs)
                .map_err(|e| classify(&e))?;
            collect(&rows, out)?;
            Ok(rows.len() as u64)
        }
    }

    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.client.batch_execute(sql).map_err(|e| classify(&e))
    }

    fn query(&mut self, sql: &str) -> DbResult<Rows> {
        let rows = self.client.query(sql, &[]).map_err(|e| classify(&e))?;
        let mut out = Rows::default();
        collect(&rows, &mut out)?;
        Ok(out)
    }

    fn load(&mut self, batch: &Batch) -> DbResult<()> {
        let sql = format!(
            "COPY {} ({}) FROM STDIN",
            batch.table,
            batch.columns.join(", ")
        );
        let mut writer = self.client.copy_in(&sql).map_err(|e| classify(&e))?;
        let mut line = String::with_capacity(1 << 16);
        for row in 0..batch.rows() {
            batch.text_row(row, &mut line);
            if line.len() > 60_000 {
                writer
                    .write_all(line.as_bytes())
                    .map_err(|e| DbError::new(ErrorKind::Connection, e.to_string()))?;
                line.clear();
            }
        }
        writer
            .write_all(line.as_bytes())
            .map_err(|e| DbError::new(ErrorKind::Connection, e.to_string()))?;
        writer.finish().map_err(|e| classify(&e))?;
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
