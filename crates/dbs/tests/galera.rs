//! A managed Galera cluster for real: a load's node 1 alone, its data copied to node 2 when it
//! stops, both nodes started and joined, replication across them, strangers refused at the group
//! port (no TLS, or a certificate of another authority), and nothing left behind when it stops.
//! Where MariaDB or Galera is not installed the test says so (scripts/test.sh installs both).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use oltplab_dbs::server::galera::{self, ClusterConfig, ManagedCluster};
use oltplab_dbs::server::{self, process, DataInit, ServerConfig, ServerKind};

fn scratch(name: &str) -> PathBuf {
    // Under /tmp: as root the nodes run as mysql, which must enter every parent directory.
    let dir = PathBuf::from(format!("/tmp/oltplab-galera-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Whether the cluster can run here; if not, the test reports itself skipped (scripts/test.sh
/// installs MariaDB, Galera and openssl).
fn installed() -> bool {
    let missing = oltplab_dbs::server::galera::missing();
    if let Some(why) = &missing {
        oltplab_core::testing::skip(oltplab_core::testing::Need::Server, why);
    }
    missing.is_none()
}

fn status(url: &str, name: &str) -> String {
    let mut c = server::connect::mysql_connect(url).unwrap();
    let row: Option<(String, String)> = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap();
    row.unwrap().1
}

/// Waits until the node's log says `what`, up to 10 s.
fn log_says(log: &std::path::Path, what: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if std::fs::read_to_string(log).is_ok_and(|t| t.contains(what)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// An openssl TLS client at `port`, with `cert` or none; what the server did with it is in its log.
fn tls_stranger(port: u16, cert: Option<(&PathBuf, &PathBuf)>) {
    let mut cmd = Command::new("openssl");
    cmd.args(["s_client", "-connect", &format!("127.0.0.1:{port}")]);
    if let Some((c, k)) = cert {
        cmd.arg("-cert").arg(c).arg("-key").arg(k);
    }
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    drop(child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_cluster_joins_refuses_strangers_and_leaves_nothing() {
    if !installed() {
        return;
    }
    let dir = scratch("life");
    let mut node = ServerConfig::new(ServerKind::Mariadb, &dir);
    node.buffer_pool_bytes = 32 << 20;
    node.max_connections = 20;

    // A load: node 1 alone; stopping it copies its data to node 2.
    let cluster = ManagedCluster::start(&ClusterConfig {
        server: node.clone(),
        nodes: Some(2),
        node_env: Vec::new(),
    })
    .unwrap();
    assert_eq!(cluster.nodes().len(), 1);
    let mut c = server::connect::mysql_connect(&cluster.nodes()[0].url()).unwrap();
    c.query_drop("CREATE TABLE t (k INT PRIMARY KEY, v INT) ENGINE=InnoDB")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 10), (2, 20)")
        .unwrap();
    drop(c);
    cluster.stop().unwrap();
    assert_eq!(galera::loaded_nodes(&dir), Some(2));
    assert!(galera::node_cluster_dir(&dir, 2).join("oltplab").is_dir());

    // Both nodes: node 2 joins from its copy and replication runs both ways.
    node.init = DataInit::Reuse;
    let t0 = Instant::now();
    let cluster = ManagedCluster::start(&ClusterConfig {
        server: node.clone(),
        nodes: None,
        node_env: Vec::new(),
    })
    .unwrap();
    eprintln!(
        "2-node cluster started in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let urls: Vec<String> = cluster.nodes().iter().map(|n| n.url()).collect();
    assert_eq!(status(&urls[0], "wsrep_cluster_size"), "2");
    let mut c2 = server::connect::mysql_connect(&urls[1]).unwrap();
    c2.query_drop("INSERT INTO t VALUES (3, 30)").unwrap();
    let mut c1 = server::connect::mysql_connect(&urls[0]).unwrap();
    c1.query_drop("SET SESSION wsrep_sync_wait = 1").unwrap();
    let n: Option<u64> = c1.query_first("SELECT SUM(v) FROM t").unwrap();
    assert_eq!(n, Some(60), "node 2's row reached node 1");

    // TLS material: this cluster's CA without its key, every file the server account's alone.
    let tls = dir.join("galera/tls");
    assert!(!tls.join("ca-key.pem").exists(), "the CA's key is gone");
    for e in std::fs::read_dir(&tls).unwrap() {
        use std::os::unix::fs::PermissionsExt;
        let m = e.unwrap().metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(m, 0o600);
    }

    // Strangers at node 1's group port: plain TCP, TLS without a certificate, TLS with a
    // certificate of another authority. Each is turned away and the group stays two.
    let port = cluster.group_ports()[0];
    let log = cluster.nodes()[0].log_path().to_path_buf();
    let mut plain = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let _ = plain.write_all(b"\x00\x00\x00\x10hello, galera!\n");
    let mut buf = [0u8; 64];
    // Galera sends it nothing: its bytes are no TLS hello.
    assert!(
        matches!(plain.read(&mut buf), Ok(0) | Err(_)),
        "a plain TCP client got an answer"
    );
    drop(plain);
    assert!(
        log_says(&log, "wrong version number"),
        "a plain TCP client was not refused at the TLS handshake; see {}",
        log.display()
    );
    tls_stranger(port, None);
    assert!(
        log_says(&log, "peer did not return a certificate"),
        "a TLS client without a certificate was not refused for it; see {}",
        log.display()
    );
    let foreign = dir.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    let (cert, key) = (foreign.join("c.pem"), foreign.join("k.pem"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-nodes", "-newkey", "ec", "-pkeyopt"])
        .args([
            "ec_paramgen_curve:prime256v1",
            "-days",
            "1",
            "-subj",
            "/CN=stranger",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success());
    tls_stranger(port, Some((&cert, &key)));
    assert!(
        log_says(&log, "certificate verify failed"),
        "a certificate of another authority was not refused; see {}",
        log.display()
    );
    assert_eq!(status(&urls[0], "wsrep_cluster_size"), "2");
    // Clients: the Unix socket only.
    for n in cluster.nodes() {
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", n.port())).is_err(),
            "a node takes SQL over TCP"
        );
    }

    // Stopped: no process, socket or port is left.
    drop((c1, c2));
    let pids = cluster.pids();
    let sockets: Vec<PathBuf> = cluster
        .nodes()
        .iter()
        .map(|n| n.socket_dir().to_path_buf())
        .collect();
    let ports = cluster.group_ports().to_vec();
    cluster.stop().unwrap();
    for pid in pids {
        assert!(!process::alive(pid), "process {pid} outlived the cluster");
    }
    for s in sockets {
        assert!(!s.exists(), "{} is left", s.display());
    }
    for p in ports {
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", p)).is_err(),
            "port {p} still listens"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.join("galera/sst")).unwrap().count(),
        0,
        "a hand-over file is left"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
