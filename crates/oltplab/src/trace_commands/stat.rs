//! `oltplab trace stat`: the statistics on the terminal, and as JSON with `--json`.

use std::io::Write;
use std::path::Path;

use oltplab_core::units::{format_bytes, format_count, format_ns};
use oltplab_core::Result;
use oltplab_metrics::LatencyNs;
use oltplab_trace::convert;
use oltplab_trace::stat::{TraceStat, SCHEMA};

use super::{format_arg, StatArgs};
use crate::output;

pub fn run(a: StatArgs) -> Result<()> {
    if let Some(json) = &a.json {
        output::check_json_dest(json, false, is_stat_file)?;
    }
    let (_, data, _) = convert::import(&a.file, format_arg(a.from.as_deref()))?;
    let s = TraceStat::compute(&data);
    if let Some(json) = &a.json {
        output::write_json(json, &s)?;
    }
    // The table is the answer on stdout, unless the JSON is; a closed pipe (`| head`) is not an
    // error worth reporting.
    match a.json.as_deref() {
        _ if output::quiet() => {}
        Some(json) if output::is_stdout(json) => {
            let _ = print(&mut std::io::stderr().lock(), &a.file, &s, a.seconds);
        }
        _ => {
            let _ = print(&mut std::io::stdout().lock(), &a.file, &s, a.seconds);
        }
    }
    Ok(())
}

fn is_stat_file(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("schema").and_then(|s| s.as_str()) == Some(SCHEMA))
}

fn pct(v: f64) -> String {
    format!("{v:.1} %")
}

fn lat(l: &LatencyNs) -> String {
    format!(
        "mean {} p50 {} p99 {} max {}",
        format_ns(l.mean),
        format_ns(l.p50 as f64),
        format_ns(l.p99 as f64),
        format_ns(l.max as f64)
    )
}

fn print(w: &mut impl Write, file: &Path, s: &TraceStat, seconds: usize) -> std::io::Result<()> {
    let m = &s.meta;
    writeln!(
        w,
        "{} — {} trace by {}{}{}",
        file.display(),
        m.source,
        m.tool,
        m.device
            .as_ref()
            .map(|d| format!(", device {d}"))
            .unwrap_or_default(),
        if s.complete {
            ""
        } else {
            " (INCOMPLETE: the capture did not finish; figures cover what was written)"
        }
    )?;
    writeln!(
        w,
        "{} operations by {} threads{} on {} files over {:.3} s: {} IOPS (reads + writes), {:.2} in flight on average, {} at most",
        format_count(s.records as f64),
        s.threads,
        if s.cpus > 0 {
            format!(" on {} CPUs", s.cpus)
        } else {
            String::new()
        },
        s.per_file.len(),
        s.duration_s,
        format_count(s.iops),
        s.in_flight_mean,
        s.in_flight_max
    )?;
    writeln!(w)?;
    writeln!(w, "operations        count      share   latency")?;
    let o = &s.ops;
    let total = s.records.max(1) as f64;
    let rows: [(&str, u64, Option<&LatencyNs>); 8] = [
        ("read", o.read, Some(&s.read_lat_ns)),
        ("write", o.write, Some(&s.write_lat_ns)),
        ("fsync", o.fsync, None),
        ("fdatasync", o.fdatasync, None),
        ("sync_file_range", o.sync_range, None),
        ("trim", o.trim, None),
        ("truncate", o.truncate, None),
        ("fallocate", o.fallocate, None),
    ];
    for (name, n, l) in rows {
        if n == 0 {
            continue;
        }
        writeln!(
            w,
            "  {name:<15} {:>9} {:>9}   {}",
            format_count(n as f64),
            pct(n as f64 * 100.0 / total),
            l.map(lat).unwrap_or_default()
        )?;
    }
    if o.syncs() > 0 {
        writeln!(
            w,
            "  {:<15} {:>9} {:>9}   {}",
            "(all syncs)",
            format_count(o.syncs() as f64),
            pct(s.mix.sync_pct),
            lat(&s.sync_lat_ns)
        )?;
    }
    writeln!(
        w,
        "read {} · written {} · random {} (reads {}, writes {})",
        format_bytes(s.read_bytes),
        format_bytes(s.written_bytes),
        pct(s.random_pct),
        pct(s.read_random_pct),
        pct(s.write_random_pct)
    )?;

    writeln!(w, "\nsizes (up to)       reads     writes")?;
    for c in &s.sizes {
        writeln!(
            w,
            "  {:<12} {:>10} {:>10}",
            format_bytes(c.size_bytes_max),
            format_count(c.reads as f64),
            format_count(c.writes as f64)
        )?;
    }
    let common: Vec<String> = s
        .common_sizes
        .iter()
        .map(|e| {
            format!(
                "{} bytes × {}",
                e.size_bytes,
                format_count((e.reads + e.writes) as f64)
            )
        })
        .collect();
    writeln!(w, "most common exact sizes: {}", common.join(", "))?;

    writeln!(w, "\nfile                                   reads     writes    syncs  random    read      written   extent")?;
    for f in &s.per_file {
        writeln!(
            w,
            "  {:<34} {:>8} {:>10} {:>8} {:>7} {:>9} {:>9} {:>9}",
            shorten(&f.path, 34),
            format_count(f.reads as f64),
            format_count(f.writes as f64),
            format_count(f.syncs as f64),
            format!("{:.0} %", f.random_pct),
            format_bytes(f.read_bytes),
            format_bytes(f.written_bytes),
            format_bytes(f.extent_bytes)
        )?;
    }
    if !s.per_tag.is_empty() {
        writeln!(
            w,
            "\ntransaction type      reads     writes    syncs       read    written"
        )?;
        for t in &s.per_tag {
            writeln!(
                w,
                "  {:<16} {:>9} {:>10} {:>8} {:>10} {:>10}",
                t.name,
                format_count(t.reads as f64),
                format_count(t.writes as f64),
                format_count(t.syncs as f64),
                format_bytes(t.read_bytes),
                format_bytes(t.written_bytes)
            )?;
        }
    }
    // A layout's devices and the run's tables: the same figures per group (a sync is a file's,
    // not a table's, so tables have none).
    for (title, groups, syncs) in [
        ("device of the layout", &s.per_device, true),
        ("table (indexes with it)", &s.per_table, false),
    ] {
        if groups.is_empty() {
            continue;
        }
        writeln!(
            w,
            "\n{title:<38} {:>9} {:>10} {:>8} {:>10} {:>10} {:>6} {:>6}",
            "reads", "writes", "syncs", "read", "written", "share", "busy"
        )?;
        for g in groups {
            writeln!(
                w,
                "  {:<36} {:>9} {:>10} {:>8} {:>10} {:>10} {:>4.1} % {:>4.0} %",
                shorten(&g.name, 36),
                format_count(g.reads as f64),
                format_count(g.writes as f64),
                if syncs {
                    format_count(g.syncs as f64)
                } else {
                    "—".into()
                },
                format_bytes(g.read_bytes),
                format_bytes(g.written_bytes),
                g.share_pct,
                g.busy_pct
            )?;
        }
    }
    if !s.per_second.is_empty() {
        writeln!(
            w,
            "\nsecond       IOPS   read IOPS  write IOPS   syncs   in flight (mean / max)"
        )?;
        for x in s.per_second.iter().take(seconds) {
            writeln!(
                w,
                "  {:>5} {:>10} {:>10} {:>10} {:>7}   {:>8.2} / {}",
                x.t_s,
                format_count(x.iops),
                format_count(x.read_iops),
                format_count(x.write_iops),
                x.syncs,
                x.in_flight_mean,
                x.in_flight_max
            )?;
        }
        if s.per_second.len() > seconds {
            writeln!(
                w,
                "  … {} more seconds (--seconds N, or --json FILE for all)",
                s.per_second.len() - seconds
            )?;
        }
    }
    Ok(())
}

/// `…/tail` of a long path, by characters.
fn shorten(path: &str, max: usize) -> String {
    let n = path.chars().count();
    if n <= max {
        return path.to_string();
    }
    let tail: String = path.chars().skip(n - (max - 1)).collect();
    format!("…{tail}")
}
