//! `oltplab run orders`: open the database, check what was loaded, run each connection count of
//! the sweep as one point (connect, warm up, fixed work), sample CPU at the edges of the measured
//! work, print a line per report interval, and save the result after every point.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use oltplab_core::units::{format_count, format_ns};
use oltplab_core::{Error, Result};
use oltplab_metrics::env::Env;
use oltplab_metrics::latency::LatencyHistogram;
use oltplab_metrics::schema::now_rfc3339;
use oltplab_metrics::{Warning, WarningKind};
use oltplab_workloads::orders::driver::{Event, PointConfig, PointOutcome, Second};
use oltplab_workloads::orders::server;
use oltplab_workloads::orders::sqlite::{self as osq, driver_threads};
use oltplab_workloads::orders::Tables;

use super::{
    check_external_limit, durability_caveat, ensure_open_files, not_loaded, open_captured,
    require_existing, OrdersRunConfig, OrdersTarget,
};
use crate::output;
use crate::workload::capture::{Capture, RunEnd};
use crate::workload::edges::Edge;
use crate::workload::scaffold::{EdgeSamples, IntervalLines};
use crate::workload::target::{Engine, Open};
use oltplab_schema::{
    ConnectionsPoint, Durability, OrdersCpu, OrdersInterval, OrdersResult, OrdersSummary, TxIo,
    WaitsInfo,
};

pub struct RunOutcome {
    pub doc: OrdersResult,
    #[allow(dead_code)]
    pub out_dir: Option<PathBuf>,
}

/// Runs every connection count of `cfg`; `stop` (Ctrl-C) ends the current point early and skips
/// the rest. Saved after every point when `cfg.save`.
pub fn run_with(cfg: &OrdersRunConfig, stop: &AtomicBool) -> Result<RunOutcome> {
    require_existing(&cfg.db)?;
    let max_connections = cfg.connections.iter().copied().max().unwrap_or(1);
    ensure_open_files(max_connections, cfg.db.engine)?;
    check_external_limit(&cfg.db, max_connections)?;
    let started_at = now_rfc3339();
    let out_dir = cfg.output.out_dir("orders", &started_at)?;
    let capture = cfg.capture.start(&cfg.db, cfg.seed, cfg.output.force)?;
    let mut db = open_captured(&cfg.db, Open::Existing, max_connections, capture.as_ref())?;
    let probe = OrdersTarget::of(&cfg.db, &db, Tables::Disk);
    let meta = probe.read_meta()?.ok_or_else(|| not_loaded(&cfg.db))?;
    if let Some(t) = cfg.tables {
        if t != meta.tables {
            return Err(Error::usage(format!(
                "{} was loaded with --tables {}, not {}: drop --tables, or load again with `oltplab load orders --tables {} --force`",
                cfg.db.location(),
                meta.tables.name(),
                t.name(),
                t.name()
            )));
        }
    }
    let mut target = OrdersTarget::of(&cfg.db, &db, meta.tables);
    if let (OrdersTarget::Sqlite(t), Some(c)) = (&mut target, &capture) {
        t.vfs = c.sqlite_vfs();
    }
    let refilled_rows = match (&target, meta.tables) {
        (OrdersTarget::Server(t), Tables::Memory) => server::refill_if_empty(t, &meta, stop)?,
        _ => 0,
    };

    let mut env = Env::collect(Some(&db.data_path));
    env.engine_version = Some(db.version.clone());
    env.engine_settings = db.settings.clone();
    if let OrdersTarget::Sqlite(t) = &target {
        sqlite_settings(&mut env.engine_settings, t.tables);
    }
    let config_json = serde_json::to_value(cfg).expect("config serialises");
    let durability = durability_of(cfg.db.engine, meta.tables, &env.engine_settings);

    if !cfg.output.quiet {
        print_header(cfg, &db.version, meta.tables, refilled_rows);
    }

    let summary = OrdersSummary {
        mode: cfg.mode.name().into(),
        tables: meta.tables.name().into(),
        connections: cfg.connections.clone(),
        tx_per_connection: cfg.tx_per_connection,
        tx_per_point: cfg.tx_per_point,
        warmup_tx_per_connection: cfg.warmup_tx_per_connection,
        durability,
        refilled_rows,
        ..Default::default()
    };
    let mut doc: OrdersResult = output::new_doc("run", started_at, config_json, env, summary);
    let cores = doc.env.cores.max(1) as f64;
    let mut outcomes: Vec<PointOutcome> = Vec::new();
    let mut cpus: Vec<OrdersCpu> = Vec::new();
    let mut t_offset = 0.0;
    for &connections in &cfg.connections {
        let point_cfg = PointConfig {
            connections,
            tx_per_connection: Some(cfg.tx_per_connection_at(connections)),
            warmup_tx_per_connection: cfg.warmup_tx_per_connection,
            mode: cfg.mode,
            scale: meta.scale,
            max_retries: cfg.max_retries,
            seed: cfg.seed.wrapping_add(connections as u64),
            record_orders: false,
        };
        if !cfg.output.quiet {
            eprintln!(
                "{connections} connections: connecting and warming up ({} transactions each) …",
                cfg.warmup_tx_per_connection
            );
        }
        // No device counters: a point's I/O comes from the capture, if any.
        let mut samples = EdgeSamples::new(&db, None, capture.as_ref());
        let mut on_event = |e: Event| samples.take(e == Event::MeasureStart);
        let mut lines = IntervalLines::new(cfg.report_interval_s, cfg.output.quiet, |s| {
            interval_line(connections, s)
        });
        let mut on_second = |s: &Second| lines.second(s);
        let outcome = match &target {
            OrdersTarget::Sqlite(t) => {
                osq::run_point(t, &meta, &point_cfg, stop, &mut on_second, &mut on_event)
            }
            OrdersTarget::Server(t) => {
                server::run_point(t, &point_cfg, stop, &mut on_second, &mut on_event)
            }
        };
        let edges = samples.edges;
        let outcome = match outcome {
            Err(Error::Interrupted) => break,
            // A managed server that died ends the sweep; what was measured before is kept.
            Err(_) if db.server_died_after_error().is_some() => break,
            other => other?,
        };
        lines.finish();
        let cpu = point_cpu(&edges, &outcome, cores);
        doc.intervals
            .extend(intervals(&outcome.seconds, connections, t_offset));
        t_offset += outcome.elapsed_s;
        doc.histograms
            .insert(format!("tx_c{connections}"), outcome.latency.to_base64());
        if !cfg.output.quiet {
            print_point(&outcome, &cpu);
        }
        outcomes.push(outcome);
        cpus.push(cpu);
        summarise(&mut doc, &outcomes, &cpus, cfg, cores);
        if let Some(dir) = &out_dir {
            output::save(&doc, dir, cfg.output.json.as_deref())?;
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    // The server's work is done; stopping it ends its trace parts and the emulation session.
    let (server_warnings, died) = db.stop_server();
    doc.warnings.extend(server_warnings);
    if outcomes.is_empty() && died.is_none() {
        return Err(Error::Interrupted);
    }
    if let (Some(c), Some(last)) = (capture, outcomes.last()) {
        // After a server's death its trace may be incomplete: the death is the error to report.
        match finish_capture(&mut doc, c, last, cfg) {
            Err(e) if died.is_none() => return Err(e),
            _ => {}
        }
    }
    cfg.output
        .publish(&doc, out_dir.as_deref(), print_summary, died)?;
    Ok(RunOutcome { doc, out_dir })
}

/// SQLite's settings as order entry runs it: its own busy handler, and for memory tables an
/// in-memory database.
fn sqlite_settings(settings: &mut BTreeMap<String, String>, tables: Tables) {
    // The workload's connections wait for the write lock in their own busy handler.
    for k in ["busy_timeout_ms", "writers"] {
        settings.remove(k);
    }
    settings.insert(
        "busy_handler".into(),
        "sleeps 20 µs, doubling to 2 ms, for up to about 60 s; then the transaction is retried"
            .into(),
    );
    if tables == Tables::Memory {
        settings.insert(
            "database".into(),
            "in-memory (memdb VFS), filled with the loaded rows (regenerated from the load's seed and scale) at the start of each point"
                .into(),
        );
        settings.insert("journal_mode".into(), "memory".into());
        settings.insert("synchronous".into(), "0".into());
    }
}

/// The line that says what runs.
fn print_header(cfg: &OrdersRunConfig, version: &str, tables: Tables, refilled_rows: u64) {
    eprintln!(
        "oltplab run orders — {} on {}, {} tables, {} mode, connections {}, {} after {} warm-up transactions per connection",
        version,
        cfg.db.location(),
        tables.name(),
        cfg.mode.name(),
        cfg.connections
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(","),
        match cfg.tx_per_point {
            Some(n) => format!("{} transactions per connection count", format_count(n as f64)),
            None => format!(
                "{} transactions per connection",
                format_count(cfg.tx_per_connection as f64)
            ),
        },
        format_count(cfg.warmup_tx_per_connection as f64)
    );
    if refilled_rows > 0 {
        eprintln!(
            "the MEMORY tables were empty after the server's restart: refilled {} rows (not measured)",
            format_count(refilled_rows as f64)
        );
    }
}

/// Closes the capture of a run's (one) point: its I/O, per transaction, and the emulation's
/// figures go into the summary, the emulator's spin out of the database's CPU.
fn finish_capture(
    doc: &mut OrdersResult,
    c: Capture,
    o: &PointOutcome,
    cfg: &OrdersRunConfig,
) -> Result<()> {
    let mode = cfg.mode.name().to_string();
    let tx_of_tag = |_: u8| (mode.clone(), o.tx);
    let (mut io, warnings, emulation) = c.finish(&RunEnd {
        measured_s: o.elapsed_s,
        spans: &[],
        tx_of_tag: &tx_of_tag,
        terminals_without_backend: 0,
    })?;
    // Untagged records (no spans, one transaction type): the whole window per transaction.
    if io.by_tx.is_empty() {
        io.by_tx.insert(mode.clone(), TxIo::of_window(&io, o.tx));
    }
    let spin_s = emulation.as_ref().map_or(0.0, |e| e.fidelity.spin_cpu_s);
    for cpu in doc
        .summary
        .sweep
        .iter_mut()
        .flatten()
        .map(|p| &mut p.cpu)
        .chain(std::iter::once(&mut doc.summary.cpu))
    {
        cpu.take_out_spin(spin_s);
    }
    doc.summary.io = Some(io);
    doc.summary.emulation = emulation;
    doc.warnings.extend(warnings);
    Ok(())
}

/// A point's seconds, counted from the first point's start (`t_offset`).
fn intervals(
    seconds: &[Second],
    connections: u32,
    t_offset: f64,
) -> impl Iterator<Item = OrdersInterval> + '_ {
    seconds.iter().map(move |s| {
        // The last, partial second: its fraction.
        let dt = if s.t_s.fract() > 0.0 {
            s.t_s.fract()
        } else {
            1.0
        };
        OrdersInterval {
            t_s: t_offset + s.t_s,
            connections,
            tps: s.tx as f64 / dt,
            lat_ns_mean: s.lat_ns_mean,
            lat_ns_p99: s.lat_ns_p99,
            active_connections: s.active_connections,
            errors: s.errors,
            retries: s.retries,
        }
    })
}

/// Database and driver CPU of one point's measured work.
fn point_cpu(edges: &[Edge; 2], o: &PointOutcome, cores: f64) -> OrdersCpu {
    let process = edges[1].0.since(&edges[0].0);
    let (db_user_s, db_sys_s, driver) = match o.engine_cpu {
        // SQLite runs on the driver's threads: their time is the engine's, the rest the driver's.
        Some(engine) => (engine.user_s, engine.sys_s, process.since(&engine)),
        None => (
            (edges[1].1 .0 - edges[0].1 .0).max(0.0),
            (edges[1].1 .1 - edges[0].1 .1).max(0.0),
            process,
        ),
    };
    let total = db_user_s + db_sys_s + driver.total_s();
    OrdersCpu {
        db_user_s,
        db_sys_s,
        driver_user_s: driver.user_s,
        driver_sys_s: driver.sys_s,
        // Order entry runs without an emulated device.
        emulator_spin_s: 0.0,
        utilisation: total / (o.elapsed_s.max(1e-9) * cores),
        driver_share: if total > 0.0 {
            driver.total_s() / total
        } else {
            0.0
        },
    }
}

/// Fills the summary and warnings from the points so far.
fn summarise(
    doc: &mut OrdersResult,
    outcomes: &[PointOutcome],
    cpus: &[OrdersCpu],
    cfg: &OrdersRunConfig,
    cores: f64,
) {
    let s = &mut doc.summary;
    let elapsed: f64 = outcomes.iter().map(|o| o.elapsed_s).sum();
    let mut all = LatencyHistogram::new();
    let mut waits: BTreeMap<String, f64> = BTreeMap::new();
    let mut sessions: BTreeMap<String, f64> = BTreeMap::new();
    let mut cpu = OrdersCpu::default();
    s.errors_by_kind.clear();
    s.retries_by_kind.clear();
    let mut sweep = Vec::new();
    for (o, c) in outcomes.iter().zip(cpus) {
        all.add(&o.latency);
        for (k, v) in &o.waits.per_s {
            // Time-weighted: the whole run's rate (or average waiting sessions).
            *waits.entry(k.clone()).or_default() += v * o.elapsed_s / elapsed.max(1e-9);
        }
        for (k, v) in &o.waits.sessions {
            *sessions.entry(k.clone()).or_default() += v * o.elapsed_s / elapsed.max(1e-9);
        }
        for (k, v) in &o.errors_by_kind {
            *s.errors_by_kind.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &o.retries_by_kind {
            *s.retries_by_kind.entry(k.clone()).or_default() += v;
        }
        cpu.db_user_s += c.db_user_s;
        cpu.db_sys_s += c.db_sys_s;
        cpu.driver_user_s += c.driver_user_s;
        cpu.driver_sys_s += c.driver_sys_s;
        sweep.push(ConnectionsPoint {
            connections: o.connections,
            tps: o.tx as f64 / o.elapsed_s.max(1e-9),
            elapsed_s: o.elapsed_s,
            waits_per_s: o.waits.per_s.clone(),
            waiting_sessions: o.waits.sessions.clone(),
            transactions: o.tx,
            tx_per_connection: cfg.tx_per_connection_at(o.connections),
            errors: o.errors,
            retries: o.retries,
            lat_ns: o.latency.stats(),
            cpu: c.clone(),
            connect_s: o.connect_s,
            warmup_s: o.warmup_s,
        });
    }
    let total_cpu = cpu.db_user_s + cpu.db_sys_s + cpu.driver_user_s + cpu.driver_sys_s;
    cpu.utilisation = total_cpu / (elapsed.max(1e-9) * cores);
    cpu.driver_share = if total_cpu > 0.0 {
        (cpu.driver_user_s + cpu.driver_sys_s) / total_cpu
    } else {
        0.0
    };
    s.transactions = outcomes.iter().map(|o| o.tx).sum();
    s.errors = outcomes.iter().map(|o| o.errors).sum();
    s.retries = outcomes.iter().map(|o| o.retries).sum();
    s.elapsed_s = elapsed;
    s.tps = s.transactions as f64 / elapsed.max(1e-9);
    s.waits_per_s = waits;
    s.waiting_sessions = sessions;
    s.cpu = cpu;
    s.lat_ns = all.stats();
    let last = outcomes.last().expect("at least one point");
    s.waits = WaitsInfo {
        unit: last.waits.unit.into(),
        source: last.waits.source.clone(),
        top: last.waits.top.clone(),
        missing: last.waits.missing.clone(),
    };
    s.sweep = (cfg.connections.len() > 1).then_some(sweep);
    s.first_error = outcomes.iter().find_map(|o| o.first_error.clone());
    s.interrupted =
        outcomes.iter().any(|o| o.interrupted) || outcomes.len() < cfg.connections.len();
    if cfg.db.engine == Engine::Sqlite {
        s.driver_threads = Some(driver_threads(last.connections));
    }
    doc.histograms.insert("tx".into(), all.to_base64());

    let mut warnings = Vec::new();
    if s.tables == "memory" {
        warnings.push(Warning::new(
            WarningKind::NotDurable,
            format!(
                "memory tables: {}; compare them with disk tables knowing that they buy speed with durability",
                durability_caveat(cfg.db.engine)
            ),
        ));
    }
    if s.waits.unit == "waiting_sessions" {
        warnings.push(Warning::new(
            WarningKind::WaitsSampled,
            "PostgreSQL counts no waits: summary.waits_per_s holds the average number of sessions seen waiting in pg_stat_activity samples (10 per second), not waits per second; compare them between runs, not with MariaDB's counts",
        ));
    }
    if let Some(m) = &s.waits.missing {
        warnings.push(Warning::new(WarningKind::WaitsSampled, m.clone()));
    }
    if s.interrupted {
        warnings.push(Warning::new(
            WarningKind::Interrupted,
            format!(
                "stopped by Ctrl-C: {} of the {} connection counts ran, the last one perhaps only in part",
                outcomes.len(),
                cfg.connections.len()
            ),
        ));
    }
    if s.transactions < 1000 {
        warnings.push(Warning::new(
            WarningKind::FewSamples,
            format!(
                "only {} transactions were measured: the percentiles rest on few samples; raise --tx-per-connection",
                s.transactions
            ),
        ));
    }
    let driver_cores = (s.cpu.driver_user_s + s.cpu.driver_sys_s) / elapsed.max(1e-9);
    if driver_cores > 0.5 && cfg.db.engine != Engine::Sqlite {
        warnings.push(Warning::new(
            WarningKind::CpuBound,
            format!(
                "the driver used {driver_cores:.2} cores: on a small machine it competes with the database for CPU, so the throughput is partly the driver's limit; run the driver on another machine (--url) to separate them"
            ),
        ));
    }
    doc.warnings = warnings;
}

/// The durability facts the result states with the figures.
fn durability_of(
    engine: Engine,
    tables: Tables,
    settings: &BTreeMap<String, String>,
) -> Durability {
    let (name, default) = match engine {
        Engine::Postgres => ("synchronous_commit", "on"),
        Engine::Mariadb | Engine::Galera => ("innodb_flush_log_at_trx_commit", "1"),
        Engine::Sqlite => ("synchronous", "2"),
    };
    Durability {
        tables: tables.name().into(),
        survives_crash: tables == Tables::Disk,
        commit_setting: name.into(),
        commit_value: settings
            .get(name)
            .cloned()
            .unwrap_or_else(|| format!("{default} (default, not reported by the server)")),
        note: match tables {
            Tables::Disk => {
                "disk tables: each commit waits for the log (WAL, redo log) to reach the device"
                    .into()
            }
            Tables::Memory => durability_caveat(engine).into(),
        },
    }
}

fn interval_line(connections: u32, seconds: &[Second]) -> String {
    let n: f64 = seconds
        .iter()
        .map(|s| {
            if s.t_s.fract() > 0.0 {
                s.t_s.fract()
            } else {
                1.0
            }
        })
        .sum();
    let tx: u64 = seconds.iter().map(|s| s.tx).sum();
    let errors: u64 = seconds.iter().map(|s| s.errors).sum();
    let retries: u64 = seconds.iter().map(|s| s.retries).sum();
    let p99 = seconds.iter().map(|s| s.lat_ns_p99).max().unwrap_or(0);
    let last = seconds.last().cloned().unwrap_or_default();
    // The last, partial second shows its fraction: [ 10.4s].
    let t = if last.t_s.fract() > 0.0 {
        format!("{:>5.1}", last.t_s)
    } else {
        format!("{:>5.0}", last.t_s)
    };
    format!(
        "[{t}s] {connections} connections: tps {:>8}  p99 ≤ {:>8}  still working {:>5}  retries {retries}  errors {errors}",
        format_count(tx as f64 / n.max(1e-9)),
        format_ns(p99 as f64),
        last.active_connections
    )
}

/// The biggest kinds of a waits map, e.g. `LWLock 6.9, IO 0.8`.
fn waits_text(waits: &BTreeMap<String, f64>) -> String {
    let mut v: Vec<_> = waits.iter().filter(|(_, x)| **x > 0.0).collect();
    v.sort_by(|a, b| b.1.total_cmp(a.1));
    let parts: Vec<String> = v
        .iter()
        .take(5)
        .map(|(k, x)| match **x {
            x if x < 10.0 => format!("{k} {x:.2}"),
            x => format!("{k} {}", format_count(x)),
        })
        .collect();
    if parts.is_empty() {
        return "none seen".into();
    }
    parts.join(", ")
}

fn print_point(o: &PointOutcome, cpu: &OrdersCpu) {
    let lat = o.latency.stats();
    eprintln!(
        "{} connections: {} transactions in {:.2} s = {} tps; latency mean {}, p50 {}, p99 {}, max {}; connect {:.1} s, warm-up {:.1} s (not measured)",
        o.connections,
        format_count(o.tx as f64),
        o.elapsed_s,
        format_count(o.tx as f64 / o.elapsed_s.max(1e-9)),
        format_ns(lat.mean),
        format_ns(lat.p50 as f64),
        format_ns(lat.p99 as f64),
        format_ns(lat.max as f64),
        o.connect_s,
        o.warmup_s
    );
    if o.waits.unit == "waits_per_s" {
        eprintln!("  waits per second: {}", waits_text(&o.waits.per_s));
    }
    eprintln!(
        "  sessions waiting (average): {}; CPU: database {:.1} s, driver {:.1} s, machine {:.0} % busy; retries {}, errors {}",
        waits_text(&o.waits.sessions),
        cpu.db_user_s + cpu.db_sys_s,
        cpu.driver_user_s + cpu.driver_sys_s,
        100.0 * cpu.utilisation,
        o.retries,
        o.errors
    );
}

fn print_summary(doc: &OrdersResult, out_dir: Option<&std::path::Path>) {
    let s = &doc.summary;
    if let Some(sweep) = &s.sweep {
        eprintln!();
        eprintln!(
            "{:>11}{:>12}{:>10}{:>10}{:>10}  sessions waiting (average)",
            "connections", "elapsed", "tps", "p99", "cpu busy"
        );
        for p in sweep {
            eprintln!(
                "{:>11}{:>11.2}s{:>10}{:>10}{:>9.0}%  {}",
                p.connections,
                p.elapsed_s,
                format_count(p.tps),
                format_ns(p.lat_ns.p99 as f64),
                100.0 * p.cpu.utilisation,
                waits_text(&p.waiting_sessions)
            );
        }
    }
    eprintln!(
        "{} tables, {} {} = {} tps over {:.2} s; {} = {}",
        s.tables,
        format_count(s.transactions as f64),
        s.mode,
        format_count(s.tps),
        s.elapsed_s,
        s.durability.commit_setting,
        s.durability.commit_value
    );
    if let Some(io) = &s.io {
        eprintln!(
            "I/O ({}): {} reads, {} writes, {} syncs, {} IOPS",
            io.source,
            format_count(io.reads as f64),
            format_count(io.writes as f64),
            format_count(io.syncs as f64),
            format_count(io.iops)
        );
        for (name, x) in io.by_tx.iter().filter(|(_, x)| x.transactions > 0) {
            eprintln!(
                "  per {name} transaction: {:.2} reads, {:.2} writes, {:.2} syncs (the database's I/O of the window)",
                x.reads_per_tx, x.writes_per_tx, x.syncs_per_tx
            );
        }
    }
    if let Some(e) = &s.emulation {
        eprintln!("emulated {}: {}", e.spec, e.fidelity);
    }
    if let Some(e) = &s.first_error {
        eprintln!("first error: {e}");
    }
    for w in &doc.warnings {
        eprintln!("warning: {}", w.message);
    }
    if let Some(dir) = out_dir {
        eprintln!("result: {}", dir.join(output::RESULT_FILE).display());
    }
}
