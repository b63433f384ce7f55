//! The SQLite VFS against real SQLite: every I/O it passes on is counted and traced, nothing is
//! lost or invented, and an emulated device's latency shows in the realised time.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use oltplab_dbs::vfs::{set_thread_tag, TraceWindow, Vfs, VfsOptions};
use oltplab_devmodel::{parse_spec, Emulator};
use oltplab_trace::{Op, TraceMeta, TraceReader, TraceWriter};
use rusqlite::{Connection, OpenFlags};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oltplab-vfs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn open(path: &std::path::Path, vfs: &Vfs) -> Connection {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let conn = Connection::open_with_flags_and_vfs(path, flags, vfs.name()).unwrap();
    conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-64;")
        .unwrap();
    conn
}

/// A VFS that traces into `dir/t.trace`, without a model: the trace's path, writer and the VFS.
fn traced_vfs(dir: &std::path::Path) -> (std::path::PathBuf, Arc<TraceWriter>, Vfs) {
    let trace_path = dir.join("t.trace");
    let trace = Arc::new(TraceWriter::create(&trace_path, TraceMeta::new("sqlite-vfs")).unwrap());
    let vfs = Vfs::register(VfsOptions {
        trace: Some(trace.clone()),
        emulator: None,
        placed_files: Vec::new(),
        crash: None,
    })
    .unwrap();
    (trace_path, trace, vfs)
}

#[test]
fn counts_and_trace_agree_and_are_tagged() {
    let dir = scratch("trace");
    let (trace_path, trace, vfs) = traced_vfs(&dir);
    {
        let conn = open(&dir.join("db.sqlite"), &vfs);
        conn.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
            .unwrap();
        set_thread_tag(1);
        for k in 0..200 {
            conn.execute("INSERT INTO t VALUES (?1, zeroblob(3000))", [k])
                .unwrap();
        }
        set_thread_tag(0);
        // A small cache forces reads back through the VFS.
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t WHERE length(v) = 3000", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(n, 200);
    }
    let counts = vfs.counts();
    drop(vfs);
    trace.close().unwrap();
    // One sync per commit at least (synchronous=FULL in WAL mode syncs the WAL on commit).
    assert!(counts.writes >= 200, "{counts:?}");
    assert!(counts.syncs >= 200, "{counts:?}");
    assert!(counts.reads > 0, "{counts:?}");

    let reader = TraceReader::open(&trace_path).unwrap();
    let mut reads = 0;
    let mut writes = 0;
    let mut syncs = 0;
    let mut written = 0u64;
    let mut tagged = 0;
    reader
        .for_each(|r| {
            match r.kind() {
                Op::Read => reads += 1,
                Op::Write => {
                    writes += 1;
                    written += r.len as u64;
                }
                Op::Fsync => syncs += 1,
                other => panic!("unexpected {other:?}"),
            }
            tagged += (r.tag == 1) as u64;
        })
        .unwrap();
    assert_eq!(
        (reads, writes, syncs),
        (counts.reads, counts.writes, counts.syncs)
    );
    assert_eq!(written, counts.written_bytes);
    assert!(tagged >= 400, "inserts' I/O carries the tag: {tagged}");
    let files: Vec<&String> = reader.files().values().collect();
    assert!(
        files.iter().any(|f| f.ends_with("db.sqlite-wal")),
        "{files:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The trace holds the I/Os of its window alone: none before it opens (no window), all while it
/// has no end, none once it closed.
#[test]
fn only_the_windows_io_is_traced() {
    let dir = scratch("window");
    let (trace_path, trace, vfs) = traced_vfs(&dir);
    assert_eq!(vfs.traced_window(), Some(TraceWindow::ALL));
    vfs.trace_window(None);
    assert_eq!(vfs.traced_window(), None);
    let inside = {
        let conn = open(&dir.join("db.sqlite"), &vfs);
        conn.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
            .unwrap();
        let insert = |k: i64| {
            conn.execute("INSERT INTO t VALUES (?1, zeroblob(3000))", [k])
                .unwrap();
        };
        (0..20).for_each(insert);
        let before = vfs.counts();
        let from_ns = oltplab_devmodel::now_ns();
        vfs.trace_window(Some(TraceWindow {
            from_ns,
            until_ns: None,
        }));
        (20..50).for_each(insert);
        let at_end = vfs.counts();
        let end = TraceWindow {
            from_ns,
            until_ns: Some(oltplab_devmodel::now_ns()),
        };
        vfs.trace_window(Some(end));
        assert_eq!(vfs.traced_window(), Some(end));
        (50..80).for_each(insert);
        at_end.writes - before.writes
    };
    drop(vfs);
    trace.close().unwrap();
    let mut writes = 0;
    TraceReader::open(&trace_path)
        .unwrap()
        .for_each(|r| writes += (r.kind() == Op::Write) as u64)
        .unwrap();
    assert!(inside >= 30, "{inside}");
    assert_eq!(writes, inside);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn emulated_device_latency_is_realised() {
    let dir = scratch("emulate");
    let emulator = Arc::new(Emulator::new(&parse_spec("hdd-10k").unwrap(), 1).unwrap());
    let vfs = Vfs::register(VfsOptions {
        trace: None,
        emulator: Some(emulator.clone()),
        placed_files: Vec::new(),
        crash: None,
    })
    .unwrap();
    let started = Instant::now();
    {
        let conn = open(&dir.join("db.sqlite"), &vfs);
        conn.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY)")
            .unwrap();
        for k in 0..20 {
            conn.execute("INSERT INTO t VALUES (?1)", [k]).unwrap();
        }
    }
    let elapsed = started.elapsed();
    let counts = vfs.counts();
    drop(vfs);
    let fidelity = emulator.fidelity();
    assert!(
        fidelity.ios >= counts.reads + counts.writes + counts.syncs,
        "{fidelity:?} {counts:?}"
    );
    // 20 commits, each a WAL write and a sync on a 10k rpm disk: milliseconds each, not microseconds.
    assert!(elapsed.as_millis() >= 40, "took only {elapsed:?}");
    assert!(
        fidelity.realised_lat_ns_mean >= fidelity.modelled_lat_ns_mean * 0.95,
        "{fidelity:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Commits on a device with a crash capture: an honest volatile cache leaves nothing pending
/// after a commit's WAL sync, a lying one keeps every write pending; after the cut no I/O reaches
/// the files, and the states undo exactly what the files gained since their durable point.
#[test]
fn a_cut_stops_io_and_its_states_undo_only_what_was_not_durable() {
    use oltplab_dbs::vfs::CrashCapture;
    for (spec, pending_after_commits) in [
        ("sata-ssd-2010", false),
        ("sata-ssd-2010{cache=lying}", true),
    ] {
        let dir = scratch(if pending_after_commits {
            "cut-lying"
        } else {
            "cut-honest"
        });
        let spec = parse_spec(spec).unwrap();
        let crash = CrashCapture::new(&spec);
        let vfs = Vfs::register(VfsOptions {
            trace: None,
            emulator: Some(Arc::new(Emulator::new(&spec, 1).unwrap())),
            placed_files: Vec::new(),
            crash: Some(crash.clone()),
        })
        .unwrap();
        let conn = open(&dir.join("db.sqlite"), &vfs);
        conn.execute_batch("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
            .unwrap();
        for k in 0..30 {
            conn.execute("INSERT INTO t VALUES (?1, zeroblob(2000))", [k])
                .unwrap();
        }
        assert_eq!(crash.pending_writes() > 0, pending_after_commits, "{spec}");
        crash.cut();
        let wal = dir.join("db.sqlite-wal");
        let before = std::fs::read(&wal).unwrap();
        assert!(
            conn.execute("INSERT INTO t VALUES (100, zeroblob(2000))", [])
                .is_err(),
            "{spec}: a commit after the cut succeeded"
        );
        assert_eq!(
            std::fs::read(&wal).unwrap(),
            before,
            "{spec}: the WAL changed after the cut"
        );
        drop(conn);
        assert_eq!(
            std::fs::read(&wal).unwrap(),
            before,
            "{spec}: closing changed the WAL"
        );
        let files = vfs.files();
        let wal_slot = files.iter().find(|(p, _)| p.ends_with("-wal")).unwrap().1;
        for st in crash.states(5, 4) {
            if !pending_after_commits {
                assert!(st.patches.is_empty(), "{spec}: {st:?}");
                continue;
            }
            // Applying the undo half alone gives the WAL before the first write: all zeros
            // (SQLite created it empty), then the kept writes come back.
            let mut w = before.clone();
            for p in st.patches.iter().filter(|p| p.file == wal_slot) {
                let end = p.offset as usize + p.data.len();
                if w.len() < end {
                    w.resize(end, 0);
                }
                w[p.offset as usize..end].copy_from_slice(&p.data);
            }
            assert_eq!(
                st.lost_writes > 0,
                w != before,
                "{spec}: {} lost",
                st.lost_writes
            );
        }
        drop(vfs);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
