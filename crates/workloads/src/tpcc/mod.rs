//! TPC-C (spec revision 5.11): the schema in the specification's names, the initial data, the five
//! transactions, a driver that keeps every NURand constant rule, and the twelve consistency checks.

pub mod check;
pub mod connect;
pub mod driver;
pub mod gen;
pub mod load;
pub mod random;
pub mod schema;
pub mod tx;

use oltplab_core::{Error, Result};

pub use crate::sql::db_failed;
use crate::sql::Conn;
pub use crate::sql::{Connector, Purpose};
use random::Constants;

/// tpmC per warehouse a spec-conforming run (keying and think times on) can reach at most.
pub const TPMC_PER_WAREHOUSE_MAX: f64 = 12.86;

/// oltplab's record of a load, in the `oltplab_tpcc` table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Meta {
    pub warehouses: i64,
    pub load_constants: Constants,
    pub complete: bool,
    pub loaded_at: String,
}

/// What a database holds before a load or run.
#[derive(Clone, Debug, Default)]
pub struct DbState {
    /// TPC-C (and meta) tables present.
    pub tpcc_tables: Vec<String>,
    /// Tables other than TPC-C's.
    pub other_tables: Vec<String>,
    pub meta: Option<Meta>,
}

impl DbState {
    pub fn is_empty(&self) -> bool {
        self.tpcc_tables.is_empty() && self.other_tables.is_empty()
    }
}

/// Lists the database's tables and reads oltplab's record of the load, if any.
pub fn inspect(conn: &mut dyn Conn) -> Result<DbState> {
    let mut state = DbState::default();
    for name in crate::sql::table_names(conn)? {
        let lower = name.to_ascii_lowercase();
        if schema::TABLES.contains(&lower.as_str()) || lower == schema::META_TABLE {
            state.tpcc_tables.push(lower);
        } else {
            state.other_tables.push(name);
        }
    }
    if state.tpcc_tables.iter().any(|t| t == schema::META_TABLE) {
        let map = crate::sql::name_values(conn, schema::META_TABLE)
            .map_err(|e| db_failed("cannot read oltplab's load record", e))?;
        let num = |k: &str| map.get(k).and_then(|v| v.parse::<i64>().ok());
        if let (Some(w), Some(cl), Some(ci), Some(co)) = (
            num("warehouses"),
            num("c_last"),
            num("c_id"),
            num("ol_i_id"),
        ) {
            state.meta = Some(Meta {
                warehouses: w,
                load_constants: Constants {
                    c_last: cl,
                    c_id: ci,
                    ol_i_id: co,
                },
                complete: map.get("complete").is_some_and(|v| v == "1"),
                loaded_at: map.get("loaded_at").cloned().unwrap_or_default(),
            });
        }
    }
    Ok(state)
}

/// The load record of a database that `run` may use, or a sentence saying why not.
pub fn require_loaded(state: &DbState, where_: &str) -> Result<Meta> {
    match &state.meta {
        Some(m) if m.complete => Ok(m.clone()),
        Some(_) => Err(Error::usage(format!(
            "the TPC-C load of {where_} did not finish: load it again with `oltplab load tpcc --force`"
        ))),
        None if state.tpcc_tables.is_empty() => Err(Error::usage(format!(
            "{where_} holds no TPC-C database: create one with `oltplab load tpcc --warehouses N` first"
        ))),
        None => Err(Error::usage(format!(
            "{where_} holds TPC-C tables that oltplab did not load (no {} table), so the load's NURand constants are unknown: \
             load it with `oltplab load tpcc --force`",
            schema::META_TABLE
        ))),
    }
}
