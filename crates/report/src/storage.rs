//! The storage-configuration studies, S2 (`cache-tiers`) and S3 (`placement`): a row per
//! configuration as the papers tabulate them, and bars of throughput, response time, CPU and each
//! device's busy share.

use serde_json::Value;

use crate::common::{self, Ids};
use crate::doc::{num, Doc};
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

pub fn is_storage(doc: &Doc) -> bool {
    matches!(
        doc.str("/summary/scenario"),
        Some("cache-tiers") | Some("placement")
    )
}

/// The label of a storage study, e.g. `study placement on postgres, 4 configurations`.
pub fn label(doc: &Doc) -> String {
    let n = doc.array("/summary/configs").len();
    format!(
        "study {} on {}, {n} configuration{}",
        doc.str("/summary/scenario").unwrap_or("?"),
        doc.str("/summary/engine").unwrap_or("?"),
        if n == 1 { "" } else { "s" }
    )
}

fn name(c: &Value) -> String {
    c.get("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string()
}

/// Each device's busy share and read-cache hits, as one text cell.
fn devices_text(c: &Value) -> String {
    let devices = c["devices"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    devices
        .iter()
        .map(|d| {
            let n = d["name"].as_str().unwrap_or("?");
            let busy = num(d, "/busy_pct").map_or("?".into(), |b| format!("{b:.0} %"));
            match num(d, "/read_cache_hit_pct") {
                Some(h) => format!("{n}: busy {busy}, read cache hits {h:.0} %"),
                None => format!("{n}: busy {busy}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The throughput's unit: New-Orders/min (TPC-C) or Trade-Results/s (brokerage).
fn unit(doc: &Doc) -> String {
    doc.array("/summary/configs")
        .first()
        .and_then(|c| c["throughput_unit"].as_str())
        .unwrap_or("throughput")
        .to_string()
}

fn table(doc: &Doc) -> Table {
    let mut t = Table::new(
        "configs",
        "Storage configurations",
        vec![
            Column::new("name", "configuration", Unit::Text),
            Column::new("throughput", &unit(doc), Unit::Number),
            Column::new("throughput_vs_first", "vs first", Unit::Number),
            Column::new("io_iops", "IOPS", Unit::Number),
            Column::new("lat_ns_mean", "mean response", Unit::Ns),
            Column::new("lat_ns_p90", "p90 response", Unit::Ns),
            Column::new("cpu_utilisation", "CPU busy", Unit::Share),
            Column::new(
                "devices",
                "devices: busy share (100 − idle), read-cache hits",
                Unit::Text,
            ),
            Column::new("warnings", "less reliable", Unit::Text),
            Column::new("spec", "spec", Unit::Text),
        ],
    );
    for c in doc.array("/summary/configs") {
        t.push(vec![
            Cell::Text(name(c)),
            Cell::Num(num(c, "/throughput")),
            Cell::Num(num(c, "/throughput_vs_first")),
            Cell::Num(num(c, "/io_iops")),
            Cell::Num(num(c, "/lat_ns/mean")),
            Cell::Num(num(c, "/lat_ns/p90")),
            Cell::Num(num(c, "/cpu_utilisation")),
            Cell::Text(devices_text(c)),
            Cell::Text(crate::run::kinds(c)),
            Cell::Text(c["spec"].as_str().unwrap_or("").to_string()),
        ]);
    }
    t
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let scenario = doc.str("/summary/scenario").unwrap_or("?");
    let study = if scenario == "placement" {
        "where the files live, S3"
    } else {
        "storage behind the controller, S2"
    };
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Study ({study}): {}", doc.label),
        doc.label.clone(),
        "study",
    );
    s.notes.push(format!(
        "{}, {} terminals, each configuration on a fresh copy of the same loaded database; the device figures are the emulator's own (busy = time with an I/O in service).",
        match doc.num("/summary/customers") {
            Some(c) => format!("The brokerage workload (TPC-E-like), {c} customers"),
            None => format!(
                "TPC-C, {} warehouse(s)",
                doc.num("/summary/warehouses").map_or("?".into(), |v| v.to_string())
            ),
        },
        doc.num("/summary/terminals").map_or("?".into(), |v| v.to_string()),
    ));
    if let (Some(t), Some(share)) = (
        doc.str("/summary/hot_table"),
        doc.num("/summary/hot_table_share_pct"),
    ) {
        s.notes.push(format!(
            "The hottest table, {t}, had {share:.1} % of the first configuration's reads and writes; the third configuration puts it (with its indexes) on flash."
        ));
    }
    let configs = doc.array("/summary/configs");
    if charts && !configs.is_empty() {
        let mut ids = Ids::new(&s.id);
        let cats: Vec<String> = configs.iter().map(name).collect();
        let col = |p: &str, f: f64| -> Vec<Option<f64>> {
            configs.iter().map(|c| num(c, p).map(|v| v * f)).collect()
        };
        s.chart(
            svg::bars(
                &ids.next(),
                "Throughput by storage configuration",
                &format!("{} of each configuration.", unit(doc)),
                &cats,
                &[Series::bars(unit(doc), col("/throughput", 1.0))],
                &Axis::new(unit(doc), Scale::Linear, si),
                false,
                None,
            ),
            "What each storage configuration gives the same database and users.",
        );
        s.chart(
            svg::bars(
                &ids.next(),
                "Response time by storage configuration",
                "Mean and 90th-percentile response time over every transaction type.",
                &cats,
                &[
                    Series::bars("mean", col("/lat_ns/mean", 1.0)),
                    Series::bars("p90", col("/lat_ns/p90", 1.0)),
                ],
                &Axis::new("response time", Scale::Linear, ns_short),
                false,
                None,
            ),
            "S2 and S3 report the mean response time; the 90th percentile shows the tail.",
        );
        let busiest: Vec<Option<f64>> = configs
            .iter()
            .map(|c| {
                c["devices"]
                    .as_array()?
                    .iter()
                    .filter_map(|d| num(d, "/busy_pct"))
                    .reduce(f64::max)
            })
            .collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "CPU and the busiest device by storage configuration",
                "CPU utilisation and the busy share of the busiest device of each configuration, in percent.",
                &cats,
                &[
                    Series::bars("CPU busy %", col("/cpu_utilisation", 100.0)),
                    Series::bars("busiest device busy %", busiest),
                ],
                &Axis::new("percent", Scale::Linear, si),
                false,
                None,
            ),
            "S3's view: while a device is never idle the storage is the bound; once the CPU is, storage no longer matters.",
        );
    }
    s.table(table(doc));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}
