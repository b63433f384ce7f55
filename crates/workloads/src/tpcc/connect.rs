//! Connectors: how the loader, driver and checker open connections to each engine.

use std::path::PathBuf;

use oltplab_core::{Error, Result};
use oltplab_dbs::server::connect::mysql_error;
use oltplab_dbs::sqlite::{self, SqliteOptions};

use super::{Connector, Purpose};
use crate::sql::mysql::MyConn;
use crate::sql::postgres::PgConn;
use crate::sql::sqlite::{writer_lock, SqliteConn};
use crate::sql::{
    Batch, CommitTime, Conn, DbError, DbResult, Dialect, End, ErrorKind, Isolation, Piped, Rows,
    Stmt, TxMode, P,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Embedded SQLite in one file.
pub struct SqliteConnector {
    pub path: PathBuf,
    /// Settings of run and check connections (the VFS, the page cache per connection).
    pub opts: SqliteOptions,
    /// Page cache of the loading connection.
    pub load_cache_bytes: u64,
    /// Queue writers on an in-process lock before `BEGIN IMMEDIATE` (see [`SqliteConn`]).
    pub writer_lock: bool,
}

impl Connector for SqliteConnector {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn connect(&self, purpose: Purpose) -> Result<Box<dyn Conn>> {
        let opts = match purpose {
            // No journal and no syncs while loading: a failed load is reloaded with --force.
            Purpose::Load => SqliteOptions {
                journal_mode: "OFF",
                synchronous: "OFF",
                create: true,
                cache_bytes: self.load_cache_bytes,
                ..self.opts.clone()
            },
            _ => self.opts.clone(),
        };
        let conn = sqlite::open(&self.path, &opts)?;
        let lock = self.writer_lock.then(|| writer_lock(&self.path));
        Ok(Box::new(SqliteConn::new(conn, lock)))
    }

    fn single_writer(&self) -> bool {
        true
    }

    fn after_load(&self, conn: &mut dyn Conn) -> Result<()> {
        conn.batch("PRAGMA journal_mode = WAL")
            .map_err(|e| Error::failed(format!("cannot switch the database to WAL: {e}")))
    }
}

/// A PostgreSQL server.
pub struct PgConnector {
    pub url: String,
    pub isolation: Isolation,
}

impl Connector for PgConnector {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn connect(&self, _purpose: Purpose) -> Result<Box<dyn Conn>> {
        Ok(Box::new(PgConn::connect(&self.url, self.isolation)?))
    }
}

/// A MariaDB/MySQL server.
pub struct MyConnector {
    pub url: String,
    pub isolation: Isolation,
}

impl Connector for MyConnector {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn connect(&self, _purpose: Purpose) -> Result<Box<dyn Conn>> {
        let opts = mysql::Opts::from_url(&self.url).map_err(|e| {
            Error::usage(format!(
                "'{}' is not a valid MySQL URL ({e}): write mysql://USER@HOST:PORT/DB",
                oltplab_dbs::server::redact_url(&self.url)
            ))
        })?;
        // Our statements stay prepared for the connection's life, so the driver's cache must hold
        // them all (it closes statements it evicts).
        let opts = mysql::OptsBuilder::from_opts(opts)
            .stmt_cache_size(Some(256))
            .tcp_connect_timeout(Some(std::time::Duration::from_secs(10)));
        let conn = mysql::Conn::new(opts).map_err(|e| mysql_error(&self.url, &e))?;
        let conn = MyConn::new(conn, self.isolation)
            .map_err(|e| Error::failed(format!("cannot set up the MySQL connection: {e}")))?;
        Ok(Box::new(conn))
    }
}

/// Several hosts of one database, named by `--url` (a multi-host URL or `--url` repeated): run
/// connections go to the hosts in turn — the driver opens its terminals' first, so terminal i
/// uses host i mod N — and each stays on its host (a lost connection ends its terminal, as on
/// one host); the loader and the checker use the first host.
pub struct HostsConnector {
    hosts: Vec<Box<dyn Connector>>,
    next: AtomicUsize,
    log: HostsHandle,
}

/// Which host (0-based) each run connection of a [`HostsConnector`] went to, in the order opened.
#[derive(Clone, Default)]
pub struct HostsHandle(Arc<Mutex<Vec<usize>>>);

impl HostsHandle {
    /// The hosts of the run connections opened so far, in order.
    pub fn hosts(&self) -> Vec<usize> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl HostsConnector {
    pub fn new(hosts: Vec<Box<dyn Connector>>) -> HostsConnector {
        assert!(!hosts.is_empty(), "a database has a host");
        HostsConnector {
            hosts,
            next: AtomicUsize::new(0),
            log: HostsHandle::default(),
        }
    }

    /// A handle that reads where the run connections went.
    pub fn handle(&self) -> HostsHandle {
        self.log.clone()
    }
}

impl Connector for HostsConnector {
    fn dialect(&self) -> Dialect {
        self.hosts[0].dialect()
    }

    fn connect(&self, purpose: Purpose) -> Result<Box<dyn Conn>> {
        if purpose != Purpose::Run {
            return self.hosts[0].connect(purpose);
        }
        // The turn is taken under the log's lock, so the log's order is the turns' order.
        let mut log = self.log.0.lock().unwrap_or_else(|p| p.into_inner());
        let host = self.next.fetch_add(1, Ordering::Relaxed) % self.hosts.len();
        let conn = self.hosts[host].connect(purpose)?;
        log.push(host);
        Ok(conn)
    }

    fn single_writer(&self) -> bool {
        self.hosts[0].single_writer()
    }

    fn after_load(&self, conn: &mut dyn Conn) -> Result<()> {
        self.hosts[0].after_load(conn)
    }
}

/// The nodes of a multi-primary cluster (Galera): the terminals' connections go to the nodes in
/// turn and move to another node when theirs goes away; the loader (without replication) and the
/// checker use the first node.
pub struct ClusterConnector {
    shared: Arc<ClusterShared>,
    next: AtomicUsize,
}

struct ClusterShared {
    nodes: Vec<MyConnector>,
    /// Reads wait until the node has applied what the cluster committed before them
    /// (`wsrep_sync_wait = 1`): for workloads whose transactions act on another terminal's
    /// commits, which another node may not have applied yet.
    causal_reads: bool,
    log: Mutex<ClusterLog>,
}

/// What the run connections of a cluster saw: moves to another node. (The New-Orders whose commit
/// succeeded are the driver's record: `DriverConfig::record_new_orders`.)
#[derive(Clone, Debug, Default)]
pub struct ClusterLog {
    pub failovers: Vec<Failover>,
}

/// Reads a [`ClusterConnector`]'s log.
#[derive(Clone)]
pub struct ClusterHandle(Arc<ClusterShared>);

impl ClusterHandle {
    /// A copy of what the run connections saw so far.
    pub fn log(&self) -> ClusterLog {
        self.0.lock().clone()
    }
}

/// A connection that lost its node and moved to another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failover {
    /// 0-based.
    pub from_node: usize,
    pub to_node: usize,
    pub at: SystemTime,
}

impl ClusterConnector {
    pub fn new(nodes: Vec<MyConnector>, causal_reads: bool) -> ClusterConnector {
        assert!(!nodes.is_empty(), "a cluster has a node");
        ClusterConnector {
            shared: Arc::new(ClusterShared {
                nodes,
                causal_reads,
                log: Mutex::new(ClusterLog::default()),
            }),
            next: AtomicUsize::new(0),
        }
    }

    /// A handle that reads what the run connections saw, kept by whoever owns the cluster.
    pub fn handle(&self) -> ClusterHandle {
        ClusterHandle(self.shared.clone())
    }

    /// The node the next run connection goes to (0-based), advancing the turn.
    fn turn(&self) -> usize {
        self.next.fetch_add(1, Ordering::Relaxed) % self.shared.nodes.len()
    }
}

impl ClusterShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, ClusterLog> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn connect_run(&self, node: usize) -> Result<Box<dyn Conn>> {
        let mut conn = self.nodes[node].connect(Purpose::Run)?;
        if self.causal_reads {
            conn.batch("SET SESSION wsrep_sync_wait = 1")
                .map_err(|e| Error::failed(format!("cannot ask the node for causal reads: {e}")))?;
        }
        Ok(conn)
    }
}

impl Connector for ClusterConnector {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn connect(&self, purpose: Purpose) -> Result<Box<dyn Conn>> {
        match purpose {
            Purpose::Run => {
                let node = self.turn();
                Ok(Box::new(FailoverConn {
                    inner: self.shared.connect_run(node)?,
                    node,
                    shared: self.shared.clone(),
                }))
            }
            Purpose::Check => self.shared.nodes[0].connect(purpose),
            Purpose::Load => {
                // Node 1 loads alone and its files are copied to the other nodes, so the load
                // need not pass through replication (certification, the writeset cache).
                let mut conn = self.shared.nodes[0].connect(purpose)?;
                conn.batch("SET SESSION wsrep_on = OFF").map_err(|e| {
                    Error::failed(format!("cannot load past the cluster's replication: {e}"))
                })?;
                Ok(conn)
            }
        }
    }
}

/// A run connection to one node that, when the node goes away, moves to the next node that
/// answers and reports the failed statement as [`ErrorKind::NodeFailover`] (retried there).
struct FailoverConn {
    inner: Box<dyn Conn>,
    node: usize,
    shared: Arc<ClusterShared>,
}

impl FailoverConn {
    fn check<T>(&mut self, r: DbResult<T>) -> DbResult<T> {
        match r {
            Err(e) if e.kind == ErrorKind::Connection => Err(self.fail_over(e)),
            other => other,
        }
    }

    fn fail_over(&mut self, lost: DbError) -> DbError {
        let n = self.shared.nodes.len();
        for step in 1..n {
            let to = (self.node + step) % n;
            if let Ok(conn) = self.shared.connect_run(to) {
                self.inner = conn;
                self.shared.lock().failovers.push(Failover {
                    from_node: self.node,
                    to_node: to,
                    at: SystemTime::now(),
                });
                let from = std::mem::replace(&mut self.node, to);
                return DbError::new(
                    ErrorKind::NodeFailover,
                    format!(
                        "node {} went away ({lost}); the connection moved to node {}",
                        from + 1,
                        to + 1
                    ),
                );
            }
        }
        lost
    }
}

impl Conn for FailoverConn {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }
    fn begin(&mut self, mode: TxMode) -> DbResult<()> {
        let r = self.inner.begin(mode);
        self.check(r)
    }
    fn commit(&mut self) -> DbResult<()> {
        let r = self.inner.commit();
        self.check(r)
    }
    fn rollback(&mut self) -> DbResult<()> {
        let r = self.inner.rollback();
        self.check(r)
    }
    fn run(&mut self, stmt: &Stmt, params: &[P], out: &mut Rows) -> DbResult<u64> {
        let r = self.inner.run(stmt, params, out);
        self.check(r)
    }
    fn pipeline(&mut self, stmts: &mut [Piped<'_, '_>], end: End) -> DbResult<()> {
        let r = self.inner.pipeline(stmts, end);
        self.check(r)
    }
    fn batch(&mut self, sql: &str) -> DbResult<()> {
        let r = self.inner.batch(sql);
        self.check(r)
    }
    fn query(&mut self, sql: &str) -> DbResult<Rows> {
        let r = self.inner.query(sql);
        self.check(r)
    }
    fn load(&mut self, batch: &Batch) -> DbResult<()> {
        let r = self.inner.load(batch);
        self.check(r)
    }
    fn take_commit_time(&mut self) -> Option<CommitTime> {
        self.inner.take_commit_time()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_connections_go_to_the_nodes_in_turn() {
        let node = |i: usize| MyConnector {
            url: format!("mysql://root@127.0.0.1:{}/x", 1000 + i),
            isolation: Isolation::RepeatableRead,
        };
        let c = ClusterConnector::new((0..3).map(node).collect(), false);
        let turns: Vec<usize> = (0..7).map(|_| c.turn()).collect();
        assert_eq!(turns, [0, 1, 2, 0, 1, 2, 0]);
    }

    /// A connector that opens nothing: a host that counts what it was asked for.
    struct Counting(Arc<Mutex<Vec<Purpose>>>);

    impl Connector for Counting {
        fn dialect(&self) -> Dialect {
            Dialect::Postgres
        }
        fn connect(&self, purpose: Purpose) -> Result<Box<dyn Conn>> {
            self.0.lock().unwrap().push(purpose);
            Err(Error::usage("no database here"))
        }
    }

    #[test]
    fn run_connections_go_to_the_hosts_in_turn_and_the_rest_to_the_first() {
        let seen: Vec<Arc<Mutex<Vec<Purpose>>>> = (0..3).map(|_| Arc::default()).collect();
        let c = HostsConnector::new(
            seen.iter()
                .map(|s| Box::new(Counting(s.clone())) as Box<dyn Connector>)
                .collect(),
        );
        for _ in 0..5 {
            let _ = c.connect(Purpose::Run);
        }
        let _ = c.connect(Purpose::Load);
        let _ = c.connect(Purpose::Check);
        let asked: Vec<usize> = seen.iter().map(|s| s.lock().unwrap().len()).collect();
        assert_eq!(asked, [4, 2, 1]);
        assert_eq!(
            *seen[0].lock().unwrap(),
            [Purpose::Run, Purpose::Run, Purpose::Load, Purpose::Check]
        );
        // Failed connections are not logged as used.
        assert!(c.handle().hosts().is_empty());
    }
}
