//! What differs between the workloads in a server's cut (`server.rs` makes the cut, the same for
//! all three): the load, the run until the cut with its record of acknowledged commits, their
//! lookup after recovery and the workload's conditions (the SQLite side, `crash/workloads.rs`,
//! says which each workload records).

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use oltplab_core::{Error, Result};
use oltplab_dbs::server::ServerKind;
use oltplab_workloads::brokerage;
use oltplab_workloads::orders::server::{self as osrv, ServerTarget};
use oltplab_workloads::orders::{Dialect, Tables};
use oltplab_workloads::sql::{Conn, Connector};

use oltplab_workloads::tpcc;

use super::super::workloads::{
    brokerage_driver, orders_point, tpcc_driver, Acknowledged, BROKERAGE_SCALE, ORDERS_SCALE,
};
use super::super::{CrashConfig, Loaded};
use super::{db_spec, kind_of};
use crate::output::say;
use crate::workload::target::DbSpec;
use crate::STOP;

/// The workload's database spec on a server in `data_dir`.
pub(super) fn spec_of(cfg: &CrashConfig, kind: ServerKind, data_dir: &Path) -> Result<DbSpec> {
    let spec = db_spec(kind, data_dir)?;
    Ok(match cfg.workload.as_str() {
        "brokerage" => crate::plugins::brokerage::brokerage_spec(spec),
        _ => spec,
    })
}

/// Loads the workload into a managed server in `load_dir`, which stops cleanly (a shutdown
/// checkpoint): every cut starts from a copy of it.
pub(in crate::crash) fn load(cfg: &CrashConfig, load_dir: &Path) -> Result<Loaded> {
    let kind = kind_of(cfg);
    if cfg.workload == "tpcc" {
        say!(
            "oltplab crash tpcc: loading {} warehouse(s) into a {} server in {}",
            cfg.warehouses,
            kind.product(),
            load_dir.display()
        );
    } else {
        say!(
            "oltplab crash {}: loading into a {} server in {}",
            cfg.workload,
            kind.product(),
            load_dir.display()
        );
    }
    let db = spec_of(cfg, kind, load_dir)?;
    match cfg.workload.as_str() {
        "tpcc" => {
            crate::plugins::tpcc::load_with(
                &crate::plugins::tpcc::LoadConfig {
                    db,
                    warehouses: cfg.warehouses as u32,
                    threads: 2,
                    seed: cfg.seed,
                    check: false,
                    force: true,
                    emulate: None,
                    sqlite_vfs: None,
                    quiet: true,
                },
                &STOP,
            )?;
        }
        "brokerage" => {
            crate::plugins::brokerage::load_with(
                &crate::plugins::brokerage::LoadConfig {
                    db,
                    scale: BROKERAGE_SCALE,
                    threads: 2,
                    seed: cfg.seed,
                    check: false,
                    force: true,
                    quiet: true,
                },
                &STOP,
            )?;
        }
        _ => {
            crate::plugins::orders::load_with(
                &crate::plugins::orders::OrdersLoadConfig {
                    db,
                    tables: Tables::Disk,
                    scale: ORDERS_SCALE,
                    seed: cfg.seed,
                    force: true,
                    quiet: true,
                },
                &STOP,
            )?;
        }
    }
    Ok(Loaded::Server {
        data_dir: load_dir.to_path_buf(),
    })
}

/// What a run needs of the load, read from the running server.
pub(super) enum Meta {
    Tpcc(tpcc::Meta),
    Brokerage(brokerage::Meta),
    Orders(ServerTarget, oltplab_workloads::orders::Meta),
}

pub(super) fn read_meta(
    cfg: &CrashConfig,
    kind: ServerKind,
    conn: &mut dyn Conn,
    url: &str,
) -> Result<Meta> {
    match cfg.workload.as_str() {
        "tpcc" => {
            return Ok(Meta::Tpcc(tpcc::require_loaded(
                &tpcc::inspect(conn)?,
                url,
            )?))
        }
        "brokerage" => return Ok(Meta::Brokerage(brokerage::require_loaded(conn, url)?)),
        _ => {}
    }
    let target = ServerTarget {
        dialect: match kind {
            ServerKind::Postgres => Dialect::Postgres,
            ServerKind::Mariadb => Dialect::Mysql,
        },
        url: url.to_string(),
    };
    let meta = osrv::read_meta(&target)?.ok_or_else(|| {
        Error::failed("the order-entry load has no oe_meta record: a bug in oltplab crash")
    })?;
    Ok(Meta::Orders(target, meta))
}

/// Runs the workload against the server until `stop`; what it saw committed. Brokerage and order
/// entry with nothing acknowledged are an error (TPC-C's driver says when nothing committed).
pub(super) fn run_until_cut(
    cfg: &CrashConfig,
    meta: &Meta,
    c: &dyn Connector,
    seed: u64,
    stop: &AtomicBool,
) -> Result<Acknowledged> {
    match meta {
        Meta::Tpcc(meta) => {
            let driver_cfg = tpcc_driver(cfg, seed);
            let out = tpcc::driver::drive(c, meta, &driver_cfg, stop, &mut |_| {}, &mut |_| {})?;
            Ok(Acknowledged::NewOrders(out.new_orders))
        }
        Meta::Brokerage(meta) => {
            let driver_cfg = brokerage_driver(cfg, seed);
            let out =
                brokerage::driver::drive(c, meta, &driver_cfg, stop, &mut |_| {}, &mut |_| {})?;
            Acknowledged::Trades {
                ordered: out.trades_ordered,
                completed: out.trades_completed,
            }
            .nonempty()
        }
        Meta::Orders(target, meta) => {
            let point = orders_point(cfg, meta.scale, seed);
            let out = osrv::run_point(target, &point, stop, &mut |_| {}, &mut |_| {})?;
            Acknowledged::orders(out.acknowledged_orders, out.first_error)
        }
    }
}

/// The acknowledged commits that are not in the database; an error says what could not be read.
pub(super) fn lost(
    conn: &mut dyn Conn,
    acknowledged: &Acknowledged,
) -> std::result::Result<u64, String> {
    // The keys present from the first acknowledged id on: one query per kind of key.
    fn missing<K: std::hash::Hash + Eq>(
        conn: &mut dyn Conn,
        sql: &str,
        keys: &[K],
        id: impl Fn(&K) -> i64,
        key: impl Fn(&oltplab_workloads::sql::Rows, usize) -> K,
    ) -> std::result::Result<u64, String> {
        let Some(first) = keys.iter().map(&id).min() else {
            return Ok(0);
        };
        let rows = conn
            .query(&format!("{sql} >= {first}"))
            .map_err(|e| e.to_string())?;
        let found: HashSet<K> = (0..rows.len()).map(|r| key(&rows, r)).collect();
        Ok(keys.iter().filter(|k| !found.contains(k)).count() as u64)
    }
    let one = |rows: &oltplab_workloads::sql::Rows, r: usize| rows.get(r, 0).i64();
    let read = |e: String| format!("reading the acknowledged commits: {e}");
    match acknowledged {
        Acknowledged::NewOrders(keys) => missing(
            conn,
            "SELECT o_w_id, o_d_id, o_id FROM orders WHERE o_id",
            keys,
            |k| k.2,
            |rows, r| {
                (
                    rows.get(r, 0).i64(),
                    rows.get(r, 1).i64(),
                    rows.get(r, 2).i64(),
                )
            },
        )
        .map_err(|e| format!("reading the orders: {e}")),
        Acknowledged::Trades { ordered, completed } => Ok(missing(
            conn,
            "SELECT t_id FROM trade WHERE t_id",
            ordered,
            |k| *k,
            one,
        )
        .map_err(read)?
            + missing(
                conn,
                "SELECT se_t_id FROM settlement WHERE se_t_id",
                completed,
                |k| *k,
                one,
            )
            .map_err(read)?),
        Acknowledged::Orders(ids) => missing(
            conn,
            "SELECT o_id FROM oe_orders WHERE o_id",
            ids,
            |k| *k,
            one,
        )
        .map_err(read),
    }
}

/// The workload's conditions that do not hold, by number.
pub(super) fn conditions(conn: &mut dyn Conn, meta: &Meta) -> std::result::Result<Vec<u8>, String> {
    let broken = |conds: Vec<oltplab_workloads::check::Condition>| {
        conds
            .iter()
            .filter(|c| !c.holds())
            .map(|c| c.number)
            .collect()
    };
    match meta {
        Meta::Tpcc(_) => tpcc::check::run_checks(conn, |_| {})
            .map(broken)
            .map_err(|e| e.to_string()),
        Meta::Brokerage(meta) => brokerage::check::run_checks(conn, meta, |_| {})
            .map(broken)
            .map_err(|e| e.to_string()),
        // Order entry's one condition: five lines per order, the total their sum.
        Meta::Orders(..) => {
            let rows = conn
                .query(oltplab_workloads::orders::CHECK_SQL)
                .map_err(|e| e.to_string())?;
            Ok(if rows.get(0, 0).i64() > 0 {
                vec![1]
            } else {
                Vec::new()
            })
        }
    }
}
