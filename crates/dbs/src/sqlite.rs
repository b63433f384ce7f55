//! SQLite adapter: opens a database file with the settings oltplab measures with (WAL, full
//! synchronous commits, a bounded page cache, no memory mapping so that every page read is a VFS
//! read that a wrapping VFS can trace or delay), optionally through a named VFS, and reports the
//! engine's version and settings for the result.
//!
//! A table placed on its own device (a layout's `table:NAME`) lives in its own database file,
//! `<database>-table-NAME`, which every connection ATTACHes: SQLite finds an unqualified table name
//! in whichever attached database holds it, so the workloads' SQL is unchanged. A transaction that
//! writes both files is atomic in each file but, in WAL mode, not across them: after a power loss
//! one file may hold the commit and the other not (SQLite's documented limit for attached
//! databases). Crash-consistency across files is not what a run measures; its I/O is real.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
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
    // One page cache per connection, as without placed tables: split across the database files
    // by their sizes (SQLite keeps a cache per attached file).
    let placed = placed_tables(path);
    let file_bytes = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len()).max(1);
    let total_bytes: u64 =
        file_bytes(path) + placed.iter().map(|(_, f)| file_bytes(f)).sum::<u64>();
    let cache_kib_of = |p: &Path| {
        ((opts.cache_bytes as f64 * file_bytes(p) as f64 / total_bytes as f64) as u64 / 1024)
            .max(64)
    };
    let pragmas = format!(
        "PRAGMA journal_mode = {}; PRAGMA synchronous = {}; PRAGMA cache_size = -{}; \
         PRAGMA mmap_size = 0; PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = OFF;",
        opts.journal_mode,
        opts.synchronous,
        cache_kib_of(path)
    );
    conn.execute_batch(&pragmas).map_err(|e| {
        Error::usage(format!(
            "cannot set up the SQLite database {}: {e}: is it a SQLite database that you may write to?",
            path.display()
        ))
    })?;
    for (table, file) in &placed {
        attach(&conn, table, file, opts, cache_kib_of(file))?;
    }
    Ok(conn)
}

/// The file that holds `table` when a layout placed it on its own device.
pub fn table_file(db: &Path, table: &str) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(format!("-table-{table}"));
    db.with_file_name(name)
}

/// The tables of `db` that live in their own files (`<db>-table-NAME`), with those files.
pub fn placed_tables(db: &Path) -> Vec<(String, PathBuf)> {
    let Some(prefix) = db
        .file_name()
        .map(|n| format!("{}-table-", n.to_string_lossy()))
    else {
        return Vec::new();
    };
    let dir = match db.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let table = name.strip_prefix(&prefix)?;
            // The table's own WAL, shared-memory and marker files are not tables.
            (!table.is_empty() && table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
                .then(|| (table.to_string(), table_file(db, table)))
        })
        .collect();
    out.sort();
    out
}

/// Removes an oltplab database: its file, WAL, shared memory and journal, and the same of every
/// placed table's file. For files oltplab created (the caller checked the marker).
pub fn remove_database_files(db: &Path) {
    let placed = placed_tables(db);
    for file in std::iter::once(db.to_path_buf()).chain(placed.into_iter().map(|(_, f)| f)) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut p = file.as_os_str().to_owned();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
    }
}

/// SQLite's limit on attached databases (SQLITE_MAX_ATTACHED of the bundled build): at most this
/// many tables can live in files of their own.
pub const MAX_PLACED_TABLES: usize = 10;

/// The schema name a placed table's file is attached as.
fn schema_of(table: &str) -> String {
    format!("\"table_{table}\"")
}

fn attach(
    conn: &Connection,
    table: &str,
    file: &Path,
    opts: &SqliteOptions,
    cache_kib: u64,
) -> Result<()> {
    let schema = schema_of(table);
    conn.execute(
        &format!("ATTACH DATABASE ?1 AS {schema}"),
        [file.to_string_lossy()],
    )
    .and_then(|_| {
        conn.execute_batch(&format!(
            "PRAGMA {schema}.journal_mode = {}; PRAGMA {schema}.synchronous = {}; \
             PRAGMA {schema}.cache_size = -{cache_kib};",
            opts.journal_mode, opts.synchronous
        ))
    })
    .map_err(|e| {
        Error::usage(format!(
            "cannot attach {}, the file that holds table {table}: {e}: restore the file, or load the database again with `oltplab load --force`",
            file.display()
        ))
    })
}

/// The tables of the database at `db`: the main file's and the placed tables' (each once).
pub fn table_names(db: &Path) -> Result<Vec<String>> {
    let conn = open(db, &SqliteOptions::default())?;
    let names = conn
        .prepare(
            "SELECT DISTINCT name FROM pragma_table_list
              WHERE schema <> 'temp' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .and_then(|mut st| {
            st.query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()
        })
        .map_err(|e| Error::failed(format!("cannot list the tables of {}: {e}", db.display())))?;
    Ok(names)
}

/// Moves `table` (with its indexes) of the database at `db` into its own file so that a layout
/// can place it: copied in one transaction, then dropped from the main file in another, so that
/// a crash between the two leaves both copies (the main file's wins SQLite's name lookup) and the
/// next call copies again. Returns false when the table already lives in its own file alone. The
/// caller checked that the database has the table and is oltplab's.
pub fn move_table_to_own_file(db: &Path, table: &str) -> Result<bool> {
    if table.is_empty() || !table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(Error::usage(format!(
            "the layout places table:{table}, which is not a table name: use letters, digits and _"
        )));
    }
    let opts = SqliteOptions::default();
    let failed = |e: rusqlite::Error| {
        Error::failed(format!("cannot move table {table} to its own file: {e}"))
    };
    let schema_sql: Vec<(String, String)> = open(db, &opts)?
        .prepare(
            "SELECT type, sql FROM main.sqlite_schema
              WHERE tbl_name = ?1 AND sql IS NOT NULL ORDER BY type = 'index'",
        )
        .and_then(|mut st| {
            st.query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(failed)?;
    if schema_sql.is_empty() {
        return Ok(false);
    }
    let schema = schema_of(table);
    let mut copy = String::from("BEGIN;");
    for (kind, sql) in &schema_sql {
        // `CREATE TABLE stock (…)` → `CREATE TABLE "table_stock".stock (…)`; an index's schema
        // goes on its name and its table is then looked up in the same schema.
        let head = if kind == "table" {
            "CREATE TABLE "
        } else if sql.starts_with("CREATE UNIQUE INDEX ") {
            "CREATE UNIQUE INDEX "
        } else {
            "CREATE INDEX "
        };
        let rest = sql.strip_prefix(head).ok_or_else(|| {
            Error::failed(format!(
                "cannot move table {table}: its schema `{sql}` is not one oltplab can copy"
            ))
        })?;
        copy.push_str(&format!("{head}{schema}.{rest};"));
    }
    copy.push_str(&format!(
        "INSERT INTO {schema}.\"{table}\" SELECT * FROM main.\"{table}\"; COMMIT;"
    ));
    let file = table_file(db, table);
    let remove_copy = || {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
        }
    };
    // A copy left by a crash between the two steps is replaced.
    remove_copy();
    std::fs::File::create(&file)
        .map_err(|e| oltplab_core::safety::io_usage(&file, "create", &e))?;
    let copied = open(db, &opts).and_then(|conn| {
        conn.execute_batch(&copy).map_err(failed)?;
        Ok(conn)
    });
    match copied {
        Ok(conn) => conn
            .execute_batch(&format!("DROP TABLE main.\"{table}\""))
            .map_err(failed)?,
        Err(e) => {
            // The connection is closed: no empty file is left for every later one to attach.
            remove_copy();
            return Err(e);
        }
    }
    Ok(true)
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
