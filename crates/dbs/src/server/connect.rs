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

/// The URL with any password replaced by `***`, safe to print and to store in results.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_query(url);
    };
    // userinfo ends at the last '@' before the path.
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    format!("{scheme}://{authority}{}", redact_query(tail))
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
