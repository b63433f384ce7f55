//! Was the measured window a steady state? A storage study's trace and α describe what the engine
//! does in its steady state — including the checkpoints and write-back that a short window after
//! a short warm-up may never see. Two signs: the New-Order rate's trend across the window, and
//! whether the engine wrote dirty pages back in it (PostgreSQL's checkpoints and background
//! writer; InnoDB's page flushing), read from the server at the window's edges.

use oltplab_workloads::sql::{Conn, Dialect};

use oltplab_schema::{SteadyState, TpccInterval};

/// A window whose New-Order rate changes by more than this share of its mean from its start to
/// its end (least-squares line) is trending, not steady.
pub const TREND_STEADY_MAX: f64 = 0.10;

/// The server's write-back counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WriteBack {
    /// Checkpoints started so far (PostgreSQL).
    pub checkpoints: Option<u64>,
    /// Buffer-pool pages written back so far.
    pub pages: u64,
}

/// Reads the counters; None for SQLite or when the server does not say.
pub fn write_back(conn: &mut dyn Conn) -> Option<WriteBack> {
    let first = |sql: &str, conn: &mut dyn Conn| -> Option<(u64, u64)> {
        let rows = conn.query(sql).ok()?;
        (!rows.is_empty()).then(|| (rows.get(0, 0).i64() as u64, rows.get(0, 1).i64() as u64))
    };
    match conn.dialect() {
        Dialect::Postgres => {
            // PostgreSQL 17 moved the checkpoints' counters to pg_stat_checkpointer.
            let (checkpoints, pages) = first(
                "SELECT checkpoints_timed + checkpoints_req, buffers_checkpoint + buffers_clean \
                 FROM pg_stat_bgwriter",
                conn,
            )
            .or_else(|| {
                first(
                    "SELECT c.num_timed + c.num_requested, c.buffers_written + b.buffers_clean \
                     FROM pg_stat_checkpointer c, pg_stat_bgwriter b",
                    conn,
                )
            })?;
            Some(WriteBack {
                checkpoints: Some(checkpoints),
                pages,
            })
        }
        Dialect::Mysql => {
            let rows = conn
                .query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_flushed'")
                .ok()?;
            let pages = (!rows.is_empty())
                .then(|| rows.get(0, 1).str().parse().ok())
                .flatten()?;
            Some(WriteBack {
                checkpoints: None,
                pages,
            })
        }
        Dialect::Sqlite => None,
    }
}

/// The New-Order rate's change across the window relative to its mean: the least-squares slope
/// over the whole seconds, times the window. 0 for fewer than three seconds or no New-Orders.
pub fn throughput_trend(intervals: &[TpccInterval]) -> f64 {
    // A last, partial second would weigh as much as a whole one.
    let mut points: Vec<(f64, f64)> = intervals.iter().map(|i| (i.t_s, i.tpmc)).collect();
    let n = points.len();
    if n >= 2 && points[n - 1].0 - points[n - 2].0 < 0.999 {
        points.pop();
    }
    let n = points.len() as f64;
    if points.len() < 3 {
        return 0.0;
    }
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if my <= 0.0 || sxx <= 0.0 {
        return 0.0;
    }
    let span = points.last().map_or(0.0, |p| p.0) - points[0].0;
    sxy / sxx * span / my
}

/// The window's verdict from its intervals and the write-back counters at its edges.
pub fn steady_state(
    intervals: &[TpccInterval],
    edges: Option<(WriteBack, WriteBack)>,
) -> SteadyState {
    let throughput_trend = throughput_trend(intervals);
    let (checkpoints, pages_written_back) = match edges {
        Some((a, b)) => (
            a.checkpoints
                .zip(b.checkpoints)
                .map(|(a, b)| b.saturating_sub(a)),
            Some(b.pages.saturating_sub(a.pages)),
        ),
        None => (None, None),
    };
    SteadyState {
        throughput_trend,
        checkpoints,
        pages_written_back,
        steady: throughput_trend.abs() <= TREND_STEADY_MAX && pages_written_back != Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(rates: &[f64]) -> Vec<TpccInterval> {
        rates
            .iter()
            .enumerate()
            .map(|(i, &r)| TpccInterval {
                // The clock's ticks land a little after each second.
                t_s: (i + 1) as f64 + 0.0003,
                tpmc: r,
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn a_flat_window_is_steady_a_rising_one_is_not() {
        let flat = seconds(&[100.0, 104.0, 97.0, 101.0, 99.0, 102.0, 98.0, 100.0]);
        assert!(throughput_trend(&flat).abs() < 0.05);
        // From 50 to 150 per minute: the line rises by its mean over the window.
        let rising: Vec<f64> = (0..11).map(|i| 50.0 + 10.0 * i as f64).collect();
        let trend = throughput_trend(&seconds(&rising));
        assert!((trend - 1.0).abs() < 1e-9, "{trend}");
        let wb = |pages| WriteBack {
            checkpoints: Some(0),
            pages,
        };
        assert!(steady_state(&flat, Some((wb(10), wb(500)))).steady);
        // No page written back in the window: the engine's write-back was never measured.
        let s = steady_state(&flat, Some((wb(10), wb(10))));
        assert!(!s.steady);
        assert_eq!(s.pages_written_back, Some(0));
        assert!(!steady_state(&seconds(&rising), None).steady);
        // SQLite: no counters, the trend alone decides.
        assert!(steady_state(&flat, None).steady);
    }
}
