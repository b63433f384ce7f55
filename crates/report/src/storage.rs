//! The storage-configuration studies, S2 (`cache-tiers`) and S3 (`placement`): a row per
//! configuration as the papers tabulate them, and bars of throughput, response time, CPU and each
//! device's busy share. Read through the typed `StorageStudySummary`.

use oltplab_schema::{ConfigFigures, Interval, StepRepeats, StorageStudySummary};

use crate::common::{self, Ids};
use crate::doc::{Doc, Figures};
use crate::fmt::{ns_short, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Scale, Series};

pub fn is_storage(doc: &Doc) -> bool {
    summary(doc).is_some()
}

/// The summary, read typed when the result was checked (`classify::docs`).
fn summary<'a>(doc: &'a Doc) -> Option<&'a StorageStudySummary> {
    match &doc.figures {
        Figures::Storage(s) => Some(s),
        _ => None,
    }
}

fn configs<'a>(doc: &'a Doc) -> &'a [ConfigFigures] {
    summary(doc).map_or(&[], |s| s.configs.as_slice())
}

/// The label of a storage study, e.g. `study placement on postgres, 4 configurations`.
pub fn label(doc: &Doc) -> String {
    let n = configs(doc).len();
    format!(
        "study {} on {}, {n} configuration{}",
        summary(doc).map_or("?", |s| s.scenario.as_str()),
        summary(doc).map_or("?", |s| s.engine.as_str()),
        if n == 1 { "" } else { "s" }
    )
}

/// Each device's busy share and read-cache hits, as one text cell.
fn devices_text(c: &ConfigFigures) -> String {
    c.figures
        .devices
        .iter()
        .map(|d| {
            let (n, busy) = (&d.name, format!("{:.0} %", d.busy_pct));
            match d.read_cache_hit_pct {
                Some(h) => format!("{n}: busy {busy}, read cache hits {h:.0} %"),
                None => format!("{n}: busy {busy}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The throughput's unit: New-Orders/min (TPC-C) or Trade-Results/s (brokerage).
fn unit(doc: &Doc) -> String {
    configs(doc)
        .first()
        .map_or("throughput", |c| c.figures.throughput_unit.as_str())
        .to_string()
}

fn table(doc: &Doc) -> Table {
    // With `repeat`, the figures are means: the throughput's and IOPS' 95 % intervals get
    // columns of their own.
    let repeated = configs(doc).iter().any(|c| c.repeats.is_some());
    let keep = |c: &Column| repeated || !c.key.ends_with("_ci95");
    let unit = unit(doc);
    let columns = vec![
        Column::new("name", "configuration", Unit::Text),
        Column::new("throughput", &unit, Unit::Number),
        Column::new("throughput_ci95", &format!("{unit} ± (95 %)"), Unit::Number),
        Column::new("throughput_vs_first", "vs first", Unit::Number),
        Column::new("io_iops", "IOPS", Unit::Number),
        Column::new("io_iops_ci95", "IOPS ± (95 %)", Unit::Number),
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
    ];
    let kept: Vec<bool> = columns.iter().map(keep).collect();
    let mut t = Table::new(
        "configs",
        "Storage configurations",
        columns.into_iter().filter(keep).collect(),
    );
    for c in configs(doc) {
        let f = &c.figures;
        let ci95 = |i: fn(&StepRepeats) -> &Interval| c.repeats.as_ref().map(|r| i(r).ci95);
        let row = vec![
            Cell::Text(c.name.clone()),
            Cell::Num(Some(f.throughput)),
            Cell::Num(ci95(|r| &r.throughput)),
            Cell::Num(c.throughput_vs_first),
            Cell::Num(Some(f.io_iops)),
            Cell::Num(ci95(|r| &r.io_iops)),
            Cell::Num(Some(f.lat_ns.mean)),
            Cell::Num(Some(f.lat_ns.p90 as f64)),
            Cell::Num(Some(f.cpu_utilisation)),
            Cell::Text(devices_text(c)),
            Cell::Text(crate::run::warning_kinds(&f.warnings)),
            Cell::Text(c.spec.clone()),
        ];
        t.push(
            row.into_iter()
                .zip(&kept)
                .filter_map(|(cell, k)| k.then_some(cell))
                .collect(),
        );
    }
    t
}

pub fn section(doc: &Doc, index: usize, charts: bool) -> Section {
    let scenario = summary(doc).map_or("?", |s| s.scenario.as_str());
    let study = match scenario {
        "placement" => "where the files live, S3",
        "cache-tiers" => "storage behind the controller, S2",
        // A study file of S2's and S3's measurement (`measure = "storage"`).
        _ => "storage configurations",
    };
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Study ({study}): {}", doc.label),
        doc.label.clone(),
        "study",
    );
    s.notes.push(format!(
        "{}, {} terminals, each configuration on a fresh copy of the same loaded database; the device figures are the emulator's own (busy = time with an I/O in service).",
        match summary(doc).and_then(|s| s.customers) {
            Some(c) => format!("The brokerage workload (TPC-E-like), {c} customers"),
            None => format!(
                "TPC-C, {} warehouse(s)",
                summary(doc)
                    .and_then(|s| s.warehouses)
                    .map_or("?".into(), |w| w.to_string())
            ),
        },
        summary(doc).map_or("?".into(), |s| s.terminals.to_string()),
    ));
    if let (Some(t), Some(share)) = (
        summary(doc).and_then(|s| s.hot_table.as_deref()),
        summary(doc).and_then(|s| s.hot_table_share_pct),
    ) {
        s.notes.push(match scenario {
            "placement" => format!(
                "The hottest table, {t}, had {share:.1} % of the first configuration's reads and writes; the third configuration puts it (with its indexes) on flash."
            ),
            _ => format!(
                "The hottest table, {t}, had {share:.1} % of the first configuration's reads and writes; the configuration with table:hottest puts it (with its indexes) on its device."
            ),
        });
    }
    let configs = configs(doc);
    if charts && !configs.is_empty() {
        let mut ids = Ids::new(&s.id);
        let cats: Vec<String> = configs.iter().map(|c| c.name.clone()).collect();
        let col = |get: fn(&oltplab_schema::RampStep) -> f64, f: f64| -> Vec<Option<f64>> {
            configs.iter().map(|c| Some(get(&c.figures) * f)).collect()
        };
        s.chart(
            svg::bars(
                &ids.next(),
                "Throughput by storage configuration",
                &format!("{} of each configuration.", unit(doc)),
                &cats,
                &[Series::bars(unit(doc), col(|r| r.throughput, 1.0))],
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
                    Series::bars("mean", col(|r| r.lat_ns.mean, 1.0)),
                    Series::bars("p90", col(|r| r.lat_ns.p90 as f64, 1.0)),
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
                c.figures
                    .devices
                    .iter()
                    .map(|d| d.busy_pct)
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
                    Series::bars("CPU busy %", col(|r| r.cpu_utilisation, 100.0)),
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
