//! What limited a run, from where its terminals' time went: in I/O calls (from the trace), on the
//! CPU (from /proc), or neither — waiting for locks (SQLite admits one writer at a time) — and how
//! busy it kept the device compared with the replay (α).

use super::Scale;
use oltplab_core::units::{format_count, format_ns};
use oltplab_schema::TpccSummary;
use oltplab_schema::{Breakdown, Limit, ServerWaits};
use oltplab_trace::replay::sim::ReplayOrder;

/// α at or above this: the run got about as much from the device as the replay did.
const DEVICE_BOUND_ALPHA: f64 = 0.8;
/// The model's busy share of the window at or above this: the device had an I/O in flight for
/// nearly all of it.
const DEVICE_BUSY_SHARE: f64 = 0.9;
/// α above this: the replay did less than the run, so it is no bound and says nothing about the
/// device; the figure is reported as invalid, with what was measured about why.
pub const ALPHA_VALID_MAX: f64 = 1.05;
/// CPU utilisation (of all cores) at or above this: the machine had little CPU to spare.
const CPU_BOUND_UTILISATION: f64 = 0.8;
/// A paced run at or above this share of the spec's ceiling did what its terminals asked for.
const OFFERED_LOAD_EFFICIENCY: f64 = 0.8;
/// Share of the terminals' time in I/O calls at or above this: I/O latency dominates.
const IO_BOUND_SHARE: f64 = 0.5;

/// What oltplab computes of a [`Breakdown`] from a run's figures (the type is the result
/// schema's; the rules that decide the limit are the study's).
pub trait Explain: Sized {
    fn from_run(run: &TpccSummary, io_wait_ns: u64, scale: &Scale, alpha: f64) -> Breakdown;
    fn with_writer_lock(self, run: &TpccSummary, write_txs: &[&str], holder_io_ns: u64) -> Self;
    fn cpu_with_spin(&self) -> f64;
    fn decide(&self) -> Limit;
}

impl Explain for Breakdown {
    fn from_run(run: &TpccSummary, io_wait_ns: u64, scale: &Scale, alpha: f64) -> Breakdown {
        let measured_s = if run.measured_s > 0.0 {
            run.measured_s
        } else {
            scale.duration_s
        };
        // The terminals' time inside transactions: with keying and think times, much of their
        // time is neither; without, this is about terminals × the window.
        let in_tx_s: f64 = run
            .tx
            .values()
            .map(|t| t.count as f64 * t.lat_ns.mean)
            .sum::<f64>()
            / 1e9;
        let terminal_s = if in_tx_s > 0.0 {
            in_tx_s
        } else {
            scale.terminals as f64 * measured_s
        }
        .max(1e-9);
        // Paced runs that got most of what the terminals asked for were held by the offered load.
        let paced_efficiency = run.efficiency.map(|e| e / 100.0);
        let cpu = &run.cpu;
        let cpu_s = cpu.db_user_s + cpu.db_sys_s + cpu.driver_user_s + cpu.driver_sys_s;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let cpu_utilisation = cpu.utilisation;
        let emulator_spin_utilisation = (cpu.emulator_spin_s > 0.0)
            .then(|| cpu.emulator_spin_s / (measured_s.max(1e-9) * cores));
        let device_busy_share = run
            .io
            .by_device
            .iter()
            .map(|d| d.busy_pct / 100.0)
            .reduce(f64::max);
        let cpu_queue_share = run.emulation.as_ref().map(|e| {
            (e.fidelity.cpu_queue_ns_mean * e.fidelity.ios as f64 / 1e9 / terminal_s).min(1.0)
        });
        let io_wait_share = (io_wait_ns as f64 / 1e9 / terminal_s).min(1.0);
        let cpu_share = (cpu_s / terminal_s).min(1.0);
        let other_share = (1.0 - io_wait_share - cpu_share).max(0.0);
        let server_waits = run.server_waits.clone();
        let server_lock_wait_share = server_waits.as_ref().and_then(|w| w.lock_share(terminal_s));
        let mut b = Breakdown {
            emulator_spin_utilisation,
            device_busy_share,
            cpu_queue_share,
            server_waits,
            server_lock_wait_share,
            terminal_s,
            io_wait_share,
            cpu_share,
            cpu_utilisation,
            other_share,
            alpha,
            paced_efficiency,
            ..Breakdown::default()
        };
        b.limit = b.decide();
        b
    }

    /// Adds SQLite's measured writer-lock waits (the run's `summary.tx.*.writer_lock_wait_ns_mean`)
    /// and the lock holder's split, given the I/O time inside write transactions
    /// (`holder_io_ns`, from the trace's transaction tags).
    fn with_writer_lock(
        mut self,
        run: &TpccSummary,
        write_txs: &[&str],
        holder_io_ns: u64,
    ) -> Self {
        let (mut wait_ns, mut holder_ns, mut holder_cpu_ns) = (0.0, 0.0, 0.0);
        let mut measured = false;
        for (name, t) in &run.tx {
            let Some(wait) = t.writer_lock_wait_ns_mean else {
                continue;
            };
            measured = true;
            let n = (t.count + t.errors) as f64;
            wait_ns += wait * n;
            if wait > 0.0 {
                self.writer_lock_wait_ns_by_tx.insert(name.clone(), wait);
            }
            if write_txs.contains(&name.as_str()) {
                // A deferred Delivery's terminal only queues it (its latency is the queueing);
                // the work, its lock wait and its tagged I/O are the execution's, from queueing
                // to commit. Against the terminal's latency its I/O exceeded its time.
                let deferred = &run.delivery_deferred;
                let lat_ns = if name == "delivery" && deferred.executed > 0 {
                    deferred.lat_ns.mean
                } else {
                    t.lat_ns.mean
                };
                holder_ns += (lat_ns - wait).max(0.0) * n;
                holder_cpu_ns += t.cpu_ns_mean.unwrap_or(0.0) * n;
            }
        }
        if !measured {
            return self;
        }
        self.writer_lock_wait_share = Some((wait_ns / 1e9 / self.terminal_s).min(1.0));
        if holder_ns > 0.0 {
            self.holder_io_share = Some((holder_io_ns as f64 / holder_ns).min(1.0));
            self.holder_cpu_share = Some((holder_cpu_ns / holder_ns).min(1.0));
        }
        self.limit = self.decide();
        self
    }

    /// The cores' utilisation by the database, the driver and the emulator's spin: a run whose
    /// emulator and database fill the cores is CPU-bound, whoever spent it.
    fn cpu_with_spin(&self) -> f64 {
        self.cpu_utilisation + self.emulator_spin_utilisation.unwrap_or(0.0)
    }

    fn decide(&self) -> Limit {
        let lock_share = (self.writer_lock_wait_share)
            .or(self.server_lock_wait_share)
            .unwrap_or(0.0);
        if self.alpha > ALPHA_VALID_MAX {
            Limit::InvalidBound
        } else if self
            .paced_efficiency
            .is_some_and(|e| e >= OFFERED_LOAD_EFFICIENCY)
        {
            Limit::OfferedLoad
        } else if self.alpha >= DEVICE_BOUND_ALPHA
            && self
                .device_busy_share
                .is_none_or(|b| b >= DEVICE_BUSY_SHARE)
        {
            Limit::Device
        } else if self.cpu_with_spin() >= CPU_BOUND_UTILISATION {
            Limit::Cpu
        } else if lock_share > 0.0 && lock_share >= self.io_wait_share {
            // Measured: the terminals waited for the one writer more than for their own I/O.
            Limit::Locks
        } else if self.io_wait_share >= IO_BOUND_SHARE {
            Limit::IoLatency
        } else if self
            .server_lock_wait_share
            .is_some_and(|l| l < self.other_share / 2.0)
        {
            // The server counted its lock waits, and they are not most of what is left.
            Limit::UnmeasuredWaits
        } else {
            Limit::Locks
        }
    }
}

/// One sentence on what limited the run, with the measured figures that say so; and, on a model,
/// one on what the causal replay adds.
pub fn explain(b: &Breakdown, host: bool, engine: &str) -> String {
    let mut first = explain_limit(b, host, engine);
    if let Some(w) = &b.server_waits {
        first = format!("{first} {}", server_account(w, b.terminal_s));
    }
    if b.bound_order == ReplayOrder::Btreplay && b.limit != Limit::InvalidBound {
        first = format!(
            "{first} α is against the btreplay replay (blktrace's, as S1's era replayed: each CPU's I/O in bunches submitted back to back, the whole trace queued at the device), which got the most from it{}.",
            b.alpha_lanes.map_or(String::new(), |l| format!(
                "; with each thread one I/O at a time (lanes) α = {l:.2}"
            ))
        );
    }
    match b.alpha_causal {
        Some(_) if b.bound_order == ReplayOrder::Causal && b.limit != Limit::InvalidBound => format!(
            "{first} α is against the causal replay (the database's own ordering kept), which did more than the one with each thread free (lanes, α = {:.2} against it): run flat out, a thread's I/O landed beside the others' as it never did in the run, and that cost this device more than the run's own timing.",
            b.alpha_lanes.unwrap_or(0.0)
        ),
        Some(causal) if b.limit != Limit::InvalidBound => format!(
            "{first} With the database's own ordering kept (causal replay), α = {causal:.2}: {}",
            if causal > ALPHA_VALID_MAX {
                "above 1, so that replay was no bound either.".to_string()
            } else if causal - b.alpha > 0.1 {
                format!("the gap from {:.2} is what the device could have added with concurrency the database did not use.", b.alpha)
            } else {
                "about the same, so the database used the concurrency it had.".to_string()
            }
        ),
        _ => first,
    }
}

fn explain_limit(b: &Breakdown, host: bool, engine: &str) -> String {
    let pct = |x: f64| format!("{:.0} %", x * 100.0);
    let device = if host {
        "this machine's storage"
    } else {
        "the device"
    };
    match b.limit {
        Limit::InvalidBound => {
            let fidelity = match (b.run_fidelity_off_pct, b.replay_fidelity_off_pct) {
                (Some(run), Some(replay)) => format!(
                    "; the emulated latencies were {run:+.1} % off the model in the run and {replay:+.1} % in the replay"
                ),
                _ => String::new(),
            };
            format!(
                "Invalid: α = {:.2} is above {ALPHA_VALID_MAX}, so the replay — meant to be the most {device} can do with this I/O — did less than the run and is no bound here{fidelity}; the replay orders the threads' I/O differently from the run, which can cost {device} more than the run's order did. Nothing is said about what limits this run.",
                b.alpha
            )
        }
        Limit::OfferedLoad => format!(
            "The offered load limits this run: with TPC-C's keying and think times the terminals asked for at most 12.86 tpmC per warehouse and got {} of it, so {device} was not what held it back (α = {:.2}); run without --pacing to find the device's limit.",
            pct(b.paced_efficiency.unwrap_or(0.0)),
            b.alpha
        ),
        Limit::Device => format!(
            "The device limits this run: {}the run got {} of the IOPS the replay got from it (α = {:.2}), and the terminals spent {} of their time in I/O.",
            b.device_busy_share.map_or(String::new(), |busy| format!(
                "the model had {device} busy {} of the window (an I/O in flight, measured by the emulator), ",
                pct(busy)
            )),
            pct(b.alpha),
            b.alpha,
            pct(b.io_wait_share)
        ),
        Limit::Cpu => format!(
            "CPU limits this run: {} kept the cores {} busy{}, while {device} delivered only {} of the IOPS the replay got from it (α = {:.2}).",
            if b.emulator_spin_utilisation.is_some() {
                "the database engine, the driver and the emulator's waits"
            } else {
                "the database engine and the driver"
            },
            pct(b.cpu_with_spin()),
            b.emulator_spin_utilisation.map_or(String::new(), |spin| format!(
                " ({} of them the emulator's spin, which the database could not use)",
                pct(spin)
            )),
            pct(b.alpha),
            b.alpha
        ),
        Limit::IoLatency => format!(
            "I/O latency limits this run more than {device}'s capacity: the terminals spent {} of their time waiting for one synchronous I/O at a time, using {} of what the replay got (α = {:.2}).",
            pct(b.io_wait_share),
            pct(b.alpha),
            b.alpha
        ),
        Limit::UnmeasuredWaits => {
            let lock = b.server_lock_wait_share.unwrap_or(0.0);
            let spin = b.emulator_spin_utilisation.map_or(String::new(), |u| {
                format!(" (the emulator's waits spun on {} of them)", pct(u))
            });
            // Measured where the device is emulated: the I/O threads' wait for a core after
            // their completions, which the trace's I/O time (the model's) leaves out.
            let queue = b.cpu_queue_share.filter(|q| *q > 0.0).map_or(String::new(), |q| {
                format!(
                    " (measured: the database's threads queued for a free core after their I/Os completed for up to {} of the terminals' time)",
                    pct(q)
                )
            });
            format!(
                "Waits that neither side measured limit this run: the terminals spent {} of their time neither on the CPU ({}) nor in I/O ({}); the server's lock waits account for {} of it, and the rest, {}, went to what is not measured here — a group commit's log flush, or a free core on a machine whose {} cores the database, the driver and this run shared{spin}{queue} — so {device} did {} of what it can (α = {:.2}).",
                pct(b.other_share),
                pct(b.cpu_share),
                pct(b.io_wait_share),
                pct(lock),
                pct((b.other_share - lock).max(0.0)),
                std::thread::available_parallelism().map_or(1, |n| n.get()),
                pct(b.alpha),
                b.alpha
            )
        }
        _ if b.writer_lock_wait_share.is_some() => {
            let by_tx: Vec<String> = b
                .writer_lock_wait_ns_by_tx
                .iter()
                .map(|(tx, ns)| format!("{} {}", tx_label(tx), format_ns(*ns)))
                .collect();
            let holder = match (b.holder_io_share, b.holder_cpu_share) {
                (Some(io), Some(cpu)) => format!(
                    "; the lock's holder spent {} of its time in I/O and {} on the CPU",
                    pct(io),
                    pct(cpu)
                ),
                _ => String::new(),
            };
            format!(
                "One writer at a time limits this run: the terminals spent {} of their time waiting for SQLite's writer lock (measured, per transaction: {}){holder}, so {device} did {} of what the replay got from it with the threads free (α = {:.2}).",
                pct(b.writer_lock_wait_share.unwrap_or(0.0)),
                by_tx.join(", "),
                pct(b.alpha),
                b.alpha
            )
        }
        _ => format!(
            "Lock waits limit this run: the terminals spent {} of their time neither on the CPU ({}) nor in I/O ({}), {}, so {device} did only {} of what it can (α = {:.2}).",
            pct(b.other_share),
            pct(b.cpu_share),
            pct(b.io_wait_share),
            if engine == "sqlite" {
                "waiting for the database's locks (SQLite admits one writer at a time)"
            } else {
                "waiting on the server: for its row locks, for a group commit's log flush, or for a free core"
            },
            pct(b.alpha),
            b.alpha
        ),
    }
}

/// One sentence with what the server measured about its sessions' waits.
fn server_account(w: &ServerWaits, in_tx_s: f64) -> String {
    let pct = |x: f64| format!("{:.0} %", x * 100.0);
    match (w.backend_samples, w.row_lock_wait_s) {
        (Some(n), _) => {
            let mut events: Vec<(&String, &f64)> = w.share_by_event.iter().collect();
            events.sort_by(|a, b| b.1.total_cmp(a.1));
            let top: Vec<String> = (events.iter().take(4))
                .map(|(e, s)| format!("{e} {}", pct(**s)))
                .collect();
            format!(
                "The server's account (pg_stat_activity, {} samples of active sessions): {}{}.",
                format_count(n as f64),
                top.join(", "),
                w.lock_share(in_tx_s).map_or(String::new(), |l| format!(
                    "; waiting for locks in all: {}",
                    pct(l)
                ))
            )
        }
        (None, Some(secs)) => format!(
            "The server's account (InnoDB status): {} row-lock wait{} took {secs:.1} s{}.",
            format_count(w.row_lock_waits.unwrap_or(0) as f64),
            if w.row_lock_waits == Some(1) { "" } else { "s" },
            w.lock_share(in_tx_s).map_or(String::new(), |l| format!(
                ", {} of the terminals' time in transactions",
                pct(l)
            ))
        ),
        _ => String::new(),
    }
}

/// `new_order` → `New-Order`.
fn tx_label(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scale() -> Scale {
        Scale::named("quick")
    }

    fn summary(json: serde_json::Value) -> TpccSummary {
        serde_json::from_value(json["summary"].clone()).expect("a run summary")
    }

    fn run(cpu_s: f64, utilisation: f64) -> serde_json::Value {
        serde_json::json!({"summary": {"measured_s": 10.0, "cpu": {"db_user_s": cpu_s, "utilisation": utilisation}}})
    }

    #[test]
    fn sqlite_writer_lock_waits_are_measured_not_inferred() {
        // 4 terminals × 10 s: New-Orders waited 30 × 1 s for the lock, Payments 10 × 0.2 s.
        let sqlite = serde_json::json!({"summary": {"measured_s": 10.0,
            "cpu": {"db_user_s": 2.0, "utilisation": 0.1},
            "tx": {
                "new_order": {"count": 30, "errors": 0, "lat_ns": {"mean": 1.2e9},
                              "writer_lock_wait_ns_mean": 1e9, "cpu_ns_mean": 2e7},
                "payment": {"count": 10, "errors": 0, "lat_ns": {"mean": 0.4e9},
                            "writer_lock_wait_ns_mean": 0.2e9, "cpu_ns_mean": 1e7},
                "stock_level": {"count": 5, "errors": 0, "lat_ns": {"mean": 0.0},
                                "writer_lock_wait_ns_mean": 0.0, "cpu_ns_mean": 1e6}}}});
        let io_ns = 8_000_000_000;
        let b = Breakdown::from_run(&summary(sqlite.clone()), io_ns, &scale(), 0.4)
            .with_writer_lock(
                &summary(sqlite.clone()),
                &["new_order", "payment", "delivery"],
                7_000_000_000,
            );
        // (30 × 1 + 10 × 0.2) s of 40 terminal-seconds.
        assert!(
            (b.writer_lock_wait_share.unwrap() - 0.8).abs() < 1e-9,
            "{b:?}"
        );
        assert_eq!(b.limit, Limit::Locks);
        // The holder: 30 × 0.2 + 10 × 0.2 = 8 s after the grant; 7 s of it in I/O, 0.7 s CPU.
        assert!((b.holder_io_share.unwrap() - 0.875).abs() < 1e-9, "{b:?}");
        assert!((b.holder_cpu_share.unwrap() - 0.0875).abs() < 1e-9, "{b:?}");
        let said = explain(&b, false, "sqlite");
        assert!(
            said.contains("80 % of their time waiting for SQLite's writer lock")
                && said.contains("New-Order 1.00s")
                && !said.contains("Stock-Level")
                && said.contains("88 % of its time in I/O"),
            "{said}"
        );
        // Paced by the spec and near its ceiling: the offered load, whatever the device did.
        let paced = Scale {
            keying_think: true,
            ..scale()
        };
        let mut near_cap = sqlite.clone();
        near_cap["summary"]["efficiency"] = serde_json::json!(93.0);
        let held = Breakdown::from_run(&summary(near_cap.clone()), io_ns, &paced, 0.05);
        assert_eq!(held.limit, Limit::OfferedLoad);
        assert!(explain(&held, false, "sqlite").contains("93 %"));
        near_cap["summary"]["efficiency"] = serde_json::json!(40.0);
        assert_ne!(
            Breakdown::from_run(&summary(near_cap.clone()), io_ns, &paced, 0.05).limit,
            Limit::OfferedLoad
        );
        // A server's run has no such figures: nothing changes.
        let server = Breakdown::from_run(&summary(run(2.0, 0.1)), io_ns, &scale(), 0.4);
        let same = server
            .clone()
            .with_writer_lock(&summary(run(2.0, 0.1)), &["new_order"], 0);
        assert_eq!(
            (same.limit, same.writer_lock_wait_share),
            (server.limit, None)
        );
    }

    #[test]
    fn a_server_rest_its_lock_count_does_not_cover_is_not_called_locks() {
        // 40 terminal-seconds: 10 s in I/O, 4 s on the CPU, 26 s neither; the server counted
        // 5 s of row-lock waits, and the emulator spun on half a core.
        let mut r = run(4.0, 0.2);
        r["summary"]["server_waits"] = serde_json::json!({"source": "innodb_status",
            "row_lock_waits": 50, "row_lock_wait_s": 5.0});
        r["summary"]["cpu"]["emulator_spin_s"] = serde_json::json!(10.0);
        let b = Breakdown::from_run(&summary(r.clone()), 10_000_000_000, &scale(), 0.5);
        assert_eq!(b.limit, Limit::UnmeasuredWaits, "{b:?}");
        let said = explain(&b, false, "mariadb");
        assert!(
            said.contains("lock waits account for 12 %")
                && said.contains("the rest, 52 %")
                && said.contains("spun on 50 %")
                && !said.contains("queued for a free core"),
            "{said}"
        );
        // The emulator measured its threads' queue for a core: 100,000 I/Os, 80 µs each, 8 s
        // of the 40 terminal-seconds.
        let mut queued = r.clone();
        queued["summary"]["emulation"] = serde_json::json!({"spec": "pcie-flash-2012",
            "device": "pcie-flash-2012", "fidelity": {"ios": 100_000,
            "modelled_lat_ns_mean": 50_000.0, "realised_lat_ns_mean": 130_000.0,
            "modelled_lat_ns_p99": 0, "realised_lat_ns_p99": 0, "off_pct": 160.0,
            "wake_late_ns_mean": 0.0, "wake_late_ns_max": 0, "wake_early_ns": 0,
            "spin_cpu_s": 10.0, "cpu_queue_ns_mean": 80_000.0}});
        let b = Breakdown::from_run(&summary(queued), 10_000_000_000, &scale(), 0.5);
        assert_eq!(b.cpu_queue_share, Some(0.2), "{b:?}");
        let said = explain(&b, false, "mariadb");
        assert!(
            said.contains("for up to 20 % of the terminals' time"),
            "{said}"
        );
        // Counted lock waits that are most of the rest: locks.
        r["summary"]["server_waits"]["row_lock_wait_s"] = serde_json::json!(20.0);
        assert_eq!(
            Breakdown::from_run(&summary(r.clone()), 10_000_000_000, &scale(), 0.5).limit,
            Limit::Locks
        );
    }

    #[test]
    fn the_emulators_spin_counts_as_cpu_and_the_device_needs_its_busy_time() {
        // The database and driver used 50 % of the cores, the emulator's waits another 40 %:
        // together they filled the machine, so the run is CPU-bound, said as such.
        let mut r = run(10.0, 0.5);
        r["summary"]["cpu"]["emulator_spin_s"] = serde_json::json!(8.0);
        let b = Breakdown::from_run(&summary(r), 10_000_000_000, &scale(), 0.5);
        assert_eq!(b.limit, Limit::Cpu, "{b:?}");
        let said = explain(&b, false, "mariadb");
        assert!(
            said.contains("the emulator's waits kept the cores 90 % busy")
                && said.contains("40 % of them the emulator's spin"),
            "{said}"
        );
        // α high, but the model had the device idle half the window: not the device.
        let mut r = run(2.0, 0.1);
        r["summary"]["io"]["by_device"] =
            serde_json::json!([{"name": "hdd-10k", "busy_pct": 50.0}]);
        let idle = Breakdown::from_run(&summary(r.clone()), 30_000_000_000, &scale(), 0.95);
        assert_eq!(idle.device_busy_share, Some(0.5));
        assert_ne!(idle.limit, Limit::Device, "{idle:?}");
        // Busy 97 % of the window: the device, and the sentence names the busy share.
        r["summary"]["io"]["by_device"][0]["busy_pct"] = serde_json::json!(97.0);
        let busy = Breakdown::from_run(&summary(r), 30_000_000_000, &scale(), 0.95);
        assert_eq!(busy.limit, Limit::Device);
        let said = explain(&busy, false, "mariadb");
        assert!(said.contains("busy 97 % of the window"), "{said}");
    }

    #[test]
    fn each_limit_is_recognised_from_its_figures() {
        // 4 terminals × 10 s = 40 terminal-seconds.
        let device = Breakdown::from_run(&summary(run(2.0, 0.1)), 30_000_000_000, &scale(), 0.95);
        assert_eq!(device.limit, Limit::Device);
        let cpu = Breakdown::from_run(&summary(run(18.0, 0.9)), 2_000_000_000, &scale(), 0.1);
        assert_eq!(cpu.limit, Limit::Cpu);
        let io = Breakdown::from_run(&summary(run(2.0, 0.1)), 30_000_000_000, &scale(), 0.4);
        assert_eq!(io.limit, Limit::IoLatency);
        // An α above 1.05 is never explained as the device: the replay was no bound.
        let mut invalid =
            Breakdown::from_run(&summary(run(2.0, 0.1)), 30_000_000_000, &scale(), 1.12);
        assert_eq!(invalid.limit, Limit::InvalidBound);
        invalid.run_fidelity_off_pct = Some(0.4);
        invalid.replay_fidelity_off_pct = Some(13.0);
        let said = explain(&invalid, false, "sqlite");
        assert!(
            said.starts_with("Invalid")
                && said.contains("+13.0 %")
                && !said.contains("device limits"),
            "{said}"
        );
        let at_bound = Breakdown::from_run(&summary(run(2.0, 0.1)), 30_000_000_000, &scale(), 1.04);
        assert_eq!(at_bound.limit, Limit::Device);
        let locks = Breakdown::from_run(&summary(run(4.0, 0.2)), 4_000_000_000, &scale(), 0.1);
        assert_eq!(locks.limit, Limit::Locks);
        assert!((locks.other_share - 0.8).abs() < 1e-9, "{locks:?}");
        assert!(
            explain(&locks, false, "sqlite").contains("80 %"),
            "{}",
            explain(&locks, false, "sqlite")
        );
    }
}
