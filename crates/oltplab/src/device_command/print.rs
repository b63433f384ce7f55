//! The terminal view of `oltplab device`: what will run, one line per point, and the summary.

use std::path::Path;

use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_metrics::env::Env;
use oltplab_metrics::schema::OpSummary;
use oltplab_metrics::LatencyNs;
use oltplab_schema::DeviceResult;

use super::config::DeviceConfig;
use super::summary::Totals;
use crate::output::{note, say};

pub fn header(config: &DeviceConfig, target: Option<&Path>, env: &Env, points: usize) {
    let io = if config.engine == oltplab_io::EngineKind::Null {
        "null engine: no I/O, measures the tool's own cost".to_string()
    } else {
        format!(
            "{}, {}",
            config.engine.name(),
            if config.direct { "direct" } else { "buffered" }
        )
    };
    note!(
        "oltplab device — {io}, {} job{}, {} of {:.1} s after a {:.1} s ramp (excluded)",
        config.jobs,
        if config.jobs == 1 { "" } else { "s" },
        if points == 1 {
            "one point".to_string()
        } else {
            format!("{points} points")
        },
        config.runtime_s,
        config.ramp_s
    );
    if let (Some(spec), Some(backing)) = (&config.emulate, config.backing) {
        let backing = match backing {
            super::config::Backing::Ram => "data in RAM (/dev/shm)",
            super::config::Backing::Disk => "data on the target below",
            super::config::Backing::None => "no I/O, the model's timing only",
        };
        note!(
            "emulating {spec}: each completion at the model's time, {backing}; the region stands for the whole device"
        );
    }
    if let Some(t) = target {
        let device = env
            .target_device
            .as_ref()
            .map(|d| {
                let kind = match d.rotational {
                    Some(true) => ", rotational",
                    Some(false) => ", non-rotational",
                    None => "",
                };
                format!(" on {}{kind}", d.name)
            })
            .unwrap_or_default();
        note!(
            "target {} ({}, {}{device})",
            t.display(),
            format_bytes(config.size_bytes),
            env.target_fs.as_deref().unwrap_or("unknown file system")
        );
    }
}

pub fn point_line(label: &str, t: &Totals) -> String {
    let lat = t.latency();
    let flushes = t.flush_summary().map_or(String::new(), |f| {
        format!(
            "; {} flushes/s, flush p50 {} p99 {}",
            format_count(f.per_s),
            format_ns(f.lat_ns.p50 as f64),
            format_ns(f.lat_ns.p99 as f64)
        )
    });
    format!(
        "{label}: {} IOPS, {}/s, latency p50 {} p99 {} max {}{flushes}",
        format_count(t.iops()),
        format_bytes(t.bw_bytes() as u64),
        format_ns(lat.p50 as f64),
        format_ns(lat.p99 as f64),
        format_ns(lat.max as f64)
    )
}

fn lat_cells(l: &LatencyNs) -> String {
    [
        l.mean,
        l.p50 as f64,
        l.p90 as f64,
        l.p99 as f64,
        l.p999 as f64,
        l.max as f64,
    ]
    .iter()
    .map(|v| format!("{:>9}", format_ns(*v)))
    .collect::<String>()
}

fn op_row(name: &str, op: &OpSummary) -> String {
    if op.ios == 0 {
        return format!("{name:<18}{:>12}", "—");
    }
    format!(
        "{name:<18}{:>12}{:>12}{}",
        format_count(op.iops),
        format!("{}/s", format_bytes(op.bw_bytes as u64)),
        lat_cells(&op.lat_ns)
    )
}

pub fn summary(doc: &DeviceResult, config: &DeviceConfig, result_path: &Path) {
    let s = &doc.summary.measured;
    say!("");
    say!(
        "{:<18}{:>12}{:>12}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}",
        "",
        "IOPS",
        "bandwidth",
        "mean",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max"
    );
    if let Some(profiles) = &s.profiles {
        for p in profiles {
            for point in &p.sweep {
                let name = if p.sweep.len() > 1 {
                    format!("{} QD {}", p.name, point.qd)
                } else {
                    p.name.clone()
                };
                say!(
                    "{}",
                    op_row(&name, &combined(point.iops, point.bw_bytes, point.lat_ns))
                );
            }
            if p.sweep.len() > 1 {
                say!(
                    "{:<18}{:>12}  geometric mean over QD {}",
                    "",
                    format_count(p.geomean_iops),
                    qd_range(&p.sweep)
                );
            }
        }
    } else if let Some(sweep) = &s.sweep {
        for point in sweep {
            say!(
                "{}",
                op_row(
                    &format!("QD {}", point.qd),
                    &combined(point.iops, point.bw_bytes, point.lat_ns)
                )
            );
        }
    }
    if s.profiles.is_some() || s.sweep.is_some() {
        say!("{}", "-".repeat(18 + 24 + 54));
        say!("{:<18}(all points together)", "");
    }
    say!("{}", op_row("read", &s.read));
    say!("{}", op_row("write", &s.write));
    if let Some(f) = &s.flush {
        // A flush moves no data: its rate stands where IOPS do, and its latency on its own.
        say!(
            "{:<18}{:>12}{:>12}{}",
            "flush",
            format_count(f.per_s),
            "",
            lat_cells(&f.lat_ns)
        );
    }
    if let Some(g) = s.geomean_iops {
        say!(
            "{:<18}{:>12}  geometric mean of IOPS over all points",
            "geomean",
            format_count(g)
        );
    }
    say!(
        "measured {:.1} s (ramp {:.1} s per point excluded); I/O threads used {:.2} CPU-s ({:.0} % busy), {} I/Os per CPU-second",
        s.measured_s,
        s.ramp_s,
        s.cpu.jobs.total_s(),
        s.cpu.jobs_utilisation * 100.0,
        format_count(s.cpu.ios_per_cpu_s)
    );
    say!("result  {}", result_path.display());
    if let Some(json) = config
        .json
        .as_deref()
        .filter(|j| !crate::output::is_stdout(j))
    {
        say!("        {}", json.display());
    }
}

fn combined(iops: f64, bw_bytes: f64, lat_ns: LatencyNs) -> OpSummary {
    OpSummary {
        ios: 1,
        bytes: 0,
        iops,
        bw_bytes,
        lat_ns,
    }
}

fn qd_range(sweep: &[oltplab_metrics::schema::SweepPoint]) -> String {
    match (sweep.first(), sweep.last()) {
        (Some(a), Some(b)) => format!("{}–{}", a.qd, b.qd),
        _ => String::new(),
    }
}
