//! Managed MariaDB Galera clusters: N `mariadbd` on this machine, each a [`ManagedServer`] with its
//! own data directory and private Unix socket, joined into one synchronous multi-primary group on
//! loopback ports picked free.
//!
//! ```text
//! DATA_DIR/                  marked .oltplab
//!   galera.oltplab           the cluster's marker: created by oltplab, how many nodes
//!   galera/                  marked .oltplab
//!     tls/                   0700: ca.pem, nodeK.pem, nodeK-key.pem (0600), made anew at every start
//!     bin/wsrep_sst_oltplab  the state hand-over between nodes of this machine (see below)
//!     sst/                   0700: where that hand-over leaves a joiner's position
//!     node1/ … nodeN/        each a managed server's data directory (mariadb/, its marker, its log)
//! ```
//!
//! Security: the group's traffic (replication, incremental state transfer) is TLS with a
//! certificate authority made for this start of this cluster alone; its key is deleted once the
//! node certificates are signed, so no other certificate can be made for the group, and a peer
//! without one is refused. Clients reach a node only by its Unix socket (no TCP, as every managed
//! MariaDB). A full state transfer (SST) would need a further listener (rsync, socat, mariabackup
//! without TLS here): instead every node starts from a copy of the same data — a load fills node 1
//! and copies its stopped data directory to the others — so a joiner only ever needs the
//! position, which `wsrep_sst_oltplab` hands over through a private directory, and the few
//! writesets it lacks, which come by the TLS channel (IST). A full transfer is refused; oltplab
//! copies node 1's data to a node before the start instead when that node's state cannot be used.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use oltplab_core::{interrupt, safety, Error, Result};

use super::process::{self, Account};
use super::{mariadb, server_account, DataInit, ManagedServer, ServerConfig, ServerKind};

/// The directory of the cluster in the data directory, and the name of its marker.
pub const DIR: &str = "galera";
/// The most nodes a managed cluster may have: all of them share this machine.
pub const MAX_NODES: u32 = 9;
/// The SST method oltplab installs (`wsrep_sst_<method>` on the server's PATH).
const SST_METHOD: &str = "oltplab";

/// How a managed cluster is started.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// Every node's settings; `data_dir` is the user's data directory (the cluster lives in its
    /// `galera/`), `init` says whether this is a load (node 1 alone, fresh) or a start of all nodes.
    pub server: ServerConfig,
    /// How many nodes; with [`DataInit::Reuse`] `None` means as many as were loaded.
    pub nodes: Option<u32>,
    /// Each node's own environment on top of `server.extra_env`, node 1 first (the emulation
    /// shim of its own device); empty: none.
    pub node_env: Vec<Vec<(String, String)>>,
}

/// Where the galera provider library is (Debian's galera-4 package).
pub fn provider() -> Result<PathBuf> {
    const PLACES: &[&str] = &[
        "/usr/lib/galera/libgalera_smm.so",
        "/usr/lib/galera-4/libgalera_smm.so",
        "/usr/lib/libgalera_smm.so",
        "/usr/lib64/galera-4/libgalera_smm.so",
        "/usr/lib64/galera/libgalera_smm.so",
    ];
    PLACES
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Error::usage(
                "the Galera replication library (libgalera_smm.so) is not installed: install Debian's galera-4 package (apt-get install galera-4)",
            )
        })
}

/// What a managed cluster needs that this machine lacks, as one sentence with its fix; None when
/// MariaDB, the Galera library and openssl are all there. The cluster's own start and every
/// Galera test ask this one place.
pub fn missing() -> Option<String> {
    if super::find_program(&["mariadbd", "mysqld"], None).is_none() {
        return Some(
            "MariaDB (mariadbd) is not installed: install Debian's mariadb-server package (apt-get install mariadb-server)"
                .into(),
        );
    }
    if let Err(e) = provider() {
        return Some(e.to_string());
    }
    if super::find_program(&["openssl"], None).is_none() {
        return Some(
            "the openssl program is not installed, and oltplab makes the cluster's TLS certificates with it: install Debian's openssl package"
                .into(),
        );
    }
    None
}

/// How many nodes the cluster in `data_dir` was loaded with, if oltplab made one there.
pub fn loaded_nodes(data_dir: &Path) -> Option<u32> {
    let text = fs::read_to_string(data_dir.join(format!("{DIR}.oltplab"))).ok()?;
    let mut ours = false;
    let mut nodes = None;
    for line in text.lines() {
        match line.split_once('=') {
            Some(("created-by", "oltplab")) => ours = true,
            Some(("nodes", n)) => nodes = n.parse().ok(),
            _ => {}
        }
    }
    nodes.filter(|_| ours)
}

fn node_dir(root: &Path, k: u32) -> PathBuf {
    root.join(format!("node{k}"))
}

/// The cluster directory (`mariadb/`) of node `k` (1-based).
pub fn node_cluster_dir(data_dir: &Path, k: u32) -> PathBuf {
    node_dir(&data_dir.join(DIR), k).join(ServerKind::Mariadb.name())
}

/// A running cluster oltplab started. Dropping it stops every node.
pub struct ManagedCluster {
    /// Node 1 first.
    nodes: Vec<ManagedServer>,
    root: PathBuf,
    /// The group's loopback port of each node (TLS).
    group_ports: Vec<u16>,
    /// A load runs node 1 alone; stopping it then copies its data to nodes 2 … N.
    seed: Option<(ServerConfig, u32)>,
    account: Option<Account>,
    /// Node 1 had died and starts as a copy of this node (see `reseed_unusable`).
    node1_from: Option<u32>,
}

/// Loopback ports of one node: the group's and the incremental state transfer's.
#[derive(Clone, Copy)]
struct Ports {
    group: u16,
    ist: u16,
}

impl ManagedCluster {
    /// A load: a fresh node 1, bootstrapping a cluster of one; [`ManagedCluster::stop`] copies its
    /// data to the other nodes. Any other start: every node of the loaded cluster, node 1
    /// bootstrapping and the others joining one by one, each waited for until it is synced.
    pub fn start(cfg: &ClusterConfig) -> Result<ManagedCluster> {
        if let Some(what) = missing() {
            return Err(Error::usage(what));
        }
        let provider = provider()?;
        let data_dir = std::path::absolute(&cfg.server.data_dir)
            .map_err(|e| safety::io_usage(&cfg.server.data_dir, "resolve", &e))?;
        let root = data_dir.join(DIR);
        let account = server_account(ServerKind::Mariadb)?;
        let nodes = match cfg.server.init {
            DataInit::Fresh => {
                let n = cfg.nodes.unwrap_or(3);
                check_nodes(n)?;
                prepare_fresh(&cfg.server, &data_dir, &root, n, account.as_ref())?;
                n
            }
            DataInit::Reuse => {
                let Some(loaded) = loaded_nodes(&data_dir) else {
                    return Err(Error::usage(format!(
                        "{} holds no Galera cluster made by oltplab: load one first (oltplab load tpcc --engine galera --data-dir {})",
                        data_dir.display(),
                        data_dir.display()
                    )));
                };
                if let Some(n) = cfg.nodes.filter(|n| *n != loaded) {
                    return Err(Error::usage(format!(
                        "the cluster in {} was loaded with {loaded} nodes, not --nodes {n}: drop --nodes, or load it again with --nodes {n} --force",
                        data_dir.display()
                    )));
                }
                loaded
            }
        };
        let fresh = cfg.server.init == DataInit::Fresh;
        let running = if fresh { 1 } else { nodes };
        private_dirs(&root, account.as_ref())?;
        make_tls(&root.join("tls"), running, account.as_ref())?;
        let node1_from = if fresh {
            None
        } else {
            reseed_unusable(&cfg.server, &root, nodes, account.as_ref())?
        };
        let ports = pick_ports(running)?;
        let name = format!(
            "oltplab-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() % 1_000_000_000)
        );
        let mut cluster = ManagedCluster {
            nodes: Vec::new(),
            root: root.clone(),
            group_ports: ports.iter().map(|p| p.group).collect(),
            seed: fresh.then(|| (cfg.server.clone(), nodes)),
            account,
            node1_from,
        };
        let node_cfg = |k: u32| {
            let mut node = cfg.server.clone();
            node.data_dir = node_dir(&root, k);
            node.init = if fresh {
                DataInit::Fresh
            } else {
                DataInit::Reuse
            };
            node.force = true;
            // Node 1 bootstraps (no peers); a joiner knows every other node.
            let peers: Vec<String> = (1..=running)
                .filter(|&j| k > 1 && j != k)
                .map(|j| format!("127.0.0.1:{}", ports[j as usize - 1].group))
                .collect();
            let mut settings =
                node_settings(&root, &provider, &name, k, ports[k as usize - 1], &peers);
            settings.append(&mut node.extra_settings);
            node.extra_settings = settings;
            node.extra_env.push(("PATH".into(), server_path(&root)));
            if let Some(env) = cfg.node_env.get(k as usize - 1) {
                node.extra_env.extend(env.iter().cloned());
            }
            node
        };
        if !fresh {
            allow_bootstrap(&node_dir(&root, 1))?;
        }
        let first = node_cfg(1);
        cluster
            .nodes
            .push(start_synced(&first, 1).map_err(|e| node_error(1, e))?);
        // The joiners at once: most of a join is the group protocol's waiting, not work.
        let joined: Vec<Result<ManagedServer>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (2..=running)
                .map(|k| {
                    let node = node_cfg(k);
                    scope.spawn(move || start_synced(&node, k).map_err(|e| node_error(k, e)))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::failed("a node's start panicked")))
                })
                .collect()
        });
        let mut first_error = None;
        for r in joined {
            match r {
                Ok(server) => cluster.nodes.push(server),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            // Dropping the cluster stops the nodes that did start.
            return Err(e);
        }
        Ok(cluster)
    }

    /// When node 1 had not shut down cleanly (it died in the last run): the node it was copied
    /// from before this start, the most advanced one that stopped cleanly.
    pub fn node1_copied_from(&self) -> Option<u32> {
        self.node1_from
    }

    /// The running nodes, node 1 first.
    pub fn nodes(&self) -> &[ManagedServer] {
        &self.nodes
    }

    pub fn nodes_mut(&mut self) -> &mut [ManagedServer] {
        &mut self.nodes
    }

    /// Each running node's group port on the loopback interface (TLS only).
    pub fn group_ports(&self) -> &[u16] {
        &self.group_ports
    }

    /// The directory holding the cluster (`DATA_DIR/galera`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every process of every node, for CPU from /proc.
    pub fn pids(&self) -> Vec<u32> {
        self.nodes.iter().flat_map(|n| n.pids()).collect()
    }

    /// `Some(what happened)` if every node exited by itself: the cluster is gone. A cluster that
    /// lost some nodes goes on; [`ManagedCluster::dead_nodes`] names them.
    pub fn died(&mut self) -> Option<String> {
        let dead = self.dead_nodes();
        (!dead.is_empty() && dead.len() == self.nodes.len()).then(|| {
            dead.into_iter()
                .map(|(i, what)| format!("node {}: {what}", i + 1))
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// The nodes (0-based) that exited by themselves, with what their exit and log say.
    pub fn dead_nodes(&mut self) -> Vec<(usize, String)> {
        self.nodes
            .iter_mut()
            .enumerate()
            .filter_map(|(i, n)| n.died().map(|what| (i, what)))
            .collect()
    }

    /// Stops the nodes, the joiners first and node 1 last (so that node 1 holds the last state and
    /// bootstraps the next start), and after a load copies node 1's data to the other nodes.
    pub fn stop(mut self) -> Result<()> {
        let joiners: Vec<ManagedServer> = self.nodes.drain(1..).collect();
        let mut results: Vec<Result<()>> = std::thread::scope(|scope| {
            let handles: Vec<_> = joiners
                .into_iter()
                .map(|n| scope.spawn(move || n.stop()))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::failed("a node's stop panicked")))
                })
                .collect()
        });
        if let Some(first) = self.nodes.pop() {
            results.push(first.stop());
        }
        results.into_iter().collect::<Result<Vec<()>>>()?;
        if let Some((template, nodes)) = self.seed.take() {
            for k in 2..=nodes {
                copy_node(&template, &self.root, 1, k, self.account.as_ref())?;
            }
        }
        Ok(())
    }
}

impl Drop for ManagedCluster {
    fn drop(&mut self) {
        // The joiners first, as in stop(); each node's own Drop stops it.
        while let Some(node) = self.nodes.pop() {
            drop(node);
        }
    }
}

/// Starts a node and waits until it is synced with the group.
fn start_synced(cfg: &ServerConfig, k: u32) -> Result<ManagedServer> {
    let server = ManagedServer::start(cfg)?;
    let started = Instant::now();
    loop {
        let state = mariadb::wsrep_state(&server);
        if state.as_deref() == Some("Synced") {
            return Ok(server);
        }
        if interrupt::requested() {
            return Err(Error::Interrupted);
        }
        if started.elapsed() >= cfg.start_timeout {
            return Err(Error::failed(format!(
                "node {k} did not become synced with the cluster within {} s (its state: {}); see {}",
                cfg.start_timeout.as_secs(),
                state.unwrap_or_else(|| "unknown".into()),
                server.log_path().display()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn node_error(k: u32, e: Error) -> Error {
    match e {
        Error::Interrupted => Error::Interrupted,
        Error::Usage(m) => Error::Usage(format!("Galera node {k}: {m}")),
        Error::Failed(m) => Error::Failed(format!("Galera node {k}: {m}")),
    }
}

fn check_nodes(n: u32) -> Result<()> {
    if (1..=MAX_NODES).contains(&n) {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "--nodes {n} is outside 1 to {MAX_NODES}: every node runs on this machine; give fewer nodes"
        )))
    }
}

/// The data directory, the cluster's marker and directory for a load: an earlier cluster of
/// oltplab's here is stopped and replaced, anything else is refused.
fn prepare_fresh(
    cfg: &ServerConfig,
    data_dir: &Path,
    root: &Path,
    nodes: u32,
    _account: Option<&Account>,
) -> Result<()> {
    safety::ensure_own_dir(data_dir, cfg.force)?;
    let marker = data_dir.join(format!("{DIR}.oltplab"));
    if root.exists() || marker.exists() {
        if loaded_nodes(data_dir).is_none() {
            return Err(Error::usage(format!(
                "{} exists and oltplab did not create it: choose another --data-dir",
                root.display()
            )));
        }
        for k in 1..=MAX_NODES {
            let pid_file = node_dir(root, k)
                .join(ServerKind::Mariadb.name())
                .join(mariadb::PID_FILE);
            process::stop_stale(&pid_file, &["mariadbd", "mysqld"], libc::SIGTERM)?;
        }
        match fs::remove_dir_all(root) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(safety::io_usage(root, "remove the old cluster", &e)),
        }
    }
    fs::write(
        &marker,
        format!(
            "created-by=oltplab\nserver=galera\nnodes={nodes}\n# {} is a Galera cluster oltplab created; delete them together\n",
            root.display()
        ),
    )
    .map_err(|e| safety::io_usage(&marker, "write", &e))?;
    safety::ensure_own_dir(root, false)
}

/// `tls/`, `bin/` (with the SST script) and `sst/`, private to the server's account.
fn private_dirs(root: &Path, account: Option<&Account>) -> Result<()> {
    for name in ["tls", "bin", "sst"] {
        let dir = root.join(name);
        if !dir.is_dir() {
            fs::create_dir(&dir).map_err(|e| safety::io_usage(&dir, "create", &e))?;
        }
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| safety::io_usage(&dir, "set permissions of", &e))?;
    }
    let script = root.join("bin").join(format!("wsrep_sst_{SST_METHOD}"));
    fs::write(&script, SST_SCRIPT).map_err(|e| safety::io_usage(&script, "write", &e))?;
    fs::set_permissions(&script, fs::Permissions::from_mode(0o700))
        .map_err(|e| safety::io_usage(&script, "set permissions of", &e))?;
    if let Some(a) = account {
        for name in ["tls", "bin", "sst"] {
            let dir = root.join(name);
            process::chown_tree(&dir, a).map_err(|e| safety::io_usage(&dir, "hand over", &e))?;
        }
    }
    Ok(())
}

/// The server's PATH: the SST script first (mariadbd runs `wsrep_sst_<method>` from PATH).
fn server_path(root: &Path) -> String {
    let rest = std::env::var("PATH").unwrap_or_else(|_| "/usr/sbin:/usr/bin:/sbin:/bin".into());
    format!("{}:{rest}", root.join("bin").display())
}

/// The state hand-over between nodes of one machine that start from the same data. The joiner
/// says where it waits (a name made of its server's pid); the donor, asked for an incremental
/// transfer only (`--bypass`: the writesets follow by the TLS channel), writes its position into
/// the private directory under that name; the joiner reports it. A full transfer is refused.
const SST_SCRIPT: &str = r#"#!/bin/sh
# Written by oltplab: the state hand-over of a Galera cluster whose nodes share one machine and
# start from copies of the same data. Only a position changes hands, through a private directory.
dir="$(dirname "$0")/../sst"
role= addr= gtid= domain=0 bypass=0 parent=
while [ $# -gt 0 ]; do
  case "$1" in
    --role) role=$2; shift ;;
    --address) addr=$2; shift ;;
    --gtid) gtid=$2; shift ;;
    --gtid-domain-id) domain=$2; shift ;;
    --parent) parent=$2; shift ;;
    --bypass) bypass=1 ;;
    --mysqld-args) break ;;
  esac
  shift
done
case "$role" in
joiner)
  name="node-$parent"
  rm -f "$dir/$name"
  echo "ready $name"
  while [ ! -f "$dir/$name" ]; do
    kill -0 "$parent" 2>/dev/null || exit 32
    sleep 0.05
  done
  cat "$dir/$name"
  rm -f "$dir/$name"
  exit 0 ;;
donor)
  if [ "$bypass" != 1 ]; then
    echo "oltplab: a full state transfer was asked for; oltplab starts every node from a copy of the same data and does not transfer it" >&2
    exit 95
  fi
  case "$addr" in
    node-[0-9]*) ;;
    *) echo "oltplab: unexpected joiner address '$addr'" >&2; exit 22 ;;
  esac
  echo "$gtid $domain" > "$dir/$addr.tmp" && mv "$dir/$addr.tmp" "$dir/$addr" || exit 5
  echo continue
  echo "done $gtid $domain"
  exit 0 ;;
esac
echo "oltplab: unknown role '$role'" >&2
exit 22
"#;

/// A certificate authority and one certificate per node, made with the openssl program. The CA's
/// key is deleted once the nodes' certificates are signed: nothing else can join this group.
fn make_tls(dir: &Path, nodes: u32, account: Option<&Account>) -> Result<()> {
    let openssl = super::find_program(&["openssl"], None).ok_or_else(|| {
        Error::usage(
            "the openssl program is not installed, and oltplab makes the cluster's TLS certificates with it: install Debian's openssl package",
        )
    })?;
    // Old files go first: a certificate from an earlier start must not outlive its CA.
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let _ = fs::remove_file(e.path());
        }
    }
    let run = |args: &[&str]| -> Result<()> {
        let out = Command::new(&openssl)
            .args(args)
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| {
                Error::usage(format!("cannot run openssl ({e}): check the installation"))
            })?;
        if out.status.success() {
            Ok(())
        } else {
            Err(Error::failed(format!(
                "openssl {} failed: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&out.stderr).trim()
            )))
        }
    };
    const CURVE: [&str; 4] = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    let subject = format!("/CN=oltplab Galera CA {}", std::process::id());
    run(&[
        &["req", "-x509", "-nodes", "-days", "30"][..],
        &CURVE,
        &["-keyout", "ca-key.pem", "-out", "ca.pem", "-subj", &subject],
    ]
    .concat())?;
    for k in 1..=nodes {
        let (key, csr, cert) = (
            format!("node{k}-key.pem"),
            format!("node{k}.csr"),
            format!("node{k}.pem"),
        );
        let cn = format!("/CN=oltplab Galera node {k}");
        run(&[
            &["req", "-nodes"][..],
            &CURVE,
            &["-keyout", &key, "-out", &csr, "-subj", &cn],
        ]
        .concat())?;
        run(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-set_serial",
            &k.to_string(),
            "-days",
            "30",
            "-out",
            &cert,
        ])?;
        let _ = fs::remove_file(dir.join(&csr));
    }
    fs::remove_file(dir.join("ca-key.pem"))
        .map_err(|e| safety::io_usage(&dir.join("ca-key.pem"), "remove", &e))?;
    for e in fs::read_dir(dir).map_err(|e| safety::io_usage(dir, "read", &e))? {
        let path = e.map_err(|e| safety::io_usage(dir, "read", &e))?.path();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600))
            .map_err(|e| safety::io_usage(&path, "set permissions of", &e))?;
    }
    if let Some(a) = account {
        process::chown_tree(dir, a).map_err(|e| safety::io_usage(dir, "hand over", &e))?;
    }
    Ok(())
}

/// Distinct free loopback ports, two per node.
fn pick_ports(nodes: u32) -> Result<Vec<Ports>> {
    let mut taken = Vec::new();
    while taken.len() < 2 * nodes as usize {
        let p = process::free_loopback_port()?;
        if !taken.contains(&p) {
            taken.push(p);
        }
    }
    Ok(taken
        .chunks(2)
        .map(|c| Ports {
            group: c[0],
            ist: c[1],
        })
        .collect())
}

/// The wsrep settings of node `k`: an empty peer list bootstraps a new cluster.
fn node_settings(
    root: &Path,
    provider: &Path,
    name: &str,
    k: u32,
    ports: Ports,
    peers: &[String],
) -> Vec<(String, String)> {
    let tls = root.join("tls");
    let provider_options = [
        format!("gmcast.listen_addr=tcp://127.0.0.1:{}", ports.group),
        format!("ist.recv_addr=127.0.0.1:{}", ports.ist),
        "socket.ssl=yes".to_string(),
        // `wsrep_evs_repl_latency` accumulates from the last reset, one a minute by default: a
        // reset inside a measured window would lose its first part.
        "evs.stats_report_period=PT24H".to_string(),
        format!("socket.ssl_ca={}", tls.join("ca.pem").display()),
        format!(
            "socket.ssl_cert={}",
            tls.join(format!("node{k}.pem")).display()
        ),
        format!(
            "socket.ssl_key={}",
            tls.join(format!("node{k}-key.pem")).display()
        ),
    ]
    .join(";");
    [
        ("wsrep_on", "ON".to_string()),
        ("wsrep_provider", provider.display().to_string()),
        ("wsrep_provider_options", provider_options),
        ("wsrep_cluster_name", name.to_string()),
        (
            "wsrep_cluster_address",
            format!("gcomm://{}", peers.join(",")),
        ),
        ("wsrep_node_name", format!("node{k}")),
        ("wsrep_node_address", format!("127.0.0.1:{}", ports.group)),
        ("wsrep_sst_method", SST_METHOD.to_string()),
        // Galera's requirements of the tables it replicates.
        ("binlog_format", "ROW".to_string()),
        ("innodb_autoinc_lock_mode", "2".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// What a node's `grastate.dat` says: the cluster's UUID and the node's last position (-1 after
/// a crash).
#[derive(Debug, Clone, PartialEq, Eq)]
struct GraState {
    uuid: String,
    seqno: i64,
}

fn read_grastate(node: &Path) -> Option<GraState> {
    let text =
        fs::read_to_string(node.join(ServerKind::Mariadb.name()).join("grastate.dat")).ok()?;
    let mut uuid = None;
    let mut seqno = None;
    for line in text.lines() {
        match line.split_once(':') {
            Some(("uuid", v)) => uuid = Some(v.trim().to_string()),
            Some(("seqno", v)) => seqno = v.trim().parse().ok(),
            _ => {}
        }
    }
    Some(GraState {
        uuid: uuid?,
        seqno: seqno?,
    })
}

/// Node 1 bootstraps every start: it stopped last and holds the newest state (checked before).
fn allow_bootstrap(node: &Path) -> Result<()> {
    let path = node.join(ServerKind::Mariadb.name()).join("grastate.dat");
    let Ok(text) = fs::read_to_string(&path) else {
        return Ok(());
    };
    let text = text.replace("safe_to_bootstrap: 0", "safe_to_bootstrap: 1");
    fs::write(&path, text).map_err(|e| safety::io_usage(&path, "write", &e))
}

/// Before a start: node 1 must have stopped cleanly, or else it becomes a copy of the most
/// advanced node that did (returned); a joiner whose state is of another cluster, unknown (a
/// crash), or ahead of node 1's is replaced by a copy of node 1's data, since the hand-over gives
/// no full state transfer.
fn reseed_unusable(
    template: &ServerConfig,
    root: &Path,
    nodes: u32,
    account: Option<&Account>,
) -> Result<Option<u32>> {
    let mut node1_from = None;
    let first = match read_grastate(&node_dir(root, 1)).filter(|s| s.seqno >= 0) {
        Some(first) => first,
        None => {
            // Node 1 died (killed in a run that went on with the others): the most advanced node
            // that stopped cleanly holds every commit node 1 acknowledged — a commit returns only
            // after the group delivered its writeset to every node — and takes its place.
            let Some((k, state)) = most_advanced(root, nodes) else {
                return Err(Error::usage(format!(
                    "Galera node 1 in {} did not shut down cleanly and no other node did, so the cluster's state is unknown: load the cluster again (oltplab load … --engine galera --force)",
                    node_dir(root, 1).display()
                )));
            };
            copy_node(template, root, k, 1, account)?;
            node1_from = Some(k);
            state
        }
    };
    for k in 2..=nodes {
        let usable = read_grastate(&node_dir(root, k))
            .is_some_and(|s| s.uuid == first.uuid && s.seqno >= 0 && s.seqno <= first.seqno);
        if !usable {
            copy_node(template, root, 1, k, account)?;
        }
    }
    Ok(node1_from)
}

/// Of nodes 2 … `nodes`, the one that stopped cleanly with the highest position, and its state.
fn most_advanced(root: &Path, nodes: u32) -> Option<(u32, GraState)> {
    (2..=nodes)
        .filter_map(|k| {
            read_grastate(&node_dir(root, k))
                .filter(|s| s.seqno >= 0)
                .map(|s| (k, s))
        })
        .max_by_key(|(k, s)| (s.seqno, std::cmp::Reverse(*k)))
}

/// Makes node `k` a copy of node `from`'s (stopped) data directory, which may not bootstrap
/// (node 1 is allowed to before each start).
fn copy_node(
    template: &ServerConfig,
    root: &Path,
    from: u32,
    k: u32,
    account: Option<&Account>,
) -> Result<()> {
    let dir = node_dir(root, k);
    match fs::remove_dir_all(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(safety::io_usage(&dir, "remove the old node", &e)),
    }
    safety::ensure_own_dir(&dir, false)?;
    let mut cfg = template.clone();
    cfg.data_dir = dir.clone();
    let layout = super::Layout::new(&cfg)?;
    super::write_marker(&layout, ServerKind::Mariadb)?;
    let from = node_dir(root, from).join(ServerKind::Mariadb.name());
    super::copy_cluster(&from, &layout.cluster)?;
    // Node 1 alone bootstraps.
    let state = layout.cluster.join("grastate.dat");
    if let Ok(text) = fs::read_to_string(&state) {
        let text = text.replace("safe_to_bootstrap: 1", "safe_to_bootstrap: 0");
        fs::write(&state, text).map_err(|e| safety::io_usage(&state, "write", &e))?;
    }
    for stale in [mariadb::PID_FILE, "gvwstate.dat"] {
        let _ = fs::remove_file(layout.cluster.join(stale));
    }
    if let Some(a) = account {
        process::chown_tree(&dir, a).map_err(|e| safety::io_usage(&dir, "hand over", &e))?;
    }
    Ok(())
}

/// The wsrep status counters of one node (`SHOW GLOBAL STATUS LIKE 'wsrep_%'`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WsrepStatus {
    pub local_cert_failures: u64,
    pub local_bf_aborts: u64,
    pub flow_control_paused_ns: u64,
    pub apply_window: f64,
    pub commit_window: f64,
    pub cluster_size: u64,
    pub local_state: String,
    /// `wsrep_evs_repl_latency`'s mean (seconds) and sample count: the group communication's
    /// latency of the messages this node sent, from sending to delivery, since the provider's
    /// statistics were last reset (`evs.stats_report_period`, set longer than any run).
    pub repl_latency_mean_s: f64,
    pub repl_latency_samples: u64,
    /// `wsrep_local_commits`: local transactions committed.
    pub local_commits: u64,
}

/// A connection to one node kept for reading its wsrep counters.
pub struct StatusProbe(mysql::Conn);

impl StatusProbe {
    pub fn open(url: &str) -> Result<StatusProbe> {
        super::connect::mysql_connect(url).map(StatusProbe)
    }

    /// `None` if the node cannot answer (it died).
    pub fn read(&mut self) -> Option<WsrepStatus> {
        wsrep_status(&mut self.0)
    }
}

/// `CHECKSUM TABLE` of `tables` on the server at `url`: each table's checksum (None for a table
/// the server does not have).
pub fn table_checksums(url: &str, tables: &[&str]) -> Result<Vec<Option<u64>>> {
    let mut conn = super::connect::mysql_connect(url)?;
    let rows: Vec<(String, Option<u64>)> = conn
        .query(format!("CHECKSUM TABLE {}", tables.join(", ")))
        .map_err(|e| super::connect::mysql_error(url, &e))?;
    Ok(tables
        .iter()
        .map(|t| {
            // `oltplab.stock`: the database's name comes first.
            rows.iter()
                .find(|(name, _)| name.rsplit('.').next() == Some(*t))
                .and_then(|(_, sum)| *sum)
        })
        .collect())
}

/// Reads a node's wsrep counters over `conn`.
fn wsrep_status(conn: &mut mysql::Conn) -> Option<WsrepStatus> {
    let rows: Vec<(String, String)> = conn
        .query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', \
             'wsrep_local_bf_aborts', 'wsrep_flow_control_paused_ns', 'wsrep_apply_window', \
             'wsrep_commit_window', 'wsrep_cluster_size', 'wsrep_local_state_comment', \
             'wsrep_evs_repl_latency', 'wsrep_local_commits')",
        )
        .ok()?;
    let mut s = WsrepStatus::default();
    for (name, value) in rows {
        let int = || value.trim().parse::<u64>().unwrap_or(0);
        match name.to_ascii_lowercase().as_str() {
            "wsrep_local_cert_failures" => s.local_cert_failures = int(),
            "wsrep_local_bf_aborts" => s.local_bf_aborts = int(),
            "wsrep_flow_control_paused_ns" => s.flow_control_paused_ns = int(),
            "wsrep_apply_window" => s.apply_window = value.trim().parse().unwrap_or(0.0),
            "wsrep_commit_window" => s.commit_window = value.trim().parse().unwrap_or(0.0),
            "wsrep_cluster_size" => s.cluster_size = int(),
            "wsrep_local_state_comment" => s.local_state = value,
            "wsrep_local_commits" => s.local_commits = int(),
            "wsrep_evs_repl_latency" => {
                if let Some((mean_s, samples)) = repl_latency(&value) {
                    s.repl_latency_mean_s = mean_s;
                    s.repl_latency_samples = samples;
                }
            }
            _ => {}
        }
    }
    Some(s)
}

/// `min/avg/max/stddev/samples` (seconds) of `wsrep_evs_repl_latency`: the mean and the count.
fn repl_latency(value: &str) -> Option<(f64, u64)> {
    let parts: Vec<&str> = value.trim().split('/').collect();
    let [_, avg, _, _, samples] = parts.as_slice() else {
        return None;
    };
    Some((avg.trim().parse().ok()?, samples.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_advanced_clean_node_replaces_a_dead_node_1() {
        let root = std::env::temp_dir().join(format!("oltplab-advanced-{}", std::process::id()));
        let state = |k: u32, seqno: i64| {
            let dir = node_dir(&root, k).join("mariadb");
            fs::create_dir_all(&dir).unwrap();
            fs::write(
                dir.join("grastate.dat"),
                format!("# GALERA saved state\nversion: 2.1\nuuid:    u1\nseqno:   {seqno}\nsafe_to_bootstrap: 0\n"),
            )
            .unwrap();
        };
        state(1, -1);
        state(2, 40);
        state(3, -1);
        assert_eq!(
            most_advanced(&root, 3).map(|(k, s)| (k, s.seqno)),
            Some((2, 40))
        );
        state(3, 41);
        state(4, 41);
        assert_eq!(
            most_advanced(&root, 4).map(|(k, _)| k),
            Some(3),
            "ties: the lowest node"
        );
        for k in 2..=4 {
            state(k, -1);
        }
        assert_eq!(most_advanced(&root, 4), None, "every node crashed");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_replication_latency_is_read_as_a_node_reports_it() {
        // As MariaDB 10.11.19 with Galera 4.23 reported it mid-run, 2026-11-26.
        assert_eq!(
            repl_latency("4.4472e-05/0.000239095/0.00740793/0.000303685/4714"),
            Some((0.000239095, 4714))
        );
        assert_eq!(repl_latency("0/0/0/0/0"), Some((0.0, 0)));
        assert_eq!(repl_latency(""), None);
        assert_eq!(repl_latency("1/2/3"), None);
    }

    #[test]
    fn grastate_is_read_and_bootstrap_allowed() {
        let dir = std::env::temp_dir().join(format!("oltplab-grastate-{}", std::process::id()));
        let cluster = dir.join("mariadb");
        fs::create_dir_all(&cluster).unwrap();
        fs::write(
            cluster.join("grastate.dat"),
            "# GALERA saved state\nversion: 2.1\nuuid:    01c0196b-e972-11f1-be9b-7e7cca6e46f4\nseqno:   -1\nsafe_to_bootstrap: 0\n",
        )
        .unwrap();
        assert_eq!(
            read_grastate(&dir),
            Some(GraState {
                uuid: "01c0196b-e972-11f1-be9b-7e7cca6e46f4".into(),
                seqno: -1
            })
        );
        allow_bootstrap(&dir).unwrap();
        let text = fs::read_to_string(cluster.join("grastate.dat")).unwrap();
        assert!(text.contains("safe_to_bootstrap: 1"), "{text}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn node_counts_outside_the_range_are_usage_errors() {
        assert_eq!(check_nodes(0).unwrap_err().exit_code(), 2);
        assert_eq!(check_nodes(MAX_NODES + 1).unwrap_err().exit_code(), 2);
        assert!(check_nodes(3).is_ok());
    }

    #[test]
    fn the_bootstrap_node_has_no_peers_and_every_node_speaks_tls() {
        let ports = Ports {
            group: 4001,
            ist: 4002,
        };
        let s = node_settings(
            Path::new("/d/galera"),
            Path::new("/p.so"),
            "c",
            1,
            ports,
            &[],
        );
        let get = |k: &str| {
            s.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert_eq!(get("wsrep_cluster_address"), "gcomm://");
        let opts = get("wsrep_provider_options");
        assert!(opts.contains("socket.ssl=yes"), "{opts}");
        assert!(opts.contains("127.0.0.1:4001"), "{opts}");
        let s = node_settings(
            Path::new("/d/galera"),
            Path::new("/p.so"),
            "c",
            2,
            ports,
            &["127.0.0.1:4001".into()],
        );
        let get = |k: &str| {
            s.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        assert_eq!(get("wsrep_cluster_address"), "gcomm://127.0.0.1:4001");
        assert!(get("wsrep_provider_options").contains("node2-key.pem"));
    }
}
