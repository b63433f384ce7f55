//! One connection to either server, and the errors it reports in the user's terms.

use std::time::Duration;

use mysql_async::prelude::Queryable;
use oltplab_core::{Error, Result};
use oltplab_dbs::server::connect::pg_error;
use oltplab_dbs::server::redact_url;

use super::{Dialect, ServerTarget};

/// One connection, either engine.
pub(super) enum Client {
    Pg(tokio_postgres::Client),
    My(mysql_async::Conn),
}

fn my_error(url: &str, e: &mysql_async::Error) -> Error {
    let shown = redact_url(url);
    match e {
        mysql_async::Error::Server(s) => match s.code {
            1040 | 1203 => Error::usage(format!(
                "the MySQL server at {shown} has no free connections ({}): lower --connections, or raise its max_connections",
                s.message
            )),
            1045 | 1698 => Error::usage(format!(
                "the MySQL server at {shown} refused the credentials ({}): check the user name and password in --url",
                s.message
            )),
            1049 => Error::usage(format!(
                "the MySQL server at {shown} has no such database ({}): create it or name an existing one in --url",
                s.message
            )),
            _ => Error::failed(format!("MySQL at {shown}: {} (error {})", s.message, s.code)),
        },
        mysql_async::Error::Url(u) => Error::usage(format!(
            "'{shown}' is not a valid MySQL URL ({u}): write mysql://USER@HOST:PORT/DB"
        )),
        mysql_async::Error::Io(_) | mysql_async::Error::Driver(_) => Error::usage(format!(
            "cannot reach the MySQL server at {shown} ({e}): check that it runs and that host and port in --url are right"
        )),
        other => Error::failed(format!("MySQL at {shown}: {other}")),
    }
}

impl Client {
    pub(super) async fn connect(target: &ServerTarget) -> Result<Client> {
        let url = &target.url;
        match target.dialect {
            Dialect::Postgres => {
                let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
                    Error::usage(format!(
                        "'{}' is not a valid PostgreSQL URL ({e}): write postgres://USER@HOST:PORT/DB",
                        redact_url(url)
                    ))
                })?;
                if config.get_connect_timeout().is_none() {
                    config.connect_timeout(Duration::from_secs(30));
                }
                let (client, connection) = config
                    .connect(tokio_postgres::NoTls)
                    .await
                    .map_err(|e| pg_error(url, &e))?;
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                Ok(Client::Pg(client))
            }
            _ => {
                let opts = mysql_async::Opts::from_url(url).map_err(|e| {
                    Error::usage(format!(
                        "'{}' is not a valid MySQL URL ({e}): write mysql://USER@HOST:PORT/DB",
                        redact_url(url)
                    ))
                })?;
                let opts = mysql_async::OptsBuilder::from_opts(opts)
                    .stmt_cache_size(Some(32))
                    .prefer_socket(true);
                let conn = mysql_async::Conn::new(opts)
                    .await
                    .map_err(|e| my_error(url, &e))?;
                Ok(Client::My(conn))
            }
        }
    }

    pub(super) async fn batch(&mut self, sql: &str) -> std::result::Result<(), String> {
        match self {
            Client::Pg(c) => c.batch_execute(sql).await.map_err(|e| pg_text(&e)),
            Client::My(c) => c.query_drop(sql).await.map_err(|e| e.to_string()),
        }
    }

    /// Rows of a query whose columns are all text (cast them in SQL).
    pub(super) async fn text_rows(
        &mut self,
        sql: &str,
    ) -> std::result::Result<Vec<Vec<String>>, String> {
        match self {
            Client::Pg(c) => {
                let rows = c.simple_query(sql).await.map_err(|e| pg_text(&e))?;
                Ok(rows
                    .into_iter()
                    .filter_map(|m| match m {
                        tokio_postgres::SimpleQueryMessage::Row(r) => Some(
                            (0..r.len())
                                .map(|i| r.get(i).unwrap_or("").to_string())
                                .collect(),
                        ),
                        _ => None,
                    })
                    .collect())
            }
            Client::My(c) => {
                let rows: Vec<mysql_async::Row> = c.query(sql).await.map_err(|e| e.to_string())?;
                Ok(rows
                    .into_iter()
                    .map(|r| {
                        r.unwrap()
                            .into_iter()
                            .map(|v| match v {
                                mysql_async::Value::Bytes(b) => {
                                    String::from_utf8_lossy(&b).into_owned()
                                }
                                mysql_async::Value::NULL => String::new(),
                                other => other.as_sql(true).trim_matches('\'').to_string(),
                            })
                            .collect()
                    })
                    .collect())
            }
        }
    }

    pub(super) async fn count(&mut self, sql: &str) -> std::result::Result<u64, String> {
        let rows = self.text_rows(sql).await?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    }
}

/// The innermost message of a PostgreSQL error (the server's text, not "db error").
pub(super) fn pg_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    }
}

pub(super) fn db_failed(target: &ServerTarget, context: &str, detail: String) -> Error {
    Error::failed(format!(
        "{context} on {}: {detail}",
        redact_url(&target.url)
    ))
}
