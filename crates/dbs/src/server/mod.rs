//! Managed servers: oltplab creates a data directory, starts PostgreSQL or MariaDB from the installed
//! programs on a private Unix socket and a loopback port with the requested buffer pool, WAL
//! placement and direct-I/O setting, waits until it accepts connections, records its version and
//! settings, and stops it at the end — also on errors, on Ctrl-C, on a panic and when oltplab itself
//! is killed (the kernel then asks the server to shut down, see [`process::ServerProcess`]).
//!
//! ```text
//! DATA_DIR/                 marked .oltplab
//!   postgres/ | mariadb/    the cluster (initdb / mariadb-install-db)
//!   postgres.oltplab        the cluster's marker: created by oltplab, where its WAL is
//!   postgres.log            the server's log (init and every start, appended)
//! WAL_DIR/postgres-wal/     with --wal-dir: pg_wal (symlinked) or InnoDB's redo log
//! ```
//!
//! When oltplab runs as root the server runs as `postgres` / `mysql` and owns the cluster.

mod binaries;
pub mod connect;
pub mod galera;
mod mariadb;
mod postgres;
pub mod process;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use oltplab_core::{interrupt, safety, Error, Result};

pub use binaries::{
    check_settings, find as find_program, knows_setting, parse_setting, setting_names,
    MariadbBinaries, PostgresBinaries,
};
pub use connect::{connect_check, redact_url, with_password_from_env, ServerInfo};
pub use mariadb::maps_redo_log_in;
pub use process::Account;

/// The database server a managed server runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerKind {
    Postgres,
    Mariadb,
}

impl ServerKind {
    /// `postgres` / `mariadb`: the `--engine` name and the name of the cluster directory.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Postgres => "postgres",
            ServerKind::Mariadb => "mariadb",
        }
    }

    /// `PostgreSQL` / `MariaDB`, for messages.
    pub fn product(self) -> &'static str {
        match self {
            ServerKind::Postgres => "PostgreSQL",
            ServerKind::Mariadb => "MariaDB",
        }
    }

    /// The account the server runs as when oltplab runs as root (Debian's packages create both).
    pub fn account_name(self) -> &'static str {
        match self {
            ServerKind::Postgres => "postgres",
            ServerKind::Mariadb => "mysql",
        }
    }
}

/// Whether [`ManagedServer::start`] makes a new database or starts the one already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataInit {
    /// A new, empty cluster; one oltplab made earlier in the same place is stopped and replaced
    /// (`oltplab load`).
    Fresh,
    /// The cluster an earlier oltplab run made in this data directory (`oltplab run` after `load`).
    Reuse,
}

/// Everything about how a managed server is started.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub kind: ServerKind,
    /// Holds the cluster, its marker and its log; created and marked by oltplab.
    pub data_dir: PathBuf,
    pub init: DataInit,
    /// shared_buffers / innodb_buffer_pool_size.
    pub buffer_pool_bytes: u64,
    /// Where the WAL (PostgreSQL) or the redo log (InnoDB) lives, if not in the cluster.
    pub wal_dir: Option<PathBuf>,
    /// InnoDB `innodb_flush_method=O_DIRECT` (else `fsync`, through the page cache); PostgreSQL 16+
    /// `debug_io_direct=data,wal`; PostgreSQL 15 has no direct I/O and records that in the settings.
    pub direct_io: bool,
    pub max_connections: u32,
    /// Environment of the server process only (not of initdb), e.g. the emulation shim's
    /// `LD_PRELOAD` and its variables. With `LD_PRELOAD`, InnoDB's native AIO is turned off because
    /// io_submit bypasses libc and therefore the shim.
    pub extra_env: Vec<(String, String)>,
    /// More server settings, `name=value` (PostgreSQL `-c`, MariaDB `--name=value`); applied last.
    pub extra_settings: Vec<(String, String)>,
    /// Look for the server programs only here (default: PATH and the usual install places).
    pub bin_dir: Option<PathBuf>,
    /// Allow a non-empty data directory oltplab did not create (its files are never touched).
    pub force: bool,
    /// How long to wait for the server to accept connections.
    pub start_timeout: Duration,
}

impl ServerConfig {
    /// Defaults: a fresh cluster, 128 MiB buffer pool, WAL in the cluster, buffered I/O, 100
    /// connections, 60 s to start.
    pub fn new(kind: ServerKind, data_dir: impl Into<PathBuf>) -> ServerConfig {
        ServerConfig {
            kind,
            data_dir: data_dir.into(),
            init: DataInit::Fresh,
            buffer_pool_bytes: 128 << 20,
            wal_dir: None,
            direct_io: false,
            max_connections: 100,
            extra_env: Vec::new(),
            extra_settings: Vec::new(),
            bin_dir: None,
            force: false,
            start_timeout: Duration::from_secs(60),
        }
    }

    /// True if the server will run with an `LD_PRELOAD` library (the emulation shim).
    pub fn uses_preload(&self) -> bool {
        self.extra_env
            .iter()
            .any(|(k, v)| k == "LD_PRELOAD" && !v.is_empty())
    }

    fn validate(&self) -> Result<()> {
        const MIN_POOL_BYTES: u64 = 8 << 20;
        if self.buffer_pool_bytes < MIN_POOL_BYTES {
            return Err(Error::usage(format!(
                "a buffer pool of {} is too small for {}: give --buffer-pool 8m or more",
                oltplab_core::units::format_bytes(self.buffer_pool_bytes),
                self.kind.product()
            )));
        }
        let memory = oltplab_metrics::env::available_memory_bytes();
        if memory > 0 && self.buffer_pool_bytes > memory {
            return Err(Error::usage(format!(
                "a buffer pool of {} is more than this machine's {} of available memory: give a smaller --buffer-pool",
                oltplab_core::units::format_bytes(self.buffer_pool_bytes),
                oltplab_core::units::format_bytes(memory)
            )));
        }
        if !(2..=10_000).contains(&self.max_connections) {
            return Err(Error::usage(format!(
                "{} connections is outside what a managed server allows (2 to 10000)",
                self.max_connections
            )));
        }
        Ok(())
    }
}

/// Where a managed server keeps its files.
#[derive(Debug, Clone)]
struct Layout {
    cluster: PathBuf,
    marker: PathBuf,
    log: PathBuf,
    /// The WAL / redo directory outside the cluster, if any.
    wal: Option<PathBuf>,
}

impl Layout {
    fn new(cfg: &ServerConfig) -> Result<Layout> {
        let data_dir = absolute(&cfg.data_dir)?;
        let name = cfg.kind.name();
        let wal = match &cfg.wal_dir {
            Some(dir) => Some(absolute(dir)?.join(format!("{name}-wal"))),
            None => None,
        };
        Ok(Layout {
            cluster: data_dir.join(name),
            marker: data_dir.join(format!("{name}.oltplab")),
            log: data_dir.join(format!("{name}.log")),
            wal,
        })
    }
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| safety::io_usage(path, "resolve", &e))
}

/// What the marker of a cluster says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marker {
    kind: String,
    wal: Option<PathBuf>,
    /// The cluster the marker was written for: a copied data directory's marker names the
    /// original's.
    cluster: Option<PathBuf>,
}

fn read_marker(path: &Path) -> Option<Marker> {
    let text = fs::read_to_string(path).ok()?;
    let mut ours = false;
    let mut kind = String::new();
    let mut wal = None;
    let mut cluster = None;
    for line in text.lines() {
        match line.split_once('=') {
            Some(("created-by", "oltplab")) => ours = true,
            Some(("server", k)) => kind = k.to_string(),
            Some(("wal-dir", w)) if !w.is_empty() => wal = Some(PathBuf::from(w)),
            Some(("cluster", c)) if !c.is_empty() => cluster = Some(PathBuf::from(c)),
            _ => {}
        }
    }
    ours.then_some(Marker { kind, wal, cluster })
}

fn write_marker(layout: &Layout, kind: ServerKind) -> Result<()> {
    let text = format!(
        "created-by=oltplab\nserver={}\nwal-dir={}\ncluster={}\n# {} is a database cluster oltplab created; delete them together\n",
        kind.name(),
        layout
            .wal
            .as_ref()
            .map(|w| w.display().to_string())
            .unwrap_or_default(),
        layout.cluster.display(),
        layout.cluster.display()
    );
    fs::write(&layout.marker, text).map_err(|e| safety::io_usage(&layout.marker, "write", &e))
}

/// The WAL directory an old cluster's marker names, if it is this cluster's to remove with it: the
/// marker was written for this very cluster (a copy of a data directory carries the original's
/// marker, whose WAL is the original's), and the directory has the name oltplab gives WAL
/// directories (a hand-edited marker must not make oltplab delete anything else). A marker of an
/// older oltplab, which did not record its cluster, removes nothing.
fn wal_to_remove(old: &Marker, layout: &Layout, kind: ServerKind) -> Option<PathBuf> {
    let w = old.wal.as_ref()?;
    let wal_name = format!("{}-wal", kind.name());
    (old.cluster.as_deref() == Some(layout.cluster.as_path())
        && w.file_name().and_then(|n| n.to_str()) == Some(wal_name.as_str()))
    .then(|| w.clone())
}

/// The account the server must run as, if oltplab runs as root.
pub fn server_account(kind: ServerKind) -> Result<Option<Account>> {
    if !process::running_as_root() {
        return Ok(None);
    }
    Account::lookup(kind.account_name()).map(Some).ok_or_else(|| {
        Error::usage(format!(
            "oltplab runs as root, and {} must run as the unprivileged '{}' account, which does not exist: install Debian's {} package (it creates the account) or run oltplab as an ordinary user",
            kind.product(),
            kind.account_name(),
            match kind {
                ServerKind::Postgres => "postgresql",
                ServerKind::Mariadb => "mariadb-server",
            }
        ))
    })
}

/// A running server that oltplab started. Dropping it stops the server.
pub struct ManagedServer {
    kind: ServerKind,
    process: Option<process::ServerProcess>,
    socket_dir: PathBuf,
    port: u16,
    version: String,
    settings: BTreeMap<String, String>,
    log: PathBuf,
    cluster: PathBuf,
    /// The socket directory, registered for a quick quit (see [`interrupt`]).
    _socket_guard: interrupt::Guard,
}

/// What a server-specific module tells the common start-up code.
struct Launch {
    command: std::process::Command,
    death_signal: i32,
    /// Stops the server at once on a quick quit (see [`process::SpawnOptions::quit_signal`]).
    quit_signal: i32,
}

impl ManagedServer {
    /// Prepares the data directory (a fresh cluster or the existing one), starts the server and
    /// waits until it accepts connections.
    pub fn start(cfg: &ServerConfig) -> Result<ManagedServer> {
        cfg.validate()?;
        let account = server_account(cfg.kind)?;
        let layout = Layout::new(cfg)?;
        // Binaries first: a missing installation must not leave an empty data directory behind.
        let bins = match cfg.kind {
            ServerKind::Postgres => Bins::Postgres(binaries::postgres(cfg.bin_dir.as_deref())?),
            ServerKind::Mariadb => Bins::Mariadb(binaries::mariadb(cfg.bin_dir.as_deref())?),
        };
        prepare_dirs(cfg, &layout, account.as_ref())?;
        match (&bins, cfg.init) {
            (Bins::Postgres(b), DataInit::Fresh) => postgres::init(b, &layout, account.as_ref())?,
            (Bins::Mariadb(b), DataInit::Fresh) => mariadb::init(b, &layout, account.as_ref())?,
            _ => {}
        }
        let socket_dir = process::private_socket_dir(cfg.kind.name(), account.as_ref())?;
        let socket_guard = interrupt::guard_path(&socket_dir);
        let result = Self::launch(
            cfg,
            &bins,
            &layout,
            account,
            socket_dir.clone(),
            socket_guard,
        );
        if result.is_err() {
            let _ = fs::remove_dir_all(&socket_dir);
        }
        result
    }

    fn launch(
        cfg: &ServerConfig,
        bins: &Bins,
        layout: &Layout,
        account: Option<Account>,
        socket_dir: PathBuf,
        socket_guard: interrupt::Guard,
    ) -> Result<ManagedServer> {
        // Neither server listens on TCP; the port only names PostgreSQL's socket file, and a free
        // one keeps the "no TCP" tests meaningful.
        let port = process::free_loopback_port()?;
        let launch = match bins {
            Bins::Postgres(b) => postgres::launch(b, cfg, layout, &socket_dir, port)?,
            Bins::Mariadb(b) => mariadb::launch(b, cfg, layout, &socket_dir, port)?,
        };
        let mut command = launch.command;
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&layout.log)
            .map_err(|e| safety::io_usage(&layout.log, "open the server log", &e))?;
        let log2 = log
            .try_clone()
            .map_err(|e| safety::io_usage(&layout.log, "open the server log", &e))?;
        command
            .stdin(std::process::Stdio::null())
            .stdout(log)
            .stderr(log2);
        for (k, v) in &cfg.extra_env {
            command.env(k, v);
        }
        let program = format!("{:?}", command.get_program());
        let proc = process::ServerProcess::spawn(
            command,
            &process::SpawnOptions {
                account,
                death_signal: launch.death_signal,
                quit_signal: launch.quit_signal,
            },
        )
        .map_err(|e| {
            Error::usage(format!(
                "cannot start {} ({program}): {e}: check the installation",
                cfg.kind.product()
            ))
        })?;
        let mut server = ManagedServer {
            kind: cfg.kind,
            process: Some(proc),
            socket_dir,
            port,
            version: String::new(),
            settings: BTreeMap::new(),
            log: layout.log.clone(),
            cluster: layout.cluster.clone(),
            _socket_guard: socket_guard,
        };
        if let Err(e) = server.wait_ready(cfg.start_timeout) {
            // A server that never became ready has nothing to flush, and may not answer: a
            // mariadbd still joining a Galera cluster keeps SIGTERM blocked (seen pending for
            // minutes). Its next start recovers.
            server.halt_within(Some(Duration::from_secs(10)));
            return Err(e);
        }
        let (version, mut settings) = match cfg.kind {
            ServerKind::Postgres => postgres::after_start(&server, cfg)?,
            ServerKind::Mariadb => mariadb::after_start(&server, cfg)?,
        };
        settings.insert("data_dir".into(), layout.cluster.display().to_string());
        settings.insert("server_log".into(), layout.log.display().to_string());
        server.version = version;
        server.settings = settings;
        Ok(server)
    }

    /// Waits until the server accepts connections; stops waiting on Ctrl-C.
    fn wait_ready(&mut self, timeout: Duration) -> Result<()> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.process.as_mut().and_then(|p| p.exited()) {
                let tail = process::log_tail(&self.log, 12);
                let cause = process::first_error_line(&self.log)
                    .map(|l| format!("; its first error: {l}"))
                    .unwrap_or_default();
                return Err(Error::failed(format!(
                    "{} stopped while starting ({status}){cause}; the end of its log {}:\n{tail}",
                    self.kind.product(),
                    self.log.display()
                )));
            }
            let last_error = match self.ping() {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            if interrupt::requested() {
                return Err(Error::Interrupted);
            }
            if started.elapsed() >= timeout {
                let tail = process::log_tail(&self.log, 12);
                return Err(Error::failed(format!(
                    "{} did not accept connections within {} s (last attempt: {last_error}); the end of its log {}:\n{tail}",
                    self.kind.product(),
                    timeout.as_secs(),
                    self.log.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// One connection attempt as the administrator.
    fn ping(&self) -> std::result::Result<(), String> {
        match self.kind {
            ServerKind::Postgres => postgres::ping(self),
            ServerKind::Mariadb => mariadb::ping(self),
        }
    }

    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The URL clients connect with, over the private Unix socket; it carries no password:
    /// `postgres://oltplab@/oltplab?host=/tmp/oltplab-postgres-…&port=…` or
    /// `mysql://root@127.0.0.1:PORT/oltplab?socket=/tmp/oltplab-mariadb-…/mysqld.sock` (the
    /// clients connect through the socket; the server takes no TCP connections).
    pub fn url(&self) -> String {
        match self.kind {
            ServerKind::Postgres => format!(
                "postgres://{}@/{}?host={}&port={}",
                postgres::USER,
                DATABASE,
                self.socket_dir.display(),
                self.port
            ),
            ServerKind::Mariadb => format!(
                "mysql://{}@127.0.0.1:{}/{}?socket={}",
                mariadb::USER,
                self.port,
                DATABASE,
                self.socket_path().display()
            ),
        }
    }

    /// The server's port: PostgreSQL names its socket by it (`.s.PGSQL.<port>`). Neither server
    /// listens on TCP.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory holding the server's Unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    fn socket_path(&self) -> PathBuf {
        match self.kind {
            ServerKind::Postgres => self.socket_dir.join(format!(".s.PGSQL.{}", self.port)),
            ServerKind::Mariadb => self.socket_dir.join("mysqld.sock"),
        }
    }

    /// The cluster directory (what `--emulate` should put on the emulated device).
    pub fn cluster_dir(&self) -> &Path {
        &self.cluster
    }

    /// The server's log file.
    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The main server process (postmaster / mariadbd).
    pub fn pid(&self) -> u32 {
        self.process.as_ref().map(|p| p.pid()).unwrap_or(0)
    }

    /// Every process of the server now (PostgreSQL forks one per connection), for CPU from /proc.
    pub fn pids(&self) -> Vec<u32> {
        match &self.process {
            Some(p) => process::process_tree(p.pid()),
            None => Vec::new(),
        }
    }

    /// `PostgreSQL 15.18 (Debian …)` / `MariaDB 10.11.19-MariaDB-…`, as the server reports it.
    pub fn version(&self) -> String {
        self.version.clone()
    }

    /// The settings that decide I/O behaviour, as the server reports them (buffer pool, flush
    /// method, fsync, WAL/redo placement and size, connections), plus `data_dir` and `server_log`.
    pub fn settings(&self) -> BTreeMap<String, String> {
        self.settings.clone()
    }

    /// `Some(what happened)` if the server exited by itself (it was meant to run): its exit status
    /// and the last lines of its log.
    pub fn died(&mut self) -> Option<String> {
        let status = self.process.as_mut()?.exited()?;
        let tail = process::log_tail(&self.log, 5);
        Some(format!(
            "{} exited ({status}){}",
            self.kind.product(),
            if tail.is_empty() {
                String::new()
            } else {
                format!(
                    "; its log ({}) ends: {}",
                    self.log.display(),
                    tail.replace('\n', " | ")
                )
            }
        ))
    }

    /// Stops the server cleanly (PostgreSQL fast shutdown, MariaDB normal shutdown), killing it if
    /// it does not stop in time, and removes its socket directory.
    pub fn stop(mut self) -> Result<()> {
        let clean = self.halt();
        if clean {
            Ok(())
        } else {
            Err(Error::failed(format!(
                "{} did not shut down in time and was killed; its next start will run crash recovery; see {}",
                self.kind.product(),
                self.log.display()
            )))
        }
    }

    /// Cuts the power under the server: SIGKILL for every process of it (see
    /// [`process::ServerProcess::kill_tree`]), no shutdown of any kind. Its files stay as the
    /// processes left them; the next start on them runs the engine's crash recovery.
    pub fn power_cut(mut self) -> Vec<u32> {
        let pids = match self.process.as_mut() {
            Some(p) => p.kill_tree(),
            None => Vec::new(),
        };
        self.process = None;
        if self.kind == ServerKind::Postgres {
            postgres::remove_orphaned_segment(&self.cluster);
        }
        let _ = fs::remove_dir_all(&self.socket_dir);
        pids
    }

    fn halt(&mut self) -> bool {
        self.halt_within(None)
    }

    /// Stops the server, killing it after its kind's grace, or after `cap` if shorter.
    fn halt_within(&mut self, cap: Option<Duration>) -> bool {
        let clean = match self.process.take() {
            Some(mut p) => {
                let (signal, grace) = match self.kind {
                    // SIGINT: fast shutdown — roll back sessions, checkpoint, exit.
                    ServerKind::Postgres => (libc::SIGINT, Duration::from_secs(60)),
                    // SIGTERM: normal shutdown; InnoDB may flush a large buffer pool first.
                    ServerKind::Mariadb => (libc::SIGTERM, Duration::from_secs(120)),
                };
                p.stop(signal, cap.map_or(grace, |c| grace.min(c)))
            }
            None => true,
        };
        let _ = fs::remove_dir_all(&self.socket_dir);
        clean
    }
}

impl Drop for ManagedServer {
    fn drop(&mut self) {
        self.halt();
    }
}

enum Bins {
    Postgres(PostgresBinaries),
    Mariadb(MariadbBinaries),
}

/// The database clients use in a managed server.
pub const DATABASE: &str = "oltplab";

/// Makes (Fresh) or checks (Reuse) the data directory, the cluster directory and the WAL directory.
fn prepare_dirs(cfg: &ServerConfig, layout: &Layout, account: Option<&Account>) -> Result<()> {
    let product = cfg.kind.product();
    let marker = read_marker(&layout.marker);
    let pid_file = layout.cluster.join(match cfg.kind {
        ServerKind::Postgres => "postmaster.pid",
        ServerKind::Mariadb => mariadb::PID_FILE,
    });
    let (names, signal): (&[&str], i32) = match cfg.kind {
        ServerKind::Postgres => (&["postgres", "postmaster"], libc::SIGINT),
        ServerKind::Mariadb => (&["mariadbd", "mysqld"], libc::SIGTERM),
    };
    match cfg.init {
        DataInit::Reuse => {
            let usable = marker
                .as_ref()
                .is_some_and(|m| m.kind == cfg.kind.name() && layout.cluster.is_dir());
            if !usable {
                return Err(Error::usage(format!(
                    "{} holds no {product} database made by oltplab: load one first (oltplab load tpcc --engine {} --data-dir {}), or give the --data-dir you loaded into",
                    cfg.data_dir.display(),
                    cfg.kind.name(),
                    cfg.data_dir.display()
                )));
            }
            let recorded = marker.and_then(|m| m.wal);
            if let Some(given) = cfg.wal_dir.as_ref().filter(|_| recorded != layout.wal) {
                return Err(Error::usage(format!(
                    "the {product} database in {} keeps its WAL in {}, not in --wal-dir {}: give the --wal-dir it was loaded with, or load it again",
                    cfg.data_dir.display(),
                    recorded
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| "its own directory".into()),
                    given.display()
                )));
            }
            process::stop_stale(&pid_file, names, signal)?;
            if let Some(a) = account {
                check_reachable(&layout.cluster, a, cfg)?;
                process::chown_tree(&layout.cluster, a)
                    .map_err(|e| safety::io_usage(&layout.cluster, "hand over", &e))?;
                if let Some(w) = &recorded {
                    process::chown_tree(w, a).map_err(|e| safety::io_usage(w, "hand over", &e))?;
                }
            }
            return Ok(());
        }
        DataInit::Fresh => {}
    }
    safety::ensure_own_dir(&cfg.data_dir, cfg.force)?;
    // A cluster oltplab made earlier here is replaced; anything else of that name is not ours.
    if layout.cluster.exists() || layout.marker.exists() {
        let Some(old) = marker.filter(|m| m.kind == cfg.kind.name()) else {
            return Err(Error::usage(format!(
                "{} exists and oltplab did not create it: choose another --data-dir",
                layout.cluster.display()
            )));
        };
        process::stop_stale(&pid_file, names, signal)?;
        remove_dir(&layout.cluster)?;
        if let Some(w) = wal_to_remove(&old, layout, cfg.kind) {
            remove_dir(&w)?;
        }
        let _ = fs::remove_file(&layout.marker);
    }
    if let Some(wal) = &layout.wal {
        let wal_root = wal.parent().expect("the WAL directory has a parent");
        safety::ensure_own_dir(wal_root, cfg.force)?;
        if wal.exists() {
            return Err(Error::usage(format!(
                "{} exists and oltplab did not create it: choose another --wal-dir",
                wal.display()
            )));
        }
    }
    // Marked before anything is created so that a failed initialisation is still recognised as
    // oltplab's and replaced next time.
    write_marker(layout, cfg.kind)?;
    for dir in std::iter::once(&layout.cluster).chain(layout.wal.iter()) {
        fs::create_dir(dir).map_err(|e| safety::io_usage(dir, "create", &e))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| safety::io_usage(dir, "set permissions of", &e))?;
        if let Some(a) = account {
            check_reachable(dir, a, cfg)?;
            process::chown_tree(dir, a).map_err(|e| safety::io_usage(dir, "hand over", &e))?;
        }
    }
    Ok(())
}

/// Copies a stopped server's cluster directory, keeping each file's owner and mode (the server
/// runs as its own account); sockets and links are not data and are left out.
pub fn copy_cluster(from: &Path, to: &Path) -> Result<()> {
    use std::os::unix::fs::{chown, MetadataExt};
    let fail = |p: &Path, e: std::io::Error| {
        Error::failed(format!(
            "cannot copy {} to {}: {} at {}",
            from.display(),
            to.display(),
            e,
            p.display()
        ))
    };
    let meta = fs::symlink_metadata(from).map_err(|e| fail(from, e))?;
    if meta.is_dir() {
        fs::create_dir(to).map_err(|e| fail(to, e))?;
        for entry in fs::read_dir(from).map_err(|e| fail(from, e))? {
            let entry = entry.map_err(|e| fail(from, e))?;
            copy_cluster(&entry.path(), &to.join(entry.file_name()))?;
        }
    } else if meta.is_file() {
        fs::copy(from, to).map_err(|e| fail(to, e))?;
    } else {
        return Ok(());
    }
    fs::set_permissions(to, fs::Permissions::from_mode(meta.mode())).map_err(|e| fail(to, e))?;
    chown(to, Some(meta.uid()), Some(meta.gid())).map_err(|e| fail(to, e))
}

fn remove_dir(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(safety::io_usage(dir, "remove the old database", &e)),
    }
}

fn check_reachable(dir: &Path, account: &Account, cfg: &ServerConfig) -> Result<()> {
    match process::unreachable_ancestor(dir, account) {
        None => Ok(()),
        Some(blocker) => Err(Error::usage(format!(
            "{} runs as the '{}' account, which cannot enter {}: choose a --data-dir{} outside it (e.g. under /var/tmp), or let others enter it (chmod o+x {})",
            cfg.kind.product(),
            account.name,
            blocker.display(),
            if cfg.wal_dir.is_some() { " and --wal-dir" } else { "" },
            blocker.display()
        ))),
    }
}

/// Waits until process group `group` (negative: `-pgid`) has no process left: a few seconds
/// after the SIGTERM it was sent, then SIGKILL.
fn stop_group(group: libc::pid_t) {
    // SAFETY: signal 0 only asks whether the group has a process left.
    let alive = || unsafe { libc::kill(group, 0) } == 0;
    for signal in [None, Some(libc::SIGKILL)] {
        if let Some(signal) = signal {
            // SAFETY: the group is the setup command's own, as above.
            unsafe { libc::kill(group, signal) };
        }
        let started = std::time::Instant::now();
        while alive() && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !alive() {
            return;
        }
    }
}

/// Runs a one-off program (initdb, mariadb-install-db) as the server's account, its output
/// appended to the server log; a failure carries the log's last lines.
fn run_setup(
    mut cmd: std::process::Command,
    what: &str,
    log_path: &Path,
    account: Option<&Account>,
) -> Result<()> {
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .map_err(|e| safety::io_usage(log_path, "write the server log", &e))?;
    let log2 = log
        .try_clone()
        .map_err(|e| safety::io_usage(log_path, "write the server log", &e))?;
    process::prepare(&mut cmd, account);
    process::die_with_parent(&mut cmd, libc::SIGKILL);
    cmd.stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log2)
        .current_dir("/");
    let mut child = cmd.spawn().map_err(|e| {
        Error::usage(format!(
            "cannot run {what} ({:?}): {e}: check the installation",
            cmd.get_program()
        ))
    })?;
    let _quit = interrupt::guard_process(child.id(), libc::SIGKILL);
    // Polled rather than waited for, so that Ctrl-C stops a slow initdb too (it removes what it
    // made when asked to stop; the next load replaces the rest).
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if interrupt::requested() => {
                // The whole process group (`prepare` gave the command its own): a script's
                // children too, such as mariadb-install-db's `mariadbd --bootstrap`, which would
                // otherwise outlive oltplab and write into the directory a resumed load removes.
                let group = -(child.id() as libc::pid_t);
                // SAFETY: the child has not been reaped, so its group is still its own.
                unsafe { libc::kill(group, libc::SIGTERM) };
                let _ = child.wait();
                stop_group(group);
                return Err(Error::Interrupted);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(Error::failed(format!("cannot wait for {what}: {e}"))),
        }
    };
    if !status.success() {
        return Err(Error::failed(format!(
            "{what} failed ({status}); the end of its log {}:\n{}",
            log_path.display(),
            process::log_tail(log_path, 12)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_round_trip_and_foreign_markers() {
        let dir = std::env::temp_dir().join(format!("oltplab-srvmarker-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let mut cfg = ServerConfig::new(ServerKind::Postgres, &dir);
        cfg.wal_dir = Some(dir.join("w"));
        let layout = Layout::new(&cfg).unwrap();
        write_marker(&layout, ServerKind::Postgres).unwrap();
        let m = read_marker(&layout.marker).unwrap();
        assert_eq!(m.kind, "postgres");
        assert_eq!(m.wal, Some(dir.join("w").join("postgres-wal")));
        fs::write(&layout.marker, "server=postgres\n").unwrap();
        assert_eq!(read_marker(&layout.marker), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A copy of a data directory (`cp -a`) carries the original's marker: a fresh load in the
    /// copy must not remove the original's WAL directory, which that marker names.
    #[test]
    fn a_copied_cluster_never_removes_the_originals_wal() {
        let dir = std::env::temp_dir().join(format!("oltplab-walcopy-{}", std::process::id()));
        let mut cfg = ServerConfig::new(ServerKind::Postgres, dir.join("a"));
        cfg.wal_dir = Some(dir.join("w"));
        let original = Layout::new(&cfg).unwrap();
        fs::create_dir_all(dir.join("a")).unwrap();
        write_marker(&original, ServerKind::Postgres).unwrap();
        let marker = read_marker(&original.marker).unwrap();
        assert_eq!(
            wal_to_remove(&marker, &original, ServerKind::Postgres),
            Some(dir.join("w").join("postgres-wal")),
            "the cluster's own WAL goes with it"
        );
        // The copy: the same marker in another data directory.
        cfg.data_dir = dir.join("b");
        let copy = Layout::new(&cfg).unwrap();
        assert_eq!(wal_to_remove(&marker, &copy, ServerKind::Postgres), None);
        // A marker of an older oltplab, without the cluster it was written for: nothing.
        let old = Marker {
            cluster: None,
            ..marker.clone()
        };
        assert_eq!(wal_to_remove(&old, &original, ServerKind::Postgres), None);
        // A hand-edited marker naming any other directory: nothing.
        let edited = Marker {
            wal: Some(PathBuf::from("/var/lib/postgresql")),
            ..marker
        };
        assert_eq!(
            wal_to_remove(&edited, &original, ServerKind::Postgres),
            None
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn impossible_configs_are_usage_errors() {
        let mut cfg = ServerConfig::new(ServerKind::Mariadb, "/tmp/x");
        cfg.buffer_pool_bytes = 1 << 20;
        assert!(cfg.validate().unwrap_err().to_string().contains("8m"));
        cfg.buffer_pool_bytes = 1 << 60;
        assert!(cfg
            .validate()
            .unwrap_err()
            .to_string()
            .contains("available memory"));
        cfg.buffer_pool_bytes = 128 << 20;
        cfg.max_connections = 1;
        assert_eq!(cfg.validate().unwrap_err().exit_code(), 2);
    }

    #[test]
    fn preload_is_detected() {
        let mut cfg = ServerConfig::new(ServerKind::Mariadb, "/tmp/x");
        assert!(!cfg.uses_preload());
        cfg.extra_env
            .push(("LD_PRELOAD".into(), "/x/liboltplab_shim.so".into()));
        assert!(cfg.uses_preload());
    }
}
