//! Managed servers for real: PostgreSQL and MariaDB started from the installed programs in a
//! temporary directory, queried, and stopped. Where a server is not installed the test says so and
//! passes (scripts/test.sh installs both on CI).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use oltplab_dbs::server::{
    self, connect_check, process, DataInit, ManagedServer, ServerConfig, ServerKind,
};

fn scratch(name: &str) -> PathBuf {
    // Under /tmp, not a possibly private TMPDIR: as root the server runs as postgres/mysql, which
    // must be able to enter every parent directory.
    let dir = PathBuf::from(format!("/tmp/oltplab-srv-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A managed server takes no TCP connections: with no password (MariaDB's root) or `trust`
/// (PostgreSQL) any user of the machine could log in as superuser. Its socket directory is the
/// server account's alone (0700).
fn assert_no_tcp(port: u16) {
    let refused = std::net::TcpStream::connect(("127.0.0.1", port)).is_err();
    assert!(refused, "the managed server listens on 127.0.0.1:{port}");
}

/// Another user of the machine cannot connect either: the engine's own client, run as `nobody`,
/// is refused at the socket directory. (Needs root to run a second user; elsewhere it says so.)
fn assert_second_user_refused(server: &ManagedServer) {
    if !process::running_as_root() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Root,
            "needs root to run a client as a second user",
        );
        return;
    }
    let nobody = process::Account::lookup("nobody").expect("the nobody account exists");
    let sock = server.socket_dir().to_str().unwrap().to_string();
    let mut client = match server.kind() {
        ServerKind::Postgres => {
            let mut c = std::process::Command::new("psql");
            c.arg(format!(
                "host={sock} port={} user=oltplab dbname=oltplab connect_timeout=5",
                server.port()
            ))
            .args(["-c", "select 1"]);
            c
        }
        ServerKind::Mariadb => {
            let mut c = std::process::Command::new("mariadb");
            c.arg(format!("--socket={sock}/mysqld.sock"))
                .args(["-u", "root", "-e", "select 1"]);
            c
        }
    };
    use std::os::unix::process::CommandExt;
    let out = client
        .uid(nobody.uid)
        .gid(nobody.gid)
        .env("HOME", "/")
        .current_dir("/")
        .output()
        .expect("the engine's client is installed with the server");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "nobody connected: {err}");
    // psql names the error; the MariaDB client gives its number (EACCES).
    assert!(
        err.contains("Permission denied") || err.contains("socket") && err.contains("(13)"),
        "{err}"
    );
}

fn installed(kind: ServerKind) -> bool {
    let found = match kind {
        ServerKind::Postgres => server::find_program(&["initdb"], None).is_some(),
        ServerKind::Mariadb => server::find_program(&["mariadbd", "mysqld"], None).is_some(),
    };
    if !found {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            &format!("{} is not installed", kind.product()),
        );
    }
    found
}

fn alive(pid: u32) -> bool {
    process::alive(pid)
}

#[test]
fn postgres_starts_answers_and_stops() {
    if !installed(ServerKind::Postgres) {
        return;
    }
    let dir = scratch("pg");
    let mut cfg = ServerConfig::new(ServerKind::Postgres, &dir);
    cfg.buffer_pool_bytes = 48 << 20;
    cfg.max_connections = 20;
    cfg.wal_dir = Some(dir.join("wal"));
    let t0 = Instant::now();
    let server = ManagedServer::start(&cfg).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());

    let url = server.url();
    assert!(
        url.starts_with("postgres://oltplab@/oltplab?host=/tmp/"),
        "{url}"
    );
    assert_no_tcp(server.port());
    assert_second_user_refused(&server);
    assert!(
        server.version().starts_with("PostgreSQL "),
        "{}",
        server.version()
    );
    let settings = server.settings();
    assert_eq!(settings["shared_buffers"], "48MB");
    assert_eq!(settings["max_connections"], "20");
    assert_eq!(
        Path::new(&settings["wal_dir"]),
        dir.join("wal").join("postgres-wal")
    );
    assert!(settings["direct_io"].starts_with("off"), "{settings:?}");

    // A client can use the URL as given, over the socket and over TCP.
    let mut client = server::connect::pg_connect(&url).unwrap();
    client
        .batch_execute("CREATE TABLE t (k int primary key); INSERT INTO t VALUES (1), (2)")
        .unwrap();
    let n: i64 = client
        .query_one("SELECT count(*) FROM t", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
    let info = connect_check(&server.url()).unwrap();
    assert_eq!(info.max_connections, 20);
    assert!(info.check_connections(50).is_err());

    // The postmaster and its auxiliary processes (checkpointer, WAL writer …) and our backend.
    let pids = server.pids();
    assert!(pids.len() >= 4, "{pids:?}");
    assert_eq!(pids[0], server.pid());
    drop(client);

    let main_pid = server.pid();
    server.stop().unwrap();
    assert!(!alive(main_pid), "the postmaster still runs");
    assert!(pids.iter().all(|p| !alive(*p)), "a server process survived");
    assert!(connect_check(&url).is_err());

    // The data survives a stop and a Reuse start.
    cfg.init = DataInit::Reuse;
    let server = ManagedServer::start(&cfg).unwrap();
    let mut client = server::connect::pg_connect(&server.url()).unwrap();
    let n: i64 = client
        .query_one("SELECT count(*) FROM t", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
    drop(client);
    drop(server); // Drop stops it as well

    // A Fresh start replaces the cluster oltplab made.
    cfg.init = DataInit::Fresh;
    let server = ManagedServer::start(&cfg).unwrap();
    let mut client = server::connect::pg_connect(&server.url()).unwrap();
    let gone = client
        .query_opt("SELECT 1 FROM pg_tables WHERE tablename = 't'", &[])
        .unwrap();
    assert!(gone.is_none());
    drop(client);
    server.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mariadb_starts_answers_and_stops() {
    if !installed(ServerKind::Mariadb) {
        return;
    }
    let dir = scratch("maria");
    let mut cfg = ServerConfig::new(ServerKind::Mariadb, &dir);
    cfg.buffer_pool_bytes = 64 << 20;
    cfg.direct_io = true;
    cfg.max_connections = 30;
    cfg.wal_dir = Some(dir.join("redo"));
    let t0 = Instant::now();
    let server = ManagedServer::start(&cfg).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert_no_tcp(server.port());
    assert_second_user_refused(&server);
    assert!(
        server.version().starts_with("MariaDB "),
        "{}",
        server.version()
    );
    let settings = server.settings();
    assert_eq!(
        settings["innodb_buffer_pool_size"],
        (64u64 << 20).to_string()
    );
    assert_eq!(settings["innodb_flush_method"], "O_DIRECT");
    assert_eq!(settings["innodb_use_native_aio"], "ON");
    assert_eq!(settings["max_connections"], "30");
    assert_eq!(settings["direct_io"], "on");
    assert!(dir.join("redo/mariadb-wal/ib_logfile0").is_file());

    let mut conn = server::connect::mysql_connect(&server.url()).unwrap();
    conn.query_drop("CREATE TABLE t (k INT PRIMARY KEY) ENGINE=InnoDB")
        .unwrap();
    conn.query_drop("INSERT INTO t VALUES (1),(2),(3)").unwrap();
    let n: Option<u64> = conn.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(3));
    let info = connect_check(&server.url()).unwrap();
    assert_eq!(info.max_connections, 30);
    drop(conn);
    let pid = server.pid();
    server.stop().unwrap();
    assert!(!alive(pid));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_server_outlives_neither_a_killed_oltplab_nor_a_panic() {
    if !installed(ServerKind::Postgres) {
        return;
    }
    let dir = scratch("panic");
    let cfg = ServerConfig::new(ServerKind::Postgres, &dir);
    let cfg2 = cfg.clone();
    // A panic unwinds through the server's Drop.
    let pid = std::thread::spawn(move || {
        let server = ManagedServer::start(&cfg2).unwrap();
        let pid = server.pid();
        std::panic::panic_any(pid);
    })
    .join()
    .unwrap_err();
    let pid = *pid.downcast::<u32>().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the server outlived a panic");

    // A server left behind by a killed oltplab (simulated by starting one outside oltplab's
    // control) is stopped through its pid file before the directory is reused.
    let server = ManagedServer::start(&cfg).unwrap();
    let pid = server.pid();
    let socket_dir = server.socket_dir().to_path_buf();
    std::mem::forget(server); // as if oltplab had been killed with SIGKILL before Drop
    assert!(alive(pid));
    let mut reuse = cfg.clone();
    reuse.init = DataInit::Reuse;
    let server = ManagedServer::start(&reuse).unwrap();
    assert!(!alive(pid), "the stale server still runs");
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(socket_dir);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_foreign_non_empty_directory_is_refused_and_untouched() {
    let dir = scratch("foreign");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("precious.txt"), "keep").unwrap();
    for kind in [ServerKind::Postgres, ServerKind::Mariadb] {
        let cfg = ServerConfig::new(kind, &dir);
        let err = match ManagedServer::start(&cfg) {
            Err(e) => e,
            Ok(_) => panic!("started in a foreign directory"),
        };
        // Without the programs the missing-package message comes first; both are usage errors.
        assert_eq!(err.exit_code(), 2, "{err}");
        if installed(kind) {
            assert!(err.to_string().contains("--force"), "{err}");
        }
    }
    // A cluster-named directory oltplab did not make is refused even with --force.
    std::fs::create_dir_all(dir.join("postgres")).unwrap();
    std::fs::write(dir.join("postgres/PG_VERSION"), "15").unwrap();
    let mut cfg = ServerConfig::new(ServerKind::Postgres, &dir);
    cfg.force = true;
    if installed(ServerKind::Postgres) {
        let err = ManagedServer::start(&cfg).err().expect("refused");
        assert!(err.to_string().contains("did not create"), "{err}");
    }
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(names.contains(&"precious.txt".to_string()));
    assert_eq!(
        std::fs::read_to_string(dir.join("precious.txt")).unwrap(),
        "keep"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("postgres/PG_VERSION")).unwrap(),
        "15"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn reuse_without_a_loaded_database_says_to_load_first() {
    let dir = scratch("noload");
    let mut cfg = ServerConfig::new(ServerKind::Postgres, &dir);
    cfg.init = DataInit::Reuse;
    if !installed(ServerKind::Postgres) {
        return;
    }
    let err = ManagedServer::start(&cfg).err().expect("refused");
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("oltplab load tpcc"), "{err}");
    assert!(!dir.exists(), "nothing is created for a refused start");
}

#[test]
fn missing_programs_name_the_debian_package() {
    let dir = scratch("nobin");
    let empty = scratch("nobin-bin");
    std::fs::create_dir_all(&empty).unwrap();
    for (kind, package) in [
        (ServerKind::Postgres, "apt-get install postgresql"),
        (ServerKind::Mariadb, "apt-get install mariadb-server"),
    ] {
        let mut cfg = ServerConfig::new(kind, &dir);
        cfg.bin_dir = Some(empty.clone());
        let err = ManagedServer::start(&cfg).err().expect("refused");
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains(package), "{err}");
    }
    assert!(
        !dir.exists(),
        "a failed start leaves no data directory behind"
    );
    std::fs::remove_dir_all(&empty).unwrap();
}

#[test]
fn a_server_that_cannot_start_reports_its_log() {
    if !installed(ServerKind::Postgres) {
        return;
    }
    let dir = scratch("badsetting");
    let mut cfg = ServerConfig::new(ServerKind::Postgres, &dir);
    cfg.extra_settings
        .push(("no_such_setting_xyz".into(), "1".into()));
    let err = ManagedServer::start(&cfg).err().expect("refused");
    let text = err.to_string();
    assert!(text.contains("no_such_setting_xyz"), "{text}");
    assert!(text.contains("postgres.log"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The child half of `a_server_stops_when_oltplab_is_killed`: starts a server, prints its pid and
/// waits to be killed. Ignored, so that the suite does not count it as a passing test: the parent
/// runs it with `--ignored`.
#[test]
#[ignore = "the child half of a_server_stops_when_oltplab_is_killed, which runs it"]
fn killed_child_helper() {
    let dir = std::env::var("OLTPLAB_TEST_KILLED_CHILD").expect(
        "run by a_server_stops_when_oltplab_is_killed, which sets OLTPLAB_TEST_KILLED_CHILD",
    );
    let server = ManagedServer::start(&ServerConfig::new(ServerKind::Postgres, dir)).unwrap();
    println!(
        "server-pid={} socket={}",
        server.pid(),
        server.socket_dir().display()
    );
    use std::io::Write;
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_server_stops_when_oltplab_is_killed() {
    if !installed(ServerKind::Postgres) {
        return;
    }
    use std::io::BufRead;
    let dir = scratch("killed");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "killed_child_helper",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("OLTPLAB_TEST_KILLED_CHILD", &dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let (pid, socket) = loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the helper ended early"
        );
        // libtest prints "test killed_child_helper ... " on the same line first.
        if let Some(at) = line.find("server-pid=") {
            let rest = line[at + "server-pid=".len()..].trim();
            let (pid, socket) = rest.split_once(" socket=").unwrap();
            break (pid.parse::<u32>().unwrap(), PathBuf::from(socket));
        }
    };
    assert!(alive(pid));
    child.kill().unwrap(); // SIGKILL: no destructor runs
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the server outlived a killed oltplab");
    let _ = std::fs::remove_dir_all(socket);
    std::fs::remove_dir_all(&dir).unwrap();
}
