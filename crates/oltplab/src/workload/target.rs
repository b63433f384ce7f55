//! Where the TPC-C database lives: an SQLite file (`--url sqlite:PATH` or `DATA_DIR/tpcc.sqlite`), an
//! external server (`--url postgres://…` / `mysql://…`), or a server oltplab starts itself in
//! `--data-dir` and stops when done.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oltplab_core::safety::{self, io_usage, FileMarker, TargetKind};
use oltplab_core::{Error, Result};
use oltplab_dbs::server::connect::{external_settings, kind_of_url, split_hosts};
use oltplab_dbs::server::galera::{self, ClusterConfig, ManagedCluster};
use oltplab_dbs::server::{
    connect_check, redact_url, with_password_from_env, DataInit, ManagedServer, ServerConfig,
    ServerKind,
};
use oltplab_dbs::sqlite::{self as sq, SqliteOptions};
use oltplab_metrics::env::Env;
use oltplab_metrics::{Warning, WarningKind};
use oltplab_workloads::sql::{Dialect, Isolation};
use oltplab_workloads::tpcc::connect::{
    ClusterConnector, ClusterHandle, HostsConnector, HostsHandle, MyConnector, PgConnector,
    SqliteConnector,
};
use oltplab_workloads::tpcc::Connector;
use serde::Serialize;

use oltplab_schema::HostUse;

pub const SQLITE_FILE: &str = "tpcc.sqlite";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Embedded SQLite (nothing to install)
    Sqlite,
    /// PostgreSQL, managed by oltplab or by --url
    Postgres,
    /// MariaDB (InnoDB), managed by oltplab or by --url
    Mariadb,
    /// A managed MariaDB Galera cluster (`--nodes N`).
    Galera,
}

/// clap's parser for an `--engine` of one database (a study's, a crash's): no Galera cluster.
pub fn single_engine() -> impl clap::builder::TypedValueParser<Value = Engine> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["sqlite", "postgres", "mariadb"])
        .map(|name: String| Engine::named(&name).expect("each possible value names an engine"))
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<ServerKind> for Engine {
    fn from(kind: ServerKind) -> Engine {
        match kind {
            ServerKind::Postgres => Engine::Postgres,
            ServerKind::Mariadb => Engine::Mariadb,
        }
    }
}

impl Engine {
    pub const NAMES: [&'static str; 4] = ["sqlite", "postgres", "mariadb", "galera"];

    /// The engine a checked name (a study's or a crash's `--engine`) names.
    pub fn named(name: &str) -> Result<Engine> {
        Engine::NAMES
            .iter()
            .zip([Engine::Sqlite, Engine::Postgres, Engine::Mariadb, Engine::Galera])
            .find_map(|(n, e)| (*n == name).then_some(e))
            .ok_or_else(|| {
                Error::usage(format!(
                    "--engine {name} is not a database engine: give sqlite, postgres, mariadb or galera"
                ))
            })
    }

    pub fn name(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
            Engine::Mariadb => "mariadb",
            Engine::Galera => "galera",
        }
    }

    pub fn dialect(self) -> Dialect {
        match self {
            Engine::Sqlite => Dialect::Sqlite,
            Engine::Postgres => Dialect::Postgres,
            Engine::Mariadb | Engine::Galera => Dialect::Mysql,
        }
    }
}

/// How to reach the database, resolved from `--engine`, `--url` and `--data-dir`.
#[derive(Clone, Debug, Serialize)]
pub struct DbSpec {
    pub engine: Engine,
    /// The workload the database holds, for messages that name a command.
    #[serde(skip)]
    pub workload: &'static str,
    /// The SQLite file.
    pub sqlite_path: Option<PathBuf>,
    /// An external server's URL (never serialised: it may hold a password).
    #[serde(skip)]
    pub url: Option<String>,
    /// The URL as printed and stored: password replaced.
    pub url_shown: Option<String>,
    /// Several hosts (a multi-host `--url`, or `--url` repeated): one URL each, with password,
    /// the first also `url`; empty for one host.
    #[serde(skip)]
    pub hosts: Vec<String>,
    /// Those hosts as printed and stored, passwords replaced.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub url_hosts: Vec<String>,
    pub data_dir: PathBuf,
    /// True when oltplab starts the server itself.
    pub managed: bool,
    pub buffer_pool_bytes: u64,
    pub wal_dir: Option<PathBuf>,
    pub direct_io: bool,
    /// More settings for a managed server (`name=value`, e.g. MariaDB's performance_schema).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_settings: Vec<(String, String)>,
    /// The servers' isolation level for write transactions; None: the engine's own for TPC-C
    /// ([`Isolation::default_for`]). SQLite is always serializable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation: Option<Isolation>,
    /// A Galera cluster's nodes (`--nodes`); None: 3 for a load, as loaded for a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
}

impl DbSpec {
    /// The database of workload `name`: unless `--url` named an SQLite file, its own file
    /// `sqlite_file` under the data directory, so that the workloads' databases live side by side.
    pub fn for_workload(mut self, name: &'static str, sqlite_file: &str) -> DbSpec {
        self.workload = name;
        if self.sqlite_path.as_deref() == Some(self.data_dir.join(SQLITE_FILE).as_path()) {
            self.sqlite_path = Some(self.data_dir.join(sqlite_file));
        }
        self
    }

    pub fn resolve(
        engine: Option<Engine>,
        url: Option<&str>,
        data_dir: &Path,
        buffer_pool_bytes: u64,
        wal_dir: Option<&Path>,
        direct_io: bool,
    ) -> Result<DbSpec> {
        let urls: Vec<&str> = url.into_iter().collect();
        DbSpec::resolve_urls(
            engine,
            &urls,
            data_dir,
            buffer_pool_bytes,
            wal_dir,
            direct_io,
        )
    }

    /// [`DbSpec::resolve`] with `--url` given any number of times: several URLs (or one naming
    /// several hosts) are the hosts of one server database, all of one protocol.
    pub fn resolve_urls(
        engine: Option<Engine>,
        urls: &[&str],
        data_dir: &Path,
        buffer_pool_bytes: u64,
        wal_dir: Option<&Path>,
        direct_io: bool,
    ) -> Result<DbSpec> {
        let url = urls.first().copied();
        let kind_of = |u: &str| -> Result<Engine> {
            if u.starts_with("sqlite:") {
                return Ok(Engine::Sqlite);
            }
            kind_of_url(u).map(Engine::from)
        };
        let from_url = url.map(kind_of).transpose()?;
        if urls.len() > 1 {
            if from_url == Some(Engine::Sqlite) {
                return Err(Error::usage(
                    "--url sqlite:PATH names one file, and a second --url has nothing to spread over: give --url once",
                ));
            }
            for u in &urls[1..] {
                let other = kind_of(u)?;
                if Some(other) != from_url {
                    return Err(Error::usage(format!(
                        "--url {} is a {} URL but --url {} a {} one: every host of one run must speak one protocol",
                        redact_url(urls[0]),
                        from_url.map_or("", Engine::name),
                        redact_url(u),
                        other.name()
                    )));
                }
            }
        }
        let engine = match (engine, from_url) {
            (Some(e), Some(u)) if e != u => {
                return Err(Error::usage(format!(
                    "--engine {} does not match the {} URL given with --url: drop --engine or fix the URL",
                    e.name(),
                    u.name()
                )))
            }
            (Some(e), _) => e,
            (None, Some(u)) => u,
            (None, None) => Engine::Sqlite,
        };
        let mut spec = DbSpec {
            engine,
            workload: "tpcc",
            sqlite_path: None,
            url: None,
            url_shown: None,
            data_dir: data_dir.to_path_buf(),
            managed: false,
            buffer_pool_bytes,
            wal_dir: wal_dir.map(Path::to_path_buf),
            direct_io,
            server_settings: Vec::new(),
            isolation: None,
            nodes: None,
            hosts: Vec::new(),
            url_hosts: Vec::new(),
        };
        match (engine, url) {
            (Engine::Sqlite, Some(u)) => {
                let path = u.trim_start_matches("sqlite:").trim_start_matches("//");
                if path.is_empty() {
                    return Err(Error::usage(
                        "--url sqlite: needs a file name, e.g. --url sqlite:/tmp/tpcc.sqlite",
                    ));
                }
                spec.sqlite_path = Some(PathBuf::from(path));
            }
            (Engine::Sqlite, None) => spec.sqlite_path = Some(data_dir.join(SQLITE_FILE)),
            (_, Some(_)) => {
                let mut hosts = Vec::new();
                for u in urls {
                    hosts.extend(split_hosts(u)?);
                }
                // PGPASSWORD, ~/.pgpass or MYSQL_PWD when the URL has no password: as the
                // engines' own clients, so that it need not be on the command line.
                spec.url = Some(with_password_from_env(&hosts[0]));
                spec.url_shown = Some(
                    urls.iter()
                        .map(|u| redact_url(u))
                        .collect::<Vec<_>>()
                        .join(" "),
                );
                if hosts.len() > 1 {
                    spec.url_hosts = hosts.iter().map(|h| redact_url(h)).collect();
                    spec.hosts = hosts.iter().map(|h| with_password_from_env(h)).collect();
                }
            }
            (_, None) => spec.managed = true,
        }
        Ok(spec)
    }

    /// The isolation level write transactions run at (see [`DbSpec::isolation`]).
    pub fn isolation(&self) -> Isolation {
        self.isolation
            .unwrap_or_else(|| Isolation::default_for(self.engine.dialect()))
    }

    /// Where the database is, for messages.
    pub fn location(&self) -> String {
        match (&self.sqlite_path, &self.url_shown) {
            (Some(p), _) => p.display().to_string(),
            (_, Some(u)) => u.clone(),
            _ if self.engine == Engine::Galera => {
                format!("the managed Galera cluster in {}", self.data_dir.display())
            }
            _ => format!(
                "the managed {} server in {}",
                self.engine.name(),
                self.data_dir.display()
            ),
        }
    }

    pub fn server_kind(&self) -> ServerKind {
        match self.engine {
            Engine::Mariadb | Engine::Galera => ServerKind::Mariadb,
            _ => ServerKind::Postgres,
        }
    }
}

/// An open database: its connector, the server oltplab started (stopped on drop), and what the
/// result records about the engine.
pub struct Db {
    pub connector: Box<dyn Connector>,
    pub server: Option<ManagedServer>,
    /// A managed Galera cluster (then `server` is None); stopped on drop.
    pub cluster: Option<ManagedCluster>,
    /// Each node's URL of a cluster, node 1 first (for per-node counters and checks).
    pub node_urls: Vec<String>,
    /// A cluster's run connections' log: moves to other nodes.
    pub cluster_log: Option<ClusterHandle>,
    /// Several hosts by `--url`: which host each run connection went to.
    pub host_log: Option<HostsHandle>,
    /// Several hosts by `--url`: each one's URL (with password), for connection-limit checks.
    pub host_urls: Vec<String>,
    pub version: String,
    pub settings: BTreeMap<String, String>,
    /// The path whose device /proc/diskstats is read for.
    pub data_path: PathBuf,
    /// Server URL (with password), for connection-limit checks.
    pub url: Option<String>,
    pub engine: Engine,
}

impl Db {
    /// PIDs of the database's processes, for CPU accounting: a managed server's, an external
    /// server's found by name on this machine (none if it runs elsewhere), none for SQLite.
    pub fn server_pids(&self) -> Vec<u32> {
        if let Some(c) = &self.cluster {
            return c.pids();
        }
        match (&self.server, self.engine) {
            (Some(s), _) => s.pids(),
            (None, Engine::Sqlite) => Vec::new(),
            (None, Engine::Postgres) => super::procstat::pids_named(&["postgres"]),
            (None, Engine::Mariadb | Engine::Galera) => {
                super::procstat::pids_named(&["mariadbd", "mysqld"])
            }
        }
    }

    /// Whether a managed server died: the sentence that says so (exit status, log tail).
    pub fn server_died(&mut self) -> Option<String> {
        if let Some(c) = self.cluster.as_mut() {
            return c.died();
        }
        self.server.as_mut().and_then(|s| s.died())
    }

    /// After an error that a server's death may have caused: whether a managed server died,
    /// waiting up to a second for it — a killed server's sockets close before its exit can be
    /// seen, so a client can meet the reset first.
    pub fn server_died_after_error(&mut self) -> Option<String> {
        if self.server.is_none() && self.cluster.is_none() {
            return None;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        loop {
            if let Some(what) = self.server_died() {
                return Some(what);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Stops a managed server after the measured work. A server that died, or that did not stop
    /// in time, does not discard what was measured: it becomes a warning for the result, and a
    /// death also the error the run ends with (after the result is saved), returned second.
    pub fn stop_server(&mut self) -> (Vec<Warning>, Option<Error>) {
        let mut warnings = Vec::new();
        let died = self.server_died();
        if let Some(what) = &died {
            warnings.push(Warning::new(
                WarningKind::ServerDied,
                format!(
                    "the server died during the run: {what}; the figures cover only the time before"
                ),
            ));
        }
        if let Some(server) = self.server.take() {
            if let Err(e) = server.stop() {
                warnings.push(Warning::new(WarningKind::ServerShutdownSlow, e.to_string()));
            }
        }
        if let Some(cluster) = self.cluster.take() {
            if let Err(e) = cluster.stop() {
                warnings.push(Warning::new(WarningKind::ServerShutdownSlow, e.to_string()));
            }
        }
        let error = died.map(|what| {
            Error::failed(format!(
                "the server died during the run ({what}); the result holds what was measured before"
            ))
        });
        (warnings, error)
    }

    /// Stops what oltplab started, cleanly: the managed server, or the cluster (whose load then
    /// copies node 1's data to the other nodes).
    pub fn close(mut self) -> Result<()> {
        if let Some(server) = self.server.take() {
            server.stop()?;
        }
        if let Some(cluster) = self.cluster.take() {
            cluster.stop()?;
        }
        Ok(())
    }

    /// The environment a run's result records: the machine, the engine's version and settings,
    /// and a server's isolation level for write transactions.
    pub fn env(&self, spec: &DbSpec) -> Env {
        let mut env = Env::collect(Some(&self.data_path));
        env.engine_version = Some(self.version.clone());
        env.engine_settings = self.settings.clone();
        if spec.engine != Engine::Sqlite {
            env.engine_settings.insert(
                "transaction_isolation".into(),
                spec.isolation().name().into(),
            );
        }
        env
    }

    /// Several hosts by `--url`: each host's terminals and other run connections (workers), from
    /// the connections the run made — the driver opens its `terminals` first. Empty otherwise.
    pub fn hosts_used(&self, spec: &DbSpec, terminals: usize) -> Vec<HostUse> {
        let Some(log) = &self.host_log else {
            return Vec::new();
        };
        let mut used: Vec<HostUse> = spec
            .url_hosts
            .iter()
            .enumerate()
            .map(|(i, url)| HostUse {
                host: i as u32 + 1,
                url: url.clone(),
                ..HostUse::default()
            })
            .collect();
        for (i, host) in log.hosts().into_iter().enumerate() {
            if let Some(u) = used.get_mut(host) {
                if i < terminals {
                    u.terminals += 1;
                } else {
                    u.workers += 1;
                }
            }
        }
        used
    }

    /// Checks that `needed` connections fit into the server's limit.
    pub fn check_connections(&self, needed: u32) -> Result<()> {
        if !self.host_urls.is_empty() {
            // Connection i goes to host i mod N: the first `needed mod N` hosts get one more.
            let n = self.host_urls.len() as u32;
            for (i, url) in self.host_urls.iter().enumerate() {
                let share = needed / n + u32::from((i as u32) < needed % n);
                connect_check(url)?.check_connections(share)?;
            }
            return Ok(());
        }
        if let Some(url) = &self.url {
            connect_check(url)?.check_connections(needed)?;
        }
        Ok(())
    }
}

/// What opening is for: a load makes a fresh database, run and check use the existing one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    Load { force: bool },
    Existing,
}

/// SQLite settings for runs: WAL, full sync, the buffer pool split over the connections.
pub fn sqlite_connector(
    path: &Path,
    buffer_pool_bytes: u64,
    connections: usize,
    vfs: Option<String>,
) -> SqliteConnector {
    SqliteConnector {
        path: path.to_path_buf(),
        opts: SqliteOptions {
            vfs,
            cache_bytes: (buffer_pool_bytes / connections.max(1) as u64).max(1 << 20),
            ..SqliteOptions::default()
        },
        load_cache_bytes: buffer_pool_bytes.max(64 << 20),
        writer_lock: true,
    }
}

/// Opens (and for a load, prepares) the database of `spec`. `connections` sizes SQLite's per-
/// connection cache and the managed server's connection limit.
pub fn open(
    spec: &DbSpec,
    how: Open,
    connections: usize,
    sqlite_vfs: Option<String>,
    extra_env: Vec<(String, String)>,
) -> Result<Db> {
    open_with_nodes(spec, how, connections, sqlite_vfs, extra_env, Vec::new())
}

/// [`open`] with a Galera cluster's per-node environment (`node_env[k - 1]` for node k: each
/// node's own emulated device).
pub fn open_with_nodes(
    spec: &DbSpec,
    how: Open,
    connections: usize,
    sqlite_vfs: Option<String>,
    extra_env: Vec<(String, String)>,
    node_env: Vec<Vec<(String, String)>>,
) -> Result<Db> {
    match spec.engine {
        Engine::Sqlite => {
            let path = spec.sqlite_path.clone().expect("sqlite has a path");
            prepare_sqlite_file(spec, &path, how)?;
            let connector = sqlite_connector(
                &path,
                spec.buffer_pool_bytes,
                connections,
                sqlite_vfs.clone(),
            );
            let mut settings = BTreeMap::new();
            if how == Open::Existing {
                let conn = sq::open(&path, &connector.opts)?;
                settings = sq::settings(&conn);
            }
            settings.insert(
                "cache_bytes_per_connection".into(),
                connector.opts.cache_bytes.to_string(),
            );
            settings.insert(
                "busy_timeout_ms".into(),
                connector.opts.busy_timeout.as_millis().to_string(),
            );
            settings.insert(
                "writers".into(),
                "queued on an in-process lock, then BEGIN IMMEDIATE; readers use WAL snapshots"
                    .into(),
            );
            if let Some(v) = &sqlite_vfs {
                settings.insert("vfs".into(), v.clone());
            }
            Ok(Db {
                engine: spec.engine,
                connector: Box::new(connector),
                server: None,
                cluster: None,
                node_urls: Vec::new(),
                cluster_log: None,
                host_log: None,
                host_urls: Vec::new(),
                version: sq::version(),
                settings,
                data_path: path,
                url: None,
            })
        }
        Engine::Galera => open_cluster(spec, how, connections, extra_env, node_env),
        Engine::Postgres | Engine::Mariadb => {
            let (url, server) = match &spec.url {
                Some(u) => (u.clone(), None),
                None => {
                    let kind = spec.server_kind();
                    let cluster = spec.data_dir.join(kind.name());
                    if let Open::Load { force } = how {
                        if cluster.exists() && !force {
                            return Err(Error::usage(format!(
                                "{} already holds a {} database: use it with `oltplab run {} --engine {}`, or add --force to replace it",
                                spec.data_dir.display(),
                                kind.product(),
                                spec.workload,
                                spec.engine.name()
                            )));
                        }
                    } else if !cluster.exists() {
                        return Err(Error::usage(format!(
                            "{} holds no {} database: create one with `oltplab load {} --engine {} --data-dir {}` first",
                            spec.data_dir.display(),
                            kind.product(),
                            spec.workload,
                            spec.engine.name(),
                            spec.data_dir.display()
                        )));
                    }
                    let mut cfg = ServerConfig::new(kind, &spec.data_dir);
                    cfg.init = match how {
                        Open::Load { .. } => DataInit::Fresh,
                        Open::Existing => DataInit::Reuse,
                    };
                    cfg.buffer_pool_bytes = spec.buffer_pool_bytes;
                    cfg.wal_dir = spec.wal_dir.clone();
                    cfg.direct_io = spec.direct_io;
                    cfg.max_connections = (connections as u32 + 10).max(100);
                    cfg.extra_env = extra_env;
                    cfg.extra_settings = spec.server_settings.clone();
                    if let Open::Load { force } = how {
                        cfg.force = force;
                    }
                    let server = ManagedServer::start(&cfg)?;
                    (server.url(), Some(server))
                }
            };
            let (version, settings) = match &server {
                Some(s) => (s.version(), s.settings()),
                None => {
                    let info = connect_check(&url)?;
                    (info.version, external_settings(&url).unwrap_or_default())
                }
            };
            let one = |url: &String| -> Box<dyn Connector> {
                match spec.engine {
                    Engine::Postgres => Box::new(PgConnector {
                        url: url.clone(),
                        isolation: spec.isolation(),
                    }),
                    _ => Box::new(MyConnector {
                        url: url.clone(),
                        isolation: spec.isolation(),
                    }),
                }
            };
            let (connector, host_log) = if spec.hosts.len() > 1 {
                // Every host answers before anything runs: a wrong one is named now, not as a
                // terminal's failure later.
                for host in &spec.hosts[1..] {
                    connect_check(host)?;
                }
                let hosts = HostsConnector::new(spec.hosts.iter().map(one).collect());
                let log = hosts.handle();
                (Box::new(hosts) as Box<dyn Connector>, Some(log))
            } else {
                (one(&url), None)
            };
            let data_path = server
                .as_ref()
                .map(|s| s.cluster_dir().to_path_buf())
                .unwrap_or_else(|| spec.data_dir.clone());
            Ok(Db {
                engine: spec.engine,
                connector,
                server,
                cluster: None,
                node_urls: Vec::new(),
                cluster_log: None,
                host_log,
                host_urls: spec.hosts.clone(),
                version,
                settings,
                data_path,
                url: Some(url),
            })
        }
    }
}

/// Starts the managed Galera cluster of `spec`: for a load node 1 alone (the others are copied
/// from it when it stops), else every node; terminals connect to the nodes in turn.
fn open_cluster(
    spec: &DbSpec,
    how: Open,
    connections: usize,
    extra_env: Vec<(String, String)>,
    node_env: Vec<Vec<(String, String)>>,
) -> Result<Db> {
    let loaded = galera::loaded_nodes(&spec.data_dir);
    match (how, loaded) {
        (Open::Load { force: false }, Some(_)) => {
            return Err(Error::usage(format!(
                "{} already holds a Galera cluster: use it with `oltplab run {} --engine galera`, or add --force to replace it",
                spec.data_dir.display(),
                spec.workload
            )))
        }
        (Open::Existing, None) => {
            return Err(Error::usage(format!(
                "{} holds no Galera cluster: create one with `oltplab load {} --engine galera --data-dir {}` first",
                spec.data_dir.display(),
                spec.workload,
                spec.data_dir.display()
            )))
        }
        _ => {}
    }
    if !extra_env.is_empty() {
        // Nodes sharing one environment would share one emulated device and one trace.
        return Err(Error::failed(
            "a Galera cluster's nodes each need their own emulation session, not one for all (a bug in oltplab)",
        ));
    }
    let mut server = ServerConfig::new(ServerKind::Mariadb, &spec.data_dir);
    server.init = match how {
        Open::Load { .. } => DataInit::Fresh,
        Open::Existing => DataInit::Reuse,
    };
    server.buffer_pool_bytes = spec.buffer_pool_bytes;
    server.wal_dir = spec.wal_dir.clone();
    server.direct_io = spec.direct_io;
    server.max_connections = (connections as u32 + 10).max(100);
    server.extra_settings = spec.server_settings.clone();
    if let Open::Load { force } = how {
        server.force = force;
    }
    let cluster = ManagedCluster::start(&ClusterConfig {
        server,
        nodes: spec.nodes,
        node_env,
    })?;
    if let Some(k) = cluster.node1_copied_from() {
        crate::output::note!(
            "Galera node 1 had not shut down cleanly (it died in the last run): it starts as a copy of node {k}, the most advanced node that stopped cleanly"
        );
    }
    let node_urls: Vec<String> = cluster.nodes().iter().map(|n| n.url()).collect();
    let first = &cluster.nodes()[0];
    let mut settings = first.settings();
    settings.insert("galera_nodes".into(), cluster.nodes().len().to_string());
    let version = format!(
        "{} (Galera, {} node{})",
        first.version(),
        cluster.nodes().len(),
        if cluster.nodes().len() == 1 { "" } else { "s" }
    );
    let connector = ClusterConnector::new(
        node_urls
            .iter()
            .map(|url| MyConnector {
                url: url.clone(),
                isolation: spec.isolation(),
            })
            .collect(),
        // Brokerage's market settles trades that terminals on other nodes ordered.
        spec.workload == "brokerage",
    );
    Ok(Db {
        engine: spec.engine,
        cluster_log: Some(connector.handle()),
        host_log: None,
        host_urls: Vec::new(),
        connector: Box::new(connector),
        data_path: first.cluster_dir().to_path_buf(),
        url: Some(node_urls[0].clone()),
        node_urls,
        server: None,
        cluster: Some(cluster),
        version,
        settings,
    })
}

/// The SQLite file may be created (load) or must exist (run, check); oltplab's own files are
/// marked, a foreign file is only written with `--force`.
fn prepare_sqlite_file(spec: &DbSpec, path: &Path, how: Open) -> Result<()> {
    let kind = safety::inspect(path).map_err(|e| io_usage(path, "inspect", &e))?;
    match how {
        Open::Existing => match kind {
            TargetKind::RegularFile { .. } => Ok(()),
            TargetKind::Missing => Err(Error::usage(format!(
                "{} does not exist: create the database with `oltplab load {}` first{}",
                path.display(),
                spec.workload,
                if spec.sqlite_path.as_deref() == Some(&spec.data_dir.join(SQLITE_FILE)) {
                    String::new()
                } else {
                    format!(" (--url sqlite:{})", path.display())
                }
            ))),
            _ => Err(Error::usage(format!(
                "{} is not a file: name an SQLite database file",
                path.display()
            ))),
        },
        Open::Load { force } => {
            if path.starts_with(&spec.data_dir) && path.parent() == Some(spec.data_dir.as_path()) {
                safety::ensure_own_dir(&spec.data_dir, force)?;
            } else if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                if !parent.is_dir() {
                    return Err(Error::usage(format!(
                        "the directory {} does not exist: create it first",
                        parent.display()
                    )));
                }
            }
            match kind {
                TargetKind::Missing => {}
                TargetKind::RegularFile { .. } => {
                    let ours = safety::read_file_marker(path).is_some();
                    if !ours && !force {
                        return Err(Error::usage(format!(
                            "{} exists and was not created by oltplab: choose another file, or add --force to load TPC-C into it (its other tables are kept)",
                            path.display()
                        )));
                    }
                    if ours && force {
                        // Our own file: start from nothing rather than dropping table by table.
                        oltplab_dbs::sqlite::remove_database_files(path);
                    }
                }
                _ => {
                    return Err(Error::usage(format!(
                        "{} is not a regular file: name an SQLite database file",
                        path.display()
                    )))
                }
            }
            if !path.exists() {
                // Create the file now so that it can be marked before anything goes into it.
                std::fs::File::create(path).map_err(|e| io_usage(path, "create", &e))?;
                safety::write_file_marker(path, FileMarker { filled_bytes: 0 })
                    .map_err(|e| io_usage(path, "mark", &e))?;
            }
            Ok(())
        }
    }
}
