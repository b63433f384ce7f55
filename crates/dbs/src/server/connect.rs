//! External and managed servers as a client meets them: which engine a URL names, the URL without
//! its password, and connection failures turned into one sentence that says what to do.

use std::collections::BTreeMap;
use std::time::Duration;

use mysql::prelude::Queryable;
use oltplab_core::{Error, Result};

use super::ServerKind;

/// The engine a `postgres://`, `postgresql://` or `mysql://` URL names.
pub fn kind_of_url(url: &str) -> Result<ServerKind> {
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("postgres") | Some("postgresql") => Ok(ServerKind::Postgres),
        Some("mysql") | Some("mariadb") => Ok(ServerKind::Mariadb),
        _ => Err(Error::usage(format!(
            "'{}' is not a server URL: write postgres://USER@HOST:PORT/DB or mysql://USER@HOST:PORT/DB",
            redact_url(url)
        ))),
    }
}

/// One URL per host of a multi-host URL, the form libpq and MySQL's connectors take
/// (`postgres://bob@h1:5432,h2:5433/tpcc`): each keeps the scheme, user, password, database
/// and query, with one `HOST[:PORT]` of the list. A URL naming one host comes back unchanged.
/// An empty entry, a host without a name or a port that is not 1…65535 is a usage error naming it.
pub fn split_hosts(url: &str) -> Result<Vec<String>> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Ok(vec![url.to_string()]);
    };
    let query_start = rest.find('?').unwrap_or(rest.len());
    // userinfo ends at the last '@' before the query, as in `redact_url`.
    let (userinfo, after) = match rest[..query_start].rsplit_once('@') {
        Some((u, _)) => (Some(u), &rest[u.len() + 1..]),
        None => (None, rest),
    };
    let authority_end = after.find(['/', '?']).unwrap_or(after.len());
    let (authority, tail) = after.split_at(authority_end);
    let shown = redact_url(url);
    if kind_of_url(url).ok() == Some(ServerKind::Postgres) {
        // libpq's other multi-host form: without this refusal rust-postgres would try the hosts
        // in turn and put every terminal on the first that answers.
        let query = tail.split_once('?').map_or("", |(_, q)| q);
        for kv in query.split('&') {
            if let Some((k, v)) = kv.split_once('=') {
                if (k == "host" || k == "hostaddr" || k == "port") && v.contains(',') {
                    return Err(Error::usage(format!(
                        "--url {shown} lists several hosts in its query ({k}={v}); oltplab takes them in the host part: write postgres://USER@HOST1:PORT1,HOST2:PORT2/DB, or give --url once per host"
                    )));
                }
            }
        }
    }
    if !authority.contains(',') {
        return Ok(vec![url.to_string()]);
    }
    let user = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
    let mut urls = Vec::new();
    for host in authority.split(',') {
        check_host_entry(host, &shown)?;
        urls.push(format!("{scheme}://{user}{host}{tail}"));
    }
    Ok(urls)
}

/// One `HOST[:PORT]` (or `[IPv6][:PORT]`) of a host list.
fn check_host_entry(entry: &str, shown: &str) -> Result<()> {
    let fix = "write HOST:PORT,HOST:PORT";
    if entry.is_empty() {
        return Err(Error::usage(format!(
            "the host list of --url {shown} has an empty entry: {fix}"
        )));
    }
    let (host, port) = match entry.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, "")) => (h, None),
            Some((h, p)) if p.starts_with(':') => (h, Some(&p[1..])),
            _ => {
                return Err(Error::usage(format!(
                    "the host '{entry}' in --url {shown} is not [IPV6] or [IPV6]:PORT: write [IPV6]:PORT"
                )))
            }
        },
        None => match entry.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (entry, None),
        },
    };
    if host.is_empty() {
        return Err(Error::usage(format!(
            "the entry '{entry}' in --url {shown} names no host: {fix}"
        )));
    }
    if let Some(p) = port {
        if !matches!(p.parse::<u16>(), Ok(n) if n > 0) {
            return Err(Error::usage(format!(
                "the host '{entry}' in --url {shown} has the port '{p}', not a number from 1 to 65535: {fix}"
            )));
        }
    }
    Ok(())
}

/// The URL with any password replaced by `***`, safe to print and to store in results.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        // A key-value connection string (`host=db user=bob password=…`), or not a URL at all.
        return redact_key_values(&redact_query(url));
    };
    // userinfo ends at the last '@' before the query: a password typed with a '/' in it
    // (`bob:pa/ss@db`) must not end it early. (A '@' in the path is redacted with it: safe side.)
    let query_start = rest.find('?').unwrap_or(rest.len());
    let (userinfo, after) = match rest[..query_start].rsplit_once('@') {
        Some((userinfo, _)) => (Some(userinfo), &rest[userinfo.len() + 1..]),
        None => (None, rest),
    };
    let user = match userinfo {
        Some(u) => match u.split_once(':') {
            Some((user, _password)) => format!("{user}:***@"),
            None => format!("{u}@"),
        },
        None => String::new(),
    };
    format!("{scheme}://{user}{}", redact_query(after))
}

/// `password=…` in a libpq key-value string, up to the next blank (or the closing quote).
fn redact_key_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_ignore_case(rest, "password=") {
        let value_start = at + "password=".len();
        out.push_str(&rest[..value_start]);
        out.push_str("***");
        let value = &rest[value_start..];
        let end = match value.strip_prefix('\'') {
            Some(quoted) => quoted.find('\'').map_or(value.len(), |i| i + 2),
            None => value.find(char::is_whitespace).unwrap_or(value.len()),
        };
        rest = &value[end..];
    }
    out.push_str(rest);
    out
}

fn find_ignore_case(haystack: &str, needle: &str) -> Option<usize> {
    haystack
        .to_ascii_lowercase()
        .find(&needle.to_ascii_lowercase())
}

/// `url` with the password the engine's own tools would use when the URL gives none: PostgreSQL's
/// `PGPASSWORD`, then the first matching line of `~/.pgpass` (or `PGPASSFILE`; `host:port:db:
/// user:password`, `*` matching anything, read only if no other user can read it, as libpq does);
/// MariaDB's `MYSQL_PWD`. So a password never has to be on the command line, where `ps` shows it.
pub fn with_password_from_env(url: &str) -> String {
    with_password_from(url, &|name| std::env::var(name).ok())
}

/// [`with_password_from_env`] with the environment given.
fn with_password_from(url: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let Ok(kind) = kind_of_url(url) else {
        return url.to_string();
    };
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let query_start = rest.find('?').unwrap_or(rest.len());
    let (userinfo, after) = match rest[..query_start].rsplit_once('@') {
        Some((u, _)) => (u, &rest[u.len() + 1..]),
        None => ("", rest),
    };
    if userinfo.contains(':') {
        return url.to_string();
    }
    let password = match kind {
        ServerKind::Postgres => env("PGPASSWORD")
            .filter(|p| !p.is_empty())
            .or_else(|| pgpass_password(userinfo, after, env)),
        ServerKind::Mariadb => env("MYSQL_PWD").filter(|p| !p.is_empty()),
    };
    match password {
        Some(p) => {
            let user = if userinfo.is_empty() {
                default_user(env)
            } else {
                userinfo.to_string()
            };
            format!("{scheme}://{user}:{}@{after}", percent_encode(&p))
        }
        None => url.to_string(),
    }
}

/// The user a URL without one connects as: the login name, as libpq and the mysql client assume.
fn default_user(env: &dyn Fn(&str) -> Option<String>) -> String {
    env("USER")
        .or_else(|| env("LOGNAME"))
        .unwrap_or_else(|| "postgres".into())
}

/// The password `~/.pgpass` gives for `user` at the host, port and database of `after`
/// (`HOST[:PORT]/DB[?…]`).
fn pgpass_password(
    user: &str,
    after: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let path = match env("PGPASSFILE") {
        Some(p) => std::path::PathBuf::from(p),
        None => std::path::PathBuf::from(env("HOME")?).join(".pgpass"),
    };
    // libpq ignores a password file that others can read or write.
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).ok()?.permissions().mode();
        if mode & 0o077 != 0 {
            return None;
        }
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let (authority, path_part) = after
        .split_once('?')
        .map_or(after, |(a, _)| a)
        .split_once('/')
        .unwrap_or((after, ""));
    let (host, port) = authority.rsplit_once(':').unwrap_or((authority, "5432"));
    let host = if host.is_empty() { "localhost" } else { host };
    let user = if user.is_empty() {
        default_user(env)
    } else {
        user.to_string()
    };
    let db = if path_part.is_empty() {
        user.as_str()
    } else {
        path_part
    };
    pgpass_lookup(&text, host, port, db, &user)
}

/// The first line of a `.pgpass` text that matches; `*` matches anything, `\:` and `\\` escape.
fn pgpass_lookup(text: &str, host: &str, port: &str, db: &str, user: &str) -> Option<String> {
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => field.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
                _ => field.push(c),
            }
        }
        fields.push(field);
        if fields.len() != 5 {
            continue;
        }
        let matches = |pattern: &str, value: &str| pattern == "*" || pattern == value;
        if matches(&fields[0], host)
            && matches(&fields[1], port)
            && matches(&fields[2], db)
            && matches(&fields[3], user)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

/// A password as URL userinfo: everything but unreserved characters percent-encoded.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `password=` in a query string (libpq accepts it there too).
fn redact_query(text: &str) -> String {
    let Some((head, query)) = text.split_once('?') else {
        return text.to_string();
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _))
                if k.eq_ignore_ascii_case("password") || k.eq_ignore_ascii_case("pass") =>
            {
                format!("{k}=***")
            }
            _ => kv.to_string(),
        })
        .collect();
    format!("{head}?{}", parts.join("&"))
}

/// What a reachable server says about itself.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub kind: ServerKind,
    /// `PostgreSQL 15.18 …` / `MariaDB 10.11.19-MariaDB…`.
    pub version: String,
    pub max_connections: u32,
    /// Connections open now, this check's own included.
    pub connections_in_use: u32,
    /// Connections reserved for superusers (PostgreSQL's superuser_reserved_connections).
    pub reserved_connections: u32,
}

impl ServerInfo {
    /// Connections an ordinary client may still open.
    pub fn connections_available(&self) -> u32 {
        self.max_connections
            .saturating_sub(self.reserved_connections)
            .saturating_sub(self.connections_in_use.saturating_sub(1))
    }

    /// A usage error if `needed` connections (terminals plus the driver's own) do not fit.
    pub fn check_connections(&self, needed: u32) -> Result<()> {
        let available = self.connections_available();
        if needed > available {
            return Err(Error::usage(format!(
                "the {} server allows {available} more connections (max_connections {}), but this run needs {needed}: lower --terminals, or raise the server's max_connections",
                self.kind.product(),
                self.max_connections
            )));
        }
        Ok(())
    }
}

/// Connects once to `url` and reports the server's version and connection limit; unreachable
/// servers, wrong credentials, a missing database and a full server become usage errors.
pub fn connect_check(url: &str) -> Result<ServerInfo> {
    match kind_of_url(url)? {
        ServerKind::Postgres => {
            let mut client = pg_connect(url)?;
            let q = |client: &mut postgres::Client, sql: &str| -> Result<String> {
                client
                    .query_one(sql, &[])
                    .map(|r| r.get::<_, String>(0))
                    .map_err(|e| pg_error(url, &e))
            };
            let version = q(&mut client, "SHOW server_version")?;
            let max = q(&mut client, "SHOW max_connections")?;
            let reserved = q(&mut client, "SHOW superuser_reserved_connections")?;
            let in_use = q(
                &mut client,
                "SELECT count(*)::text FROM pg_stat_activity WHERE backend_type = 'client backend'",
            )?;
            Ok(ServerInfo {
                kind: ServerKind::Postgres,
                version: format!("PostgreSQL {version}"),
                max_connections: max.parse().unwrap_or(0),
                connections_in_use: in_use.parse().unwrap_or(1),
                reserved_connections: reserved.parse().unwrap_or(0),
            })
        }
        ServerKind::Mariadb => {
            let mut conn = mysql_connect(url)?;
            let version: Option<String> = conn
                .query_first("SELECT VERSION()")
                .map_err(|e| mysql_error(url, &e))?;
            let max: Option<u32> = conn
                .query_first("SELECT @@max_connections")
                .map_err(|e| mysql_error(url, &e))?;
            let in_use: Option<(String, String)> = conn
                .query_first("SHOW GLOBAL STATUS LIKE 'Threads_connected'")
                .map_err(|e| mysql_error(url, &e))?;
            let version = version.unwrap_or_default();
            let product = if version.contains("MariaDB") {
                "MariaDB"
            } else {
                "MySQL"
            };
            Ok(ServerInfo {
                kind: ServerKind::Mariadb,
                version: format!("{product} {version}"),
                max_connections: max.unwrap_or(0),
                connections_in_use: in_use.and_then(|(_, v)| v.parse().ok()).unwrap_or(1),
                reserved_connections: 0,
            })
        }
    }
}

/// A PostgreSQL client for `url`, with connection failures explained.
pub fn pg_connect(url: &str) -> Result<postgres::Client> {
    let mut config: postgres::Config = url.parse().map_err(|e| {
        Error::usage(format!(
            "'{}' is not a valid PostgreSQL URL ({e}): write postgres://USER@HOST:PORT/DB",
            redact_url(url)
        ))
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    config
        .connect(postgres::NoTls)
        .map_err(|e| pg_error(url, &e))
}

/// A MySQL/MariaDB connection for `url`, with connection failures explained.
pub fn mysql_connect(url: &str) -> Result<mysql::Conn> {
    let opts = mysql::Opts::from_url(url).map_err(|e| {
        Error::usage(format!(
            "'{}' is not a valid MySQL URL ({e}): write mysql://USER@HOST:PORT/DB",
            redact_url(url)
        ))
    })?;
    let opts =
        mysql::OptsBuilder::from_opts(opts).tcp_connect_timeout(Some(Duration::from_secs(10)));
    mysql::Conn::new(opts).map_err(|e| mysql_error(url, &e))
}

/// Explains a PostgreSQL error for the server at `url` (whose password is never shown).
pub fn pg_error(url: &str, err: &postgres::Error) -> Error {
    use postgres::error::SqlState;
    let shown = redact_url(url);
    if let Some(db) = err.as_db_error() {
        let code = db.code();
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            return Error::usage(format!(
                "the PostgreSQL server at {shown} refused the credentials ({}): check the user name and password in --url",
                db.message()
            ));
        }
        if *code == SqlState::TOO_MANY_CONNECTIONS {
            return Error::usage(format!(
                "the PostgreSQL server at {shown} has no free connections ({}): lower --terminals, or raise its max_connections",
                db.message()
            ));
        }
        if *code == SqlState::INVALID_CATALOG_NAME {
            return Error::usage(format!(
                "the PostgreSQL server at {shown} has no such database ({}): create it (createdb NAME) or name an existing one in --url",
                db.message()
            ));
        }
        if *code == SqlState::CANNOT_CONNECT_NOW {
            return Error::usage(format!(
                "the PostgreSQL server at {shown} is not accepting connections yet ({}): wait until it has started",
                db.message()
            ));
        }
        return Error::failed(format!("PostgreSQL at {shown}: {}", db.message()));
    }
    if err.is_closed() || err.to_string().contains("error connecting") || is_io(err) {
        return Error::usage(format!(
            "cannot reach the PostgreSQL server at {shown} ({}): check that it runs and that host and port in --url are right",
            source_text(err)
        ));
    }
    Error::failed(format!("PostgreSQL at {shown}: {}", source_text(err)))
}

fn is_io(err: &postgres::Error) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        if s.is::<std::io::Error>() {
            return true;
        }
        source = s.source();
    }
    false
}

/// The innermost cause, which says more than rust-postgres's "error connecting to server".
fn source_text(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text = s.to_string();
        source = s.source();
    }
    text
}

/// Explains a MySQL/MariaDB error for the server at `url` (whose password is never shown).
pub fn mysql_error(url: &str, err: &mysql::Error) -> Error {
    let shown = redact_url(url);
    match err {
        mysql::Error::MySqlError(e) => match e.code {
            1045 | 1698 => Error::usage(format!(
                "the MySQL server at {shown} refused the credentials ({}): check the user name and password in --url",
                e.message
            )),
            1044 => Error::usage(format!(
                "the MySQL server at {shown} denies this user the database ({}): grant access or name another database in --url",
                e.message
            )),
            1049 => Error::usage(format!(
                "the MySQL server at {shown} has no such database ({}): create it (CREATE DATABASE NAME) or name an existing one in --url",
                e.message
            )),
            1040 | 1203 => Error::usage(format!(
                "the MySQL server at {shown} has no free connections ({}): lower --terminals, or raise its max_connections",
                e.message
            )),
            _ => Error::failed(format!("MySQL at {shown}: {} (error {})", e.message, e.code)),
        },
        mysql::Error::IoError(e) => Error::usage(format!(
            "cannot reach the MySQL server at {shown} ({e}): check that it runs and that host and port in --url are right"
        )),
        mysql::Error::DriverError(
            mysql::DriverError::CouldNotConnect(_) | mysql::DriverError::ConnectTimeout,
        ) => {
            let cause = match err {
                mysql::Error::DriverError(mysql::DriverError::CouldNotConnect(Some((_, d, _)))) => {
                    d.clone()
                }
                mysql::Error::DriverError(mysql::DriverError::ConnectTimeout) => {
                    "timed out".to_string()
                }
                _ => "no answer".to_string(),
            };
            Error::usage(format!(
                "cannot reach the MySQL server at {shown} ({cause}): check that it runs and that host and port in --url are right"
            ))
        }
        mysql::Error::UrlError(e) => Error::usage(format!(
            "'{shown}' is not a valid MySQL URL ({e}): write mysql://USER@HOST:PORT/DB"
        )),
        other => Error::failed(format!("MySQL at {shown}: {other}")),
    }
}

/// Settings of an external server, for the result's `env.engine_settings`.
pub fn external_settings(url: &str) -> Result<BTreeMap<String, String>> {
    let mut settings = BTreeMap::new();
    match kind_of_url(url)? {
        ServerKind::Postgres => {
            let mut client = pg_connect(url)?;
            for row in client
                .query(
                    "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ('shared_buffers','max_connections','fsync','synchronous_commit','wal_sync_method','full_page_writes','max_wal_size','checkpoint_timeout','block_size')",
                    &[],
                )
                .map_err(|e| pg_error(url, &e))?
            {
                settings.insert(row.get::<_, String>(0), row.get::<_, String>(1));
            }
        }
        ServerKind::Mariadb => {
            let mut conn = mysql_connect(url)?;
            let rows: Vec<(String, String)> = conn
                .query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_buffer_pool_size','innodb_flush_method','innodb_flush_log_at_trx_commit','innodb_use_native_aio','innodb_doublewrite','innodb_log_file_size','innodb_page_size','log_bin','sync_binlog','max_connections')")
                .map_err(|e| mysql_error(url, &e))?;
            settings.extend(rows);
        }
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_with_a_slash_or_in_key_values_is_redacted() {
        assert_eq!(
            redact_url("postgres://bob:pa/ss@db/x"),
            "postgres://bob:***@db/x"
        );
        assert_eq!(
            redact_url("postgres://bob:a/b@c@db:5433/x?sslmode=disable"),
            "postgres://bob:***@db:5433/x?sslmode=disable"
        );
        assert_eq!(
            redact_url("host=db user=bob password=s3cret dbname=x"),
            "host=db user=bob password=*** dbname=x"
        );
        assert_eq!(
            redact_url("host=db PASSWORD='two words' dbname=x"),
            "host=db PASSWORD=*** dbname=x"
        );
        let err = kind_of_url("host=db user=bob password=s3cret").unwrap_err();
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn a_password_comes_from_the_environment_or_pgpass_when_the_url_has_none() {
        let dir = std::env::temp_dir().join(format!("oltplab-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pgpass = dir.join("pgpass");
        std::fs::write(&pgpass, "db:5432:tpcc:bob:from/file\n").unwrap();
        let env = |vars: Vec<(&'static str, String)>| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
            }
        };
        let file = pgpass.display().to_string();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
        let with_file = env(vec![("PGPASSFILE", file.clone())]);
        assert_eq!(
            with_password_from("postgres://bob@db/tpcc", &with_file),
            "postgres://bob:from%2Ffile@db/tpcc"
        );
        // PGPASSWORD first; a password in the URL wins over both.
        let both = env(vec![
            ("PGPASSFILE", file.clone()),
            ("PGPASSWORD", "env".into()),
        ]);
        assert_eq!(
            with_password_from("postgres://bob@db/tpcc", &both),
            "postgres://bob:env@db/tpcc"
        );
        assert_eq!(
            with_password_from("postgres://bob:url@db/tpcc", &both),
            "postgres://bob:url@db/tpcc"
        );
        // A password file others can read is ignored, as libpq ignores it.
        std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            with_password_from("postgres://bob@db/tpcc", &with_file),
            "postgres://bob@db/tpcc"
        );
        let mysql = env(vec![("MYSQL_PWD", "m y".into()), ("USER", "eve".into())]);
        assert_eq!(
            with_password_from("mysql://127.0.0.1:3306/x", &mysql),
            "mysql://eve:m%20y@127.0.0.1:3306/x"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn pgpass_lines_match_as_libpq_matches_them() {
        let text = "# comment\nother:5432:*:bob:nope\ndb:*:tpcc:bob:pa\\:ss\n*:*:*:*:fallback\n";
        assert_eq!(
            pgpass_lookup(text, "db", "5433", "tpcc", "bob").as_deref(),
            Some("pa:ss")
        );
        assert_eq!(
            pgpass_lookup(text, "elsewhere", "5432", "x", "eve").as_deref(),
            Some("fallback")
        );
        assert_eq!(
            pgpass_lookup("db:5432:x:bob", "db", "5432", "x", "bob"),
            None
        );
        assert_eq!(percent_encode("p@ss/w:rd"), "p%40ss%2Fw%3Ard");
    }

    #[test]
    fn passwords_never_survive_redaction() {
        assert_eq!(
            redact_url("postgres://bob:s3cret@db:5432/tpcc"),
            "postgres://bob:***@db:5432/tpcc"
        );
        assert_eq!(
            redact_url("mysql://root:p@ss@127.0.0.1:3306/x?socket=/tmp/s"),
            "mysql://root:***@127.0.0.1:3306/x?socket=/tmp/s"
        );
        assert_eq!(
            redact_url("postgres://bob@/x?host=/tmp&password=hunter2"),
            "postgres://bob@/x?host=/tmp&password=***"
        );
        assert_eq!(redact_url("postgres://bob@h/x"), "postgres://bob@h/x");
    }

    #[test]
    fn a_host_list_becomes_one_url_per_host() {
        assert_eq!(
            split_hosts("postgres://bob:pw@h1:5432,h2:5433/tpcc?sslmode=disable").unwrap(),
            [
                "postgres://bob:pw@h1:5432/tpcc?sslmode=disable",
                "postgres://bob:pw@h2:5433/tpcc?sslmode=disable"
            ]
        );
        assert_eq!(
            split_hosts("mysql://root@10.0.0.1,10.0.0.2:3307,[::1]:3306/x").unwrap(),
            [
                "mysql://root@10.0.0.1/x",
                "mysql://root@10.0.0.2:3307/x",
                "mysql://root@[::1]:3306/x"
            ]
        );
        // One host, a socket in the query, SQLite: unchanged.
        for one in [
            "postgres://oltplab@/oltplab?host=/tmp/s&port=5",
            "mysql://root@127.0.0.1:3306/x?socket=/tmp/a,b",
            "sqlite:/tmp/x,y.sqlite",
        ] {
            assert_eq!(split_hosts(one).unwrap(), [one]);
        }
    }

    #[test]
    fn a_bad_host_list_is_one_sentence_naming_the_bad_part() {
        for (url, names) in [
            ("postgres://u:secret@h1:5432,,h2/x", "empty entry"),
            ("postgres://u:secret@h1:5432,:5433/x", "':5433'"),
            ("mysql://u:secret@h1:3306,h2:33o6/x", "'33o6'"),
            ("mysql://u:secret@h1,h2:0/x", "'0'"),
            ("mysql://u:secret@h1,h2:70000/x", "'70000'"),
            ("mysql://u:secret@h1,[::1:3306/x", "'[::1:3306'"),
            ("mysql://u:secret@h1,[::1]3306/x", "'[::1]3306'"),
            ("postgres://u:secret@/x?host=/a,/b", "host=/a,/b"),
        ] {
            let err = split_hosts(url).unwrap_err();
            let text = err.to_string();
            assert_eq!(err.exit_code(), 2, "{text}");
            assert!(text.contains(names), "{url}: {text}");
            assert!(!text.contains("secret"), "{text}");
            assert_eq!(text.lines().count(), 1, "{text}");
        }
    }

    #[test]
    fn url_kinds() {
        assert_eq!(
            kind_of_url("postgresql://x/y").unwrap(),
            ServerKind::Postgres
        );
        assert_eq!(kind_of_url("mysql://x/y").unwrap(), ServerKind::Mariadb);
        let err = kind_of_url("oracle://u:pw@x/y").unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(!err.to_string().contains("pw"), "{err}");
    }

    #[test]
    fn an_unreachable_server_is_a_usage_error_without_the_password() {
        // Port 1 on loopback: nothing listens there.
        for url in [
            "postgres://u:topsecret@127.0.0.1:1/db",
            "mysql://u:topsecret@127.0.0.1:1/db",
        ] {
            let err = connect_check(url).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{err}");
            let text = err.to_string();
            assert!(text.contains("cannot reach"), "{text}");
            assert!(!text.contains("topsecret"), "{text}");
        }
    }

    #[test]
    fn connection_budget() {
        let info = ServerInfo {
            kind: ServerKind::Postgres,
            version: String::new(),
            max_connections: 100,
            connections_in_use: 1,
            reserved_connections: 3,
        };
        assert_eq!(info.connections_available(), 97);
        assert!(info.check_connections(97).is_ok());
        let err = info.check_connections(98).unwrap_err();
        assert!(err.to_string().contains("--terminals"), "{err}");
    }
}
