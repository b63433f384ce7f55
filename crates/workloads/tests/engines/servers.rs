//! What the server tests share: whether the engine is installed (said as a skip when not), and a
//! connector at the driver's default level for each engine.

use oltplab_dbs::server::ServerKind;
use oltplab_workloads::sql::{Connector, Isolation};
use oltplab_workloads::tpcc::connect::{MyConnector, PgConnector};

/// Whether `kind`'s server programs are installed; if not, the test is reported skipped (and
/// fails under CI, which installs both).
pub fn installed(kind: ServerKind) -> bool {
    let programs: &[&str] = match kind {
        ServerKind::Postgres => &["initdb"],
        ServerKind::Mariadb => &["mariadbd", "mysqld"],
    };
    if oltplab_dbs::server::find_program(programs, None).is_none() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            &format!("{} is not installed", kind.product()),
        );
        return false;
    }
    true
}

/// A connector to `url` at `isolation`.
pub fn connector(kind: ServerKind, url: String, isolation: Isolation) -> Box<dyn Connector> {
    match kind {
        ServerKind::Postgres => Box::new(PgConnector { url, isolation }),
        ServerKind::Mariadb => Box::new(MyConnector { url, isolation }),
    }
}

/// The engine's default level: PostgreSQL read committed, MariaDB repeatable read.
pub fn default_isolation(kind: ServerKind) -> Isolation {
    match kind {
        ServerKind::Postgres => Isolation::ReadCommitted,
        ServerKind::Mariadb => Isolation::RepeatableRead,
    }
}
