//! PostgreSQL: initdb, the postmaster's command line, readiness, version and settings.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use oltplab_core::{Error, Result};

use super::binaries::PostgresBinaries;
use super::process::Account;
use super::{run_setup, Launch, Layout, ManagedServer, ServerConfig, DATABASE};

/// The superuser initdb creates; clients authenticate by `trust` on the private socket and on
/// loopback, so no password exists to leak.
pub const USER: &str = "oltplab";

/// Settings recorded with every result: what decides how PostgreSQL uses its storage.
const SETTINGS: &[&str] = &[
    "shared_buffers",
    "effective_cache_size",
    "max_connections",
    "fsync",
    "synchronous_commit",
    "wal_sync_method",
    "full_page_writes",
    "wal_level",
    "wal_buffers",
    "wal_compression",
    "max_wal_size",
    "checkpoint_timeout",
    "checkpoint_completion_target",
    "bgwriter_lru_maxpages",
    "block_size",
    "wal_block_size",
    "wal_segment_size",
    "data_checksums",
    "huge_pages",
    "random_page_cost",
];

/// Makes the cluster: superuser `oltplab`, trust authentication, UTF-8 without a locale (byte-order
/// collation, as benchmarks usually want), no fsync during initdb (the cluster is new and
/// disposable until the server's first checkpoint), and data checksums — PostgreSQL 18's default,
/// and what lets a page torn by a power cut be reported rather than read (`oltplab crash`).
pub(super) fn init(
    bins: &PostgresBinaries,
    layout: &Layout,
    account: Option<&Account>,
) -> Result<()> {
    let mut cmd = Command::new(&bins.initdb);
    cmd.arg("-D").arg(&layout.cluster).args([
        "-U",
        USER,
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-locale",
        "--no-sync",
        "--no-instructions",
        "--data-checksums",
    ]);
    if let Some(wal) = &layout.wal {
        cmd.arg(format!("--waldir={}", wal.display()));
    }
    run_setup(cmd, "initdb", &layout.log, account)
}

/// The major version of the installed server (`postgres --version`).
fn major_version(bins: &PostgresBinaries) -> Option<u32> {
    let out = Command::new(&bins.postgres)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
    let version = text.split(')').nth(1)?.split_whitespace().next()?;
    version.split('.').next()?.parse().ok()
}

pub(super) fn launch(
    bins: &PostgresBinaries,
    cfg: &ServerConfig,
    layout: &Layout,
    socket_dir: &Path,
    port: u16,
) -> Result<Launch> {
    let mut cmd = Command::new(&bins.postgres);
    cmd.arg("-D").arg(&layout.cluster).current_dir("/");
    let mut set = |name: &str, value: String| {
        cmd.arg("-c").arg(format!("{name}={value}"));
    };
    set("port", port.to_string());
    // The private socket only, in a directory only the server's account (and root) can enter:
    // with `trust` authentication a TCP port would let every user of the machine in as superuser.
    set("listen_addresses", String::new());
    set("unix_socket_directories", socket_dir.display().to_string());
    set("unix_socket_permissions", "0777".into());
    // Dynamic shared memory as files in the cluster (pg_dynshmem/), not in /dev/shm: a server
    // killed with SIGKILL cannot remove its segments, and those would outlive the cluster.
    set("dynamic_shared_memory_type", "mmap".into());
    set(
        "shared_buffers",
        format!("{}kB", cfg.buffer_pool_bytes / 1024),
    );
    set("max_connections", cfg.max_connections.to_string());
    // Logs go to stderr, which is the server log file oltplab opened.
    set("logging_collector", "off".into());
    set("log_destination", "stderr".into());
    if cfg.direct_io {
        match major_version(bins) {
            Some(major) if major >= 16 => set("debug_io_direct", "data,wal".into()),
            _ => {} // recorded in the settings after start
        }
    }
    for (name, value) in &cfg.extra_settings {
        set(name, value.clone());
    }
    Ok(Launch {
        command: cmd,
        // Fast shutdown if oltplab dies without stopping the server.
        death_signal: libc::SIGINT,
        // Immediate shutdown: no checkpoint, but shared memory and the socket are removed.
        quit_signal: libc::SIGQUIT,
    })
}

fn admin_config(server: &ManagedServer, dbname: &str) -> postgres::Config {
    let mut config = postgres::Config::new();
    config
        .host_path(server.socket_dir())
        .port(server.port())
        .user(USER)
        .dbname(dbname)
        .application_name("oltplab")
        .connect_timeout(Duration::from_secs(5));
    config
}

pub(super) fn ping(server: &ManagedServer) -> std::result::Result<(), String> {
    admin_config(server, "postgres")
        .connect(postgres::NoTls)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Creates the `oltplab` database if needed and reads the version and settings.
pub(super) fn after_start(
    server: &ManagedServer,
    cfg: &ServerConfig,
) -> Result<(String, BTreeMap<String, String>)> {
    let failed = |e: postgres::Error| {
        Error::failed(format!(
            "PostgreSQL started but a query failed: {e}; see {}",
            server.log_path().display()
        ))
    };
    let mut client = admin_config(server, "postgres")
        .connect(postgres::NoTls)
        .map_err(failed)?;
    let exists = client
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&DATABASE])
        .map_err(failed)?
        .is_some();
    if !exists {
        client
            .batch_execute(&format!("CREATE DATABASE {DATABASE}"))
            .map_err(failed)?;
    }
    let version: String = client
        .query_one("SHOW server_version", &[])
        .map_err(failed)?
        .get(0);
    let mut settings = BTreeMap::new();
    for row in client
        .query(
            "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1) ORDER BY name",
            &[&SETTINGS],
        )
        .map_err(failed)?
    {
        settings.insert(row.get::<_, String>(0), row.get::<_, String>(1));
    }
    let wal_dir = std::fs::read_link(server.cluster_dir().join("pg_wal"))
        .unwrap_or_else(|_| server.cluster_dir().join("pg_wal"));
    settings.insert("wal_dir".into(), wal_dir.display().to_string());
    let direct = client
        .query_opt(
            "SELECT current_setting(name) FROM pg_settings WHERE name = 'debug_io_direct'",
            &[],
        )
        .map_err(failed)?
        .map(|row| row.get::<_, String>(0));
    settings.insert(
        "direct_io".into(),
        match direct {
            Some(v) if !v.is_empty() => v,
            Some(_) => "off".into(),
            None if cfg.direct_io => {
                "off (PostgreSQL before 16 has no direct I/O; the page cache absorbs reads)".into()
            }
            None => "off".into(),
        },
    );
    Ok((format!("PostgreSQL {version}"), settings))
}

/// After every process of a cluster was killed, its System V shared memory segment (the small
/// one PostgreSQL keeps to detect a running postmaster) outlives them: removed here, if it is
/// the one the cluster's `postmaster.pid` names and no process is attached to it.
pub(super) fn remove_orphaned_segment(cluster: &Path) {
    let Ok(text) = std::fs::read_to_string(cluster.join("postmaster.pid")) else {
        return;
    };
    // Line 7: the segment's key and id.
    let mut words = text.lines().nth(6).unwrap_or("").split_whitespace();
    let (Some(key), Some(id)) = (
        words.next().and_then(|k| k.parse::<i64>().ok()),
        words.next().and_then(|i| i.parse::<libc::c_int>().ok()),
    ) else {
        return;
    };
    // SAFETY: shmctl with a zeroed struct we own; IPC_RMID takes no buffer.
    unsafe {
        let mut ds: libc::shmid_ds = std::mem::zeroed();
        if libc::shmctl(id, libc::IPC_STAT, &mut ds) == 0
            && ds.shm_perm.__key as i64 == key
            && ds.shm_nattch == 0
        {
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
}
