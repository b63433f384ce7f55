//! `oltplab run … --layout`: each role's files on its own emulated device, on every engine. The
//! trace must show the log's writes on the log device, data reads on the data device, and a placed
//! table's reads on its device; the result gives I/O per device and per table, and `trace stat`
//! the same I/O per table from the trace alone.

use crate::common;

use common::{assert_ok, assert_usage_error, json, oltplab, scratch, server_installed};
use oltplab_devmodel::slot_device;
use oltplab_trace::TraceData;
use serde_json::Value;

/// Loads one warehouse, runs it on `layout` with a trace, and returns the trace and the result.
fn layout_run(engine: &str, layout: &str) -> (TraceData, Value) {
    let dir = scratch(&format!("layout-{engine}"));
    assert_ok(&oltplab(
        &dir,
        &[
            "load",
            "tpcc",
            "--engine",
            engine,
            "--data-dir",
            "db",
            "-w",
            "1",
            "--no-check",
        ],
    ));
    assert_ok(&oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--engine",
            engine,
            "--data-dir",
            "db",
            "--terminals",
            "2",
            "--warmup",
            "1s",
            "--duration",
            "4s",
            "--layout",
            layout,
            "--trace",
            "run.trace",
            "--out",
            "res",
        ],
    ));
    let trace = TraceData::load(&dir.join("run.trace")).unwrap();
    let result = json(&dir.join("res/result.json"));
    if engine == "sqlite" {
        // A placed table lives in its own file now, which every connection attaches: TPC-C's
        // consistency conditions still hold over both files.
        assert_ok(&oltplab(&dir, &["check", "tpcc", "--data-dir", "db"]));
    }
    // The trace carries the table map: `trace stat` counts I/O per table as the result does.
    let stat = oltplab(&dir, &["trace", "stat", "run.trace", "--json", "stat.json"]);
    assert_ok(&stat);
    assert!(
        String::from_utf8_lossy(&stat.stdout).contains("table (indexes with it)"),
        "{engine}: trace stat prints its table"
    );
    let counts = |groups: &Value| -> Vec<(String, u64, u64)> {
        groups
            .as_array()
            .unwrap_or_else(|| panic!("{engine}: no table list"))
            .iter()
            .map(|g| {
                (
                    g["name"].as_str().unwrap().to_string(),
                    g["reads"].as_u64().unwrap(),
                    g["writes"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        counts(&json(&dir.join("stat.json"))["per_table"]),
        counts(&result["summary"]["io"]["by_table"]),
        "{engine}: trace stat and the result agree per table"
    );
    {
        // A table the loaded schema lacks: one sentence naming its tables, nothing written.
        let out = oltplab(
            &dir,
            &[
                "run",
                "tpcc",
                "--engine",
                engine,
                "--data-dir",
                "db",
                "--duration",
                "1s",
                "--layout",
                "data=hdd-15k,table:stok=pcie-flash-2012",
                "--out",
                "bad",
            ],
        );
        assert_usage_error(&out, "has no table stok; its tables are");
        assert!(
            common::stderr(&out).contains("stock"),
            "the message lists the tables"
        );
        assert!(!dir.join("bad").exists());
    }
    // Everything needed is in memory now.
    let _ = std::fs::remove_dir_all(&dir);
    (trace, result)
}

/// The layout devices the trace's records of files matching `file` went to, with their ops.
fn devices_of(trace: &TraceData, file: impl Fn(&str) -> bool) -> Vec<(u8, u64, u64)> {
    let mut out: Vec<(u8, u64, u64)> = Vec::new();
    for r in &trace.records {
        if !file(&trace.files[r.file as usize]) {
            continue;
        }
        let d = slot_device(trace.device_slot(r.file));
        let (reads, writes) = match r.op {
            0 => (1, 0),
            1 => (0, 1),
            _ => (0, 0),
        };
        match out.iter_mut().find(|x| x.0 == d) {
            Some(x) => {
                x.1 += reads;
                x.2 += writes;
            }
            None => out.push((d, reads, writes)),
        }
    }
    out
}

/// The model's count of a window against the trace's: the same within 1 % (or 3 I/Os).
fn assert_close(model: &Value, traced: u64) {
    let m = model.as_u64().unwrap();
    assert!(
        m.abs_diff(traced) <= (traced / 100).max(3),
        "the model counted {m}, the trace {traced}"
    );
}

fn group<'a>(result: &'a Value, list: &str, name: &str) -> &'a Value {
    result["summary"]["io"][list]
        .as_array()
        .unwrap_or_else(|| panic!("no summary.io.{list}"))
        .iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| {
            panic!(
                "no {name} in summary.io.{list}: {}",
                result["summary"]["io"][list]
            )
        })
}

/// Checks a server engine's run: the log device has the log's writes and nothing else, the data
/// device the data reads, the placed table's device that table's files and exactly its I/O.
fn check_server(engine: &str, log_file: fn(&str) -> bool, stock_file: fn(&str) -> bool) {
    let layout = "data=hdd-15k,log=pcie-flash-2012,table:stock=sas-ssd-2012";
    let (trace, result) = layout_run(engine, layout);
    assert_eq!(trace.meta.device.as_deref(), Some(layout));
    let log = devices_of(&trace, log_file);
    assert_eq!(log.len(), 1, "{engine}: the log is on one device: {log:?}");
    assert_eq!(log[0].0, 1, "{engine}: the log is on the log device");
    assert!(log[0].2 > 0, "{engine}: the log was written");
    // Files on the table's device: only stock's (its heap, indexes, maps).
    let on_table_device: Vec<&String> = trace
        .records
        .iter()
        .filter(|r| slot_device(trace.device_slot(r.file)) == 2)
        .map(|r| &trace.files[r.file as usize])
        .collect();
    assert!(
        !on_table_device.is_empty(),
        "{engine}: stock's device saw I/O"
    );
    assert!(
        on_table_device.iter().all(|f| stock_file(f)),
        "{engine}: only stock's files are on its device"
    );
    let stock_reads = devices_of(&trace, |_| true)
        .iter()
        .find(|d| d.0 == 2)
        .map_or(0, |d| d.1);
    assert!(stock_reads > 0, "{engine}: stock was read");
    let data = devices_of(&trace, |f| !log_file(f));
    assert!(
        data.iter().all(|d| d.0 == 0 || d.0 == 2),
        "{engine}: everything else is on the data device: {data:?}"
    );
    assert!(
        data.iter().any(|d| d.0 == 0 && d.1 > 0),
        "{engine}: data was read on the data device: {data:?}"
    );
    // By table is the trace's, exactly: the table map names stock's files as stock. By device is
    // the model's own count over the window, read at its edges a moment apart from the trace's cut.
    let stock_table = group(&result, "by_table", "stock");
    assert_eq!(stock_table["reads"], stock_reads, "{engine}: stock's reads");
    let stock_dev = group(&result, "by_device", "table:stock=sas-ssd-2012");
    assert_close(&stock_dev["reads"], stock_reads);
    let log_dev = group(&result, "by_device", "log=pcie-flash-2012");
    assert_close(&log_dev["writes"], log[0].2);
    let busy = group(&result, "by_device", "data=hdd-15k")["busy_pct"]
        .as_f64()
        .unwrap();
    assert!(busy > 0.0 && busy <= 100.0, "{busy}");
}

#[test]
fn postgres_puts_wal_and_a_table_on_their_devices() {
    if !server_installed("initdb") {
        return;
    }
    // stock's relation files are under base/ (which ones, only the server's catalog says).
    check_server(
        "postgres",
        |f| f.starts_with("pg_wal/"),
        |f| f.starts_with("base/"),
    );
}

#[test]
fn mariadb_puts_the_redo_log_and_a_table_on_their_devices() {
    if !server_installed("mariadbd") {
        return;
    }
    check_server(
        "mariadb",
        |f| f.starts_with("ib_logfile"),
        |f| f == "oltplab/stock.ibd",
    );
}

#[test]
fn sqlite_puts_its_wal_and_a_table_on_their_devices() {
    // Two tables in files of their own, on one device: `check` (in layout_run) must find both.
    let (trace, result) = layout_run(
        "sqlite",
        "data=hdd-15k,log=pcie-flash-2012,table:stock=sas-ssd-2012,table:customer=sas-ssd-2012",
    );
    // The main file's WAL and stock's own file's WAL, both on the log device.
    let wal = devices_of(&trace, |f| f.ends_with("-wal"));
    assert_eq!(wal.len(), 1, "{wal:?}");
    assert_eq!(wal[0].0, 1, "the WAL is on the log device");
    assert!(wal[0].2 > 0);
    let stock_file = |f: &str| f.ends_with("tpcc.sqlite-table-stock");
    let main_file = |f: &str| f.ends_with("tpcc.sqlite");
    let stock = devices_of(&trace, stock_file);
    assert_eq!(stock.len(), 1, "{stock:?}");
    assert_eq!(stock[0].0, 2, "stock's file is on its device");
    assert!(stock[0].1 > 0, "stock was read on its device");
    let customer = devices_of(&trace, |f| f.ends_with("tpcc.sqlite-table-customer"));
    assert_eq!(customer.len(), 1, "{customer:?}");
    assert_eq!(customer[0].0, 2, "customer's file shares stock's device");
    let db = devices_of(&trace, main_file);
    assert_eq!(db.len(), 1);
    assert_eq!(db[0].0, 0, "the database file is on the data device");
    assert!(db[0].1 > 0);
    assert_close(
        &group(&result, "by_device", "log=pcie-flash-2012")["writes"],
        wal[0].2,
    );
    assert_close(
        &group(
            &result,
            "by_device",
            "table:stock+table:customer=sas-ssd-2012",
        )["reads"],
        stock[0].1 + customer[0].1,
    );
    assert_eq!(group(&result, "by_table", "(wal)")["writes"], wal[0].2);
    // stock's reads are exactly its file's; every read of the main file is another table's (or a
    // free page's: stock's old pages).
    assert_eq!(group(&result, "by_table", "stock")["reads"], stock[0].1);
    assert_eq!(
        group(&result, "by_table", "customer")["reads"],
        customer[0].1
    );
    let others: u64 = result["summary"]["io"]["by_table"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| !["(wal)", "stock", "customer"].contains(&g["name"].as_str().unwrap()))
        .map(|g| g["reads"].as_u64().unwrap())
        .sum();
    assert_eq!(others, db[0].1);
    assert!(
        group(&result, "by_table", "item")["reads"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn bad_layouts_end_with_one_sentence() {
    let dir = scratch("layout-bad");
    assert_ok(&oltplab(
        &dir,
        &["load", "tpcc", "--data-dir", "db", "-w", "1", "--no-check"],
    ));
    for (layout, says) in [
        ("data=hdd-15k,wal=pcie-flash-2012", "unknown role 'wal'"),
        ("data=hdd-15k,log=nvme-9", "unknown device 'nvme-9'"),
        ("log=pcie-flash-2012", "names the data device"),
    ] {
        let out = oltplab(
            &dir,
            &[
                "run",
                "tpcc",
                "--data-dir",
                "db",
                "--duration",
                "1s",
                "--layout",
                layout,
                "--out",
                "res",
            ],
        );
        assert_usage_error(&out, says);
        assert!(!dir.join("res").exists(), "{layout}: nothing written");
    }
    let out = oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--engine",
            "postgres",
            "--url",
            "postgres://nobody@/x?host=/nonexistent",
            "--layout",
            "data=hdd-15k,log=pcie-flash-2012",
        ],
    );
    assert_usage_error(&out, "--layout needs a server oltplab starts");
    let out = oltplab(
        &dir,
        &[
            "device",
            "--emulate",
            "data=hdd-15k,log=pcie-flash-2012",
            "--size",
            "16m",
        ],
    );
    assert_usage_error(&out, "a layout places a database's log");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_users_ramp_gives_one_row_per_step() {
    let dir = scratch("ramp");
    assert_ok(&oltplab(
        &dir,
        &["load", "tpcc", "--data-dir", "db", "-w", "1", "--no-check"],
    ));
    let out = oltplab(
        &dir,
        &[
            "run",
            "tpcc",
            "--data-dir",
            "db",
            "--terminals",
            "1:3:2",
            "--warmup",
            "1s",
            "--duration",
            "2s",
            "--emulate",
            "data=sata-ssd-2010,log=pcie-flash-2012",
            "--out",
            "res",
        ],
    );
    assert_ok(&out);
    let result = json(&dir.join("res/result.json"));
    let ramp = result["summary"]["ramp"].as_array().unwrap();
    let terminals: Vec<u64> = ramp
        .iter()
        .map(|s| s["terminals"].as_u64().unwrap())
        .collect();
    assert_eq!(terminals, [1, 3], "1:3:2 is two steps");
    for step in ramp {
        assert!(step["throughput"].as_f64().unwrap() > 0.0, "{step}");
        assert_eq!(step["throughput_unit"], "New-Orders/min");
        assert!(step["lat_ns"]["p90"].as_u64().unwrap() > 0);
        assert!(step["cpu_utilisation"].as_f64().unwrap() > 0.0);
        let devices = step["devices"].as_array().unwrap();
        assert_eq!(devices.len(), 2, "each device's busy share: {step}");
        assert!(devices
            .iter()
            .all(|d| d["busy_pct"].as_f64().unwrap() > 0.0));
    }
    assert_eq!(
        result["summary"]["terminals"], 3,
        "the rest is the last step's"
    );
    for (args, says) in [
        (vec!["--terminals", "8:4:1"], "ends below its start"),
        (vec!["--terminals", "0,4"], "not a terminal count"),
        (vec!["--terminals", "1:1000:1"], "at most 50"),
        (
            vec!["--terminals", "1,2", "--trace", "t.trace"],
            "--trace records one run",
        ),
        (
            vec!["--terminals", "1,2", "--keying-think"],
            "takes no users ramp",
        ),
    ] {
        let mut all = vec!["run", "tpcc", "--data-dir", "db", "--out", "bad"];
        all.extend(args);
        assert_usage_error(&oltplab(&dir, &all), says);
        assert!(!dir.join("bad").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// S3 ramped its TPC-E-like workload: the brokerage run takes the same ramp.
#[test]
fn a_brokerage_users_ramp_gives_one_row_per_step() {
    let dir = scratch("ramp-brokerage");
    assert_ok(&oltplab(
        &dir,
        &[
            "load",
            "brokerage",
            "--data-dir",
            "db",
            "--days",
            "1",
            "--no-check",
        ],
    ));
    assert_ok(&oltplab(
        &dir,
        &[
            "run",
            "brokerage",
            "--data-dir",
            "db",
            "--terminals",
            "1,3",
            "--warmup",
            "1s",
            "--duration",
            "3s",
            "--layout",
            "data=sata-ssd-2010,log=pcie-flash-2012",
            "--out",
            "res",
        ],
    ));
    let result = json(&dir.join("res/result.json"));
    let ramp = result["summary"]["ramp"].as_array().unwrap();
    let terminals: Vec<u64> = ramp
        .iter()
        .map(|s| s["terminals"].as_u64().unwrap())
        .collect();
    assert_eq!(terminals, [1, 3]);
    for step in ramp {
        assert_eq!(step["throughput_unit"], "Trade-Results/s", "{step}");
        assert!(step["tx_per_s"].as_f64().unwrap() > 0.0, "{step}");
        assert!(step["lat_ns"]["p90"].as_u64().unwrap() > 0);
        assert_eq!(step["devices"].as_array().unwrap().len(), 2, "{step}");
    }
    assert_eq!(result["summary"]["terminals"], 3);
    assert_ok(&oltplab(&dir, &["report", "res", "-o", "r.html"]));
    let report = std::fs::read_to_string(dir.join("r.html")).unwrap();
    assert!(
        report.contains("Users ramp") && report.contains("Trade-Results/s"),
        "the ramp in its unit in the report"
    );
    assert_usage_error(
        &oltplab(
            &dir,
            &[
                "run",
                "brokerage",
                "--data-dir",
                "db",
                "--terminals",
                "1,2",
                "--trace",
                "t.trace",
                "--out",
                "bad",
            ],
        ),
        "--trace records one run",
    );
    assert!(!dir.join("bad").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
