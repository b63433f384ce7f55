//! Finding the installed server programs, and saying which Debian package to install when they are
//! missing.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use oltplab_core::{Error, Result};

/// Directories searched after `PATH`, in order: Debian keeps PostgreSQL's server programs out of
/// `PATH` (in /usr/lib/postgresql/<major>/bin) and mariadbd in /usr/sbin.
fn extra_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    // The newest PostgreSQL major version first.
    if let Ok(entries) = fs::read_dir("/usr/lib/postgresql") {
        let mut majors: Vec<(u32, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let major = e.file_name().to_str()?.parse::<u32>().ok()?;
                Some((major, e.path().join("bin")))
            })
            .collect();
        majors.sort_by_key(|m| std::cmp::Reverse(m.0));
        dirs.extend(majors.into_iter().map(|(_, d)| d));
    }
    for d in [
        "/usr/local/bin",
        "/usr/local/sbin",
        "/usr/local/pgsql/bin",
        "/usr/local/mysql/bin",
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
    ] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The first of `names` found in `only` (if given) or on `PATH` and then the usual install places.
pub fn find(names: &[&str], only: Option<&Path>) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = match only {
        Some(dir) => vec![dir.to_path_buf()],
        None => std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .chain(extra_dirs())
            .collect(),
    };
    for name in names {
        for dir in &dirs {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

/// PostgreSQL's server programs.
#[derive(Debug, Clone)]
pub struct PostgresBinaries {
    pub initdb: PathBuf,
    pub postgres: PathBuf,
}

/// The programs of a PostgreSQL installation. `initdb` and `postgres` are taken from one directory
/// so that their versions match (a `postgres` on PATH from another major version would refuse the
/// cluster `initdb` made).
pub fn postgres(only: Option<&Path>) -> Result<PostgresBinaries> {
    let missing = || {
        Error::usage(format!(
            "PostgreSQL's server programs (initdb, postgres) are not installed{}: install Debian's postgresql package (apt-get install postgresql), or pass --url to use a running server",
            searched(only)
        ))
    };
    let initdb = find(&["initdb"], only).ok_or_else(missing)?;
    // Resolve symlinks such as /usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb.
    let real = fs::canonicalize(&initdb).unwrap_or(initdb.clone());
    let dir = real.parent().unwrap_or(Path::new("/"));
    let postgres = if is_executable(&dir.join("postgres")) {
        dir.join("postgres")
    } else {
        find(&["postgres"], only).ok_or_else(missing)?
    };
    Ok(PostgresBinaries {
        initdb: real,
        postgres,
    })
}

/// MariaDB's server programs.
#[derive(Debug, Clone)]
pub struct MariadbBinaries {
    pub mariadbd: PathBuf,
    pub install_db: PathBuf,
}

pub fn mariadb(only: Option<&Path>) -> Result<MariadbBinaries> {
    let missing = |what: &str| {
        Error::usage(format!(
            "MariaDB's {what} is not installed{}: install Debian's mariadb-server package (apt-get install mariadb-server), or pass --url to use a running server",
            searched(only)
        ))
    };
    let mariadbd =
        find(&["mariadbd", "mysqld"], only).ok_or_else(|| missing("server program (mariadbd)"))?;
    let install_db = find(&["mariadb-install-db", "mysql_install_db"], only)
        .ok_or_else(|| missing("mariadb-install-db"))?;
    Ok(MariadbBinaries {
        mariadbd,
        install_db,
    })
}

fn searched(only: Option<&Path>) -> String {
    match only {
        Some(dir) => format!(" in {}", dir.display()),
        None => String::new(),
    }
}

/// The setting names the installed server accepts, lower case with `_`, so that a study can refuse
/// a misspelt one before it starts anything: PostgreSQL's from `postgres --describe-config`,
/// MariaDB's from the variables `mariadbd --verbose --help` lists (`-` read as `_`). Neither
/// starts a server.
pub fn setting_names(engine: &str) -> Result<Vec<String>> {
    let (program, args, from_line): (PathBuf, &[&str], Option<&str>) = match engine {
        "postgres" => (postgres(None)?.postgres, &["--describe-config"], None),
        "mariadb" => (
            mariadb(None)?.mariadbd,
            // --no-defaults: the machine's my.cnf must not decide what is known.
            &["--no-defaults", "--verbose", "--help"],
            Some("Variables (--variable-name=value)"),
        ),
        other => {
            return Err(Error::usage(format!(
                "{other} has no server settings: give them to postgres or mariadb"
            )))
        }
    };
    let out = std::process::Command::new(&program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            Error::failed(format!(
                "cannot run {} to list its settings: {e}",
                program.display()
            ))
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Box<dyn Iterator<Item = &str>> = match from_line {
        Some(header) => Box::new(
            text.lines()
                .skip_while(move |l| !l.starts_with(header))
                .skip(1),
        ),
        None => Box::new(text.lines()),
    };
    let names: Vec<String> = lines
        .filter_map(|l| l.split(['\t', ' ']).next())
        .filter(|n| {
            !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
        })
        .map(|n| n.to_ascii_lowercase().replace('-', "_"))
        .collect();
    if names.is_empty() {
        return Err(Error::failed(format!(
            "{} {} listed no settings (exit {}): this is a bug in oltplab or an unusual installation",
            program.display(),
            args.join(" "),
            out.status
        )));
    }
    Ok(names)
}

/// A server setting as `--server-setting` and a study file's `server_settings` take it, `KEY=VALUE`
/// (passed to the managed server as given); `Err` is why not, to follow the caller's own words.
pub fn parse_setting(text: &str) -> std::result::Result<(String, String), String> {
    let bad = || format!("\"{text}\" is not KEY=VALUE: write e.g. \"synchronous_commit=off\"");
    let (key, value) = text.split_once('=').ok_or_else(bad)?;
    let (key, value) = (key.trim(), value.trim());
    let key_ok = key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-');
    if !key_ok || value.is_empty() {
        return Err(bad());
    }
    Ok((key.to_string(), value.to_string()))
}

/// Whether the installed `engine` knows setting `key`, checked against `known`
/// ([`setting_names`]); PostgreSQL's dotted names are an extension's, which the server accepts as
/// placeholders.
pub fn knows_setting(engine: &str, known: &[String], key: &str) -> bool {
    let name = key.to_ascii_lowercase().replace('-', "_");
    (engine == "postgres" && name.contains('.')) || known.contains(&name)
}

/// Refuses a setting the installed `engine` does not know, before anything starts, with one
/// sentence naming it. `Ok(false)`: the server is not installed, so nothing could be checked (its
/// start will say so).
pub fn check_settings(engine: &str, settings: &[(String, String)]) -> Result<bool> {
    if settings.is_empty() {
        return Ok(true);
    }
    let known = match setting_names(engine) {
        Ok(k) => k,
        Err(Error::Usage(_)) => return Ok(false),
        Err(e) => return Err(e),
    };
    if let Some((key, _)) = settings
        .iter()
        .find(|(key, _)| !knows_setting(engine, &known, key))
    {
        return Err(Error::usage(format!(
            "--server-setting {key}: the installed {engine} has no setting `{key}`: check its spelling against its documentation"
        )));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_setting_is_key_equals_value() {
        assert_eq!(
            parse_setting(" synchronous_commit = off ").unwrap(),
            ("synchronous_commit".into(), "off".into())
        );
        assert_eq!(
            parse_setting("innodb-flush-log-at-trx-commit=2").unwrap().0,
            "innodb-flush-log-at-trx-commit"
        );
        for bad in ["fsync", "=off", "fsync=", "1st=2", "a b=1"] {
            let e = parse_setting(bad).unwrap_err();
            assert!(e.contains("is not KEY=VALUE"), "{bad}: {e}");
        }
        let known = vec!["synchronous_commit".to_string()];
        assert!(knows_setting("postgres", &known, "Synchronous-Commit"));
        assert!(knows_setting("postgres", &known, "pg_stat_statements.max"));
        assert!(!knows_setting("mariadb", &known, "x.y"));
        assert!(!knows_setting("postgres", &known, "synchronous_comit"));
    }

    #[test]
    fn an_empty_directory_names_the_package_to_install() {
        let dir = std::env::temp_dir().join(format!("oltplab-nobin-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let err = postgres(Some(&dir)).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string().contains("apt-get install postgresql"),
            "{err}"
        );
        let err = mariadb(Some(&dir)).unwrap_err();
        assert!(
            err.to_string().contains("apt-get install mariadb-server"),
            "{err}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn non_executable_files_are_not_programs() {
        let dir = std::env::temp_dir().join(format!("oltplab-noexec-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("initdb"), "#!/bin/sh\n").unwrap();
        assert!(find(&["initdb"], Some(&dir)).is_none());
        fs::set_permissions(dir.join("initdb"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find(&["initdb"], Some(&dir)), Some(dir.join("initdb")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
