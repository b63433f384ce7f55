//! `study` results: S1's figures — each device's 16 KiB random-read IOPS and latency relative to the
//! baseline (`summary.baseline`, else the first device), storage utilisation α per device, tpmC relative to the baseline — and
//! each device's one-sentence explanation.

use oltplab_schema::{DeviceFigures, Fidelity, Limit, ReplayOrder, StudySummary};

use crate::common::{self, auto_scale, ratio, Ids};
use crate::doc::{Doc, Figures};
use crate::fmt::{self, si, Unit};
use crate::model::{Cell, Column, Section, Table};
use crate::svg::{self, Axis, Reference, Scale, Series};

/// One device of a study, with its figures relative to the baseline.
struct Device<'a> {
    name: String,
    f: &'a DeviceFigures,
    iops: Option<f64>,
    lat_ns: Option<f64>,
    tpmc: Option<f64>,
    run_iops: Option<f64>,
    replay_iops: Option<f64>,
    alpha: Option<f64>,
}

/// The S1 summary (`summary.scenario` s1), read typed when the result was checked
/// (`classify::docs`). A scenario this version does not know gets S1's section without figures.
fn summary<'a>(doc: &'a Doc) -> Option<&'a StudySummary> {
    match &doc.figures {
        Figures::S1(s) => Some(s),
        _ => None,
    }
}

fn devices<'a>(doc: &'a Doc) -> Vec<Device<'a>> {
    summary(doc)
        .map(|s| s.devices.as_slice())
        .unwrap_or(&[])
        .iter()
        .map(|f| Device {
            name: f.name.clone(),
            f,
            iops: Some(f.randread16k_iops),
            lat_ns: Some(f.randread16k_lat_ns),
            tpmc: Some(f.tpmc),
            run_iops: Some(f.run_iops),
            replay_iops: Some(f.replay_iops),
            // α as the study stored it; from its definition where it stored none (no bound).
            alpha: f
                .alpha
                .or_else(|| ratio(Some(f.run_iops), Some(f.replay_iops))),
        })
        .collect()
}

/// The device the others are compared with: the one `summary.baseline` names, else the first.
fn baseline(doc: &Doc, devs: &[Device]) -> usize {
    summary(doc)
        .and_then(|s| s.baseline.as_deref())
        .and_then(|name| devs.iter().position(|d| d.name == name))
        .unwrap_or(0)
}

/// `limit`'s name as the result spells it.
fn limit_name(limit: Limit) -> String {
    serde_json::to_value(limit)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// An emulated run's fidelity, if it measured any I/O.
fn run_fidelity(f: &DeviceFigures) -> Option<&Fidelity> {
    f.run_fidelity.as_ref().filter(|x| x.ios > 0)
}

fn devices_table(devs: &[Device], base: usize) -> Table {
    let base = devs.get(base);
    // With `study --repeat`, tpmC and α are means: their 95 % intervals get columns of their own.
    let repeated = devs.iter().any(|d| d.f.repeats.is_some());
    let keep = |c: &Column| repeated || !c.key.ends_with("_ci95");
    let columns = vec![
        Column::new("device", "device", Unit::Text),
        Column::new("spec", "spec", Unit::Text),
        Column::new("randread16k_iops", "16k read IOPS", Unit::Count),
        Column::new("randread16k_iops_ratio", "IOPS ×", Unit::Ratio),
        Column::new("randread16k_lat_ns", "latency", Unit::Ns),
        Column::new("randread16k_lat_ratio", "latency ×", Unit::Ratio),
        Column::new("tpmc", "tpmC", Unit::Number),
        Column::new("tpmc_ci95", "tpmC ± (95 %)", Unit::Number),
        Column::new("tpmc_ratio", "tpmC ×", Unit::Ratio),
        Column::new("run_iops", "IOPS in TPC-C", Unit::Count),
        Column::new("replay_iops", "IOPS in replay", Unit::Count),
        Column::new("alpha", "α", Unit::Number),
        Column::new("alpha_ci95", "α ± (95 %)", Unit::Number),
        Column::new("bound_order", "α against", Unit::Text),
        Column::new("replay_causal_iops", "IOPS in causal replay", Unit::Count),
        Column::new("alpha_causal", "α causal", Unit::Number),
        Column::new(
            "replay_btreplay_iops",
            "IOPS in btreplay replay",
            Unit::Count,
        ),
        Column::new("alpha_btreplay", "α btreplay", Unit::Number),
        Column::new("run_fidelity", "run off model", Unit::Text),
        Column::new("run_fidelity_p99", "run p99 off model", Unit::Text),
        Column::new(
            "run_cpu_queue_late",
            "I/Os late by waits for a core",
            Unit::Text,
        ),
        Column::new("limit", "limited by", Unit::Text),
    ];
    let kept: Vec<bool> = columns.iter().map(keep).collect();
    let mut t = Table::new(
        "devices",
        &format!(
            "Devices (× against the baseline, {})",
            base.map_or("the first device", |b| b.name.as_str())
        ),
        columns.into_iter().filter(keep).collect(),
    );
    for d in devs {
        let b = |f: fn(&Device) -> Option<f64>| base.and_then(f);
        let cells = vec![
            Cell::Text(d.name.clone()),
            Cell::text(&d.f.spec),
            Cell::Num(d.iops),
            Cell::Num(ratio(d.iops, b(|x| x.iops))),
            Cell::Num(d.lat_ns),
            Cell::Num(ratio(d.lat_ns, b(|x| x.lat_ns))),
            Cell::Num(d.tpmc),
            Cell::Num(d.f.repeats.as_ref().map(|r| r.tpmc.ci95)),
            Cell::Num(ratio(d.tpmc, b(|x| x.tpmc))),
            Cell::Num(d.run_iops),
            Cell::Num(d.replay_iops),
            Cell::Num(d.alpha),
            Cell::Num(d.f.repeats.as_ref().map(|r| r.alpha.ci95)),
            // Which replay is the bound: the better of the two orders on an emulated device.
            Cell::text(
                d.f.bound_order
                    .map_or(String::new(), |o| format!("{} replay", ReplayOrderName(o))),
            ),
            Cell::Num(d.f.replay_causal_iops),
            Cell::Num(d.f.alpha_causal),
            Cell::Num(d.f.replay_btreplay_iops),
            Cell::Num(d.f.alpha_btreplay),
            // What the emulated device gave against the model (the realised latency less the
            // threads' waits for a core; older results: the realised one); beyond ±5 % marked.
            Cell::text(
                fidelity(d.f, |x| (x.emulated_off_pct, x.off_pct)).map_or(String::new(), |p| {
                    format!("{p:+.1} %{}", if p.abs() > 5.0 { " (off)" } else { "" })
                }),
            ),
            // The same at p99: beyond ±25 % the tail is off, whatever the mean.
            Cell::text(
                fidelity(d.f, |x| (x.emulated_p99_off_pct, x.p99_off_pct))
                    .filter(|_| run_fidelity(d.f).is_some())
                    .map_or(String::new(), |p| {
                        format!("{p:+.0} %{}", if p.abs() > 25.0 { " (off)" } else { "" })
                    }),
            ),
            // The machine's load: I/Os late only because their thread then queued for a core.
            Cell::text(
                run_fidelity(d.f)
                    .map(|x| x.cpu_queue_late_pct)
                    .map_or(String::new(), |p| format!("{p:.0} %")),
            ),
            Cell::text(limit_name(d.f.breakdown.limit)),
        ];
        t.push(
            cells
                .into_iter()
                .zip(&kept)
                .filter_map(|(c, &k)| k.then_some(c))
                .collect(),
        );
    }
    t
}

/// The sentence the study wrote about a device.
fn explanation(f: &DeviceFigures) -> Option<&str> {
    Some(f.explanation.as_str()).filter(|s| !s.trim().is_empty())
}

/// A study's section; `by` picks the axes of a study file's charts (other studies have fixed ones).
pub fn section(
    doc: &Doc,
    index: usize,
    charts: bool,
    by: Option<&[crate::cells::CellAxis]>,
) -> Section {
    if crate::cells::is_cells(doc) {
        return crate::cells::section(doc, index, charts, by);
    }
    if crate::in_memory::is_in_memory(doc) {
        return crate::in_memory::section(doc, index, charts);
    }
    if crate::profiles::is_profiles(doc) {
        return crate::profiles::section(doc, index, charts);
    }
    if crate::storage::is_storage(doc) {
        return crate::storage::section(doc, index, charts);
    }
    if crate::cluster::is_cluster(doc) {
        return crate::cluster::section(doc, index, charts);
    }
    let mut s = Section::new(
        format!("r{}", index + 1),
        format!("Study: {}", doc.label),
        doc.label.clone(),
        "study",
    );
    let devs = devices(doc);
    for d in &devs {
        if let Some(e) = explanation(d.f) {
            s.notes.push(format!("{}: {e}", d.name));
        }
    }
    let base = baseline(doc, &devs);
    if charts && !devs.is_empty() {
        let mut ids = Ids::new(&s.id);
        study_charts(&mut s, &mut ids, &devs, base);
    }
    s.table(devices_table(&devs, base));
    let new_orders: Vec<(String, crate::run::IoPerTx)> = devs
        .iter()
        .filter_map(|d| {
            let io = d.f.io_by_tx.get("new_order")?;
            Some((d.name.clone(), crate::run::IoPerTx::of(io)))
        })
        .collect();
    s.table(crate::run::io_per_tx_table(
        "io_per_new_order",
        "I/O per New-Order in the TPC-C run of each device",
        "device",
        &new_orders,
    ));
    common::warnings(&mut s, doc);
    common::context(&mut s, &[doc]);
    s
}

#[allow(clippy::too_many_arguments)]
fn relative_chart(
    s: &mut Section,
    id: String,
    devs: &[Device],
    base_i: usize,
    title: &str,
    what: &str,
    get: fn(&Device) -> Option<f64>,
    caption: &str,
) {
    let base = devs.get(base_i).and_then(get);
    let names: Vec<String> = devs.iter().map(|d| d.name.clone()).collect();
    let rel: Vec<Option<f64>> = devs.iter().map(|d| ratio(get(d), base)).collect();
    let scale = auto_scale(rel.iter().flatten().copied().chain([1.0]));
    let desc = names
        .iter()
        .zip(&rel)
        .map(|(n, r)| format!("{n} {}", fmt::value(*r, Unit::Ratio)))
        .collect::<Vec<_>>()
        .join(", ");
    s.chart(
        svg::bars(
            &id,
            title,
            &format!("{what} relative to {}: {desc}.", devs[base_i].name),
            &names,
            &[Series::bars(what, rel)],
            &Axis::new(format!("× {}", devs[base_i].name), scale, fmt::ratio_short),
            false,
            Some(&Reference {
                value: 1.0,
                label: format!("{} = 1×", devs[base_i].name),
            }),
        ),
        caption,
    );
}

fn study_charts(s: &mut Section, ids: &mut Ids, devs: &[Device], base: usize) {
    relative_chart(
        s,
        ids.next(),
        devs,
        base,
        "16 KiB random-read IOPS relative to the baseline",
        "IOPS",
        |d| d.iops,
        "S1's first figure: what each device delivers to a database-like read load, as a multiple of the baseline device.",
    );
    relative_chart(
        s,
        ids.next(),
        devs,
        base,
        "16 KiB random-read latency relative to the baseline",
        "latency",
        |d| d.lat_ns,
        "Mean latency of 16 KiB random reads as a multiple of the baseline's: below 1× is faster (S1 quotes 1/16.7 and 1/160).",
    );
    let names: Vec<String> = devs.iter().map(|d| d.name.clone()).collect();
    let alphas: Vec<Option<f64>> = devs.iter().map(|d| d.alpha).collect();
    let causal: Vec<Option<f64>> = devs.iter().map(|d| d.f.alpha_causal).collect();
    let btreplay: Vec<Option<f64>> = devs.iter().map(|d| d.f.alpha_btreplay).collect();
    let mut series = vec![Series::bars(
        "α (against the better replay)",
        alphas.clone(),
    )];
    if causal.iter().any(Option::is_some) {
        series.push(Series::bars("α causal (the run's ordering kept)", causal));
    }
    if btreplay.iter().any(Option::is_some) {
        series.push(Series::bars("α btreplay (bunches per CPU)", btreplay));
    }
    s.chart(
        svg::bars(
            &ids.next(),
            "Storage utilisation α per device",
            &format!(
                "α = IOPS during TPC-C / IOPS of the trace replay: {}.",
                names
                    .iter()
                    .zip(&alphas)
                    .map(|(n, a)| format!("{n} {}", fmt::value(*a, Unit::Number)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            &names,
            &series,
            &Axis::new("α", Scale::Linear, si),
            false,
            Some(&Reference {
                value: 1.0,
                label: "α = 1: the device is kept busy".into(),
            }),
        ),
        "α near 1 means the database keeps the device busy; a low α means something else (CPU, locks, the driver) limits it. α is against the best of the replays: lanes, each traced thread one synchronous I/O at a time with the threads free; causal, which keeps the run's own ordering (what the database serialised stays serial); and btreplay, blktrace's block-level replay as S1's era ran it (each CPU's I/O in bunches submitted back to back, the whole trace queued at the device); the table says which. Where the first is the better, the gap between the two bars is the device's gain from concurrency the database did not use. Above 1.05 a replay was no bound.",
    );
    relative_chart(
        s,
        ids.next(),
        devs,
        base,
        "tpmC relative to the baseline",
        "tpmC",
        |d| d.tpmc,
        "What the faster device gives the database: TPC-C throughput as a multiple of the baseline's. Compare with the IOPS ratio above.",
    );
    let run: Vec<Option<f64>> = devs.iter().map(|d| d.run_iops).collect();
    let replay: Vec<Option<f64>> = devs.iter().map(|d| d.replay_iops).collect();
    let scale = auto_scale(run.iter().chain(&replay).flatten().copied());
    s.chart(
        svg::bars(
            &ids.next(),
            "IOPS during TPC-C and during its replay",
            "IOPS each device served during the TPC-C run and during the as-fast-as-possible replay of its trace.",
            &names,
            &[Series::bars("during TPC-C", run), Series::bars("replay", replay)],
            &Axis::new("IOPS", scale, si),
            false,
            None,
        ),
        "The two numbers whose ratio is α.",
    );
    // The emulator's fidelity as distributions: a mean can agree while the tail is far off.
    let emulated: Vec<(&Device, &Fidelity)> = devs
        .iter()
        .filter_map(|d| Some((d, run_fidelity(d.f)?)))
        .collect();
    let quantiles = [("p50", "p50"), ("p99", "p99"), ("p999", "p99.9")];
    let fidelity_series: Vec<Series> = quantiles
        .iter()
        .flat_map(|(key, label)| {
            ["modelled", "emulated", "realised"].map(|side| {
                Series::bars(
                    format!("{side} {label}"),
                    emulated
                        .iter()
                        .map(|(_, x)| Some(latency(x, side, key) as f64).filter(|v| *v > 0.0))
                        .collect(),
                )
            })
        })
        .collect();
    if fidelity_series
        .iter()
        .any(|s| s.values.iter().any(Option::is_some))
    {
        let names: Vec<String> = emulated.iter().map(|(d, _)| d.name.clone()).collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "The run's I/O latency: realised against modelled",
                &format!(
                    "Percentiles of the database's I/O latency on each emulated device: as the model completed each I/O, as the emulated device released it, and as the database saw it (after its thread also queued for a free core): {}.",
                    emulated
                        .iter()
                        .map(|(d, x)| format!(
                            "{} p99 {} modelled, {} emulated, {} realised",
                            d.name,
                            fmt::value(Some(x.modelled_lat_ns_p99 as f64), Unit::Ns),
                            fmt::value(Some(x.emulated_lat_ns_p99 as f64), Unit::Ns),
                            fmt::value(Some(x.realised_lat_ns_p99 as f64), Unit::Ns)
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                &names,
                &fidelity_series,
                &Axis::new("latency", Scale::Log, fmt::ns_short),
                false,
                None,
            ),
            "The modelled and emulated bars should match: the emulator holds every I/O until the model completes it, never less, so an emulated bar above its modelled one is the emulator's lateness (the table marks a p99 beyond ±25 %; such a device's figures are less reliable). A realised bar above the emulated one is time the database's threads then queued for a free core, as they would after a real device's completions: the machine's load.",
        );
    }
    let share = |d: &Device, k: &str| {
        let b = &d.f.breakdown;
        Some(match k {
            "io_wait_share" => b.io_wait_share,
            "cpu_share" => b.cpu_share,
            _ => b.other_share,
        })
    };
    let parts: Vec<Series> = [
        ("io_wait_share", "in reads, writes and syncs"),
        ("cpu_share", "on the CPU"),
        ("other_share", "other (locks, waiting)"),
    ]
    .iter()
    .map(|(k, label)| Series::bars(*label, devs.iter().map(|d| share(d, k)).collect()))
    .collect();
    s.chart(
        svg::bars(
            &ids.next(),
            "Where the terminals' time went",
            &format!(
                "Share of the terminals' time in I/O calls, on the CPU and elsewhere, per device: {}.",
                devs.iter()
                    .map(|d| format!(
                        "{} I/O {}, CPU {}",
                        d.name,
                        fmt::value(share(d, "io_wait_share"), Unit::Share),
                        fmt::value(share(d, "cpu_share"), Unit::Share)
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            &names,
            &parts,
            &Axis::new("share of the terminals' time", Scale::Linear, |v| {
                format!("{:.0} %", v * 100.0)
            }),
            true,
            None,
        ),
        "What limited each run: time in I/O calls points at the device, CPU time at the engine, the rest at locks and waiting.",
    );
}

pub fn comparison(docs: &[&Doc], charts: bool) -> Section {
    let mut s = Section::new(
        "cmp-study".into(),
        format!("Comparison of {} studies", docs.len()),
        "comparison".into(),
        "study",
    );
    let mut t = Table::new(
        "comparison",
        "Devices of every study",
        vec![
            Column::new("result", "result", Unit::Text),
            Column::new("device", "device", Unit::Text),
            Column::new("randread16k_iops", "16k read IOPS", Unit::Count),
            Column::new("tpmc", "tpmC", Unit::Number),
            Column::new("alpha", "α", Unit::Number),
        ],
    );
    let all: Vec<Vec<Device>> = docs.iter().map(|d| devices(d)).collect();
    let mut names: Vec<String> = Vec::new();
    for (d, devs) in docs.iter().zip(&all) {
        for dev in devs {
            t.push(vec![
                Cell::Text(d.label.clone()),
                Cell::Text(dev.name.clone()),
                Cell::Num(dev.iops),
                Cell::Num(dev.tpmc),
                Cell::Num(dev.alpha),
            ]);
            if !names.contains(&dev.name) {
                names.push(dev.name.clone());
            }
        }
    }
    if charts {
        let mut ids = Ids::new(&s.id);
        let series: Vec<Series> = docs
            .iter()
            .zip(&all)
            .map(|(d, devs)| {
                Series::bars(
                    d.label.clone(),
                    names
                        .iter()
                        .map(|n| devs.iter().find(|x| &x.name == n).and_then(|x| x.alpha))
                        .collect(),
                )
            })
            .collect();
        s.chart(
            svg::bars(
                &ids.next(),
                "α per device and study",
                "Storage utilisation α of each device, one bar per study.",
                &names,
                &series,
                &Axis::new("α", Scale::Linear, si),
                false,
                Some(&Reference {
                    value: 1.0,
                    label: "α = 1".into(),
                }),
            ),
            "Each group is one device; each colour one study.",
        );
    }
    s.table(t);
    common::context(&mut s, docs);
    s
}

/// A run fidelity figure of the emulated device (the first of `pick`), or for results written
/// before the CPU queue was split out (no emulated latency in them), the realised one (the second).
fn fidelity(f: &DeviceFigures, pick: fn(&Fidelity) -> (f64, f64)) -> Option<f64> {
    let x = f.run_fidelity.as_ref()?;
    let (emulated, realised) = pick(x);
    Some(if x.emulated_lat_ns_mean > 0.0 {
        emulated
    } else {
        realised
    })
}

/// A latency percentile (`p50`, `p99`, `p999`) of one side of the emulation.
fn latency(x: &Fidelity, side: &str, key: &str) -> u64 {
    match (side, key) {
        ("modelled", "p50") => x.modelled_lat_ns_p50,
        ("modelled", "p99") => x.modelled_lat_ns_p99,
        ("modelled", _) => x.modelled_lat_ns_p999,
        ("emulated", "p50") => x.emulated_lat_ns_p50,
        ("emulated", "p99") => x.emulated_lat_ns_p99,
        ("emulated", _) => x.emulated_lat_ns_p999,
        (_, "p50") => x.realised_lat_ns_p50,
        (_, "p99") => x.realised_lat_ns_p99,
        _ => x.realised_lat_ns_p999,
    }
}

/// A replay order's name as the result spells it.
struct ReplayOrderName(ReplayOrder);

impl std::fmt::Display for ReplayOrderName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = serde_json::to_value(self.0).ok();
        f.write_str(name.as_ref().and_then(|v| v.as_str()).unwrap_or("?"))
    }
}
