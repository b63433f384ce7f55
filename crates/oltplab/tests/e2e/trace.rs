//! `oltplab trace stat|convert|replay|merge` as a user meets them: the real binary, real files.

use crate::common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{assert_ok, assert_one_line_usage_error, assert_usage_error, json, oltplab, scratch};

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// An MSR Cambridge CSV: two disks, 600 I/Os of 4–16 KiB, overlapping in time.
fn msr_csv(dir: &Path) -> PathBuf {
    let mut csv = String::new();
    for i in 0..600u64 {
        let op = if i % 4 == 0 { "Write" } else { "Read" };
        let size = 4096 * (1 + i % 4);
        writeln!(
            csv,
            "{},db,{},{op},{},{size},{}",
            128_166_372_000_000_000 + i * 500,
            i % 2,
            (i * 7919 % 2000) * 4096,
            800 + i % 300
        )
        .unwrap();
    }
    let path = dir.join("db.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

#[test]
fn convert_and_stat() {
    let dir = scratch("convert");
    msr_csv(&dir);
    assert_ok(&oltplab(
        &dir,
        &[
            "trace", "convert", "db.csv", "--to", "oltplab", "-o", "db.trace",
        ],
    ));
    let out = oltplab(&dir, &["trace", "stat", "db.trace", "--json", "stat.json"]);
    assert_ok(&out);
    let t = text(&out);
    assert!(
        t.contains("600 operations") && t.contains("db_0") && t.contains("db_1"),
        "{t}"
    );
    let s = json(&dir.join("stat.json"));
    assert_eq!(s["schema"], "oltplab.trace-stat/1");
    assert_eq!(s["records"], 600);
    assert_eq!(s["ops"]["write"], 150);
    assert_eq!(s["ops"]["read"], 450);
    assert_eq!(s["per_file"].as_array().unwrap().len(), 2);
    assert!(
        s["in_flight_max"].as_u64().unwrap() >= 2,
        "the rows overlap in time"
    );
    assert!(s["per_second"][0]["iops"].as_f64().unwrap() > 0.0);

    // To fio's iolog v3 and back: the same operations.
    assert_ok(&oltplab(
        &dir,
        &[
            "trace",
            "convert",
            "db.trace",
            "--to",
            "fio-iolog-v3",
            "-o",
            "db.iolog",
        ],
    ));
    assert!(std::fs::read_to_string(dir.join("db.iolog"))
        .unwrap()
        .starts_with("fio version 3 iolog\n"));
    assert_ok(&oltplab(
        &dir,
        &[
            "trace",
            "convert",
            "db.iolog",
            "--to",
            "oltplab",
            "-o",
            "back.trace",
        ],
    ));
    assert_ok(&oltplab(
        &dir,
        &["trace", "stat", "back.trace", "--json", "back.json"],
    ));
    let b = json(&dir.join("back.json"));
    assert_eq!(b["ops"], s["ops"]);
    assert_eq!(b["read_bytes"], s["read_bytes"]);

    // Stat reads other formats directly.
    assert_ok(&oltplab(&dir, &["trace", "stat", "db.iolog"]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_traces_and_bad_options() {
    let dir = scratch("bad");
    msr_csv(&dir);
    assert_ok(&oltplab(
        &dir,
        &[
            "trace", "convert", "db.csv", "--to", "oltplab", "-o", "db.trace",
        ],
    ));
    let good = std::fs::read(dir.join("db.trace")).unwrap();
    std::fs::write(dir.join("cut.trace"), &good[..good.len() - 7]).unwrap();
    assert_usage_error(
        &oltplab(&dir, &["trace", "stat", "cut.trace"]),
        &format!("truncated: it ends at byte {}", good.len() - 7),
    );
    let mut flipped = good.clone();
    let at = good.len() - 40;
    flipped[at] ^= 0xff;
    std::fs::write(dir.join("bad.trace"), &flipped).unwrap();
    assert_usage_error(
        &oltplab(&dir, &["trace", "replay", "bad.trace", "--target", "t"]),
        "checksum does not match",
    );
    assert_usage_error(
        &oltplab(&dir, &["trace", "stat", "missing.trace"]),
        "missing.trace",
    );
    std::fs::write(dir.join("notes.txt"), "hello\n").unwrap();
    assert_usage_error(&oltplab(&dir, &["trace", "stat", "notes.txt"]), "--from");
    assert_usage_error(
        &oltplab(
            &dir,
            &[
                "trace",
                "convert",
                "db.trace",
                "--to",
                "oltplab",
                "-o",
                "notes.txt",
            ],
        ),
        "not an oltplab trace",
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "hello\n"
    );
    assert_usage_error(
        &oltplab(
            &dir,
            &["trace", "convert", "db.trace", "--to", "msr-csv", "-o", "x"],
        ),
        "oltplab",
    );
    assert_usage_error(
        &oltplab(
            &dir,
            &[
                "trace",
                "replay",
                "db.trace",
                "--target",
                "t",
                "--time-scale",
                "0",
            ],
        ),
        "--time-scale",
    );
    assert_usage_error(
        &oltplab(
            &dir,
            &[
                "trace",
                "replay",
                "db.trace",
                "--target",
                "t",
                "--emulate",
                "floppy-1986",
            ],
        ),
        "device spec",
    );
    assert_usage_error(
        &oltplab(
            &dir,
            &[
                "trace",
                "replay",
                "db.trace",
                "--target",
                "t",
                "--time-scale",
                "1",
                "--as-fast-as-possible",
            ],
        ),
        "cannot be used with",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn replay_writes_a_result_and_never_touches_user_files() {
    let dir = scratch("replay");
    msr_csv(&dir);
    assert_ok(&oltplab(
        &dir,
        &[
            "trace", "convert", "db.csv", "--to", "oltplab", "-o", "db.trace",
        ],
    ));

    // A target holding someone's files is refused and left as it was.
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/db_0"), "precious").unwrap();
    assert_usage_error(
        &oltplab(&dir, &["trace", "replay", "db.trace", "--target", "data"]),
        "--target",
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("data/db_0")).unwrap(),
        "precious"
    );

    let out = oltplab(
        &dir,
        &[
            "trace", "replay", "db.trace", "--target", "copies", "--out", "res", "--json", "r.json",
        ],
    );
    assert_ok(&out);
    assert!(text(&out).contains("IOPS"), "{}", text(&out));
    let r = json(&dir.join("res/result.json"));
    assert_eq!(r, json(&dir.join("r.json")));
    assert_eq!(r["schema"], "oltplab.result/1");
    assert_eq!(r["kind"], "replay");
    let s = &r["summary"];
    assert_eq!(s["ops"], 600);
    assert_eq!(s["read"]["ios"], 450);
    assert_eq!(s["write"]["ios"], 150);
    assert!(s["iops"].as_f64().unwrap() > 0.0);
    assert!(s["read"]["lat_ns"]["p99"].as_u64().unwrap() > 0);
    assert!(
        s["lanes"].as_u64().unwrap() >= 2,
        "overlapping rows become parallel lanes"
    );
    assert_eq!(r["config"]["mode"], "as_fast_as_possible");
    for h in ["read", "write", "sync"] {
        assert!(r["histograms"][h].is_string());
    }
    assert!(dir.join("copies/.oltplab").is_file());
    assert!(dir.join("copies/0000-db_0.oltplab").is_file());

    // Timed, through an emulated device, buffered.
    let out = oltplab(
        &dir,
        &[
            "trace",
            "replay",
            "db.trace",
            "--target",
            "copies",
            "--out",
            "res2",
            "--time-scale",
            "2",
            "--emulate",
            "sata-ssd-2010",
            "--buffered",
        ],
    );
    assert_ok(&out);
    let r = json(&dir.join("res2/result.json"));
    assert_eq!(r["summary"]["ops"], 600);
    assert_eq!(r["summary"]["emulated_device"], "sata-ssd-2010");
    assert!(r["summary"]["fidelity"]["ios"].as_u64().unwrap() >= 600);
    assert_eq!(r["config"]["time_scale"], 2.0);
    // The traced time was ~30 ms; at half speed the replay cannot be faster than ~60 ms.
    assert!(
        r["summary"]["elapsed_s"].as_f64().unwrap()
            >= 2.0 * 0.9 * r["summary"]["trace_s"].as_f64().unwrap() - 0.001
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merge_parts() {
    let dir = scratch("merge");
    msr_csv(&dir);
    assert_ok(&oltplab(
        &dir,
        &[
            "trace", "convert", "db.csv", "--to", "oltplab", "-o", "a.trace",
        ],
    ));
    assert_ok(&oltplab(
        &dir,
        &[
            "trace", "convert", "db.csv", "--to", "oltplab", "-o", "b.trace",
        ],
    ));
    let out = oltplab(
        &dir,
        &["trace", "merge", "a.trace", "b.trace", "-o", "all.trace"],
    );
    assert_ok(&out);
    assert!(
        text(&out).contains("1,200 operations on 2 files"),
        "{}",
        text(&out)
    );
    assert_usage_error(
        &oltplab(&dir, &["trace", "merge", "a.trace", "-o", "a.trace"]),
        "one of the parts",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn virtual_replay_runs_the_trace_through_the_model_in_either_order() {
    let dir = scratch("virtual");
    msr_csv(&dir);
    assert_ok(&oltplab(
        &dir,
        &[
            "trace", "convert", "db.csv", "--to", "oltplab", "-o", "db.trace",
        ],
    ));
    let mut iops = Vec::new();
    for order in ["lanes", "causal"] {
        let file = format!("{order}.json");
        let out = oltplab(
            &dir,
            &[
                "trace",
                "replay",
                "db.trace",
                "--emulate",
                "hdd-10k",
                "--virtual",
                "--order",
                order,
                "--json",
                &file,
                "--out",
                order,
            ],
        );
        assert_ok(&out);
        let r = json(&dir.join(&file));
        assert_eq!(r["kind"], "replay");
        let s = &r["summary"];
        assert_eq!(s["order"], order);
        assert_eq!(s["clock"], "virtual");
        assert_eq!(s["emulated_device"], "hdd-10k");
        assert_eq!(s["read"]["ios"], 450);
        assert_eq!(s["write"]["ios"], 150);
        iops.push(s["iops"].as_f64().unwrap());
    }
    // The causal replay keeps what the trace serialised: never more than the free lanes get.
    assert!(iops[1] > 0.0 && iops[1] <= iops[0] * 1.01, "{iops:?}");
    // Nothing to replay on without a model, and causal order needs the virtual clock (for now).
    assert_usage_error(
        &oltplab(&dir, &["trace", "replay", "db.trace", "--virtual"]),
        "--emulate",
    );
    assert_usage_error(
        &oltplab(
            &dir,
            &[
                "trace", "replay", "db.trace", "--target", "r", "--order", "causal",
            ],
        ),
        "--virtual",
    );
    assert!(!dir.join("r").exists(), "a refused replay made no copies");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--order btreplay`: blkparse text carries each request's CPU, so it replays bunch by bunch,
/// in virtual time and with io_uring; a trace without CPU ids (an MSR CSV) is refused in one
/// sentence, exit code 2.
#[test]
fn btreplay_order_needs_the_cpu_of_each_io() {
    let dir = scratch("btreplay");
    let mut blk = String::new();
    for i in 0..400u64 {
        let (cpu, pid) = (i % 4, 700 + i % 8);
        let rw = if i % 5 == 0 { "W" } else { "R" };
        let sector = (i * 7919 % 20_000) * 32;
        let t = i * 250_000;
        writeln!(
            blk,
            "  8,0  {cpu}  {}  {}.{:09}  {pid}  Q  {rw} {sector} + 32 [db]",
            2 * i + 1,
            t / 1_000_000_000,
            t % 1_000_000_000
        )
        .unwrap();
        let t = t + 4_000_000;
        writeln!(
            blk,
            "  8,0  {cpu}  {}  {}.{:09}  0  C  {rw} {sector} + 32 [0]",
            2 * i + 2,
            t / 1_000_000_000,
            t % 1_000_000_000
        )
        .unwrap();
    }
    std::fs::write(dir.join("blk.txt"), blk).unwrap();
    let mut iops = Vec::new();
    for order in ["lanes", "btreplay"] {
        let file = format!("{order}.json");
        let out = oltplab(
            &dir,
            &[
                "trace",
                "replay",
                "blk.txt",
                "--emulate",
                "hdd-10k",
                "--virtual",
                "--order",
                order,
                "--json",
                &file,
                "--out",
                order,
            ],
        );
        assert_ok(&out);
        let s = &json(&dir.join(&file))["summary"];
        assert_eq!(s["order"], order);
        assert_eq!(s["read"]["ios"], 320);
        assert!(s["mean_in_flight"].as_f64().unwrap() > 0.0);
        iops.push((
            s["iops"].as_f64().unwrap(),
            s["mean_in_flight"].as_f64().unwrap(),
        ));
        if order == "btreplay" {
            assert_eq!(s["bunching"]["streams"], 4);
            assert_eq!(s["bunching"]["bunch_size"], 8);
            assert_eq!(s["bunching"]["bunch_time_ns"], 10_000_000);
            assert_eq!(s["bunching"]["iocbs"], 512);
            assert!(text(&out).contains("bunches"), "{}", text(&out));
        } else {
            assert!(s.get("bunching").is_none());
        }
    }
    // Every I/O queued up front: a deeper queue than the 8 threads' lanes, and no fewer IOPS.
    assert!(iops[1].1 > iops[0].1 * 4.0, "{iops:?}");
    assert!(iops[1].0 >= iops[0].0, "{iops:?}");
    // Bunch options, on a real device through io_uring.
    let out = oltplab(
        &dir,
        &[
            "trace",
            "replay",
            "blk.txt",
            "--target",
            "copies",
            "--buffered",
            "--order",
            "btreplay",
            "--bunch-time",
            "2ms",
            "--bunch-size",
            "4",
            "--iocbs",
            "16",
            "--json",
            "real.json",
            "--out",
            "real",
        ],
    );
    if text(&out).contains("io_uring") && !out.status.success() {
        oltplab_core::testing::skip(
            oltplab_core::testing::Need::Kernel,
            "io_uring is unavailable, so the real-time btreplay cannot run",
        );
    } else {
        assert_ok(&out);
        let s = &json(&dir.join("real.json"))["summary"];
        assert_eq!(s["clock"], "real");
        assert_eq!(s["ops"], 400);
        assert_eq!(s["bunching"]["bunch_size"], 4);
        assert_eq!(s["bunching"]["iocbs"], 16);
    }
    // Bunch options belong to btreplay; sizes btrecord refuses are refused.
    assert_one_line_usage_error(
        &oltplab(
            &dir,
            &[
                "trace",
                "replay",
                "blk.txt",
                "--emulate",
                "hdd-10k",
                "--virtual",
                "--bunch-size",
                "4",
            ],
        ),
        "--order btreplay",
    );
    assert_one_line_usage_error(
        &oltplab(
            &dir,
            &[
                "trace",
                "replay",
                "blk.txt",
                "--emulate",
                "hdd-10k",
                "--virtual",
                "--order",
                "btreplay",
                "--bunch-size",
                "513",
            ],
        ),
        "--bunch-size 513",
    );
    // An MSR CSV has no CPU ids: one sentence, exit code 2, in either clock.
    msr_csv(&dir);
    assert_ok(&oltplab(
        &dir,
        &[
            "trace", "convert", "db.csv", "--to", "oltplab", "-o", "db.trace",
        ],
    ));
    for clock in [
        &["--emulate", "hdd-10k", "--virtual"][..],
        &["--target", "msr-copies"][..],
    ] {
        let mut args = vec!["trace", "replay", "db.trace", "--order", "btreplay"];
        args.extend_from_slice(clock);
        assert_one_line_usage_error(&oltplab(&dir, &args), "no CPU ids");
    }
    assert!(
        !dir.join("msr-copies").exists(),
        "a refused replay made no copies"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The shim records the CPU each call was issued on: `trace stat` counts the CPUs, and the
/// capture replays in btreplay order.
#[test]
fn a_shim_capture_carries_cpu_ids_for_btreplay() {
    let dir = scratch("shim-cpus");
    let out = oltplab(
        &dir,
        &[
            "emulate",
            "--device",
            "pcie-flash-2012",
            "--path",
            "em",
            "--backing",
            "ram",
            "--trace",
            "em.trace",
            "-q",
            "--",
            "sh",
            "-c",
            "for i in 1 2 3; do dd if=/dev/zero of=em/f$i bs=4k count=40 conv=fsync 2>/dev/null & done; wait",
        ],
    );
    assert_ok(&out);
    assert_ok(&oltplab(
        &dir,
        &["trace", "stat", "em.trace", "--json", "stat.json"],
    ));
    let stat = json(&dir.join("stat.json"));
    assert!(stat["cpus"].as_u64().unwrap() >= 1, "{stat}");
    let out = oltplab(
        &dir,
        &[
            "trace",
            "replay",
            "em.trace",
            "--virtual",
            "--emulate",
            "pcie-flash-2012",
            "--order",
            "btreplay",
            "--json",
            "bt.json",
            "--out",
            "bt",
        ],
    );
    assert_ok(&out);
    let s = &json(&dir.join("bt.json"))["summary"];
    assert_eq!(s["write"]["ios"], 120);
    assert!(s["bunching"]["cpus"].as_u64().unwrap() >= 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// oltplab's own SQLite trace replays with the default direct I/O: SQLite's WAL gets 24-byte
/// frame headers that O_DIRECT cannot carry, and direct writes beside buffered ones on one file
/// made the kernel fail the WAL's syncs (EIO). That file is replayed buffered, and said so.
#[test]
fn an_sqlite_trace_replays_direct_with_its_wal_through_the_page_cache() {
    let dir = scratch("replay-sqlite");
    let db = ["--data-dir", "data"];
    let run = |args: &[&str]| {
        let all: Vec<&str> = args.iter().chain(db.iter()).copied().collect();
        let out = oltplab(&dir, &all);
        assert!(out.status.success(), "{all:?}: {}", text(&out));
    };
    run(&["-q", "load", "tpcc"]);
    run(&[
        "-q",
        "run",
        "tpcc",
        "--duration",
        "3s",
        "--warmup",
        "0s",
        "--trace",
        "t.trace",
        "--out",
        "r",
    ]);
    let out = oltplab(
        &dir,
        &[
            "trace",
            "replay",
            "t.trace",
            "--target",
            "copies",
            "--as-fast-as-possible",
            "--json",
            "replay.json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let doc = json(&dir.join("replay.json"));
    assert!(doc["summary"]["ops"].as_u64().unwrap() > 0);
    assert!(
        doc["summary"]["sync"]["ops"].as_u64().unwrap() > 0,
        "{}",
        doc["summary"]
    );
    let said: Vec<String> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        said.iter()
            .any(|m| m.contains("-wal") && m.contains("through the page cache entirely")),
        "{said:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
