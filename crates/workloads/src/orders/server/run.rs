//! Running one point: connections opened, warmed up, then measured together.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};
use oltplab_core::{Error, Result};
use tokio::task::JoinSet;

use super::session::Session;
use super::waits::WaitProbe;
use super::{runtime, ServerTarget};
use crate::orders::driver::{Event, PointConfig, PointOutcome, Recorder, Second, Ticker};

/// Connections opened at the same time while setting up a point.
const CONNECT_PARALLELISM: usize = 16;

/// Runs one point: opens the connections (not measured), runs each one's warm-up, then — all
/// together — each one's fixed work, while per-second lines and the waits are taken.
pub fn run_point(
    target: &ServerTarget,
    cfg: &PointConfig,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
    on_event: &mut dyn FnMut(Event),
) -> Result<PointOutcome> {
    let rt = runtime()?;
    rt.block_on(async {
        let connect_started = Instant::now();
        let mut opened = stream::iter(0..cfg.connections)
            .map(|i| Session::open(target, i, cfg.seed))
            .buffer_unordered(CONNECT_PARALLELISM);
        let mut sessions = Vec::with_capacity(cfg.connections as usize);
        while let Some(s) = opened.next().await {
            sessions.push(s?);
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted);
            }
        }
        drop(opened);
        let connect_s = connect_started.elapsed().as_secs_f64();

        let recorder = Arc::new(Recorder::new(cfg.connections));
        let barrier = Arc::new(tokio::sync::Barrier::new(sessions.len() + 1));
        let halt = Arc::new(AtomicBool::new(false));
        let last_finish: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
        // After the warm-up, every connection waits until the waits have been snapshotted.
        let (go, gate) = tokio::sync::watch::channel(false);
        let warmup_started = Instant::now();
        let mut set = JoinSet::new();
        for mut s in sessions {
            let (recorder, barrier, halt, last_finish) = (
                recorder.clone(),
                barrier.clone(),
                halt.clone(),
                last_finish.clone(),
            );
            let mut gate = gate.clone();
            let cfg = cfg.clone();
            set.spawn(async move {
                s.run(
                    Some(cfg.warmup_tx_per_connection),
                    false,
                    &cfg,
                    &recorder,
                    &halt,
                )
                .await;
                barrier.wait().await;
                let _ = gate.wait_for(|open| *open).await;
                s.run(cfg.tx_per_connection, true, &cfg, &recorder, &halt)
                    .await;
                let now = Instant::now();
                recorder.active.fetch_sub(1, Ordering::Relaxed);
                let mut last = last_finish.lock().unwrap_or_else(|p| p.into_inner());
                *last = Some(last.map_or(now, |l| l.max(now)));
                // Kept open until the measured work has been sampled: a closed connection's
                // backend process takes its CPU time with it.
                s
            });
        }
        // The warm-up: wait at the barrier, passing Ctrl-C on to the connections.
        {
            let wait = barrier.wait();
            tokio::pin!(wait);
            loop {
                tokio::select! {
                    _ = &mut wait => break,
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {
                        if stop.load(Ordering::Relaxed) {
                            halt.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
        }
        let warmup_s = warmup_started.elapsed().as_secs_f64();
        let probe = WaitProbe::start(target).await?;
        on_event(Event::MeasureStart);
        let start = Instant::now();
        let _ = go.send(true);
        let mut ticker = Ticker::new(start);
        let mut finished = Vec::with_capacity(cfg.connections as usize);
        loop {
            let deadline = tokio::time::Instant::from_std(ticker.next_deadline())
                .min(tokio::time::Instant::now() + Duration::from_millis(100));
            tokio::select! {
                joined = set.join_next() => match joined {
                    None => break,
                    Some(Ok(session)) => finished.push(session),
                    Some(Err(_)) => return Err(Error::failed("a connection task panicked")),
                },
                _ = tokio::time::sleep_until(deadline) => {
                    ticker.due(&recorder, on_second);
                    if stop.load(Ordering::Relaxed) {
                        halt.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        let end = last_finish
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(Instant::now);
        on_event(Event::MeasureEnd);
        drop(finished);
        let elapsed_s = end.duration_since(start).as_secs_f64();
        let waits = match probe.finish(target, elapsed_s).await {
            Ok(w) => w,
            // A run stopped early may have lost its server (a power cut kills it): what the
            // connections recorded still stands, the waits are missing.
            Err(e) if stop.load(Ordering::Relaxed) => crate::orders::driver::Waits {
                missing: Some(format!("the run was stopped and its waits not read: {e}")),
                ..Default::default()
            },
            Err(e) => return Err(e),
        };
        ticker.finish(&recorder, end, on_second);
        let mut outcome = recorder.outcome(cfg.connections);
        outcome.elapsed_s = elapsed_s;
        outcome.connect_s = connect_s;
        outcome.warmup_s = warmup_s;
        outcome.seconds = std::mem::take(&mut ticker.seconds);
        outcome.waits = waits;
        outcome.interrupted = stop.load(Ordering::Relaxed);
        Ok(outcome)
    })
}
