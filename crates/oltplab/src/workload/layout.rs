//! A database on a layout: which of the engine's files hold each role (the log, temporary files, a
//! table with its indexes), and which table each file — or, in SQLite's single file, each page —
//! belongs to. The first places files on the layout's devices; the second attributes traced I/O
//! to tables (`summary.io.by_table`), the figure that tells a user which table to move.
//!
//! The emulator places files by path, so nothing is moved: a role's files stay where the engine
//! keeps them, and the shim puts them on the role's device.
//!
//! | role | PostgreSQL | MariaDB | SQLite |
//! |---|---|---|---|
//! | log | `pg_wal/` | `ib_logfile*` | the `-wal` file (and a rollback journal) |
//! | temp | `base/pgsql_tmp/` | `ibtmp1`, `#sql*`, filesort's `MY*` (tmpdir is the cluster) | temporary files |
//! | table:NAME | the table's, its indexes' and its TOAST files (`pg_relation_filepath`) | `oltplab/NAME.ibd` (file per table) | `<database>-table-NAME`, an attached database the table is moved into |

use std::collections::BTreeMap;
use std::path::Path;

use oltplab_core::{Error, Result};
use oltplab_dbs::server::{DataInit, ManagedServer, ServerConfig, DATABASE};
use oltplab_devmodel::{Role, Spec};
use oltplab_trace::format::TableExtent;

use crate::emulate::PlaceRule;
use crate::workload::target::{DbSpec, Engine};

/// The files of each table of a managed server's database, relative to its cluster directory.
#[derive(Clone, Debug, Default)]
pub struct TableFiles {
    /// Relative path → table.
    pub files: BTreeMap<String, String>,
}

impl TableFiles {
    /// The table a traced file (a path relative to the cluster) belongs to: PostgreSQL's segments
    /// (`16400.1`) and forks (`16400_fsm`) are the relation's too.
    pub fn table_of(&self, path: &str) -> Option<&str> {
        if let Some(t) = self.files.get(path) {
            return Some(t);
        }
        let base = path.split(['.', '_']).next().unwrap_or(path);
        self.files.get(base).map(String::as_str)
    }

    fn tables(&self) -> Vec<&str> {
        let mut t: Vec<&str> = self.files.values().map(String::as_str).collect();
        t.sort_unstable();
        t.dedup();
        t
    }
}

/// Reads which files hold which table. PostgreSQL knows it only while running: the cluster is
/// started on its own for the query (a second or two) and stopped again; MariaDB keeps each table
/// in `oltplab/<table>.ibd`.
pub fn server_table_files(db: &DbSpec, cluster: &Path) -> Result<TableFiles> {
    let mut files = BTreeMap::new();
    match db.engine {
        Engine::Postgres => {
            let mut cfg = ServerConfig::new(db.server_kind(), &db.data_dir);
            cfg.init = DataInit::Reuse;
            cfg.wal_dir = db.wal_dir.clone();
            cfg.extra_settings = db.server_settings.clone();
            let server = ManagedServer::start(&cfg)?;
            let url = server.url();
            let rows = (|| -> Result<Vec<(String, String)>> {
                let mut client = oltplab_dbs::server::connect::pg_connect(&url)?;
                let rows = client
                    .query(
                        "SELECT t.relname::text, pg_relation_filepath(r.oid)
                           FROM pg_class t
                           JOIN pg_namespace n ON n.oid = t.relnamespace
                           JOIN pg_class r ON r.oid = t.oid OR r.oid = t.reltoastrelid
                             OR r.oid IN (SELECT indexrelid FROM pg_index
                                           WHERE indrelid IN (t.oid, t.reltoastrelid))
                          WHERE t.relkind = 'r' AND n.nspname = 'public'",
                        &[],
                    )
                    .map_err(|e| oltplab_dbs::server::connect::pg_error(&url, &e))?;
                Ok(rows
                    .iter()
                    .filter_map(|r| Some((r.get::<_, String>(0), r.get::<_, Option<String>>(1)?)))
                    .collect())
            })();
            server.stop()?;
            for (table, path) in rows? {
                files.insert(path, table);
            }
        }
        Engine::Mariadb | Engine::Galera => {
            let dir = cluster.join(DATABASE);
            for entry in std::fs::read_dir(&dir)
                .map_err(|e| oltplab_core::safety::io_usage(&dir, "read", &e))?
                .flatten()
            {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(table) = name.strip_suffix(".ibd") {
                    files.insert(format!("{DATABASE}/{name}"), table.to_string());
                }
            }
        }
        Engine::Sqlite => {}
    }
    Ok(TableFiles { files })
}

/// Where a layout's roles put a managed server's files: rules for the shim, relative to the
/// cluster. Refuses a table the database lacks, and the log of a cluster whose WAL lives outside
/// it (`--wal-dir`).
pub fn server_places(
    engine: Engine,
    spec: &Spec,
    cluster: &Path,
    tables: &TableFiles,
) -> Result<Vec<PlaceRule>> {
    let mut places = Vec::new();
    let rule = |device: u8, path: &str, prefix: bool| PlaceRule {
        device,
        path: path.to_string(),
        prefix,
    };
    for (role, device) in spec.roles() {
        let device = *device;
        match (role, engine) {
            (Role::Data, _) => {}
            (Role::Log, Engine::Postgres) => {
                if cluster.join("pg_wal").is_symlink() {
                    return Err(Error::usage(
                        "the layout places the log, but this cluster keeps its WAL outside (--wal-dir at load): load it again without --wal-dir",
                    ));
                }
                places.push(rule(device, "pg_wal", false));
            }
            (Role::Log, _) => places.push(rule(device, "ib_logfile", true)),
            (Role::Temp, Engine::Postgres) => places.push(rule(device, "base/pgsql_tmp", false)),
            (Role::Temp, _) => {
                places.push(rule(device, "ibtmp1", false));
                places.push(rule(device, "#sql", true));
                places.push(rule(device, "MY", true));
            }
            (Role::Table(name), _) => {
                let paths: Vec<&String> = tables
                    .files
                    .iter()
                    .filter(|(_, t)| *t == name)
                    .map(|(p, _)| p)
                    .collect();
                if paths.is_empty() {
                    return Err(Error::usage(format!(
                        "the layout places table:{name}, but the loaded database has no table {name}; its tables are {}",
                        tables.tables().join(", ")
                    )));
                }
                for p in paths {
                    places.push(rule(device, p, false));
                    if engine == Engine::Postgres {
                        // Segments past 1 GiB and the free-space and visibility maps.
                        places.push(rule(device, &format!("{p}."), true));
                        places.push(rule(device, &format!("{p}_"), true));
                    }
                }
            }
        }
    }
    Ok(places)
}

/// Readies an SQLite database for a layout: each placed table is moved, once, into its own file
/// (`<database>-table-NAME`, attached by every connection; see `oltplab_dbs::sqlite`), whose full
/// path and device the VFS then places. Everything is checked before any table moves: the tables
/// exist, the database is oltplab's (a table is only moved out of a file oltplab created), and
/// SQLite can attach them all.
pub fn prepare_sqlite_layout(spec: &Spec, db: &Path) -> Result<Vec<(String, u8)>> {
    use oltplab_dbs::sqlite::{self, MAX_PLACED_TABLES};
    let placed: Vec<(&String, u8)> = spec
        .roles()
        .iter()
        .filter_map(|(role, device)| match role {
            Role::Table(name) => Some((name, *device)),
            _ => None,
        })
        .collect();
    if placed.is_empty() {
        return Ok(Vec::new());
    }
    let tables = sqlite::table_names(db)?;
    if let Some((name, _)) = placed.iter().find(|(n, _)| !tables.contains(n)) {
        return Err(Error::usage(format!(
            "the layout places table:{name}, but the loaded database has no table {name}; its tables are {}",
            tables.join(", ")
        )));
    }
    let already: Vec<String> = sqlite::placed_tables(db)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let to_move: Vec<&String> = placed
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !already.contains(n))
        .collect();
    if !to_move.is_empty() && oltplab_core::safety::read_file_marker(db).is_none() {
        return Err(Error::usage(format!(
            "the layout places table:{} on SQLite, which moves it into a file of its own, but {} was not created by oltplab: load a database with `oltplab load` to place its tables",
            to_move[0],
            db.display()
        )));
    }
    if already.len() + to_move.len() > MAX_PLACED_TABLES {
        return Err(Error::usage(format!(
            "the layout would give {} SQLite tables files of their own, and SQLite attaches at most {MAX_PLACED_TABLES}: place fewer tables",
            already.len() + to_move.len()
        )));
    }
    let mut out = Vec::new();
    for (name, device) in placed {
        if sqlite::move_table_to_own_file(db, name)? {
            crate::output::note!(
                "moved table {name} into its own file {} so that the layout can place it (once: later runs attach it)",
                sqlite::table_file(db, name).display()
            );
        }
        let file = sqlite::table_file(db, name);
        let full = file
            .canonicalize()
            .map_err(|e| oltplab_core::safety::io_usage(&file, "find", &e))?;
        out.push((full.to_string_lossy().into_owned(), device));
    }
    Ok(out)
}

/// What a file that belongs to no table is, for I/O per table: `(wal)`, `(catalog)` …
fn other_file(path: &str) -> String {
    // A Galera cluster's nodes on one shared device: `node2/mariadb/ib_logfile0` is a redo log.
    let path = path
        .strip_prefix("node")
        .and_then(|rest| rest.split_once('/'))
        .filter(|(k, _)| k.parse::<u32>().is_ok())
        .and_then(|(_, rest)| rest.strip_prefix("mariadb/"))
        .unwrap_or(path);
    let first = path.split('/').next().unwrap_or(path);
    let kind = match first {
        "pg_wal" => "wal",
        "base" | "global" | "mysql" => "catalog",
        "pgsql_tmp" | "ibtmp1" => "temp",
        f if f.starts_with("ib_logfile") => "redo log",
        f if f.starts_with("#sql") || f.starts_with("MY") => "temp",
        "ibdata1" => "system tablespace",
        f if f.starts_with("undo") => "undo",
        f => f,
    };
    format!("({kind})")
}

/// A managed server's table map for its trace: each traced file whole to its table (indexes with
/// their table), files of no table by kind.
pub fn server_table_map(files: &[String], tables: &TableFiles) -> Vec<TableExtent> {
    files
        .iter()
        .enumerate()
        .map(|(i, f)| TableExtent {
            file: i as u16,
            from_bytes: 0,
            table: match tables.table_of(f) {
                Some(t) => t.to_string(),
                None if f.starts_with("base/pgsql_tmp") => "(temp)".into(),
                None => other_file(f),
            },
        })
        .collect()
}

/// SQLite's table map for its trace: the database file page run by page run to its b-tree's table
/// (`dbstat`, read after the run; a page freed and reused by another table meanwhile counts as the
/// latter's; pages no b-tree holds and pages past the end are `(free pages)`), a placed table's
/// own file whole as that table, every WAL as `(wal)`, anything else as `(temp)`.
pub fn sqlite_table_map(files: &[String], db_path: &Path) -> Result<Vec<TableExtent>> {
    let (page_bytes, pages) = oltplab_dbs::sqlite::page_tables(db_path)?;
    let page_bytes = page_bytes.max(1);
    // SQLite names files by their full path; the run may have named the database relatively.
    let full = |p: &Path| -> Option<std::path::PathBuf> {
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        Some(
            dir.unwrap_or(Path::new("."))
                .canonicalize()
                .ok()?
                .join(p.file_name()?),
        )
    };
    let db = full(db_path);
    // Placed tables' own files, and every database file's WAL.
    let mut whole_files: Vec<(Option<std::path::PathBuf>, String)> =
        oltplab_dbs::sqlite::placed_tables(db_path)
            .into_iter()
            .flat_map(|(table, path)| {
                let wal = format!("{}-wal", path.display());
                [
                    (full(&path), table),
                    (full(Path::new(&wal)), "(wal)".into()),
                ]
            })
            .collect();
    whole_files.push((
        full(Path::new(&format!("{}-wal", db_path.display()))),
        "(wal)".into(),
    ));
    let mut map = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let file = i as u16;
        let f = full(Path::new(f));
        if f.is_none() || f != db {
            let table = whole_files
                .iter()
                .find(|(p, _)| p.is_some() && *p == f)
                .map_or("(temp)", |(_, t)| t.as_str());
            map.push(TableExtent {
                file,
                from_bytes: 0,
                table: table.into(),
            });
            continue;
        }
        // One extent per run of consecutive pages of one table.
        let mut next_page = 1u64;
        for (&page, table) in &pages {
            if page != next_page {
                map.push(TableExtent {
                    file,
                    from_bytes: (next_page - 1) * page_bytes,
                    table: "(free pages)".into(),
                });
            }
            if page != next_page
                || map
                    .last()
                    .is_none_or(|e| e.file != file || e.table != *table)
            {
                map.push(TableExtent {
                    file,
                    from_bytes: (page - 1) * page_bytes,
                    table: table.clone(),
                });
            }
            next_page = page + 1;
        }
        map.push(TableExtent {
            file,
            from_bytes: (next_page - 1) * page_bytes,
            table: "(free pages)".into(),
        });
    }
    map.sort();
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oltplab_trace::stat::io_by_table;
    use oltplab_trace::{Op, Record, TraceData};

    fn rec(file: u16, op: Op, offset: u64, len: u32, at: u64) -> Record {
        Record {
            submit_ns: at,
            latency_ns: 1_000,
            offset,
            len,
            file,
            op: op as u8,
            tag: 0,
            tid: 1,
            cpu: None,
        }
    }

    #[test]
    fn a_shared_galera_devices_files_are_known_under_their_node() {
        assert_eq!(other_file("node2/mariadb/ib_logfile0"), "(redo log)");
        assert_eq!(other_file("node13/mariadb/ibdata1"), "(system tablespace)");
        assert_eq!(other_file("ib_logfile0"), "(redo log)");
        assert_eq!(other_file("nodes/mariadb/ibdata1"), "(nodes)");
    }

    #[test]
    fn server_io_is_attributed_to_tables_with_their_segments_and_forks() {
        let tables = TableFiles {
            files: [
                ("base/5/100".to_string(), "stock".to_string()),
                ("base/5/101".to_string(), "stock".to_string()),
                ("base/5/200".to_string(), "item".to_string()),
            ]
            .into(),
        };
        let mut trace = TraceData {
            files: [
                "base/5/100",
                "base/5/100.1",
                "base/5/101_fsm",
                "base/5/200",
                "pg_wal/01",
                "base/5/1259",
            ]
            .map(String::from)
            .to_vec(),
            records: vec![
                rec(0, Op::Read, 0, 8192, 0),
                rec(1, Op::Read, 0, 8192, 10),
                rec(2, Op::Write, 0, 8192, 20),
                rec(3, Op::Read, 8192, 8192, 30),
                rec(4, Op::Write, 0, 8192, 40),
                rec(4, Op::Fdatasync, 0, 0, 50),
                rec(5, Op::Read, 0, 8192, 60),
            ],
            ..TraceData::default()
        };
        trace.tables = server_table_map(&trace.files, &tables);
        let g = io_by_table(&trace, 1_000_000);
        let of = |n: &str| g.iter().find(|x| x.name == n).unwrap().clone();
        assert_eq!(
            (of("stock").reads, of("stock").writes),
            (2, 1),
            "heap, segment and index map"
        );
        assert_eq!(of("item").reads, 1);
        assert_eq!(of("(wal)").writes, 1);
        assert_eq!(of("(catalog)").reads, 1);
        assert!(
            (of("stock").share_pct - 50.0).abs() < 1e-9,
            "3 of 6 reads and writes"
        );
        assert_eq!(g[0].name, "stock", "largest share first");
    }

    #[test]
    fn sqlite_tables_move_only_out_of_oltplabs_database_and_only_when_all_exist() {
        use oltplab_dbs::sqlite::{open, remove_database_files, table_file, table_names};
        let dir = std::env::temp_dir().join(format!("oltplab-move-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.db");
        let opts = oltplab_dbs::sqlite::SqliteOptions {
            create: true,
            ..Default::default()
        };
        // `order` is an SQL keyword: every statement must quote it.
        open(&path, &opts)
            .unwrap()
            .execute_batch(
                "CREATE TABLE \"order\"(x INTEGER PRIMARY KEY, y TEXT);
                 CREATE INDEX order_y ON \"order\"(y);
                 CREATE TABLE b(x);
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<200)
                 INSERT INTO \"order\" SELECT i, hex(randomblob(20)) FROM n;",
            )
            .unwrap();
        let spec = |l: &str| oltplab_devmodel::parse_spec(l).unwrap();
        let order_file = table_file(&path, "order");

        let err = prepare_sqlite_layout(&spec("data=hdd-15k,table:order=pcie-flash-2012"), &path)
            .unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("not created by oltplab"), "{err}");
        assert!(!order_file.exists(), "nothing moved out of a foreign file");
        oltplab_core::safety::write_file_marker(
            &path,
            oltplab_core::safety::FileMarker { filled_bytes: 0 },
        )
        .unwrap();

        let err = prepare_sqlite_layout(
            &spec("data=hdd-15k,table:order=pcie-flash-2012,table:nope=sas-ssd-2012"),
            &path,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("has no table nope; its tables are b, order"),
            "{err}"
        );
        assert!(!order_file.exists(), "checked before anything moved");

        let placed =
            prepare_sqlite_layout(&spec("data=hdd-15k,table:order=pcie-flash-2012"), &path)
                .unwrap();
        assert_eq!(placed.len(), 1);
        assert!(placed[0].0.ends_with("t.db-table-order"), "{placed:?}");
        assert_eq!(placed[0].1, 1);
        let conn = open(&path, &Default::default()).unwrap();
        let rows: i64 = conn
            .query_row(
                "SELECT count(*) FROM \"order\" WHERE y IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(rows, 200, "every row moved, found by its unqualified name");
        let in_main: i64 = conn
            .query_row(
                "SELECT count(*) FROM main.sqlite_schema WHERE tbl_name = 'order'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(in_main, 0, "the table and its index left the main file");
        drop(conn);
        assert_eq!(table_names(&path).unwrap(), ["b", "order"]);
        // Again: nothing to move, the same placement.
        assert_eq!(
            prepare_sqlite_layout(&spec("data=hdd-15k,table:order=pcie-flash-2012"), &path)
                .unwrap(),
            placed
        );
        remove_database_files(&path);
        assert!(!path.exists() && !order_file.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sqlite_pages_are_attributed_to_their_btree() {
        let dir = std::env::temp_dir().join(format!("oltplab-pages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.db");
        let opts = oltplab_dbs::sqlite::SqliteOptions {
            create: true,
            ..Default::default()
        };
        let conn = oltplab_dbs::sqlite::open(&path, &opts).unwrap();
        conn.execute_batch(
            "CREATE TABLE a(x INTEGER PRIMARY KEY, y BLOB);
             CREATE TABLE b(x INTEGER PRIMARY KEY, y BLOB);
             CREATE INDEX b_y ON b(y);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<200)
             INSERT INTO a SELECT i, randomblob(1000) FROM n;
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<200)
             INSERT INTO b SELECT i, randomblob(300) FROM n;",
        )
        .unwrap();
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        drop(conn);
        let (page_bytes, pages) = oltplab_dbs::sqlite::page_tables(&path).unwrap();
        let b_pages: Vec<u64> = pages
            .iter()
            .filter(|(_, t)| *t == "b")
            .map(|(p, _)| *p)
            .collect();
        assert!(
            b_pages.len() > 10,
            "b and its index span pages: {}",
            b_pages.len()
        );
        // A known workload: every page of b read twice, page 1 (the schema) once.
        let mut records = Vec::new();
        for (i, p) in b_pages.iter().chain(b_pages.iter()).enumerate() {
            records.push(rec(
                0,
                Op::Read,
                (p - 1) * page_bytes,
                page_bytes as u32,
                i as u64,
            ));
        }
        records.push(rec(0, Op::Read, 0, page_bytes as u32, 1_000_000));
        // A page past the end when the run ended (the table map is of that moment).
        let last = *pages.keys().next_back().unwrap();
        records.push(rec(0, Op::Write, (last + 3) * page_bytes, 4096, 2_000_000));
        let mut trace = TraceData {
            files: vec![path.canonicalize().unwrap().display().to_string()],
            records,
            ..TraceData::default()
        };
        trace.tables = sqlite_table_map(&trace.files, &path).unwrap();
        // A few extents (runs of pages), not one per page.
        assert!(trace.tables.len() < pages.len() / 4, "{:?}", trace.tables);
        let g = io_by_table(&trace, 1_000_000_000);
        let b = g.iter().find(|x| x.name == "b").unwrap();
        assert_eq!(b.reads, 2 * b_pages.len() as u64, "exactly b's reads");
        assert!(g.iter().all(|x| x.name != "a"), "nothing of a was read");
        assert_eq!(
            g.iter().find(|x| x.name == "sqlite_schema").unwrap().reads,
            1
        );
        assert_eq!(
            g.iter().find(|x| x.name == "(free pages)").unwrap().writes,
            1
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
