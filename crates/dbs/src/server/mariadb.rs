//! MariaDB: mariadb-install-db, mariadbd's command line, readiness, version and settings.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mysql::prelude::Queryable;
use oltplab_core::{Error, Result};

use super::binaries::MariadbBinaries;
use super::process::Account;
use super::{run_setup, Launch, Layout, ManagedServer, ServerConfig, DATABASE};

/// The administrator mariadb-install-db creates; `--auth-root-authentication-method=normal` gives
/// it an empty password, reachable only on the private socket and on loopback.
pub const USER: &str = "root";

/// mariadbd's pid file inside the cluster, named explicitly (the default contains the host name).
pub const PID_FILE: &str = "mariadbd.pid";

/// Settings recorded with every result: what decides how InnoDB uses its storage.
const SETTINGS: &[&str] = &[
    "innodb_buffer_pool_size",
    "innodb_flush_method",
    "innodb_flush_log_at_trx_commit",
    "innodb_use_native_aio",
    "innodb_doublewrite",
    "innodb_log_file_size",
    "innodb_log_buffer_size",
    "innodb_log_group_home_dir",
    "innodb_page_size",
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_adaptive_hash_index",
    "log_bin",
    "sync_binlog",
    "max_connections",
    "transaction_isolation",
];

/// Whether InnoDB memory-maps its redo log when the log lives in `dir`. MariaDB 10.8 and later
/// take a file on /dev/shm's file system for persistent memory: the log is written with stores
/// into a mapping and made durable by flushing CPU caches, with no write or sync call that a
/// trace or an emulated device could see.
pub fn maps_redo_log_in(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(dir), std::fs::metadata("/dev/shm")) {
        (Ok(dir), Ok(shm)) => dir.dev() == shm.dev(),
        _ => false,
    }
}

fn base_args(cmd: &mut Command, layout: &Layout) {
    // Temporary tables in the data directory, not /tmp: two servers set up at the same time
    // (parallel tests) otherwise clash over the bootstrap's temporary table names there.
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", layout.cluster.display()))
        .arg(format!("--tmpdir={}", layout.cluster.display()));
    if let Some(wal) = &layout.wal {
        cmd.arg(format!("--innodb-log-group-home-dir={}", wal.display()));
    }
}

/// Makes the system tables. Runs as the server's account, so no `--user` is needed.
pub(super) fn init(
    bins: &MariadbBinaries,
    layout: &Layout,
    account: Option<&Account>,
) -> Result<()> {
    let mut cmd = Command::new(&bins.install_db);
    base_args(&mut cmd, layout);
    cmd.args([
        "--auth-root-authentication-method=normal",
        "--skip-test-db",
        "--skip-name-resolve",
    ]);
    // mariadb-install-db finds mariadbd relative to --basedir; point it at the one we found.
    if let Some(base) = bins.mariadbd.parent().and_then(|bin| bin.parent()) {
        if base != Path::new("/usr") {
            cmd.arg(format!("--basedir={}", base.display()));
        }
    }
    run_setup(cmd, "mariadb-install-db", &layout.log, account)
}

pub(super) fn launch(
    bins: &MariadbBinaries,
    cfg: &ServerConfig,
    layout: &Layout,
    socket_dir: &Path,
    port: u16,
) -> Result<Launch> {
    let mut cmd = Command::new(&bins.mariadbd);
    base_args(&mut cmd, layout);
    cmd.current_dir("/")
        .arg(format!(
            "--socket={}",
            socket_dir.join("mysqld.sock").display()
        ))
        .arg(format!("--port={port}"))
        // The private socket only (see the PostgreSQL side): root has no password.
        .arg("--skip-networking")
        .arg(format!(
            "--pid-file={}",
            layout.cluster.join(PID_FILE).display()
        ))
        .arg(format!(
            "--innodb-buffer-pool-size={}",
            cfg.buffer_pool_bytes
        ))
        .arg(format!("--max-connections={}", cfg.max_connections))
        .arg("--character-set-server=utf8mb4")
        .arg("--collation-server=utf8mb4_general_ci")
        // O_DIRECT is MariaDB's default since 10.6; say which one we mean either way.
        .arg(format!(
            "--innodb-flush-method={}",
            if cfg.direct_io { "O_DIRECT" } else { "fsync" }
        ));
    if cfg.uses_preload() {
        // io_submit goes straight to the kernel, past an LD_PRELOAD shim.
        cmd.arg("--innodb-use-native-aio=0");
    }
    for (name, value) in &cfg.extra_settings {
        cmd.arg(format!("--{}={value}", name.replace('_', "-")));
    }
    Ok(Launch {
        command: cmd,
        // Normal shutdown if oltplab dies without stopping the server.
        death_signal: libc::SIGTERM,
        // InnoDB recovers from its redo log; a normal shutdown may flush for minutes.
        quit_signal: libc::SIGKILL,
    })
}

pub(super) fn admin_opts(server: &ManagedServer, db: Option<&str>) -> mysql::Opts {
    mysql::OptsBuilder::new()
        .socket(Some(
            server
                .socket_dir()
                .join("mysqld.sock")
                .display()
                .to_string(),
        ))
        .ip_or_hostname(Some("127.0.0.1"))
        .tcp_port(server.port())
        .user(Some(USER))
        .db_name(db)
        .tcp_connect_timeout(Some(Duration::from_secs(5)))
        .into()
}

/// Ready when it accepts connections and, a Galera node, when it says `wsrep_ready`: it accepts
/// connections before it has its state, and refuses queries until then.
pub(super) fn ping(server: &ManagedServer) -> std::result::Result<(), String> {
    let mut conn = mysql::Conn::new(admin_opts(server, None)).map_err(|e| e.to_string())?;
    // No row from a server built without Galera, OFF from one not in a cluster.
    let wsrep_on: Option<(String, String)> = conn
        .query_first("SHOW GLOBAL VARIABLES LIKE 'wsrep_on'")
        .map_err(|e| e.to_string())?;
    if !wsrep_on.is_some_and(|(_, v)| v.eq_ignore_ascii_case("ON")) {
        return Ok(());
    }
    let ready: Option<(String, String)> = conn
        .query_first("SHOW GLOBAL STATUS LIKE 'wsrep_ready'")
        .map_err(|e| e.to_string())?;
    match ready {
        Some((_, v)) if v.eq_ignore_ascii_case("ON") => Ok(()),
        _ => Err("the Galera node is not ready yet".into()),
    }
}

/// A Galera node's `wsrep_local_state_comment` (`Synced`, `Joined`, `Donor/Desynced` …).
pub(super) fn wsrep_state(server: &ManagedServer) -> Option<String> {
    let mut conn = mysql::Conn::new(admin_opts(server, None)).ok()?;
    conn.query_first::<(String, String), _>("SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'")
        .ok()
        .flatten()
        .map(|(_, v)| v)
}

/// Creates the `oltplab` database if needed and reads the version and settings.
pub(super) fn after_start(
    server: &ManagedServer,
    _cfg: &ServerConfig,
) -> Result<(String, BTreeMap<String, String>)> {
    let failed = |e: mysql::Error| {
        Error::failed(format!(
            "MariaDB started but a query failed: {e}; see {}",
            server.log_path().display()
        ))
    };
    let mut conn = mysql::Conn::new(admin_opts(server, None)).map_err(failed)?;
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"))
        .map_err(failed)?;
    let version: Option<String> = conn.query_first("SELECT VERSION()").map_err(failed)?;
    let list = SETTINGS
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(",");
    let rows: Vec<(String, String)> = conn
        .query(format!(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({list})"
        ))
        .map_err(failed)?;
    let mut settings: BTreeMap<String, String> = rows.into_iter().collect();
    let redo = match settings
        .get("innodb_log_group_home_dir")
        .map(String::as_str)
    {
        Some("./") | Some("") | None => server.cluster_dir().display().to_string(),
        Some(dir) => dir.to_string(),
    };
    settings.insert("wal_dir".into(), redo);
    let direct = settings
        .get("innodb_flush_method")
        .map(|m| m.starts_with("O_DIRECT"))
        .unwrap_or(false);
    settings.insert(
        "direct_io".into(),
        if direct { "on" } else { "off" }.to_string(),
    );
    Ok((format!("MariaDB {}", version.unwrap_or_default()), settings))
}
