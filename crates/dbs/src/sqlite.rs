//! SQLite adapter: opens a database file with the settings oltplab measures with (WAL, full
//! synchronous commits, a bounded page cache, no memory mapping so that every page read is a VFS
//! read that a wrapping VFS can trace or delay), optionally through a named VFS, and reports the
//! engine's version and settings for the result.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use oltplab_core::{Error, Result};
use rusqlite::{Connection, OpenFlags};

/// How to open a database.
#[derive(Clone, Debug)]
pub struct SqliteOptions {
    /// A registered VFS to open through (the lead's tracing/emulating VFS), or SQLite's default.
    pub vfs: Option<String>,
    /// Page cache of this connection.
    pub cache_bytes: u64,
    /// How long a connection waits for another process's write lock before SQLITE_BUSY.
    pub busy_timeout: Duration,
    /// `FULL` makes every commit durable (a WAL sync per commit); `NORMAL` and `OFF` are for loading.
    pub synchronous: &'static str,
    /// Journal mode: `WAL` for runs; loads use `OFF` and switch to WAL at the end.
    pub journal_mode: &'static str,
    /// Create the file if it does not exist.
    pub create: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            vfs: None,
            cache_bytes: 64 << 20,
            busy_timeout: Duration::from_secs(10),
            synchronous: "FULL",
            journal_mode: "WAL",
            create: false,
        }
    }
}

/// Opens `path` with `opts`. Failures are usage errors: the path or VFS the user gave is unusable.
pub fn open(path: &Path, opts: &SqliteOptions) -> Result<Connection> {
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    if opts.create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = match &opts.vfs {
        Some(vfs) => Connection::open_with_flags_and_vfs(path, flags, vfs.as_str()),
        None => Connection::open_with_flags(path, flags),
    }
    .map_err(|e| {
        Error::usage(format!(
            "cannot open the SQLite database {}: {e}: check the path{}",
            path.display(),
            if opts.vfs.is_some() {
                " and that the VFS is registered"
            } else {
                ""
            }
        ))
    })?;
    conn.busy_timeout(opts.busy_timeout)
        .map_err(|e| Error::failed(format!("cannot set SQLite's busy timeout: {e}")))?;
    conn.set_prepared_statement_cache_capacity(128);
    let cache_kib = (opts.cache_bytes / 1024).max(64);
    let pragmas = format!(
        "PRAGMA journal_mode = {}; PRAGMA synchronous = {}; PRAGMA cache_size = -{cache_kib}; \
         PRAGMA mmap_size = 0; PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = OFF;",
        opts.journal_mode, opts.synchronous
    );
    conn.execute_batch(&pragmas).map_err(|e| {
        Error::usage(format!(
            "cannot set up the SQLite database {}: {e}: is it a SQLite database that you may write to?",
            path.display()
        ))
    })?;
    Ok(conn)
}

/// The bundled SQLite's version, e.g. `SQLite 3.50.2`.
pub fn version() -> String {
    format!("SQLite {}", rusqlite::version())
}

/// The settings that shape performance, as the connection sees them.
pub fn settings(conn: &Connection) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for name in [
        "journal_mode",
        "synchronous",
        "cache_size",
        "page_size",
        "mmap_size",
        "wal_autocheckpoint",
        "locking_mode",
    ] {
        if let Ok(v) = conn.query_row(&format!("PRAGMA {name}"), [], |r| {
            r.get_ref(0).map(|v| match v {
                rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                other => format!("{other:?}"),
            })
        }) {
            out.insert(name.to_string(), v);
        }
    }
    out
}

/// Which table each page of an SQLite database belongs to (`dbstat`), indexes counted with their
/// table; read after the run.
pub fn page_tables(path: &Path) -> Result<(u64, BTreeMap<u64, String>)> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Error::failed(format!("cannot read {}'s pages: {e}", path.display())))?;
    let read = || -> rusqlite::Result<(u64, BTreeMap<u64, String>)> {
        let page_size: u64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let mut stmt = conn.prepare(
            "SELECT coalesce(m.tbl_name, d.name), d.pageno FROM dbstat d
               LEFT JOIN sqlite_schema m ON m.name = d.name",
        )?;
        let pages = stmt
            .query_map([], |r| {
                Ok((r.get::<_, i64>(1)? as u64, r.get::<_, String>(0)?))
            })?
            .collect::<rusqlite::Result<BTreeMap<u64, String>>>()?;
        Ok((page_size, pages))
    };
    read().map_err(|e| Error::failed(format!("cannot read {}'s pages: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_in_wal_with_full_sync() {
        let dir = std::env::temp_dir().join(format!("oltplab-dbs-sqlite-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.sqlite");
        let conn = open(
            &path,
            &SqliteOptions {
                create: true,
                ..Default::default()
            },
        )
        .unwrap();
        let s = settings(&conn);
        assert_eq!(s["journal_mode"], "wal");
        assert_eq!(s["synchronous"], "2");
        assert_eq!(s["mmap_size"], "0");
        drop(conn);
        let err = open(&dir.join("missing.sqlite"), &SqliteOptions::default()).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
