//! `--trace` and `--emulate` for embedded SQLite: the run's connections go through oltplab's VFS,
//! which records the engine's own I/O of the measured window into the trace and holds each I/O
//! until the emulated device would have completed it. (Servers get the same through the shim.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use oltplab_core::{Error, Result};
use oltplab_dbs::vfs::{Vfs, VfsCounts, VfsOptions};
use oltplab_devmodel::{now_ns, parse_spec, Emulator};
use oltplab_metrics::{Warning, WarningKind};
use oltplab_trace::{TraceMeta, TraceWriter};
use serde::Serialize;

use super::run::IoSummary;
use super::RunConfig;

pub struct Capture {
    vfs: Vfs,
    trace: Option<Arc<TraceWriter>>,
    emulator: Option<Arc<Emulator>>,
    window_start_ns: AtomicU64,
    counts_at_start: Mutex<VfsCounts>,
    counts_at_end: Mutex<Option<VfsCounts>>,
}

/// `summary.emulation` of a run on an emulated device.
#[derive(Clone, Debug, Serialize)]
pub struct EmulationSummary {
    pub device: String,
    pub fidelity: oltplab_devmodel::Fidelity,
}

impl Capture {
    /// The capture `cfg` asks for, if any. Only for SQLite runs without a VFS of the caller's.
    pub fn for_sqlite(cfg: &RunConfig) -> Result<Option<Capture>> {
        if cfg.trace.is_none() && cfg.emulate.is_none() {
            return Ok(None);
        }
        let emulator = match &cfg.emulate {
            None => None,
            Some(text) => {
                let spec = parse_spec(text)
                    .map_err(|e| Error::usage(format!("--emulate `{text}`: {e}")))?;
                let emulator = Emulator::new(&spec, cfg.seed)
                    .map_err(|e| Error::usage(format!("--emulate `{text}`: {e}")))?;
                Some(Arc::new(emulator))
            }
        };
        let trace = match &cfg.trace {
            None => None,
            Some(path) => {
                let mut meta = TraceMeta::new("sqlite-vfs");
                meta.device = emulator.as_ref().map(|e| e.spec().name());
                Some(Arc::new(TraceWriter::create(path, meta)?))
            }
        };
        let vfs = Vfs::register(VfsOptions {
            trace: trace.clone(),
            emulator: emulator.clone(),
        })?;
        // Nothing is traced until the measured window starts.
        vfs.trace_window(u64::MAX, u64::MAX);
        Ok(Some(Capture {
            vfs,
            trace,
            emulator,
            window_start_ns: AtomicU64::new(0),
            counts_at_start: Mutex::new(VfsCounts::default()),
            counts_at_end: Mutex::new(None),
        }))
    }

    pub fn vfs_name(&self) -> String {
        self.vfs.name().to_string()
    }

    pub fn measure_start(&self) {
        let now = now_ns();
        self.window_start_ns.store(now, Ordering::Relaxed);
        self.vfs.trace_window(now, u64::MAX);
        *self
            .counts_at_start
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = self.vfs.counts();
        if let Some(e) = &self.emulator {
            e.reset_fidelity();
        }
    }

    pub fn measure_end(&self) {
        let start = self.window_start_ns.load(Ordering::Relaxed);
        self.vfs.trace_window(start, now_ns());
        *self.counts_at_end.lock().unwrap_or_else(|p| p.into_inner()) = Some(self.vfs.counts());
    }

    /// Closes the trace and returns the engine's own I/O of the measured window (as
    /// `summary.io`), warnings, and the emulation's fidelity. Call after the connections closed.
    pub fn finish(
        self,
        measured_s: f64,
    ) -> Result<(IoSummary, Vec<Warning>, Option<EmulationSummary>)> {
        let start = *self
            .counts_at_start
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let end = self
            .counts_at_end
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(|| self.vfs.counts());
        let mut warnings = Vec::new();
        let failed = self.vfs.failed_ios();
        if failed > 0 {
            warnings.push(Warning::new(
                WarningKind::ForeignData,
                format!("{failed} of the engine's I/Os failed in the file system: check free space and the log above"),
            ));
        }
        drop(self.vfs);
        let source = match &self.trace {
            Some(trace) => {
                let summary = trace.close()?;
                if summary.dropped_records > 0 {
                    warnings.push(Warning::new(
                        WarningKind::FewSamples,
                        format!(
                            "the trace lost {} records: it is incomplete",
                            summary.dropped_records
                        ),
                    ));
                }
                "trace"
            }
            None => "vfs",
        };
        let io = IoSummary {
            reads: end.reads - start.reads,
            writes: end.writes - start.writes,
            syncs: end.syncs - start.syncs,
            read_bytes: end.read_bytes - start.read_bytes,
            written_bytes: end.written_bytes - start.written_bytes,
            iops: (end.reads - start.reads + end.writes - start.writes) as f64
                / measured_s.max(1e-9),
            source: source.into(),
        };
        let emulation = self.emulator.as_ref().map(|e| {
            let fidelity = e.fidelity();
            if fidelity.off_target() {
                warnings.push(Warning::new(
                    WarningKind::EmulationOffTarget,
                    format!(
                        "the engine's I/Os took {:+.0} % of the model's mean latency on the emulated {}: the machine could not wait exactly (busy CPU?), so the figures are less reliable",
                        fidelity.off_pct,
                        e.spec().name()
                    ),
                ));
            }
            EmulationSummary {
                device: e.spec().name(),
                fidelity,
            }
        });
        Ok((io, warnings, emulation))
    }
}
