//! `oltplab emulate` as a user meets it: the real binary, the real shim, real programs (dd,
//! PostgreSQL with pgbench) on emulated devices.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Once;

use common::{assert_usage_error, scratch};
use oltplab_trace::TraceReader;

/// The shim is a cdylib that `cargo test` does not rebuild; build it once (cheap when fresh), so
/// the tests never run a stale copy.
fn build_shim() {
    static BUILD: Once = Once::new();
    BUILD.call_once(|| {
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_oltplab"));
        let release = exe
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "release");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "--quiet", "-p", "oltplab-shim"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "cargo build -p oltplab-shim failed");
        assert!(exe.with_file_name("liboltplab_shim.so").is_file());
    });
}

fn oltplab(dir: &Path, args: &[&str]) -> Output {
    build_shim();
    Command::new(env!("CARGO_BIN_EXE_oltplab"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run oltplab")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Session directories of a given oltplab pid still in /dev/shm.
fn leftover_sessions(pid: &str) -> Vec<PathBuf> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(&format!("oltplab-emu-{pid}-")))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn bad_input_is_one_clear_sentence_and_exit_code_2() {
    let dir = scratch("bad");
    std::fs::create_dir_all(dir.join("foreign")).unwrap();
    std::fs::write(dir.join("foreign/keep.txt"), "mine").unwrap();
    std::fs::write(dir.join("old.trace"), "not a trace").unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["emulate", "--device", "floppy", "--path", "d", "--", "true"],
            "hdd-10k",
        ),
        (
            &[
                "emulate",
                "--device",
                "raid5(2,hdd-15k)",
                "--path",
                "d",
                "--",
                "true",
            ],
            "raid5",
        ),
        (
            &[
                "emulate", "--device", "hdd-10k", "--path", "foreign", "--", "true",
            ],
            "--force",
        ),
        (
            &[
                "emulate",
                "--device",
                "hdd-10k",
                "--path",
                "d",
                "--",
                "/no/such/program",
            ],
            "cannot run /no/such/program",
        ),
        (
            &[
                "emulate",
                "--device",
                "hdd-10k",
                "--path",
                "d",
                "--trace",
                "d/t.trace",
                "--",
                "true",
            ],
            "inside the emulated directory",
        ),
        (
            &[
                "emulate",
                "--device",
                "hdd-10k",
                "--path",
                "d",
                "--trace",
                "old.trace",
                "--",
                "true",
            ],
            "--force",
        ),
        (
            &[
                "emulate",
                "--device",
                "hdd-10k",
                "--path",
                "d",
                "--trace",
                "old.trace",
                "--force",
                "--",
                "true",
            ],
            "not an oltplab trace",
        ),
        (
            &["emulate", "--device", "hdd-10k", "--path", "d"],
            "COMMAND",
        ),
        (
            &[
                "emulate",
                "--device",
                "hdd-10k",
                "--path",
                "d",
                "--backing",
                "tape",
                "--",
                "true",
            ],
            "--backing",
        ),
    ];
    for (args, expected) in cases {
        let out = oltplab(&dir, args);
        assert_usage_error(&out, expected);
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("foreign/keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("old.trace")).unwrap(),
        "not a trace"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_io_is_emulated_traced_and_reported() {
    let dir = scratch("dd");
    // 64 reads and 64 writes of 16 KiB, through dd's read()/write() on files under d/.
    let script = "dd if=/dev/zero of=d/f bs=16k count=64 conv=fsync status=none && \
                  dd if=d/f of=/dev/null bs=16k count=64 status=none && \
                  dd if=/dev/zero of=elsewhere bs=16k count=64 status=none";
    let out = oltplab(
        &dir,
        &[
            "emulate",
            "--device",
            "sata-ssd-2010",
            "--path",
            "d",
            "--trace",
            "t.trace",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("sata-ssd-2010 (disk backing)"), "{err}");
    assert!(err.contains("latency modelled mean"), "{err}");
    let reader = TraceReader::open(&dir.join("t.trace")).unwrap();
    let records = reader.read_sorted().unwrap();
    let count = |op: oltplab_trace::Op| records.iter().filter(|r| r.kind() == op).count();
    assert_eq!(
        count(oltplab_trace::Op::Write),
        64,
        "dd's writes, not those outside d/"
    );
    assert_eq!(count(oltplab_trace::Op::Read), 64);
    assert!(count(oltplab_trace::Op::Fsync) + count(oltplab_trace::Op::Fdatasync) >= 1);
    assert!(records.iter().all(|r| r.len == 16384 || r.len == 0));
    // Offsets follow dd's sequential progress through the file.
    let mut reads: Vec<u64> = records
        .iter()
        .filter(|r| r.kind() == oltplab_trace::Op::Read)
        .map(|r| r.offset)
        .collect();
    reads.sort_unstable();
    assert_eq!(reads, (0..64).map(|i| i * 16384).collect::<Vec<_>>());
    assert!(
        reader.files().values().any(|f| f == "f"),
        "{:?}",
        reader.files()
    );
    // Every traced I/O waited at least the device's flash read/program latency (tens of µs).
    let reads_mean_ns = records
        .iter()
        .filter(|r| r.kind() == oltplab_trace::Op::Read)
        .map(|r| r.latency_ns as f64)
        .sum::<f64>()
        / 64.0;
    assert!(reads_mean_ns > 20_000.0, "{reads_mean_ns}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn state_is_cleaned_up_when_the_command_is_killed() {
    let dir = scratch("killed");
    let out = oltplab(
        &dir,
        &[
            "emulate",
            "--device",
            "hdd-10k",
            "--path",
            "d",
            "--trace",
            "t.trace",
            "--",
            "sh",
            "-c",
            "echo pid=$PPID; dd if=/dev/zero of=d/x bs=4k count=4 status=none; kill -9 $$",
        ],
    );
    let stdout = text(&out.stdout);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("killed by signal 9"), "{err}");
    let pid = stdout
        .trim()
        .strip_prefix("pid=")
        .expect("the command printed oltplab's pid");
    assert!(
        leftover_sessions(pid).is_empty(),
        "{:?}",
        leftover_sessions(pid)
    );
    // What was done before the kill is still reported and traced.
    assert!(err.contains("4 I/Os") || err.contains("5 I/Os"), "{err}");
    assert!(dir.join("t.trace").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_command_that_never_loads_the_shim_is_reported() {
    let dir = scratch("noload");
    // env -u LD_PRELOAD drops the library before the real program starts.
    let out = oltplab(
        &dir,
        &[
            "emulate",
            "--device",
            "hdd-10k",
            "--path",
            "d",
            "--",
            "env",
            "-u",
            "LD_PRELOAD",
            "/bin/true",
        ],
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    // env itself loaded the shim; /bin/true did not, and did no I/O under d/.
    assert!(err.contains("no reads, writes or syncs"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// PostgreSQL's programs, or None (the test then says so and passes; CI installs them).
fn pg_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs.into_iter()
        .rev()
        .find(|d| d.join("pgbench").is_file() && d.join("pg_ctl").is_file())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// pgbench's "latency average = X ms" in milliseconds.
fn pgbench_latency_ms(out: &str) -> f64 {
    out.lines()
        .find_map(|l| l.strip_prefix("latency average = "))
        .and_then(|l| l.trim_end_matches(" ms").trim().parse().ok())
        .unwrap_or_else(|| panic!("no latency in pgbench output:\n{out}"))
}

#[test]
fn postgres_under_emulate_slows_down_on_an_emulated_hdd() {
    let Some(bin) = pg_bin() else {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Server,
            "PostgreSQL (pgbench, pg_ctl) is not installed",
        );
        return;
    };
    let dir = scratch("pg");
    let data = dir.join("d");
    let cluster = data.join("pg");
    let sock = dir.join("sock");
    let port = free_port();
    let root = unsafe { libc::geteuid() } == 0;
    // As root, PostgreSQL runs as the postgres account (setpriv keeps the environment, and with it
    // LD_PRELOAD); otherwise as ourselves.
    let as_pg = if root {
        "setpriv --reuid=postgres --regid=postgres --clear-groups --"
    } else {
        ""
    };
    let b = bin.display();
    // A tiny buffer pool, so pgbench's reads reach the files (and the device) instead of shared
    // buffers; the OS page cache serves the real reads fast, the model adds the device's time.
    let script = format!(
        r#"set -e
phase=$1
if [ "$phase" = init ]; then
  mkdir -p {cluster} {sock}
  {chown}
  {as_pg} {b}/initdb -D {cluster} -U bench --auth=trust --no-sync >/dev/null
fi
{as_pg} {b}/pg_ctl -D {cluster} -l {sock}/pg.log -w -o "-c port={port} -c listen_addresses='' -c unix_socket_directories={sock} -c shared_buffers=128kB -c fsync=off" start >/dev/null
if [ "$phase" = init ]; then
  {as_pg} {b}/pgbench -h {sock} -p {port} -U bench -i -s 2 -q postgres >/dev/null 2>&1
else
  {as_pg} {b}/pgbench -h {sock} -p {port} -U bench -S -n -T 3 -c 1 postgres
fi
{as_pg} {b}/pg_ctl -D {cluster} -m fast -w stop >/dev/null
"#,
        cluster = cluster.display(),
        sock = sock.display(),
        chown = if root {
            format!("chown postgres: {} {}", cluster.display(), sock.display())
        } else {
            String::new()
        },
    );
    std::fs::write(dir.join("pg.sh"), script).unwrap();
    let run = |device: &str, phase: &str, trace: Option<&str>| {
        let mut args = vec!["emulate", "--device", device, "--path", "d"];
        if let Some(t) = trace {
            args.extend(["--trace", t]);
        }
        // The device's shared state is its owner's alone: the server's account gets it.
        if root {
            args.extend(["--share-with", "postgres"]);
        }
        args.extend(["--", "sh", "pg.sh", phase]);
        let out = oltplab(&dir, &args);
        assert!(
            out.status.success(),
            "{device} {phase}: {}\n{}\n{}",
            text(&out.stderr),
            text(&out.stdout),
            std::fs::read_to_string(dir.join("sock/pg.log")).unwrap_or_default()
        );
        out
    };
    run("host", "init", None);
    let host = run("host", "bench", None);
    let hdd = run("hdd-10k", "bench", Some("hdd.trace"));
    let host_ms = pgbench_latency_ms(&text(&host.stdout));
    let hdd_ms = pgbench_latency_ms(&text(&hdd.stdout));
    let err = text(&hdd.stderr);
    eprintln!("pgbench -S latency: host {host_ms} ms, hdd-10k {hdd_ms} ms\n{err}");
    // A 10k rpm disk needs milliseconds per random read; the host's page cache microseconds.
    assert!(hdd_ms > 1.0, "hdd-10k: {hdd_ms} ms");
    assert!(
        hdd_ms > 5.0 * host_ms,
        "host {host_ms} ms, hdd-10k {hdd_ms} ms"
    );
    // Every backend and auxiliary process loaded the shim and shares the device.
    let processes: u64 = err
        .split(" I/Os from ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(processes >= 4, "{err}");
    // The merged trace holds reads of relation files from several processes.
    let trace = TraceReader::open(&dir.join("hdd.trace")).unwrap();
    let records = trace.read_sorted().unwrap();
    let reads = records
        .iter()
        .filter(|r| r.kind() == oltplab_trace::Op::Read)
        .count();
    assert!(reads > 50, "{reads} reads");
    assert!(
        trace.files().values().any(|f| f.starts_with("pg/base/")),
        "{:?}",
        trace.files()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// MariaDB memory-maps its redo log when it lives in /dev/shm, out of sight of the trace and the
/// emulated device: refused before anything starts, nothing written.
#[test]
fn a_mariadb_in_dev_shm_is_refused() {
    let dir = PathBuf::from(format!("/dev/shm/oltplab-it-redo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("mariadb")).unwrap();
    let out = oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--engine",
            "mariadb",
            "--data-dir",
            ".",
            "--duration",
            "1s",
            "--emulate",
            "sata-ssd-2010",
            "--out",
            "res",
        ],
    );
    let written = dir.join("res").exists();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_usage_error(&out, "MariaDB memory-maps its redo log");
    assert!(!written, "nothing written");
    // Any program under `oltplab emulate` there runs, with a warning that says why not to.
    build_shim();
    let dir = PathBuf::from(format!("/dev/shm/oltplab-it-mapped-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = oltplab(
        Path::new("/tmp"),
        &[
            "emulate",
            "--device",
            "sata-ssd-2010",
            "--path",
            dir.to_str().unwrap(),
            "--",
            "true",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "is in /dev/shm, where a program may write its files through a memory mapping"
        ),
        "{}",
        text(&out.stderr)
    );
}
