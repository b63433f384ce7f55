//! `--url` naming several hosts of one database: TPC-C's and brokerage's terminals go to the hosts in turn
//! (terminal i to host i mod N) and the result counts them per host; load and check use the first
//! host; a bad host list is one sentence and exit code 2. Two managed servers would be heavy, so
//! one PostgreSQL, started by the test on its private socket and always stopped, is named twice:
//! once by its socket directory and once by the same directory with a trailing slash.

use crate::common;

use common::{assert_ok, assert_one_line_usage_error, json, oltplab, scratch, stderr};
use oltplab_dbs::server::{ManagedServer, ServerConfig, ServerKind};
use serde_json::Value;

/// The value of `key=` in the query of a managed server's URL.
fn query_value(url: &str, key: &str) -> String {
    let query = url.split_once('?').expect("a query").1;
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{key} missing in {url}"))
        .to_string()
}

/// `summary.hosts[]` as (host, terminals, workers, url).
fn hosts(doc: &Value) -> Vec<(u64, u64, u64, String)> {
    doc["summary"]["hosts"]
        .as_array()
        .expect("summary.hosts")
        .iter()
        .map(|h| {
            (
                h["host"].as_u64().unwrap(),
                h["terminals"].as_u64().unwrap(),
                h["workers"].as_u64().unwrap(),
                h["url"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_bad_host_list_is_refused_before_anything_runs() {
    let dir = scratch("bad");
    for (args, names) in [
        (vec!["postgres://u:secret@h1:5432,h2:99999/x"], "'99999'"),
        (vec!["mysql://u:secret@h1:3306,,h2/x"], "empty entry"),
        (
            vec!["postgres://u@h1/x", "mysql://u:secret@h2/x"],
            "speak one protocol",
        ),
        (vec!["sqlite:a.sqlite", "sqlite:b.sqlite"], "names one file"),
        // Nothing listens on port 1: the second host is named although the first is reachable
        // no more than it.
        (
            vec!["postgres://u:secret@127.0.0.1:1,127.0.0.1:2/x"],
            "cannot reach",
        ),
    ] {
        let mut cmd = vec!["run", "tpcc", "--duration", "1s"];
        for u in &args {
            cmd.extend(["--url", u]);
        }
        let out = oltplab(&dir, &cmd);
        assert_one_line_usage_error(&out, names);
        assert!(!stderr(&out).contains("secret"), "{}", stderr(&out));
    }
    // Order entry has no account of hosts.
    let out = oltplab(
        &dir,
        &[
            "run",
            "orders",
            "--url",
            "postgres://u@h1:5432,h2:5432/x",
            "--duration",
            "1s",
        ],
    );
    assert_one_line_usage_error(&out, "only tpcc and brokerage");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn terminals_are_spread_over_the_hosts_in_turn() {
    if !common::server_installed("initdb") {
        return;
    }
    let dir = scratch("pg");
    let mut cfg = ServerConfig::new(ServerKind::Postgres, dir.join("pg"));
    cfg.buffer_pool_bytes = 64 << 20;
    cfg.max_connections = 40;
    // Stopped on drop, also when an assertion fails.
    let server = ManagedServer::start(&cfg).unwrap();
    let url = server.url();
    let socket = query_value(&url, "host");
    let port = query_value(&url, "port");
    // The same server as a second "host": its socket directory written with a trailing slash.
    let second = url.replace(&format!("host={socket}"), &format!("host={socket}/"));
    assert_ne!(url, second);

    // The load goes to the first host.
    let out = oltplab(
        &dir,
        &[
            "load",
            "tpcc",
            "--url",
            &url,
            "--url",
            &second,
            "-w",
            "1",
            "--no-check",
            "-q",
        ],
    );
    assert_ok(&out);

    // Repeated --url: 5 terminals over 2 hosts → 3 and 2.
    let window = ["--warmup", "0s", "--duration", "2s", "-q"];
    let mut args = vec!["run", "tpcc", "--url", &url, "--url", &second, "-t", "5"];
    args.extend(window);
    args.extend(["--json", "repeated.json"]);
    let out = oltplab(&dir, &args);
    assert_ok(&out);
    let doc = json(&dir.join("repeated.json"));
    let got = hosts(&doc);
    assert_eq!(
        got.iter().map(|h| (h.0, h.1)).collect::<Vec<_>>(),
        [(1, 3), (2, 2)],
        "{got:?}"
    );
    assert_eq!(got[0].3, url);
    assert_eq!(got[1].3, second);
    let workers: u64 = got.iter().map(|h| h.2).sum();
    assert_eq!(
        workers,
        doc["summary"]["delivery_deferred"]["workers"]
            .as_u64()
            .unwrap()
    );
    assert_eq!(doc["config"]["db"]["url_hosts"][1], second.as_str());
    assert!(doc["summary"]["tx"]["new_order"]["count"].as_u64().unwrap() > 0);

    // The multi-host form libpq takes, the socket directories percent-encoded: 3 hosts, 4
    // terminals → 2, 1, 1.
    let enc = |s: &str| s.replace('/', "%2F");
    let multi = format!(
        "postgres://oltplab@{}:{port},{}:{port},{}%2F:{port}/oltplab",
        enc(&socket),
        enc(&socket),
        enc(&socket)
    );
    let mut args = vec!["run", "tpcc", "--url", &multi, "-t", "4"];
    args.extend(window);
    args.extend(["--json", "multi.json"]);
    let out = oltplab(&dir, &args);
    assert_ok(&out);
    let doc = json(&dir.join("multi.json"));
    let got = hosts(&doc);
    assert_eq!(
        got.iter().map(|h| (h.0, h.1)).collect::<Vec<_>>(),
        [(1, 2), (2, 1), (3, 1)],
        "{got:?}"
    );
    assert!(doc["summary"]["tx"]["new_order"]["count"].as_u64().unwrap() > 0);
    assert_eq!(doc["config"]["db"]["url_shown"], multi.as_str());

    // The check goes to the first host and holds.
    let out = oltplab(&dir, &["check", "tpcc", "--url", &multi]);
    assert_ok(&out);

    // Brokerage the same way: 3 terminals over 2 hosts → 2 and 1, the market workers after them.
    let out = oltplab(
        &dir,
        &[
            "load",
            "brokerage",
            "--url",
            &url,
            "--url",
            &second,
            "--days",
            "1",
            "--no-check",
            "--threads",
            "2",
            // The database holds TPC-C's tables; only brokerage's are dropped.
            "--force",
            "-q",
        ],
    );
    assert_ok(&out);
    let mut args = vec![
        "run",
        "brokerage",
        "--url",
        &url,
        "--url",
        &second,
        "-t",
        "3",
    ];
    args.extend(window);
    args.extend(["--json", "brokerage.json"]);
    let out = oltplab(&dir, &args);
    assert_ok(&out);
    let doc = json(&dir.join("brokerage.json"));
    let got = hosts(&doc);
    assert_eq!(
        got.iter().map(|h| (h.0, h.1)).collect::<Vec<_>>(),
        [(1, 2), (2, 1)],
        "{got:?}"
    );
    let workers: u64 = got.iter().map(|h| h.2).sum();
    assert_eq!(workers, doc["summary"]["market_workers"].as_u64().unwrap());
    assert!(doc["summary"]["tps_total"].as_f64().unwrap() > 0.0);

    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
